"""RuleContext.unknown_keras3_model: an object whose maker the engine cannot follow, taken for a Keras 3
model where a use only a Keras model has says so (issue 35: one binding the engine cannot follow adds
"unknown", it does not erase a Keras model among the others)."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.target import parse_target

SOURCE = """
    import tensorflow as tf
    import store


    class Agent:
        def __init__(self, cfg):
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            if cfg.resume:
                self.model = self.model.build_model(cfg)
            self.other = cfg.factory.make()
            self.ckpt = tf.keras.Sequential()
            if cfg.ckpt:
                self.ckpt = tf.train.Checkpoint(step=tf.Variable(0))

        def save(self, d):
            return self.model, self.other, self.ckpt
"""


def _answers():
    module = cst.parse_module(textwrap.dedent(SOURCE))
    ctx = analyse(module, [], target=parse_target("tf2.16"))
    save = next(s for s in ctx.model.scopes if s.name == "save")
    ctx.scope = save
    result = {}
    for text in ("self.model", "self.other", "self.ckpt"):
        expr = next(n for n in _walk(save.node) if isinstance(n, cst.Attribute)
                    and cst.Module([]).code_for_node(n) == text)
        result[text] = ctx.unknown_keras3_model(expr, "save_weights", distinctive=True)
    return result


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


def test_an_untyped_method_call_among_bindings_adds_unknown_and_keeps_the_model():
    assert _answers() == {"self.model": True,  # Sequential, or what self.model.build_model(cfg) returns
                          "self.other": False,  # only what an untyped object's make() returns
                          "self.ckpt": False}  # a tf.train.Checkpoint among its bindings
