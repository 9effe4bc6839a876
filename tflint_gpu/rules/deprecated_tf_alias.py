from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.names import short_name
from tflint_gpu.semantic.api import keyword
from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.semantic.model import dotted_name
from tflint_gpu.semantic.testcode import warning_expected
from tflint_gpu.rules.base import IDENTICAL, Fix, Rule, Safety, clean, flagged

# tf.<module>.experimental.X that are the very same object as tf.<module>.X (measured: `is`, TF 2.21,
# also under tf.compat.v1 / tf.compat.v2). set_memory_growth, get_memory_info... have no core name.
_ALIASES = {
    "tensorflow.config.experimental." + name: "tensorflow.config." + name
    for name in ("list_physical_devices", "list_logical_devices", "get_visible_devices", "set_visible_devices")
}
_ALIASES.update({
    "tensorflow.data.experimental." + name: "tensorflow.data." + name
    for name in ("AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "ThreadingOptions")
})
_ALIAS_MODULES = {"tensorflow.config.experimental", "tensorflow.data.experimental"}


def _is_bool(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value in ("True", "False")


class DeprecatedTfAlias(Rule):
    """A deprecated spelling with a current name: `tf.data.experimental.AUTOTUNE`, `experimental_relax_shapes=`...

    ## What it does
    Finds deprecated spellings that still run and have an exact current name:

    * `tf.config.experimental.list_physical_devices`, `list_logical_devices`,
      `get_visible_devices`, `set_visible_devices` → `tf.config.*`;
    * `tf.data.experimental.AUTOTUNE`, `INFINITE_CARDINALITY`,
      `UNKNOWN_CARDINALITY`, `ThreadingOptions` → `tf.data.*` (as an attribute
      chain, through `import tensorflow.data.experimental as x`, or imported:
      `from tensorflow.data.experimental import AUTOTUNE`);
    * `tf.function(experimental_compile=...)` → `jit_compile=`,
      `tf.function(experimental_relax_shapes=...)` → `reduce_retracing=`;
    * Keras 3 `LeakyReLU(alpha=...)` → `negative_slope=`;
    * Keras 3 `InputLayer(input_shape=...)` → `shape=`.

    Only names that are the same object under both spellings are reported:
    `tf.config.experimental.set_memory_growth`, `get_memory_info`,
    `set_virtual_device_configuration`, `enable_op_determinism`... exist only
    under `experimental` and are not. `LeakyReLU(alpha=)` and
    `InputLayer(input_shape=)` are reported in Keras 3 code only: tf_keras
    (Keras 2) has no `negative_slope` and no `shape`. An alias in
    the fallback branch of a TensorFlow version test (`else:` of `if
    TF_VERSION >= (2, 4):`) or of an `except AttributeError:` is code for
    releases without the current name (`tf.data.AUTOTUNE` came in TF 2.4):
    not reported. Nor is an alias whose current name the project's target
    lacks (`tf.data.AUTOTUNE` before TF 2.4, `reduce_retracing=` before 2.9,
    `jit_compile=` before 2.5: the first releases are derived by
    `scripts/derive_api_since.py`, each release installed and asked): there
    the old name is the only one, and the fix would break the import.

    ## Why is this bad?
    The old names are deprecated and will go, as `lr=` and
    `mixed_precision.experimental` went in Keras 3; meanwhile they log
    deprecation warnings. Measured under TensorFlow 2.21, Keras 3.15, tf_keras
    2.21:
    * `tf.config.experimental.list_physical_devices is
      tf.config.list_physical_devices` (and the other three), `True`;
      `tf.data.experimental.AUTOTUNE is tf.data.AUTOTUNE` (and the other
      three), `True`; the same under `tf.compat.v1` and `tf.compat.v2`.
    * `tf.function(f, experimental_compile=True)` logs `experimental_compile is
      deprecated, use jit_compile instead` and compiles with XLA, as
      `jit_compile=True` does; both given: `ValueError: Cannot specify both
      'experimental_compile' and 'jit_compile'`.
      `tf.function(f, experimental_relax_shapes=True)` logs
      `experimental_relax_shapes is deprecated, use reduce_retracing instead`
      and sets `reduce_retracing=True`: a function called with 5 input
      lengths traces 2 times with either (5 times without).
    * Keras 3 `LeakyReLU(alpha=0.1)` warns `UserWarning: Argument alpha is
      deprecated. Use negative_slope instead.` and computes what
      `negative_slope=0.1` computes (`[-0.1, 2.]` for `[-1., 2.]`; the default
      is 0.3 either way). tf_keras 2.21 `LeakyReLU(negative_slope=0.1)`:
      `TypeError: Keyword argument not understood`.
    * Keras 3 `InputLayer(input_shape=(5,))` warns `UserWarning: Argument
      input_shape is deprecated. Use shape instead.` and makes the
      layer `shape=(5,)` makes (the same `batch_shape`, output shape and
      dtype); given both, `input_shape` wins. tf_keras 2.21
      `InputLayer(shape=(5,))`: `ValueError: Unrecognized keyword arguments`.

    ## Example
    ```python
    gpus = tf.config.experimental.list_physical_devices("GPU")
    ds = ds.map(parse, num_parallel_calls=tf.data.experimental.AUTOTUNE)

    @tf.function(experimental_relax_shapes=True)
    def step(x):
        ...
    ```

    Use instead:
    ```python
    gpus = tf.config.list_physical_devices("GPU")
    ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE)

    @tf.function(reduce_retracing=True)
    def step(x):
        ...
    ```

    ## Fix safety
    Safe: the same object or the same setting under its current name. The
    attribute chain is rewritten in place (`tf.data.experimental.AUTOTUNE` →
    `tf.data.AUTOTUNE`, `tf.compat.v1.config.experimental.X` →
    `tf.compat.v1.config.X`), keeping the file's spelling; another spelling
    (`experimental.AUTOTUNE` after `from tensorflow.data import experimental`)
    becomes the file's name for TensorFlow (`tf.data.AUTOTUNE`, adding `import
    tensorflow as tf` if needed). `from tensorflow.data.experimental import
    AUTOTUNE` becomes `from tensorflow.data import AUTOTUNE` when every name it
    imports has a core name (else no fix). `experimental_compile=` is renamed
    unless `jit_compile=` is also given (that raises: reported, no fix);
    `experimental_relax_shapes=True/False` is renamed when it is a literal and
    `reduce_retracing=` is not also given (any true value sets
    `reduce_retracing=True`). `alpha=` → `negative_slope=` is unsafe: the
    fixed layer is the same under Keras 3, but the spelling no longer runs
    under Keras 2 (TensorFlow ≤ 2.15's `tf.keras`, `tf_keras`): code that must
    run under both should keep `alpha=`. No fix when both are given (`alpha`
    wins). `input_shape=` → `shape=` likewise: unsafe (Keras 3 only), and
    not when `shape=` is also given. Neither is reported where a test expects
    the warning (`with self.assertWarns(UserWarning):`, `pytest.warns`).
    Executed under tf_keras too (the fix-execution test's Keras 2 run): the
    TensorFlow renames give identical results there; `negative_slope=` does not
    run there (TypeError), as said above.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the identities and warnings above; the
    fixed code computes identical values (tests/test_fix_execution.py runs
    each case). examples/TFG904 (`tflint-gpu verify --device cpu --size small
    --rule TFG904`): equivalent, the same values and the same traces (18/18),
    without the deprecation warnings; the times differ by noise only (the
    names are the same objects; the measurement below).
    """

    code = "TFG904"
    name = "deprecated-tf-alias"
    message = "A deprecated alias: use the current name"
    needs = (("experimental", "LeakyReLU", "InputLayer"),)
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        if node.attr.value not in ("list_physical_devices", "list_logical_devices", "get_visible_devices",
                                   "set_visible_devices", "AUTOTUNE", "INFINITE_CARDINALITY",
                                   "UNKNOWN_CARDINALITY", "ThreadingOptions"):
            return
        qualname = ctx.qualname(node)
        if qualname not in _ALIASES or ctx.migration.version_guarded(node, ctx.scope) \
                or ctx.migration.except_fallback(node, ctx.scope):
            return  # code for releases without the current name, on purpose
        new = _ALIASES[qualname]
        if not ctx.target_has(new):
            return  # the project's TensorFlow has no current name yet (tf.data.AUTOTUNE came in 2.4)
        fix = None
        if isinstance(node.value, cst.Attribute) and node.value.attr.value == "experimental":
            fix = Fix(f"Use `{short_name(new)}`", Safety.SAFE, {node: node.with_changes(value=node.value.value)})
        else:
            spelled = ctx.module_expr("tensorflow", new[len("tensorflow."):])
            if spelled is not None:
                expr, imports = spelled
                fix = Fix(f"Use `{short_name(new)}`", Safety.SAFE, {node: expr}, imports)
        ctx.report(node, f"`{short_name(qualname)}` is a deprecated alias of `{short_name(new)}`", fix)

    def visit_ImportFrom(self, node: cst.ImportFrom, ctx) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module)
        if module is None or not module.endswith(".experimental"):
            return
        from tflint_gpu.semantic.names import normalize

        target = normalize(module)
        if target not in _ALIAS_MODULES:
            return
        names = [dotted_name(alias.name) for alias in node.names]
        aliased = [n for n in names if f"{target}.{n}" in _ALIASES and ctx.target_has(_ALIASES[f"{target}.{n}"])]
        if not aliased:
            return
        fix = None
        if len(aliased) == len(names) and isinstance(node.module, cst.Attribute):
            fix = Fix(f"Import from `{module[:-len('.experimental')]}`", Safety.SAFE,
                      {node.module: node.module.value})
        listed = ", ".join(f"`{n}`" for n in aliased)
        ctx.report(node, f"Deprecated aliases imported from `{short_name(target)}`: import {listed} from "
                         f"`{short_name(target[:-len('.experimental')])}`", fix)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if not any(a.keyword is not None for a in node.args):
            return
        qualname = ctx.call_name(node)
        if qualname == "tensorflow.function":
            self._function(node, ctx)
        elif qualname == "keras.layers.LeakyReLU":
            self._leaky_relu(node, ctx)
        elif qualname == "keras.layers.InputLayer":
            self._input_layer(node, ctx)

    def _function(self, node: cst.Call, ctx) -> None:
        compile_arg = keyword(node, "experimental_compile")
        if compile_arg is not None and ctx.target_has("tensorflow.function(jit_compile=)"):
            if keyword(node, "jit_compile") is not None:
                ctx.report(compile_arg, "`tf.function` given both `experimental_compile=` and `jit_compile=` "
                                        "raises ValueError: drop `experimental_compile=`")
            else:
                fix = Fix("Rename to `jit_compile=`", Safety.SAFE, {compile_arg.keyword: cst.Name("jit_compile")})
                ctx.report(compile_arg, "`experimental_compile=` is deprecated: `tf.function` calls it "
                                        "`jit_compile=`", fix)
        relax = keyword(node, "experimental_relax_shapes")
        if relax is not None and ctx.target_has("tensorflow.function(reduce_retracing=)"):
            fix = None
            if _is_bool(relax.value) and keyword(node, "reduce_retracing") is None:
                fix = Fix("Rename to `reduce_retracing=`", Safety.SAFE,
                          {relax.keyword: cst.Name("reduce_retracing")})
            ctx.report(relax, "`experimental_relax_shapes=` is deprecated: `tf.function` calls it "
                              "`reduce_retracing=`", fix)

    def _leaky_relu(self, node: cst.Call, ctx) -> None:
        alpha = keyword(node, "alpha")
        if alpha is None or ctx.migration.api_flavour(node.func, ctx.scope) != KERAS3 \
                or warning_expected(node, ctx.scope):
            return
        fix = None
        if keyword(node, "negative_slope") is None:
            fix = Fix("Rename to `negative_slope=`", Safety.UNSAFE, {alpha.keyword: cst.Name("negative_slope")})
        ctx.report(alpha, "Keras 3 `LeakyReLU(alpha=)` is deprecated (UserWarning): use `negative_slope=`", fix)

    def _input_layer(self, node: cst.Call, ctx) -> None:
        given = keyword(node, "input_shape")
        if given is None or ctx.migration.api_flavour(node.func, ctx.scope) != KERAS3 \
                or warning_expected(node, ctx.scope):
            return  # (a test of the deprecation itself: `with self.assertWarns(UserWarning):`)
        fix = None
        if keyword(node, "shape") is None:
            fix = Fix("Rename to `shape=`", Safety.UNSAFE, {given.keyword: cst.Name("shape")})
        ctx.report(given, "Keras 3 `InputLayer(input_shape=)` is deprecated (UserWarning): use `shape=`", fix)

    cases = [
        flagged(
            """
            import tensorflow as tf

            gpus = tf.config.experimental.list_physical_devices("CPU")
            logical = tf.config.experimental.list_logical_devices("CPU")
            visible = tf.config.experimental.get_visible_devices("CPU")
            tf.config.experimental.set_visible_devices(visible, "CPU")
            n = len(gpus) + len(logical) + len(tf.compat.v1.config.experimental.get_visible_devices())
            ds = tf.data.Dataset.range(8).map(lambda x: x * 2, num_parallel_calls=tf.data.experimental.AUTOTUNE)
            total = ds.reduce(tf.constant(0, tf.int64), lambda a, b: a + b)
            flags = [tf.data.experimental.INFINITE_CARDINALITY, tf.data.experimental.UNKNOWN_CARDINALITY]
            threads = tf.data.experimental.ThreadingOptions().private_threadpool_size
            """,
            fixed="""
            import tensorflow as tf

            gpus = tf.config.list_physical_devices("CPU")
            logical = tf.config.list_logical_devices("CPU")
            visible = tf.config.get_visible_devices("CPU")
            tf.config.set_visible_devices(visible, "CPU")
            n = len(gpus) + len(logical) + len(tf.compat.v1.config.get_visible_devices())
            ds = tf.data.Dataset.range(8).map(lambda x: x * 2, num_parallel_calls=tf.data.AUTOTUNE)
            total = ds.reduce(tf.constant(0, tf.int64), lambda a, b: a + b)
            flags = [tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY]
            threads = tf.data.ThreadingOptions().private_threadpool_size
            """,
            at=[
                (3, 8, "`tf.config.experimental.list_physical_devices` is a deprecated alias of "
                       "`tf.config.list_physical_devices`"),
                (4, 11, "`tf.config.experimental.list_logical_devices` is a deprecated alias"),
                (5, 11, "`tf.config.experimental.get_visible_devices` is a deprecated alias"),
                (6, 1, "`tf.config.experimental.set_visible_devices` is a deprecated alias"),
                (7, 36, "`tf.config.experimental.get_visible_devices` is a deprecated alias"),
                (8, 71, "`tf.data.experimental.AUTOTUNE` is a deprecated alias of `tf.data.AUTOTUNE`"),
                (10, 10, "`tf.data.experimental.INFINITE_CARDINALITY` is a deprecated alias"),
                (10, 53, "`tf.data.experimental.UNKNOWN_CARDINALITY` is a deprecated alias"),
                (11, 11, "`tf.data.experimental.ThreadingOptions` is a deprecated alias"),
            ],
            note="the chain is rewritten in place: tf.compat.v1 stays tf.compat.v1",
            keras2=True,
        ),
        flagged(
            """
            import tensorflow
            import tensorflow.data.experimental as tde
            from tensorflow.data import experimental
            from tensorflow.data.experimental import AUTOTUNE, INFINITE_CARDINALITY as INF

            a = tde.AUTOTUNE
            b = experimental.UNKNOWN_CARDINALITY
            c = tensorflow.data.experimental.AUTOTUNE + AUTOTUNE + INF
            """,
            fixed="""
            import tensorflow
            import tensorflow.data.experimental as tde
            from tensorflow.data import experimental
            from tensorflow.data import AUTOTUNE, INFINITE_CARDINALITY as INF

            a = tensorflow.data.AUTOTUNE
            b = tensorflow.data.UNKNOWN_CARDINALITY
            c = tensorflow.data.AUTOTUNE + AUTOTUNE + INF
            """,
            at=[
                (4, 1, "Deprecated aliases imported from `tf.data.experimental`: import `AUTOTUNE`, "
                       "`INFINITE_CARDINALITY` from `tf.data`"),
                (6, 5, "`tf.data.experimental.AUTOTUNE` is a deprecated alias"),
                (7, 5, "`tf.data.experimental.UNKNOWN_CARDINALITY` is a deprecated alias"),
                (8, 5, "`tf.data.experimental.AUTOTUNE` is a deprecated alias"),
            ],
            note="other spellings: the module alias, the imported submodule, the imported names",
            keras2=True,
        ),
        flagged(
            """
            import tensorflow as tf

            def f(x):
                return tf.reduce_sum(x * 2.0)

            jitted = tf.function(f, experimental_compile=True)

            @tf.function(experimental_relax_shapes=True)
            def g(x):
                return tf.reduce_sum(x)

            def traces():
                out = [jitted(tf.ones([3])), g(tf.ones([1]))]
                for n in range(2, 6):
                    out.append(g(tf.ones([n])))
                return out, g.experimental_get_tracing_count()
            """,
            fixed="""
            import tensorflow as tf

            def f(x):
                return tf.reduce_sum(x * 2.0)

            jitted = tf.function(f, jit_compile=True)

            @tf.function(reduce_retracing=True)
            def g(x):
                return tf.reduce_sum(x)

            def traces():
                out = [jitted(tf.ones([3])), g(tf.ones([1]))]
                for n in range(2, 6):
                    out.append(g(tf.ones([n])))
                return out, g.experimental_get_tracing_count()
            """,
            at=[(6, 25, "`experimental_compile=` is deprecated: `tf.function` calls it `jit_compile=`"),
                (8, 14, "`experimental_relax_shapes=` is deprecated")],
            run="""
            values, count = traces()
            compiled = int(jitted._jit_compile)
            """,
            note="the same XLA compilation and the same retracing: 2 traces for 5 input lengths",
            keras2=True,
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            act = tf.keras.layers.LeakyReLU(alpha=0.1)
            y = act(np.array([[-1.0, 2.0]], np.float32))
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            act = tf.keras.layers.LeakyReLU(negative_slope=0.1)
            y = act(np.array([[-1.0, 2.0]], np.float32))
            """,
            at=[(4, 33, "Keras 3 `LeakyReLU(alpha=)` is deprecated (UserWarning)")],
            effect=IDENTICAL,
            note="unsafe only because negative_slope does not run under Keras 2",
        ),
        flagged(
            """
            import numpy as np
            from tensorflow import keras

            model = keras.Sequential()
            model.add(keras.layers.InputLayer(input_shape=(3,)))
            model.add(keras.layers.Dense(2, kernel_initializer="ones"))
            both = keras.layers.InputLayer(shape=(4,), input_shape=(3,))
            y = model(np.array([[1.0, 2.0, 3.0]], np.float32))
            """,
            fixed="""
            import numpy as np
            from tensorflow import keras

            model = keras.Sequential()
            model.add(keras.layers.InputLayer(shape=(3,)))
            model.add(keras.layers.Dense(2, kernel_initializer="ones"))
            both = keras.layers.InputLayer(shape=(4,), input_shape=(3,))
            y = model(np.array([[1.0, 2.0, 3.0]], np.float32))
            """,
            at=[(5, 35, "Keras 3 `InputLayer(input_shape=)` is deprecated (UserWarning): use `shape=`"),
                (7, 44, "Keras 3 `InputLayer(input_shape=)` is deprecated")],
            effect=IDENTICAL,
            note="kahst/BirdNET-Analyzer model.py:615; unsafe only because shape= does not run under Keras 2; "
                 "no fix when shape= is also given (input_shape wins)",
        ),
        flagged(
            """
            import tensorflow as tf
            from keras import layers

            @tf.function(experimental_compile=True, jit_compile=False)
            def f(x):
                return x

            g = tf.function(f, experimental_relax_shapes=relax)
            act = layers.LeakyReLU(alpha=0.1, negative_slope=0.2)
            """,
            at=[(4, 14, "`tf.function` given both `experimental_compile=` and `jit_compile=` raises ValueError"),
                (8, 20, "`experimental_relax_shapes=` is deprecated"),
                (9, 24, "Keras 3 `LeakyReLU(alpha=)` is deprecated")],
            note="no exact rename: both spellings given; a non-literal relax_shapes value",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras
            from tensorflow.config.experimental import set_memory_growth

            gpus = tf.config.list_physical_devices("GPU")
            for gpu in gpus:
                tf.config.experimental.set_memory_growth(gpu, True)
                info = tf.config.experimental.get_memory_info("GPU:0")
            tf.config.experimental.enable_op_determinism()
            opts = tf.data.experimental.OptimizationOptions()
            ds = tf.data.experimental.sample_from_datasets([a, b])
            act = tf_keras.layers.LeakyReLU(alpha=0.1)
            y = tf.nn.leaky_relu(x, alpha=0.2)
            inputs = tf_keras.layers.InputLayer(input_shape=(3,))
            """,
            note="no core name (memory growth, memory info, determinism, sample_from_datasets); tf_keras "
                 "and tf.nn.leaky_relu take alpha",
        ),
        clean(
            """
            import os
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            import tensorflow as tf

            act = tf.keras.layers.LeakyReLU(alpha=0.1)
            inputs = tf.keras.layers.InputLayer(input_shape=(3,))

            class Config:
                experimental = None

            cfg = Config()
            x = cfg.experimental
            """,
            note="TF_USE_LEGACY_KERAS: tf.keras may be Keras 2 (no negative_slope there)",
        ),
        clean(
            """
            import keras
            import pytest

            class InputLayerTest:
                def test_input_shape_is_deprecated(self):
                    with self.assertWarnsRegex(UserWarning, "Argument `input_shape` is deprecated"):
                        layer = keras.layers.InputLayer(input_shape=(2, 3), batch_size=4)
                    with pytest.warns(UserWarning):
                        act = keras.layers.LeakyReLU(alpha=0.1)
            """,
            note="keras/src/layers/core/input_layer_test.py:127: a test of the deprecation warning itself",
        ),
        clean(
            """
            import tensorflow as tf

            TF_VERSION = tuple(int(v) for v in tf.__version__.split(".")[:2])
            if TF_VERSION >= (2, 4):
                AUTOTUNE = tf.data.AUTOTUNE
            else:
                AUTOTUNE = tf.data.experimental.AUTOTUNE
            try:
                gpus = tf.config.list_physical_devices("GPU")
            except AttributeError:
                gpus = tf.config.experimental.list_physical_devices("GPU")
            """,
            note="the fallback branches of a version test and of an except AttributeError: for TF releases "
                 "without the core names (tf.data.AUTOTUNE came in 2.4), on purpose",
        ),
    ]
