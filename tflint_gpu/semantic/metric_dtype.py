"""Where a metric function combines its targets with its predictions before casting the targets.

Keras 2 (tf_keras 2.21: ``MeanMetricWrapper.update_state``) casts ``y_true`` and ``y_pred`` to the
metric's dtype (floatx, float32) before it calls a metric function given to ``compile(metrics=...)``;
Keras 3 (3.15: ``keras.src.metrics.reduction_metrics.MeanMetricWrapper``) calls it with the batch as the
data gave it. A ``keras.utils.Sequence``, generator or ``tf.data`` pipeline that yields float64 (or
integer) targets reaches ``y_true * y_pred`` as float64 times float32: ``TypeError: Input 'y' of 'Mul'
Op has type float32 that does not match type float64`` (NumPy arrays given to ``fit`` are converted to
floatx by Keras 3's array adapter and do not fail).

``label_mixes(function)`` follows, statement by statement in the function's own body, the names that hold
its first positional parameter (the targets) or its second (the predictions) through dtype-keeping
steps (subscripts, arithmetic with constants, reductions and element-wise functions such as
``backend.sum``, ``tf.reduce_mean``, ``K.abs``; the predictions also through a cast to floatx or
float32, of themselves or of a threshold of them: ``K.cast(K.greater(y_pred, t), K.floatx())``), and
gives the binary arithmetic (``+ - * / ** @ // %``) and the two-argument arithmetic calls (``tf.multiply``,
``K.maximum``...) whose one side holds the targets and the other the predictions. A
target name rebound to anything else (``y_true = K.cast(y_true, "float32")``) stops being followed: a
body that casts its targets first gives nothing.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

# Functions whose result has the dtype of their first argument.
_KEEPING = frozenset({
    "sum", "mean", "max", "min", "prod", "abs", "square", "sqrt", "exp", "log", "log1p", "clip", "clip_by_value",
    "reshape", "flatten", "batch_flatten", "transpose", "permute_dimensions", "expand_dims", "squeeze", "tile",
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "stop_gradient", "identity", "round",
    "negative", "pow", "repeat", "gather",
})
# Two-argument element-wise arithmetic: mixed dtypes raise like the operators do.
_ARITHMETIC = frozenset({"multiply", "add", "subtract", "divide", "truediv", "maximum", "minimum",
                         "squared_difference", "dot", "matmul", "batch_dot"})
_CASTS = frozenset({"cast", "convert_to_tensor", "constant"})
_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power, cst.MatrixMultiply, cst.FloorDivide,
              cst.Modulo)
_SKIPPED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_COMPARISONS = frozenset({"greater", "greater_equal", "less", "less_equal"})
TRUE, PRED, _PRED_BOOLEAN = "true", "pred", "pred-boolean"


def _callee(call: cst.Call) -> Optional[str]:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return None


def _positional(call: cst.Call) -> List[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def _floatx_text(expr: cst.BaseExpression) -> bool:
    """A dtype written as floatx or float32 (``backend.floatx()``, ``tf.float32``, ``"float32"``)."""
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value == "float32"
    if isinstance(expr, cst.Call):
        return _callee(expr) == "floatx" and not expr.args
    return isinstance(expr, cst.Attribute) and expr.attr.value == "float32"


class _Flow:
    def __init__(self, true: str, pred: str) -> None:
        self.names: Dict[str, str] = {true: TRUE, pred: PRED}
        self.mixes: List[cst.CSTNode] = []
        self._seen: Set[int] = set()

    def kind(self, expr: cst.BaseExpression) -> Optional[str]:
        """TRUE, PRED or None for what ``expr`` holds; records the mixes it makes."""
        if isinstance(expr, cst.Name):
            return self.names.get(expr.value)
        if isinstance(expr, cst.Subscript):
            return self.kind(expr.value)
        if isinstance(expr, cst.UnaryOperation):
            return self.kind(expr.expression)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _OPERATORS):
            return self._combine(expr, self.kind(expr.left), self.kind(expr.right))
        if isinstance(expr, cst.Call):
            name, args = _callee(expr), _positional(expr)
            if name in _ARITHMETIC and len(args) >= 2:
                return self._combine(expr, self.kind(args[0]), self.kind(args[1]))
            if not args:
                return None
            if name in _KEEPING:
                return self.kind(args[0])
            if name in _CASTS:
                dtype = args[1] if len(args) > 1 else next(
                    (a.value for a in expr.args if a.keyword is not None and a.keyword.value == "dtype"), None)
                return PRED if self.kind(args[0]) in (PRED, _PRED_BOOLEAN) and dtype is not None \
                    and _floatx_text(dtype) else None
            if name in _COMPARISONS and self.kind(args[0]) == PRED:
                return _PRED_BOOLEAN  # a thresholded prediction, cast back to floatx by the caller
        return None

    def _combine(self, node: cst.CSTNode, left: Optional[str], right: Optional[str]) -> Optional[str]:
        left, right = (k if k in (TRUE, PRED) else None for k in (left, right))
        if {left, right} == {TRUE, PRED}:
            if id(node) not in self._seen:
                self._seen.add(id(node))
                self.mixes.append(node)
            return PRED  # once the targets are cast, the predictions' dtype: what is mixed with it next
        return left or right

    def statement(self, node: cst.CSTNode) -> None:
        """Record the mixes anywhere in one simple statement, then bind its names."""
        self._expressions(node)
        if isinstance(node, cst.Assign):
            made = self.kind(node.value)
            for target in node.targets:
                self._bind(target.target, made)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            self._bind(node.target, self.kind(node.value) if isinstance(node, cst.AnnAssign) and node.value
                       else None)

    def _bind(self, target: cst.BaseExpression, made: Optional[str]) -> None:
        if isinstance(target, cst.Name):
            if made is None:
                self.names.pop(target.value, None)
            else:
                self.names[target.value] = made
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, None)

    def _expressions(self, node: cst.CSTNode) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, _SKIPPED):
                continue
            if isinstance(current, (cst.BinaryOperation, cst.Call)):
                self.kind(current)
            stack.extend(reversed(current.children))

    def block(self, body: cst.CSTNode) -> None:
        for statement in getattr(body, "body", ()):
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    self.statement(small)
            elif isinstance(statement, _SKIPPED):
                continue
            else:
                for field in ("test", "iter", "items"):
                    part = getattr(statement, field, None)
                    if isinstance(part, cst.CSTNode):
                        self._expressions(part)
                    elif isinstance(part, (list, tuple)):
                        for item in part:
                            self._expressions(item)
                if isinstance(statement, (cst.For,)):
                    self._bind(statement.target, None)
                for field in ("body", "orelse", "finalbody"):
                    part = getattr(statement, field, None)
                    if isinstance(part, cst.BaseSuite):
                        self.block(part)
                    elif part is not None and hasattr(part, "body"):
                        self.block(part.body if not isinstance(part.body, (list, tuple)) else part)
                for handler in getattr(statement, "handlers", ()):
                    self.block(handler.body)


def label_mixes(function: cst.FunctionDef) -> List[cst.CSTNode]:
    """The expressions of ``function``'s own body that combine its uncast targets (first positional
    parameter) with its predictions (second), in source order; [] for a function with fewer
    positional parameters."""
    params = [p for p in function.params.posonly_params + function.params.params]
    if len(params) < 2 or params[0].name.value in ("self", "cls"):
        return []
    flow = _Flow(params[0].name.value, params[1].name.value)
    flow.block(function.body)
    return flow.mixes
