"""Functions that evaluate a model rather than train it.

``evaluates(function)``: a def whose name says it evaluates (``test``,
``val``/``valid``/``validation``, ``eval``/``evaluate``, ``predict``,
``infer`` as a word of the name: ``test_step``, ``_one_step_evaluate``,
``validate_epoch``; the words ``semantic.training_layers`` reads to tell a
training step from an evaluation) and whose own body holds no GradientTape
training step (``semantic.eager``: gradients reaching an update). A Keras
class's ``call`` never evaluates (its ``training`` is the caller's).

``training_on_purpose(call, scope)``: a training-mode call there that is
likely deliberate: in a function whose name speaks of prediction, inference
or sampling (Monte Carlo dropout keeps dropout on to estimate an
uncertainty), or of a callee that is itself a dropout or noise layer (a
``Dropout`` called by name with ``training=True`` says what it wants).
"""
from __future__ import annotations

import re
from typing import Dict

import libcst as cst

from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.semantic.project import TRAINING_LAYER_NAMES
from tflint_gpu.semantic.training_layers import EVALUATING


# Words of a name for prediction: Monte Carlo dropout (`model(x, training=True)` at prediction, for an
# uncertainty) is a known technique, and inference code may keep a layer noisy on purpose.
_PREDICTING = re.compile(r"(?:^|_)(?:predict|prediction|infer|inference|sample|sampling|mc)(?:_|$|\d)", re.IGNORECASE)
_NORMALISATION = frozenset({"BatchNormalization", "SyncBatchNormalization"})


class Evaluation:
    def __init__(self, eager, flow, qualname) -> None:
        self._eager = eager
        self._flow = flow
        self._qualname = qualname
        self._answers: Dict[int, bool] = {}

    def training_on_purpose(self, call: cst.Call, scope: ScopeInfo) -> bool:
        """Is a training-mode call in an evaluating function likely deliberate: a function whose name speaks
        of prediction or sampling (Monte Carlo dropout), or a callee that is itself a dropout or noise layer
        (every way it is made: that layer's constructor), called in training mode by name?"""
        if _PREDICTING.search(scope.name):
            return True
        sources = self._flow.sources(call.func, scope)
        if sources.unknown or not sources.found:
            return False
        for value, where in sources.found:
            if not isinstance(value, cst.Call):
                return False
            name = (self._qualname(value.func, where) or "").rsplit(".", 1)[-1]
            if name not in TRAINING_LAYER_NAMES or name in _NORMALISATION:
                return False
        return True

    def evaluates(self, function: ScopeInfo) -> bool:
        key = id(function)
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = self._evaluates(function)
        return found

    def _evaluates(self, function: ScopeInfo) -> bool:
        if not function.is_function or not isinstance(function.node, cst.FunctionDef) or function.name == "call":
            return False
        if not EVALUATING.search(function.name):
            return False
        return self._eager.step_function(function, depth=0) is None
