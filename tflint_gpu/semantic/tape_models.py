"""Gradients taken for a model the tape never saw run.

``unrecorded(call, scope)`` reads ``tape.gradient(loss, M.trainable_variables)``
(``trainable_weights`` too, directly or through a name bound once to it) and
finds the ``with tf.GradientTape() as tape:`` block whose ``tape`` reaches the
call (flow-aware: a function may open two blocks under one name). The answer
is ``M`` and the block when nothing in the block may run ``M``:

* ``M`` itself (``self.G``, ``G``) is never read in the block, and, when
  ``M`` is an attribute of ``self``, ``self`` is never handed on whole
  (``helper(self)``) nor asked for a method the module does not define
  (``self.compute_loss(...)``: Keras's own may call the model);
* each same-module function or method the block calls is read the same way
  (three calls deep; deeper: "may run");
* each other object the block calls (``self.D(x)``, ``self.loss_fn(y, p)``,
  ``D.call(x)``) is, however the flow finds it made, an instance of a class
  of the module, a Keras layer, loss, metric or application, or a
  ``Sequential`` of fresh layers, made with arguments that never read ``M``;
  a functional ``keras.Model(inputs, outputs)``, a parameter, anything else:
  "may run" (a functional model may share ``M``'s layers).

Library functions (``tf.*``, ``keras.ops.*``, ``numpy.*``) run no model of the
module. The tape then records no op that reads ``M``'s variables, and
``gradient`` gives ``None`` for each of them.
"""
from __future__ import annotations

from typing import Callable, List, NamedTuple, Optional, Set

import libcst as cst

from tflint_gpu.semantic.api import KERAS_SEQUENTIAL, TRAINABLE_LISTS, argument
from tflint_gpu.semantic.model import IMPORT, OPAQUE, ScopeInfo, lookup, walk

Qualname = Callable[[cst.BaseExpression, ScopeInfo], Optional[str]]

# Qualified names read through ``names.normalize``: ``tf.keras.X`` and ``tf_keras.X`` are ``keras.X``.
_LIBRARIES = ("tensorflow.", "keras.", "numpy.", "math.", "tensorflow_probability.")
# Constructors of objects that hold no model of the module unless given one.
_FRESH = ("keras.layers.", "keras.losses.", "keras.metrics.", "keras.applications.", "keras.activations.")
_INPUTS = frozenset({"keras.Input", "keras.layers.Input"})
_DEPTH = 3
_BUILTINS = frozenset({"len", "range", "zip", "list", "tuple", "float", "int", "abs", "min", "max", "sum", "print",
                       "isinstance", "enumerate", "dict", "str", "bool"})


class Unrecorded(NamedTuple):
    model: cst.BaseExpression  # M of M.trainable_variables
    block: cst.With  # the tape's with statement


class TapeModels:
    def __init__(self, flow, qualname: Qualname) -> None:
        self._flow = flow
        self._qualname = qualname

    def unrecorded(self, call: cst.Call, scope: ScopeInfo) -> Optional[Unrecorded]:
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "gradient" or not isinstance(func.value, cst.Name):
            return None
        sources = argument(call, 1, "sources")
        model = self._model_of(sources, scope) if sources is not None else None
        if model is None:
            return None
        block = self._block(func.value, scope, call)
        if block is None or self._may_run(block.body, model, scope, 0, set()):
            return None
        return Unrecorded(model, block)

    # -- what is differentiated ---------------------------------------------------------
    def _model_of(self, sources: cst.BaseExpression, scope: ScopeInfo) -> Optional[cst.BaseExpression]:
        if isinstance(sources, cst.Name):
            found = self._flow.sources(sources, scope)
            if found.unknown or len(found.found) != 1:
                return None
            sources, where = found.found[0]
            if where is not scope:
                return None
        if isinstance(sources, cst.Attribute) and sources.attr.value in TRAINABLE_LISTS \
                and _plain(sources.value):
            return sources.value
        return None

    def _block(self, tape: cst.Name, scope: ScopeInfo, at: cst.Call) -> Optional[cst.With]:
        binding = lookup(tape.value, scope, at)
        if binding is None or binding.scope is not scope or len(binding.own_values) != 1:
            return None
        value = binding.own_values[0]
        if not (isinstance(value, tuple) and value[0] == OPAQUE and isinstance(value[1], cst.WithItem)):
            return None
        item = value[1]
        if not (isinstance(item.item, cst.Call) and (self._qualname(item.item.func, scope) or "").endswith(
                "GradientTape")):
            return None
        return next((node for node in scope.ancestors(item) if isinstance(node, cst.With)), None)

    # -- may the block run the model ----------------------------------------------------
    def _may_run(self, body: cst.CSTNode, model: cst.BaseExpression, scope: ScopeInfo, depth: int,
                 seen: Set[int]) -> bool:
        owner = model.value if isinstance(model, cst.Attribute) else None  # `self` of self.G
        receivers: Set[int] = set()
        for node in walk(body):
            if isinstance(node, cst.Attribute):
                receivers.add(id(node.value))
                if node.deep_equals(model):
                    return True
            elif isinstance(node, cst.Name):
                if isinstance(model, cst.Name) and node.value == model.value:
                    return True
                if isinstance(owner, cst.Name) and node.value == owner.value and id(node) not in receivers:
                    return True  # self handed on whole
        for node in walk(body):
            if isinstance(node, cst.Call) and self._call_may_run(node, model, scope, depth, seen):
                return True
        return False

    def _call_may_run(self, call: cst.Call, model: cst.BaseExpression, scope: ScopeInfo, depth: int,
                      seen: Set[int]) -> bool:
        name = self._qualname(call.func, scope)
        if name is not None and name.startswith(_LIBRARIES) and not self._is_object(call.func, scope):
            return False
        functions = self._flow.functions(call, scope)
        if functions:
            if depth >= _DEPTH:
                return True
            for function in functions:
                if id(function) in seen:
                    continue
                seen.add(id(function))
                if self._may_run(function.node.body, model, function, depth + 1, seen):
                    return True
            return False
        func = call.func
        if isinstance(func, cst.Name) and func.value in _BUILTINS and lookup(func.value, scope, None) is None:
            return False
        if self._fresh_object(func, model, scope):
            return False  # N(...) of a fresh object: a layer, a loss, a model class of the module
        if isinstance(func, cst.Attribute):
            receiver = func.value
            if isinstance(receiver, cst.Name) and receiver.value == "self":
                return True  # a method the module does not define (Keras's own may call the model)
            if self._fresh_object(receiver, model, scope) or self._library_made(receiver, scope):
                return False  # a method of a fresh object, or of a tensor a library op made
        return True

    def _library_made(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is every way ``expr`` is made a library call or a literal (a tensor ``tf.reduce_mean`` made)?"""
        found = self._flow.sources(expr, scope)
        if found.unknown or not found.found:
            return False
        for value, where in found.found:
            if isinstance(value, cst.Call):
                name = self._qualname(value.func, where)
                if name is None or not name.startswith(_LIBRARIES) or self._is_object(value.func, where):
                    return False
            elif not self._library_value(value, where):
                return False
        return True

    def _is_object(self, func: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is ``func`` read from an object the module binds (``self.D``, ``net``), not a library path?"""
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return True
        binding = lookup(root.value, scope, None)
        return binding is not None and binding.kind != IMPORT

    def _fresh_object(self, callee: cst.BaseExpression, model: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is every way ``callee`` is made a fresh object that holds no model (see the module doc)?"""
        found = self._flow.sources(callee, scope)
        if found.unknown or not found.found:
            return False
        for value, where in found.found:
            if isinstance(value, cst.Call):
                name = self._qualname(value.func, where) or ""
                made = isinstance(value.func, cst.Name) and where.lookup_class(value.func.value) is not None
                if not (made or name.startswith(_LIBRARIES) and self._library_object(name, value)):
                    return False
                if any(_reads(arg.value, model) for arg in value.args):
                    return False
                if name in KERAS_SEQUENTIAL and not self._fresh_layers(value, where):
                    return False
            elif not self._library_value(value, where):
                return False
        return True

    def _library_object(self, name: str, call: cst.Call) -> bool:
        return name.startswith(_FRESH) or name in KERAS_SEQUENTIAL or not any(
            part in ("Model", "Functional") for part in name.split("."))

    def _fresh_layers(self, call: cst.Call, scope: ScopeInfo) -> bool:
        layers = argument(call, 0, "layers")
        if not isinstance(layers, (cst.List, cst.Tuple)):
            return False
        for element in layers.elements:
            if not isinstance(element.value, cst.Call):
                return False
            name = self._qualname(element.value.func, scope) or ""
            if not name.startswith(_FRESH) and name not in _INPUTS:
                return False
        return True

    def _library_value(self, value: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """A value that is no callable of the module (a literal, a library attribute such as tf.nn.relu)."""
        if isinstance(value, (cst.SimpleString, cst.Integer, cst.Float)):
            return True
        name = self._qualname(value, scope)
        return name is not None and name.startswith(_LIBRARIES)


def _plain(expr: cst.BaseExpression) -> bool:
    """``G`` or ``self.G`` (a name or one attribute of a name)."""
    return isinstance(expr, cst.Name) or isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)


def _reads(expr: cst.BaseExpression, model: cst.BaseExpression) -> bool:
    for node in walk(expr):
        if node.deep_equals(model) if isinstance(model, cst.Attribute) else (
                isinstance(node, cst.Name) and node.value == model.value):
            return True
    return False


__all__: List[str] = ["TapeModels", "Unrecorded"]
