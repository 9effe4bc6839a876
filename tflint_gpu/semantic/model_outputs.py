"""What a Keras model's output is: probabilities or raw logits.

``ModelOutputs.final_activation(expr, scope)`` answers, for a Keras model the
file builds, how its output is made: ``"softmax"``, ``"sigmoid"``, ``"linear"``
(a ``Dense``/``Conv`` layer with no activation: raw logits) or None (not
told). It follows the name to the call that made the model (bound once) and
reads

* ``Sequential([..., last])`` and ``Sequential()`` followed by ``m.add(layer)``
  calls in the same scope (the last one in the code);
* ``Model(inputs, outputs)`` / ``Model(inputs=..., outputs=...)``: the
  expression ``outputs`` is bound to, a layer called on a tensor
  (``Dense(4)(h)``), ``tf.nn.softmax(h)`` / ``keras.activations.softmax(h)``;

and a layer by its constructor: ``Dense``/``Conv*``/``EinsumDense`` by their
``activation=`` (positional for ``Dense``), ``Activation("softmax")``,
``Softmax()``. Anything else (a Lambda, a custom layer, a subclassed model)
is not told.

``final_width(expr, scope)``: the size of the output's last axis where the
last layer (read as above) is a ``Dense`` with a literal ``units``; Keras
resolves ``metrics=["accuracy"]`` by it (binary accuracy when it is 1).

``probability_loss(expr, scope)`` says whether a loss expects probabilities:
the strings and functions of Keras's cross-entropies, and their classes built
without ``from_logits=True`` (``"categorical"``/``"binary"``), else None.

The other way round, for values that are already probabilities:

* ``probabilities(expr, scope, at)``: ``Probabilities(kind, keras)`` when the
  value is made by a softmax or sigmoid: ``tf.nn.softmax(h)`` /
  ``keras.activations.softmax(h)`` / ``tf.math.sigmoid(h)``, a call of a model
  whose ``final_activation`` is one (``model(x)``, ``model.predict(x)``), or a
  call of a same-module function or Keras class (its ``call``) whose returned
  value is one for the arguments the call passes: the returned name's last
  binding in the function body, taking an ``if not training:`` (``if
  training:``, ``is False``/``is True``/``== False``...) on a parameter by the
  literal the call passes or the parameter's literal default. ``keras`` says
  whether a Keras layer or activation made it: Keras's cross-entropies take
  such a tensor's logits back themselves (below).
* ``logits_argument(call, scope)``: for a loss that applies a softmax or
  sigmoid itself, the expression it takes as logits and the loss:
  ``tf.nn.softmax_cross_entropy_with_logits`` / ``sparse_...`` /
  ``sigmoid_...`` / ``weighted_...``, TensorFlow 1's
  ``tf.compat.v1.losses.softmax_cross_entropy`` / ``sparse_...`` /
  ``sigmoid_...``, and a Keras cross-entropy built or called with
  ``from_logits=True``.
* ``logits_parameter(function)``: a same-module function that passes one of its
  own parameters, unchanged, as such a loss's logits: (the parameter's index
  among a call's arguments, its name, the inner loss call).

Measured under TF 2.21 with Keras 3.15 and tf_keras 2.21 (CPU): Keras's
cross-entropies given ``from_logits=True`` and the output of a Keras softmax or
sigmoid (a layer's ``activation=``, ``keras.activations``), eagerly or traced,
warn and compute the loss from the logits Keras kept on the tensor: the right
value. Given ``tf.nn.softmax``'s output they do the same once traced (they
recognise the ``Softmax`` op) but not eagerly: softmax applied twice. The
``tf.nn`` and ``tf.compat.v1.losses`` losses never do.
"""
from __future__ import annotations

from typing import Dict, NamedTuple, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import argument, is_false, keyword
from tflint_gpu.semantic.bindings import bound_names, target_names
from tflint_gpu.semantic.model import ASSIGNED, ScopeInfo, assigned, returns

SOFTMAX, SIGMOID, LINEAR = "softmax", "sigmoid", "linear"
_ACTIVATION_LAYERS = ("Dense", "Conv1D", "Conv2D", "Conv3D", "EinsumDense", "Conv1DTranspose", "Conv2DTranspose",
                      "Conv3DTranspose", "DepthwiseConv2D", "SeparableConv2D")
_ACTIVATIONS = {"softmax": SOFTMAX, "sigmoid": SIGMOID, "linear": LINEAR, "None": LINEAR}
_ACTIVATION_FUNCTIONS = {"keras.activations.softmax": SOFTMAX, "keras.activations.sigmoid": SIGMOID,
                         "tensorflow.nn.softmax": SOFTMAX, "tensorflow.math.sigmoid": SIGMOID,
                         "tensorflow.nn.sigmoid": SIGMOID, "tensorflow.sigmoid": SIGMOID,
                         "keras.activations.linear": LINEAR}
_SEQUENTIAL = ("keras.Sequential", "keras.models.Sequential")
_MODEL = ("keras.Model", "keras.models.Model")
# Keras's cross-entropies that take probabilities unless told ``from_logits=True``: kind by name.
_LOSS_CLASSES = {"keras.losses.SparseCategoricalCrossentropy": "categorical",
                 "keras.losses.CategoricalCrossentropy": "categorical",
                 "keras.losses.BinaryCrossentropy": "binary"}
_LOSS_FUNCTIONS = {"keras.losses.sparse_categorical_crossentropy": "categorical",
                   "keras.losses.categorical_crossentropy": "categorical",
                   "keras.losses.binary_crossentropy": "binary"}
_LOSS_STRINGS = {"sparse_categorical_crossentropy": "categorical", "categorical_crossentropy": "categorical",
                 "binary_crossentropy": "binary"}
# Losses that apply a softmax or sigmoid to what they take as logits: (the logits' position, which).
_LOGITS_LOSSES = {"tensorflow.nn.softmax_cross_entropy_with_logits": (1, SOFTMAX),
                  "tensorflow.nn.softmax_cross_entropy_with_logits_v2": (1, SOFTMAX),
                  "tensorflow.nn.sparse_softmax_cross_entropy_with_logits": (1, SOFTMAX),
                  "tensorflow.nn.sigmoid_cross_entropy_with_logits": (1, SIGMOID),
                  "tensorflow.nn.weighted_cross_entropy_with_logits": (1, SIGMOID),
                  "tensorflow.losses.softmax_cross_entropy": (1, SOFTMAX),  # tf.compat.v1.losses
                  "tensorflow.losses.sparse_softmax_cross_entropy": (1, SOFTMAX),
                  "tensorflow.losses.sigmoid_cross_entropy": (1, SIGMOID)}
_KERAS_ACTIVATIONS = frozenset({"keras.activations.softmax", "keras.activations.sigmoid"})
_DEPTH = 3


class Probabilities(NamedTuple):
    kind: str  # SOFTMAX or SIGMOID
    keras: bool  # made by a Keras layer or activation (Keras's losses recover its logits)


class LogitsLoss(NamedTuple):
    logits: cst.BaseExpression  # what the loss takes as logits
    loss: str  # the loss's qualified name
    keras: bool  # a Keras cross-entropy with from_logits=True
    activation: str  # what it applies to the logits: SOFTMAX or SIGMOID


class ModelOutputs:
    def __init__(self, resolver, graphs=None) -> None:
        self.resolver = resolver
        self.graphs = graphs
        self._returned: Dict[Tuple[int, int], Optional[Probabilities]] = {}
        self._parameters: Dict[int, Optional[Tuple[int, str, cst.Call]]] = {}

    def _qualname(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        return self.resolver.qualname(expr, scope)  # normalized: tf.keras and tf_keras spell keras

    def made_by(self, expr: cst.BaseExpression, scope: ScopeInfo, at: Optional[cst.CSTNode] = None):
        """(the call that made ``expr``, its scope): itself, or the one value of a name bound once
        (with ``at``, the read: the one binding live there)."""
        if isinstance(expr, cst.Call):
            return expr, scope
        if isinstance(expr, cst.Name):
            found = assigned(expr.value, scope, at)
            if found is not None and found.kind == ASSIGNED and isinstance(found.single_value, cst.Call):
                return found.single_value, found.scope
        return None

    # -- models -----------------------------------------------------------------
    def final_activation(self, expr: cst.BaseExpression, scope: ScopeInfo,
                         at: Optional[cst.CSTNode] = None) -> Optional[str]:
        """(With ``at``: the model a name holds there, the one binding live at that read.)"""
        made = self.made_by(expr, scope, at=at)
        if made is None:
            return None
        call, where = made
        if self._qualname(call.func, where) in _MODEL:  # its outputs may end in an activation function
            outputs = argument(call, 1, "outputs")
            return self.tensor_activation(outputs, where) if outputs is not None else None
        layer = self._final_layer(expr, scope, at)
        return self.layer_activation(*layer) if layer is not None else None

    def final_width(self, expr: cst.BaseExpression, scope: ScopeInfo, at: Optional[cst.CSTNode] = None
                    ) -> Optional[int]:
        """The size of the last axis of a model's output, where exact: the model is
        read as for ``final_activation`` and its last layer is a ``Dense`` whose
        ``units`` is an integer literal; None otherwise. (Keras's compile resolves
        ``metrics=["accuracy"]`` by it: binary accuracy when it is 1.)"""
        layer = self._final_layer(expr, scope, at)
        made = self.made_by(*layer) if layer is not None else None
        if made is None:
            return None
        call, where = made
        if self._qualname(call.func, where) != "keras.layers.Dense" or any(a.star for a in call.args):
            return None
        units = argument(call, 0, "units")
        if isinstance(units, cst.Integer):
            return int(units.evaluated_value)
        return None

    def _final_layer(self, expr: cst.BaseExpression, scope: ScopeInfo, at: Optional[cst.CSTNode] = None):
        """(the expression of a model's last layer, its scope), as ``final_activation`` reads it; None
        when the last step is not a layer (an activation function) or is not told."""
        made = self.made_by(expr, scope, at=at)
        if made is None:
            return None
        call, where = made
        qualname = self._qualname(call.func, where)
        if qualname in _SEQUENTIAL:
            layers = argument(call, 0, "layers")
            if layers is not None:
                if isinstance(layers, (cst.List, cst.Tuple)) and layers.elements \
                        and not isinstance(layers.elements[-1], cst.StarredElement):
                    return layers.elements[-1].value, where
                return None
            if isinstance(expr, cst.Name):
                added = [c for c in where.calls if isinstance(c.func, cst.Attribute) and c.func.attr.value == "add"
                         and isinstance(c.func.value, cst.Name) and c.func.value.value == expr.value
                         and len(c.args) == 1]
                order = where.flow_order()
                if at is not None:  # the adds to the model bound there: after its binding, before the read
                    start, end = order.pre.get(id(call), -1), order.pre.get(id(at))
                    added = [c for c in added if order.pre.get(id(c), -1) > start
                             and (end is None or order.pre.get(id(c), -1) < end)]
                if added:
                    return max(added, key=lambda c: order.pre.get(id(c), -1)).args[0].value, where
            return None
        if qualname in _MODEL:
            outputs = argument(call, 1, "outputs")
            tensor = self.made_by(outputs, where) if outputs is not None else None
            if tensor is not None and isinstance(tensor[0].func, (cst.Call, cst.Name)):
                return tensor[0].func, tensor[1]
        return None

    def tensor_activation(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        """How a symbolic tensor of a functional model is made: a layer called on a tensor, or an
        activation function applied to one."""
        made = self.made_by(expr, scope)
        if made is None:
            return None
        call, where = made
        if isinstance(call.func, cst.Call):  # Dense(4)(h)
            return self.layer_activation(call.func, where)
        if isinstance(call.func, cst.Name):  # out = head(h) with head = Dense(4)
            return self.layer_activation(call.func, where)
        return _ACTIVATION_FUNCTIONS.get(self._qualname(call.func, where) or "")

    def layer_activation(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        made = self.made_by(expr, scope)
        if made is None:
            return None
        call, where = made
        qualname = self._qualname(call.func, where) or ""
        if not qualname.startswith("keras.layers."):
            return None
        name = qualname.rsplit(".", 1)[1]
        if name == "Softmax":
            return SOFTMAX
        if name == "Activation":
            given = argument(call, 0, "activation")
            return self._activation(given, where) if given is not None else None
        if name in _ACTIVATION_LAYERS:
            given = argument(call, 1, "activation") if name == "Dense" else \
                (keyword(call, "activation").value if keyword(call, "activation") is not None else None)
            return LINEAR if given is None else self._activation(given, where)
        return None

    def _activation(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        if isinstance(expr, cst.SimpleString):
            try:
                return _ACTIVATIONS.get(expr.evaluated_value)
            except Exception:  # pragma: no cover - defensive
                return None
        if isinstance(expr, cst.Name) and expr.value == "None":
            return LINEAR
        return _ACTIVATION_FUNCTIONS.get(self._qualname(expr, scope) or "")

    # -- losses -----------------------------------------------------------------
    def probability_loss(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        """``"categorical"`` / ``"binary"`` for a Keras cross-entropy that takes probabilities here."""
        if isinstance(expr, cst.SimpleString):
            try:
                return _LOSS_STRINGS.get(expr.evaluated_value)
            except Exception:  # pragma: no cover - defensive
                return None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            found = _LOSS_FUNCTIONS.get(self._qualname(expr, scope) or "")
            if found is not None:
                return found
        made = self.made_by(expr, scope)
        if made is None:
            return None
        call, where = made
        kind = _LOSS_CLASSES.get(self._qualname(call.func, where) or "")
        if kind is None or any(a.star for a in call.args):
            return None
        logits = argument(call, 0, "from_logits")
        if logits is None or is_false(logits):
            return kind
        return None

    # -- probabilities where logits are expected ----------------------------------
    def probabilities(self, expr: Optional[cst.BaseExpression], scope: ScopeInfo,
                      at: Optional[cst.CSTNode] = None, depth: int = 0) -> Optional[Probabilities]:
        if expr is None or depth > _DEPTH:
            return None
        made = self.made_by(expr, scope, at=at if at is not None else expr)
        if made is None:
            return None
        call, where = made
        qualname = self._qualname(call.func, where) or ""
        kind = _ACTIVATION_FUNCTIONS.get(qualname)
        if kind in (SOFTMAX, SIGMOID):
            return Probabilities(kind, qualname in _KERAS_ACTIVATIONS) if call.args else None
        func = call.func
        model = func.value if isinstance(func, cst.Attribute) and func.attr.value in ("predict", "predict_on_batch") \
            else func
        kind = self.final_activation(model, where)
        if kind is None and self.graphs is not None:
            kind = self._attribute_activation(model, where)
        if kind in (SOFTMAX, SIGMOID):
            return Probabilities(kind, True)
        if kind is not None or self.graphs is None:
            return None
        function = self._callee(call, where)
        if function is None or not isinstance(function.node, cst.FunctionDef):
            return None
        return self._returns_probabilities(function, call, depth + 1)

    def _attribute_activation(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        """How ``self.x`` makes its output, when the class binds ``x`` once, to a layer or model
        the file builds (``self.out = layers.Dense(10, activation="softmax")`` in ``__init__``)."""
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return None
        cls = scope.method_class()
        if cls is None:
            return None
        bindings = self.graphs.objects.attribute_bindings(cls, expr.attr.value, family=True)
        if len(bindings) != 1 or not isinstance(bindings[0].value, cst.Call):
            return None
        value, where = bindings[0].value, bindings[0].method
        if where is None:
            return None
        found = self.layer_activation(value, where)
        return found if found is not None else self.final_activation(value, where)

    def _callee(self, call: cst.Call, scope: ScopeInfo) -> Optional[ScopeInfo]:
        """The one same-module function ``call`` runs: a function, a method of an object of the
        module's own classes, an instance's ``__call__``, a Keras subclass instance's ``call``."""
        func = call.func
        function = self.graphs.function_scope(func, scope)
        if function is not None:
            return function
        methods = self.graphs.object_callees(call, scope)
        if len(methods) == 1:
            return methods[0]
        if not isinstance(func, cst.Name):
            return None
        kind = self.graphs.objects.kind(func, scope)
        if len(kind.instances) != 1 or kind.other or kind.unknown:
            return None
        methods = self.graphs.objects.instance_call(kind.instances[0])
        return methods[0] if len(methods) == 1 else None

    def _returns_probabilities(self, function: ScopeInfo, call: cst.Call, depth: int) -> Optional[Probabilities]:
        key = (id(function), id(call))
        if key in self._returned:
            return self._returned[key]
        self._returned[key] = None  # recursion gives nothing
        self._returned[key] = found = self._returned_value(function, call, depth)
        return found

    def _returned_value(self, function: ScopeInfo, call: cst.Call, depth: int) -> Optional[Probabilities]:
        """The function's last statement ``return value``; before it, only early returns as the
        whole body of an ``if`` (no ``else``) whose test the call's arguments decide."""
        body = function.node.body.body
        last = body[-1] if body else None
        if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1
                and isinstance(last.body[0], cst.Return)):
            return None
        for index, statement in enumerate(body[:-1]):
            if not any(True for _ in returns(statement)):
                continue
            early = statement.body.body if isinstance(statement, cst.If) and statement.orelse is None else ()
            if not (len(early) == 1 and isinstance(early[0], cst.SimpleStatementLine)
                    and isinstance(early[0].body[-1], cst.Return)):
                return None
            holds = self._test_holds(statement.test, function, call)
            if holds is None:
                return None
            if holds:
                value = early[0].body[-1].value
                return self.probabilities(value, function, value, depth) if value is not None else None
        value = last.body[0].value
        if isinstance(value, cst.Call):
            return self.probabilities(value, function, value, depth)
        if isinstance(value, cst.Name):
            return self._last_bound(value.value, body[:-1], function, call, depth)
        return None

    def _last_bound(self, name: str, statements, function: ScopeInfo, call: cst.Call,
                    depth: int) -> Optional[Probabilities]:
        """What the last statement of ``statements`` binding ``name`` binds it to, when it is
        probabilities: a plain assignment, or one in an ``if`` (no ``else``) whose test the call's
        arguments decide (a test they decide false is skipped)."""
        for statement in reversed(statements):
            if isinstance(statement, cst.SimpleStatementLine):
                for small in reversed(statement.body):
                    value = _assigned_value(small, name)
                    if value is not None:
                        return self.probabilities(value, function, value, depth) if value is not False else None
                continue
            if name not in bound_names(statement):
                continue
            if not isinstance(statement, cst.If) or statement.orelse is not None:
                return None
            holds = self._test_holds(statement.test, function, call)
            if holds is None:
                return None
            if holds:
                return self._last_bound(name, statement.body.body, function, call, depth)
        return None

    def _test_holds(self, test: cst.BaseExpression, function: ScopeInfo, call: cst.Call) -> Optional[bool]:
        negate = False
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            negate, test = True, test.expression
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
                and isinstance(test.comparisons[0].operator, (cst.Is, cst.Equal, cst.IsNot, cst.NotEqual)) \
                and _literal(test.comparisons[0].comparator) is not None:
            target = _literal(test.comparisons[0].comparator)
            if isinstance(test.comparisons[0].operator, (cst.IsNot, cst.NotEqual)):
                negate = not negate
            value = self._parameter_value(test.left, function, call)
            if value is None:
                return None
            return (value == target) != negate
        value = self._parameter_value(test, function, call)
        if value is None:
            return None
        return bool(value[0]) != negate if isinstance(value, tuple) else None

    def _parameter_value(self, expr: cst.BaseExpression, function: ScopeInfo, call: cst.Call):
        """(the literal True/False/None a parameter has for ``call``,) or None when not told."""
        if not isinstance(expr, cst.Name):
            return None
        binding = assigned(expr.value, function)
        if binding is None or binding.scope is not function or binding.rebound:
            return None
        params = list(function.node.params.params)
        if function.binds_instance and params:
            params = params[1:]
        names = [p.name.value for p in params]
        if expr.value not in names:
            return None
        index = names.index(expr.value)
        given = argument(call, index, expr.value)
        if given is None:
            if any(a.star for a in call.args):
                return None
            given = params[index].default
        literal = _literal(given) if given is not None else None
        return (literal[0],) if literal is not None else None

    def logits_argument(self, call: cst.Call, scope: ScopeInfo) -> Optional[LogitsLoss]:
        qualname = self._qualname(call.func, scope) or ""
        known = _LOGITS_LOSSES.get(qualname)
        if known is not None:
            logits = argument(call, known[0], "logits")
            return LogitsLoss(logits, qualname, False, known[1]) if logits is not None else None
        kind = _LOSS_FUNCTIONS.get(qualname)
        if kind is not None:
            if _is_true(argument(call, 2, "from_logits")):
                predicted = argument(call, 1, "y_pred")
                activation = SIGMOID if kind == "binary" else SOFTMAX
                return LogitsLoss(predicted, qualname, True, activation) if predicted is not None else None
            return None
        made = self.made_by(call.func, scope, at=call.func)
        if made is None or not call.args:
            return None
        built, where = made
        spelled = self._qualname(built.func, where) or ""
        kind = _LOSS_CLASSES.get(spelled)
        if kind is None:
            return None
        if _is_true(argument(built, 0, "from_logits")):
            predicted = argument(call, 1, "y_pred")
            activation = SIGMOID if kind == "binary" else SOFTMAX
            return LogitsLoss(predicted, spelled, True, activation) if predicted is not None else None
        return None

    def logits_parameter(self, function: ScopeInfo) -> Optional[Tuple[int, str, LogitsLoss]]:
        key = id(function)
        if key in self._parameters:
            return self._parameters[key]
        self._parameters[key] = found = None
        node = function.node
        if isinstance(node, cst.FunctionDef) and self.graphs is not None:
            params = [p.name.value for p in node.params.params]
            if function.binds_instance and params:
                params = params[1:]
            for inner in self.graphs.model.nodes_in(function, "Call"):
                loss = self.logits_argument(inner, function)
                if loss is None or not isinstance(loss.logits, cst.Name) or loss.logits.value not in params:
                    continue
                binding = assigned(loss.logits.value, function)
                if binding is None or binding.scope is not function or binding.rebound:
                    continue
                found = (params.index(loss.logits.value), loss.logits.value, loss)
                break
        self._parameters[key] = found
        return found


def _is_true(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _literal(expr: Optional[cst.BaseExpression]):
    """(True/False/None,) for those literals, else None."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return ({"True": True, "False": False, "None": None}[expr.value],)
    return None


def _assigned_value(small: cst.BaseSmallStatement, name: str):
    """The value a small statement binds ``name`` to; False when it binds it some other way
    (augmented, unpacked); None when it does not bind it."""
    if isinstance(small, cst.Assign):
        for target in small.targets:
            if isinstance(target.target, cst.Name) and target.target.value == name:
                return small.value
            if name in target_names(target.target):
                return False
        return None
    if isinstance(small, (cst.AugAssign, cst.AnnAssign)):
        return False if isinstance(small.target, cst.Name) and small.target.value == name else None
    return None


__all__ = ["ModelOutputs", "Probabilities", "LogitsLoss", "SOFTMAX", "SIGMOID", "LINEAR"]
