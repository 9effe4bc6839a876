from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from tflint_gpu.semantic import values
from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.semantic.model import ASSIGNED, ITERATED
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged

_VARIABLE_LISTS = frozenset({"trainable_variables", "trainable_weights", "variables", "weights",
                             "non_trainable_variables", "non_trainable_weights"})
# Leaf names of Keras's own weights: a test on one of these (or a part of one) reads the same in Keras 3.
_LEAVES = ("kernel", "bias", "gamma", "beta", "moving_mean", "moving_variance", "embeddings", "recurrent_kernel",
           "depthwise_kernel", "pointwise_kernel")
# Default names of Keras layers (the scope a Keras 2 variable name starts with).
_LAYER_NAMES = ("dense", "conv", "batch_normalization", "layer_normalization", "embedding", "lstm", "gru",
                "bidirectional", "multi_head_attention", "normalization", "depthwise_conv", "separable_conv")


def _string(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _scoped(text: str, prefix: bool) -> bool:
    """Does a test for ``text`` in a variable name assume Keras 2's scoped ``layer/leaf:0`` names?"""
    if "/" in text or ":" in text:
        return True
    low = text.lower()
    if any(low in leaf for leaf in _LEAVES):
        return False
    return prefix or low.startswith(_LAYER_NAMES)


class Keras3ScopedVariableName(Rule):
    """A filter on `v.name` that assumes Keras 2's scoped names (`"dense_1/" in v.name`): silently wrong in Keras 3.

    ## What it does
    Finds string tests on the `name` of a variable taken from a Keras 3
    model's or layer's `trainable_variables`/`trainable_weights`/
    `variables`/`weights` (a `for` loop or a comprehension over one of them,
    of a Keras model object or `self` in a Keras 3 class) that read a layer
    scope or the `:0` suffix: `"dense_1/" in v.name`, `"encoder" in v.name`,
    `"batch_normalization" not in v.name`, `v.name.startswith("encoder")`,
    `v.name.endswith(":0")`, `v.name == "dense/kernel:0"`,
    `v.name.split("/")`, `v.name.split(":")`. Not reported: tests on a
    weight's own name (`"bias" in v.name`, `"kernel" in v.name`,
    `"moving" in v.name`, which read the same), tf_keras models, variables
    of unknown origin.

    ## Why is this bad?
    Keras 3 variables are named by their leaf only. Measured under
    TensorFlow 2.21 with Keras 3.15, a functional model with `Dense(name=
    "dense_1")` and `Dense(name="head")`: `[v.name for v in
    model.trainable_variables]` is `['kernel', 'bias', 'kernel', 'bias']`
    (tf_keras 2.21: `['dense_1/kernel:0', 'dense_1/bias:0', 'head/kernel:0',
    'head/bias:0']`); `v.path` is `'dense_1/kernel'`. So `"dense_1/" in
    v.name` selects 0 variables instead of 2, `v.name.startswith("head")` 0
    instead of 2, `":0"` 0 instead of 4, `"batch_normalization" in v.name` 0
    instead of 4 on a BatchNormalization model, and a subclassed model named
    `encoder` has `['kernel', 'bias']` (paths `encoder/proj/kernel`). No
    error is raised: weight decay skipping the normalization layers then
    decays every variable, a fine-tuning filter freezes nothing, a
    checkpoint map drops every entry.

    ## Example
    ```python
    decay = [v for v in model.trainable_variables if "batch_normalization" not in v.name]
    ```

    Use instead:
    ```python
    decay = [v for v in model.trainable_variables if "batch_normalization" not in v.path]
    ```

    ## Fix safety
    Unsafe: `v.name` → `v.path` for a membership, `startswith` or `==` test
    with a text without `:` (Keras 3's `path` is Keras 2's name without
    `:0`, measured for layers, nested and subclassed models; a scope from a
    `tf.name_scope` is not in it). It changes which variables the filter
    selects, on purpose. No fix for `:0` tests or `split`.
    Keras 3 only: under tf_keras a `ResourceVariable` has no `path`
    (AttributeError, executed).

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, tf_keras 2.21, CPU: the counts above.
    examples/TFG915 (`tflint-gpu verify --rule TFG915`): fixes-behaviour,
    the weight-decay filter selects every variable before, the kernels only
    after.
    """

    code = "TFG915"
    name = "keras3-scoped-variable-name"
    message = "Keras 3 variable names carry no layer scope"
    needs = ((".name",), ("variables", "weights"))
    fix_safety = Safety.UNSAFE
    migration = True

    def visit_Comparison(self, node: cst.Comparison, ctx) -> None:
        if len(node.comparisons) != 1:
            return
        target = node.comparisons[0]
        operator = target.operator
        if isinstance(operator, (cst.In, cst.NotIn)):
            text, name = _string(node.left), target.comparator
            prefix = False
        elif isinstance(operator, (cst.Equal, cst.NotEqual)):
            text, name = _string(target.comparator), node.left
            if text is None:
                text, name = _string(node.left), target.comparator
            prefix = True
        else:
            return
        if text is None or not _scoped(text, prefix) or not self._variable_name(name, ctx):
            return
        self._report(ctx, name, text, fixable=":" not in text)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method not in ("startswith", "endswith", "split", "rsplit") or not node.args:
            return
        text = _string(node.args[0].value)
        if text is None:
            return
        if method == "startswith":
            scoped = _scoped(text, True)
        elif method == "endswith":
            scoped = ":" in text or "/" in text
        else:
            scoped = text in ("/", ":")
        if not scoped or not self._variable_name(func.value, ctx):
            return
        self._report(ctx, func.value, text, fixable=method == "startswith" and ":" not in text)

    def _report(self, ctx, name: cst.Attribute, text: str, fixable: bool) -> None:
        if ctx.migration.guarded(name, ctx.scope):
            return
        fix = None
        if fixable:
            fix = Fix("Read `path` (the scoped name)", Safety.UNSAFE, {name.attr: cst.Name("path")})
        ctx.report(name, f"Keras 3 variable names carry no layer scope (`kernel`, not `dense/kernel:0`): this "
                         f"test for {text!r} selects differently, silently; `v.path` is the scoped name", fix)

    def _variable_name(self, expr: cst.BaseExpression, ctx) -> bool:
        if not (isinstance(expr, cst.Attribute) and expr.attr.value == "name" and isinstance(expr.value, cst.Name)):
            return False
        iterable = self._iterable(expr.value, ctx)
        if iterable is None:
            return False
        source, scope = iterable
        if not (isinstance(source, cst.Attribute) and source.attr.value in _VARIABLE_LISTS):
            return False
        owner = source.value
        cls = ctx.graphs.objects.self_class(owner, scope)
        if cls is not None:
            return not ctx.migration.legacy_env and ctx.graphs.keras_flavour(cls) == KERAS3
        return ctx.value_kind(owner, scope) == values.KERAS and ctx.migration.object_flavour(owner, scope) == KERAS3

    @staticmethod
    def _iterable(name: cst.Name, ctx) -> Optional[Tuple[cst.BaseExpression, object]]:
        """What ``name`` iterates: the iterable of a comprehension around it that binds it, or of its ``for``."""
        for parent in ctx.scope.ancestors(name):
            if isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                comp = parent.for_in
                while comp is not None:
                    if isinstance(comp.target, cst.Name) and comp.target.value == name.value:
                        return comp.iter, ctx.scope
                    comp = comp.inner_for_in
        found = ctx.binding(name.value, name)
        if found is None or found.kind != ASSIGNED or len(found.own_values) != 1:
            return None
        value = found.own_values[0]
        if isinstance(value, tuple) and value[0] == ITERATED and isinstance(value[1], cst.BaseExpression):
            return value[1], found.scope
        return None

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            inputs = tf.keras.Input((3,))
            hidden = tf.keras.layers.BatchNormalization()(tf.keras.layers.Dense(4, name="dense_1")(inputs))
            model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, name="head")(hidden))
            decay = [v for v in model.trainable_variables if "batch_normalization" not in v.name]
            head = [v for v in model.trainable_variables if v.name.startswith("head")]
            first = [v for v in model.trainable_variables if "dense_1/" in v.name]
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            inputs = tf.keras.Input((3,))
            hidden = tf.keras.layers.BatchNormalization()(tf.keras.layers.Dense(4, name="dense_1")(inputs))
            model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, name="head")(hidden))
            decay = [v for v in model.trainable_variables if "batch_normalization" not in v.path]
            head = [v for v in model.trainable_variables if v.path.startswith("head")]
            first = [v for v in model.trainable_variables if "dense_1/" in v.path]
            """,
            at=[(7, 79, "Keras 3 variable names carry no layer scope"),
                (8, 49, "Keras 3 variable names carry no layer scope"),
                (9, 64, "Keras 3 variable names carry no layer scope")],
            run="counts = np.array([len(decay), len(head), len(first)])",
            effect=CHANGES,
            note="measured: 6, 0, 0 before (every variable, none, none); 4, 2, 2 after",
        ),
        flagged(
            """
            import keras

            class Net(keras.Model):
                def decay_loss(self):
                    total = 0.0
                    for var in self.trainable_weights:
                        if var.name.endswith("kernel:0"):
                            total += keras.ops.sum(var ** 2)
                        layer = var.name.split("/")[0]
                    return total
            """,
            at=[(7, 16, "Keras 3 variable names carry no layer scope"),
                (9, 21, "Keras 3 variable names carry no layer scope")],
            note="no rewrite for :0 suffixes and split",
        ),
        clean(
            """
            import keras
            import tf_keras

            model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
            no_bias = [v for v in model.trainable_variables if "bias" not in v.name]
            kernels = [v for v in model.trainable_variables if "kernel" in v.name]
            scoped = [v for v in model.trainable_variables if v.path.startswith("dense")]
            old = tf_keras.Sequential([tf_keras.layers.Dense(1)])
            legacy = [v for v in old.trainable_variables if "dense/" in v.name]
            other = [t for t in tensors if "dense/" in t.name]
            for layer in model.layers:
                if layer.name.startswith("dense"):
                    pass
            """,
            note="tests on a weight's own name; path; tf_keras; unknown iterables; layer names (unchanged)",
        ),
    ]
