"""Findings and fixes that must speak the Keras the project targets (issue 34): TFG502, TFG605, TFG910.

The fixes themselves are executed under TensorFlow in the rules' own cases (tests/test_fix_execution.py);
here: which Keras's API a message names for each target, and when a fix is offered at all.
"""
from __future__ import annotations

import textwrap

import pytest

from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.mixed_precision_loss_not_scaled import MixedPrecisionLossNotScaled
from tflint_gpu.rules.mixed_precision_without_loss_scaling import MixedPrecisionWithoutLossScaling
from tflint_gpu.semantic.target import parse_target


def lint(source, rules, target=None):
    result = lint_source(textwrap.dedent(source), "a.py", rules,
                         target=parse_target(target) if target is not None else None)
    return [(f.code, f.message, f.fix is not None) for f in result.findings]


# -- TFG502 / TFG503: a LossScaleOptimizer spelled tf.keras is Keras 2's where the project targets Keras 2 ----

NAMED = """
import tensorflow as tf
tf.keras.mixed_precision.set_global_policy("mixed_float16")
opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())

def step(model, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
"""

COMPILED = """
import tensorflow as tf
tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1, dtype="float32")])
model.compile(tf.keras.optimizers.SGD(0.1), "mse")

@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    model.optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""

SELF = """
import tensorflow as tf
tf.keras.mixed_precision.set_global_policy("mixed_float16")
class Custom(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(x=x, y=y, y_pred=self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
"""

PRECISION_RULES = [MixedPrecisionLossNotScaled, MixedPrecisionWithoutLossScaling]


@pytest.mark.parametrize("target", ["tf2.15", "tf2.12", "tf2.16-keras2", "latest-keras2"])
@pytest.mark.parametrize("source", [NAMED, COMPILED, SELF], ids=["named", "compiled", "self"])
def test_keras2_target_is_told_get_scaled_loss_never_scale_loss(source, target):
    # Keras 2's LossScaleOptimizer has get_scaled_loss/get_unscaled_gradients, no scale_loss, and its
    # apply_gradients does not divide: TFG502's 32768x claim is Keras 3's; TFG503 speaks Keras 2's API.
    found = lint(source, PRECISION_RULES, target)
    assert [code for code, _, _ in found] == ["TFG503"], found
    assert "get_scaled_loss" in found[0][1] and "scale_loss`" not in found[0][1].replace("get_scaled_loss", "")


@pytest.mark.parametrize("target", [None, "latest", "tf2.16"])
@pytest.mark.parametrize("source", [NAMED, COMPILED, SELF], ids=["named", "compiled", "self"])
def test_keras3_target_is_told_scale_loss(source, target):
    found = lint(source, PRECISION_RULES, target)
    assert [code for code, _, _ in found] == ["TFG502"], found
    assert "scale_loss`" in found[0][1] and "get_scaled_loss" not in found[0][1]
