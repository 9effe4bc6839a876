from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import is_dtype
from tflint_gpu.semantic.names import ordinal, short_name
from tflint_gpu.rules.base import Rule, clean, flagged



def _table():
    from tflint_gpu.semantic.migration_table import table

    return table()


class TfPositionalNameOrKeepdims(Rule):
    """A dtype passed by position where a TF op's next parameter is `name` or `keepdims`: `tf.sqrt(x, tf.float32)`.

    ## What it does
    Finds calls of TensorFlow ops with a dtype (`tf.float32`, `"float32"`,
    `np.float32`...) or a number passed by position where the op's parameter
    is `name` (`tf.sqrt(x, tf.float32)`, `tf.exp(x, 1)`,
    `tf.nn.relu(x, tf.float16)`), and with a dtype or a string passed by
    position where it is `keepdims` (`tf.reduce_mean(x, 0, tf.float32)`, as
    NumPy's `np.mean(a, axis, dtype)` reads). The ops and positions are
    derived, not typed: `scripts/derive_migration.py` calls every public
    function of `tf`, `tf.math`, `tf.nn`, `tf.linalg`, `tf.signal`,
    `tf.image`, `tf.strings`, `tf.random`, `tf.dtypes` and `tf.bitwise` that
    has such a parameter, with a 2x2 float tensor (or the default) before it
    and a dtype at its place, eagerly and traced, against the same call with
    the parameter by keyword: 270 of the 577 tried ran their baseline and are
    recorded; the others are not reported.

    ## Why is this bad?
    Measured (TF 2.21, CPU), over those entries: for 251 `name` positions
    the call runs eagerly (the name is ignored there) and raises `TypeError:
    expected string or bytes-like object, got 'DType'` once the code is
    traced (`tf.function`, a Keras `call`, `Dataset.map`): code tested
    eagerly breaks in production. For the 18 `keepdims` positions
    (`tf.reduce_*`, `tf.norm`, `tf.math.count_nonzero`) a dtype is truthy:
    the reduced axis is kept and the result's shape changes silently (`(2,)`
    becomes `(1, 2)`), eagerly and traced. The dtype intended is not
    applied in either case.

    ## Example
    ```python
    y = tf.sqrt(x, tf.float32)
    m = tf.reduce_mean(x, 0, tf.float32)
    ```

    Use instead:
    ```python
    y = tf.sqrt(tf.cast(x, tf.float32))
    m = tf.reduce_mean(tf.cast(x, tf.float32), 0)
    ```

    ## Fix safety
    No fix: what the dtype was meant for (a cast of the input or of the
    result) cannot be told from the call.

    ## Measured effect
    `examples/TFG919` (a `tf.function` normalising a batch with
    `tf.sqrt(var, tf.float32)`): fixes-error, `TypeError` before, runs after.

    On real code: 1 finding on the checked-out projects, true (a word2vec
    notebook's `tf.sqrt(..., tf.float32)` in an eager evaluation function:
    ignored there, a TypeError once traced); keras/src, tf_keras/src and the
    reliability corpus: 0.
    """

    code = "TFG919"
    name = "tf-positional-name-or-keepdims"
    message = "a dtype passed by position where the TF op's parameter is `name` or `keepdims`"
    needs = (("tensorflow",), ("float", "int", "bool", "complex", "string", "half", "double"))
    fix_safety = None

    def visit_Call(self, node: cst.Call, ctx) -> None:
        positional = []
        for arg in node.args:
            if arg.star:
                return
            if arg.keyword is None:
                positional.append(arg)
        if len(positional) < 2:
            return
        qualname = ctx.call_name(node)
        if qualname is None or not qualname.startswith("tensorflow."):
            return
        for entry in _table().tf_positional_traps(qualname):
            position = entry["position"]
            if position >= len(positional):
                continue
            value = positional[position].value
            parameter = entry["parameter"]
            outcome = entry["outcome"]
            what = self._misplaced(value, parameter, ctx)
            if what is None:
                continue
            op = short_name(qualname)
            if parameter == "name" and outcome["traced"].get("breaks"):
                advice = "cast with `tf.cast` where the dtype is meant" if "dtype" in what \
                    else "pass it by keyword to the parameter meant"
                ctx.report(value, f"the {ordinal(position)} positional parameter of `{op}` is `name`: {what} "
                                  f"there is ignored eagerly and raises TypeError once traced; {advice}")
            elif parameter == "keepdims" and outcome.get("shape_changed"):
                ctx.report(value, f"the {ordinal(position)} positional parameter of `{op}` is `keepdims`: {what} "
                                  f"there is true, so the reduced axis is kept (the shape changes) and no dtype "
                                  f"is applied; cast the input instead")

    @staticmethod
    def _misplaced(value: cst.BaseExpression, parameter: str, ctx) -> Optional[str]:
        if isinstance(value, cst.SimpleString):
            text = value.evaluated_value
            if isinstance(text, str) and is_dtype("tensorflow." + text):
                return "a dtype name"
            return "a string" if parameter == "keepdims" else None
        if parameter == "name" and isinstance(value, (cst.Integer, cst.Float)):
            return "a number"
        qualname = ctx.qualname(value)
        if qualname is not None and is_dtype(qualname):
            return "a dtype"
        return None



TfPositionalNameOrKeepdims.cases = [
    flagged(
        """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def normalize(x):
            mean = tf.reduce_mean(x, 0, tf.float32)
            return (x - mean) / tf.sqrt(tf.math.reduce_variance(x, 0) + 1e-6, tf.float32)

        y = tf.exp(tf.constant([1.0]), 1)
        z = tf.nn.relu(tf.constant([1.0]), np.float16)
        w = tf.math.reduce_sum(tf.ones((2, 2)), 1, "float32")
        """,
        at=[(6, 33, "the third positional parameter of `tf.reduce_mean` is `keepdims`: a dtype there is true"),
            (7, 71, "the second positional parameter of `tf.sqrt` is `name`: a dtype there is ignored eagerly"),
            (9, 32, "the second positional parameter of `tf.exp` is `name`: a number"),
            (10, 36, "the second positional parameter of `tf.nn.relu` is `name`: a dtype"),
            (11, 44, "the third positional parameter of `tf.math.reduce_sum` is `keepdims`: a dtype name")],
    ),
    clean(
        """
        import numpy as np
        import tensorflow as tf

        x = tf.ones((2, 2))
        a = tf.reduce_sum(x, 1, True)
        b = tf.sqrt(x, "root")
        c = tf.cast(x, tf.float32)
        d = tf.ones_like(x, tf.int32)
        e = tf.reduce_mean(x, 0, keepdims=False)
        f = np.mean(np.ones(3), 0, np.float32)
        g = tf.constant(1.0, tf.float32)
        h = tf.sqrt(x, name=None)
        """,
        note="a bool keepdims, a real name, ops whose second parameter is the dtype, NumPy, keywords",
    ),
]
