from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.semantic.target import NEW_OPTIMIZERS_TF
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

_SCHEDULE = "keras.optimizers.schedules.LearningRateSchedule"
# Ops that reject an integer tensor (measured, TF 2.21: InvalidArgumentError or TypeError on int64).
_FLOAT_ONLY = frozenset({
    "tensorflow.math.rsqrt", "tensorflow.rsqrt", "tensorflow.math.sqrt", "tensorflow.sqrt", "tensorflow.math.exp",
    "tensorflow.exp", "tensorflow.math.log", "tensorflow.log", "tensorflow.math.cos", "tensorflow.cos",
    "tensorflow.math.sin", "tensorflow.sin",
})
_WITH_FLOAT = frozenset({"tensorflow.math.pow", "tensorflow.pow", "tensorflow.math.minimum", "tensorflow.minimum",
                         "tensorflow.math.maximum", "tensorflow.maximum"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Power)


def _has_float(expr: cst.BaseExpression, ctx) -> bool:
    """Does the expression hold a float literal (``0.5``, ``self.warmup ** -1.5``)?"""
    return any(isinstance(node, cst.Float) for node in ctx.descendants(expr))


class ScheduleIntStep(Rule):
    """A learning-rate schedule doing float math on its `step`, which optimizers pass as an int64 tensor since TF 2.11.

    ## What it does
    Finds, in `__call__(self, step)` of a subclass of
    `keras.optimizers.schedules.LearningRateSchedule`, the step used
    uncast in an op that rejects integers: `tf.math.rsqrt(step)`,
    `tf.sqrt`, `tf.exp`, `tf.math.log`, `tf.cos`/`sin`, `tf.pow`/`minimum`/
    `maximum` with a float, and `step * 0.5`, `step ** -0.5`, `step + 1.0`
    (an operand holding a float literal). Reported once a schedule, at the
    first such use.

    ## Why is this bad?
    TF 2.0-2.10's optimizers called a schedule with `tf.cast(iterations,
    float32)`. From TF 2.11 (tf_keras's new optimizers, and Keras 3) the
    schedule gets `optimizer.iterations` itself, an int64 tensor, and the
    first training step fails: measured under TF 2.21, Keras 3 and tf_keras
    both raise `InvalidArgumentError: Value for attr 'T' of int64 is not in
    the list of allowed values` for `tf.math.rsqrt(step)` run eagerly,
    `TypeError` for it inside a `tf.function` (as in `fit`), and `TypeError`
    for `step * 0.5`. This is the Transformer tutorial's `CustomSchedule`
    as written before TF 2.11; the tutorial now casts.

    ## Example
    ```python
    class CustomSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            return tf.math.rsqrt(step) * 0.1
    ```

    Use instead:
    ```python
    class CustomSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            step = tf.cast(step, tf.float32)
            return tf.math.rsqrt(step) * 0.1
    ```

    ## Fix safety
    Safe: the fix inserts `step = tf.cast(step, tf.float32)` as the first
    statement (after a docstring), which is what the optimizers of TF 2.10
    and older passed: the schedule computes what it computed there. Not
    flagged: a step cast before use, integer arithmetic and comparisons
    (`step < warmup`, `step // 10`, `step / 2`, which gives float64),
    schedules of no Keras base, and projects whose target is TF 2.10 or
    older.

    ## Measured effect
    TF 2.21 CPU: the errors above on the first `apply_gradients`, under Keras
    3.15 and tf_keras 2.21 (examples/TFG603: fixes-error). TF 2.10 does not
    install on this Python: the boundary is TF 2.11's release note (the new
    optimizer), not measured here.
    """

    code = "TFG603"
    name = "schedule-int-step"
    message = "The schedule's `step` is an int64 tensor from TF 2.11: cast it before float math"
    needs = (("LearningRateSchedule",),)
    fix_safety = Safety.SAFE
    reads_index = ("Call", "BinaryOperation")

    def visit_Module(self, node: cst.Module, ctx) -> None:
        if not ctx.target.at_least(NEW_OPTIMIZERS_TF):
            return
        for scope in ctx.model.scopes:
            if scope.kind != "function" or scope.name != "__call__" or scope.parent is None \
                    or scope.parent.kind != "class":
                continue
            if not _is_schedule(scope.parent, ctx):
                continue
            function = scope.node
            params = function.params.params
            if len(params) < 2:
                continue
            step = params[1].name.value
            use = self._first_float_use(function, step, scope, ctx)
            if use is not None:
                ctx.report(use, f"`{step}` is the optimizer's int64 `iterations` from TF 2.11 (Keras 3 and "
                                f"tf_keras): this op rejects it (an error at the first step); cast it first",
                           _fix(function, step, scope, ctx))

    @staticmethod
    def _first_float_use(function: cst.FunctionDef, step: str, scope: ScopeInfo, ctx) -> Optional[cst.CSTNode]:
        found = []
        for call in ctx.nodes_in(scope, "Call"):
            qualname = ctx.qualname(call.func, scope)
            args = [a.value for a in call.args if a.keyword is None and not a.star]
            if qualname in _FLOAT_ONLY and args and _is_param(args[0], step, scope, ctx):
                found.append(call)
            elif qualname in _WITH_FLOAT and len(args) == 2 and (
                    (_is_param(args[0], step, scope, ctx) and _has_float(args[1], ctx))
                    or (_is_param(args[1], step, scope, ctx) and _has_float(args[0], ctx))):
                found.append(call)
        for operation in ctx.nodes_in(scope, "BinaryOperation"):
            if not isinstance(operation.operator, _ARITHMETIC):
                continue
            if (_is_param(operation.left, step, scope, ctx) and _has_float(operation.right, ctx)) or (
                    _is_param(operation.right, step, scope, ctx) and _has_float(operation.left, ctx)):
                found.append(operation)
        if not found:
            return None
        wanted = {id(n) for n in found}
        return next((n for n in ctx.descendants(function.body) if id(n) in wanted), found[0])  # source order


def _is_schedule(cls: ScopeInfo, ctx) -> bool:
    return ctx.migration.class_base(cls) == _SCHEDULE


def _is_param(expr: cst.BaseExpression, step: str, scope: ScopeInfo, ctx) -> bool:
    """Is ``expr`` the step parameter as it was passed (no rebinding reaches it)?"""
    if not isinstance(expr, cst.Name) or expr.value != step:
        return False
    found = ctx.assigned(step, expr, scope)
    return found is not None and found.scope is scope and all(
        isinstance(v, tuple) and v[0] == "param" for v in found.values)


def _fix(function: cst.FunctionDef, step: str, scope: ScopeInfo, ctx) -> Optional[Fix]:
    cast = ctx.module_expr("tensorflow", "cast", scope=scope)
    dtype = ctx.module_expr("tensorflow", "float32", scope=scope)
    if cast is None or dtype is None or not isinstance(function.body, cst.IndentedBlock):
        return None
    (cast_func, imports), (dtype_expr, _) = cast, dtype
    statement = cst.SimpleStatementLine([cst.Assign(
        [cst.AssignTarget(cst.Name(step))],
        cst.Call(cast_func, [cst.Arg(cst.Name(step)), cst.Arg(dtype_expr)]))])
    body = list(function.body.body)
    first = body[0]
    at = 1 if (isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1
               and isinstance(first.body[0], cst.Expr) and isinstance(first.body[0].value, cst.SimpleString)) else 0
    new_body = function.body.with_changes(body=body[:at] + [statement] + body[at:])
    return Fix(f"Cast `{step}` to float32 first", Safety.SAFE, {function.body: new_body}, imports)


ScheduleIntStep.cases = [
    flagged(
        """
        import tensorflow as tf

        class CustomSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
            def __init__(self, d_model, warmup_steps=4000):
                super().__init__()
                self.d_model = tf.cast(d_model, tf.float32)
                self.warmup_steps = warmup_steps

            def __call__(self, step):
                arg1 = tf.math.rsqrt(step)
                arg2 = step * (self.warmup_steps ** -1.5)
                return tf.math.rsqrt(self.d_model) * tf.math.minimum(arg1, arg2)

        optimizer = tf.keras.optimizers.Adam(CustomSchedule(128))
        v = tf.Variable(1.0)
        optimizer.apply_gradients([(tf.constant(1.0), v)])
        """,
        fixed="""
        import tensorflow as tf

        class CustomSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
            def __init__(self, d_model, warmup_steps=4000):
                super().__init__()
                self.d_model = tf.cast(d_model, tf.float32)
                self.warmup_steps = warmup_steps

            def __call__(self, step):
                step = tf.cast(step, tf.float32)
                arg1 = tf.math.rsqrt(step)
                arg2 = step * (self.warmup_steps ** -1.5)
                return tf.math.rsqrt(self.d_model) * tf.math.minimum(arg1, arg2)

        optimizer = tf.keras.optimizers.Adam(CustomSchedule(128))
        v = tf.Variable(1.0)
        optimizer.apply_gradients([(tf.constant(1.0), v)])
        """,
        at=[(10, 16, "`step` is the optimizer's int64 `iterations` from TF 2.11")],
        run="""
        value = v.numpy()
        """,
        effect=FIXES_ERROR,
        note="the Transformer tutorial's schedule as written before TF 2.11 (strutive07/transformer-tensorflow2.0)",
    ),
    flagged(
        '''
        import keras

        class Warmup(keras.optimizers.schedules.LearningRateSchedule):
            def __call__(self, it):
                """Linear warm-up."""
                return 1e-3 * it
        ''',
        fixed='''
        import keras
        import tensorflow as tf

        class Warmup(keras.optimizers.schedules.LearningRateSchedule):
            def __call__(self, it):
                """Linear warm-up."""
                it = tf.cast(it, tf.float32)
                return 1e-3 * it
        ''',
        at=[(6, 16, "`it` is the optimizer's int64 `iterations`")],
        run="""
        value = float(Warmup()(keras.ops.convert_to_tensor(5, dtype="int64")))
        """,
        effect=FIXES_ERROR,
        note="any parameter name; after the docstring; the import added",
    ),
    clean(
        """
        import tensorflow as tf

        class Cast(tf.keras.optimizers.schedules.LearningRateSchedule):
            def __call__(self, step):
                step = tf.cast(step, tf.float32)
                return tf.math.rsqrt(step) * 0.1

        class Integers(tf.keras.optimizers.schedules.LearningRateSchedule):
            def __call__(self, step):
                stage = step // 1000
                return tf.where(step < 100, 0.1, 0.01) + tf.cast(stage, tf.float32)

        class NotKeras:
            def __call__(self, step):
                return tf.math.rsqrt(step)

        class Castless(tf.keras.optimizers.schedules.LearningRateSchedule):
            def __call__(self, step):
                s = tf.cast(step, tf.float32)
                return tf.math.rsqrt(s) + s * 0.5
        """,
        note="cast first; integer math and comparisons; no Keras base; cast into another name",
    ),
]
