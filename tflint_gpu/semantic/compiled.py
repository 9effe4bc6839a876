"""What a Keras ``compile`` call asks of the model's output: how its metrics read it, and
whether its loss takes it for logits.

``compiled_metrics(call, model, outputs, scope)``: the elements of ``metrics=`` and
``weighted_metrics=`` (a list, a tuple or one metric), each a ``CompiledMetric`` saying
what Keras makes of it; None where the call's metrics cannot be read (a ``*``/``**``
argument, an element that is starred, or a third positional argument: metrics in tf_keras,
loss weights in Keras 3). Keras 3.15 (``trainers/compile_utils.get_metric``) and tf_keras
2.21 (``engine/compile_utils``) resolve ``"accuracy"``/``"acc"`` (any case) by the output's
last axis: ``BinaryAccuracy`` (outputs > 0.5) when it is 1, else sparse categorical or
categorical accuracy (argmax). The width is ``ModelOutputs.final_width`` (a ``Dense`` whose
``units`` is a literal; with ``at``, of the model a name holds there); where it is not told,
the kind is ``ACCURACY_BY_WIDTH``. Binary
accuracy is also ``"binary_accuracy"``, ``BinaryAccuracy(...)`` built in the element (its
``threshold``, default 0.5), the function ``keras.metrics.binary_accuracy`` (threshold 0.5)
and a name bound once to a ``BinaryAccuracy(...)`` built elsewhere. ``Precision``/``Recall``
without ``top_k`` are ``THRESHOLDS`` (positive where the output exceeds ``thresholds``, default
0.5).

``logits_loss(expr, outputs, graphs, scope)``: ``"binary"``/``"categorical"`` when a
compiled loss takes the model's output for logits: a Keras cross-entropy class (binary,
binary focal, categorical, categorical focal, sparse categorical) built with
``from_logits=True`` (by keyword or position), ``functools.partial`` of a cross-entropy
function with ``from_logits=True``, a lambda or same-module function passing its second
parameter as the logits of such a loss (``binary_crossentropy(y, p, from_logits=True)``,
``tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=p)``...); else None.
"""
from __future__ import annotations

from typing import List, NamedTuple, Optional

import libcst as cst

from tflint_gpu.semantic.api import argument, keyword
from tflint_gpu.semantic.model import ASSIGNED, ScopeInfo, assigned

BINARY = "binary"  # thresholds the outputs (BinaryAccuracy)
ARGMAX = "argmax"  # compares the argmax or top k: the same on logits as on probabilities
ACCURACY_BY_WIDTH = "accuracy-by-width"  # "accuracy" of an output whose width is not told
THRESHOLDS = "thresholds"  # Precision / Recall: outputs > thresholds (default 0.5) are positive
OTHER = "other"  # anything else (AUC, a custom metric, a name)

STRING, CLASS, FUNCTION, OBJECT = "string", "class", "function", "object"

_ARGMAX_STRINGS = frozenset({"categorical_accuracy", "sparse_categorical_accuracy", "top_k_categorical_accuracy",
                             "sparse_top_k_categorical_accuracy"})
_ARGMAX_CLASSES = frozenset({"keras.metrics.CategoricalAccuracy", "keras.metrics.SparseCategoricalAccuracy",
                             "keras.metrics.TopKCategoricalAccuracy", "keras.metrics.SparseTopKCategoricalAccuracy"})
_BINARY_FUNCTIONS = frozenset({"keras.metrics.binary_accuracy"})
_BINARY_CLASS = "keras.metrics.BinaryAccuracy"
_THRESHOLDS_CLASSES = frozenset({"keras.metrics.Precision", "keras.metrics.Recall"})

# Keras cross-entropy classes: (kind, the position of from_logits).
_LOSS_CLASSES = {"keras.losses.BinaryCrossentropy": ("binary", 0),
                 "keras.losses.BinaryFocalCrossentropy": ("binary", 3),
                 "keras.losses.CategoricalCrossentropy": ("categorical", 0),
                 "keras.losses.SparseCategoricalCrossentropy": ("categorical", 0),
                 "keras.losses.CategoricalFocalCrossentropy": ("categorical", 2)}
# Their functions: (kind, the position of from_logits).
_LOSS_FUNCTIONS = {"keras.losses.binary_crossentropy": ("binary", 2),
                   "keras.losses.binary_focal_crossentropy": ("binary", 5),
                   "keras.losses.categorical_crossentropy": ("categorical", 2),
                   "keras.losses.sparse_categorical_crossentropy": ("categorical", 2),
                   "keras.losses.categorical_focal_crossentropy": ("categorical", 4)}


class CompiledMetric(NamedTuple):
    node: cst.BaseExpression  # the element of metrics= / weighted_metrics=
    kind: str  # BINARY, ARGMAX, ACCURACY_BY_WIDTH or OTHER
    form: str  # STRING, CLASS (built in the element), FUNCTION, OBJECT (a name bound to one built elsewhere)
    threshold: Optional[cst.BaseExpression] = None  # BinaryAccuracy's threshold=, Precision/Recall's
    # thresholds= (None: the default, 0.5)
    starred: bool = False  # the call that built it has a * or ** argument (its threshold is not told)


def compiled_metrics(call: cst.Call, model: cst.BaseExpression, outputs, scope: ScopeInfo,
                     at: Optional[cst.CSTNode] = None) -> Optional[List[CompiledMetric]]:
    if len([a for a in call.args if a.keyword is None]) > 2 or any(a.star for a in call.args):
        return None
    elements = []
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value not in ("metrics", "weighted_metrics"):
            continue
        value = arg.value
        if isinstance(value, (cst.List, cst.Tuple)):
            if any(isinstance(e, cst.StarredElement) for e in value.elements):
                return None
            elements.extend(e.value for e in value.elements)
        elif not (isinstance(value, cst.Name) and value.value == "None"):
            elements.append(value)
    found = []
    width = _UNREAD
    for element in elements:
        if isinstance(element, cst.SimpleString):
            text = _text(element)
            if text in _ARGMAX_STRINGS:
                found.append(CompiledMetric(element, ARGMAX, STRING))
            elif isinstance(text, str) and text.lower() in ("accuracy", "acc"):
                width = outputs.final_width(model, scope, at) if width is _UNREAD else width
                kind = ACCURACY_BY_WIDTH if width is None else BINARY if width == 1 else ARGMAX
                found.append(CompiledMetric(element, kind, STRING))
            elif text == "binary_accuracy":
                found.append(CompiledMetric(element, BINARY, STRING))
            else:
                found.append(CompiledMetric(element, OTHER, STRING))
            continue
        if isinstance(element, cst.Call):
            found.append(_built(element, element, CLASS, outputs.resolver.qualname(element.func, scope)))
            continue
        if isinstance(element, (cst.Name, cst.Attribute)):
            if outputs.resolver.qualname(element, scope) in _BINARY_FUNCTIONS:
                found.append(CompiledMetric(element, BINARY, FUNCTION))
                continue
            made = outputs.made_by(element, scope, at=element) if isinstance(element, cst.Name) else None
            if made is not None:
                found.append(_built(element, made[0], OBJECT, outputs.resolver.qualname(made[0].func, made[1])))
                continue
        found.append(CompiledMetric(element, OTHER, OBJECT))
    return found


_UNREAD = object()


def _built(element: cst.BaseExpression, built: cst.Call, form: str, qualname: Optional[str]) -> CompiledMetric:
    """What a metric object built by ``built`` is: a binary accuracy (its ``threshold``), a
    precision or recall (its ``thresholds``; with ``top_k`` given it compares the top k: other),
    an argmax accuracy, or other."""
    starred = any(a.star for a in built.args)
    if qualname in _ARGMAX_CLASSES:
        return CompiledMetric(element, ARGMAX, form)
    if qualname == _BINARY_CLASS:
        return CompiledMetric(element, BINARY, form, argument(built, 2, "threshold"), starred)
    if qualname in _THRESHOLDS_CLASSES:
        top_k = argument(built, 1, "top_k")
        if top_k is None or (isinstance(top_k, cst.Name) and top_k.value == "None"):
            return CompiledMetric(element, THRESHOLDS, form, argument(built, 0, "thresholds"), starred)
    return CompiledMetric(element, OTHER, form)


def _text(node: cst.SimpleString):
    try:
        return node.evaluated_value
    except Exception:  # pragma: no cover - defensive
        return None


def logits_loss(expr: cst.BaseExpression, outputs, graphs, scope: ScopeInfo) -> Optional[str]:
    made = outputs.made_by(expr, scope)
    if made is not None:
        call, where = made
        qualname = outputs.resolver.qualname(call.func, where) or ""
        known = _LOSS_CLASSES.get(qualname)
        if known is not None:
            return known[0] if not any(a.star for a in call.args) \
                and _is_true(argument(call, known[1], "from_logits")) else None
        if qualname == "functools.partial" and call.args and call.args[0].keyword is None:
            inner = _LOSS_FUNCTIONS.get(outputs.resolver.qualname(call.args[0].value, where) or "")
            given = keyword(call, "from_logits")
            return inner[0] if inner is not None and given is not None and _is_true(given.value) else None
    if graphs is None or not isinstance(expr, (cst.Name, cst.Lambda, cst.Attribute)):
        return None
    if isinstance(expr, cst.Name):  # a name bound once to a lambda
        found = assigned(expr.value, scope)
        if found is not None and found.kind == ASSIGNED and isinstance(found.single_value, cst.Lambda):
            expr = found.single_value
    function = graphs.function_scope(expr, scope)
    if function is None:
        return None
    node = function.node
    if isinstance(node, cst.Lambda):
        params = [p.name.value for p in node.params.params]
        if len(params) != 2 or isinstance(node.params.star_arg, cst.Param) or node.params.star_kwarg is not None:
            return None
        for inner in graphs.model.nodes_in(function, "Call"):
            kind = _logits_of(inner, params[1], outputs, function)
            if kind is not None:
                return kind
        return None
    handed = outputs.logits_parameter(function)
    if handed is None or handed[0] != 1:
        return None
    return "binary" if handed[2].activation == "sigmoid" else "categorical"


def _logits_of(call: cst.Call, parameter: str, outputs, scope: ScopeInfo) -> Optional[str]:
    """The kind of a loss call taking ``parameter`` as its logits."""
    known = _LOSS_FUNCTIONS.get(outputs.resolver.qualname(call.func, scope) or "")
    if known is not None:
        predicted = argument(call, 1, "y_pred")
        if _is_true(argument(call, known[1], "from_logits")) and isinstance(predicted, cst.Name) \
                and predicted.value == parameter:
            return known[0]
        return None
    loss = outputs.logits_argument(call, scope)
    if loss is None or not (isinstance(loss.logits, cst.Name) and loss.logits.value == parameter):
        return None
    return "binary" if loss.activation == "sigmoid" else "categorical"


def _is_true(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


__all__ = ["CompiledMetric", "compiled_metrics", "logits_loss", "BINARY", "ARGMAX", "ACCURACY_BY_WIDTH", "THRESHOLDS",
           "OTHER",
           "STRING", "CLASS", "FUNCTION", "OBJECT"]
