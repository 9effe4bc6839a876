from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import keyword, without_args
from tflint_gpu.semantic.names import short_name
from tflint_gpu.rules.base import FIXES_ERROR, IDENTICAL, Fix, Rule, Safety, clean, flagged

# TensorFlow functions that raise TypeError on `device=` (measured, TF 2.21; tf.compat.v1 too).
_RAISES = frozenset("tensorflow." + name for name in (
    "constant", "zeros", "ones", "fill", "convert_to_tensor", "zeros_like", "ones_like", "range", "eye",
    "identity", "cast", "linspace", "random.normal", "random.uniform", "random.truncated_normal",
))
# tf.Variable takes **kwargs and drops any it does not know: `device=` is silently ignored.
_IGNORES = frozenset({"tensorflow.Variable"})


def _pure(expr: cst.BaseExpression) -> bool:
    """A device expression whose evaluation order does not matter: a string, a name, an attribute chain."""
    if isinstance(expr, (cst.SimpleString, cst.Name)):
        return True
    if isinstance(expr, cst.Attribute):
        return _pure(expr.value)
    return False


class DeviceArgumentToTensorCreator(Rule):
    """`tf.constant(x, device=...)`: TensorFlow's tensor creators take no `device=` (TypeError; tf.Variable ignores it).

    ## What it does
    Finds `device=` passed to `tf.constant`, `tf.zeros`, `tf.ones`, `tf.fill`,
    `tf.convert_to_tensor`, `tf.zeros_like`, `tf.ones_like`, `tf.range`,
    `tf.eye`, `tf.identity`, `tf.cast`, `tf.linspace`, `tf.random.normal`,
    `tf.random.uniform`, `tf.random.truncated_normal` (also as
    `tf.compat.v1.*`), and to `tf.Variable`. It is PyTorch's spelling
    (`torch.tensor(x, device="cuda")`); TensorFlow places ops with `with
    tf.device(...):`.

    ## Why is this bad?
    Measured under TensorFlow 2.21: each of the functions above raises
    `TypeError: Got an unexpected keyword argument 'device'` (`tf.constant`:
    `constant() got an unexpected keyword argument 'device'`), eagerly and
    inside a `tf.function`. `tf.Variable` accepts any keyword and drops the
    ones it does not know: `tf.Variable(1.0, device="/device:XYZ:0")` runs
    and the variable is on the default device (`CPU:0` here): the placement
    the code asks for silently does not happen; the variable goes wherever
    it would go without the argument.

    ## Example
    ```python
    table = tf.constant(values, device="/cpu:0")
    ```

    Use instead:
    ```python
    with tf.device("/cpu:0"):
        table = tf.constant(values)
    ```

    ## Fix safety
    Unsafe. Where the call is the whole value of a statement of its own
    (`x = tf.constant(v, device=d)`, `tf.fill(...)` as an expression
    statement) and the device is a string, a name or an attribute chain, the
    statement is wrapped in `with tf.device(d):` and `device=` is dropped;
    the call's other arguments then run on that device too. For the creators
    this fixes a TypeError; for `tf.Variable` it changes where the variable
    lives (the point; the values are the same). No fix elsewhere (the call
    inside a larger expression, a lambda, a one-line block).
    Executed under tf_keras too (the fix-execution test's Keras 2 run): the
    same values.

    ## Measured effect
    TensorFlow 2.21, CPU: the errors above. examples/TFG906 (`tflint-gpu
    verify --device cpu --size small --rule TFG906`): fixes-error, `TypeError:
    constant() got an unexpected keyword argument 'device'` before; after the
    fix the table is made inside `tf.device("/cpu:0")` and the lookup runs.
    """

    code = "TFG906"
    name = "device-argument-to-tensor-creator"
    message = "TensorFlow's tensor creators take no `device=`: use `with tf.device(...)`"
    needs = (("device",),)
    fix_safety = Safety.UNSAFE
    reads_index = ("SimpleStatementLine",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        device = keyword(node, "device")
        if device is None:
            return
        qualname = ctx.call_name(node)
        if qualname in _RAISES:
            short = short_name(qualname)
            message = f"`{short}` takes no `device=` (TypeError): create it inside `with tf.device(...)`"
        elif qualname in _IGNORES:
            message = "`tf.Variable` silently ignores `device=`: create it inside `with tf.device(...)`"
        else:
            return
        ctx.report(device, message, self._fix(node, device, ctx))

    def _fix(self, node: cst.Call, device: cst.Arg, ctx) -> Optional[Fix]:
        if not _pure(device.value) or any(a.star for a in node.args):
            return None
        statement = next((s for s in ctx.nodes_in(ctx.scope, "SimpleStatementLine")
                          if len(s.body) == 1 and _value(s.body[0]) is node), None)
        if statement is None:
            return None
        spelled = ctx.module_expr("tensorflow", "device")
        if spelled is None:
            return None
        func, imports = spelled
        inner = statement.body[0]
        replaced = _replace_value(inner, without_args(node, [device]))
        wrapped = cst.With(
            items=[cst.WithItem(cst.Call(func, [cst.Arg(device.value)]))],
            body=cst.IndentedBlock([statement.with_changes(body=[replaced], leading_lines=[])]),
            leading_lines=statement.leading_lines,
        )
        return Fix("Create it inside `with tf.device(...)`", Safety.UNSAFE, {statement: wrapped}, imports)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            values = np.arange(6, dtype=np.float32)
            device = "/cpu:0"

            def tables():
                # the lookup tables stay on the host
                table = tf.constant(values, device="/cpu:0")
                ids: tf.Tensor = tf.range(3, device=device)
                return tf.gather(table, ids)

            picked = tables()
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            values = np.arange(6, dtype=np.float32)
            device = "/cpu:0"

            def tables():
                # the lookup tables stay on the host
                with tf.device("/cpu:0"):
                    table = tf.constant(values)
                with tf.device(device):
                    ids: tf.Tensor = tf.range(3)
                return tf.gather(table, ids)

            picked = tables()
            """,
            at=[(9, 33, "`tf.constant` takes no `device=` (TypeError)"),
                (10, 34, "`tf.range` takes no `device=` (TypeError)")],
            effect=FIXES_ERROR,
        ),
        flagged(
            """
            import tensorflow as tf

            counter = tf.Variable(0.0, trainable=False, device="/cpu:0")
            counter.assign_add(2.0)
            """,
            fixed="""
            import tensorflow as tf

            with tf.device("/cpu:0"):
                counter = tf.Variable(0.0, trainable=False)
            counter.assign_add(2.0)
            """,
            at=[(3, 45, "`tf.Variable` silently ignores `device=`")],
            effect=IDENTICAL,
            note="the same values; on a GPU machine the variable moves to the device asked for",
            keras2=True,
        ),
        flagged(
            """
            import tensorflow as tf

            total = tf.reduce_sum(tf.zeros([3], device="/gpu:0"))
            make = lambda: tf.ones([2], device="/cpu:0")
            if ready: x = tf.fill([2], 1.0, device="/cpu:0")
            y = tf.convert_to_tensor(v, device=pick_device())
            """,
            at=[(3, 37, "`tf.zeros` takes no `device=`"),
                (4, 29, "`tf.ones` takes no `device=`"),
                (5, 33, "`tf.fill` takes no `device=`"),
                (6, 29, "`tf.convert_to_tensor` takes no `device=`")],
            note="no fix: inside an expression, a lambda, a one-line block, a device computed by a call",
        ),
        clean(
            """
            import tensorflow as tf
            import torch

            with tf.device("/cpu:0"):
                table = tf.constant([1.0, 2.0])
            t = torch.zeros(3, device="cuda")

            def constant(x, device=None):
                return x

            c = constant(1.0, device="/cpu:0")
            ds = tf.data.experimental.prefetch_to_device("/gpu:0")
            """,
            note="tf.device; torch; a function of the file's own",
        ),
    ]


def _value(statement: cst.BaseSmallStatement) -> Optional[cst.BaseExpression]:
    if isinstance(statement, (cst.Assign, cst.AnnAssign, cst.Expr)):
        return statement.value
    return None


def _replace_value(statement, value: cst.BaseExpression):
    return statement.with_changes(value=value)
