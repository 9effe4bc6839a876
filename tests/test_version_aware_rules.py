"""Rules whose finding depends on the project's target (``ctx.target``): TFG306, TFG303, TFG401.

The rule classes' own cases run with the default target (the newest release); here the
same code is linted for old TF / Keras 2 targets and for the newest. The boundaries are
measured in benchmarks/versions/ (TF 2.12 to 2.21) or, for versions that do not install
on this Python, taken from TF's API docs (see the rules' docs).
"""
from __future__ import annotations

import textwrap

import pytest

from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import lint_source, using_target
from tflint_gpu.rules.base import Safety
from tflint_gpu.rules.dataset_map_without_parallelism import MAP_PARALLELIZATION_TF, DatasetMapWithoutParallelism
from tflint_gpu.rules.dataset_without_final_prefetch import INJECT_PREFETCH_TF, DatasetWithoutFinalPrefetch
from tflint_gpu.rules.tf_function_without_jit_compile import TfFunctionWithoutJitCompile
from tflint_gpu.semantic.target import parse_target


def lint(source, rule, target):
    result = lint_source(textwrap.dedent(source), "a.py", [rule],
                         target=parse_target(target) if target is not None else None)
    return [(f.row, f.col, f.message, f.fix.safety if f.fix is not None else None) for f in result.findings]


def fixed(source, rule, target, unsafe=False):
    with using_target(parse_target(target)):
        return fix_source(textwrap.dedent(source), "a.py", [rule], unsafe=unsafe).source


def test_boundaries():
    assert MAP_PARALLELIZATION_TF == (2, 7)
    assert INJECT_PREFETCH_TF == (2, 12)


# -- TFG306: a stateless map runs sequentially before TF 2.7 --------------------------------------

STATELESS = """
import tensorflow as tf

images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
ds = tf.data.Dataset.from_tensor_slices(images).map(lambda v: tf.image.resize(v / 255.0, (8, 8))).batch(2)
"""


@pytest.mark.parametrize("target", ["tf2.0", "tf2.4", "tf2.6"])
def test_tfg306_reports_a_stateless_map_for_old_tf(target):
    version = target[2:]
    assert lint(STATELESS, DatasetMapWithoutParallelism, target) == [
        (5, 48, f"`map` runs sequentially: TF {version} (the target) does not parallelize a `map` by itself "
                f"(`map_parallelization` does it for stateless functions from TF 2.7)", Safety.SAFE)]


@pytest.mark.parametrize("target", ["tf2.7", "tf2.12", "tf2.15", "tf2.16-keras2", "latest", None])
def test_tfg306_stays_quiet_on_a_stateless_map_from_tf_2_7(target):
    assert lint(STATELESS, DatasetMapWithoutParallelism, target) == []


def test_tfg306_old_tf_fix_is_safe_and_keeps_the_order():
    assert fixed(STATELESS, DatasetMapWithoutParallelism, "tf2.4") == textwrap.dedent(STATELESS).replace(
        "(8, 8)))", "(8, 8)), num_parallel_calls=tf.data.AUTOTUNE)")


def test_tfg306_old_tf_with_options_makes_the_fix_unsafe_and_deterministic_removes_it():
    source = """
    import tensorflow as tf

    options = tf.data.Options()
    options.experimental_deterministic = False
    ds = tf.data.Dataset.range(8).with_options(options).map(lambda x: x * 2)
    kept = tf.data.Dataset.range(8).map(lambda x: x + 1, deterministic=True)
    """
    found = lint(source, DatasetMapWithoutParallelism, "tf2.5")
    assert [(row, safety) for row, _, _, safety in found] == [(6, Safety.UNSAFE), (7, None)]


def test_tfg306_old_tf_keeps_what_it_cannot_read_quiet():
    source = """
    import numpy as np
    import tensorflow as tf
    from augment import augment

    a = tf.data.Dataset.range(4).map(augment)
    b = tf.data.Dataset.range(4).map(lambda p: tf.numpy_function(lambda v: np.int64(v), [p], tf.int64))
    c = tf.data.Dataset.range(4).map(lambda x: x * 2, num_parallel_calls=2)
    """
    assert lint(source, DatasetMapWithoutParallelism, "tf2.3") == []


def test_tfg306_random_map_is_reported_for_every_target_with_the_same_message():
    source = """
    import tensorflow as tf

    ds = tf.data.Dataset.range(4).map(lambda x: x + tf.random.uniform((), 0, 2, tf.int64))
    """
    for target in ("tf2.4", "tf2.15", "latest"):
        found = lint(source, DatasetMapWithoutParallelism, target)
        assert [(row, col, safety) for row, col, _, safety in found] == [(4, 30, Safety.UNSAFE)]
        assert "uses `tf.random.uniform`" in found[0][2]


# -- TFG303: what the target's tf.data does about a final prefetch ------------------------------------

UNPREFETCHED = """
import tensorflow as tf

ds = tf.data.Dataset.range(100).map(lambda x: x * 2).batch(10)
for batch in ds:
    print(batch)
"""


@pytest.mark.parametrize("target", ["tf2.4", "tf2.10", "tf2.11"])
def test_tfg303_old_tf_says_nothing_is_injected(target):
    version = target[2:]
    does = "may not append" if target == "tf2.11" else "does not append"
    assert lint(UNPREFETCHED, DatasetWithoutFinalPrefetch, target) == [
        (4, 53, f"tf.data pipeline consumed without a final `prefetch`: with TF {version} (the target) tf.data "
                f"{does} one itself (it does by default from TF 2.12), so after a sequential last stage the next "
                f"element is made only when it is asked for", Safety.SAFE)]


@pytest.mark.parametrize("target", ["tf2.12", "tf2.15", "tf2.16-keras2", "latest", None])
def test_tfg303_new_tf_says_it_is_a_hint(target):
    assert lint(UNPREFETCHED, DatasetWithoutFinalPrefetch, target) == [
        (4, 53, "tf.data pipeline consumed without a final `prefetch`: a hint, tf.data appends one itself with "
                "default options (TF 2.12+)", Safety.SAFE)]


def test_tfg303_stays_off_by_default_for_every_target():
    assert DatasetWithoutFinalPrefetch.default_enabled is False


@pytest.mark.parametrize("target", ["tf2.4", "latest"])
def test_tfg303_fix_is_the_same_for_every_target(target):
    assert fixed(UNPREFETCHED, DatasetWithoutFinalPrefetch, target) == textwrap.dedent(UNPREFETCHED).replace(
        ".batch(10)", ".batch(10).prefetch(tf.data.AUTOTUNE)")


# -- TFG401: a hand-written tf.function gets no XLA under Keras 2 or Keras 3 ----------------------------

STEP = """
import tensorflow as tf
import keras

@tf.function
def block(x, w):
    return tf.reduce_sum(tf.tanh(tf.matmul(x, w)) * 0.1, axis=-1)

class Net(keras.Model):
    @tf.function
    def train_step(self, data):
        return {"loss": tf.reduce_mean(data)}
"""


@pytest.mark.parametrize("target", ["tf2.12", "tf2.15", "tf2.16-keras2", "latest-keras2", "tf2.16", "latest"])
def test_tfg401_same_findings_for_keras_2_and_keras_3(target):
    found = lint(STEP, TfFunctionWithoutJitCompile, target)
    assert [(row, col, safety) for row, col, _, safety in found] == [(5, 1, None)]  # a hint: no fix
    assert found[0][2].startswith("`tf.function` without `jit_compile`")


def test_tfg401_docs_state_both_keras_defaults():
    doc = TfFunctionWithoutJitCompile.__doc__
    assert 'jit_compile="auto"' in doc and "compile(jit_compile=None)" in doc
    assert "not measured" in doc


def test_tfg306_old_tf_fix_is_unsafe_when_the_map_may_have_side_effects():
    source = """
    import tensorflow as tf
    from helpers import scale

    counter = tf.Variable(0, dtype=tf.int64)

    def count(x):
        counter.assign_add(1)
        return x + counter

    def shout(x):
        tf.print(x)
        return x

    def double(x):
        return half(x) * 4

    def half(x):
        return tf.cast(x, tf.float32) / 2.0

    a = tf.data.Dataset.range(4).map(count)
    b = tf.data.Dataset.range(4).map(shout)
    c = tf.data.Dataset.range(4).map(lambda x: scale(x) + 1)
    d = tf.data.Dataset.range(4).map(double)
    """
    found = lint(source, DatasetMapWithoutParallelism, "tf2.6")
    assert [(row, safety) for row, _, _, safety in found] == [
        (21, Safety.UNSAFE), (22, Safety.UNSAFE), (23, Safety.UNSAFE), (24, Safety.SAFE)]
    assert lint(source, DatasetMapWithoutParallelism, "tf2.7") == []


def test_tfg306_old_tf_random_op_under_a_python_flag_makes_the_fix_unsafe():
    source = """
    import tensorflow as tf

    def make(augment):
        def prepare(x):
            x = tf.cast(x, tf.float32)
            if augment:
                x = x + tf.random.uniform(())
            return x
        return tf.data.Dataset.range(4).map(prepare)
    """
    assert [(row, safety) for row, _, _, safety in lint(source, DatasetMapWithoutParallelism, "tf2.6")] == [
        (10, Safety.UNSAFE)]
    assert lint(source, DatasetMapWithoutParallelism, "latest") == []
