from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.precision import MIXED_FLOAT16
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged


class MixedPrecisionOutputDtype(Rule):
    """A model trained under a mixed precision policy whose last layer computes in float16/bfloat16.

    ## What it does
    In a module that sets a mixed global policy
    (`keras.mixed_precision.set_global_policy("mixed_float16")` or
    `"mixed_bfloat16"`, in any spelling: `tf.keras`, `tf_keras`, a `Policy(...)`
    object, `keras.config.set_dtype_policy`, the `experimental.set_policy` of
    TF 2.1-2.3), finds the output layer of a Keras model the module compiles or
    fits when that layer has no `dtype=` of its own. The model is a name bound
    to `Sequential([..., last])` (or `Sequential()` and its last `.add(...)`),
    to a functional `Model(inputs, outputs)` (outputs made by
    `Layer(...)(x)`, directly or through a name), or to a same-module function
    returning one of those; the last layer is a `keras.layers` constructor.

    Not flagged: a last layer with `dtype=` (any: the choice is made) or
    `**kwargs`; a `Lambda` last layer (its function decides the dtype); a
    custom layer, a pretrained application or a subclassed model's `call`
    (not looked into); a model built but never compiled or fit in the module
    (a backbone, a block); modules that set no mixed policy (or set it in
    another module).

    ## Why is this bad?
    Under a mixed policy every layer computes in float16 (or bfloat16),
    including the last: the model's logits or probabilities are float16. Any
    logit beyond 65504 becomes `inf` and the loss `NaN`; softmax
    probabilities carry 3 significant digits (they no longer sum to 1 within
    1e-3). The TensorFlow mixed precision guide asks for a float32 output
    layer: `dtype="float32"` on the last layer, or a final
    `Activation("softmax", dtype="float32")` (`"linear"` for logits).

    ## Example
    ```python
    keras.mixed_precision.set_global_policy("mixed_float16")
    model = keras.Sequential([
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ])
    model.compile("adam", "sparse_categorical_crossentropy")
    ```

    Use instead:
    ```python
    model = keras.Sequential([
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10, activation="softmax", dtype="float32"),
    ])
    ```

    ## Fix safety
    Unsafe: the fix adds `dtype="float32"` to the last layer's constructor,
    which changes the model's output dtype (float16 -> float32) and its last
    layer's arithmetic (its matmul now runs in float32: slower on Tensor Cores
    for a large last layer; the TF guide's alternative keeps the layer in
    float16 and adds a float32 `Activation`). The fix is what the docs
    recommend; it changes values on purpose.

    ## Measured effect
    TF 2.21, Keras 3.15, CPU, `mixed_float16`: a `Dense(3)` output layer on
    inputs of 100 gives logits `[inf, 6.4e4, 0]` and a `NaN` loss; with
    `dtype="float32"`, `[72000, 64000, 0]` and a finite loss. An 8-16-3
    softmax MLP: probabilities sum to 1 within 9.8e-4 in float16, 8.9e-8 with
    a float32 last layer; losses over 3 epochs agree to 5e-5 (no overflow
    there). `examples/TFG501` (`tflint-gpu verify --rule TFG501 --device cpu
    --size small`): the float16 model's loss is NaN on unnormalised inputs,
    the fixed model's finite.
    """

    code = "TFG501"
    name = "mixed-precision-output-not-float32"
    message = "last layer computes in float16 under the mixed policy: give it `dtype=\"float32\"`"
    needs = (("mixed_float16", "mixed_bfloat16"),)
    fix_safety = Safety.UNSAFE

    def __init__(self) -> None:
        self._done = False

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if self._done:
            return
        self._done = True
        policies = ctx.precision.policies()
        if not policies:
            return
        dtype = "float16" if any(p.policy == MIXED_FLOAT16 for p in policies) else "bfloat16"
        message = f"last layer computes in {dtype} under the mixed policy: give it `dtype=\"float32\"`"
        for model in ctx.precision.trained_models():
            for layer in model.last_layers:
                if ctx.precision.sets_dtype(layer):
                    continue
                ctx.report(layer, message, self._fix(layer))

    @staticmethod
    def _fix(layer: cst.Call) -> Fix:
        """``layer`` with ``dtype="float32"`` appended, in the call's own layout
        (the separator between its arguments; a trailing comma kept last)."""
        args = list(layer.args)
        new_arg = cst.Arg(cst.SimpleString('"float32"'), keyword=cst.Name("dtype"),
                          equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                whitespace_after=cst.SimpleWhitespace("")))
        if args:
            separator = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) \
                else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            if isinstance(args[-1].comma, cst.Comma):  # a trailing comma: the new argument takes it
                new_arg = new_arg.with_changes(comma=args[-1].comma)
            args[-1] = args[-1].with_changes(comma=separator)
        new = layer.with_changes(args=args + [new_arg])
        return Fix('Add `dtype="float32"` to the last layer', Safety.UNSAFE, {layer: new})

    cases = [
        flagged(
            """
            import keras

            keras.mixed_precision.set_global_policy("mixed_float16")
            model = keras.Sequential([
                keras.Input((8,)),
                keras.layers.Dense(3),
            ])
            model.compile("sgd", "mse")
            """,
            fixed="""
            import keras

            keras.mixed_precision.set_global_policy("mixed_float16")
            model = keras.Sequential([
                keras.Input((8,)),
                keras.layers.Dense(3, dtype="float32"),
            ])
            model.compile("sgd", "mse")
            """,
            at=[(6, 5, "last layer computes in float16")],
            run="""
            import numpy as np
            weights = np.zeros((8, 3), "float32")
            weights[:, 0] = 90.0
            model.layers[-1].kernel.assign(weights)
            out = model(np.full((2, 8), 100.0, "float32"))
            """,
            effect=CHANGES,
            note="logits [inf, 0, 0] float16 before; [72000, 0, 0] float32 after",
        ),
        flagged(
            """
            import tensorflow as tf
            from tensorflow.keras import layers, mixed_precision

            policy = mixed_precision.Policy("mixed_bfloat16")
            mixed_precision.set_global_policy(policy)

            inputs = layers.Input((8,))
            hidden = layers.Dense(16, activation="relu")(inputs)
            outputs = layers.Dense(
                3,
                activation="softmax",
            )(hidden)
            model = tf.keras.Model(inputs=inputs, outputs=outputs)
            model.compile("adam", "sparse_categorical_crossentropy")
            """,
            fixed="""
            import tensorflow as tf
            from tensorflow.keras import layers, mixed_precision

            policy = mixed_precision.Policy("mixed_bfloat16")
            mixed_precision.set_global_policy(policy)

            inputs = layers.Input((8,))
            hidden = layers.Dense(16, activation="relu")(inputs)
            outputs = layers.Dense(
                3,
                activation="softmax",
                dtype="float32",
            )(hidden)
            model = tf.keras.Model(inputs=inputs, outputs=outputs)
            model.compile("adam", "sparse_categorical_crossentropy")
            """,
            at=[(9, 11, "last layer computes in bfloat16")],
            run="""
            tf.keras.utils.set_random_seed(0)
            probabilities = model(tf.random.stateless_normal((4, 8), seed=(1, 2)))
            """,
            effect=CHANGES,
            note="a Policy object; functional outputs through a name; a multi-line call keeps its layout; bfloat16",
        ),
        flagged(
            """
            import tf_keras


            def build():
                model = tf_keras.Sequential()
                model.add(tf_keras.layers.Dense(16, activation="relu"))
                model.add(tf_keras.layers.Dense(1, activation="sigmoid"))
                return model


            tf_keras.mixed_precision.set_global_policy("mixed_float16")
            net = build()
            net.compile("adam", "binary_crossentropy")
            """,
            fixed="""
            import tf_keras


            def build():
                model = tf_keras.Sequential()
                model.add(tf_keras.layers.Dense(16, activation="relu"))
                model.add(tf_keras.layers.Dense(1, activation="sigmoid", dtype="float32"))
                return model


            tf_keras.mixed_precision.set_global_policy("mixed_float16")
            net = build()
            net.compile("adam", "binary_crossentropy")
            """,
            at=[(7, 15, "last layer computes in float16")],
            run="""
            tf_keras.utils.set_random_seed(0)
            out = net(tf_keras.backend.ones((2, 4)))
            """,
            effect=CHANGES,
            note="tf_keras; Sequential() and add(); built in a function and compiled by its caller",
        ),
        flagged(
            """
            import tensorflow as tf
            from tensorflow.keras.layers import Dense, Input
            from tensorflow.keras.mixed_precision import set_global_policy
            from tensorflow.keras.models import Model

            set_global_policy('mixed_float16')


            def build_model(x):
                face = Dense(1, activation="sigmoid", name="face")(x)
                eye = Dense(1, activation="sigmoid", name="eye", dtype="float32")(x)
                return Model(inputs=x, outputs=[face, eye])


            model = build_model(Input((4,)))
            model.compile("adam", ["mse", "mse"])
            outputs = model(tf.ones((2, 4)))
            """,
            fixed="""
            import tensorflow as tf
            from tensorflow.keras.layers import Dense, Input
            from tensorflow.keras.mixed_precision import set_global_policy
            from tensorflow.keras.models import Model

            set_global_policy('mixed_float16')


            def build_model(x):
                face = Dense(1, activation="sigmoid", name="face", dtype="float32")(x)
                eye = Dense(1, activation="sigmoid", name="eye", dtype="float32")(x)
                return Model(inputs=x, outputs=[face, eye])


            model = build_model(Input((4,)))
            model.compile("adam", ["mse", "mse"])
            outputs = model(tf.ones((2, 4)))
            """,
            at=[(10, 12, "last layer computes in float16")],
            effect=CHANGES,
            note="two heads (a real multitask model), one already float32; the model returned by a function",
        ),
        clean(
            """
            import keras
            from keras import layers

            keras.mixed_precision.set_global_policy("mixed_float16")
            a = keras.Sequential([layers.Dense(8), layers.Dense(3, activation="softmax", dtype="float32")])
            a.compile("adam", "mse")
            inputs = keras.Input((8,))
            x = layers.Dense(10)(inputs)
            outputs = layers.Activation("softmax", dtype="float32")(x)
            b = keras.Model(inputs, outputs)
            b.compile("adam", "mse")
            c = keras.Sequential([layers.Dense(8), layers.Lambda(lambda t: keras.ops.cast(t, "float32"))])
            c.compile("adam", "mse")
            kwargs = {"dtype": "float32"}
            d = keras.Sequential([layers.Dense(8), layers.Dense(3, **kwargs)])
            d.fit(None)
            """,
            note="a float32 last layer or final Activation (the TF guide's form); a Lambda casting; **kwargs",
        ),
        clean(
            """
            import keras
            from keras import layers

            keras.mixed_precision.set_global_policy("mixed_float16")
            backbone = keras.Sequential([layers.Dense(8), layers.Dense(8)])
            head = MyHead(3)
            model = keras.Sequential([backbone, head])
            model.compile("adam", "mse")
            base = keras.applications.MobileNetV2(include_top=True)
            base.compile("adam", "mse")
            """,
            note="a block never compiled itself; a custom layer last; a pretrained application (not looked into)",
        ),
        clean(
            """
            import keras

            # keras.mixed_precision.set_global_policy("mixed_float16")
            keras.mixed_precision.set_global_policy("float32")
            model = keras.Sequential([keras.layers.Dense(3)])
            model.compile("adam", "mse")
            """,
            note="no mixed policy set (a comment mentions one)",
        ),
    ]
