"""semantic/retracing.py captured_per_call: a tf.function over stateful objects its maker creates."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.semantic.retracing import Retracing
from tflint_gpu.semantic.tensors import TensorInference
from tflint_gpu.semantic.values import ValueKinds

SOURCE = """
import tensorflow as tf

class Net(tf.keras.Model):
    def call(self, x):
        return x

def experiment(width, strategy):
    model = Net()
    step_count = tf.Variable(0)

    @tf.function
    def train_step(x):
        def step_fn(v):
            return model(v)
        strategy.run(step_fn, args=(x,))

    @tf.function
    def count():
        step_count.assign_add(1)

    return train_step, count

def evaluate(model, strategy, xs):
    accuracy = tf.keras.metrics.Accuracy()
    optimizer = tf.keras.optimizers.Adam(0.1)
    scale = 2.0

    def single_step(x):
        accuracy.update_state(x, x)

    @tf.function
    def run(x):
        strategy.run(single_step, (x,))

    @tf.function
    def apply(x):
        optimizer.apply_gradients([])

    @tf.function
    def plain(x):
        return model(x) * scale

    return run, apply, plain
"""


def test_captured_per_call():
    module = cst.parse_module(textwrap.dedent(SOURCE))
    model = build_model(module, ["Call", "FunctionDef"])
    resolver = Resolver()
    graphs = GraphAnalysis(model, resolver)
    graphs.run()
    facts = Retracing(model, graphs, ValueKinds(resolver, graphs, TensorInference(resolver, graphs)))
    scopes = {s.name: s for s in model.scopes if s.is_function}

    def captured(name):
        made = scopes[name]
        return facts.captured_per_call(made.node, made.parent)

    assert captured("train_step") == "model"  # a same-module Keras model, read in a nested function
    assert captured("count") == "step_count"  # a tf.Variable
    assert captured("run") == "accuracy"  # a metric, read by a local function it hands on
    assert captured("apply") == "optimizer"  # a Keras optimizer
    assert captured("plain") is None  # a parameter and a Python float: made once, it could take them
