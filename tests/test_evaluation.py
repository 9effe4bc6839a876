"""semantic/evaluation.py: functions that evaluate a model, and training-mode calls there on purpose."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse

SOURCE = """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
drop = tf.keras.layers.Dropout(0.5)
optimizer = tf.keras.optimizers.SGD()

def test_step(x):
    return model(x, training=True), drop(x, training=True)

def validate_and_train(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x, training=True))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

def mc_predict(x):
    return model(x, training=True)

def train_step(x):
    return model(x, training=True)

class Net(tf.keras.Model):
    def call(self, x, training=None):
        return model(x, training=True)

def evaluation_epoch(x):
    return model(x, training=True)
"""


def _facts():
    ctx = analyse(cst.parse_module(textwrap.dedent(SOURCE)), [])
    return ctx, {s.name: s for s in ctx.model.scopes if s.is_function}


def test_a_function_evaluates_by_its_name_unless_it_trains_or_is_a_call():
    ctx, scopes = _facts()
    evaluates = {name: ctx.evaluation.evaluates(scope) for name, scope in scopes.items()}
    assert evaluates == {"test_step": True, "validate_and_train": False, "mc_predict": True, "train_step": False,
                         "call": False, "evaluation_epoch": True}


def test_prediction_names_and_a_dropout_layer_itself_are_training_mode_on_purpose():
    ctx, scopes = _facts()
    on_purpose = {}
    for name in ("test_step", "mc_predict", "evaluation_epoch"):
        scope = scopes[name]
        on_purpose[name] = [ctx.evaluation.training_on_purpose(call, scope) for call in scope.calls
                            if any(a.keyword is not None and a.keyword.value == "training" for a in call.args)]
    assert on_purpose == {"test_step": [False, True], "mc_predict": [True], "evaluation_epoch": [False]}
