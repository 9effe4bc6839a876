"""Where a value comes from, through a module's functions, methods and objects.

``Flow.sources(expr, scope)`` answers "what may this expression be?" with the
expressions it may have been made by (``Sources``: each with the scope it is
read in) and whether it may also be something the module does not show
(``unknown``). It follows, as far as the module tells:

* a name, through every binding that reaches the read (flow-aware where the
  name is local), a ``None`` binding kept as a source (callers skip it);
* a parameter (not ``self``), through the argument every call of its function
  in the module passes in its place or by its name, else its default
  (``passed``): ``train(model, optimizer)`` called from ``main()``;
  ``self.concat(a, b)`` called from a method of the class or of a subclass
  that inherits it. No call in the module, or one that unpacks ``*args``:
  unknown (its callers are elsewhere);
* ``self.x``, through every ``self.x = value`` of the class, its same-module
  bases and subclasses (``objects.attribute_values``); a value filled in
  (``self.x[k] = v``) is kept as an item (``items``); an attribute the module
  never binds is unknown;
* a call of a function or method of the module (``self.build_model()``, the
  definition found first through the bases and every override in the
  subclasses), through what its ``return`` statements give; a method whose
  body only documents, passes or raises (an abstract method) gives nothing,
  one that ends without ``return`` gives ``None``;
* ``d["key"]`` / ``xs[0]``: the value at that key or index of every dict
  display, ``dict(key=...)`` call, list or tuple display the container comes
  from, and what the code puts there (``d["key"] = v``, ``self.d["key"] = v``);
* both branches of ``a if c else b``;
* a name unpacked from a value (``model, opt = build()``), through the element
  at its place of every tuple or list display the value comes from.

Anything else is its own source: a call of a library (``tf.keras.Input(...)``,
``keras.Model(...)``), a literal, an operator. Rules do not ask this fact
directly: the engine's facts (Keras 3 symbolic tensors, the class an object
was made from) read their sources through it.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import arguments_by_name
from tflint_gpu.semantic.bindings import target_paths
from tflint_gpu.semantic.model import ASSIGNED, PARAM, UNPACKED, ScopeInfo, lookup, returns
from tflint_gpu.semantic.objects import ADD, BIND

_DEPTH = 10
Source = Tuple[cst.BaseExpression, ScopeInfo]


class Sources:
    __slots__ = ("found", "unknown")

    def __init__(self) -> None:
        self.found: List[Source] = []
        self.unknown = False

    def add(self, other: "Sources") -> None:
        for expr, scope in other.found:
            if all(e is not expr for e, _ in self.found):
                self.found.append((expr, scope))
        self.unknown = self.unknown or other.unknown

    def values(self) -> List[Source]:
        """The sources that are not the literal ``None``."""
        return [(e, s) for e, s in self.found if not (isinstance(e, cst.Name) and e.value == "None")]

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Sources({[type(e).__name__ for e, _ in self.found]}, unknown={self.unknown})"


def _unknown() -> Sources:
    found = Sources()
    found.unknown = True
    return found


_UNKNOWN = _unknown()  # shared, never added to (``Sources.add`` reads it only)


def _one(expr: cst.BaseExpression, scope: ScopeInfo) -> Sources:
    found = Sources()
    found.found.append((expr, scope))
    return found


def is_abstract(function: ScopeInfo) -> bool:
    """A def whose body only documents, passes, raises or gives ``...``: it returns nothing a caller uses
    (``@abstractmethod def build_model(self): "Build the model."``)."""
    node = function.node
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
        return False
    for stmt in node.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        for small in stmt.body:
            if isinstance(small, (cst.Pass, cst.Raise)):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString,
                                                                          cst.Ellipsis)):
                continue
            return False
    return True


def _falls_through(node: cst.FunctionDef) -> bool:
    """May the def end without a ``return`` (giving None)? Its last statement is not a ``return`` or
    ``raise`` (an ``if`` whose branches all return counts as falling through: None is a source
    callers set aside)."""
    body = node.body
    if not isinstance(body, cst.IndentedBlock) or not body.body:
        return True
    last = body.body[-1]
    return not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], (cst.Return, cst.Raise)))


def _key(expr: cst.BaseExpression):
    """The constant of a subscript or dict key: a string or an integer, else None."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) \
            and isinstance(expr.expression, cst.Integer):
        return -int(expr.expression.value, 0)
    return None


class Flow:
    def __init__(self, graphs) -> None:
        self.graphs = graphs
        self._sources: Dict[int, Tuple[cst.BaseExpression, Sources]] = {}
        self._assign_targets: Optional[Dict[int, List[cst.BaseExpression]]] = None

    # -- parameters ----------------------------------------------------------------------
    def passed(self, function: ScopeInfo, param: cst.Param) -> Optional[List[Source]]:
        """What every call of ``function`` in this module gives ``param``: the argument in its place or
        of its name, else the default (the scope each is read in). None when the module has no such
        call, when one unpacks ``*args``/``**kwargs`` or passes more than the function takes, or for
        ``self``/``cls``, ``*args`` and ``**kwargs``."""
        node = function.node
        if not isinstance(node, cst.FunctionDef) or param.star:
            return None
        positional = [p.name.value for p in list(node.params.posonly_params) + list(node.params.params)]
        shift = 1 if _binds_instance(function) else 0
        if param.name.value in positional[:shift]:
            return None
        sites = self.graphs.call_sites(function)
        if not sites:
            return None
        names = positional[shift:]
        found: List[Source] = []
        for call, where in sites:
            given = arguments_by_name(call, names)
            if given is None:
                return None
            value = given.get(param.name.value)
            if value is not None:
                found.append((value, where))
            elif param.default is not None:
                found.append((param.default, function.parent or function))
        return found

    # -- sources -------------------------------------------------------------------------
    def sources(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Sources:
        key = id(expr)
        kept = self._sources.get(key)
        if kept is not None and kept[0] is expr:
            return kept[1]
        self._sources[key] = (expr, _UNKNOWN)  # a cycle (x = f(x) through a method) tells nothing more
        found = self._read(expr, scope, 0)
        self._sources[key] = (expr, found)
        return found

    def _read(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int) -> Sources:
        if depth > _DEPTH:
            return _unknown()
        cls = expr.__class__
        if cls is cst.Name:
            return self._name(expr, scope, depth)
        if cls is cst.Attribute:
            return self._attribute(expr, scope, depth)
        if cls is cst.Call:
            return self._call(expr, scope, depth)
        if cls is cst.Subscript:
            return self._subscript(expr, scope, depth)
        if cls is cst.IfExp:
            found = Sources()
            found.add(self._follow(expr.body, scope, depth))
            found.add(self._follow(expr.orelse, scope, depth))
            return found
        return _one(expr, scope)

    def _follow(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int) -> Sources:
        key = id(expr)
        kept = self._sources.get(key)
        if kept is not None and kept[0] is expr:
            return kept[1]
        # Each expression is read once: a cycle (x = f(x) through a method) meets the unknown placeholder,
        # and an answer cut at the depth bound says unknown; both only make answers less specific.
        self._sources[key] = (expr, _UNKNOWN)
        found = self._read(expr, scope, depth + 1)
        self._sources[key] = (expr, found)
        return found

    def _name(self, expr: cst.Name, scope: ScopeInfo, depth: int) -> Sources:
        if expr.value in ("None", "True", "False"):
            return _one(expr, scope)
        found = lookup(expr.value, scope, None)
        if found is None or found.kind != ASSIGNED or found.writers or expr.value in found.scope.globals:
            return _one(expr, scope)  # an import, a def, a class, a builtin: itself
        if len(found.own_values) > 1 and found.scope is scope and id(expr) in scope.flow_order().pre:
            found = lookup(expr.value, scope, expr)  # rebound in its scope: the bindings that reach the read
            if found is None or found.kind != ASSIGNED:
                return _unknown()
        values = found.own_values
        if not values:
            return _unknown()
        result = Sources()
        for value in values:
            if isinstance(value, cst.BaseExpression):
                result.add(self._follow(value, found.scope, depth))
            elif isinstance(value, tuple) and value[0] == PARAM and isinstance(value[1], cst.Param):
                passed = self.passed(found.scope, value[1])
                if passed is None:
                    result.unknown = True
                for given, where in passed or ():
                    result.add(self._follow(given, where, depth))
            elif isinstance(value, tuple) and value[0] == UNPACKED and isinstance(value[1], cst.BaseExpression):
                result.add(self._unpacked(expr.value, value[1], found.scope, depth))
            else:
                result.unknown = True  # iterated, opaque: not followed
        return result

    def _unpacked(self, name: str, value: cst.BaseExpression, scope: ScopeInfo, depth: int) -> Sources:
        """What ``name`` takes from ``value`` unpacked into an assignment target (``model, opt = build()``
        where ``build`` returns ``model, opt``): the element at its place in every source."""
        paths = [path for target in self._targets(value) for path in target_paths(target, name)]
        if len(paths) != 1 or not paths[0]:
            return _unknown()  # bound twice by one statement, starred, or not an unpacking
        found = self._follow(value, scope, depth)
        for index in paths[0]:
            found = self._element(found, index, depth)
        return found

    def _element(self, whole: Sources, index: int, depth: int) -> Sources:
        result = Sources()
        result.unknown = whole.unknown
        for value, where in whole.values():
            if isinstance(value, (cst.Tuple, cst.List)) \
                    and not any(isinstance(e, cst.StarredElement) for e in value.elements) \
                    and index < len(value.elements):
                result.add(self._follow(value.elements[index].value, where, depth))
            else:
                result.unknown = True
        return result

    def _targets(self, value: cst.BaseExpression) -> List[cst.BaseExpression]:
        if self._assign_targets is None:
            self._assign_targets = {}
            for node, _ in self.graphs.model.index.get("Assign", ()):
                for target in node.targets:
                    self._assign_targets.setdefault(id(node.value), []).append(target.target)
        return self._assign_targets.get(id(value), [])

    def _attribute(self, expr: cst.Attribute, scope: ScopeInfo, depth: int) -> Sources:
        objects = self.graphs.objects
        cls = objects.self_class(expr.value, scope)
        if cls is None:
            return _one(expr, scope)
        name = expr.attr.value
        if objects.methods(cls, name):
            return _unknown()  # a method or property
        bindings = objects.attribute_bindings(cls, name, family=True)
        if not bindings:
            return _unknown()  # set by a library base, or by code the module does not show
        result = Sources()
        for binding in bindings:
            if binding.how == BIND and binding.readable and isinstance(binding.value, cst.BaseExpression):
                result.add(self._follow(binding.value, binding.method, depth))
            elif binding.how != ADD:
                result.unknown = True
        return result

    def _call(self, call: cst.Call, scope: ScopeInfo, depth: int) -> Sources:
        functions = self.functions(call, scope)
        if not functions:
            return _one(call, scope)
        result = Sources()
        for function in functions:
            if is_abstract(function):
                continue
            node = function.node
            if any(isinstance(d.decorator, cst.Name) and d.decorator.value == "property" for d in node.decorators):
                result.unknown = True
                continue
            ends = list(returns(node.body))
            if any(r.value is None for r in ends) or _falls_through(node):
                result.add(_one(cst.Name("None"), function))
            for end in ends:
                if end.value is not None:
                    result.add(self._follow(end.value, function, depth))
        return result

    def functions(self, call: cst.Call, scope: ScopeInfo) -> List[ScopeInfo]:
        """The same-module defs ``call`` runs: a function by its name, ``self.method(...)`` (every
        definition an instance may run). Not a class (its ``__init__`` makes an instance)."""
        func = call.func
        if func.__class__ is cst.Name:
            target = scope.lookup_def(func.value, func)
            return [target] if target is not None and isinstance(target.node, cst.FunctionDef) \
                and target.node.asynchronous is None else []
        if func.__class__ is cst.Attribute:
            objects = self.graphs.objects
            cls = objects.self_class(func.value, scope)
            if cls is not None:
                found = objects.methods(cls, func.attr.value)
                if all(isinstance(f.node, cst.FunctionDef) and f.node.asynchronous is None for f in found):
                    return found
        return []

    def _subscript(self, expr: cst.Subscript, scope: ScopeInfo, depth: int) -> Sources:
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return _one(expr, scope)
        key = _key(expr.slice[0].slice.value)
        if key is None:
            return _one(expr, scope)
        return self.item(expr.value, key, scope, depth)

    def item(self, container: cst.BaseExpression, key, scope: ScopeInfo, depth: int = 0) -> Sources:
        """The sources of ``container[key]`` (``key`` a string or an integer)."""
        result = Sources()
        whole = self._follow(container, scope, depth)
        result.unknown = whole.unknown
        for value, where in whole.values():
            if isinstance(value, cst.Dict):
                for element in value.elements:
                    if isinstance(element, cst.StarredDictElement):
                        result.unknown = True
                    elif _key(element.key) == key:
                        result.add(self._follow(element.value, where, depth))
            elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict" \
                    and lookup("dict", where) is None:
                for arg in value.args:
                    if arg.star or arg.keyword is None:
                        result.unknown = True
                    elif arg.keyword.value == key:
                        result.add(self._follow(arg.value, where, depth))
            elif isinstance(value, (cst.List, cst.Tuple)) and isinstance(key, int):
                elements = value.elements
                if any(isinstance(e, cst.StarredElement) for e in elements):
                    result.unknown = True
                elif -len(elements) <= key < len(elements):
                    result.add(self._follow(elements[key].value, where, depth))
            else:
                result.unknown = True
        for value, where in self._filled(container, key, scope):
            result.add(self._follow(value, where, depth))
        return result

    def _filled(self, container: cst.BaseExpression, key, scope: ScopeInfo) -> List[Source]:
        """The values the module stores at ``key`` of ``container`` (``self.d["k"] = v``, ``d["k"] = v``)."""
        objects = self.graphs.objects
        if isinstance(container, cst.Attribute):
            cls = objects.self_class(container.value, scope)
            if cls is None:
                return []
            stored = [(b.value, b.node, b.method)
                      for b in objects.attribute_bindings(cls, container.attr.value, family=True) if b.how == ADD]
        elif isinstance(container, cst.Name):
            found = lookup(container.value, scope, None)
            if found is None or found.kind != ASSIGNED:
                return []
            stored = [(value, node, found.scope)
                      for how, value, node in objects.container_additions(found.scope, container.value) if how == ADD]
        else:
            return []
        return [(value, where) for value, node, where in stored
                if isinstance(value, cst.BaseExpression) and _stores_at(node, key)]


def _stores_at(node: Optional[cst.CSTNode], key) -> bool:
    """Is ``node`` an assignment ``c[key] = v``?"""
    if not isinstance(node, cst.Assign):
        return False
    for target in node.targets:
        sub = target.target
        if isinstance(sub, cst.Subscript) and len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index) \
                and _key(sub.slice[0].slice.value) == key:
            return True
    return False


def _binds_instance(function: ScopeInfo) -> bool:
    return function.enclosing_class is not None and function.binds_instance


__all__ = ["Flow", "Sources", "is_abstract"]
