from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.attribute_typos import keras_attribute_meant, module_uses_attribute
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged


class KerasAttributeTypo(Rule):
    """`model.Trainable = False`: an attribute of a Keras model or layer set under a wrong-case name.

    ## What it does
    Finds an assignment to an attribute of a Keras model or layer whose name
    equals a public settable Keras attribute but for case
    (`model.Trainable = False`, `layer.Stop_training = True`). The settable
    attributes are derived from the installed Keras 3.15 and tf_keras 2.21
    (`scripts/derive_keras_attributes.py`: the properties with a setter of
    `Layer`, `Model`, `Sequential`, and the public plain attributes a layer
    and built, compiled and fit models hold: `trainable`, `stop_training`,
    `run_eagerly`, `jit_compile`...); an assigned name that Keras's classes
    themselves have is never reported. The receiver is what the engine types
    as a Keras model or layer: made by a Keras class or `load_model`, a
    `keras.applications` model, `model.layers[i]`, `for layer in
    model.layers`, also a name that may be one of those or an unknown
    parameter (`if isinstance(model, str): model = load_model(model)`).

    Not reported: a file that treats the name as an attribute of its own
    (reads `.Trainable` anywhere, names it in a string, defines it in a class
    body: a subclass of the project's own may keep `self.Trainable` on
    purpose), a receiver that is not known to be a Keras object, and
    misspellings other than case (`trainabel`: not told apart from a name of
    the project's own).

    ## Why is this bad?
    Keras layers and models accept any new attribute: `model.Trainable =
    False` adds a plain Python attribute called `Trainable` and leaves
    `trainable` as it was. Nothing warns; the layers the code means to
    freeze keep training (or the ones it means to unfreeze stay frozen), and
    a fine-tuning recipe silently trains the whole network.

    ## Example
    ```python
    base_model = keras.applications.MobileNetV2(include_top=False)
    base_model.Trainable = False
    ```

    Use instead:
    ```python
    base_model = keras.applications.MobileNetV2(include_top=False)
    base_model.trainable = False
    ```

    ## Fix safety
    Unsafe: renaming to the real attribute changes what the program does (it
    is the point): the layers are frozen (or the run stops, or runs eagerly)
    as the code says, so training gives other weights. Code reading the
    wrong-case name is not reported, so nothing is left reading the old one.

    ## Measured effect
    TF 2.21 CPU, Keras 3.15.1 and tf_keras 2.21.0: on a two-layer
    `Sequential`, `model.Trainable = False` and `model.layers[0].Trainable =
    False` raise nothing; `len(model.trainable_weights)` stays 4,
    `model.trainable` stays True, one epoch of `fit` still changes the first
    kernel; `model.trainable = False` makes it 0. examples/TFG614
    (fixes-behaviour): before, the "frozen" pretrained base's weights move
    during fine-tuning; after, they stay exactly as loaded.
    """

    code = "TFG614"
    name = "keras-attribute-typo"
    message = "This sets a new attribute, not the Keras attribute of that name"
    fix_safety = Safety.UNSAFE
    needs = ()

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        for target in node.targets:
            attribute = target.target
            if not isinstance(attribute, cst.Attribute):
                continue
            name = attribute.attr.value
            meant = keras_attribute_meant(name)
            if meant is None or module_uses_attribute(ctx.model.source, name) \
                    or not ctx.may_be_keras_object(attribute.value):
                continue
            ctx.report(attribute.attr,
                       f"`{name}` is not a Keras attribute: Keras layers and models accept any new attribute, "
                       f"so this sets a plain `{name}` and leaves `{meant}` unchanged; write `{meant}`",
                       fix=Fix(f"Set `{meant}`", Safety.UNSAFE, {attribute.attr: cst.Name(meant)}))


_RUN = """
import numpy as np
x = np.ones((8, 4), "float32")
moved = []
for net in (model, legacy):
    before = [w.numpy().copy() for w in net.weights]
    net.compile("sgd", "mse")
    net.fit(x, np.ones((8, 1), "float32"), epochs=1, verbose=0)
    moved.append([float(np.abs(w.numpy() - b).max()) for w, b in zip(net.weights, before)])
"""

KerasAttributeTypo.cases = [
    flagged(
        """
        import tensorflow as tf
        import tf_keras

        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dense(1)])
        model.layers[0].Trainable = False
        legacy = tf_keras.Sequential([tf_keras.Input((4,)), tf_keras.layers.Dense(3), tf_keras.layers.Dense(1)])
        legacy.layers[0].Trainable = False
        """,
        """
        import tensorflow as tf
        import tf_keras

        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dense(1)])
        model.layers[0].trainable = False
        legacy = tf_keras.Sequential([tf_keras.Input((4,)), tf_keras.layers.Dense(3), tf_keras.layers.Dense(1)])
        legacy.layers[0].trainable = False
        """,
        at=[(5, 17, "`Trainable` is not a Keras attribute: Keras layers and models accept any new attribute, so "
                    "this sets a plain `Trainable` and leaves `trainable` unchanged; write `trainable`"),
            (7, 18, "`Trainable` is not a Keras attribute")],
        run=_RUN,
        effect=CHANGES,
        note="before: the first layer's weights move in fit; after: they stay (moved 0.0), Keras 3 and tf_keras",
    ),
    flagged(
        """
        import tensorflow as tf
        from tensorflow.keras.models import load_model

        def change_model_output(net, num_classes):
            if net.output.shape[-1] != num_classes:
                net.Trainable = True
                x = net.layers[-2].output
                return tf.keras.Model(net.input, tf.keras.layers.Dense(num_classes)(x))
            return net

        def main():
            model = load_model("model.h5")
            return change_model_output(model, 10)

        def set_model(model):
            if isinstance(model, str):
                model = tf.keras.models.load_model(model)
            model.Trainable = True
            return model

        def freeze_base():
            base = tf.keras.applications.MobileNetV2(include_top=False, weights=None)
            for layer in base.layers:
                layer.Trainable = False
            base.Stop_Training = True
            return base
        """,
        """
        import tensorflow as tf
        from tensorflow.keras.models import load_model

        def change_model_output(net, num_classes):
            if net.output.shape[-1] != num_classes:
                net.trainable = True
                x = net.layers[-2].output
                return tf.keras.Model(net.input, tf.keras.layers.Dense(num_classes)(x))
            return net

        def main():
            model = load_model("model.h5")
            return change_model_output(model, 10)

        def set_model(model):
            if isinstance(model, str):
                model = tf.keras.models.load_model(model)
            model.trainable = True
            return model

        def freeze_base():
            base = tf.keras.applications.MobileNetV2(include_top=False, weights=None)
            for layer in base.layers:
                layer.trainable = False
            base.stop_training = True
            return base
        """,
        at=[(6, 13, "`Trainable` is not a Keras attribute"),
            (18, 11, "`Trainable` is not a Keras attribute"),
            (24, 15, "`Trainable` is not a Keras attribute"),
            (25, 10, "`Stop_Training` is not a Keras attribute")],
        run="""
            m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dense(2)])
            m.trainable = False
            change_model_output(m, 5)
            k = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3)])
            k.trainable = False
            set_model(k)
            counts = [len(m.trainable_weights), len(k.trainable_weights)]
            """,
        effect=CHANGES,
        note="andreacos/Deep-Neural-Networks-Robust-Watermark Finetune_or_TransferLearning_*.py and "
             "CnnWatermarker.py: a parameter every call gives a loaded model, a parameter that may be a path "
             "(unfreezing a frozen model: trainable weights 0 before, 4 and 2 after); layers of an application "
             "model; any settable attribute (stop_training)",
    ),
    clean(
        """
        import tensorflow as tf

        class Block(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.Trainable = True

            def call(self, x):
                return x if self.Trainable else tf.stop_gradient(x)

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.trainable = False
        model.Foo = 3
        model.layers[0].trainable = True

        class Config:
            pass

        config = Config()
        config.Run_Eagerly = True

        def unknown(thing):
            thing.Jit_Compile = False
        """,
        note="a name the project reads as its own (Block.Trainable); the real attribute; a new name that is no "
             "Keras attribute's; a receiver that is not a Keras object (a project class, an unknown parameter)",
    ),
]
