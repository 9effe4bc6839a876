from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.api import EAGER_WRAPPERS, argument, keyword
from tflint_gpu.semantic.datasets import (
    Chain,
    chains,
    flagged_calls,
    function_calls,
    map_function,
    method,
    random_call,
    short_name,
    upstream,
    when,
)
from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.rules.base import CHANGES, RANDOM, Fix, Rule, Safety, clean, flagged

# Where `num_parallel_calls` stands among the positional arguments.
_POSITION = {"map": 1, "interleave": 3}

# The first TensorFlow whose tf.data runs a stateless `map` in parallel by itself
# (`map_parallelization`, "If None, defaults to True"). Documented in the r2.7 API docs and
# every later one; measured (benchmarks/versions/) from TF 2.12 on. The TF 2.1-era
# optimization_options.py said "defaults to False"; 2.2 to 2.6 were not established.
MAP_PARALLELIZATION_TF = (2, 7)


class DatasetMapWithoutParallelism(Rule):
    """A `map` or `interleave` that tf.data runs sequentially: no `num_parallel_calls`.

    ## What it does
    Finds, in a `tf.data` pipeline:

    1. `map(f)` without `num_parallel_calls` where `f` (a lambda, a `def`,
       a `functools.partial`, a callable object, and the functions of the
       module it calls) uses a stateful random op (`tf.random.*`,
       `tf.image.random_*`, `tf.nn.dropout`, a `tf.random.Generator`, a Keras
       `Random*` layer);
    2. `interleave(f, ...)` without `num_parallel_calls`;
    3. for a project that targets TF 2.6 or older (`target-version`, or the
       pins `semantic/target.py` reads), also `map(f)` without
       `num_parallel_calls` where `f` resolves and uses no random op and no
       Python: those versions run every such map sequentially (see below).

    Not flagged for TF 2.7 and newer (the default target is the newest
    release): a `map` whose function is stateless (`lambda x: x / 255`,
    decoding, resizing), or cannot be resolved (imported): tf.data's
    `map_parallelization` optimization (`tf.data.Options` documents it as
    "If None, defaults to True") already runs a stateless `map` in
    parallel (TF 2.21: `range(5).map(lambda x: x * 2)` is
    rewritten to `ParallelMap`; with `tf.image.random_flip_left_right`,
    `keras.layers.RandomFlip`, a `tf.random.Generator`, `tf.py_function` it
    stays `Map`). Adding `num_parallel_calls` there is redundant unless the
    optimization is turned off (`apply_default_optimizations=False`), so the
    rule stays quiet, even though such maps are very common. That default
    is version-dependent: `map_parallelization` is documented "If None,
    defaults to True" from the r2.7 API docs on, "defaults to False" in
    the TF 2.1-era source (`optimization_options.py`); 2.2 to 2.6 were
    not established, so the rule counts them as sequential. For a target
    older than 2.7 the rule reports a map it can read that has no random
    op and no Python (not one it cannot resolve, nor one running Python). Random ops only
    under a Python condition (`if training:`, `if self._train:`, `if shuffle:`
    on a closure value) are not counted; a tensor condition (`if
    tf.random.uniform(()) > 0.5:`) is. A map running Python
    (`tf.py_function`, `tf.numpy_function`) is sequential too, but parallel
    calls help there only where the Python releases the GIL: that is
    TFG307's hint. Nor an `interleave` with `cycle_length=1` (nothing to
    overlap), nor a call with `*args`/`**kwargs`.
    Other stateful ops (variables, lookup tables, `tf.print`) are not
    recognised: those maps are missed.

    ## Why is this bad?
    Without `num_parallel_calls`, a map with stateful ops calls its function
    on one element at a time, on one thread, and the training step waits for
    it: random augmentation is exactly the work worth spreading over the
    cores. `interleave` without `num_parallel_calls` reads its `cycle_length`
    inputs in turn on one thread (tf.data never parallelizes it by itself),
    so file-read latency adds up instead of overlapping.

    ## Example
    ```python
    train = images.map(augment)                       # augment uses tf.image.random_*
    records = files.interleave(tf.data.TFRecordDataset, cycle_length=4)
    ```

    Use instead:
    ```python
    train = images.map(augment, num_parallel_calls=tf.data.AUTOTUNE)
    records = files.interleave(tf.data.TFRecordDataset, cycle_length=4,
                               num_parallel_calls=tf.data.AUTOTUNE)
    ```

    ## Fix safety
    The fix adds `num_parallel_calls=tf.data.AUTOTUNE` (`tf.data.experimental.AUTOTUNE`
    where the project's target is older than TF 2.4, which has only that name). The
    order of the elements is kept (`deterministic` defaults to True).

    * `interleave`: safe when its function resolves, uses no random op, no
      `shuffle` and no Python (`tf.py_function`), and `cycle_length` is given
      (TF 2.21 gives the same elements in the same order). Unsafe when
      `cycle_length` is not given or `AUTOTUNE` (the parallel version picks
      another default cycle length: the order changes), when the function
      is random, when `deterministic` is passed and not True, or when the
      pipeline has `with_options` (which may turn determinism off).
    * `map` with no random op that always runs (targets older than TF 2.7): safe when the
      function calls only TensorFlow ops and functions of the module (the
      same elements in the same order: `deterministic` defaults to True);
      unsafe when it calls something whose side effects the linter cannot
      see (`v.assign_add(1)`, `tf.print`, `tf.summary.*`, an imported
      helper: a parallel map runs them in another order), a random op
      under a Python flag (`if augment:`), or when the
      pipeline has `with_options` (which may turn determinism off); no fix
      when `deterministic=` is given.
    * `map` with random ops: unsafe. Parallel calls draw from the op's
      random stream in the order they run, so which element gets which
      draw varies from run to run even under `tf.random.set_seed` (TF 2.21:
      the same multiset of draws, assigned differently).
    * No fix for an `interleave` whose function runs Python
      (`tf.py_function` and friends: it may not be thread-safe) or cannot be
      resolved, or for a `map` with `deterministic=` given.

    ## Measured effect
    TF 2.21, CPU (2 cores, shared): which transformation tf.data actually
    runs, checked with `tf.data.experimental.assert_next`: a stateless
    `map` becomes `ParallelMap` by default, a `map` with a random op or a
    `tf.py_function` stays `Map`, `interleave` stays `Interleave`. Work with
    latency (10 ms a call, `time.sleep` in a `tf.py_function`), 40 elements:
    `map` 0.43 s, with `num_parallel_calls=AUTOTUNE` 0.22 s; `interleave` of 8
    inputs of 5 such elements with `cycle_length=4`: 0.44 s, parallel 0.22 s
    (same order). `examples/TFG306` (images resized from 96x96 to 192x192,
    random flips and `rot90`; 64 images at `--size small`, 512 at `--size
    large`), `tflint-gpu verify --device cpu`: the same per-image pixel sums
    within the example's tolerance (flips keep them), faster after the fix
    at both sizes; the measurement below is the small size's.

    Per version (`benchmarks/versions/`: TF 2.12.0, 2.13.1, 2.14.1, 2.15.1,
    2.16.2 and 2.21 CPU wheels, Python 3.11, the 2-core machine shared with
    other jobs, load average 16 to 30): every one leaves
    `map_parallelization` None, documents it "If None, defaults to True" and
    runs `range(n).map(f)` of a stateless `f` as `ParallelMap`
    (`assert_next`, which fails with the optimization off). The timings
    (best of 5, 24 PNG encodings at zlib level 9; TF 2.12: 5.06 s by
    default, 3.51 s with `num_parallel_calls`, 6.09 s with the optimization
    off; again at a lower load: 1.39 s, 1.36 s, 1.86 s) do not reproduce on that loaded machine (two runs of TF 2.14
    disagree on which is fastest): `benchmarks/versions/README.md` has them
    all. TF 2.11 and older do not install on this Python: their default is
    the API docs' word, not measured.
    """

    code = "TFG306"
    name = "dataset-map-without-parallelism"
    message = "`map` runs sequentially: add `num_parallel_calls=tf.data.AUTOTUNE`"
    needs = ((".map(", ".interleave("),)
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)

    def visit_Module(self, node: cst.Module, ctx) -> None:
        for chain in chains(ctx):
            for stage in chain.stages:
                name = method(stage)
                if name not in _POSITION or any(arg.star for arg in stage.args):
                    continue
                if argument(stage, _POSITION[name], "num_parallel_calls") is not None:
                    continue
                if name == "map":
                    self._map(chain, stage, ctx)
                else:
                    self._interleave(chain, stage, ctx)

    def _map(self, chain: Chain, stage: cst.Call, ctx) -> None:
        found = _stateful(stage, chain.scope, ctx)
        stateless = found is not None and not found[0] and not found[1]
        if stateless and not ctx.target.at_least(MAP_PARALLELIZATION_TF):
            self._stateless_map(chain, stage, ctx)
            return
        if found is None or not found[0] or found[1]:
            return  # unknown, stateless (tf.data parallelizes it by itself), or Python (TFG307)
        message = f"`map` runs sequentially: its function uses {found[0][0]}, which tf.data does not parallelize"
        fix = None
        if keyword(stage, "deterministic") is None:
            fix = _fix(stage, chain.scope, ctx, Safety.UNSAFE,
                       "Run the map in parallel (random draws go to other elements)")
        ctx.report(stage.func.attr, message + when(chain, stage), fix)

    def _stateless_map(self, chain: Chain, stage: cst.Call, ctx) -> None:
        """A map with no random op nor Python, for a target older than TF 2.7: tf.data runs it sequentially."""
        tf = ctx.target.tf
        message = (f"`map` runs sequentially: TF {tf[0]}.{tf[1]} (the target) does not parallelize a `map` by "
                   f"itself (`map_parallelization` does it for stateless functions from TF 2.7)")
        fix = None
        if keyword(stage, "deterministic") is None:
            options = "with_options" in upstream(chain, ctx) + [method(s) for s in
                                                                chain.all_stages() + chain.later_stages()]
            # Same elements in the same order (deterministic defaults to True), unless options may turn
            # determinism off.
            unknown = not _only_known_stateless_ops(stage, chain.scope, ctx)
            note = (" (options may turn determinism off)" if options else
                    " (it calls code whose side effects the linter cannot see)" if unknown else "")
            fix = _fix(stage, chain.scope, ctx, Safety.UNSAFE if options or unknown else Safety.SAFE,
                       "Run the map in parallel" + note)
        ctx.report(stage.func.attr, message + when(chain, stage), fix)

    def _interleave(self, chain: Chain, stage: cst.Call, ctx) -> None:
        cycle = argument(stage, 1, "cycle_length")
        if isinstance(cycle, cst.Integer) and cycle.value == "1":
            return
        message = "`interleave` without `num_parallel_calls` reads its inputs one at a time"
        found = _stateful(stage, chain.scope, ctx)
        fix = None
        if found is not None and not found[1]:
            randoms = found[0] or _shuffles(stage, chain.scope, ctx)
            deterministic = keyword(stage, "deterministic")
            no_cycle = cycle is None or (cst.Module([]).code_for_node(cycle).endswith("AUTOTUNE")) or (
                isinstance(cycle, cst.Name) and cycle.value == "None")
            options = "with_options" in upstream(chain, ctx) + [method(s) for s in
                                                                chain.all_stages() + chain.later_stages()]
            unsafe = bool(randoms) or no_cycle or options or (
                deterministic is not None and not (isinstance(deterministic.value, cst.Name)
                                                   and deterministic.value.value == "True"))
            fix = _fix(stage, chain.scope, ctx, Safety.UNSAFE if unsafe else Safety.SAFE,
                       "Read the inputs in parallel" + (" (the order may change)" if unsafe else ""))
        ctx.report(stage.func.attr, message + when(chain, stage), fix)

    cases = [
        flagged(
            """
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
            ds = tf.data.Dataset.from_tensor_slices(images).map(tf.image.random_flip_left_right).batch(2)
            """,
            fixed="""
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
            ds = tf.data.Dataset.from_tensor_slices(images).map(tf.image.random_flip_left_right, num_parallel_calls=tf.data.AUTOTUNE).batch(2)
            """,  # noqa: E501
            at=[(4, 49, "`map` runs sequentially: its function uses `tf.image.random_flip_left_right`")],
            effect=RANDOM,
            note="the random op itself as the map function",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            flip = keras.layers.RandomFlip("horizontal")
            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))

            def augment(image, label):
                return flip(image, training=True), label

            ds = tf.data.Dataset.from_tensor_slices((images, tf.range(2)))
            ds = ds.map(
                augment,
            )
            """,
            fixed="""
            import keras
            import tensorflow as tf

            flip = keras.layers.RandomFlip("horizontal")
            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))

            def augment(image, label):
                return flip(image, training=True), label

            ds = tf.data.Dataset.from_tensor_slices((images, tf.range(2)))
            ds = ds.map(
                augment,
                num_parallel_calls=tf.data.AUTOTUNE,
            )
            """,
            at=[(11, 9, "`map` runs sequentially: its function uses the random layer `flip`")],
            run="out = list(ds.as_numpy_iterator())",
            effect=RANDOM,
            note="a Keras random layer in a def; the trailing comma and layout are kept",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            def load(path):
                return tf.numpy_function(lambda p: np.float32(len(p)), [path], tf.float32)

            ds = tf.data.Dataset.from_tensor_slices(["a", "bb"]).map(load)
            """,
            note="Python in the map: sequential too, but parallel calls help only Python that releases the GIL "
                 "(TFG307's hint)",
        ),
        clean(
            """
            import tensorflow as tf

            def make(x, shuffle):
                def permutation(_):
                    indices = tf.range(x, dtype=tf.int64)
                    if shuffle and shuffle != "batch":
                        indices = tf.random.shuffle(indices)
                    return indices

                return tf.data.Dataset.range(3).map(permutation).prefetch(1)
            """,
            note="tf_keras data_adapter: the random op only under a Python condition on a closure value "
                 "(and one big permutation per epoch, kept sequential on purpose)",
        ),
        flagged(
            """
            import tensorflow as tf

            def jitter(x):
                if tf.random.uniform(()) > 0.5:
                    x = x + 1
                return x

            ds = tf.data.Dataset.range(4).map(jitter)
            """,
            fixed="""
            import tensorflow as tf

            def jitter(x):
                if tf.random.uniform(()) > 0.5:
                    x = x + 1
                return x

            ds = tf.data.Dataset.range(4).map(jitter, num_parallel_calls=tf.data.AUTOTUNE)
            """,
            at=[(8, 31, "`map` runs sequentially: its function uses `tf.random.uniform`")],
            effect=RANDOM,
            note="a random op in the test of an if (a tensor condition: AutoGraph's tf.cond)",
        ),
        flagged(
            """
            import tensorflow as tf

            def make(files: tf.data.Dataset) -> tf.data.Dataset:
                return files.interleave(tf.data.TFRecordDataset, cycle_length=4)
            """,
            fixed="""
            import tensorflow as tf

            def make(files: tf.data.Dataset) -> tf.data.Dataset:
                return files.interleave(tf.data.TFRecordDataset, cycle_length=4, num_parallel_calls=tf.data.AUTOTUNE)
            """,  # noqa: E501
            at=[(4, 18, "`interleave` without `num_parallel_calls`")],
            run="""
            import os
            import tempfile

            _paths = [os.path.join(tempfile.mkdtemp(), f"{i}.rec") for i in range(3)]
            for _i, _path in enumerate(_paths):
                with tf.io.TFRecordWriter(_path) as _writer:
                    for _j in range(2 + _i):
                        _writer.write(f"{_i}-{_j}".encode())
            out = tf.stack(list(make(tf.data.Dataset.from_tensor_slices(_paths))))
            """,
            note="a stateless interleave with its cycle length: safe, the same order (files of 2, 3, 4 records)",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(6).interleave(lambda i: tf.data.Dataset.range(i * 10, i * 10 + 4), 3, 2)
            """,
            fixed="""
            import tensorflow as tf

            ds = tf.data.Dataset.range(6).interleave(lambda i: tf.data.Dataset.range(i * 10, i * 10 + 4), 3, 2, num_parallel_calls=tf.data.AUTOTUNE)
            """,  # noqa: E501
            at=[(3, 31, "`interleave` without `num_parallel_calls`")],
            note="positional cycle_length and block_length: same order (executed)",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(6).interleave(lambda i: tf.data.Dataset.range(i * 10, i * 10 + 7))
            """,
            fixed="""
            import tensorflow as tf

            ds = tf.data.Dataset.range(6).interleave(lambda i: tf.data.Dataset.range(i * 10, i * 10 + 7), num_parallel_calls=tf.data.AUTOTUNE)
            """,  # noqa: E501
            at=[(3, 31, "`interleave` without `num_parallel_calls`")],
            effect=CHANGES,
            note="no cycle_length: the parallel version picks another default cycle length, the order changes "
                 "(unsafe)",
        ),
        flagged(
            """
            import tensorflow as tf
            from readers import read_shard

            ds = tf.data.Dataset.list_files("*.rec").interleave(read_shard, cycle_length=2)
            """,
            at=[(4, 42, "`interleave` without `num_parallel_calls`")],
            note="an imported function: reported, no fix",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf
            from keras import layers

            augmentation = keras.Sequential([layers.RandomFlip("horizontal"), layers.RandomRotation(0.1)])
            images = tf.reshape(tf.range(192, dtype=tf.float32), (4, 4, 4, 3))
            train = tf.data.Dataset.from_tensor_slices((images, tf.range(4))).batch(2)
            train = train.map(lambda x, y: (augmentation(x), y))
            """,
            fixed="""
            import keras
            import tensorflow as tf
            from keras import layers

            augmentation = keras.Sequential([layers.RandomFlip("horizontal"), layers.RandomRotation(0.1)])
            images = tf.reshape(tf.range(192, dtype=tf.float32), (4, 4, 4, 3))
            train = tf.data.Dataset.from_tensor_slices((images, tf.range(4))).batch(2)
            train = train.map(lambda x, y: (augmentation(x), y), num_parallel_calls=tf.data.AUTOTUNE)
            """,
            at=[(8, 15, "`map` runs sequentially: its function uses the random layer `augmentation`")],
            effect=RANDOM,
            note="the keras.io augmentation pattern: a Sequential of random layers",
        ),
        clean(
            """
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
            ds = tf.data.Dataset.from_tensor_slices(images).map(lambda v: tf.image.resize(v / 255.0, (8, 8)))
            """,
            note="a stateless map: tf.data's map_parallelization already runs it in parallel (ParallelMap)",
        ),
        clean(
            """
            import tensorflow as tf
            from augment import augment

            ds = tf.data.Dataset.range(4).map(augment)
            """,
            note="an imported map function: unknown",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(4).map(lambda x: x + tf.random.uniform((), 0, 2, tf.int64), 2)
            other = tf.data.Dataset.range(4).interleave(lambda i: tf.data.Dataset.range(i), cycle_length=1)
            """,
            note="num_parallel_calls passed positionally; cycle_length=1 has nothing to overlap",
        ),
        clean(
            """
            import tensorflow as tf

            class Preprocess:
                def __init__(self, train):
                    self._train = train

                def __call__(self, image):
                    if self._train:
                        image = tf.image.random_flip_left_right(image)
                    return image

            ds = tf.data.Dataset.range(3).map(Preprocess(train=False))
            """,
            note="random only under a Python flag: stateless when the flag is off",
        ),
        clean(
            """
            import pandas as pd
            import tensorflow as tf

            frame = pd.read_csv("a.csv")
            frame["x"].map(lambda v: tf.random.uniform(()))
            """,
            note="not a dataset",
        ),
        flagged(
            """
            import tensorflow as tf

            def make(x, augment):
                ds = tf.data.Dataset.from_tensor_slices(x)
                if augment:
                    ds = ds.map(lambda v: tf.image.random_flip_left_right(v))
                return ds.batch(2)
            """,
            fixed="""
            import tensorflow as tf

            def make(x, augment):
                ds = tf.data.Dataset.from_tensor_slices(x)
                if augment:
                    ds = ds.map(lambda v: tf.image.random_flip_left_right(v), num_parallel_calls=tf.data.AUTOTUNE)
                return ds.batch(2)
            """,
            at=[(6, 17, "`map` runs sequentially: its function uses `tf.image.random_flip_left_right`, which tf.data "
                        "does not parallelize (when `augment` is true)")],
            run="""
            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
            out = [list(make(images, flag).as_numpy_iterator()) for flag in (True, False)]
            """,
            effect=RANDOM,
            note="a map under `if augment:`: the finding names the branch",
        ),
        clean(
            """
            import pandas as pd
            import tensorflow as tf

            ds = tf.data.Dataset.from_tensor_slices([1.0, 2.0])
            ds = pd.read_csv("data.csv")
            ds = ds.map(lambda v: tf.random.uniform(()))
            """,
            note="`ds` rebound to a DataFrame before the `map`: not a dataset there",
        ),
    ]


def _stateful(stage: cst.Call, scope: ScopeInfo, ctx) -> Optional[Tuple[List[str], List[str]]]:
    """The random ops and the Python calls (described) the stage's function makes,
    outside Python flags; None when the function cannot be resolved."""
    func = map_function(stage)
    calls = function_calls(func, scope, ctx)
    if calls is None:
        return None
    if len(calls) == 1 and calls[0][0].func is func and not (ctx.qualname(func, scope) or "").startswith(
            "tensorflow."):
        return None  # an imported function given by name: its body is out of sight
    flagged_ids = flagged_calls(func, scope, ctx)
    flagged_ids |= _under_python_condition([inner for _, inner in calls], ctx)
    randoms: List[str] = []
    python: List[str] = []
    for call, inner in calls:
        if id(call) in flagged_ids:
            continue
        qualname = ctx.qualname(call.func, inner)
        if qualname in EAGER_WRAPPERS:
            python.append(f"`{short_name(qualname)}`")
            continue
        found = random_call(call, inner, ctx)
        if found:
            randoms.append(found)
    return randoms, python


# TensorFlow calls with side effects that a parallel map would run in another order.
_SIDE_EFFECTS = frozenset({"tensorflow.print", "tensorflow.Variable", "tensorflow.io.write_file",
                           "tensorflow.compat.v1.assign", "tensorflow.compat.v1.assign_add"})
_SIDE_EFFECT_PREFIXES = ("tensorflow.summary.", "tensorflow.lookup.", "tensorflow.compat.v1.")


def _only_known_stateless_ops(stage: cst.Call, scope: ScopeInfo, ctx) -> bool:
    """Does the map's function call only TensorFlow ops known to have no side effects
    (and functions of this module, whose calls are among those checked)? ``v.assign_add(1)``,
    ``tf.print``, a call of an imported helper, a random op under a Python flag: no."""
    for call, inner in function_calls(map_function(stage), scope, ctx) or ():
        if random_call(call, inner, ctx):
            return False  # a random op under a Python flag (`if augment:`): it may run
        qualname = ctx.qualname(call.func, inner) or ""
        if qualname.startswith("tensorflow."):
            if qualname in _SIDE_EFFECTS or qualname.startswith(_SIDE_EFFECT_PREFIXES):
                return False
        elif ctx.graphs.function_scope(call.func, inner) is None:
            return False
    return True


def _under_python_condition(scopes: List[ScopeInfo], ctx) -> Set[int]:
    """Ids of the nodes of these functions that an ``if`` on a value not known to be a
    tensor guards (``if shuffle:`` on a closure value): whether they run is configuration."""
    found: Set[int] = set()
    done: Set[int] = set()
    for scope in scopes:
        function = scope.function()
        if function is None or id(function) in done:
            continue
        done.add(id(function))

        def python(test: cst.BaseExpression, branch: bool, where: ScopeInfo = function) -> Optional[bool]:
            return None if ctx.is_tensor(test, where) else branch

        found |= bindings.guarded_nodes(function.node, lambda test: python(test, True))
        found |= bindings.guarded_nodes(function.node, lambda test: python(test, False))
    return found


def _shuffles(stage: cst.Call, scope: ScopeInfo, ctx) -> bool:
    """Does the interleave's function shuffle (``Dataset.shuffle``) its inner dataset?"""
    calls = function_calls(map_function(stage), scope, ctx) or []
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "shuffle" for c, _ in calls)


def _fix(stage: cst.Call, scope: ScopeInfo, ctx, safety: Safety, message: str) -> Optional[Fix]:
    spelled = ctx.module_expr("tensorflow", "data.AUTOTUNE", scope=scope)
    if spelled is None:
        return None
    value, imports = spelled
    args = list(stage.args)
    new = cst.Arg(value=value, keyword=cst.Name("num_parallel_calls"),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")))
    if args:
        last = args[-1]
        if isinstance(last.comma, cst.Comma):
            new = new.with_changes(comma=last.comma)  # a trailing comma (and its line break) moves to the new arg
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=_between(stage, last)))
    return Fix(message, safety, {stage: stage.with_changes(args=args + [new])}, imports)


def _between(stage: cst.Call, last: cst.Arg):
    """The whitespace to put between ``last`` and the new argument: with a trailing
    comma (one argument a line), the break and indentation that lead to ``last``;
    else one space."""
    if not isinstance(last.comma, cst.Comma):
        return cst.SimpleWhitespace(" ")
    args = stage.args
    if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma):
        return args[-2].comma.whitespace_after
    return stage.whitespace_before_args
