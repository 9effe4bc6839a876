"""Fixes that were wrong on real code (issue 15, /work/reliability/fix_pass.md "The 14 wrong hunks").

TFG401 added `jit_compile=True` to tf.functions that only tf.data or Keras trace
(H25, H39, H151, H494, H597, H598, H599), around assertions XLA drops (H300,
H331, H488, H494), to ragged/sparse/string-input functions (H262, H428, H429,
H443) and over a decorator the linter does not read (H335-H337); TFG405 made a
training step a tf.function although the optimizer it is handed, the file's
own `Adam`, keeps its step count in a Python attribute (H456). Each test
below is shaped after the real code and fails on the engine and rules as they
were before the fix; the last ones run TensorFlow to pin the behaviour the
rules' docs state.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import libcst as cst
import pytest

from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import analyse, lint_source
from tflint_gpu.rules.base import REGISTRY, all_rules

list(all_rules())
TFG401 = REGISTRY["TFG401"]
TFG405 = REGISTRY["TFG405"]


def context(source: str):
    return analyse(cst.parse_module(textwrap.dedent(source).lstrip("\n")), [])


def functions(ctx):
    return {s.name: s for s in ctx.model.scopes if s.kind == "function"}


def flagged(source: str, rule=TFG401):
    return [(f.row, f.col + 1) for f in lint_source(textwrap.dedent(source).lstrip("\n"), "case.py", [rule]).findings]


# -- 1. functions only tf.data or Keras trace ---------------------------------------------------------

LIBRARY_TRACED = """
    import tensorflow as tf
    import keras

    @tf.function
    def prepare(x, y):
        return tf.cast(x, tf.float32) / 255.0, y

    @tf.function
    def jitter(x):
        return tf.image.flip_left_right(x)

    def load(x):
        return jitter(x)

    @tf.function
    def augment(x):
        return x * 2.0

    @tf.function
    def collatz(x):
        return x // 2

    @tf.function
    def both(x):
        return x + 1.0

    @tf.function
    def stored(x):
        return x

    @tf.function
    def unused(x):
        return x

    def scale(x):
        return x * 3.0

    scaled = tf.function(scale)

    ds = tf.data.Dataset.range(4).map(prepare).map(load)
    ds = ds.map(lambda x: (augment(x), x)).map(both).map(scaled)
    layer = keras.layers.Lambda(collatz)
    eager = both(tf.constant(1.0))
    hooks = [stored]
    """


def test_uses_tell_the_functions_only_tf_data_or_keras_trace():
    ctx = context(LIBRARY_TRACED)
    scopes = functions(ctx)
    uses = ctx.graphs.uses
    traced = {name: uses.traced_by_library(scopes[name]) for name in
              ("prepare", "jitter", "load", "augment", "collatz", "both", "stored", "unused", "scale")}
    assert traced == {
        "prepare": True,  # ds.map(prepare)
        "jitter": True,  # called only from load, which is only mapped
        "load": True,
        "augment": True,  # called in a lambda given to map
        "collatz": True,  # keras.layers.Lambda(collatz)
        "both": False,  # also called from eager code
        "stored": False,  # held in a list: used some other way
        "unused": False,  # no use in its file: maybe called from another module
        "scale": True,  # scaled = tf.function(scale) is only mapped
    }
    kinds = [(use.kind, use.scope.name) for use in uses.uses(scopes["both"])]
    assert kinds == [("argument", "<module>"), ("call", "<module>")]


MAP_FN_PARAMETER = """
    import multiprocessing
    import tensorflow as tf

    def make_anime_dataset(img_paths, batch_size, resize=64):
        @tf.function
        def _map_fn(img):
            img = tf.image.resize(img, [resize, resize])
            return tf.clip_by_value(img, 0, 255) / 127.5 - 1
        return disk_image_batch_dataset(img_paths, batch_size, map_fn=_map_fn)

    def batch_dataset(dataset, batch_size, filter_fn=None, map_fn=None, n_map_threads=None, shuffle=True):
        if n_map_threads is None:
            n_map_threads = multiprocessing.cpu_count()
        if shuffle:
            dataset = dataset.shuffle(2048)
        if filter_fn:
            dataset = dataset.filter(filter_fn)
        if map_fn:
            dataset = dataset.map(map_fn, num_parallel_calls=n_map_threads)
        dataset = dataset.batch(batch_size)
        return dataset.repeat(1).prefetch(1)

    def memory_data_batch_dataset(memory_data, batch_size, filter_fn=None, map_fn=None):
        dataset = tf.data.Dataset.from_tensor_slices(memory_data)
        return batch_dataset(dataset, batch_size, filter_fn=filter_fn, map_fn=map_fn)

    def disk_image_batch_dataset(img_paths, batch_size, labels=None, map_fn=None):
        memory_data = img_paths if labels is None else (img_paths, labels)

        def parse_fn(path, *label):
            return (tf.image.decode_png(tf.io.read_file(path), 3),) + label

        if map_fn:
            def map_fn_(*args):
                return map_fn(*parse_fn(*args))
        else:
            map_fn_ = parse_fn
        return memory_data_batch_dataset(memory_data, batch_size, map_fn=map_fn_)
    """


def test_a_function_handed_through_parameters_to_a_map_is_only_traced_by_tf_data():
    """H151 (dragen1860 lesson51-WGAN dataset.py): `map_fn=_map_fn` through two
    same-module functions, a wrapper def and a test, to `dataset.map(map_fn)` on a
    dataset the caller hands in."""
    ctx = context(MAP_FN_PARAMETER)
    assert ctx.graphs.uses.traced_by_library(functions(ctx)["_map_fn"])
    assert flagged(MAP_FN_PARAMETER) == []


def test_a_parameter_is_not_a_dataset_unless_every_caller_hands_one():
    source = MAP_FN_PARAMETER + """
    def other(xs):
        return batch_dataset(xs, 8, map_fn=tf.function(lambda x: x))
    """
    ctx = context(source)
    assert not ctx.graphs.uses.traced_by_library(functions(ctx)["_map_fn"])


NOTEBOOK = """
    import tensorflow as tf
    import tensorflow_similarity as tfsim

    def img_scaling(img):
        return tf.keras.applications.imagenet_utils.preprocess_input(img, data_format=None, mode="torch")

    @tf.function
    def simsiam_augmenter(img, blur=True, area_range=(0.2, 1.0)):
        img = tfsim.augmenters.augmentation_utils.cropping.crop_and_resize(img, 32, 32, area_range=area_range)
        def _jitter_transform(x):
            return tfsim.augmenters.augmentation_utils.color_jitter.color_jitter_rand(x, np_rng=None)
        img = tfsim.augmenters.augmentation_utils.random_apply.random_apply(_jitter_transform, p=0.8, x=img)
        return tf.clip_by_value(img, 0.0, 255.0)

    @tf.function()
    def process(img):
        view1 = img_scaling(simsiam_augmenter(img, blur=False))
        view2 = img_scaling(simsiam_augmenter(img, blur=False))
        return (view1, view2)

    train_ds = tf.data.Dataset.from_tensor_slices(x_train)
    train_ds = train_ds.repeat()
    train_ds = train_ds.shuffle(1024)
    train_ds = train_ds.map(process, num_parallel_calls=tf.data.AUTOTUNE)
    val_ds = tf.data.Dataset.from_tensor_slices(x_val)
    val_ds = val_ds.map(process, num_parallel_calls=tf.data.AUTOTUNE)

    @tf.function
    def eval_augmenter(img):
        img = tf.image.random_flip_left_right(img)
        return tf.clip_by_value(img, 0.0, 255.0)

    eval_train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train))
    eval_train_ds = eval_train_ds.map(lambda x, y: (eval_augmenter(x), y), tf.data.AUTOTUNE)
    """


def test_the_similarity_notebook_functions_are_left_alone():
    """H597, H598, H599 (tensorflow/similarity unsupervised_hello_world.ipynb)."""
    assert flagged(NOTEBOOK) == []


def test_a_map_function_also_called_eagerly_is_still_flagged():
    """The Pix2Pix notebook twin (H21): random_jitter is also called eagerly there."""
    source = """
        import tensorflow as tf

        @tf.function()
        def random_jitter(a, b):
            return tf.image.flip_left_right(a), b

        def load_image_train(a):
            return random_jitter(a, a)

        train = tf.data.Dataset.from_tensors(tf.ones([2, 2, 3])).map(load_image_train)
        jittered = random_jitter(tf.ones([2, 2, 3]), tf.ones([2, 2, 3]))
        """
    assert flagged(source) == [(3, 2)]


# -- 2. assertions XLA drops ----------------------------------------------------------------------------

def test_assertions_and_converted_asserts_are_not_compiled():
    source = """
        import tensorflow as tf

        @tf.function
        def per_field_where(t, f):
            tf.debugging.assert_rank_at_least(t, condition_rank)
            return tf.where(condition, t, f)

        @tf.function
        def alias(x):
            tf.compat.v1.assert_equal(x, x)
            return x

        def check(x):
            tf.Assert(tf.reduce_all(x > 0), [x])

        @tf.function
        def reached(x):
            check(x)
            return x

        @tf.function(
            experimental_autograph_options=(
                tf.autograph.experimental.Feature.ASSERT_STATEMENTS,
                tf.autograph.experimental.Feature.EQUALITY_OPERATORS))
        def inverse(x):
            assert x != 0.0, 'Do not pass zero!'
            return 1.0 / x

        @tf.function
        def static(x):
            assert x.shape.rank == 1
            return x * 2.0
        """
    assert flagged(source) == [(29, 2)]  # only `static`: AutoGraph leaves that assert a Python check
    ctx = context(source)
    scopes = functions(ctx)
    assert scopes["inverse"].graph.converts_asserts and not scopes["static"].graph.converts_asserts


def test_a_caller_expecting_a_runtime_error_keeps_the_function_uncompiled():
    """H300 (tensorflow/addons beam_search_decoder_test.py): the tf.Assert is in
    another module's `_check_batch_beam`; the test expects InvalidArgumentError."""
    source = """
        import pytest
        import tensorflow as tf
        from tensorflow_addons.seq2seq import beam_search_decoder

        def basic_test_array_shape_dynamic_checks(static_shape, dynamic_shape, batch_size, beam_width, is_valid=True):
            @tf.function(input_signature=(tf.TensorSpec(dynamic_shape, dtype=tf.float32),))
            def _test_body(t):
                beam_search_decoder._check_batch_beam(t, batch_size, beam_width)

            t = tf.random.uniform(static_shape, dtype=tf.float32)
            if is_valid:
                _test_body(t)
            else:
                with pytest.raises(tf.errors.InvalidArgumentError):
                    _test_body(t)

        class Test(tf.test.TestCase):
            def test_a(self):
                @tf.function
                def a(x):
                    return x * 2.0
                self.assertRaises(tf.errors.InvalidArgumentError, a, 1.0)

            def test_b(self):
                @tf.function
                def b(x):
                    return x * 2.0
                with self.assertRaisesOpError("negative"):
                    b(1.0)

            def test_c(self):
                @tf.function
                def c(x):
                    return x * 2.0
                with self.assertRaises(ValueError):
                    c(1.0)
        """
    ctx = context(source)
    scopes = functions(ctx)
    expected = {name: ctx.graphs.uses.error_expected(scopes[name]) for name in ("_test_body", "a", "b", "c")}
    assert expected == {"_test_body": True, "a": True, "b": True, "c": False}
    assert flagged(source) == [(32, 10)]  # c: a ValueError is raised at trace time, with XLA or without


# -- 3. ragged, sparse and string inputs --------------------------------------------------------------------

def test_ragged_sparse_and_string_inputs_are_not_compiled():
    source = """
        import tensorflow as tf

        @tf.function(
            input_signature=[tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)])
        def max_and_min(rt):
          return (tf.math.reduce_max(rt, axis=-1), tf.math.reduce_min(rt, axis=-1))

        @tf.function
        def f(x, y):
          return tf.sparse.sparse_dense_matmul(x, y)

        @tf.function
        def make_palindrome(x, axis):
          return tf.concat([x, tf.reverse(x, [axis])], axis)

        make_palindrome(tf.constant([[1, 2], [3, 4], [5, 6]]), axis=1)
        make_palindrome(tf.ragged.constant([[1, 2], [3], [4, 5, 6]]), axis=1)

        def create_serving_signature(model):
            @tf.function
            def serve_fn(raw_features):
                return tf.squeeze(model(tf.expand_dims(raw_features, axis=0)), axis=0)
            return serve_fn.get_concrete_function(tf.TensorSpec(shape=(3), dtype=tf.string, name="example"))

        @tf.function
        def dense(x):
          return tf.concat([x, tf.reverse(x, [1])], 1)

        dense(tf.constant([[1, 2]]))

        @tf.function
        def npairs_loss(y_true, y_pred):
          if isinstance(y_true, tf.SparseTensor):
            y_true = tf.sparse.to_dense(y_true)
          return tf.reduce_mean(tf.square(y_true - y_pred))

        npairs_loss(tf.sparse.to_dense(labels), logits)
        """
    # `dense`, called with a dense tensor; `npairs_loss` (tensorflow/addons npairs.py): tf.sparse.to_dense compiles
    assert flagged(source) == [(25, 2), (31, 2)]


# -- decorators below tf.function --------------------------------------------------------------------------------

def test_a_tf_function_over_a_decorator_of_another_module_is_not_judged_by_its_body():
    """H335-H337 (tf_agents xla_test.py): `@tf.function` over `@xla.compile_in_graph_mode`."""
    source = """
        import functools
        import tensorflow as tf
        from tf_agents.utils import xla

        @tf.function
        @xla.compile_in_graph_mode
        def add(x, y):
            return x + y

        @tf.function
        @tf.custom_gradient
        def clip(x):
            return tf.identity(x), lambda dy: tf.clip_by_norm(dy, 1.0)

        @xla.compile_in_graph_mode
        @tf.function
        def outer(x):
            return x * 2.0

        @tf.function
        @tf.keras.utils.register_keras_serializable(package="Addons")
        def pinball_loss(y_true, y_pred, tau=0.5):
            return tf.reduce_mean(tf.maximum(tau * (y_true - y_pred), (tau - 1) * (y_true - y_pred)))
        """
    ctx = context(source)
    scopes = functions(ctx)
    below = {name: [ctx.module.code_for_node(d) for d in ctx.graphs.below_tf_function(scopes[name])]
             for name in ("add", "clip", "outer", "pinball_loss")}
    assert below == {"add": ["xla.compile_in_graph_mode"], "clip": [], "outer": [], "pinball_loss": []}
    assert flagged(source) == [(10, 2), (16, 2), (20, 2)]


# -- 4. TFG405: hazards through the objects a step calls ---------------------------------------------------

MLP_CORE = """
    import tensorflow as tf

    class Adam:
        def __init__(self, learning_rate=1e-3, beta_1=0.9, beta_2=0.999, ep=1e-7):
          self.beta_1 = beta_1
          self.beta_2 = beta_2
          self.learning_rate = learning_rate
          self.ep = ep
          self.t = 1.
          self.v_dvar, self.s_dvar = [], []
          self.built = False

        def apply_gradients(self, grads, vars):
          if not self.built:
            for var in vars:
              v = tf.Variable(tf.zeros(shape=var.shape))
              s = tf.Variable(tf.zeros(shape=var.shape))
              self.v_dvar.append(v)
              self.s_dvar.append(s)
            self.built = True
          for i, (d_var, var) in enumerate(zip(grads, vars)):
            self.v_dvar[i].assign(self.beta_1*self.v_dvar[i] + (1-self.beta_1)*d_var)
            self.s_dvar[i].assign(self.beta_2*self.s_dvar[i] + (1-self.beta_2)*tf.square(d_var))
            v_dvar_bc = self.v_dvar[i]/(1-(self.beta_1**self.t))
            s_dvar_bc = self.s_dvar[i]/(1-(self.beta_2**self.t))
            var.assign_sub(self.learning_rate*(v_dvar_bc/(tf.sqrt(s_dvar_bc) + self.ep)))
          self.t += 1.
          return

    def train_step(x_batch, y_batch, loss, acc, model, optimizer):
      with tf.GradientTape() as tape:
        y_pred = model(x_batch)
        batch_loss = loss(y_pred, y_batch)
      batch_acc = acc(y_pred, y_batch)
      grads = tape.gradient(batch_loss, model.variables)
      optimizer.apply_gradients(grads, model.variables)
      return batch_loss, batch_acc

    def train_model(mlp, train_data, loss, acc, optimizer, epochs):
      for epoch in range(epochs):
        for x_batch, y_batch in train_data:
          batch_loss, batch_acc = train_step(x_batch, y_batch, loss, acc, mlp, optimizer)
    """


def test_hazards_of_a_method_the_step_may_call_on_a_parameter_are_found():
    """H456 (tensorflow/docs guide/core/mlp_core.ipynb)."""
    ctx = context(MLP_CORE)
    hazards = [why for _node, why in ctx.eager.graph_hazards(functions(ctx)["train_step"])]
    assert "stores on an object once per trace (a symbolic tensor afterwards)" in hazards
    findings = lint_source(textwrap.dedent(MLP_CORE).lstrip("\n"), "case.py", [TFG405]).findings
    assert [(f.row, f.col + 1, f.fix) for f in findings] == [(30, 5, None)]
    assert fix_source(textwrap.dedent(MLP_CORE).lstrip("\n"), "case.py", [TFG405, TFG401], unsafe=True).source \
        == textwrap.dedent(MLP_CORE).lstrip("\n")


def test_a_method_the_engine_cannot_find_is_a_hazard():
    source = """
        import tensorflow as tf

        class Trainer:
            def __init__(self, hook):
                setattr(self, "hook", hook)

            def step(self, x):
                return self.hook(x)
        """
    ctx = context(source)
    hazards = [why for _node, why in ctx.eager.graph_hazards(functions(ctx)["step"])]
    assert hazards == ["calls a method of the module's own object that the engine cannot find"]


# -- the TensorFlow behaviour the docs state ------------------------------------------------------------------

MEASURE = r'''
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

def outcome(fn, *args, **kw):
    row = []
    for jit in (False, True):
        try:
            tf.function(fn, jit_compile=jit, **kw)(*args)
            row.append("ran")
        except tf.errors.InvalidArgumentError:
            row.append("InvalidArgumentError")
        except Exception as e:
            row.append(type(e).__name__)
    return row

def positive(x):
    tf.debugging.assert_positive(x)
    return x

def asserted(x):
    tf.Assert(tf.reduce_all(x > 0), [x])
    return x

def finite(x):
    return tf.debugging.check_numerics(x, "bad")

def shaped(x):
    return tf.ensure_shape(x, [3])

def statement(x):
    assert x > 0
    return x

ASSERTS = (tf.autograph.experimental.Feature.ASSERT_STATEMENTS,)
spec = [tf.TensorSpec([None], tf.float32)]
rows = {
    "assert_positive": outcome(positive, tf.constant([-1.0])),
    "Assert": outcome(asserted, tf.constant([-1.0])),
    "check_numerics": outcome(finite, tf.constant([np.nan], tf.float32)),
    "ensure_shape": outcome(shaped, tf.ones([2]), input_signature=spec),
    "assert, default": outcome(statement, tf.constant(-1.0)),
    "assert, ASSERT_STATEMENTS": outcome(statement, tf.constant(-1.0), experimental_autograph_options=ASSERTS),
    "ragged to_tensor": outcome(lambda r: r.to_tensor(), tf.ragged.constant([[1], [2, 3]])),
    "sparse reduce_sum": outcome(lambda s: tf.sparse.reduce_sum(s),
                                 tf.sparse.from_dense(tf.constant([[1, 0], [0, 2]]))),
}
print(repr(rows))
'''


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="TensorFlow is not installed")
def test_tensorflow_behaves_as_the_docs_say(tmp_path):
    """TFG401's docs (Not flagged, Fix safety) as measured under TF 2.21 on CPU."""
    script = tmp_path / "measure.py"  # a file: AutoGraph reads the source of what it converts
    script.write_text(MEASURE, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = eval(done.stdout.strip().splitlines()[-1])  # a dict of lists of str, printed by the script
    dropped = ["InvalidArgumentError", "ran"]
    assert rows == {
        "assert_positive": dropped,
        "Assert": dropped,
        "check_numerics": dropped,
        "ensure_shape": ["InvalidArgumentError", "InvalidArgumentError"],  # kept by XLA
        "assert, default": ["OperatorNotAllowedInGraphError", "OperatorNotAllowedInGraphError"],
        "assert, ASSERT_STATEMENTS": dropped,
        "ragged to_tensor": ["ran", "InvalidArgumentError"],
        "sparse reduce_sum": ["ran", "InvalidArgumentError"],
    }
