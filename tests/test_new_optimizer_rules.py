"""TFG602 and TFG603 ask the project's target: TF 2.10 and older had the optimizers that kept slots per
variable and gave a schedule a float step."""
from __future__ import annotations

from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.base import REGISTRY
from tflint_gpu.semantic.target import parse_target

SOURCE = """\
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(2)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-4)
optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables))
optimizer.apply_gradients(zip(g_grads, generator.trainable_variables))
"""


def _rows(target):
    return [f.row for f in lint_source(SOURCE, "gan.py", [REGISTRY["TFG602"]], target=target).findings]


def test_reported_from_tf_2_11_on():
    assert _rows(None) == [7]
    assert _rows(parse_target("tf2.11")) == [7]  # tf_keras's new optimizers: KeyError (measured in 2.21)
    assert _rows(parse_target("tf2.16-keras2")) == [7]


def test_silent_for_older_targets():
    assert _rows(parse_target("tf2.10")) == []
    assert _rows(parse_target("tf2.4")) == []


SCHEDULE = """\
import tensorflow as tf

class CustomSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __call__(self, step):
        return tf.math.rsqrt(step) * 0.1
"""


def test_the_schedule_step_rule_asks_the_target_too():
    rule = [REGISTRY["TFG603"]]
    assert [f.row for f in lint_source(SCHEDULE, "s.py", rule).findings] == [5]
    assert [f.row for f in lint_source(SCHEDULE, "s.py", rule, target=parse_target("tf2.11")).findings] == [5]
    assert lint_source(SCHEDULE, "s.py", rule, target=parse_target("tf2.10")).findings == []


def test_tf1_names_are_reported_for_keras2_targets_and_keras3_names_are_not():
    source = "import tensorflow as tf\n\nsess = tf.Session()\nx = tf.keras.layers.DenseFeatures(columns)\n"
    rule = [REGISTRY["TFG903"]]
    assert [f.row for f in lint_source(source, "t.py", rule).findings] == [3, 4]
    assert [f.row for f in lint_source(source, "t.py", rule, target=parse_target("tf2.15")).findings] == [3]


def test_removed_keras_arguments_follow_the_target():
    source = ("import tensorflow as tf\n\nopt = tf.keras.optimizers.Adam(lr=0.1)\n"
              "model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
              "model.save('model.h5', save_format='h5')\n")
    rule = [REGISTRY["TFG901"]]

    def found(target):
        return [(f.row, f.message.split(":")[0]) for f in lint_source(source, "t.py", rule, target=target).findings]

    assert [row for row, _ in found(None)] == [3, 5]
    # TF 2.11-2.15: tf.keras's new optimizers ignore lr= (Keras 2 semantics); save_format= still works
    assert found(parse_target("tf2.15")) == [(3, "tf_keras optimizers ignore `lr=` and train at the default rate")]
    assert found(parse_target("tf2.10")) == []  # the old optimizers took lr= as an alias
