"""semantic/precision.py: mixed global policies, trained models' last layers, loss scaling, optimizer kinds."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.precision import LOSS_SCALE, PLAIN


def facts(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    ctx = analyse(module, [])
    return ctx.precision, ctx


def test_policy_spellings():
    precision, _ = facts("""
        import keras
        import tensorflow as tf
        from tensorflow.keras import mixed_precision
        import tf_keras

        keras.mixed_precision.set_global_policy("mixed_float16")
        tf.keras.mixed_precision.set_global_policy(mixed_precision.Policy("mixed_bfloat16"))
        policy = mixed_precision.Policy('mixed_float16')
        mixed_precision.set_global_policy(policy)
        tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
        keras.config.set_dtype_policy("mixed_bfloat16")
        tf_keras.mixed_precision.set_global_policy("mixed_float16")
        keras.mixed_precision.set_global_policy("float32")
        keras.mixed_precision.set_global_policy(name_from_flags)
    """)
    assert [site.policy for site in precision.policies()] == [
        "mixed_float16", "mixed_bfloat16", "mixed_float16", "mixed_float16", "mixed_bfloat16", "mixed_float16"]
    assert precision.sets("mixed_float16") and precision.sets("mixed_bfloat16")


def test_no_policy():
    precision, _ = facts("""
        import keras
        # keras.mixed_precision.set_global_policy("mixed_float16")
        print("mixed_float16")
    """)
    assert precision.policies() == [] and not precision.sets("mixed_float16")


def _last(precision, ctx):
    return [(m.name, [ctx.module.code_for_node(layer) for layer in m.last_layers])
            for m in precision.trained_models()]


def test_last_layers_of_trained_models():
    precision, ctx = facts("""
        import keras
        from keras import layers

        a = keras.Sequential([layers.Dense(8), layers.Dense(3)])
        a.compile("adam", "mse")
        b = keras.Sequential()
        b.add(layers.Dense(8))
        b.add(layers.Dense(2, activation="softmax"))
        b.fit(None)
        inputs = keras.Input((4,))
        out = layers.Dense(1)(inputs)
        c = keras.Model(inputs, [out, layers.Dense(2)(inputs)])
        c.compile("adam", "mse")

        def build():
            model = keras.Sequential([layers.Dense(5)])
            return model

        d = build()
        d.compile("adam", "mse")
        unused = keras.Sequential([layers.Dense(7)])
        e = keras.Sequential([layers.Dense(8), layers.Lambda(lambda t: t)])
        e.compile("adam", "mse")
        f = keras.Sequential([layers.Dense(8), CustomHead()])
        f.compile("adam", "mse")
    """)
    assert _last(precision, ctx) == [
        ("a", ["layers.Dense(3)"]),
        ("b", ['layers.Dense(2, activation="softmax")']),
        ("c", ["layers.Dense(1)", "layers.Dense(2)"]),
        ("model", ["layers.Dense(5)"]),
    ]


def test_sets_dtype():
    precision, ctx = facts("""
        import keras
        a = keras.layers.Dense(3, dtype="float32")
        b = keras.layers.Dense(3, **kw)
        c = keras.layers.Dense(3)
    """)
    calls = [call for call, _scope in ctx.model.index["Call"] if ctx.module.code_for_node(call.func).endswith("Dense")]
    assert [precision.sets_dtype(call) for call in calls] == [True, True, False]


def _kinds(source: str):
    precision, ctx = facts(source)
    found = {}
    for call, scope in ctx.model.index["Call"]:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "apply_gradients":
            found[ctx.module.code_for_node(func.value)] = precision.optimizer_kind(func.value, scope)
    return found, precision, ctx


def test_optimizer_kinds():
    found, _, _ = _kinds("""
        import keras
        import tf_keras

        lso = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam())
        plain = keras.optimizers.Adam()
        old = tf_keras.mixed_precision.LossScaleOptimizer(tf_keras.optimizers.SGD())
        model = keras.Sequential([keras.layers.Dense(1)])
        model.compile("adam", "mse")

        class M(keras.Model):
            def train_step(self, data):
                self.optimizer.apply_gradients([])
                self.g_optimizer.apply_gradients([])

        class T(tf_keras.Model):
            def train_step(self, data):
                self.optimizer.apply_gradients([])

        def f(opt):
            lso.apply_gradients([])
            plain.apply_gradients([])
            old.apply_gradients([])
            model.optimizer.apply_gradients([])
            opt.apply_gradients([])
    """)
    assert found == {
        "self.optimizer": (LOSS_SCALE, "tf_keras"),  # the last class wins the dict key; checked below
        "self.g_optimizer": None,
        "lso": (LOSS_SCALE, "keras3"),
        "plain": (PLAIN, "keras3"),
        "old": (LOSS_SCALE, "tf_keras"),
        "model.optimizer": (LOSS_SCALE, "keras3"),
        "opt": None,
    }


def test_keras3_self_optimizer_and_auto_scale_off():
    found, _, _ = _kinds("""
        import keras

        class M(keras.Model):
            def train_step(self, data):
                self.optimizer.apply_gradients([])
    """)
    assert found == {"self.optimizer": (LOSS_SCALE, "keras3")}
    found, _, _ = _kinds("""
        import keras

        class M(keras.Model):
            def train_step(self, data):
                self.optimizer.apply_gradients([])

        M().compile("adam", auto_scale_loss=False)
    """)
    assert found == {"self.optimizer": None}


def test_loss_scaled():
    precision, ctx = facts("""
        def a(opt, loss):
            return opt.scale_loss(loss)

        def b(opt, loss):
            return opt.get_scaled_loss(loss)

        def c(opt, loss):
            return loss
    """)
    scopes = {s.name: s for s in ctx.model.scopes if s.kind == "function"}
    assert [precision.loss_scaled(scopes[n]) for n in "abc"] == [True, True, False]
