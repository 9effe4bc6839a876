from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import keyword
from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.rules.base import GRAPH_TEXT, Rule, clean, flagged

# What each constructor creates, in the message: "... creates <what> on every call".
WEIGHTS = "new weights"
VARIABLE = "a new variable"
SEED = "a new seed variable"
TABLES = "new lookup tables"
OPTIMIZER = "new optimizer variables"
METRIC = "new metric variables"
WEIGHT = "a new weight"

_VARIABLES = frozenset({"tensorflow.Variable", "keras.Variable", "keras.backend.Variable"})
# tf.random.Generator and its factories: each holds its state in a tf.Variable.
_GENERATORS = frozenset(
    f"tensorflow.random.{module}Generator{factory}"
    for module in ("", "experimental.")
    for factory in ("", ".from_seed", ".from_non_deterministic_state", ".from_key_counter", ".from_state")
)
_SEED_GENERATORS = frozenset({"keras.random.SeedGenerator"})

# Keras layers that own no variable in either Keras: constructed and called
# inside a tf.function (Keras 3.15 and tf_keras 2.21), they trace and run
# without "tf.function only supports singleton tf.Variables". Created per call
# they are only wasted Python work, not a bug.
_WEIGHTLESS = frozenset(
    {
        "Activation", "ActivityRegularization", "Add", "AutoContrast", "Average", "CenterCrop", "Concatenate",
        "ContrastLimitedAdaptiveHistogramEqualization", "Discretization", "Dot", "ELU", "Equalization", "Flatten",
        "Hashing", "Identity", "Lambda", "LeakyReLU", "Masking", "Maximum", "Minimum", "Multiply", "Permute",
        "ReLU", "RepeatVector", "Rescaling", "Reshape", "Resizing", "Softmax", "Subtract", "ThresholdedReLU",
        "UnitNormalization", "CategoryEncoding", "HashedCrossing", "Attention",
        # not layers one calls, or abstract: nothing to say about them here
        "Layer", "InputLayer", "Input", "InputSpec",
        # wrappers: the wrapped layer's weights are its own (a constructor passed in is checked itself)
        "TimeDistributed", "Wrapper",
    }
    | {f"{kind}{dims}D" for kind in ("AveragePooling", "AvgPool", "MaxPooling", "MaxPool", "GlobalAveragePooling",
                                     "GlobalAvgPool", "GlobalMaxPooling", "GlobalMaxPool", "AdaptiveAveragePooling",
                                     "AdaptiveMaxPooling", "Cropping", "UpSampling", "ZeroPadding")
       for dims in (1, 2, 3)}
)
# Layers that draw random numbers: Keras 3 gives each a SeedGenerator (a
# variable) when it is constructed; tf_keras' noise layers own none.
_NOISE = frozenset({
    "Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianDropout", "GaussianNoise",
    "AlphaDropout",
})
_RANDOM_AUGMENTATION = frozenset({"AugMix", "CutMix", "MixUp", "RandAugment", "Solarization"})
_LOOKUPS = frozenset({"StringLookup", "IntegerLookup", "TextVectorization"})
# Containers of other layers: no variable of their own.
_CONTAINERS = frozenset({"Sequential", "Model", "Functional", "Pipeline"})
_WEIGHT_METHODS = frozenset({"add_weight", "add_variable"})


class LayerCreatedInGraph(Rule):
    """A Keras layer with weights, or a variable, created in graph code: new state on every call.

    ## What it does
    In code that runs traced as a graph (a Keras `call`/`train_step`/
    `test_step`/`predict_step`, a `tf.function`, a function given to
    `tf.data.Dataset.map` and friends, a loss or metric Keras runs
    (`compile(loss=..., metrics=...)`, a Loss's `call`, a Metric's
    `update_state`/`result`; not `__init__` nor `reset_state`), a function
    `tf.cond`/`tf.while_loop`/`tf.map_fn`... run from graph code, or a
    function those call), finds
    constructors that create TensorFlow variables:

    * `tf.Variable(...)`, `keras.Variable(...)`;
    * a Keras layer that owns variables: `keras.layers.Dense(...)`,
      `Conv2D`, `BatchNormalization`, `LSTM`, `Embedding`,
      `MultiHeadAttention`, ... (every class in `keras.layers` except the
      weightless ones listed below), `AdditiveAttention` unless
      `use_scale=False`, `Attention(use_scale=True)`, `Bidirectional` of an
      existing layer (it clones the layer), `keras.applications` models;
    * in Keras 3 only, the layers that draw random numbers: `Dropout`,
      `SpatialDropout*`, `GaussianDropout`, `GaussianNoise`, `AlphaDropout`
      (each owns a `SeedGenerator`, unless the rate is a literal 0), and the
      random augmentation layers (`RandomFlip`, `RandomRotation`, ...,
      `MixUp`, `CutMix`, `RandAugment`), in both Keras;
    * `StringLookup`, `IntegerLookup`, `TextVectorization` (lookup tables);
    * a Keras optimizer (`keras.optimizers.Adam(...)`, not the tf_keras
      `legacy` ones, which create their variables lazily) or metric
      (`keras.metrics.Mean()`);
    * `tf.random.Generator(...)`/`.from_seed(...)`/
      `.from_non_deterministic_state()`, `keras.random.SeedGenerator(...)`;
    * `self.add_weight(...)` in a Keras layer's graph code.

    Not flagged: constructors in `__init__`, in `build` (also when graph code
    calls `self.build(...)`), in helpers only `build` or lazy blocks call,
    and in a lazy block guarded by the state it creates (`if self.v is None:
    self.v = tf.Variable(...)`, `if not self.built:`, `if not hasattr(self,
    "dense"):`), which runs once; weightless layers (`Flatten`, `Reshape`,
    `Activation`, `ReLU`, `Softmax`, `Lambda`, pooling, cropping, padding,
    upsampling, merge layers such as `Add`/`Concatenate`, `Rescaling`,
    `Resizing`, `Attention` without `use_scale`, `TimeDistributed`) and, in
    tf_keras, the noise layers: created per call these are wasted Python
    work but trace, train and give the same results; `keras.Sequential`/
    `keras.Model` themselves (the layers given to them are checked);
    `keras.losses` objects and learning-rate schedules (no variables);
    functions handed to `tf.py_function`/`tf.numpy_function`.

    Not covered yet: a same-module layer class constructed in graph code
    (`MyBlock(...)(x)` in `call`: whether it owns weights depends on its
    own `__init__`/`build`), guards of other forms (`if key not in
    self.cache:`), and optimizer slot variables created lazily by the first
    `apply_gradients` inside a `tf.function`. A noise layer whose rate is
    not a literal (`Dropout(self.rate)`) is reported: with a rate of 0 at
    run time Keras 3 creates no `SeedGenerator` and it would not fail.

    ## Why is this bad?
    A `tf.function` may create variables only on its first trace, and
    TensorFlow traces a function that created some a second time to check it
    creates no more: an unguarded `tf.Variable(...)` raises `ValueError:
    tf.function only supports singleton tf.Variables created on the first
    call` on the very first call (also through `get_concrete_function`,
    `Dataset.map`, or inside `tf.init_scope()`). Keras traces `call` and the
    step methods under `fit`/`evaluate`/`predict`, so a `Dense` built in
    `call` raises the same error in `fit`; run eagerly it gives new, random,
    untrained weights on every call, which the optimizer never sees. In
    Keras 3 this holds for `Dropout` too: its constructor creates a
    `SeedGenerator` variable.

    ## Example
    ```python
    class Head(keras.Model):
        def call(self, x):
            x = keras.layers.Dense(64, activation="relu")(x)
            return keras.layers.Dropout(0.5)(x)
    ```

    Use instead:
    ```python
    class Head(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(64, activation="relu")
            self.dropout = keras.layers.Dropout(0.5)

        def call(self, x):
            return self.dropout(self.dense(x))
    ```

    For a `tf.function`, create the variable outside it (or once, behind
    `if self.v is None:`) and pass it in or keep it on an object.

    ## Fix safety
    No fix: where the layer belongs (`__init__` with its arguments, `build`
    for shapes known only then) and what to name the attribute is a design
    choice. The message says where to move it.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU. A Keras 3 model whose `call` builds
    `keras.layers.Dense(4)` raises `ValueError: tf.function only supports
    singleton tf.Variables created on the first call` in `fit`; called
    eagerly twice on the same input it gives two different outputs. The same
    under `fit` with `Dropout(0.5)`, `GaussianNoise(0.1)`,
    `BatchNormalization()` or a `tf.Variable` in `call`, and with a
    `keras.metrics.Mean()` created in `train_step`. tf_keras 2.21: the same
    for `Dense`, `BatchNormalization` and `tf.Variable`; `Dropout` and
    `GaussianNoise` in `call` train normally. Every layer class of
    `keras.layers` constructed and called in a `tf.function`: the 60-odd
    weightless ones above run, every other one raises the error (the lookup
    layers fail on their tables instead). `tf.Variable`, `keras.Variable`,
    `keras.optimizers.Adam()`/`SGD()`, `keras.metrics.Mean()`/`AUC()`,
    `tf.random.Generator.from_seed(1)`, `keras.random.SeedGenerator(1)` in a
    `tf.function`: the error on the first call; a loss object, a
    learning-rate schedule, `keras.Sequential([Flatten()])`,
    `Dropout(0.0)`, `tf_keras.optimizers.legacy.Adam()` and
    `tf.random.get_global_generator()` run. examples/TFG104 (`tflint-gpu
    verify --rule TFG104`, CPU, size small): `fit` on a model building
    `Dense` and `Dropout` in `call` raises the ValueError on the first
    step; with both layers created in `__init__`, two epochs train and
    predict (the measurement below).
    """

    code = "TFG104"
    name = "layer-or-variable-created-in-graph-code"
    message = "Layer or variable created in graph code makes new state each call: create it once"
    needs = (GRAPH_TEXT, ("Variable", "layers", "Generator", "optimizers", "metrics", "applications",
                          "add_weight", "add_variable", "Dense", "Conv", "Dropout", "Normalization"))

    def visit_Call(self, node: cst.Call, ctx) -> None:
        graph = ctx.graph()
        if graph is None:
            return
        function = ctx.scope.function()
        if function is None or ctx.run_once.runs_once(node, function):
            return
        found = self._creates(node, function, ctx)
        if found is None:
            return
        what, advice = found
        callee = ctx.module.code_for_node(node.func)
        if len(callee) > 30:
            callee = "..." + callee[-27:]
        ctx.report(node, f"`{callee}(...)` in graph code makes {what} each call: {advice}")

    # -- what a call creates ----------------------------------------------
    def _creates(self, node: cst.Call, function: ScopeInfo, ctx) -> Optional[Tuple[str, str]]:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _WEIGHT_METHODS:
            method = _method(function)
            if method is not None and isinstance(func.value, cst.Name) \
                    and func.value.value == bindings.first_parameter(method) \
                    and ctx.keras_flavour(method.enclosing_class) is not None:
                return WEIGHT, "create it in `build`"
        qualname = ctx.qualname(func)
        if qualname is None:
            return None
        what = self._constructor(qualname, node, ctx)
        if what is None:
            return None
        return what, self._advice(function, what, ctx)

    @staticmethod
    def _constructor(qualname: str, node: cst.Call, ctx) -> Optional[str]:
        if qualname in _VARIABLES:
            return VARIABLE
        if qualname in _GENERATORS or qualname in _SEED_GENERATORS:
            return SEED
        parts = qualname.split(".")
        if parts[0] != "keras" or len(parts) < 3:
            return None
        name = parts[-1]
        if not (name[:1].isupper() and "_" not in name):
            return None
        area = parts[1]
        if area == "layers":
            return _layer(name, node, ctx)
        if area == "applications":
            return WEIGHTS
        if area == "optimizers" and len(parts) == 3 and name not in ("Optimizer", "LossScaleOptimizer"):
            return OPTIMIZER
        if area == "metrics" and len(parts) == 3 and name not in ("Metric", "MSE", "MAE", "MAPE", "MSLE", "KLD"):
            return METRIC
        return None

    @staticmethod
    def _advice(function: ScopeInfo, what: str, ctx) -> str:
        method = _method(function)
        if method is not None:
            if ctx.keras_flavour(method.enclosing_class) is not None:
                return "create it in `__init__`/`build`"
            return "create it in `__init__`"
        graph = ctx.graph(function)
        if graph is not None and graph.kind == "tf.function":
            return "create it outside the `tf.function`"
        return "create it outside graph code"


def _layer(name: str, node: cst.Call, ctx) -> Optional[str]:
    """What constructing ``keras.layers.<name>`` creates, or None if no variable."""
    if name in _CONTAINERS:
        return None
    if name == "Attention":
        return WEIGHTS if _keyword_true(node, "use_scale") else None
    if name == "AdditiveAttention":
        return None if _keyword_false(node, "use_scale") else WEIGHTS
    if name == "Bidirectional":
        layer = node.args[0].value if node.args and node.args[0].keyword is None else None
        return None if isinstance(layer, cst.Call) else WEIGHTS  # a constructor passed in is checked itself
    if name in _WEIGHTLESS:
        return None
    if name in _NOISE:
        if ctx.keras_flavour(node.func) == "tf_keras" or _zero_rate(node):
            return None
        return SEED
    if name.startswith("Random") or name in _RANDOM_AUGMENTATION:
        return SEED
    if name in _LOOKUPS:
        return TABLES
    return WEIGHTS


def _method(function: ScopeInfo) -> Optional[ScopeInfo]:
    """The innermost method around ``function`` (itself, or one it is nested in)."""
    for scope in function.chain():
        if scope.is_function and scope.enclosing_class is not None and scope.binds_instance:
            return scope
    return None


def _keyword(node: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    found = keyword(node, name)
    return found.value if found is not None else None


def _keyword_true(node: cst.Call, name: str) -> bool:
    value = _keyword(node, name)
    return value is not None and not (isinstance(value, cst.Name) and value.value == "False")


def _keyword_false(node: cst.Call, name: str) -> bool:
    value = _keyword(node, name)
    return isinstance(value, cst.Name) and value.value == "False"


def _zero_rate(node: cst.Call) -> bool:
    """``Dropout(0)``/``Dropout(rate=0.0)``: Keras 3 makes no SeedGenerator for a zero rate."""
    value = _keyword(node, "rate") or _keyword(node, "stddev")
    if value is None and node.args and node.args[0].keyword is None:
        value = node.args[0].value
    return isinstance(value, (cst.Integer, cst.Float)) and float(value.value) == 0.0


LayerCreatedInGraph.cases = [
    clean(
        """
        import tensorflow as tf

        state = []


        @tf.function
        def step(x):
            if not state:
                state.append(tf.Variable(tf.zeros_like(x)))
            state[0].assign_add(x)
            return state[0]
        """,
        note="issue 35: the create-once idiom (the block fills the module-level list its test asks is "
             "empty; 3 calls leave one variable, TF 2.21, run by hand)",
    ),
    flagged(
        """
        import tensorflow as tf
        import keras

        def weighted_mse(y_true, y_pred):
            weight = tf.Variable(1.0)
            return tf.reduce_mean(tf.square(y_true - y_pred)) * weight

        class Offset(keras.metrics.Metric):
            def update_state(self, y_true, y_pred, sample_weight=None):
                offset = tf.Variable(0.0)
                self.total.assign_add(tf.reduce_mean(y_pred) + offset)

        def scaled():
            scale = tf.Variable(2.0)
            return scale * 1.0

        @tf.function
        def pick(x):
            return tf.cond(x > 0, scaled, lambda: x)

        model.compile("sgd", loss=weighted_mse, metrics=[Offset()])
        """,
        at=[
            (5, 14, "`tf.Variable(...)` in graph code makes a new variable each call: create it outside graph code"),
            (10, 18, "`tf.Variable(...)` in graph code makes a new variable each call: create it in `__init__`/`build`"),
            (14, 13, "`tf.Variable(...)` in graph code makes a new variable each call: create it outside graph code"),
        ],
        note="a loss given to compile, a metric's update_state, a tf.cond branch of a tf.function: measured, "
             "ValueError: tf.function only supports singleton tf.Variables created on the first call",
    ),
    clean(
        """
        import tensorflow as tf
        import keras

        class Weighted(keras.losses.Loss):
            def __init__(self):
                super().__init__()
                self.weight = tf.Variable(1.0)

            def call(self, y_true, y_pred):
                return tf.reduce_mean(y_pred) * self.weight

        class Offset(keras.metrics.Metric):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.total = self.add_weight(name="total", initializer="zeros")

            def reset_state(self):
                self.extra = tf.Variable(0.0)

        def branch():
            return tf.Variable(2.0) * 1.0

        value = tf.cond(tf.constant(True), branch, branch)
        """,
        note="a Loss's __init__, a metric's __init__ and reset_state, a tf.cond called eagerly",
    ),
    flagged(
        """
        import keras

        class Head(keras.Model):
            def __init__(self):
                super().__init__()
                self.out = keras.layers.Dense(1)

            def call(self, x, training=False):
                x = keras.layers.Dense(4, activation="relu")(x)
                x = keras.layers.Dropout(0.5)(x, training=training)
                return self.out(x)
        """,
        at=[(9, 13, "`keras.layers.Dense(...)` in graph code makes new weights each call: "
                    "create it in `__init__`/`build`"),
            (10, 13, "`keras.layers.Dropout(...)` in graph code makes a new seed variable")],
        note="measured: ValueError under fit (Dropout too: Keras 3 gives it a SeedGenerator)",
    ),
    flagged(
        """
        import tensorflow as tf

        @tf.function
        def scale(x):
            v = tf.Variable(2.0)
            return x * v

        def augment(image):
            gen = tf.random.Generator.from_seed(1)
            return image + gen.normal(tf.shape(image))

        ds = tf.data.Dataset.from_tensor_slices(tf.ones((4, 2))).map(augment)
        """,
        at=[(5, 9, "`tf.Variable(...)` in graph code makes a new variable each call: "
                   "create it outside the `tf.function`"),
            (9, 11, "`tf.random.Generator.from_seed(...)` in graph code makes a new seed variable each call: "
                    "create it outside graph code")],
        note="measured: ValueError on the first call, and while Dataset.map traces",
    ),
    flagged(
        """
        import keras
        import tensorflow as tf
        from tensorflow.keras import layers

        def conv_bn(x, filters):
            x = layers.Conv2D(filters, 3, padding="same")(x)
            return layers.BatchNormalization()(x)

        class Net(keras.Model):
            def __init__(self):
                super().__init__()
                self.head = layers.Dense(10)

            def call(self, x):
                x = conv_bn(x, 16)
                x = layers.GlobalAveragePooling2D()(x)
                return self.head(x)

            def train_step(self, data):
                tracker = keras.metrics.Mean()
                opt = keras.optimizers.Adam(1e-3)
                tracker.update_state(0.0)
                return {"loss": tracker.result()}
        """,
        at=[(6, 9, "`layers.Conv2D(...)` in graph code makes new weights each call: "
                   "create it outside graph code"),
            (7, 12, "`layers.BatchNormalization(...)` in graph code makes new weights"),
            (20, 19, "`keras.metrics.Mean(...)` in graph code makes new metric variables each call"),
            (21, 15, "`keras.optimizers.Adam(...)` in graph code makes new optimizer variables each call")],
        note="a helper called from call; a metric and an optimizer made in train_step; pooling is weightless",
    ),
    flagged(
        """
        import keras

        class Scale(keras.layers.Layer):
            def call(self, x):
                w = self.add_weight(shape=(), initializer="ones")
                return x * w
        """,
        at=[(5, 13, "`self.add_weight(...)` in graph code makes a new weight each call: create it in `build`")],
        note="measured: Keras 3 raises 'You cannot add new elements of state' under fit",
    ),
    flagged(
        """
        import tensorflow as tf
        import tf_keras

        class Old(tf_keras.Model):
            def call(self, x):
                x = tf_keras.layers.Dropout(0.5)(x)
                x = tf_keras.layers.GaussianNoise(0.1)(x)
                return tf_keras.layers.Dense(2)(x)

        class New(tf.keras.Model):
            def call(self, x):
                return tf.keras.layers.GaussianNoise(0.1)(x)
        """,
        at=[(8, 16, "`tf_keras.layers.Dense(...)` in graph code makes new weights"),
            (12, 16, "`tf.keras.layers.GaussianNoise(...)` in graph code makes a new seed variable")],
        note="tf_keras noise layers own no variable (measured: fit trains); tf.keras is Keras 3 in TF 2.21",
    ),
    flagged(
        """
        import keras

        class Encoder(keras.layers.Layer):
            def __init__(self, lstm):
                super().__init__()
                self.lstm = lstm

            def call(self, x):
                x = keras.layers.Bidirectional(self.lstm)(x)
                y = keras.layers.Bidirectional(keras.layers.LSTM(4))(x)
                z = keras.layers.TimeDistributed(keras.layers.Dense(3))(y)
                a = keras.layers.AdditiveAttention()([z, z])
                b = keras.layers.Attention(use_scale=True)([z, z])
                return a + b
        """,
        at=[(9, 13, "`keras.layers.Bidirectional(...)`"),
            (10, 40, "`keras.layers.LSTM(...)`"),
            (11, 42, "`keras.layers.Dense(...)`"),
            (12, 13, "`keras.layers.AdditiveAttention(...)`"),
            (13, 13, "`keras.layers.Attention(...)`")],
        note="wrappers: the wrapped constructor is reported, Bidirectional of an existing layer clones it",
    ),
    flagged(
        """
        import tensorflow as tf
        from tensorflow.keras import Model
        from tensorflow.keras import layers as L

        def res_block(x, filters):
            h = L.Conv2D(filters, 3, padding="same")(x)
            return L.Add()([h, x])

        class Net(Model):
            def build(self, shape):
                res_block(L.Input(shape[1:]), 8)
                super().build(shape)

            def call(self, x):
                return res_block(x, 8)

        @tf.function
        def scale(x):
            with tf.init_scope():
                v = tf.Variable(2.0)
            return x * v
        """,
        at=[(6, 9, "`L.Conv2D(...)` in graph code makes new weights each call"),
            (20, 13, "`tf.Variable(...)` in graph code makes a new variable each call")],
        note="a helper build calls is still reached from call; tf.init_scope does not help (measured: ValueError)",
    ),
    clean(
        """
        import keras
        import tensorflow as tf

        class Block(keras.layers.Layer):
            def __init__(self, units):
                super().__init__()
                self.units = units
                self.proj = None
                self.dense = keras.layers.Dense(units)

            def build(self, shape):
                self.norm = keras.layers.LayerNormalization()
                self._make()

            def _make(self):
                self.extra = keras.layers.Dense(self.units)

            def call(self, x):
                if self.proj is None:
                    self.proj = keras.layers.Dense(self.units)
                if not hasattr(self, "gate"):
                    self.gate = keras.layers.Dense(1)
                if not self.built:
                    self.build(x.shape)
                return self.extra(self.proj(self.norm(self.dense(x)))) * self.gate(x)

        class Mod(tf.Module):
            def __init__(self):
                self.v = None

            @tf.function
            def __call__(self, x):
                if self.v is None:
                    self.v = tf.Variable(tf.ones_like(x))
                return x * self.v
        """,
        note="__init__, build and its helpers, lazy blocks guarded by the state they create (measured: runs)",
    ),
    clean(
        """
        import keras
        import tensorflow as tf

        class Head(keras.Model):
            def call(self, x, training=False):
                x = keras.layers.Flatten()(x)
                x = keras.layers.Reshape((-1, 1))(x)
                x = keras.layers.Activation("relu")(x)
                x = keras.layers.MaxPooling1D(2)(x)
                x = keras.layers.Concatenate()([x, x])
                x = keras.layers.Dropout(0.0)(x)
                x = keras.layers.Attention()([x, x])
                x = keras.layers.TimeDistributed(keras.layers.Flatten())(x)
                x = keras.layers.Lambda(lambda t: t * 2)(x)
                return keras.Sequential([keras.layers.Softmax()])(x)

            def train_step(self, data):
                loss_fn = keras.losses.MeanSquaredError()
                schedule = keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.9)
                return {"loss": loss_fn(data[1], self(data[0]))}
        """,
        note="weightless layers, Dropout(0.0), a loss object, a schedule: measured to trace and train",
    ),
    clean(
        """
        import keras
        import tensorflow as tf

        def make_model():
            inputs = keras.Input((4,))
            x = keras.layers.Dense(8)(inputs)
            return keras.Model(inputs, keras.layers.Dense(1)(x))

        model = make_model()
        step_var = tf.Variable(0)

        @tf.function
        def step(x):
            step_var.assign_add(1)
            return model(x)

        def load(x):
            return tf.py_function(lambda t: t * tf.Variable(1.0), [x], tf.float32)
        """,
        note="a functional model built eagerly; variables outside the tf.function; py_function runs eagerly",
    ),
    clean(
        """
        import tensorflow as tf

        v = None

        @tf.function
        def scaled(x):
            global v
            v = tf.Variable(0.0) if v is None else v
            return v + x

        class Lazy(tf.Module):
            def __init__(self):
                self.w = None

            @tf.function
            def __call__(self, x):
                self.w = tf.Variable(x) if self.w is None else self.w
                return self.w * x
        """,
        note="a run-once guard written as a conditional expression (one variable, made at the first call)",
    ),
]
