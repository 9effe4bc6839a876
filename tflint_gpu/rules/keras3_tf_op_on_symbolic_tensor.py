from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.names import short_name
from tflint_gpu.semantic.symbolic_ops import RAISES
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

# tf op -> (keras.ops name, the op's parameter names in order, keras.ops's names for them).
# Only ops whose keras.ops twin computes the same thing for the same arguments.
_UNARY = ("x",)
_OPS: Dict[str, Tuple[str, Tuple[str, ...], Tuple[str, ...]]] = {
    "concat": ("concatenate", ("values", "axis"), ("xs", "axis")),
    "stack": ("stack", ("values", "axis"), ("x", "axis")),
    "reshape": ("reshape", ("tensor", "shape"), ("x", "newshape")),
    "expand_dims": ("expand_dims", ("input", "axis"), ("x", "axis")),
    "squeeze": ("squeeze", ("input", "axis"), ("x", "axis")),
    "transpose": ("transpose", ("a", "perm"), ("x", "axes")),
    "tile": ("tile", ("input", "multiples"), ("x", "repeats")),
    "cast": ("cast", ("x", "dtype"), ("x", "dtype")),
    "matmul": ("matmul", ("a", "b"), ("x1", "x2")),
    "add": ("add", ("x", "y"), ("x1", "x2")),
    "subtract": ("subtract", ("x", "y"), ("x1", "x2")),
    "multiply": ("multiply", ("x", "y"), ("x1", "x2")),
    "maximum": ("maximum", ("x", "y"), ("x1", "x2")),
    "minimum": ("minimum", ("x", "y"), ("x1", "x2")),
    "reduce_sum": ("sum", ("input_tensor", "axis", "keepdims"), ("x", "axis", "keepdims")),
    "reduce_mean": ("mean", ("input_tensor", "axis", "keepdims"), ("x", "axis", "keepdims")),
    "reduce_max": ("max", ("input_tensor", "axis", "keepdims"), ("x", "axis", "keepdims")),
    "reduce_min": ("min", ("input_tensor", "axis", "keepdims"), ("x", "axis", "keepdims")),
    "reduce_prod": ("prod", ("input_tensor", "axis", "keepdims"), ("x", "axis", "keepdims")),
    "split": ("split", ("value", "num_or_size_splits", "axis"), ("x", "indices_or_sections", "axis")),
}
for _name in ("abs", "exp", "sqrt", "square", "sigmoid", "tanh", "relu", "log", "sin", "cos", "negative"):
    _OPS[_name] = (_name, ("x",), _UNARY)
# The module a spelling may use for each op (tf.reduce_sum is tf.math.reduce_sum).
_MODULES = ("tensorflow.", "tensorflow.math.", "tensorflow.nn.")
_NN_ONLY = frozenset({"relu"})


def _op(qualname: str) -> Optional[str]:
    for prefix in _MODULES:
        if qualname.startswith(prefix):
            name = qualname[len(prefix):]
            if name in _OPS and (prefix == "tensorflow.nn." or name not in _NN_ONLY):
                return name
    return None


class Keras3TfOpOnSymbolicTensor(Rule):
    """A TensorFlow op applied to a Keras 3 symbolic tensor while building a functional model: `tf.split(inputs, 2)`.

    ## What it does
    Finds calls of TensorFlow functions (`tf.split`, `tf.concat`,
    `tf.reshape`, `tf.expand_dims`, `tf.nn.relu`, `tf.image.resize`...) that
    are given a Keras 3 symbolic tensor (a `KerasTensor`): the result of
    `keras.Input(...)` (or `tf.keras.Input` under TF 2.16+), of a Keras layer
    or model called on one (`Dense(4)(x)`, `base(x)`, a same-module layer
    class), a model's `.output`/`.outputs`/`.input`/`.inputs`, `keras.ops`
    and merge helpers (`keras.layers.concatenate`) applied to one, arithmetic
    and subscripts of one, through names (every binding that reaches the
    read), unpacking and list displays, and parameters of same-module
    functions every call of which passes one (`def block(x): ...;
    block(inputs)`), a parameter of a building block (a def that hands it
    to a layer, `Conv2D(8, 3)(x)`, or to another project module's block,
    and that runs in no graph), and the output of another project module's
    block (`common.conv_block(inputs, 64)`, through the project index).
    Through a module's classes too (`semantic.flow`): an item of a dict or
    list a method returns or an attribute holds (`self._inputs =
    self.build_inputs()` returning `dict(image=keras.Input(...))`, then
    `self._inputs["image"]` in a subclass), a list filled with one
    (`images.append(...)`; `tf.concat(images, 4)`), and a parameter of a
    method one call of the module passes one to (`self.log_stats(image)`
    while building the model: that call raises), unless the method tells
    tensors apart (`isinstance`, `is_keras_tensor`). The engine fact is
    `semantic.symbolic`.

    Only the TensorFlow functions measured to raise on a KerasTensor are
    reported: `scripts/derive_symbolic_ops.py` calls every public function
    of `tf`, `tf.math`, `tf.nn`, `tf.linalg`, `tf.image`, `tf.signal`,
    `tf.random`, `tf.bitwise` and `tf.strings` on a `keras.Input` and lists
    the 549 that raise (`semantic/symbolic_ops.py`); the 9 that accept one
    (`tf.print`, `tf.is_tensor`, `tf.get_static_value`...) and the ones no
    call could reach are not reported.

    Not reported: tf_keras code (`tf_keras.Input`, or `tf.keras` in a file
    that mentions `TF_USE_LEGACY_KERAS`), where the op became a
    `TFOpLambda` layer; code inside a `Lambda` function or a layer's `call`,
    which gets real tensors; `tf.print`; Python operators (`x + 1`,
    `x[:, 0]`), which KerasTensor supports; `keras.Input(tensor=...)`;
    code in a branch that never runs under Keras 3 (version guards, `except
    ValueError:` fallbacks) or a test that expects the error.

    ## Why is this bad?
    Measured under TensorFlow 2.21 with Keras 3.15: `tf.split(keras.Input((4,
    6)), 2, axis=-1)` raises `ValueError: A KerasTensor cannot be used as
    input to a TensorFlow function. A KerasTensor is a symbolic placeholder
    for a shape and dtype, used when constructing Keras Functional models or
    Keras Functions. You can only use it as input to a Keras layer or a
    Keras operation`. Of the 549 functions that raise, 335 ran under tf_keras
    2.21 in the same script (Keras 2 wrapped each into a `TFOpLambda`
    layer): model-building code written for Keras 2 fails at the first such
    line under TF 2.16+.

    ## Example
    ```python
    inputs = tf.keras.Input((32, 32, 6))
    left, right = tf.split(inputs, 2, axis=-1)
    merged = tf.concat([tf.keras.layers.Conv2D(8, 3)(left), right[:, 1:-1, 1:-1]], axis=-1)
    ```

    Use instead:
    ```python
    inputs = tf.keras.Input((32, 32, 6))
    left, right = keras.ops.split(inputs, 2, axis=-1)
    merged = keras.ops.concatenate([tf.keras.layers.Conv2D(8, 3)(left), right[:, 1:-1, 1:-1]], axis=-1)
    ```
    or wrap the TensorFlow code in a `keras.layers.Lambda` or a layer's
    `call`.

    ## Fix safety
    Safe, for the ops whose `keras.ops` twin takes the same arguments and
    computes the same result (`concat`→`concatenate`, `stack`, `reshape`,
    `expand_dims`, `squeeze`, `transpose`, `tile`, `cast`, `matmul`, `add`,
    `subtract`, `multiply`, `maximum`, `minimum`, `reduce_sum`→`sum`,
    `reduce_mean`→`mean`, `reduce_max`/`min`/`prod`, `split` with a literal
    number of equal parts, and element-wise `abs`, `exp`, `sqrt`, `square`,
    `sigmoid`, `tanh`, `log`, `sin`, `cos`, `negative`, `tf.nn.relu`): the
    call is renamed and its keywords mapped to `keras.ops`'s names. Unsafe
    when the call passes `name=`: `keras.ops` takes none, so the fix drops it
    (under tf_keras it named only the op inside the `TFOpLambda` layer, whose
    own name stayed `tf.reshape`: measured, the model's layer names are the
    same with and without it). A nested call (`tf.reshape(tf.concat([a, b],
    -1), ...)`) is reported at the innermost op; once that is rewritten, the
    next pass of `--fix` reports and rewrites the outer one. No fix with
    `*args`, `split` by a list of sizes (`keras.ops.split` takes indices), or
    any other op (wrap it in a layer). The tests run the original, which
    raises the ValueError, and the fixed model, which must build and predict.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the ValueError above, at model
    construction; `tf.keras.Input` is the same KerasTensor. tf_keras 2.21: the
    same lines build a model (`tf.split`, `tf.concat`, `tf.reduce_mean` on
    `model.output`, `tf.nn.max_pool2d`, `tf.image.resize`: `TFOpLambda`
    layers). examples/TFG907 (`tflint-gpu verify --rule TFG907`):
    fixes-error, `ValueError` before, the fixed model builds and predicts
    after.
    """

    code = "TFG907"
    name = "keras3-tf-op-on-symbolic-tensor"
    message = "A Keras 3 KerasTensor cannot be passed to a TensorFlow function"
    # Reported ops are TensorFlow's; a symbolic tensor may enter through a parameter of a building
    # block (`Conv2D(8, 3)(x)`, a project builder), with no Input or .output in the file.
    needs = (("tf", "tensorflow"),)
    fix_safety = Safety.SAFE
    migration = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if not node.args:
            return
        qualname = ctx.call_name(node)
        if qualname is None or qualname not in RAISES:
            return
        graph = ctx.graph()
        if graph is not None:
            return  # traced code gets real tensors
        if ctx.symbolic.symbolic_argument(node, ctx.scope, direct=True) is None:
            return
        if ctx.migration.guarded(node, ctx.scope):
            return
        name = short_name(qualname)
        op = _op(qualname)
        if op is not None:
            target = _OPS[op][0]
            message = (f"A Keras 3 KerasTensor cannot be passed to `{name}` (ValueError): use "
                       f"`keras.ops.{target}` or wrap it in a layer")
        else:
            message = (f"A Keras 3 KerasTensor cannot be passed to `{name}` (ValueError): use `keras.ops` or "
                       f"wrap it in a `keras.layers.Lambda` or a layer's `call`")
        ctx.report(node, message, self._fix(node, op, ctx) if op is not None else None)

    @staticmethod
    def _fix(node: cst.Call, op: str, ctx) -> Optional[Fix]:
        target, params, names = _OPS[op]
        mapping = dict(zip(params, names))
        args: List[cst.Arg] = []
        safety = Safety.SAFE
        for position, arg in enumerate(node.args):
            if arg.star:
                return None
            if arg.keyword is None:
                if position >= len(params):
                    return None
                args.append(arg)
                continue
            if arg.keyword.value == "name":  # keras.ops takes none; it named only the op inside a TFOpLambda
                safety = Safety.UNSAFE
                continue
            new = mapping.get(arg.keyword.value)
            if new is None:
                return None
            args.append(arg.with_changes(keyword=cst.Name(new)))
        if op == "split":
            sections = next((a.value for i, a in enumerate(node.args)
                             if (a.keyword is None and i == 1)
                             or (a.keyword is not None and a.keyword.value == "num_or_size_splits")), None)
            if not isinstance(sections, cst.Integer):
                return None
        found = ctx.module_expr("keras", f"ops.{target}")
        if found is None:
            return None
        func, imports = found
        if args:  # no trailing comma left by a dropped `name=`
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        title = f"Use `keras.ops.{target}`" + (" (drops `name=`)" if safety is Safety.UNSAFE else "")
        return Fix(title, safety, {node: node.with_changes(func=func, args=args)}, imports)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf


            class Registration:
                def __init__(self):
                    self._inputs = None
                    self._model = self.build_model()

                def build_model(self):
                    raise NotImplementedError

                def build_inputs(self):
                    return dict(image=tf.keras.Input((4,), name="image"))

                def stack(self, image, label=None):
                    images = []
                    images.append(tf.expand_dims(image, axis=2))
                    if label is not None:
                        images.append(tf.expand_dims(label, axis=2))
                    return tf.concat(images, axis=2)

                def log_stats(self, tensor):
                    return tf.reduce_mean(tensor, axis=1)


            class Stacked(Registration):
                def build_model(self):
                    self._inputs = self.build_inputs()
                    image = self._inputs["image"]
                    self.log_stats(image)
                    stacked = self.stack(image)
                    return tf.keras.Model(inputs=self._inputs, outputs=tf.keras.layers.Flatten()(stacked))


            class Checked(Registration):
                def describe(self, tensor):
                    if isinstance(tensor, tf.Tensor):
                        return tf.reduce_mean(tensor)
                    return None

                def build_model(self):
                    inputs = tf.keras.Input((4,))
                    self.describe(inputs)
                    return tf.keras.Model(inputs, inputs)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf
            import keras


            class Registration:
                def __init__(self):
                    self._inputs = None
                    self._model = self.build_model()

                def build_model(self):
                    raise NotImplementedError

                def build_inputs(self):
                    return dict(image=tf.keras.Input((4,), name="image"))

                def stack(self, image, label=None):
                    images = []
                    images.append(keras.ops.expand_dims(image, axis=2))
                    if label is not None:
                        images.append(tf.expand_dims(label, axis=2))
                    return keras.ops.concatenate(images, axis=2)

                def log_stats(self, tensor):
                    return keras.ops.mean(tensor, axis=1)


            class Stacked(Registration):
                def build_model(self):
                    self._inputs = self.build_inputs()
                    image = self._inputs["image"]
                    self.log_stats(image)
                    stacked = self.stack(image)
                    return tf.keras.Model(inputs=self._inputs, outputs=tf.keras.layers.Flatten()(stacked))


            class Checked(Registration):
                def describe(self, tensor):
                    if isinstance(tensor, tf.Tensor):
                        return tf.reduce_mean(tensor)
                    return None

                def build_model(self):
                    inputs = tf.keras.Input((4,))
                    self.describe(inputs)
                    return tf.keras.Model(inputs, inputs)
            """,
            at=[(18, 23, "A Keras 3 KerasTensor cannot be passed to `tf.expand_dims`"),
                (21, 16, "A Keras 3 KerasTensor cannot be passed to `tf.concat`"),
                (24, 16, "A Keras 3 KerasTensor cannot be passed to `tf.reduce_mean`")],
            run="""
            model = Stacked()._model
            y = model.predict({"image": np.ones((2, 4), np.float32)}, verbose=0)
            """,
            effect=FIXES_ERROR,
            note="issue 35 (DeepReg's RegistrationModel): a dict of Inputs a method returns, kept in self._inputs "
                 "and read by key in a subclass; methods of the base class given a KerasTensor by a call of "
                 "the module (one is enough: that call raises), a list filled with one; not the parameter "
                 "only its default fills (label), nor a method that tells tensors apart (isinstance)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            inputs = tf.keras.Input((4, 6))
            left, right = tf.split(inputs, 2, axis=-1)
            h = tf.keras.layers.Dense(3)(left)
            merged = tf.concat([h, right], axis=-1)
            flat = tf.reshape(merged, (-1, 24))
            pooled = tf.reduce_mean(flat, axis=-1, keepdims=True)
            model = tf.keras.Model(inputs, tf.expand_dims(pooled, 1))
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf
            import keras

            inputs = tf.keras.Input((4, 6))
            left, right = keras.ops.split(inputs, 2, axis=-1)
            h = tf.keras.layers.Dense(3)(left)
            merged = keras.ops.concatenate([h, right], axis=-1)
            flat = keras.ops.reshape(merged, (-1, 24))
            pooled = keras.ops.mean(flat, axis=-1, keepdims=True)
            model = tf.keras.Model(inputs, keras.ops.expand_dims(pooled, 1))
            """,
            at=[(5, 15, "A Keras 3 KerasTensor cannot be passed to `tf.split` (ValueError): use `keras.ops.split`"),
                (7, 10, "A Keras 3 KerasTensor cannot be passed to `tf.concat`"),
                (8, 8, "A Keras 3 KerasTensor cannot be passed to `tf.reshape`"),
                (9, 10, "A Keras 3 KerasTensor cannot be passed to `tf.reduce_mean`"),
                (10, 32, "A Keras 3 KerasTensor cannot be passed to `tf.expand_dims`")],
            run="""
            y = model.predict(np.ones((2, 4, 6), np.float32), verbose=0)
            """,
            effect=FIXES_ERROR,
            note="the issue's own example: unpacking a split, a layer call, a list of symbolic tensors, a rebinding",
        ),
        flagged(
            """
            import numpy as np
            import keras
            import tensorflow as tf
            from keras import layers

            def block(x, filters):
                y = layers.Conv2D(filters, 3, padding="same")(x)
                y = tf.nn.relu(y)
                return tf.add(x, y)

            def build():
                image = keras.Input((8, 8, 3))
                base = keras.Model(image, layers.Conv2D(3, 1)(image))
                x = base.output
                x = block(x, 3)
                out = layers.Dense(1)(layers.Flatten()(x))
                return keras.Model(base.input, tf.sigmoid(out))
            """,
            fixed="""
            import numpy as np
            import keras
            import tensorflow as tf
            from keras import layers

            def block(x, filters):
                y = layers.Conv2D(filters, 3, padding="same")(x)
                y = keras.ops.relu(y)
                return keras.ops.add(x, y)

            def build():
                image = keras.Input((8, 8, 3))
                base = keras.Model(image, layers.Conv2D(3, 1)(image))
                x = base.output
                x = block(x, 3)
                out = layers.Dense(1)(layers.Flatten()(x))
                return keras.Model(base.input, keras.ops.sigmoid(out))
            """,
            at=[(8, 9, "A Keras 3 KerasTensor cannot be passed to `tf.nn.relu`"),
                (9, 12, "A Keras 3 KerasTensor cannot be passed to `tf.add`"),
                (17, 36, "A Keras 3 KerasTensor cannot be passed to `tf.sigmoid`")],
            run="""
            y = build().predict(np.ones((2, 8, 8, 3), np.float32), verbose=0)
            """,
            effect=FIXES_ERROR,
            note="a model's .output; a helper whose every call passes a symbolic tensor",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            inputs = tf.keras.Input((4,))
            a = tf.keras.layers.Dense(4, kernel_initializer="ones")(inputs)
            b = tf.reshape(tf.concat([a, a * 2.0], -1), [-1, 2, 4], name="pairs")
            model = tf.keras.Model(inputs, b)
            """,
            at=[(6, 16, "A Keras 3 KerasTensor cannot be passed to `tf.concat`")],
            fixed="""
            import numpy as np
            import tensorflow as tf
            import keras

            inputs = tf.keras.Input((4,))
            a = tf.keras.layers.Dense(4, kernel_initializer="ones")(inputs)
            b = keras.ops.reshape(keras.ops.concatenate([a, a * 2.0], -1), [-1, 2, 4])
            model = tf.keras.Model(inputs, b)
            """,
            run="""
            y = model.predict(np.arange(8, dtype=np.float32).reshape(2, 4), verbose=0)
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            note="nested ops: the inner is reported; after its fix the outer is, and its `name=` is dropped "
                 "(unsafe); what tf_keras computed, Keras 3 computes",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            inputs = keras.Input((8, 8, 6))
            small = tf.image.resize(inputs, (4, 4))
            a, b = tf.split(small, [2, 4], axis=-1)
            c = tf.concat([a, b], -1, "merged")
            noise = tf.random.uniform(tf.shape(c))
            """,
            at=[(5, 9, "A Keras 3 KerasTensor cannot be passed to `tf.image.resize` (ValueError): use `keras.ops` or "
                       "wrap it"),
                (6, 8, "A Keras 3 KerasTensor cannot be passed to `tf.split`"),
                (7, 5, "A Keras 3 KerasTensor cannot be passed to `tf.concat`"),
                (8, 27, "A Keras 3 KerasTensor cannot be passed to `tf.shape`")],
            note="no exact rewrite: an op with no keras.ops twin, split by sizes (keras.ops.split takes indices), "
                 "a name passed by position; an op given only another op's result is not reported again (tf.random.uniform)",
        ),
        clean(
            """
            import numpy as np
            import keras
            import tensorflow as tf

            inputs = keras.Input((4, 6))
            left, right = keras.ops.split(inputs, 2, axis=-1)
            scaled = inputs * 2.0 + 1.0
            first = inputs[:, 0]
            halves = keras.layers.Lambda(lambda t: tf.split(t, 2, axis=-1))(inputs)
            tf.print(inputs)

            class Block(keras.layers.Layer):
                def call(self, x):
                    return tf.concat(tf.split(x, 2, axis=-1), axis=-1)

            def helper(x):
                return tf.reduce_sum(x)

            out = Block()(inputs)
            total = helper(tf.ones((2, 2)))
            model = keras.Model(inputs, out)
            y = tf.concat([tf.ones((1, 2)), tf.zeros((1, 2))], axis=0)
            """,
            note="Keras 3 code already migrated (keras.ops, operators, subscripts, a Lambda, a layer's call), tf.print; "
                 "a helper called with a real tensor; ops on real tensors",
        ),
        flagged(
            """
            import tensorflow as tf

            def conv_block(x, filters):
                x = tf.keras.layers.Conv2D(filters, 3)(x)
                return tf.image.resize(x, (8, 8))
            """,
            at=[(5, 12, "A Keras 3 KerasTensor cannot be passed to `tf.image.resize`")],
            note="a building block its module never calls (its callers are elsewhere): it hands its parameter "
                 "to a layer, so it builds a functional model",
        ),
        clean(
            """
            import tensorflow as tf

            def augment(image):
                image = tf.keras.layers.RandomFlip()(image)
                return tf.image.resize(image, (8, 8))

            dataset = dataset.map(augment)

            def features(x):
                return tf.image.resize(tf.keras.layers.Dense(4)(x), (2, 2))

            features(tf.ones((1, 4, 4, 3)))
            """,
            note="a block handed to a call (a `map` on an object the engine cannot tell: whoever runs it may "
                 "pass real tensors); a block its module calls with a real tensor",
        ),
        clean(
            """
            import tf_keras
            import tensorflow as tf

            inputs = tf_keras.Input((4, 6))
            left, right = tf.split(inputs, 2, axis=-1)
            model = tf_keras.Model(inputs, tf.concat([left, right], axis=-1))
            """,
            note="tf_keras: the ops become TFOpLambda layers (measured: builds)",
        ),
        clean(
            """
            import os
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            import tensorflow as tf

            inputs = tf.keras.Input((4, 6))
            out = tf.reduce_sum(inputs, axis=-1)
            """,
            note="TF_USE_LEGACY_KERAS: tf.keras may be Keras 2 here",
        ),
        clean(
            """
            import tensorflow as tf

            inputs = tf.keras.Input((4, 6))
            tf_version = tuple(int(part) for part in tf.__version__.split(".")[:2])
            if tf_version < (2, 16):
                out = tf.reduce_sum(inputs, axis=-1)
            try:
                out = tf.keras.ops.sum(inputs, axis=-1)
            except AttributeError:
                out = tf.reduce_sum(inputs, axis=-1)

            @tf.function
            def step(x):
                return tf.reduce_sum(x)
            """,
            note="a branch for TF older than 2.16; an except fallback; graph code gets real tensors",
        ),
    ]
