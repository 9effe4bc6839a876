"""Sameness: do two expressions read the same value?

``Sameness.same_value(a, b, scope, b_scope=None)`` answers True only when the
module shows that both reads give one object, never by looking alike:

* a name is the binding that reaches its read (flow-aware where the name is
  local: ``lookup(name, scope, at=read)``); exactly one binding must reach it
  (a name bound in two branches, or by ``global``/``nonlocal`` writers, or
  augmented, is unknown). A name read in a nested function takes its outer
  binding only when the outer scope binds it once;
* a name bound to another name (``x_val = x_train``) is that name read at the
  assignment (so ``x_val = x; x = other`` leaves ``x_val`` the old value);
* ``a = b = load()`` binds both names to the one value of that expression; a
  parameter is itself (no rebinding reaches both reads); a name unpacked
  (``x, y = data``), a loop target and a ``with`` target are their statement's
  binding of that name;
* ``self.attr`` is the one ``self.attr = value`` of its class family (bound
  more than once, filled or augmented anywhere: unknown);
* ``obj.attr`` / ``obj["key"]`` (a constant key) are the same attribute or
  item of the same object, when the module never assigns an attribute of that
  name (``anything.attr = ...``) or an item of that object;
* anything else (a call, an operator, a slice ``x[:n]``, a literal) is a new
  value each time it is evaluated: never the same.

The binding node is compared, not the evaluation: a binding inside a loop
read on one turn and again on a later turn would look the same. Callers
comparing a read with a display built in another statement ask
``same_turn(display, read, scope)`` first (``Sameness.display`` does).

``Sameness.display(expr, scope)`` gives the elements of the tuple or list
display an expression is (``val = (x_train, y_train)`` then ``val``), each
with the scope it is read in, through single-binding names.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.model import (ASSIGNED, AUGMENTED, ITERATED, OPAQUE, PARAM, UNPACKED, ScopeInfo,
                                       lookup)
from tflint_gpu.semantic.objects import BIND

_DEPTH = 8
_LOOPS = (cst.For, cst.While)
_BLOCKS = (cst.IndentedBlock, cst.SimpleStatementSuite, cst.Module)


class Sameness:
    def __init__(self, graphs) -> None:
        self.graphs = graphs
        self._stored: Optional[Tuple[set, set]] = None
        self._items: Optional[List[tuple]] = None

    # -- the question ---------------------------------------------------------------
    def same_value(self, a: cst.BaseExpression, b: cst.BaseExpression, scope: ScopeInfo,
                   b_scope: Optional[ScopeInfo] = None) -> bool:
        """Do ``a`` (read in ``scope``) and ``b`` (read in ``b_scope``, default ``scope``) give the
        same object? False whenever the module does not show it."""
        first = self.identity(a, scope)
        return first is not None and first == self.identity(b, b_scope or scope)

    def identity(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int = 0) -> Optional[tuple]:
        """A key naming the binding ``expr`` reads, or None (a new value, or not told)."""
        if depth > _DEPTH:
            return None
        if isinstance(expr, cst.Name):
            return self._name(expr, scope, depth)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, scope, depth)
        if isinstance(expr, cst.Subscript):
            return self._item(expr, scope, depth)
        return None

    def _name(self, expr: cst.Name, scope: ScopeInfo, depth: int) -> Optional[tuple]:
        name = expr.value
        if name in ("None", "True", "False"):
            return None
        found = lookup(name, scope, expr)
        if found is None or found.kind != ASSIGNED or found.writers or name in found.scope.globals:
            return None
        if found.scope is not scope and len(found.scope.assigned.get(name, ())) != 1:
            return None  # read from a nested function: the outer binding must be the only one
        if len(found.own_values) != 1:
            return None
        value = found.own_values[0]
        if isinstance(value, cst.Name):
            if value.value in ("None", "True", "False"):
                return None
            return self.identity(value, found.scope, depth + 1)  # an alias: the name read at the assignment
        if isinstance(value, cst.BaseExpression):
            return ("bound", id(value))
        if isinstance(value, tuple):
            how = value[0]
            if how == PARAM:
                return ("param", id(value[1]))
            if how in (UNPACKED, ITERATED, OPAQUE):
                return (how, id(value[1]), name)
            if how == AUGMENTED:
                return None
        return None

    def _attribute(self, expr: cst.Attribute, scope: ScopeInfo, depth: int) -> Optional[tuple]:
        attr = expr.attr.value
        objects = self.graphs.objects
        cls = objects.self_class(expr.value, scope)
        if cls is not None:
            if objects.methods(cls, attr):
                return None  # a method or property
            bindings = objects.attribute_bindings(cls, attr, family=True)
            if len(bindings) != 1 or bindings[0].how != BIND \
                    or not isinstance(bindings[0].value, cst.BaseExpression):
                return None
            value = bindings[0].value
            if isinstance(value, cst.Name):
                return self.identity(value, bindings[0].method, depth + 1)
            return ("attr", id(value))
        if attr in self._stores()[0]:
            return None  # some object's attribute of this name is assigned: it may change between reads
        base = self.identity(expr.value, scope, depth + 1)
        return None if base is None else ("attribute", base, attr)

    def _item(self, expr: cst.Subscript, scope: ScopeInfo, depth: int) -> Optional[tuple]:
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return None
        key = expr.slice[0].slice.value
        if isinstance(key, cst.SimpleString):
            constant = key.evaluated_value
        elif isinstance(key, cst.Integer):
            constant = int(key.value, 0)
        else:
            return None
        base = self.identity(expr.value, scope, depth + 1)
        if base is None or base in self._stored_items():
            return None
        return ("item", base, constant)

    def _stores(self) -> Tuple[set, set]:
        """(attribute names assigned on any object, subscript targets' bases), from the module's
        assignments."""
        if self._stored is None:
            attributes: set = set()
            items: set = set()
            index = self.graphs.model.index
            for kind in ("Assign", "AugAssign", "AnnAssign"):
                for node, where in index.get(kind, ()):
                    targets = [t.target for t in node.targets] if kind == "Assign" else [node.target]
                    for target in targets:
                        for element in _flat(target):
                            if isinstance(element, cst.Attribute):
                                attributes.add(element.attr.value)
                            elif isinstance(element, cst.Subscript):
                                items.add((where, element.value))
            self._stored = (attributes, items)
        return self._stored

    def _stored_items(self) -> List[tuple]:
        """The identities of the objects whose items the module assigns (``d["k"] = v``)."""
        found = []
        if self._items is None:
            self._items = []
            for where, base in self._stores()[1]:
                key = self.identity(base, where, _DEPTH)  # shallow: the base's own binding
                if key is not None:
                    self._items.append(key)
        return self._items

    # -- displays -------------------------------------------------------------------
    def display(self, expr: cst.BaseExpression, scope: ScopeInfo, read: Optional[cst.CSTNode] = None,
                depth: int = 0) -> Optional[List[Tuple[cst.BaseExpression, ScopeInfo]]]:
        """The elements of the tuple or list display ``expr`` is (itself, or a name whose one reaching
        binding is one, through aliases), each with the scope it is read in; None otherwise, or when
        a display bound in a loop may come from another turn than ``read`` (``same_turn``)."""
        if depth > _DEPTH:
            return None
        read = read if read is not None else expr
        if isinstance(expr, (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in expr.elements):
                return None
            return [(e.value, scope) for e in expr.elements]
        if isinstance(expr, cst.Name):
            found = lookup(expr.value, scope, expr)
            if found is None or found.kind != ASSIGNED or found.writers or len(found.own_values) != 1 \
                    or (found.scope is not scope and len(found.scope.assigned.get(expr.value, ())) != 1):
                return None
            value = found.own_values[0]
            if not isinstance(value, cst.BaseExpression):
                return None
            if found.scope is scope and not same_turn(value, read, scope):
                return None
            return self.display(value, found.scope, value if isinstance(value, cst.Name) else read, depth + 1)
        return None


def same_turn(bound: cst.CSTNode, read: cst.CSTNode, scope: ScopeInfo) -> bool:
    """Is the binding evaluated at ``bound`` (in ``scope``'s code) the one of ``read``'s own turn of
    every loop around it: no loop holds ``bound``, or one holding both holds it in a block that
    also holds ``read`` (evaluated before it on each turn, not on some earlier turn only)?"""
    order = scope.flow_order()
    if id(bound) not in order.pre or id(read) not in order.pre:
        return True  # not this scope's own code (a nested function's): no loop of this scope to follow
    loops = [n for n in order.ancestors(bound) if isinstance(n, _LOOPS)]
    if not loops:
        return True
    if not order.contains(loops[0], read):
        return False
    block = next((n for n in order.ancestors(bound) if isinstance(n, _BLOCKS)), None)
    return block is not None and order.contains(block, read) and order.pre[id(bound)] < order.pre[id(read)]


def _flat(target: cst.BaseExpression) -> List[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        found: List[cst.BaseExpression] = []
        for element in target.elements:
            value = element.value.value if isinstance(element.value, cst.StarredElement) else element.value
            found.extend(_flat(value))
        return found
    return [target]


__all__ = ["Sameness", "same_turn"]
