"""semantic/tape_models.py: gradients taken for a model the tape's block never runs."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.model import walk

CODE = cst.Module(body=[]).code_for_node


def _unrecorded(source: str, function: str = "step"):
    """[model code or None] for each tape.gradient call of ``function``, in order."""
    ctx = analyse(cst.parse_module(textwrap.dedent(source)), [])
    scope = next(s for s in ctx.model.scopes if s.name == function)
    out = []
    for node in walk(scope.node):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "gradient":
            found = ctx.tape_models.unrecorded(node, scope)
            out.append(None if found is None else CODE(found.model))
    return out


HEADER = """
import tensorflow as tf

G = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(4)])
D = tf.keras.Sequential([tf.keras.layers.Dense(1)])
"""


def test_the_block_of_the_tape_that_reaches_each_gradient_call():
    assert _unrecorded(HEADER + """
def step(z, real):
    fake = G(z)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(D(fake))
    tape.gradient(loss, D.trainable_variables)
    tape.gradient(loss, G.trainable_variables)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(D(G(z)))
    tape.gradient(loss, G.trainable_weights)
""") == [None, "G", None]


def test_what_may_run_the_model_keeps_it_quiet():
    assert _unrecorded(HEADER + """
both = tf.keras.Sequential([G, D])
inputs = tf.keras.Input((4,))
functional = tf.keras.Model(inputs, D(inputs))

def helper(x):
    return G(x)

def plain(x):
    return tf.reduce_mean(x)

def step(z, loss_fn):
    with tf.GradientTape() as tape:
        a = both(z)
    tape.gradient(a, G.trainable_variables)
    with tf.GradientTape() as tape:
        b = functional(z)
    tape.gradient(b, G.trainable_variables)
    with tf.GradientTape() as tape:
        c = helper(z)
    tape.gradient(c, G.trainable_variables)
    with tf.GradientTape() as tape:
        d = loss_fn(z)
    tape.gradient(d, G.trainable_variables)
    with tf.GradientTape() as tape:
        e = plain(D(z))
    tape.gradient(e, G.trainable_variables)
""") == [None, None, None, None, "G"]


def test_self_handed_on_or_a_keras_method_of_self_may_run_the_model():
    source = """
import tensorflow as tf

class Gan(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.G = tf.keras.Sequential([tf.keras.layers.Dense(4)])
        self.D = tf.keras.Sequential([tf.keras.layers.Dense(1)])

    def d_only(self, x):
        return self.D(x)

    def step(self, z):
        with tf.GradientTape() as tape:
            a = self.d_only(z)
        tape.gradient(a, self.G.trainable_variables)
        with tf.GradientTape() as tape:
            b = self.compute_loss(x=z)
        tape.gradient(b, self.G.trainable_variables)
        with tf.GradientTape() as tape:
            c = outside(self, z)
        tape.gradient(c, self.G.trainable_variables)
"""
    assert _unrecorded(source) == ["self.G", None, None]
