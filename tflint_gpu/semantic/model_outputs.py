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

``probability_loss(expr, scope)`` says whether a loss expects probabilities:
the strings and functions of Keras's cross-entropies, and their classes built
without ``from_logits=True`` (``"categorical"``/``"binary"``), else None.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import argument, is_false, keyword
from tflint_gpu.semantic.model import ASSIGNED, ScopeInfo, assigned

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


class ModelOutputs:
    def __init__(self, resolver) -> None:
        self.resolver = resolver

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
    def final_activation(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        made = self.made_by(expr, scope)
        if made is None:
            return None
        call, where = made
        qualname = self._qualname(call.func, where)
        if qualname in _SEQUENTIAL:
            layers = argument(call, 0, "layers")
            if layers is not None:
                value = layers
                if isinstance(value, (cst.List, cst.Tuple)) and value.elements \
                        and not isinstance(value.elements[-1], cst.StarredElement):
                    return self.layer_activation(value.elements[-1].value, where)
                return None
            if isinstance(expr, cst.Name):
                return self._last_added(expr.value, where)
            return None
        if qualname in _MODEL:
            outputs = argument(call, 1, "outputs")
            return self.tensor_activation(outputs, where) if outputs is not None else None
        return None

    def _last_added(self, name: str, scope: ScopeInfo) -> Optional[str]:
        added = [c for c in scope.calls if isinstance(c.func, cst.Attribute) and c.func.attr.value == "add"
                 and isinstance(c.func.value, cst.Name) and c.func.value.value == name and len(c.args) == 1]
        if not added:
            return None
        order = scope.flow_order()
        last = max(added, key=lambda c: order.pre.get(id(c), -1))
        return self.layer_activation(last.args[0].value, scope)

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


__all__ = ["ModelOutputs", "SOFTMAX", "SIGMOID", "LINEAR"]
