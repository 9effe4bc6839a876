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


def _call_at(root, source_line: str, ctx):
    """The first call whose code is ``source_line``'s call (``name(...)``), and its scope."""
    for call, scope in ctx.model.index["Call"]:
        if cst.Module([]).code_for_node(call) == source_line:
            return call, scope
    raise AssertionError(source_line)


def test_probabilities_through_activations_models_and_same_module_calls():
    ctx, root = _facts("""
        import tensorflow as tf
        from tensorflow import keras

        seq = keras.Sequential([keras.layers.Dense(3, activation="softmax")])
        bin_ = keras.Sequential([keras.layers.Dense(1, activation="sigmoid")])
        lin = keras.Sequential([keras.layers.Dense(3)])

        class Net(keras.Model):
            def __init__(self):
                super().__init__()
                self.head = keras.layers.Dense(3, activation="softmax")
                self.plain = keras.layers.Dense(3)

            def call(self, x, training=False):
                x = self.plain(x)
                if not training:
                    x = tf.nn.softmax(x)
                return x

            def probs(self, x):
                return self.head(x)

        class Early(tf.Module):
            def __call__(self, x, train=True):
                if train:
                    return x
                return tf.sigmoid(x)

        net = Net()
        early = Early()

        def helper(h):
            return keras.activations.softmax(h)

        a = tf.nn.softmax(h)
        b = seq(x)
        c = bin_.predict(x)
        d = lin(x)
        e = net(x)
        f = net(x, training=True)
        g = net(x, training=flag)
        i = early(x)
        j = early(x, train=False)
        k = helper(h)
        m = net.probs(x)
        """)
    outputs = ctx.model_outputs
    got = {}
    for name in "abcdefgijkm":
        found = outputs.probabilities(_name(name), root)
        got[name] = None if found is None else (found.kind, found.keras)
    assert got == {"a": (SOFTMAX, False), "b": (SOFTMAX, True), "c": (SIGMOID, True), "d": None,
                   "e": (SOFTMAX, False), "f": None, "g": None, "i": None, "j": (SIGMOID, False),
                   "k": (SOFTMAX, True), "m": (SOFTMAX, True)}


def test_logits_argument_and_the_helpers_that_hand_a_parameter_on():
    ctx, root = _facts("""
        import tensorflow as tf
        import keras

        def ce(pred, y):
            return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=pred))

        def rebinds(pred, y):
            pred = pred * 2
            return tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=pred)

        def plain(pred, y):
            return keras.losses.sparse_categorical_crossentropy(y, pred)

        tf.nn.softmax_cross_entropy_with_logits(labels, z)
        keras.losses.BinaryCrossentropy(from_logits=True)(y, z)
        keras.losses.BinaryCrossentropy()(y, z)
        keras.losses.categorical_crossentropy(y, z, from_logits=True)
        tf.compat.v1.losses.sigmoid_cross_entropy(y, z)
        """)
    outputs = ctx.model_outputs
    spelled = {}
    for call, scope in ctx.model.index["Call"]:
        found = outputs.logits_argument(call, scope)
        if found is not None and scope is root:
            spelled[found.loss] = (cst.Module([]).code_for_node(found.logits), found.keras, found.activation)
    assert spelled == {
        "tensorflow.nn.softmax_cross_entropy_with_logits": ("z", False, SOFTMAX),
        "keras.losses.BinaryCrossentropy": ("z", True, SIGMOID),
        "keras.losses.categorical_crossentropy": ("z", True, SOFTMAX),
        "tensorflow.losses.sigmoid_cross_entropy": ("z", False, SIGMOID),
    }
    handed = outputs.logits_parameter(root.defs["ce"])
    assert handed is not None and handed[:2] == (0, "pred")
    assert outputs.logits_parameter(root.defs["rebinds"]) is None  # not handed on unchanged
    assert outputs.logits_parameter(root.defs["plain"]) is None  # takes probabilities


def test_the_model_a_rebound_name_holds_at_a_read():
    """With ``at``, the model a name holds there and the layers added to that one: a notebook's
    ``model`` rebuilt cell after cell, or in a loop; without it, a name bound more than once is not told."""
    ctx, root = _facts("""
        import tensorflow as tf

        model = "a hub handle"
        for units in (1, 2):
            model = tf.keras.Sequential()
            model.add(tf.keras.layers.Dense(8, activation="relu"))
            model.add(tf.keras.layers.Dense(1))
            model.compile("adam", "mse")
        model = tf.keras.Sequential()
        model.add(tf.keras.layers.Dense(3))
        model.compile("adam", "mse")
        model = tf.keras.Sequential()
        model.add(tf.keras.layers.Dense(1, activation="sigmoid"))
        model.compile("adam", "mse")
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, activation="softmax")])
        model.compile("adam", "mse")
        """)
    outputs = ctx.model_outputs
    compiles = [c for c in root.calls if isinstance(c.func, cst.Attribute) and c.func.attr.value == "compile"]
    reads = [c.func.value for c in compiles]
    got = [(outputs.final_activation(r, root, at=r), outputs.final_width(r, root, at=r)) for r in reads]
    assert got == [(LINEAR, 1), (LINEAR, 3), (SIGMOID, 1), (SOFTMAX, 2)]
    assert outputs.final_activation(reads[1], root) is None  # bound five times: not told without `at`
