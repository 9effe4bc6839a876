"""Objects of the module's own classes: which class an object is, what a call on it runs.

Graph code reaches the module's own functions through objects as often as
through names: ``self.decoder.cell.get_initial_state(x)``, ``self.block(x)``
(a Keras layer of the file: its ``call`` runs), ``encoder.encode(x)``. These
facts follow such calls as far as the file tells:

* ``kind(expr, scope)``: an ``ObjectKind``: the same-module classes of which
  ``expr`` may be an instance (``self``; a name bound to ``Cls(...)``;
  ``self.a.b`` through every ``self.a = ...`` of those classes, their
  same-module bases and subclasses; a parameter of ``__init__`` through what
  the module's ``Cls(...)`` calls pass for it) or the class itself (``Cls``), whether it
  may be something else the file names (a library object such as
  ``tf.keras.layers.Dense(...)``, a literal, a function), whether it cannot
  be told (a parameter, a return value), and the calls that made it.
* ``methods(cls, name)``: the functions ``instance.name(...)`` may run: the
  definition found first through ``cls`` and its same-module bases, and the
  overrides in its same-module subclasses.
* ``callees(call, scope)``: the same-module functions a call may run through
  objects (methods, ``__init__`` of a class called, ``__call__`` or a Keras
  class's ``call`` of an instance called, a function held in an attribute),
  and whether it calls a method that cannot be found on an object of one of
  the module's own classes (a class whose bases are all the module's: the
  method is none of a library's). A method call on an object the file cannot
  tell reaches every method of that name the module's classes define.
* ``references(expr, scope)``: the functions a method reference handed on as
  a value (``tf.while_loop(self.cond, self.body, ...)``) may be.
* ``calls_named(name)``: the module's calls of a method ``name`` on any
  receiver (``self.loss(x)``, ``super().loss(x)``, ``Cls.loss(obj, x)``).
* ``instance_uses(cls)``: the module's calls on objects that may be instances
  of ``cls``: calling one (``model(x)``, ``self(x)``) or a method of it
  (``model.save_weights(p)``), a parameter of a top-level def counted through
  what the module's calls of that def pass for it (``train(m, d)``).

Instance attributes are one fact, collected once per module in one pass over
the walk's index: ``own_attributes(cls)`` maps each attribute to the
``AttributeBinding`` list of ``cls``'s own code: ``self.a = value`` (also
annotated, in nested functions of a method, and class-level assignments),
``self.a += ...`` (``AUGMENT``), and what is put into a container it holds
(``self.a.append(v)``, ``insert``, ``add``, ``self.a[k] = v``: ``ADD``;
``extend``/``update``/``self.a += [...]``: ``EXTEND``), each with the method
that does it (``where``: ``__init__``, ``build``, another method, or
``<class>``). ``attribute_bindings(cls, attr)`` reads it through the
same-module bases (the view tensor and value kinds use), ``attribute_values``
through the whole family (bases and subclasses: the view calls use).
``container_additions(scope, name)`` is the same for a plain name bound in
``scope``: ``name.append(v)``, ``name[k] = v``, ``name.extend(xs)``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.model import ASSIGNED, CLASS, DEF, IMPORT, PARAM, ScopeInfo, lookup

_DEPTH = 8


@dataclass
class ObjectKind:
    instances: List[ScopeInfo] = field(default_factory=list)  # same-module classes it may be an instance of
    classes: List[ScopeInfo] = field(default_factory=list)  # same-module classes it may be (``Cls``)
    other: bool = False  # it may be something else the file names (a library object, a literal, a function)
    unknown: bool = False  # it may be anything (a parameter, a return value)
    calls: List[Tuple[cst.Call, ScopeInfo]] = field(default_factory=list)  # the calls that made it

    def add(self, other: "ObjectKind") -> None:
        for cls in other.instances:
            if all(c is not cls for c in self.instances):
                self.instances.append(cls)
        for cls in other.classes:
            if all(c is not cls for c in self.classes):
                self.classes.append(cls)
        self.other = self.other or other.other
        self.unknown = self.unknown or other.unknown
        self.calls.extend(other.calls)


def _other() -> ObjectKind:
    return ObjectKind(other=True)


def _unknown() -> ObjectKind:
    return ObjectKind(unknown=True)


BIND = "bind"  # self.a = value
AUGMENT = "augment"  # self.a += value (value: the AugAssign's right side)
ADD = "add"  # self.a.append(value), self.a[k] = value: one element
EXTEND = "extend"  # self.a.extend(values), self.a += [...]: the elements of value
_ADDING = frozenset({"append", "add", "appendleft"})
_EXTENDING = frozenset({"extend", "update", "extendleft"})


class AttributeBinding:
    """One place that binds or fills ``self.<name>``: ``how`` (``BIND``,
    ``AUGMENT``, ``ADD``, ``EXTEND``), the value (an expression, or
    ``UNREADABLE``), the method (or class, for class-level code) doing it and
    the statement or call."""

    __slots__ = ("name", "how", "value", "method", "node")

    def __init__(self, name: str, how: str, value: Any, method: ScopeInfo, node: Optional[cst.CSTNode]) -> None:
        self.name = name
        self.how = how
        self.value = value
        self.method = method
        self.node = node

    @property
    def where(self) -> str:
        """``__init__``, ``build``, another method's name, or ``<class>``."""
        return "<class>" if self.method.kind == "class" else self.method.name

    @property
    def readable(self) -> bool:
        return self.value is not UNREADABLE and (isinstance(self.value, cst.BaseExpression) or self.how == BIND)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<AttributeBinding self.{self.name} {self.how} in {self.where}>"


class Objects:
    def __init__(self, graphs) -> None:
        self.graphs = graphs
        self.model = graphs.model
        self.resolver = graphs.resolver
        self._classes = [s for s in self.model.scopes if s.kind == "class"]
        self._attributes: Optional[Dict[int, Dict[str, List[AttributeBinding]]]] = None
        self._additions: Optional[Dict[int, Dict[str, List[Tuple[str, Any, cst.CSTNode]]]]] = None
        self._subclasses: Optional[Dict[int, List[ScopeInfo]]] = None
        self._kinds: Dict[int, ObjectKind] = {}
        self._mro: Dict[int, List[ScopeInfo]] = {}
        self._by_name: Optional[Dict[str, List[ScopeInfo]]] = None
        self._instance_uses: Optional[Dict[int, Dict[Optional[str], List[cst.Call]]]] = None
        self._calls_named: Optional[Dict[str, List[Tuple[cst.Call, ScopeInfo]]]] = None

    # -- classes ----------------------------------------------------------------
    def bases(self, cls: ScopeInfo) -> List[ScopeInfo]:
        """The same-module classes ``cls`` derives from directly, in order."""
        found = []
        if isinstance(cls.node, cst.ClassDef):
            for base in cls.node.bases:
                if base.keyword is None and not base.star and isinstance(base.value, cst.Name):
                    local = (cls.parent or cls).lookup_class(base.value.value)
                    if local is not None and local is not cls:
                        found.append(local)
        return found

    def mro(self, cls: ScopeInfo) -> List[ScopeInfo]:
        """``cls`` and its same-module bases, depth first."""
        cached = self._mro.get(id(cls))
        if cached is not None:
            return list(cached)
        order: List[ScopeInfo] = []
        stack = [cls]
        while stack:
            current = stack.pop(0)
            if any(c is current for c in order) or len(order) > 50:
                continue
            order.append(current)
            stack = self.bases(current) + stack
        self._mro[id(cls)] = order
        return list(order)

    def defines(self, cls: ScopeInfo, name: str) -> bool:
        """Do ``cls`` or its same-module bases define ``name`` (a method, a nested class)?"""
        return any(name in c.defs for c in self.mro(cls))

    def defined(self, name: str) -> List[ScopeInfo]:
        """Every method called ``name`` that a class of the module defines."""
        if self._by_name is None:
            self._by_name = {}
            for cls in self._classes:
                for method, scope in cls.defs.items():
                    self._by_name.setdefault(method, []).append(scope)
        return self._by_name.get(name, [])

    def subclasses(self, cls: ScopeInfo) -> List[ScopeInfo]:
        """The same-module classes that derive from ``cls``, transitively."""
        if self._subclasses is None:
            direct: Dict[int, List[ScopeInfo]] = {}
            for current in self._classes:
                for base in self.bases(current):
                    direct.setdefault(id(base), []).append(current)
            self._subclasses = direct
        found: List[ScopeInfo] = []
        stack = list(self._subclasses.get(id(cls), ()))
        while stack:
            current = stack.pop()
            if any(c is current for c in found) or current is cls:
                continue
            found.append(current)
            stack.extend(self._subclasses.get(id(current), ()))
        return found

    def outside_bases(self, cls: ScopeInfo) -> bool:
        """Does ``cls`` (through its same-module bases) derive from a class the
        module does not define (anything but ``object``)?"""
        for current in self.mro(cls):
            if not isinstance(current.node, cst.ClassDef):
                return True
            parent = current.parent or current
            for base in current.node.bases:
                if base.keyword is not None:
                    continue
                if base.star:
                    return True
                value = base.value
                if isinstance(value, cst.Name) and (parent.lookup_class(value.value) is not None
                                                    or (value.value == "object" and lookup("object", parent) is None)):
                    continue
                return True
        return False

    def methods(self, cls: ScopeInfo, name: str) -> List[ScopeInfo]:
        """The functions ``instance.name`` may be for an instance of ``cls``: the
        first definition through its same-module bases, and the overrides of
        its same-module subclasses (empty: none of them defines it)."""
        found: List[ScopeInfo] = []
        for current in self.mro(cls):
            if name in current.defs:
                found.append(current.defs[name])
                break
        for sub in self.subclasses(cls):
            if name in sub.defs and all(f is not sub.defs[name] for f in found):
                found.append(sub.defs[name])
        return found

    def _family(self, cls: ScopeInfo) -> List[ScopeInfo]:
        family = self.mro(cls)
        for sub in self.subclasses(cls):
            if all(c is not sub for c in family):
                family.append(sub)
        return family

    def self_class(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[ScopeInfo]:
        """The class whose instance ``expr`` is as the ``self`` of a method (also
        read from a function nested in it), or None."""
        if not isinstance(expr, cst.Name):
            return None
        found = lookup(expr.value, scope, None)
        if found is None or found.kind != ASSIGNED or len(found.values) != 1:
            return None
        value = found.values[0]
        function = found.scope
        if not (isinstance(value, tuple) and value[0] == PARAM and value[2] == 0) \
                or function.enclosing_class is None or not function.binds_instance or _is_classmethod(function):
            return None
        return function.enclosing_class

    def own_attributes(self, cls: ScopeInfo) -> Dict[str, List[AttributeBinding]]:
        """attribute -> its bindings in ``cls``'s own code (class-level
        assignments first, then its methods', in the order of the walk's index:
        assignments, augmented assignments, calls)."""
        if self._attributes is None:
            self._collect()
        assert self._attributes is not None
        return self._attributes.get(id(cls), {})

    def attribute_bindings(self, cls: ScopeInfo, attr: str, family: bool = False) -> List[AttributeBinding]:
        """Every binding of ``self.attr`` for an instance of ``cls``: through its
        same-module bases (``family``: and its subclasses)."""
        classes = self._family(cls) if family else self.mro(cls)
        found: List[AttributeBinding] = []
        for current in classes:
            found.extend(self.own_attributes(current).get(attr, ()))
        return found

    def attribute_values(self, cls: ScopeInfo, attr: str) -> List[Tuple[Any, ScopeInfo]]:
        """What ``self.attr`` may be bound to for an instance of ``cls``: every
        ``self.attr = value`` in the methods of its family (same-module bases
        and subclasses) and class-level assignments, as (value, scope)."""
        return [(b.value, b.method) for b in self.attribute_bindings(cls, attr, family=True) if b.how == BIND]

    def _collect(self) -> None:
        """One pass over the walk's index: every binding and filling of ``self.x``."""
        found: Dict[int, Dict[str, List[AttributeBinding]]] = {}
        for cls in self._classes:
            found[id(cls)] = {name: [AttributeBinding(name, BIND, value, cls, None) for value in values]
                              for name, values in cls.assigned.items()}
        additions: Dict[int, Dict[str, List[Tuple[str, Any, cst.CSTNode]]]] = {}
        methods: Dict[int, Tuple[Optional[ScopeInfo], Optional[str]]] = {}

        def method_of(scope: ScopeInfo) -> Tuple[Optional[ScopeInfo], Optional[str]]:
            key = id(scope)
            if key not in methods:
                methods[key] = _method_of(scope)
            return methods[key]

        def record(target: cst.BaseExpression, how: str, value: Any, scope: ScopeInfo, node: cst.CSTNode) -> None:
            method, self_name = method_of(scope)
            if isinstance(target, cst.Subscript):
                # self.a[k] = v fills self.a; d[k] = v fills a name d
                base = target.value
                if method is not None and _is_self_attribute(base, self_name):
                    attributes = found.setdefault(id(method.enclosing_class), {})
                    attributes.setdefault(base.attr.value, []).append(AttributeBinding(
                        base.attr.value, ADD, value, method, node))
                elif isinstance(base, cst.Name) and how == BIND:
                    additions.setdefault(id(scope), {}).setdefault(base.value, []).append((ADD, value, node))
                return
            if method is None:
                return
            attributes = found.setdefault(id(method.enclosing_class), {})
            _record(attributes, target, value, self_name, method, how, node)

        for type_name in ("Assign", "AnnAssign", "AugAssign"):
            for node, scope in self.model.index.get(type_name, ()):
                if type_name == "Assign":
                    for target in node.targets:
                        record(target.target, BIND, node.value, scope, node)
                elif type_name == "AnnAssign":
                    if node.value is not None:
                        record(node.target, BIND, node.value, scope, node)
                else:
                    # `x += [...]` extends a list; any other `x += v` is arithmetic (or unknown)
                    how = EXTEND if isinstance(node.operator, cst.AddAssign) \
                        and isinstance(node.value, (cst.List, cst.Tuple, cst.ListComp)) else AUGMENT
                    target = node.target
                    method, self_name = method_of(scope)
                    if method is not None and _is_self_attribute(target, self_name):
                        attributes = found.setdefault(id(method.enclosing_class), {})
                        attributes.setdefault(target.attr.value, []).append(AttributeBinding(
                            target.attr.value, how, node.value, method, node))
                    elif isinstance(target, cst.Name) and how == EXTEND:
                        additions.setdefault(id(scope), {}).setdefault(target.value, []).append(
                            (EXTEND, node.value, node))
        for call, scope in self.model.index.get("Call", ()):
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in _ADDING | _EXTENDING \
                    and func.attr.value != "insert":
                continue
            args = [a for a in call.args if not a.star and a.keyword is None]
            if len(args) != len(call.args) or not args:
                continue
            method_name = func.attr.value
            how = EXTEND if method_name in _EXTENDING else ADD
            value = args[-1].value  # insert(i, v): the last
            method, self_name = method_of(scope)
            if method is not None and _is_self_attribute(func.value, self_name):
                attributes = found.setdefault(id(method.enclosing_class), {})
                attributes.setdefault(func.value.attr.value, []).append(AttributeBinding(
                    func.value.attr.value, how, value, method, call))
            elif isinstance(func.value, cst.Name):
                additions.setdefault(id(scope), {}).setdefault(func.value.value, []).append((how, value, call))
        self._attributes = found
        self._additions = additions

    def container_additions(self, scope: ScopeInfo, name: str) -> List[Tuple[str, Any, cst.CSTNode]]:
        """What ``scope``'s own code puts into the container bound to ``name``:
        (``ADD``, element) for ``name.append(v)``/``insert``/``add``/``name[k] =
        v``, (``EXTEND``, iterable) for ``name.extend(xs)``/``update``/``name +=
        [...]``, with the call or statement."""
        if self._attributes is None:
            self._collect()
        assert self._additions is not None
        return self._additions.get(id(scope), {}).get(name, [])

    # -- objects ------------------------------------------------------------------
    def kind(self, expr: cst.BaseExpression, scope: ScopeInfo) -> ObjectKind:
        """What the object ``expr`` may be (see ``ObjectKind``)."""
        key = id(expr)
        if key not in self._kinds:
            self._kinds[key] = _unknown()  # a cycle (self.a = self.a.b) adds nothing
            self._kinds[key] = self._kind(expr, scope, 0)
        return self._kinds[key]

    def _kind(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int) -> ObjectKind:
        if depth > _DEPTH:
            return _unknown()
        if isinstance(expr, cst.Name):
            return self._name_kind(expr, scope, depth)
        if isinstance(expr, cst.Attribute):
            if self.resolver.raw_qualname(expr, scope) is not None:
                return _other()  # tf.nn.relu, np.pi: what an import names
            base = self.kind(expr.value, scope)
            result = ObjectKind(other=base.other, unknown=base.unknown)
            for cls in base.instances + base.classes:
                result.add(self._attribute_kind(cls, expr.attr.value, depth))
            return result
        if isinstance(expr, cst.Call):
            return self._call_kind(expr, scope)
        if isinstance(expr, cst.IfExp):
            result = self._kind(expr.body, scope, depth + 1)
            result.add(self._kind(expr.orelse, scope, depth + 1))
            return result
        if isinstance(expr, (cst.Subscript, cst.Await, cst.Yield, cst.NamedExpr, cst.BooleanOperation)):
            return _unknown()
        return _other()  # literals, operators, lambdas, comprehensions

    def _name_kind(self, expr: cst.Name, scope: ScopeInfo, depth: int) -> ObjectKind:
        found = lookup(expr.value, scope, expr)
        if found is None:
            return _unknown()  # a builtin, or bound where the file does not say
        if found.kind == CLASS:
            return ObjectKind(classes=[found.target])
        if found.kind in (IMPORT, DEF):
            return _other()
        if found.kind != ASSIGNED:
            return _unknown()
        result = ObjectKind()
        values = found.values
        if not values:
            return _unknown()
        for value in values:
            if isinstance(value, tuple):
                if value[0] == PARAM and value[2] == 0 and found.scope.enclosing_class is not None \
                        and found.scope.binds_instance and len(found.scope.assigned.get(expr.value, ())) == 1:
                    cls = found.scope.enclosing_class
                    result.add(ObjectKind(classes=[cls]) if _is_classmethod(found.scope)
                               else ObjectKind(instances=[cls]))
                elif value[0] == PARAM and found.scope.name == "__init__" and found.scope.enclosing_class is not None \
                        and len(found.scope.assigned.get(expr.value, ())) == 1:
                    result.add(self._constructor_argument(found.scope.enclosing_class, value[1], value[2], depth))
                else:
                    result.unknown = True
            else:
                result.add(self._kind(value, found.scope, depth + 1))
        return result

    def _constructor_argument(self, cls: ScopeInfo, param: cst.Param, position: int, depth: int) -> ObjectKind:
        """What the module's ``Cls(...)`` calls pass for ``__init__``'s ``param`` (at ``position``,
        ``self`` being 0); unknown when nothing in the module constructs ``Cls`` or one call's
        argument cannot be read (a star, a default taken)."""
        sites = self._calls_of(cls, CLASS)
        if not sites:
            return _unknown()
        result = ObjectKind()
        for call, where in sites:
            given = _passed(call, param, position - 1)
            if given is None:
                result.unknown = True
            else:
                result.add(self._kind(given, where, depth + 1))
        return result

    def _calls_of(self, target: ScopeInfo, kind: str) -> List[Tuple[cst.Call, ScopeInfo]]:
        """The module's calls of the class or def ``target`` (``kind``: CLASS or DEF) by its name."""
        sites = []
        for call, where in self.model.index.get("Call", ()):
            if isinstance(call.func, cst.Name) and call.func.value == target.name:
                found = lookup(call.func.value, where)
                if found is not None and found.kind == kind and found.target is target:
                    sites.append((call, where))
        return sites

    def _attribute_kind(self, cls: ScopeInfo, attr: str, depth: int) -> ObjectKind:
        if self.methods(cls, attr):
            return _other()  # a bound method
        values = self.attribute_values(cls, attr)
        if not values:
            # Set where the file does not show it: by a library base class
            # (`self.optimizer` of a Keras model), or not at all.
            return _other() if self.outside_bases(cls) else _unknown()
        result = ObjectKind()
        for value, where in values:
            if value is UNREADABLE or not isinstance(value, cst.BaseExpression):
                result.unknown = True
            else:
                result.add(self._kind(value, where, depth + 1))
        return result

    def _call_kind(self, call: cst.Call, scope: ScopeInfo) -> ObjectKind:
        made = [(call, scope)]
        func = call.func
        if isinstance(func, cst.Name):
            found = lookup(func.value, scope)
            if found is not None and found.kind == CLASS:
                return ObjectKind(instances=[found.target], calls=made)
        if self.resolver.raw_qualname(func, scope) is not None:
            return ObjectKind(other=True, calls=made)  # what a library call returns
        return ObjectKind(unknown=True, calls=made)

    # -- calls ----------------------------------------------------------------------
    def callees(self, call: cst.Call, scope: ScopeInfo) -> Tuple[List[ScopeInfo], bool]:
        """(the same-module functions ``call`` may run through objects, whether it
        calls a method that cannot be found on an object of the module's own
        classes)."""
        func = call.func
        targets: List[ScopeInfo] = []
        unresolved = False
        if isinstance(func, cst.Attribute) and self.resolver.raw_qualname(func, scope) is None:
            name = func.attr.value
            receiver = func.value
            if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) \
                    and receiver.func.value == "super" and lookup("super", scope) is None:
                cls = scope.method_class()
                if cls is None:
                    return targets, False
                for base in self.mro(cls)[1:]:
                    if name in base.defs:
                        return [base.defs[name]], False
                return targets, not self.outside_bases(cls)
            kind = self.kind(receiver, scope)
            for cls in kind.instances + kind.classes:
                methods = self.methods(cls, name)
                if methods:
                    targets.extend(methods)
                    continue
                values = self.attribute_values(cls, name)
                if values:
                    for value, where in values:
                        targets.extend(self._callable(value, where))
                elif not self.outside_bases(cls):
                    unresolved = True  # no such method in the module, and no library base to hold it
            if kind.unknown:
                # An object the file cannot tell: any of the module's methods of that name.
                targets.extend(self.defined(name))
            return targets, unresolved
        if isinstance(func, (cst.Name, cst.Call)):
            kind = self.kind(func, scope)
            for cls in kind.classes:
                targets.extend(self.methods(cls, "__init__"))
            for cls in kind.instances:
                targets.extend(self.instance_call(cls))
        return targets, unresolved

    def instance_uses(self, cls: ScopeInfo) -> Dict[Optional[str], List[cst.Call]]:
        """The module's calls on an object that may be an instance of ``cls`` (as ``kind`` tells:
        ``self`` in its methods, a name bound to ``Cls(...)``, ``self.a`` bound to one): calling the
        object itself (``obj(x)``, ``self(x)``: key None) or a method of it (``obj.save_weights(p)``:
        key ``"save_weights"``). A receiver the file cannot tell is not counted. One pass over the
        walk's index, made the first time a rule asks."""
        if self._instance_uses is None:
            found: Dict[int, Dict[Optional[str], List[cst.Call]]] = {}
            for call, scope in self.model.index.get("Call", ()):
                func = call.func
                receiver, key = (func.value, func.attr.value) if isinstance(func, cst.Attribute) else (func, None)
                if not isinstance(receiver, (cst.Name, cst.Attribute)):
                    continue
                kind = self.kind(receiver, scope)
                if kind.unknown and isinstance(receiver, cst.Name):
                    kind = self._passed_kind(receiver, scope) or kind
                for made in kind.instances:
                    found.setdefault(id(made), {}).setdefault(key, []).append(call)
            self._instance_uses = found
        return self._instance_uses.get(id(cls), {})

    def calls_named(self, name: str) -> List[Tuple[cst.Call, ScopeInfo]]:
        """The module's calls of a method ``name`` on any receiver (``self.loss(x)``, ``model.loss(x)``,
        ``super().loss(x)``, ``Cls.loss(obj, x)``), with their scopes, in source order."""
        if self._calls_named is None:
            found: Dict[str, List[Tuple[cst.Call, ScopeInfo]]] = {}
            for call, scope in self.model.index.get("Call", ()):
                if isinstance(call.func, cst.Attribute):
                    found.setdefault(call.func.attr.value, []).append((call, scope))
            self._calls_named = found
        return self._calls_named.get(name, [])

    def only_instances_of(self, expr: cst.BaseExpression, scope: ScopeInfo, classes: List[ScopeInfo]) -> bool:
        """Can ``expr`` only be an instance of ``classes`` (none of: something else, a class itself,
        an object the file cannot tell)?"""
        kind = self.kind(expr, scope)
        return bool(kind.instances) and not (kind.unknown or kind.other or kind.classes) \
            and all(any(made is member for member in classes) for made in kind.instances)

    def _passed_kind(self, name: cst.Name, scope: ScopeInfo) -> Optional[ObjectKind]:
        """For a parameter of a top-level def of the module (``def train(model, data): model.save(p)``),
        what the module's calls of that def pass for it (``train(m, d)`` after ``m = GPT()``); None when
        ``name`` is no such parameter, nothing in the module calls the def, or a call's argument cannot be
        read."""
        found = lookup(name.value, scope, name)
        if found is None or found.kind != ASSIGNED or len(found.values) != 1 or not isinstance(found.values[0], tuple) \
                or found.values[0][0] != PARAM or found.scope.parent is None or found.scope.parent.kind != "module" \
                or not isinstance(found.scope.node, cst.FunctionDef):
            return None
        function = found.scope
        param, position = found.values[0][1], found.values[0][2]
        sites = self._calls_of(function, DEF)
        result = ObjectKind()
        for call, where in sites:
            given = _passed(call, param, position)
            if given is None:
                return None
            result.add(self.kind(given, where))
        return result if sites else None

    def instance_call(self, cls: ScopeInfo) -> List[ScopeInfo]:
        """What calling an instance of ``cls`` runs: its ``__call__``, or a Keras
        class's ``call`` (Keras's ``__call__`` calls it)."""
        found = self.methods(cls, "__call__")
        if not found and self.graphs.is_keras_class(cls):
            found = self.methods(cls, "call")
        return found

    def _callable(self, value: Any, where: ScopeInfo) -> List[ScopeInfo]:
        """The same-module functions a value bound to an attribute may be, when called."""
        if not isinstance(value, cst.BaseExpression):
            return []
        function = self.graphs.function_scope(value, where)
        found = [function] if function is not None else []
        if isinstance(value, cst.Attribute) or isinstance(value, cst.Call):
            found.extend(self.references(value, where) if isinstance(value, cst.Attribute) else [])
            kind = self.kind(value, where)
            for cls in kind.instances:
                found.extend(self.instance_call(cls))
        return found

    def references(self, expr: cst.BaseExpression, scope: ScopeInfo) -> List[ScopeInfo]:
        """The same-module functions a method reference ``obj.name`` (handed on
        as a value) may be."""
        if not isinstance(expr, cst.Attribute) or self.resolver.raw_qualname(expr, scope) is not None:
            return []
        kind = self.kind(expr.value, scope)
        found: List[ScopeInfo] = []
        for cls in kind.instances + kind.classes:
            found.extend(self.methods(cls, expr.attr.value))
        return found


UNREADABLE = object()  # `self.a, self.b = pair`: bound, to a value that cannot be read here


def _method_of(scope: ScopeInfo) -> Tuple[Optional[ScopeInfo], Optional[str]]:
    """The method whose ``self`` code in ``scope`` sees (the innermost method
    around it, not through a class), and the name of that parameter."""
    for current in scope.chain():
        if current.kind == "class":
            return None, None
        if current.kind == "function" and current.enclosing_class is not None:
            if not current.binds_instance or _is_classmethod(current):
                return None, None
            for name, values in current.assigned.items():
                if any(isinstance(v, tuple) and v[0] == PARAM and v[2] == 0 for v in values):
                    return current, name
            return None, None
    return None, None


def _passed(call: cst.Call, param: cst.Param, index: int) -> Optional[cst.BaseExpression]:
    """What ``call`` passes for ``param``: by its keyword, or as the positional argument at ``index``
    (no star up to there); None when it cannot be read (a default taken, a star)."""
    given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == param.name.value), None)
    positional = [a for a in call.args if a.keyword is None]
    if given is None and 0 <= index < len(positional) and not any(a.star for a in positional[:index + 1]):
        given = positional[index].value
    return given


def _is_classmethod(function: ScopeInfo) -> bool:
    node = function.node
    return isinstance(node, cst.FunctionDef) and any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "classmethod" for d in node.decorators)


def _is_self_attribute(expr: cst.BaseExpression, self_name: Optional[str]) -> bool:
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and self_name is not None \
        and expr.value.value == self_name


def _record(found: Dict[str, List[AttributeBinding]], target: cst.BaseExpression, value: Any,
            self_name: Optional[str], method: ScopeInfo, how: str, node: cst.CSTNode) -> None:
    if isinstance(target, cst.Attribute):
        if isinstance(target.value, cst.Name) and target.value.value == self_name:
            found.setdefault(target.attr.value, []).append(AttributeBinding(target.attr.value, how, value, method,
                                                                            node))
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _record(found, element.value, UNREADABLE, self_name, method, how, node)
    elif isinstance(target, cst.StarredElement):
        _record(found, target.value, UNREADABLE, self_name, method, how, node)
