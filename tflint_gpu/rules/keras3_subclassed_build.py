from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.semantic.names import normalize
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged

# Keras's subclassable model class, as ``normalize`` spells it: Keras 2's ``Model.build(shape)``
# traced ``call``; Keras 3's builds nothing for a subclass without its own ``build``.
_MODEL = frozenset({"keras.Model", "keras.models.Model", "keras.engine.training.Model"})
_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))


class Keras3SubclassedBuild(Rule):
    """`model.build(input_shape)` on a subclassed Keras 3 model without `build`: it creates no weights.

    ## What it does
    Finds `X.build(S)` / `X.build(input_shape=S)` where every value that
    reaches `X` is an instance of one of the project's own subclasses of
    `keras.Model` (made in the same module, in another module, or by a
    project function that returns one: `model = resnet_50()` with `def
    resnet_50(): return ResNetTypeII(...)` in `models/resnet.py`, every
    reassignment agreeing) whose body, and whose project bases' bodies, define
    no `build` but a `call`. Not reported: functional and `Sequential`
    models, `Layer` subclasses (Keras 2's `Layer.build` created nothing
    either), classes with their own `build`, objects the engine cannot trace
    to such a class, tf_keras classes, and projects that target Keras 2.

    ## Why is this bad?
    Keras 2's `Model.build(input_shape)` traced the model's `call` on a
    placeholder of that shape, creating every sub-layer's weights. Keras 3's
    default `build` does not: it marks the model built, warns ("`build()` was
    called on layer ..., however the layer does not have a `build()` method
    implemented and it looks like it has unbuilt state"), and leaves the
    sub-layers unbuilt. `summary()` then shows 0 parameters,
    `save_weights` right after saves no variables, and `load_weights` into a
    model so built fails ("Layer 'batch_normalization' was never built and
    thus it doesn't have any variables"), as in a real ResNet project whose
    `evaluate.py` loads weights into `get_model()`'s result.

    ## Example
    ```python
    model = resnet_50()  # a tf.keras.Model subclass with a call, no build
    model.build(input_shape=(None, 224, 224, 3))
    ```

    Use instead:
    ```python
    model = resnet_50()
    model(tf.keras.Input(batch_shape=(None, 224, 224, 3)), training=False)
    ```

    ## Fix safety
    Rewritten only where `S` is a tuple or list display of one input's
    dimensions (no nested tuple: one input) and the call is a statement of
    its own: `X(keras.Input(batch_shape=S), training=False)`, with Keras
    spelled as the file spells it (`tf.keras.Input` in a file that reaches
    Keras through TensorFlow). Calling the model on a symbolic input of that
    batch shape creates the same weights, with the same shapes and initial
    values, that Keras 2's `build` created (executed: the original under
    tf_keras, the fix under Keras 3, identical weights and outputs).
    `training=False` is what Keras 2's `build` gave a `call(self, x,
    training)` without a default (without it Keras 3 raises `TypeError:
    missing a required argument: 'training'`); Keras 3 drops it for a `call`
    that takes no `training`. Unsafe: Keras 3 runs `call`'s Python code
    twice for it (once to build, once to compute the output), where Keras
    2's `build` ran it once, so a `print` or a counter in `call` sees one
    more call; and a `call` Keras 3 cannot trace symbolically now raises at
    this line instead of at the model's first use.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, tf_keras 2.21, CPU: a subclassed model
    (Conv2D, BatchNormalization, Dense) given `build(input_shape=(None, 8,
    8, 3))`: 8 weights under tf_keras, 0 under Keras 3 (with the warning);
    after the fix, 8 weights under Keras 3, of the same shapes and initial
    values (a Layer subclass: 0 weights after `build` in both flavours).
    The ResNet project's `get_model()`: `summary()` showed 0 parameters
    (11,192,451 under tf_keras) and `evaluate.py`'s `load_weights` failed;
    google/automl's `EfficientDetNet('efficientdet-d0').build((1, 256, 256,
    3))`: 709 weights under tf_keras, 0 under Keras 3. Loading saved weights
    into a model so built raised `ValueError: A total of 4 objects could not
    be loaded` where the sub-layers sat in a Sequential of custom layers, and
    loaded nothing, silently, where they were the model's own attributes
    (its outputs were the fresh model's). examples/TFG927 (`tflint-gpu
    verify --rule TFG927`): fixes-error.
    """

    code = "TFG927"
    name = "keras3-subclassed-build"
    message = "Keras 3's `build(input_shape)` creates no weights for a subclassed model without `build`"
    needs = ((".build",),)
    fix_safety = Safety.UNSAFE
    migration = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "build" or not isinstance(func.value, cst.Name):
            return
        shape = self._shape(node)
        if shape is None:
            return
        classes = ctx.made_classes(func.value)
        if not classes or not all(self._unbuilt_model(c, ctx) for c in classes):
            return
        names = ", ".join(f"`{c.name.rsplit('.', 1)[-1]}`" for c in classes)
        ctx.report(node, f"Keras 3's `build(input_shape)` creates no weights for {names} (a subclassed model "
                         f"without `build`: Keras 2 traced `call`): call the model on "
                         f"`keras.Input(batch_shape=...)` instead", self._fix(node, shape, ctx))

    @staticmethod
    def _shape(node: cst.Call) -> Optional[cst.BaseExpression]:
        """The shape ``build`` is given (its one argument, by position or as ``input_shape=``)."""
        if len(node.args) != 1 or node.args[0].star:
            return None
        arg = node.args[0]
        if arg.keyword is not None and arg.keyword.value != "input_shape":
            return None
        return arg.value

    @staticmethod
    def _unbuilt_model(made, ctx) -> bool:
        """Is ``made`` (``semantic.instances.MadeClass``) a Keras 3 ``Model`` subclass with a ``call``
        and no ``build`` of its own or of a project base, and no base outside the project but Keras's
        ``Model``?"""
        if "build" in made.members or "call" not in made.members or not made.bases:
            return False
        if not all(normalize(base) in _MODEL for base in made.bases):
            return False
        return ctx.graphs.raw_keras_flavour(made.bases[0]) == KERAS3

    @staticmethod
    def _fix(node: cst.Call, shape: cst.BaseExpression, ctx) -> Optional[Fix]:
        if not isinstance(shape, (cst.Tuple, cst.List)) or not shape.elements or any(
                isinstance(e, cst.StarredElement) or isinstance(e.value, (cst.Tuple, cst.List, cst.Dict, cst.Set))
                for e in shape.elements):
            return None  # several inputs, or a shape the code computes
        parent = next(iter(ctx.scope.ancestors(node)), None)
        if not isinstance(parent, cst.Expr):
            return None  # its value (None) is used
        found = ctx.keras_expr("Input")
        if found is None:
            return None
        made, imports = found
        symbolic = cst.Call(made, [cst.Arg(shape, keyword=cst.Name("batch_shape"), equal=_EQUAL)])
        # Keras 2's build gave a `call(self, x, training)` without default `training=False`; Keras 3
        # drops the argument for a `call` without `training`.
        mode = cst.Arg(cst.Name("False"), keyword=cst.Name("training"), equal=_EQUAL)
        return Fix("Call the model on `keras.Input(batch_shape=...)`", Safety.UNSAFE,
                   {node: node.with_changes(func=node.func.value,
                                            args=[cst.Arg(symbolic, comma=cst.Comma(
                                                whitespace_after=cst.SimpleWhitespace(" "))), mode])}, imports)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf


            class Net(tf.keras.Model):
                def __init__(self, units):
                    super().__init__()
                    self.conv = tf.keras.layers.Conv2D(4, 3, kernel_initializer="ones")
                    self.norm = tf.keras.layers.BatchNormalization()
                    self.head = tf.keras.layers.Dense(units, kernel_initializer="ones")

                def call(self, inputs, training=None, mask=None):
                    x = tf.nn.relu(self.norm(self.conv(inputs), training=training))
                    return self.head(tf.reduce_mean(x, axis=[1, 2]))


            def small():
                return Net(2)


            def get_model(wide):
                model = small()
                if wide:
                    model = Net(3)
                model.build(input_shape=(None, 8, 8, 3))
                return model


            net = get_model(False)
            """,
            at=[(25, 5, "Keras 3's `build(input_shape)` creates no weights for `Net` (a subclassed model without "
                        "`build`: Keras 2 traced `call`)")],
            fixed="""
            import numpy as np
            import tensorflow as tf


            class Net(tf.keras.Model):
                def __init__(self, units):
                    super().__init__()
                    self.conv = tf.keras.layers.Conv2D(4, 3, kernel_initializer="ones")
                    self.norm = tf.keras.layers.BatchNormalization()
                    self.head = tf.keras.layers.Dense(units, kernel_initializer="ones")

                def call(self, inputs, training=None, mask=None):
                    x = tf.nn.relu(self.norm(self.conv(inputs), training=training))
                    return self.head(tf.reduce_mean(x, axis=[1, 2]))


            def small():
                return Net(2)


            def get_model(wide):
                model = small()
                if wide:
                    model = Net(3)
                model(tf.keras.Input(batch_shape=(None, 8, 8, 3)), training=False)
                return model


            net = get_model(False)
            """,
            run="""
            count = len(net.weights)
            total = float(sum(np.sum(w.numpy()) for w in net.weights))
            x = np.linspace(-1.0, 1.0, 2 * 8 * 8 * 3, dtype=np.float32).reshape(2, 8, 8, 3)
            out = net(x, training=False)
            """,
            effect=CHANGES,
            keras2_before=True,
            note="a factory's model and a reassignment in a branch, both `Net`: 8 weights under tf_keras's build, "
                 "0 under Keras 3's, 8 after the fix",
        ),
        flagged(
            """
            import numpy as np
            from tensorflow import keras


            class Base(keras.Model):
                def call(self, x, training):
                    return self.out(self.hidden(x))


            class Mlp(Base):
                def __init__(self):
                    super().__init__()
                    self.hidden = keras.layers.Dense(4, kernel_initializer="ones")
                    self.out = keras.layers.Dense(1, kernel_initializer="ones")


            class Two(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = keras.layers.Dense(1, kernel_initializer="ones")

                def call(self, xs):
                    return self.dense(xs[0] + xs[1])


            mlp = Mlp()
            mlp.build([None, 3])
            built = mlp.build((None, 3))
            pair = Two()
            pair.build([(None, 3), (None, 3)])
            """,
            at=[(27, 1, "Keras 3's `build(input_shape)` creates no weights for `Mlp`"),
                (28, 9, "Keras 3's `build(input_shape)` creates no weights for `Mlp`"),
                (30, 1, "Keras 3's `build(input_shape)` creates no weights for `Two`")],
            fixed="""
            import numpy as np
            from tensorflow import keras


            class Base(keras.Model):
                def call(self, x, training):
                    return self.out(self.hidden(x))


            class Mlp(Base):
                def __init__(self):
                    super().__init__()
                    self.hidden = keras.layers.Dense(4, kernel_initializer="ones")
                    self.out = keras.layers.Dense(1, kernel_initializer="ones")


            class Two(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = keras.layers.Dense(1, kernel_initializer="ones")

                def call(self, xs):
                    return self.dense(xs[0] + xs[1])


            mlp = Mlp()
            mlp(keras.Input(batch_shape=[None, 3]), training=False)
            built = mlp.build((None, 3))
            pair = Two()
            pair.build([(None, 3), (None, 3)])
            """,
            run="""
            count = len(mlp.weights)
            total = float(sum(np.sum(w.numpy()) for w in mlp.weights))
            out = mlp(np.ones((2, 3), np.float32), training=False)
            """,
            effect=CHANGES,
            keras2_before=True,
            note="`call(x, training)` in a same-module base (Keras 2's build gave it training=False), Keras "
                 "through `from tensorflow import keras`, a list shape; "
                 "not fixed: a build whose value is used, two inputs",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras


            class Own(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = tf.keras.layers.Dense(2)

                def build(self, input_shape):
                    self.dense.build(input_shape)
                    super().build(input_shape)

                def call(self, x):
                    return self.dense(x)


            class Child(Own):
                def call(self, x):
                    return 2 * self.dense(x)


            class Stack(tf.keras.Sequential):
                pass


            class Block(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.dense = tf.keras.layers.Dense(2)

                def call(self, x):
                    return self.dense(x)


            class Old(tf_keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = tf_keras.layers.Dense(2)

                def call(self, x):
                    return self.dense(x)


            class Plain(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = tf.keras.layers.Dense(2)

                def call(self, x):
                    return self.dense(x)


            def make(model):
                model.build((None, 3))


            inputs = tf.keras.Input((3,))
            functional = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
            functional.build((None, 3))
            own = Own()
            own.build((None, 3))
            child = Child()
            child.build((None, 3))
            stack = Stack([tf.keras.layers.Dense(2)])
            stack.build((None, 3))
            block = Block()
            block.build((None, 3))
            old = Old()
            old.build((None, 3))
            either = Plain() if own.built else Own()
            either.build((None, 3))
            """,
            note="a functional model; a class with `build`, and its subclass; a Sequential subclass; a Layer "
                 "(Keras 2's Layer.build built nothing either); tf_keras; a parameter; one candidate with `build`",
        ),
    ]
