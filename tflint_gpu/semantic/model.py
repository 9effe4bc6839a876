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

import bisect

import dataclasses
import typing
from array import array
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

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
_REVERSED_FIELDS: Dict[type, Tuple[str, ...]] = {}  # the same, last first (for a walk with a stack)


def _walk_fields(node_type: type) -> Tuple[str, ...]:
    names = _FIELD_CACHE.get(node_type)
    if names is None:
        try:  # a field declared a plain string (``Name.value``) holds no node: not read at all
            plain = {name for name, hint in typing.get_type_hints(node_type).items() if hint in (str, bool, int)}
        except Exception:  # an annotation this Python cannot evaluate: read every field
            plain = set()
        names = tuple(
            f.name for f in dataclasses.fields(node_type) if f.name not in _SKIP_FIELDS and f.name not in plain
        )
        _FIELD_CACHE[node_type] = names
        _REVERSED_FIELDS[node_type] = names[::-1]
    return names


def _reversed_fields(node_type: type) -> Tuple[str, ...]:
    """``_walk_fields``, last first (for a walk with a stack, which then gives the first field first)."""
    found = _REVERSED_FIELDS.get(node_type)
    if found is None:
        _walk_fields(node_type)
        found = _REVERSED_FIELDS[node_type]
    return found


# What a field's value is, by its exact class (``isinstance`` against LibCST's
# abstract node classes goes through ``ABCMeta.__instancecheck__``, a Python call
# each time: the walk made millions of them). OTHER: not a node (str, None,
# MaybeSentinel...); NODE: a node; SKIPPED: a whitespace/comment node; SEQUENCE: a
# tuple or list (of nodes, whatever their class).
_OTHER, _NODE, _SKIPPED, _SEQUENCE = 0, 1, 2, 3
_SKIP_NODE_TYPES = (cst.SimpleWhitespace, cst.Newline, cst.Comment, cst.EmptyLine, cst.TrailingWhitespace)
_VALUE_KIND: Dict[type, int] = {tuple: _SEQUENCE, list: _SEQUENCE, type(None): _OTHER, str: _OTHER}


def _value_kind(value_type: type) -> int:
    kind = _VALUE_KIND.get(value_type)
    if kind is None:
        if issubclass(value_type, cst.CSTNode):
            kind = _SKIPPED if issubclass(value_type, _SKIP_NODE_TYPES) else _NODE
        else:
            kind = _OTHER
        _VALUE_KIND[value_type] = kind
    return kind


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
        "nonlocals",
        "global_writes",
        "order",
        "graph",
        "excluded",
        "nested",
        "definitions",
        "shadowed",
        "stars",
        "lookups",
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
        self.nonlocals: set = set()  # of those, the ones declared nonlocal
        # name -> the functions that rebind it through `global`/`nonlocal` (on
        # the scope that owns the name)
        self.global_writes: Dict[str, List["ScopeInfo"]] = {}
        self.order: Optional["_Order"] = None  # source order of own nodes, on first need
        self.graph: Optional[Any] = None  # semantic.context.GraphInfo once known
        self.excluded = False  # handed to tf.py_function / tf.numpy_function
        self.nested: List["ScopeInfo"] = []  # functions and lambdas defined directly in this scope
        self.stars: List[str] = []  # `from m import *`: m, with its leading dots when relative
        # name -> every def and class of that name here, in source order (``defs`` and
        # ``classes`` keep the last one); for a flow-aware lookup
        self.definitions: Dict[str, List["ScopeInfo"]] = {}
        # name -> the values a later def or class of the name dropped from ``assigned``
        self.shadowed: Dict[str, List[Any]] = {}
        # (name, id of the node read at, 0 for none) -> what ``lookup`` answered, once the model is made
        self.lookups: Dict[Tuple[str, int], Optional["Binding"]] = {}

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

    def method_class(self) -> Optional["ScopeInfo"]:
        """The class of the innermost method around this scope (``self`` there), if any."""
        for scope in self.chain():
            if scope.enclosing_class is not None:
                return scope.enclosing_class
        return None

    def function(self) -> Optional["ScopeInfo"]:
        """The innermost function or lambda containing this scope."""
        for scope in self.chain():
            if scope.is_function:
                return scope
        return None

    def lookup_def(self, name: str, at: Optional[cst.CSTNode] = None) -> Optional["ScopeInfo"]:
        """The same-module function ``name`` leads to here: a def, also once
        wrapped in its own name (``f = tf.function(f)``). With ``at`` (a node
        of this scope's own code), the def live there: of a name defined
        several times (a notebook redefining ``train_step`` in later cells),
        the one the read sees."""
        found = lookup(name, self, at)
        if found is None:
            return None
        if found.kind == DEF:
            return found.target
        if found.kind != ASSIGNED or found.writers:
            return None
        if at is not None and name in found.scope.definitions:
            wrapped = found.single_value
            if isinstance(wrapped, cst.Call) and _wraps_itself(name, wrapped) \
                    and id(wrapped) in found.scope.flow_order().pre:
                return found.scope.lookup_def(name, wrapped)  # the def the wrapping call reads
            if len(found.scope.definitions[name]) > 1:
                return None
        return found.scope.defs.get(name)

    def flow_order(self) -> "_Order":
        """Source order and parents of this scope's own nodes (built on first use)."""
        if self.order is None:
            self.order = _Order(self)
        return self.order

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """The ancestors of ``node`` within this scope's own code, innermost
        first (none when ``node`` is not part of it)."""
        return self.flow_order().ancestors(node)

    def lookup(self, name: str, at: Optional[cst.CSTNode] = None) -> Optional["Binding"]:
        """What ``name`` read in this scope binds to (see ``lookup``)."""
        return lookup(name, self, at)

    def lookup_class(self, name: str) -> Optional["ScopeInfo"]:
        """The same-module class ``name`` refers to here, unless something else binds it."""
        found = lookup(name, self)
        return found.target if found is not None and found.kind == CLASS else None

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
        self._source: Optional[str] = None
        self.root = ScopeInfo(module, "module", None, "<module>")
        self.scopes: List[ScopeInfo] = [self.root]
        self.scope_of_node: Dict[cst.CSTNode, ScopeInfo] = {module: self.root}
        self.index: Dict[str, List[Tuple[cst.CSTNode, ScopeInfo]]] = {}
        self._by_scope: Dict[str, Dict[int, List[cst.CSTNode]]] = {}

    @property
    def source(self) -> str:
        """The module's text (the text it was parsed from when the linter gave it)."""
        if self._source is None:
            self._source = self.module.code
        return self._source

    @source.setter
    def source(self, text: str) -> None:
        self._source = text

    def release(self) -> None:
        """Break the scopes' reference cycles (each points to its parent, which lists it), once
        nothing will ask of this model again: the scopes and the syntax tree they hold are then
        freed by reference counting as soon as the file's result is made, instead of by CPython's
        cyclic collector, which traversed every file's tree again (5% of a run on keras/src)."""
        for scope in self.scopes:
            scope.parent = None
            scope.graph = None
            scope.lookups = {}

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
    kinds = _VALUE_KIND
    field_cache = _REVERSED_FIELDS
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
                _shadow(scope, name)
                scope.imports.pop(name, None)  # a def after an import shadows it
            elif kind == "class":
                scope.classes[name] = inner
                scope.imports.pop(name, None)
            if kind != "lambda":
                scope.definitions.setdefault(name, []).append(inner)
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
        fields = field_cache.get(node_type)
        if fields is None:
            fields = _reversed_fields(node_type)
        for field_name in fields:  # last field first: the stack gives the first field first
            value = getattr(node, field_name)
            kind = kinds.get(value.__class__)
            if kind is None:
                kind = _value_kind(value.__class__)
            if kind == _NODE:
                append(value)
            elif kind == _SEQUENCE:
                for child in reversed(value):
                    kind = kinds.get(child.__class__)
                    if kind is None:
                        kind = _value_kind(child.__class__)
                    if kind == _NODE or kind == _SKIPPED:
                        append(child)
    for current in model.scopes:
        for name in current.globals:
            if name in current.assigned:
                owner = _declared_owner(name, current)
                if owner is not None:
                    owner.global_writes.setdefault(name, []).append(current)
    return model


def _declared_owner(name: str, scope: ScopeInfo) -> Optional[ScopeInfo]:
    """The scope a ``global``/``nonlocal`` declaration of ``name`` in ``scope`` refers to."""
    if name not in scope.nonlocals:
        root = scope
        while root.parent is not None:
            root = root.parent
        return root
    for current in scope.chain():
        if current is not scope and current.is_function and name in current.assigned \
                and name not in current.globals:
            return current
    return None


def _shadow(scope: ScopeInfo, name: str) -> None:
    """A def of ``name`` replaces what assignments bound it to (for a lookup
    without ``at``); a flow-aware lookup still sees those before the def."""
    dropped = scope.assigned.pop(name, None)
    if dropped:
        scope.shadowed.setdefault(name, []).extend(dropped)


class _EnterScope:
    __slots__ = ("scope", "body")

    def __init__(self, scope: ScopeInfo, body: cst.CSTNode) -> None:
        self.scope = scope
        self.body = body


SCOPE_TYPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_SCOPE_CLASSES = frozenset(SCOPE_TYPES)  # LibCST's concrete node classes have no subclasses


def walk(root: cst.CSTNode, skip: Tuple[type, ...] = ()) -> Iterator[cst.CSTNode]:
    """``root`` and the nodes below it, in source order, reading fields directly.

    Nodes of the ``skip`` types (below ``root``) are yielded but not entered;
    pass ``skip=SCOPE_TYPES`` to stay out of nested functions and classes.
    """
    stack: List[cst.CSTNode] = [root]
    skipped = _skip_classes(skip)
    while stack:
        node = stack.pop()
        yield node
        if node is not root and (node.__class__ in skipped if skipped is not None else isinstance(node, skip)):
            continue
        stack.extend(reversed(children(node)))


_SKIP_SETS: Dict[Tuple[type, ...], Optional[frozenset]] = {}


def _skip_classes(skip: Tuple[type, ...]) -> Optional[frozenset]:
    """``skip`` as a set of exact classes, when none of them has subclasses (an exact
    class test then says what ``isinstance`` says, without ``ABCMeta``'s Python call)."""
    try:
        return _SKIP_SETS[skip]
    except KeyError:
        pass
    except TypeError:  # not hashable
        return None
    classes = skip if isinstance(skip, tuple) else (skip,)
    found = frozenset(classes) if all(isinstance(c, type) and not c.__subclasses__() for c in classes) else None
    _SKIP_SETS[skip] = found
    return found


def _concrete(base: type) -> frozenset:
    found, todo = set(), [base]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if not getattr(cls, "__abstractmethods__", None):
            found.add(cls)
    return frozenset(found)


# Every concrete expression class: no statement (no ``return``) is below one (a lambda's body is an
# expression), so a walk for statements need not enter them.
EXPRESSION_CLASSES = _concrete(cst.BaseExpression)


def returns(block: cst.CSTNode) -> Iterator[cst.Return]:
    """The ``return`` statements of a function body, in source order (not those of nested
    functions or classes); expressions are not entered."""
    stack: List[cst.CSTNode] = [block]
    expressions = EXPRESSION_CLASSES
    while stack:
        node = stack.pop()
        cls = node.__class__
        if cls is cst.Return:
            yield node
            continue
        if node is not block and cls in _SCOPE_CLASSES:
            continue
        stack.extend(c for c in reversed(children(node)) if c.__class__ not in expressions)


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The child nodes that hold code (not whitespace or punctuation), in source order."""
    found: List[cst.CSTNode] = []
    kinds = _VALUE_KIND
    fields = _FIELD_CACHE.get(node.__class__)
    if fields is None:
        fields = _walk_fields(node.__class__)
    for field_name in fields:
        value = getattr(node, field_name)
        kind = kinds.get(value.__class__)
        if kind is None:
            kind = _value_kind(value.__class__)
        if kind == _NODE or kind == _SKIPPED:
            found.append(value)
        elif kind == _SEQUENCE:
            for child in value:
                kind = kinds.get(child.__class__)
                if kind is None:
                    kind = _value_kind(child.__class__)
                if kind == _NODE or kind == _SKIPPED:
                    found.append(child)
    return found


def all_params(params: cst.Parameters) -> List[cst.Param]:
    """A def's or lambda's parameters in the order of their ``PARAM`` positions: positional-only,
    positional, ``*args``, keyword-only, ``**kwargs``."""
    return _all_params(params)


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
    while node.__class__ is cst.Attribute:
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
            if type_name == "Nonlocal":
                scope.nonlocals.add(item.name.value)
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
        # A relative import's target keeps its dots (``from ..a import b``: ``..a.b``); the
        # project index (semantic.project) says what it stands for.
        dots = "." * len(node.relative)
        base = dotted_name(node.module) if node.module is not None else ""
        if base is None:
            return
        if isinstance(node.names, cst.ImportStar):
            if dots or base:
                scope.stars.append(dots + base)
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            _bind_import(scope, local, f"{dots}{base}.{name}" if base else f"{dots}{name}")


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


# -- what a name binds to ------------------------------------------------------
IMPORT = "import"  # Binding.target: the qualified name imported
DEF = "def"  # Binding.target: the function's ScopeInfo
CLASS = "class"  # Binding.target: the class's ScopeInfo
ASSIGNED = "assigned"  # Binding.values: what assignments, parameters, loops... bound


class Binding:
    """What a name read somewhere binds to: the scope that binds it, how, and
    (for assignments) the values that may reach the read."""

    __slots__ = ("name", "scope", "kind", "target", "own_values", "writers")

    def __init__(self, name: str, scope: ScopeInfo, kind: str, target: Any = None,
                 own_values: Optional[List[Any]] = None, writers: Sequence[ScopeInfo] = ()) -> None:
        self.name = name
        self.scope = scope
        self.kind = kind
        self.target = target
        # Bound in ``scope`` itself (for a flow-aware lookup: those reaching the read).
        self.own_values: List[Any] = own_values if own_values is not None else []
        # Functions that rebind the name through ``global``/``nonlocal``.
        self.writers: List[ScopeInfo] = list(writers)

    @property
    def values(self) -> List[Any]:
        """Every value that may be bound: ``own_values``, then an
        ``(OPAQUE, function node)`` for each function in ``writers``."""
        return self.own_values + [(OPAQUE, writer.node) for writer in self.writers]

    def all_bindings(self) -> Iterator[Tuple[Any, ScopeInfo]]:
        """Every (value, scope that binds it) of the name, whatever ``at`` the
        lookup had: the binding scope's own, then each writer's through
        ``global``/``nonlocal``."""
        for value in self.scope.assigned.get(self.name, ()):
            yield value, self.scope
        for writer in self.writers:
            for value in writer.assigned.get(self.name, ()):
                yield value, writer

    @property
    def is_parameter(self) -> bool:
        """Bound as a parameter of its function (and maybe rebound in it)."""
        return any(isinstance(v, tuple) and v[0] == PARAM for v in self.own_values)

    @property
    def single_value(self) -> Optional[Any]:
        """The one value bound, when there is exactly one."""
        return self.values[0] if self.kind == ASSIGNED and len(self.values) == 1 else None

    @property
    def also_assigned(self) -> bool:
        """Is the name assigned in its scope besides how this lookup found it bound (an import of
        ``tf`` that a later ``tf = tf.compat.v1`` rebinds)?"""
        return bool(self.scope.assigned.get(self.name))

    @property
    def rebound(self) -> bool:
        """Is the name bound more than once (anywhere in its scope, or by a
        function through ``global``/``nonlocal``)? Always the whole scope's
        answer, whatever ``at`` the lookup had."""
        all_values = self.scope.assigned.get(self.name, ())
        return self.kind == ASSIGNED and (len(all_values) > 1 or bool(self.writers)
                                          or any(isinstance(v, tuple) and v[0] == AUGMENTED for v in all_values))

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<Binding {self.name} {self.kind} in {self.scope.name}>"


def lookup(name: str, scope: ScopeInfo, at: Optional[cst.CSTNode] = None) -> Optional[Binding]:
    """``_lookup``, asked once for each name, scope and node read at (a third of the
    questions are asked again, by the facts of several rules): the answer is shared,
    and read only."""
    key = (name, id(at) if at is not None else 0)
    found = scope.lookups.get(key, _UNASKED)
    if found is _UNASKED:
        found = scope.lookups[key] = _lookup(name, scope, at)
    return found


_UNASKED: Any = object()


def _lookup(name: str, scope: ScopeInfo, at: Optional[cst.CSTNode] = None) -> Optional[Binding]:
    """The one answer to "what does ``name`` read in ``scope`` bind to":
    the innermost visible scope that binds it (enclosing class bodies are not
    visible; a ``global``/``nonlocal`` declaration sends the lookup outward),
    by an import, a def, a class or assignments (parameters, loop targets,
    with/except targets, augmented assignments included). None: a builtin or
    an unbound name.

    The values of a name bound by assignment include those a function writes
    through ``global``/``nonlocal`` (as ``(OPAQUE, function node)``). With
    ``at`` (a node of ``scope``'s own code, not of a nested function), the
    lookup is flow-aware where the name is local to ``scope``: only the
    bindings that can reach ``at`` are kept. A binding reaches ``at`` when it
    is complete before ``at`` and no later binding on every path to ``at``
    replaces it, or when a loop around both brings it round again."""
    for current in scope.chain():
        if current.kind == "class" and current is not scope:
            continue
        if name in current.globals and current.parent is not None:
            continue
        if name in current.imports:
            return Binding(name, current, IMPORT, target=current.imports[name])
        if at is not None and current is scope and name in current.definitions:
            live = _live_definition(name, current, at)
            if live is not None:
                return live
        if name in current.assigned or name in current.global_writes:
            source = current.assigned.get(name)
            values = list(source or ())
            if at is not None and current is scope:
                values = _reaching(values, at, current, source)
                if not values and not current.global_writes.get(name):
                    # read before any assignment: `f = tf.function(f)` reads the def
                    if name in current.defs:
                        return Binding(name, current, DEF, target=current.defs[name])
                    if name in current.classes:
                        return Binding(name, current, CLASS, target=current.classes[name])
            return Binding(name, current, ASSIGNED, own_values=values, writers=current.global_writes.get(name, ()))
        if name in current.defs:
            return Binding(name, current, DEF, target=current.defs[name])
        if name in current.classes:
            return Binding(name, current, CLASS, target=current.classes[name])
    return None


# A def or class among the bindings of a name: ("defined", its node, its ScopeInfo).
DEFINED = "defined"


def _live_definition(name: str, scope: ScopeInfo, at: cst.CSTNode) -> Optional[Binding]:
    """The flow-aware answer for a name some def or class of ``scope`` binds,
    when it is bound more than once (several defs, or defs and assignments):
    the bindings that reach ``at``. None: bound once, or ``at`` is outside the
    order (the caller's answer stands)."""
    defined = scope.definitions[name]
    others = scope.shadowed.get(name, []) + scope.assigned.get(name, [])
    if len(defined) == 1 and not others:
        return None
    if scope.global_writes.get(name):
        return None
    if id(at) not in scope.flow_order().pre:
        return None
    events: List[Any] = others + [(DEFINED, d.node, d) for d in defined]
    reach = _reaching(events, at, scope)
    if not reach or reach is events:
        return None  # read before any binding, or bound where the order cannot tell
    made = [v for v in reach if isinstance(v, tuple) and v[0] == DEFINED]
    values = [v for v in reach if not (isinstance(v, tuple) and v[0] == DEFINED)]
    if made and not values:
        last = max(made, key=lambda v: scope.flow_order().pre[id(v[1])])[2]
        kinds = {v[2].kind for v in made}
        if kinds == {"function"}:
            return Binding(name, scope, DEF, target=last)
        if kinds == {"class"}:
            return Binding(name, scope, CLASS, target=last)
    values += [(OPAQUE, v[1]) for v in made]
    return Binding(name, scope, ASSIGNED, own_values=values)


def assigned(name: str, scope: ScopeInfo, at: Optional[cst.CSTNode] = None) -> Optional[Binding]:
    """``lookup``, when what it finds binds ``name`` by assignment (parameters,
    loop targets... included); None for an import, def, class or no binding."""
    found = lookup(name, scope, at)
    return found if found is not None and found.kind == ASSIGNED else None


class _Numbers:
    """``order.pre`` / ``order.post``: read as a dict from ``id(node)`` to the
    node's number (``in``, ``[]``, ``get``), kept in an array."""

    __slots__ = ("index", "numbers")

    def __init__(self, index: Dict[int, int], numbers: "array[int]") -> None:
        self.index = index
        self.numbers = numbers

    def __contains__(self, key: int) -> bool:
        return key in self.index

    def __getitem__(self, key: int) -> int:
        return self.numbers[self.index[key]]

    def get(self, key: int, default: Any = None) -> Any:
        position = self.index.get(key)
        return default if position is None else self.numbers[position]


class _Order:
    """Pre/post order numbers and parents of a scope's own nodes (nested
    functions, classes and lambdas are single nodes). One dict from ``id(node)``
    to the node's place in pre-order; the numbers and parents are arrays by
    place (a long scope has one entry per node, not three)."""

    __slots__ = ("index", "nodes", "up", "pre", "post", "bindings")

    def __init__(self, scope: ScopeInfo) -> None:
        index: Dict[int, int] = {}  # id(node) -> its place in pre-order
        self.nodes: List[cst.CSTNode] = []  # by place
        self.up = array("q")  # by place: the parent's place, -1 for the root
        pre, post = array("q"), array("q")  # by place: the numbers of entering and leaving it
        self.index = index
        self.pre = _Numbers(index, pre)
        self.post = _Numbers(index, post)
        # id(list of a name's values) -> (its length, the values' post numbers in order, the values
        # in that order, or None where a value is bound outside this order): see ``_reaching``.
        self.bindings: Dict[int, Tuple[int, List[int], Optional[List[Any]]]] = {}
        nodes, up = self.nodes, self.up
        counter = 0
        root = scope.node.body if not isinstance(scope.node, cst.Module) else scope.node
        stack: List[Any] = [(root, -1, False)]
        push = stack.append
        kinds = _VALUE_KIND
        field_cache = _REVERSED_FIELDS
        scopes = _SCOPE_CLASSES
        while stack:
            node, place, done = stack.pop()
            if done:
                post[place] = counter
                counter += 1
                continue
            parent = place
            place = len(nodes)
            index[id(node)] = place
            nodes.append(node)
            up.append(parent)
            pre.append(counter)
            post.append(-1)
            counter += 1
            push((node, place, True))
            node_type = node.__class__
            if node is not root and node_type in scopes:
                continue
            # ``children(node)``, inline and last first (this walk is most of a flow lookup's first cost)
            fields = field_cache.get(node_type)
            if fields is None:
                fields = _reversed_fields(node_type)
            for field_name in fields:
                value = getattr(node, field_name)
                kind = kinds.get(value.__class__)
                if kind is None:
                    kind = _value_kind(value.__class__)
                if kind == _NODE or kind == _SKIPPED:
                    push((value, place, False))
                elif kind == _SEQUENCE:
                    for child in reversed(value):
                        kind = kinds.get(child.__class__)
                        if kind is None:
                            kind = _value_kind(child.__class__)
                        if kind == _NODE or kind == _SKIPPED:
                            push((child, place, False))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        place = self.index.get(id(node))
        if place is None:
            return
        place = self.up[place]
        while place >= 0:
            yield self.nodes[place]
            place = self.up[place]

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        return self.pre[id(outer)] <= self.pre[id(inner)] and self.post[id(inner)] <= self.post[id(outer)]


_LOOPS = (cst.For, cst.While)
_BLOCKS = (cst.IndentedBlock, cst.SimpleStatementSuite, cst.Module)
# The same as exact classes (LibCST's concrete node classes have no subclasses): a set lookup,
# not ABCMeta's isinstance, on the flow lookups' hot path.
_LOOP_CLASSES = frozenset(_LOOPS)
_BLOCK_CLASSES = frozenset(_BLOCKS)


def _value_node(value: Any) -> Optional[cst.CSTNode]:
    """The node whose evaluation completes a binding (None: a parameter)."""
    if isinstance(value, tuple):
        return None if value[0] == PARAM else value[1]
    return value


def _reaching(values: List[Any], at: cst.CSTNode, scope: ScopeInfo, source: Optional[List[Any]] = None) -> List[Any]:
    """The ``values`` that reach ``at``. ``source``: the scope's own list ``values`` copies (its
    values sorted once, so that reading a name bound n times costs log n, not n)."""
    order = scope.flow_order()
    if id(at) not in order.pre:
        return values  # not in this scope's own code: no flow to follow
    at_pre = order.pre[id(at)]
    loops = [node for node in order.ancestors(at) if node.__class__ in _LOOP_CLASSES]
    if source is not None and not loops and not any(
            node.__class__ is cst.If and node.orelse is not None for node in order.ancestors(at)):
        return _reaching_straight(values, at, at_pre, order, source)
    # The other branch of each `if` around ``at`` (no loop around the `if` to bring a
    # binding there round): what it binds never reaches ``at``.
    exclusive: List[cst.CSTNode] = []
    for node in order.ancestors(at):
        if node.__class__ is cst.If and not any(order.contains(loop, node) for loop in loops):
            if order.contains(node.body, at):
                if node.orelse is not None:
                    exclusive.append(node.orelse)
            elif node.orelse is not None and order.contains(node.orelse, at):
                exclusive.append(node.body)
    before: List[Tuple[int, Any, Optional[cst.CSTNode]]] = []
    carried: List[Any] = []
    for value in values:
        node = _value_node(value)
        if node is None:
            before.append((-1, value, None))
        elif id(node) not in order.post:
            return values  # bound somewhere the order does not know: keep all
        elif any(order.contains(branch, node) for branch in exclusive):
            continue  # bound in the other branch of an `if` holding ``at``
        elif order.post[id(node)] < at_pre:
            before.append((order.post[id(node)], value, node))
        elif any(order.contains(loop.body, node) for loop in loops):
            carried.append(value)  # bound later in a loop around ``at``: seen on the next turn
    before.sort(key=lambda item: item[0])
    # The last binding on every path to ``at`` replaces the earlier ones: its
    # statement sits in a block that contains ``at``.
    at_blocks = {id(node) for node in order.ancestors(at) if node.__class__ in _BLOCK_CLASSES}
    for index in range(len(before) - 1, -1, -1):
        _, value, node = before[index]
        if node is None or _statement_block(node, order) in at_blocks:
            kept = [item[1] for item in before[index:]]
            if node is not None and any(order.contains(loop.body, node) for loop in loops):
                # replaced on every turn before ``at``: nothing is carried round
                return kept
            return kept + carried
    return [item[1] for item in before] + carried


def _reaching_straight(values: List[Any], at: cst.CSTNode, at_pre: int, order: _Order,
                       source: List[Any]) -> List[Any]:
    """``_reaching`` where no loop and no ``if`` with an ``else`` holds ``at``: what is bound after
    ``at`` never reaches it, and the last binding before it on every path replaces the earlier ones."""
    cached = order.bindings.get(id(source))
    if cached is None or cached[0] != len(source):
        keyed = []
        for place, value in enumerate(source):
            node = _value_node(value)
            if node is not None and id(node) not in order.post:
                keyed = None  # bound somewhere the order does not know
                break
            keyed.append((-1 if node is None else order.post[id(node)], place, value))
        if keyed is None:
            cached = (len(source), [], None)
        else:
            keyed.sort(key=lambda item: (item[0], item[1]))
            cached = (len(source), [item[0] for item in keyed], [item[2] for item in keyed])
        order.bindings[id(source)] = cached
    _, posts, ordered = cached
    if ordered is None:
        return values  # as ``_reaching``: keep all
    end = bisect.bisect_left(posts, at_pre)  # the values complete before ``at``
    at_blocks = None
    for index in range(end - 1, -1, -1):
        node = _value_node(ordered[index])
        if node is None:
            return ordered[index:end]
        if at_blocks is None:
            at_blocks = {id(n) for n in order.ancestors(at) if n.__class__ in _BLOCK_CLASSES}
        if _statement_block(node, order) in at_blocks:
            return ordered[index:end]
    return ordered[:end]


def _statement_block(node: cst.CSTNode, order: _Order) -> Optional[int]:
    """The id of the block holding the statement ``node`` belongs to. A ``for``
    target is bound in the loop's body on each turn."""
    child = node
    for parent in order.ancestors(node):
        if isinstance(parent, cst.For) and child is parent.iter:
            return id(parent.body)
        if isinstance(parent, _BLOCKS):
            return id(parent)
        child = parent
    return None
