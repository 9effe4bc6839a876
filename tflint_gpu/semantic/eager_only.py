"""Keras calls that need eager execution (Keras 3 runs eagerly only).

``EagerOnly(ctx).calls()`` answers "which calls of this module run a Keras model method that Keras 3
cannot run once TensorFlow is switched to graph mode (``tf.compat.v1.disable_v2_behavior()``,
``disable_eager_execution()``)?": ``fit``, ``evaluate``, ``predict`` (and their ``*_generator``
forms) and ``save``/``save_weights``, on an object that may be a Keras model
(``facts.may_be_keras_model``). Measured under TensorFlow 2.21 with Keras 3.15 after
``disable_eager_execution()``: ``fit``/``evaluate``/``predict`` raise RuntimeError (tf.data
iteration needs eager mode), ``save``/``save_weights`` NotImplementedError (``numpy()``); a layer
called on graph tensors, run in a ``Session``, and ``train_on_batch`` still work, so they are not
listed.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.model import ScopeInfo

EAGER_ONLY_METHODS = frozenset({"fit", "evaluate", "predict", "fit_generator", "evaluate_generator",
                                "predict_generator", "save", "save_weights"})


class EagerOnly:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._calls: Optional[List[Tuple[cst.Call, ScopeInfo]]] = None

    def calls(self) -> List[Tuple[cst.Call, ScopeInfo]]:
        if self._calls is None:
            ctx = self.ctx
            found = []
            saved = ctx.scope
            try:
                for call, scope in ctx.model.index.get("Call", ()):
                    func = call.func
                    if not (isinstance(func, cst.Attribute) and func.attr.value in EAGER_ONLY_METHODS):
                        continue
                    ctx.scope = scope
                    if ctx.may_be_keras_model(func.value, func.attr.value):
                        found.append((call, scope))
            finally:
                ctx.scope = saved
            self._calls = found
        return self._calls
