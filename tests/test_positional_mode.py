"""semantic/positional_mode.py: a Keras layer or model called with its mode by position, and the
keyword Keras 2 bound it to; semantic/keras_hidden.py's table."""
from __future__ import annotations

import json
import os

from tflint_gpu.semantic.keras_hidden import hidden_names
from tflint_gpu.semantic.positional_mode import positional_mode, training_second

from test_training_layers import _ctx, _find

SOURCE = """
    import tensorflow as tf
    import tf_keras
    from tensorflow import keras


    class Block(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.drop = keras.layers.Dropout(0.5)
            self.old = tf_keras.layers.Dropout(0.5)
            self.dense = keras.layers.Dense(3)
            self.attention = keras.layers.MultiHeadAttention(2, 4)

        def call(self, x, training=None):
            return self.drop(x, training), self.drop(x, None), self.old(x, training), self.dense(x, training)


    class Masked(keras.layers.Layer):
        def call(self, x, mask=None, training=None):
            return x


    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.masked = Masked()
            self.seq = keras.Sequential([keras.layers.Dense(2)])

        def call(self, x, is_training=False):
            mode = x > 0
            return (self.block(x, is_training), self.masked(x, is_training), self.seq(x, True),
                    self.block(x, mode), self.attention(x, x), self.block(x, is_training, None))
"""


def _answer(ctx, function, text):
    call, scope = _find(ctx, function, text)
    found = positional_mode(call, scope, ctx.migration, ctx.training_layers)
    return None if found is None else (found[0].value.value, found[1])


def test_which_calls_pass_a_mode_by_position_and_the_keyword():
    ctx = _ctx(SOURCE)
    assert _answer(ctx, "call", "self.drop(x, training)") == ("training", "training")  # a Keras layer
    assert _answer(ctx, "call", "self.drop(x, None)") is None  # None by position: Keras 3 takes it
    assert _answer(ctx, "call", "self.old(x, training)") is None  # tf_keras
    assert _answer(ctx, "call", "self.dense(x, training)") is None  # Dense takes no training: Keras 2 failed too


def test_a_same_module_class_gives_its_own_second_parameter():
    import libcst as cst

    ctx = _ctx(SOURCE)
    net_call = [s for s in ctx.model.scopes if s.name == "call"][-1]
    found = {}
    for call in net_call.calls:
        result = positional_mode(call, net_call, ctx.migration, ctx.training_layers)
        if result is not None:
            found[cst.Module([]).code_for_node(call)] = result[1]
    # Block.call's second parameter is `training`; Masked.call's is `mask` (what Keras 2 bound); a mode
    # followed by more positionals is found too (the rule offers no fix there). Not found: a tensor
    # (`mode`), a second tensor (attention).
    assert found == {"self.block(x, is_training)": "training", "self.masked(x, is_training)": "mask",
                     "self.seq(x, True)": "training", "self.block(x, is_training, None)": "training"}


def test_the_derived_tables():
    assert {"keras.layers.Dropout", "keras.layers.BatchNormalization", "keras.Model",
            "keras.Sequential"} <= training_second()
    assert "keras.layers.Dense" not in training_second()
    here = os.path.join(os.path.dirname(os.path.dirname(__file__)), "tflint_gpu", "semantic", "data")
    with open(os.path.join(here, "keras_call_training.json"), encoding="utf-8") as handle:
        assert set(json.load(handle)["executed"]) <= training_second()
    assert "loss" in hidden_names()["model"] and "loss" not in hidden_names()["layer"]


def test_an_element_of_a_list_of_same_module_layers():
    import libcst as cst

    ctx = _ctx("""
        import tensorflow as tf

        class Block(tf.keras.layers.Layer):
            def call(self, inputs, training):
                return inputs

        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.blocks = [Block() for _ in range(3)]
                self.mixed = [Block(), tf.keras.layers.Dense(2)]

            def call(self, x, training):
                for block in self.blocks:
                    x = block(x, training)
                for other in self.mixed:
                    x = other(x, training)
                return x
    """)
    net_call = [s for s in ctx.model.scopes if s.name == "call"][-1]
    found = {cst.Module([]).code_for_node(c): positional_mode(c, net_call, ctx.migration, ctx.training_layers)
             for c in net_call.calls}
    assert found["block(x, training)"][1] == "training"
    assert found["other(x, training)"] is None  # elements of two classes
