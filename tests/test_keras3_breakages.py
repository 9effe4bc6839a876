"""Keras 3 breakages a table diff cannot see: the engine facts behind TFG907 and up.

semantic/symbolic.py: which expressions are Keras 3 symbolic tensors (KerasTensor) and
semantic/symbolic_ops.py: which TensorFlow functions were measured to reject one.
"""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.symbolic_ops import ACCEPTS, RAISES


def probes(source: str):
    """``is_symbolic`` of the argument of every ``probe(...)`` call, in source order."""
    module = cst.parse_module(textwrap.dedent(source).lstrip("\n"))
    ctx = analyse(module, [])
    found = []
    for call, scope in ctx.model.index.get("Call", ()):
        if isinstance(call.func, cst.Name) and call.func.value == "probe":
            found.append(ctx.symbolic.is_symbolic(call.args[0].value, scope))
    return found


def test_keras_input_and_layer_calls_are_symbolic():
    assert probes("""
        import tensorflow as tf
        import keras
        inputs = keras.Input((4,))
        probe(inputs)
        h = keras.layers.Dense(3)(inputs)
        probe(h)
        probe(tf.keras.Input((2,)))
        probe(keras.layers.Input(shape=(2,)))
        probe(h * 2 + 1)
        probe(h[:, 0])
        probe(-h)
        probe(keras.ops.sum(h))
        probe(keras.layers.concatenate([h, inputs]))
        probe(keras.layers.Concatenate()([h, inputs]))
    """) == [True] * 10


def test_flow_rebinding_unpacking_iteration():
    assert probes("""
        import keras
        x = keras.Input((4,))
        x = keras.layers.Dense(3)(x)
        probe(x)
        out, state = keras.layers.GRU(2, return_state=True)(keras.Input((5, 3)))
        probe(out)
        probe(state)
        for t in [x, out]:
            probe(t)
        pair = [x, out]
        probe(pair[0])
        x = 3
        probe(x)
    """) == [True, True, True, True, True, False]


def test_a_long_chain_of_layers_is_read_to_its_input():
    """A functional model is a long chain `x = Layer(...)(x)`: every link is read (the depth bound
    resumed where it cut), and one link that is not a KerasTensor breaks the chain."""
    chain = "x = keras.layers.Dense(8)(x)\n" * 60
    assert probes("import keras\nx = keras.Input((8,))\n" + chain + "probe(x)\n") == [True]
    assert probes("import keras\nimport numpy as np\nx = np.ones((2, 8))\n" + chain + "probe(x)\n") == [False]
    middle = "x = keras.layers.Dense(8)(x)\n" * 30
    assert probes("import keras\nx = keras.Input((8,))\n" + middle + "x = np.ones((2, 8))\n" + middle
                  + "probe(x)\n") == [False]


def test_model_outputs_and_helpers():
    assert probes("""
        import keras

        base = keras.applications.MobileNetV2(include_top=False, weights=None)
        probe(base.output)
        probe(base.input)
        probe(base.outputs[0])

        def block(x):
            y = keras.layers.Dense(3)(x)
            probe(y)
            return y

        def head(x):
            probe(x)
            return keras.layers.Dense(1)(x)

        feature = block(keras.Input((4,)))
        probe(feature)
        head(keras.Input((3,)))
        head(keras.Input((5,)))
    """) == [True, True, True, True, True, True]


def _sources(source: str) -> bool:
    ctx = analyse(cst.parse_module(textwrap.dedent(source).lstrip("\n")), [])
    return ctx.symbolic.may_hold_symbolic()


def test_a_module_with_no_source_of_a_keras_tensor_is_not_read(monkeypatch):
    """Every KerasTensor comes from an `Input` call, a `.output`-like attribute or a building
    block's parameter (handed to a called call or a project builder): a module with none of them
    answers no without reading its chains of TensorFlow ops (which can go round its defs many times)."""
    from tflint_gpu.semantic.symbolic import SymbolicTensors

    plain = """
        import tensorflow as tf

        num_input = 784

        def conv(x, w):
            x = tf.nn.conv2d(x, w, 1, "SAME")
            return tf.nn.relu(x)

        def net(x, w):
            x = conv(x, w)
            x = conv(x, w)
            return tf.add(x, 1.0)

        out = net(tf.ones((1, 4, 4, 1)), tf.ones((1, 1, 1, 1)))
        probe(out)
    """
    assert not _sources(plain)
    read = []
    original = SymbolicTensors._read
    monkeypatch.setattr(SymbolicTensors, "_read", lambda self, *a: read.append(a) or original(self, *a))
    assert probes(plain) == [False] and read == []
    assert _sources(plain.replace("num_input = 784", "m = make()\n        h = m.output"))
    assert _sources(plain.replace("num_input = 784", "h = (m.\n             inputs)"))
    assert _sources(plain.replace("num_input = 784", "from keras import Input as In\n        x = In((2,))"))
    assert _sources(plain.replace("return tf.add(x, 1.0)", "return Dense(3)(x)"))
    assert probes(plain.replace("out = net(", "import keras\n        out = tf.nn.relu(keras.Input((4,)))\n        net(")) \
        == [True]
    assert read


def test_not_symbolic():
    assert probes("""
        import numpy as np
        import tensorflow as tf
        import tf_keras
        import keras

        probe(tf.ones((2, 2)))
        probe(tf_keras.Input((2,)))
        probe(keras.Input(tensor=tf.ones((1, 2))))
        layer = keras.layers.Dense(3)
        probe(layer(np.ones((1, 2))))

        class Block(keras.layers.Layer):
            def call(self, x):
                probe(x)
                probe(self.input)
                return x

        def helper(x):
            probe(x)
            return x

        helper(keras.Input((2,)))
        helper(tf.ones((2,)))
        lam = keras.layers.Lambda(lambda t: probe(t))
        inputs = keras.Input((2,))
        if np.random.rand() > 0.5:
            inputs = tf.ones((1, 2))
        probe(inputs)
        probe(inputs is None)
    """) == [False] * 10


def test_legacy_env_makes_tf_keras_input_undecided():
    assert probes("""
        import os
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        import tensorflow as tf
        import keras
        probe(tf.keras.Input((2,)))
        probe(keras.Input((2,)))
    """) == [False, True]


def test_measured_op_lists():
    # What scripts/derive_symbolic_ops.py recorded under TF 2.21 / Keras 3.15 (re-run it to regenerate).
    for name in ("split", "concat", "reshape", "expand_dims", "reduce_mean", "nn.relu", "image.resize",
                 "nn.max_pool2d", "nn.conv2d", "strings.split", "shape", "cast", "math.l2_normalize"):
        assert "tensorflow." + name in RAISES, name
    for name in ("print", "is_tensor", "get_static_value"):
        assert "tensorflow." + name in ACCEPTS and "tensorflow." + name not in RAISES
    assert not RAISES & ACCEPTS
    assert len(RAISES) > 500


def test_direct_argument_skips_an_op_given_only_another_ops_result():
    module = cst.parse_module(textwrap.dedent("""
        import tensorflow as tf
        import keras
        x = keras.Input((4,))
        noise = tf.random.uniform(tf.shape(x))
        both = tf.concat([tf.expand_dims(x, 1), x[:, None]], axis=1)
    """).lstrip("\n"))
    ctx = analyse(module, [])
    calls = {ctx.resolver.qualname(c.func, s): (c, s) for c, s in ctx.model.index.get("Call", ())}
    uniform, where = calls["tensorflow.random.uniform"]
    assert ctx.symbolic.symbolic_argument(uniform, where) is not None
    assert ctx.symbolic.symbolic_argument(uniform, where, direct=True) is None
    concat, where = calls["tensorflow.concat"]
    assert ctx.symbolic.symbolic_argument(concat, where, direct=True) is not None  # x[:, None] is given directly


def test_save_path_and_variable_name_readers():
    from tflint_gpu.rules.keras3_scoped_variable_name import _scoped
    from tflint_gpu.rules.keras3_unsupported_save_path import _tf_format

    assert _tf_format("saved_model") and _tf_format("out/") and _tf_format("w.ckpt") and _tf_format("m.tf")
    assert _tf_format("m.keras") is None and _tf_format("m.h5") is None and _tf_format("run.v2/model.keras") is None
    assert _scoped("dense_1/", False) and _scoped(":0", False) and _scoped("batch_normalization", False)
    assert _scoped("encoder", True) and not _scoped("encoder", False)
    assert not _scoped("bias", False) and not _scoped("kernel", True) and not _scoped("moving", False)
