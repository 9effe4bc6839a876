"""One traversal of a parsed module: scopes, imports and an index of nodes.

The walk reads the dataclass fields of LibCST nodes directly instead of going
through ``CSTNode.visit``: a LibCST visitor rebuilds every node it passes,
which costs about as much as the parse itself. Whitespace and punctuation
fields are never entered.

Everything later stages need is recorded here, in source order:

* ``ScopeInfo`` for the module, each class, function and lambda (parent chain,
  parameters, local assignments, nested definitions, import bindings);
* ``index[type_name]``: every node of a requested type with its scope.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import libcst as cst

# Fields that only ever hold whitespace, comments or punctuation.
_SKIP_FIELDS = frozenset(
    {
        "leading_lines",
        "lines_after_decorators",
        "lpar",
        "rpar",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "comma",
        "semicolon",
        "colon",
        "dot",
        "star",
        "equal",
        "header",
        "footer",
        "newline",
        "trailing_whitespace",
        "whitespace_after_at",
        "whitespace_before_colon",
        "whitespace_after_colon",
        "whitespace_before_params",
        "whitespace_after_def",
        "whitespace_after_class",
        "whitespace_before_args",
        "whitespace_after_func",
        "whitespace_before",
        "whitespace_after",
        "whitespace_after_star",
        "whitespace_after_param",
        "whitespace_after_arg",
        "whitespace_before_value",
        "whitespace_after_indent",
        "whitespace_after_lambda",
        "whitespace_after_import",
        "whitespace_after_from",
        "whitespace_before_import",
        "whitespace_after_in",
        "whitespace_before_in",
        "whitespace_after_for",
        "whitespace_after_if",
        "whitespace_after_else",
        "whitespace_before_else",
        "whitespace_before_if",
        "whitespace_after_while",
        "whitespace_after_with",
        "whitespace_after_as",
        "whitespace_before_as",
        "whitespace_after_return",
        "whitespace_after_del",
        "whitespace_after_assert",
        "whitespace_after_raise",
        "whitespace_before_from",
        "whitespace_after_global",
        "whitespace_after_nonlocal",
        "whitespace_after_await",
        "whitespace_after_yield",
        "whitespace_before_walrus",
        "whitespace_after_walrus",
        "whitespace_after_except",
        "whitespace_after_async",
        "whitespace_after_case",
        "whitespace_after_match",
        "whitespace_before_expression",
        "whitespace_after_expression",
        "whitespace_before_indicator",
        "whitespace_after_indicator",
        "async_",
        "default_indent",
        "default_newline",
        "encoding",
        "has_trailing_newline",
        "indent",
        "prefix",
        "quote",
        "operator",
    }
)

_FIELD_CACHE: Dict[type, Tuple[str, ...]] = {}


def _walk_fields(node_type: type) -> Tuple[str, ...]:
    names = _FIELD_CACHE.get(node_type)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(node_type) if f.name not in _SKIP_FIELDS
        )
        _FIELD_CACHE[node_type] = names
    return names


ScopeNode = Union[cst.Module, cst.FunctionDef, cst.Lambda, cst.ClassDef]


class ScopeInfo:
    """A module, class, function or lambda, with what the walk learnt of it."""

    __slots__ = (
        "node",
        "kind",
        "parent",
        "name",
        "imports",
        "defs",
        "classes",
        "assigned",
        "calls",
        "globals",
        "graph",
        "excluded",
        "nested",
    )

    def __init__(self, node: ScopeNode, kind: str, parent: Optional["ScopeInfo"], name: str) -> None:
        self.node = node
        self.kind = kind  # "module" | "class" | "function" | "lambda"
        self.parent = parent
        self.name = name
        self.imports: Dict[str, str] = {}  # local name -> qualified name
        self.defs: Dict[str, "ScopeInfo"] = {}  # nested function definitions by name
        self.classes: Dict[str, "ScopeInfo"] = {}
        # name -> what was bound to it: an expression, or a binding marker tuple
        self.assigned: Dict[str, List[Any]] = {}
        self.calls: List[cst.Call] = []  # calls made directly in this scope
        self.globals: set = set()  # names declared global/nonlocal here
        self.graph: Optional[Any] = None  # engine.context.GraphInfo once known
        self.excluded = False  # handed to tf.py_function / tf.numpy_function
        self.nested: List["ScopeInfo"] = []  # functions and lambdas defined directly in this scope

    @property
    def is_function(self) -> bool:
        return self.kind in ("function", "lambda")

    @property
    def enclosing_class(self) -> Optional["ScopeInfo"]:
        """The class a function is a method of (directly), if any."""
        if self.kind == "function" and self.parent is not None and self.parent.kind == "class":
            return self.parent
        return None

    @property
    def binds_instance(self) -> bool:
        """Does the first parameter receive the instance or class (``self``,
        ``cls``)? True for methods, not for ``@staticmethod`` ones."""
        if self.enclosing_class is None or not isinstance(self.node, cst.FunctionDef):
            return False
        return not any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
                       for d in self.node.decorators)

    def chain(self) -> Iterable["ScopeInfo"]:
        scope: Optional[ScopeInfo] = self
        while scope is not None:
            yield scope
            scope = scope.parent

    def function(self) -> Optional["ScopeInfo"]:
        """The innermost function or lambda containing this scope."""
        for scope in self.chain():
            if scope.is_function:
                return scope
        return None

    def lookup_def(self, name: str) -> Optional["ScopeInfo"]:
        for scope in self.chain():
            if scope.kind == "class" and scope is not self:
                continue  # class bodies are not enclosing scopes for names
            if name in scope.defs:
                return scope.defs[name]
            if name in scope.assigned or name in scope.imports:
                return None
        return None

    def binding_scope(self, name: str) -> Optional["ScopeInfo"]:
        """The innermost scope visible from here that assigns ``name`` (its
        ``assigned[name]`` holds the values), skipping enclosing class bodies."""
        for scope in self.chain():
            if scope.kind == "class" and scope is not self:
                continue
            if name in scope.assigned:
                return scope
        return None

    def lookup_class(self, name: str) -> Optional["ScopeInfo"]:
        for scope in self.chain():
            if name in scope.classes:
                return scope.classes[name]
        return None

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<ScopeInfo {self.kind} {self.name}>"


# Binding markers stored in ScopeInfo.assigned besides plain expressions.
PARAM = "param"  # ("param", Param node, position)
UNPACKED = "unpacked"  # ("unpacked", value expression)
ITERATED = "iterated"  # ("iterated", iterable expression)
OPAQUE = "opaque"  # ("opaque", node): bound by with/except/import/etc.
AUGMENTED = "augmented"  # ("augmented", AugAssign node)


class ModuleModel:
    """The result of the walk."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.root = ScopeInfo(module, "module", None, "<module>")
        self.scopes: List[ScopeInfo] = [self.root]
        self.scope_of_node: Dict[cst.CSTNode, ScopeInfo] = {module: self.root}
        self.index: Dict[str, List[Tuple[cst.CSTNode, ScopeInfo]]] = {}
        self._by_scope: Dict[str, Dict[int, List[cst.CSTNode]]] = {}

    def nodes_in(self, scope: ScopeInfo, type_name: str) -> List[cst.CSTNode]:
        """Indexed nodes of ``type_name`` whose own scope is ``scope``, in source order."""
        grouped = self._by_scope.get(type_name)
        if grouped is None:
            grouped = self._by_scope[type_name] = {}
            for node, owner in self.index.get(type_name, ()):
                grouped.setdefault(id(owner), []).append(node)
        return grouped.get(id(scope), [])


_ENGINE_TYPES = (
    "Import",
    "ImportFrom",
    "Call",
    "Assign",
    "AnnAssign",
    "AugAssign",
    "For",
    "Global",
    "Nonlocal",
    "WithItem",
    "FunctionDef",
)


def build_model(module: cst.Module, wanted: Iterable[str]) -> ModuleModel:
    """Walk ``module`` once; index nodes whose type name is in ``wanted``."""
    model = ModuleModel(module)
    wanted_set = set(wanted) | set(_ENGINE_TYPES)
    index = model.index
    for name in wanted_set:
        index[name] = []
    scope = model.root
    # The stack holds nodes to enter, and ScopeInfo objects marking a scope's end.
    stack: List[Any] = [module]
    append = stack.append
    pop = stack.pop
    skip_types = (cst.SimpleWhitespace, cst.Newline, cst.Comment, cst.EmptyLine, cst.TrailingWhitespace)
    while stack:
        node = pop()
        if node.__class__ is ScopeInfo:
            scope = node.parent
            continue
        node_type = node.__class__
        type_name = node_type.__name__
        if type_name in wanted_set:
            index[type_name].append((node, scope))
            _record(node, type_name, scope)
        if node_type is cst.FunctionDef or node_type is cst.Lambda or node_type is cst.ClassDef:
            # Decorators, defaults and bases belong to the enclosing scope.
            outer = [d for d in getattr(node, "decorators", ())]
            if node_type is cst.ClassDef:
                outer.extend(node.bases)
                outer.extend(node.keywords)
            else:
                for param in _all_params(node.params):
                    if param.default is not None:
                        outer.append(param.default)
                    if param.annotation is not None:
                        outer.append(param.annotation)
            kind = "class" if node_type is cst.ClassDef else ("lambda" if node_type is cst.Lambda else "function")
            name = node.name.value if kind != "lambda" else "<lambda>"
            inner = ScopeInfo(node, kind, scope, name)
            model.scopes.append(inner)
            model.scope_of_node[node] = inner
            if kind != "class":
                scope.nested.append(inner)
            if kind == "function":
                scope.defs[name] = inner
                scope.assigned.pop(name, None)
                scope.imports.pop(name, None)  # a def after an import shadows it
            elif kind == "class":
                scope.classes[name] = inner
                scope.imports.pop(name, None)
            if kind != "class":
                for position, param in enumerate(_all_params(node.params)):
                    inner.assigned.setdefault(param.name.value, []).append((PARAM, param, position))
            if node_type is cst.FunctionDef and node.returns is not None:
                outer.append(node.returns)
            # Pop order: the outer parts (in the enclosing scope), then the
            # body (in the new scope), then the end marker.
            append(inner)
            append(_EnterScope(inner, node.body))
            for child in reversed(outer):
                append(child)
            continue
        if node_type is _EnterScope:
            scope = node.scope
            node = node.body
            node_type = node.__class__
            if node_type is not cst.IndentedBlock and node_type is not cst.SimpleStatementSuite:
                # A lambda body is an expression: index it like any other node.
                append(node)
                continue
        for field_name in _walk_fields(node_type):
            value = getattr(node, field_name)
            if value is None:
                continue
            if isinstance(value, cst.CSTNode):
                if not isinstance(value, skip_types):
                    append(value)
            elif value.__class__ is tuple or value.__class__ is list:
                for child in reversed(value):
                    if isinstance(child, cst.CSTNode):
                        append(child)
    return model


class _EnterScope:
    __slots__ = ("scope", "body")

    def __init__(self, scope: ScopeInfo, body: cst.CSTNode) -> None:
        self.scope = scope
        self.body = body


SCOPE_TYPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def walk(root: cst.CSTNode, skip: Tuple[type, ...] = ()) -> Iterator[cst.CSTNode]:
    """``root`` and the nodes below it, in source order, reading fields directly.

    Nodes of the ``skip`` types (below ``root``) are yielded but not entered;
    pass ``skip=SCOPE_TYPES`` to stay out of nested functions and classes.
    """
    stack: List[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        yield node
        if node is not root and isinstance(node, skip):
            continue
        children: List[cst.CSTNode] = []
        for field_name in _walk_fields(node.__class__):
            value = getattr(node, field_name)
            if isinstance(value, cst.CSTNode):
                children.append(value)
            elif value.__class__ is tuple or value.__class__ is list:
                children.extend(child for child in value if isinstance(child, cst.CSTNode))
        stack.extend(reversed(children))


def _all_params(params: cst.Parameters) -> List[cst.Param]:
    result = list(params.posonly_params) + list(params.params)
    if isinstance(params.star_arg, cst.Param):
        result.append(params.star_arg)
    result.extend(params.kwonly_params)
    if params.star_kwarg is not None:
        result.append(params.star_kwarg)
    return result


def split_attributes(node: cst.BaseExpression) -> Tuple[cst.BaseExpression, List[str]]:
    """``a.b.c`` -> (the expression ``a``, ["b", "c"]): the base of an attribute
    chain and the attribute names after it, in source order."""
    attrs: List[str] = []
    while isinstance(node, cst.Attribute):
        attrs.append(node.attr.value)
        node = node.value
    attrs.reverse()
    return node, attrs


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    base, attrs = split_attributes(node)
    if isinstance(base, cst.Name):
        return ".".join([base.value] + attrs)
    return None


def _record(node: Any, type_name: str, scope: ScopeInfo) -> None:
    """Engine bookkeeping for the node types every analysis needs."""
    if type_name == "Call":
        scope.calls.append(node)
    elif type_name == "Assign":
        for target in node.targets:
            _bind_target(scope, target.target, node.value)
    elif type_name == "AnnAssign":
        if node.value is not None:
            _bind_target(scope, node.target, node.value)
    elif type_name == "AugAssign":
        if isinstance(node.target, cst.Name):
            scope.assigned.setdefault(node.target.value, []).append((AUGMENTED, node))
    elif type_name == "For":
        _bind_target(scope, node.target, (ITERATED, node.iter))
    elif type_name == "WithItem":
        if node.asname is not None:
            _bind_target(scope, node.asname.name, (OPAQUE, node))
    elif type_name in ("Global", "Nonlocal"):
        for item in node.names:
            scope.globals.add(item.name.value)
    elif type_name == "Import":
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                _bind_import(scope, alias.asname.name.value, full)
            else:
                top = full.split(".", 1)[0]
                _bind_import(scope, top, top)
    elif type_name == "ImportFrom":
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = dotted_name(node.module)
        if base is None:
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            _bind_import(scope, local, f"{base}.{name}")


def _bind_import(scope: ScopeInfo, local: str, target: str) -> None:
    """An import binds ``local``; a def or class of that name before it is shadowed."""
    scope.imports[local] = target
    scope.defs.pop(local, None)
    scope.classes.pop(local, None)


def _wraps_itself(name: str, value: Any) -> bool:
    """``f = wrapper(f, ...)`` (``f = tf.function(f)``): the name still leads to
    the function defined before, now wrapped, so its definition stays known."""
    return isinstance(value, cst.Call) and any(
        isinstance(arg.value, cst.Name) and arg.value.value == name for arg in value.args
    )


def _bind_target(scope: ScopeInfo, target: cst.BaseExpression, value: Any) -> None:
    if isinstance(target, cst.Name):
        scope.assigned.setdefault(target.value, []).append(value)
        if not _wraps_itself(target.value, value):
            scope.defs.pop(target.value, None)
    elif isinstance(target, (cst.Tuple, cst.List)):
        inner = value if isinstance(value, tuple) else (UNPACKED, value)
        for element in target.elements:
            element_value = element.value
            if isinstance(element_value, cst.StarredElement):
                element_value = element_value.value
            _bind_target(scope, element_value, inner)
