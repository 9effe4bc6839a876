"""ModelOutputs: how a Keras model the file builds makes its output, and which losses take probabilities."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.model_outputs import LINEAR, SIGMOID, SOFTMAX


def _facts(source: str):
    ctx = analyse(cst.parse_module(textwrap.dedent(source).lstrip("\n")), [])
    return ctx, ctx.model.root


def _name(name: str) -> cst.Name:
    return cst.Name(name)


def test_final_activation_of_sequential_functional_and_added_models():
    ctx, root = _facts("""
        import tensorflow as tf
        from tensorflow import keras

        a = keras.Sequential([keras.layers.Dense(8, activation="relu"), keras.layers.Dense(4)])
        b = keras.Sequential([keras.layers.Dense(4, "softmax")])
        c = keras.Sequential([keras.layers.Dense(4), keras.layers.Activation("sigmoid")])
        d = keras.Sequential([keras.layers.Dense(4), keras.layers.Lambda(lambda t: t)])
        inputs = keras.Input((3,))
        hidden = keras.layers.Dense(5, activation="relu")(inputs)
        e = keras.Model(inputs, keras.layers.Dense(2)(hidden))
        f = keras.Model(inputs=inputs, outputs=tf.nn.softmax(hidden))
        g = keras.Sequential()
        g.add(keras.layers.Dense(3, activation=tf.nn.softmax))
        g.add(keras.layers.Dense(3, activation=None))
        h = keras.models.load_model("m.keras")
        """)
    outputs = ctx.model_outputs
    got = {n: outputs.final_activation(_name(n), root) for n in "abcdefgh"}
    assert got == {"a": LINEAR, "b": SOFTMAX, "c": SIGMOID, "d": None, "e": LINEAR, "f": SOFTMAX, "g": LINEAR,
                   "h": None}


def test_probability_losses():
    ctx, root = _facts("""
        import keras

        a = keras.losses.SparseCategoricalCrossentropy()
        b = keras.losses.CategoricalCrossentropy(from_logits=True)
        c = keras.losses.BinaryCrossentropy(False)
        d = keras.losses.SparseCategoricalCrossentropy(from_logits=flag)
        e = keras.losses.MeanSquaredError()
        """)
    outputs = ctx.model_outputs
    got = {n: outputs.probability_loss(_name(n), root) for n in "abcde"}
    assert got == {"a": "categorical", "b": None, "c": "binary", "d": None, "e": None}
    assert outputs.probability_loss(cst.SimpleString('"binary_crossentropy"'), root) == "binary"
    assert outputs.probability_loss(cst.SimpleString('"mse"'), root) is None
