"""TFG901's decay rewrite reproduces Keras 2's `decay=`: each TFG901 case whose fix writes an
`InverseTimeDecay` runs twice, the original on Keras 2's optimizers that honoured `decay=`
(tf_keras's legacy ones: what `tf.keras.optimizers.X` was up to TF 2.10, `TF_USE_LEGACY_KERAS=1`)
and the fix under Keras 3, and both leave the same weights. (tf_keras 2.21's own new optimizers
raise `ValueError: decay is deprecated` instead: no Keras 2 that ran the original was one of those.)"""
import numpy as np
import pytest

import fix_execution
from tflint_gpu.rules.base import REGISTRY, all_rules

list(all_rules())
CASES = [case for case in REGISTRY["TFG901"].cases
         if case.fixed is not None and "InverseTimeDecay" in case.fixed and "apply_gradients" in case.code]

# Keras 2 as TF <= 2.10 had it: tf.keras.optimizers.X was the OptimizerV2 class tf_keras keeps as legacy.X.
_KERAS2 = """
import tensorflow as _tf
import tensorflow.keras.optimizers as _optimizers
for _name in ("SGD", "Adam", "RMSprop", "Adagrad", "Adamax", "Nadam", "Adadelta", "Ftrl"):
    setattr(_tf.keras.optimizers, _name, getattr(_tf.keras.optimizers.legacy, _name))
    setattr(_optimizers, _name, getattr(_tf.keras.optimizers.legacy, _name))
"""


def test_there_are_cases_to_run():
    assert len(CASES) >= 2


@pytest.fixture(scope="module")
def outcomes():
    befores = fix_execution.run_many([_KERAS2 + case.code + "\n" + case.run for case in CASES], legacy_keras=True)
    afters = fix_execution.run_many([case.fixed + "\n" + case.run for case in CASES])
    return list(zip(CASES, befores, afters))


def test_the_schedule_trains_as_keras2s_decay(outcomes):
    for case, before, after in outcomes:
        assert before.error is None and after.error is None, (before.error, after.error)
        old = np.asarray(before.values["weights"][1])
        new = np.asarray(after.values["weights"][1])
        # SGD: the same float32 arithmetic; Adam: Keras 3's update orders its terms differently (1e-6)
        np.testing.assert_allclose(new, old, rtol=0, atol=1e-5, err_msg=case.code)
        assert not np.allclose(old, [1.0, -2.0])
