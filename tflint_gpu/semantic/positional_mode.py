"""A Keras layer or model called with its mode by position: ``self.dropout(x, training)``.

Keras 2 (tf_keras) bound ``layer(x, training)`` to the second positional
parameter of the layer's ``call``; Keras 3 refuses a Python bool passed by
position (measured, Keras 3.15: ``ValueError: Only input tensors may be passed
as positional arguments`` from a layer, a ``Sequential`` or a subclass;
``TypeError`` from a functional model and the preprocessing layers). A mode
is a Python bool in Keras 3: ``fit`` calls the model with ``training=True``
and the model's ``call`` hands that bool on.

``positional_mode(call, scope, migration, training_layers)`` answers, for a
call whose second argument is given by position and is a mode:

* ``True``/``False`` written there, or a parameter of the enclosing function
  named ``training``/``is_training`` or defaulting to ``True``/``False``
  (what a ``call(self, x, training=None)`` receives);

and whose callee is a Keras layer or model:

* an instance of a same-module Keras class (``training_layers.call_signature``; or every
  element of the list it is taken from, ``migration.element_calls``: ``for block in self.blocks``):
  the keyword is the name of its ``call``'s second positional parameter, the
  one Keras 2 bound (None when its ``call`` has none: a call Keras 2 refused too);
* an object made by a Keras class whose tf_keras ``call`` takes ``training``
  second and whose Keras 3 ``call`` takes it by keyword (``migration.object_class``,
  the table ``data/keras_call_training.json`` derived by
  ``scripts/derive_call_training.py``): the keyword is ``training``.

It returns ``(the argument, the keyword to pass it by or None)``; None when
the call is not such a call, the callee is tf_keras's, or nothing tells.
"""
from __future__ import annotations

from functools import lru_cache
from typing import FrozenSet, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import positional_args
from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.semantic.tables import data_table

_MODE_NAMES = frozenset({"training", "is_training"})
_BOOLS = frozenset({"True", "False"})


@lru_cache(maxsize=1)
def training_second() -> FrozenSet[str]:
    """The Keras classes whose ``call`` takes ``training`` second under tf_keras and by keyword under Keras 3."""
    return frozenset(data_table("keras_call_training.json")["training_second"])


def is_mode(value: cst.BaseExpression, scope: ScopeInfo) -> bool:
    """``True``/``False``, or a parameter of the function ``scope`` is (or is nested in) that names or
    defaults to a mode."""
    if not isinstance(value, cst.Name):
        return False
    if value.value in _BOOLS:
        return True
    for where in scope.chain():
        node = where.node
        if not isinstance(node, cst.FunctionDef):
            continue
        params = node.params
        for param in list(params.posonly_params) + list(params.params) + list(params.kwonly_params):
            if param.name.value == value.value:
                default = param.default
                return value.value in _MODE_NAMES or (isinstance(default, cst.Name) and default.value in _BOOLS)
        if value.value in where.assigned:
            return False  # bound in the function otherwise: not what it receives
    return False


def positional_mode(call: cst.Call, scope: ScopeInfo, migration, training_layers
                    ) -> Optional[Tuple[cst.Arg, Optional[str]]]:
    positional = positional_args(call)
    if positional is None or len(positional) < 2 or call.args[1] is not positional[1] \
            or not is_mode(positional[1].value, scope):
        return None
    func = call.func
    signature = training_layers.call_signature(func, scope)
    if signature is None:  # an element of a list of same-module layers: `for block in self.blocks`
        signature = _element_signature(func, scope, migration, training_layers)
    if signature is not None:
        if migration.object_flavour(func, scope) not in (None, KERAS3):
            return None
        return positional[1], (signature.positional[1] if len(signature.positional) >= 2 else None)
    made = migration.object_class(func, scope)
    if made is None or made not in training_second():
        return None
    if migration.object_flavour(func, scope) != KERAS3:
        return None
    return positional[1], "training"


def _element_signature(func: cst.BaseExpression, scope: ScopeInfo, migration, training_layers):
    """The ``call`` signature of the same-module Keras class every element of the container ``func`` is
    taken from was made by (one class), or None."""
    made = migration.element_calls(func, scope)
    if not made:
        return None
    classes = set()
    for call, where in made:
        if not isinstance(call.func, cst.Name):
            return None
        cls = where.lookup_class(call.func.value)
        if cls is None:
            return None
        classes.add(cls)
    if len(classes) != 1:
        return None
    return training_layers.class_signature(classes.pop())
