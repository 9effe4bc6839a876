from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged

_GATHER = "tensorflow.gather"  # tf.gather, tf.compat.v1.gather (normalized)


def _last_name(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def _plausible_validate_indices(expr: cst.BaseExpression) -> bool:
    """A value plausibly meant as ``validate_indices``, or one that gathers along
    axis 0 as intended (the literal 0)."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return True
    if isinstance(expr, cst.Integer) and expr.evaluated_value == 0:
        return True
    name = _last_name(expr)
    return name is not None and "valid" in name.lower()


class GatherPositionalValidateIndices(Rule):
    """`tf.gather(params, indices, 1)`: the third positional argument is `validate_indices`, not `axis`.

    ## What it does
    Finds `tf.gather` (and `tf.compat.v1.gather`) called with exactly three
    positional arguments and no `axis=`, where the third is not `True`,
    `False`, `None`, `0` or a name that speaks of validation
    (`validate_indices`, `validate`).

    ## Why is this bad?
    `tf.gather`'s signature is `(params, indices, validate_indices=None,
    axis=None, batch_dims=0, name=None)` (`tf.compat.v1.gather`: the same
    first three). The third positional argument is the deprecated
    `validate_indices`, which has no effect, so the call gathers along axis 0
    whatever the number says. Measured under TensorFlow 2.21, for `x =
    tf.reshape(tf.range(9), (3, 3))`: `tf.gather(x, [1], 1)` is `[[3, 4, 5]]`
    (row 1), `tf.gather(x, [1], axis=1)` is `[[1], [4], [7]]` (column 1);
    `-1` also gives row 1. No error and no warning in eager code; inside a
    `tf.function` only a deprecation log line ("calling gather with
    validate_indices is deprecated"). NumPy's `np.take(a, indices, 1)` and
    `tf.experimental.numpy.take` do take `axis` third: code ported from them
    silently gathers rows.

    ## Example
    ```python
    cols = tf.gather(features, [0, 2], 1)
    ```

    Use instead:
    ```python
    cols = tf.gather(features, [0, 2], axis=1)
    ```

    ## Fix safety
    Unsafe: the third argument becomes `axis=`, which changes the result (the
    point of the fix: it gathers along the axis the code names). Not flagged:
    `tf.gather(x, i, 0)` (axis 0 is what happens anyway), a bool or `None`
    (plausibly meant as `validate_indices`), a call that also passes `axis`
    (by keyword or fourth positionally: then the third really is
    `validate_indices`, harmless), `*args`.

    ## Measured effect
    TensorFlow 2.21, CPU: the values above. examples/TFG905 (`tflint-gpu
    verify --device cpu --size small --rule TFG905`): fixes-behaviour, the
    columns of 3 classes out of softmax probabilities, shape `(64, 3)` after
    the fix, where the original returned the rows of 3 samples, `(3, 10)`.
    """

    code = "TFG905"
    name = "gather-positional-validate-indices"
    message = "The third positional argument of `tf.gather` is `validate_indices`, not `axis`"
    needs = (("gather",),)
    fix_safety = Safety.UNSAFE

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if len(node.args) < 3 or any(a.star for a in node.args):
            return
        positional = [a for a in node.args if a.keyword is None]
        if len(positional) != 3:
            return
        if any(a.keyword is not None and a.keyword.value in ("axis", "validate_indices") for a in node.args):
            return
        third = positional[2]
        if _plausible_validate_indices(third.value):
            return
        if ctx.call_name(node) != _GATHER:
            return
        new = third.with_changes(keyword=cst.Name("axis"),
                                 equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                       whitespace_after=cst.SimpleWhitespace("")))
        ctx.report(third, "The third positional argument of `tf.gather` is `validate_indices`, not `axis`: "
                          "this gathers along axis 0",
                   Fix("Pass it as `axis=`", Safety.UNSAFE, {third: new}))

    cases = [
        flagged(
            """
            import tensorflow as tf

            x = tf.reshape(tf.range(9), (3, 3))
            column = tf.gather(x, [1], 1)
            last = tf.compat.v1.gather(x, [0, 2], -1, name="last")

            @tf.function
            def pick(t, axis):
                return tf.gather(t, [0], axis)

            picked = pick(x, 1)
            """,
            fixed="""
            import tensorflow as tf

            x = tf.reshape(tf.range(9), (3, 3))
            column = tf.gather(x, [1], axis=1)
            last = tf.compat.v1.gather(x, [0, 2], axis=-1, name="last")

            @tf.function
            def pick(t, axis):
                return tf.gather(t, [0], axis=axis)

            picked = pick(x, 1)
            """,
            at=[(4, 28, "The third positional argument of `tf.gather` is `validate_indices`"),
                (5, 39, "The third positional argument"),
                (9, 30, "The third positional argument")],
            effect=CHANGES,
            note="rows before ([[3, 4, 5]]), columns after ([[1], [4], [7]]); a parameter named axis",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            x = tf.reshape(tf.range(9), (3, 3))
            a = tf.gather(x, [1], 0)
            b = tf.gather(x, [1], True)
            c = tf.gather(x, [1], None, 1)
            d = tf.gather(x, [1], validate_indices, axis=1)
            e = tf.gather(x, [1], axis=1)
            f = tf.experimental.numpy.take(x, [1], 1)
            g = np.take(np.eye(3), [1], 1)
            h = tf.gather_nd(x, [[1]], 1)
            i = tf.gather(*args)
            j = tf.gather(x, [1], self.validate)
            """,
            note="axis 0 anyway; a bool; axis given; take() and gather_nd() take axis/batch_dims third",
        ),
        clean(
            """
            import tensorflow as tf

            def gather(a, b, c):
                return a

            y = gather(x, [1], 1)
            z = strategy.gather(values, 1, 2)
            """,
            note="a function of the file's own, another object's gather",
        ),
    ]
