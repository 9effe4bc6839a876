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


# -- TFG605: once the loss reads logits, so must `accuracy` (executed under Keras 3 and tf_keras) -------------

BINARY = """
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
model.compile("sgd", loss=tf.keras.losses.BinaryCrossentropy(), metrics=["accuracy"])
"""

SPARSE = """
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(3)])
model.compile("sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(), metrics=["accuracy"])
"""

BINARY_RUN = """
model.set_weights([np.ones((1, 1), "float32"), np.zeros((1,), "float32")])
x = np.array([[0.1], [0.2], [0.3], [0.4]], "float32")
y = np.ones((4, 1), "float32")
result = model.evaluate(x, y, verbose=0, return_dict=True)
truth = float(np.mean((model.predict(x, verbose=0) > 0) == (y > 0.5)))
"""

SPARSE_RUN = """
model.set_weights([np.array([[1, 0, 0.5], [0, 1, 0.5]], "float32"), np.zeros((3,), "float32")])
points = np.array([[0.3, 0.1], [0.1, 0.3], [0.4, 0.0], [-0.1, 0.4]], "float32")
result = model.evaluate(points, np.array([0, 1, 2, 1]), verbose=0, return_dict=True)
"""


def _needs_tensorflow():
    import importlib.util

    if importlib.util.find_spec("tensorflow") is None:  # the children import it; this process never does
        pytest.skip("TensorFlow is not installed")


def _fixed(source):
    _needs_tensorflow()
    from tflint_gpu.engine.fix import fix_source
    from tflint_gpu.rules.logits_into_probability_loss import LogitsIntoProbabilityLoss

    return fix_source(textwrap.dedent(source), "a.py", [LogitsIntoProbabilityLoss], unsafe=True).source


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "tf_keras"])
def test_tfg605_fix_makes_a_binary_accuracy_read_logits(legacy):
    # A model that is right on every sample (logits 0.1-0.4 of positives): after a fix adding only
    # from_logits=True, "accuracy" (binary: outputs > 0.5) reported 0.0; it must report 1.0.
    fix_execution = pytest.importorskip("fix_execution")
    fixed = _fixed(BINARY)
    assert "from_logits=True" in fixed
    outcome, = fix_execution.run_many([fixed + BINARY_RUN], legacy_keras=legacy)
    assert outcome.error is None, outcome.error
    assert outcome.values["truth"][1] == 1.0
    assert float(outcome.values["result"][1]["accuracy"]) == 1.0, fixed


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "tf_keras"])
def test_tfg605_sparse_accuracy_is_argmax_and_unchanged_by_the_fix(legacy):
    # "accuracy" of a three-unit output is sparse categorical accuracy: argmax, the same on logits as on
    # probabilities, so the fix leaves it and its value; the loss changes, on purpose.
    fix_execution = pytest.importorskip("fix_execution")
    fixed = _fixed(SPARSE)
    assert 'metrics=["accuracy"]' in fixed and "from_logits=True" in fixed
    before, after = fix_execution.run_many([textwrap.dedent(SPARSE) + SPARSE_RUN, fixed + SPARSE_RUN],
                                           legacy_keras=legacy)
    assert before.error is None and after.error is None, (before.error, after.error)
    assert float(before.values["result"][1]["accuracy"]) == float(after.values["result"][1]["accuracy"]) == 0.75
    assert float(before.values["result"][1]["loss"]) != float(after.values["result"][1]["loss"])
