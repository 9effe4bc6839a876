from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from tflint_gpu.autofix.dataset_chain import reorder
from tflint_gpu.semantic.api import EAGER_WRAPPERS, argument, keyword
from tflint_gpu.semantic.datasets import (
    Chain,
    chains,
    flagged_calls,
    function_calls,
    is_stage,
    map_function,
    method,
    random_call,
    short_name,
    shuffle_before_cache,
    single_value,
    upstream,
    when,
)
from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.rules.base import CHANGES, RANDOM, Fix, Rule, Safety, clean, flagged

# Ops that make a map worth caching after: file reads, decoding, parsing, resizing,
# and Python callbacks. Elementwise arithmetic and casts are not on the list.
_EXPENSIVE_PREFIXES = (
    "tensorflow.io.decode_",
    "tensorflow.image.decode_",
    "tensorflow.io.parse_",
    "tensorflow.audio.decode_",
    "tensorflow.image.resize",
)
_EXPENSIVE = frozenset(
    {
        "tensorflow.io.read_file",
        "tensorflow.read_file",
        "tensorflow.image.crop_and_resize",
        "tensorflow.signal.stft",
    }
) | EAGER_WRAPPERS
# Calls whose effects are seen outside the map's output: running them once
# instead of every epoch is a visible change.
_EFFECTS = frozenset({"tensorflow.print"}) | EAGER_WRAPPERS
_STATE_METHODS = ("assign", "assign_add", "assign_sub", "scatter_")
# Origins whose elements differ from one iteration to the next.
_RANDOM_SOURCES = frozenset({"tensorflow.data.Dataset.random", "tensorflow.data.experimental.RandomDataset"})

# Stages between `cache()` and `take(k)` that still stop the cache's input early.
_PASS_ALONG = frozenset({"map", "prefetch", "with_options", "batch", "padded_batch"})


class DatasetCacheMisplaced(Rule):
    """`Dataset.cache()` in a place where it caches the wrong thing.

    ## What it does
    Finds three misplacements of `cache()` (in-memory or `cache(filename)`,
    which behave alike) in a `tf.data` pipeline, in one expression or across
    statements reassigning the same name:

    1. `cache()` after a `map` whose function draws random numbers
       (`tf.random.*`, `tf.image.random_*`, `tf.nn.dropout`, a
       `tf.random.Generator`, a Keras `RandomFlip`/`RandomRotation`/... layer,
       also inside a `keras.Sequential`, or in a function the map calls);
    2. a `map` after `cache()` whose function does costly work: reads a file
       (`tf.io.read_file`), decodes or parses (`tf.io.decode_*`,
       `tf.image.decode_*`, `tf.io.parse_*`, `tf.audio.decode_*`), resizes
       (`tf.image.resize*`, `crop_and_resize`), `tf.signal.stft`, or runs
       Python (`tf.py_function`, `tf.numpy_function`);
    3. `cache().take(k)`, also with `map`, `batch` or `prefetch` in between
       (`cache().batch(32).take(10)`).

    Not flagged: a cheap map after `cache()` (`lambda x: x / 255`, casts,
    arithmetic): caching its float32 output would cost four times the memory
    of uint8 input for little saved work. Maps whose function cannot be
    resolved (imported) are never called costly. Stateless random ops
    (`tf.image.stateless_random_*` with a fixed seed) give the same values
    every epoch with or without the cache, so caching after them changes
    nothing. Non-dataset `.map`/`.cache` (pandas, `functools.lru_cache`) are
    ignored: the receiver must be known to be a `tf.data.Dataset` (made by a
    `tf.data` constructor, `tfds.load`/`as_dataset` with one split, a Keras
    `*_dataset_from_*` utility, a same-module function returning one, or a
    parameter annotated `tf.data.Dataset`).

    ## Why is this bad?
    1. The cache stores the first epoch's augmented elements and replays them:
       every epoch sees the same "random" flips and crops, which defeats the
       augmentation. (Checked on TF 2.21: `map(random).cache()` yields
       identical epochs.)
    2. `cache()` keeps its input, so the map after it runs again on every
       element every epoch: 12 calls over 3 epochs of 4 elements, against 4
       with `map(f).cache()`. Caching file names or encoded bytes and decoding
       every epoch is sometimes chosen on purpose to save memory; it trades
       much more time for that.
    3. `take(k)` stops reading before the cache is complete; TF then discards
       the partial cache and logs: `The calling iterator did not fully read
       the dataset being cached. In order to avoid unexpected truncation of the
       dataset, the partially cached contents of the dataset  will be
       discarded. This can happen if you have an input pipeline similar to
       `dataset.cache().take(k).repeat()`. You should use
       `dataset.take(k).cache().repeat()` instead.` Nothing is ever cached.

    ## Example
    ```python
    train = images.map(augment).cache()          # augment uses tf.image.random_*
    files = paths.cache().map(load_and_resize)   # reads and decodes each epoch
    sample = ds.cache().take(100)
    ```

    Use instead:
    ```python
    train = images.cache().map(augment)
    files = paths.map(load_and_resize).cache()
    sample = ds.take(100).cache()
    ```

    ## Fix safety
    1. `map(augment).cache()` -> `cache().map(augment)` is unsafe: elements
       change on purpose (fresh augmentation every epoch). Offered when only
       `map`s lie between the first random map and the cache. Caveat: with
       `tf.random.set_seed` set and a fresh iterator every epoch, plain
       `tf.random.*`/`tf.image.random_*` ops restart their sequence each
       epoch even uncached (observed on TF 2.21), so there the values do not
       change; Keras random layers and `tf.random.Generator` do vary per
       epoch.
    2. `cache().map(f)` -> `map(f).cache()` is safe when `f` is deterministic
       and has no effects: the same values, computed once. The cache now holds
       the map's output, which may be larger (decoded images). Unsafe when `f`
       runs `tf.py_function`/`tf.numpy_function`/`tf.print` or assigns
       variables (they would run once instead of every epoch), or the map has
       `deterministic=False`. Offered only when the map directly follows the
       cache; otherwise reported without a fix.
    3. `cache().take(k)` -> `take(k).cache()` is safe when what comes before
       the cache is the same every epoch. When it has a random or unresolved
       map, a `filter`/`interleave`/`flat_map`/`apply`, or `Dataset.random`,
       the fix is unsafe: today each epoch takes a fresh sample; after it, the
       first sample is cached and repeated. Offered when `take` directly
       follows the cache.

    No fix is offered when a `shuffle` comes before the cache (in the same
    expression, in earlier statements, or in what a name is bound to; a
    `Dataset.list_files` shuffles unless `shuffle=False`): the fixed pipeline
    would still cache one shuffled order and replay it every epoch (checked on
    TF 2.21), so it is reported without a fix.

    Each call keeps its comments: in a chain written one call per line, the
    comment ending a call's line and the comment lines just above it move
    with the call. Where that is impossible (the comment would land between
    two calls on one line, or after the last call of a chain that is not
    parenthesised and spans lines), the finding has no fix.

    ## Measured effect
    TF 2.21, CPU (2 cores): 64 PNG images of 128x128, decoded and resized to
    224x224, 3 epochs: `cache().map(decode)` 0.210 s, `map(decode).cache()`
    0.064 s (same sum of pixels). `examples/TFG301` (PNGs of 256x256 resized
    to 128x128: 32 over 3 epochs at `--size small`, 256 over 5 at `--size
    large`) under `tflint-gpu verify --device cpu`: the same values, faster
    after the fix; the measurement below is the small size's (a large run,
    not recorded, gained more).
    """

    code = "TFG301"
    name = "dataset-cache-misplaced"
    message = "`cache()` is misplaced in the tf.data pipeline"
    needs = ((".cache(",),)
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)

    def visit_Module(self, node: cst.Module, ctx) -> None:
        for chain in chains(ctx):
            stages = chain.all_stages()
            for stage in chain.stages:
                k = chain.index(stage)
                name = method(stage)
                if name == "cache":
                    self._cache_after_random(chain, stages, k, ctx)
                elif name == "map" and k > 0:
                    self._map_after_cache(chain, stages, k, ctx)
                elif name == "take":
                    cache_at = k - 1
                    while cache_at >= 0 and method(stages[cache_at]) in _PASS_ALONG:
                        cache_at -= 1
                    if cache_at >= 0 and method(stages[cache_at]) == "cache":
                        self._cache_then_take(chain, stages, cache_at, k, ctx)

    # 1. map(random).cache() --------------------------------------------
    def _cache_after_random(self, chain: Chain, stages: List[cst.Call], k: int, ctx) -> None:
        first: Optional[int] = None
        why = ""
        for i in range(k - 1, -1, -1):
            if method(stages[i]) == "cache":
                break
            if method(stages[i]) == "map":
                found = _randomness(stages[i], chain.scope, ctx)
                if found:
                    first, why = i, found
        if first is None:
            return
        message = f"`cache()` after a `map` that uses {why}: every epoch replays the first epoch's augmentation"
        fix = None
        between = stages[first:k]
        if all(method(s) == "map" for s in between) and all(chain.owns(s) for s in between):
            cache = stages[k]
            fix = _reorder_fix(chain, stages[first:k + 1], [cache] + between, ctx,
                               "Cache before the random map (elements then differ every epoch)", Safety.UNSAFE)
        ctx.report(stages[k].func.attr, message + when(chain, stages[k], stages[first]), fix)

    # 2. cache().map(expensive) -----------------------------------------
    def _map_after_cache(self, chain: Chain, stages: List[cst.Call], k: int, ctx) -> None:
        cache_at = None
        for i in range(k - 1, -1, -1):
            name = method(stages[i])
            if name == "cache":
                cache_at = i
                break
            if name == "map" and _randomness(stages[i], chain.scope, ctx) is not False:
                return  # a random (or unknown) map in between must stay after the cache
        if cache_at is None:
            return
        calls = function_calls(map_function(stages[k]), chain.scope, ctx)
        if calls is None or any(random_call(c, s, ctx) for c, s in calls):
            return
        costly = sorted(_cost_rank(q) for q in (ctx.qualname(c.func, s) for c, s in calls) if q and _expensive(q))
        if not costly:
            return
        costly = costly[0][1]
        message = f"`map` after `cache()` runs `{short_name(costly)}` again every epoch"
        fix = None
        cache, mapping = stages[cache_at], stages[k]
        if cache_at == k - 1 and chain.owns(cache) and chain.owns(mapping):
            deterministic = keyword(mapping, "deterministic")
            effects = any(_has_effect(c, s, ctx) for c, s in calls)
            unsafe = effects or (deterministic is not None and not _is_true(deterministic.value))
            fix = _reorder_fix(chain, [cache, mapping], [mapping, cache], ctx,
                               "Map before caching, so the cache holds the mapped elements",
                               Safety.UNSAFE if unsafe else Safety.SAFE)
        ctx.report(stages[k].func.attr, message + when(chain, stages[cache_at], stages[k]), fix)

    # 3. cache().take(k) --------------------------------------------------
    def _cache_then_take(self, chain: Chain, stages: List[cst.Call], cache_at: int, k: int, ctx) -> None:
        count = argument(stages[k], 0, "count")
        if isinstance(count, cst.UnaryOperation) and isinstance(count.expression, cst.Integer) \
                and count.expression.value == "1":
            return  # take(-1) takes everything: the cache completes
        message = "`cache().take(k)` never completes the cache: the input is read again every epoch"
        fix = None
        cache, take = stages[cache_at], stages[k]
        if cache_at == k - 1 and chain.owns(cache) and chain.owns(take):
            varies = _varies_per_epoch(chain, stages[:cache_at], ctx)
            fix = _reorder_fix(chain, [cache, take], [take, cache], ctx,
                               "Take before caching" + (" (the first sample is then repeated every epoch)"
                                                        if varies else ""),
                               Safety.UNSAFE if varies else Safety.SAFE)
        ctx.report(take.func.attr, message + when(chain, cache, take), fix)

    cases = [
        flagged(
            """
            import tensorflow as tf

            x = tf.reshape(tf.range(24, dtype=tf.float32), (4, 2, 3, 1))
            y = tf.range(4)

            def augment(image, label):
                image = tf.image.random_flip_left_right(image)
                return image, label

            ds = tf.data.Dataset.from_tensor_slices((x, y)).map(augment).cache().batch(32)
            """,
            fixed="""
            import tensorflow as tf

            x = tf.reshape(tf.range(24, dtype=tf.float32), (4, 2, 3, 1))
            y = tf.range(4)

            def augment(image, label):
                image = tf.image.random_flip_left_right(image)
                return image, label

            ds = tf.data.Dataset.from_tensor_slices((x, y)).cache().map(augment).batch(32)
            """,
            at=[(10, 62, '`cache()` after a `map` that')],
            run="epochs = [list(d.as_numpy_iterator()) for d in (ds, ds)]",
            note="random augmentation frozen by the cache (unsafe fix); under tf.random.set_seed (as the test "
                 "runs it) a fresh iterator restarts a tf.image.random_* op, so here both epochs stay equal",
        ),
        flagged(
            """
            import tempfile

            import keras
            import tensorflow as tf

            _tmp = tempfile.TemporaryDirectory()
            x = tf.reshape(tf.range(24, dtype=tf.float32), (4, 2, 3, 1))
            flip = keras.layers.RandomFlip("horizontal")
            ds = tf.data.Dataset.from_tensor_slices(x)
            ds = ds.map(lambda v: v / 255.0).map(lambda v: flip(v, training=True)).cache(_tmp.name + "/c")
            """,
            fixed="""
            import tempfile

            import keras
            import tensorflow as tf

            _tmp = tempfile.TemporaryDirectory()
            x = tf.reshape(tf.range(24, dtype=tf.float32), (4, 2, 3, 1))
            flip = keras.layers.RandomFlip("horizontal")
            ds = tf.data.Dataset.from_tensor_slices(x)
            ds = ds.map(lambda v: v / 255.0).cache(_tmp.name + "/c").map(lambda v: flip(v, training=True))
            """,
            at=[(10, 72, '`cache()` after a `map` that')],
            run="epochs = [list(d.as_numpy_iterator()) for d in (ds, ds)]",
            effect=CHANGES,
            note="a Keras random layer; the cache moves right before the random map; cache(filename) too; "
                 "the two epochs now differ",
        ),
        flagged(
            """
            import tensorflow as tf
            from tensorflow.keras import layers, Sequential

            aug = Sequential([layers.RandomRotation(0.1), layers.RandomZoom(0.1)])
            ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: aug(v)).batch(8).cache()
            """,
            at=[(5, 75, '`cache()` after a `map` that')],
            note="random Sequential; a batch in between: reported without a fix",
        ),
        flagged(
            """
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))

            def load(image):
                return tf.image.resize(image, (8, 8))

            ds = tf.data.Dataset.from_tensor_slices(images).cache().map(load, num_parallel_calls=tf.data.AUTOTUNE)
            """,
            fixed="""
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))

            def load(image):
                return tf.image.resize(image, (8, 8))

            ds = tf.data.Dataset.from_tensor_slices(images).map(load, num_parallel_calls=tf.data.AUTOTUNE).cache()
            """,
            at=[(8, 57, '`map` after `cache()` runs')],
            run="epochs = [list(d.as_numpy_iterator()) for d in (ds, ds)]",
            note="expensive deterministic map after cache (safe fix, arguments kept)",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.TFRecordDataset(files)
            ds = ds.cache()
            ds = ds.map(lambda r: tf.io.parse_single_example(r, spec))
            """,
            at=[(5, 9, '`map` after `cache()` runs')],
            note="split across statements: reported, not fixed",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.TFRecordDataset(files).cache().shuffle(100).map(
                lambda r: tf.io.parse_single_example(r, spec))
            """,
            at=[(3, 58, '`map` after `cache()` runs')],
            note="a shuffle in between: reported, not fixed",
        ),
        flagged(
            """
            import tensorflow as tf

            def show(x):
                tf.print(x)
                return tf.io.decode_raw(x, tf.uint8)

            ds = tf.data.Dataset.from_tensor_slices([b"ab", b"cd"]).cache().map(show)
            """,
            fixed="""
            import tensorflow as tf

            def show(x):
                tf.print(x)
                return tf.io.decode_raw(x, tf.uint8)

            ds = tf.data.Dataset.from_tensor_slices([b"ab", b"cd"]).map(show).cache()
            """,
            at=[(7, 65, '`map` after `cache()` runs')],
            run="epochs = [list(d.as_numpy_iterator()) for d in (ds, ds)]",
            note="tf.print would run once instead of every epoch: unsafe fix (the elements stay the same)",
        ),
        flagged(
            """
            import tensorflow as tf

            sample = tf.data.Dataset.range(1000).map(lambda x: x * 2).cache().take(10).repeat()
            """,
            fixed="""
            import tensorflow as tf

            sample = tf.data.Dataset.range(1000).map(lambda x: x * 2).take(10).cache().repeat()
            """,
            at=[(3, 67, '`cache().take(k)` never')],
            note="cache().take(k): safe fix",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(1000).shuffle(1000)
            sample = ds.cache().take(10)
            """,
            at=[(4, 21, '`cache().take(k)` never')],
            note="shuffled upstream (through a name): take(k).cache() would cache one shuffled sample and replay "
                 "it every epoch (a shuffle before a cache), so no fix",
        ),
        flagged(
            """
            import tensorflow as tf

            sample = tf.data.Dataset.range(1000).cache().batch(10).take(3)
            """,
            at=[(3, 56, '`cache().take(k)` never')],
            note="batch between cache and take: reported, not fixed",
        ),
        flagged(
            """
            import tensorflow as tf

            x = tf.range(4, dtype=tf.float32)
            rng = tf.random.Generator.from_seed(7)

            def jitter(x):
                return x + rng.normal(tf.shape(x))

            ds = tf.data.Dataset.from_tensor_slices(x).map(jitter).map(tf.math.abs).cache()
            """,
            fixed="""
            import tensorflow as tf

            x = tf.range(4, dtype=tf.float32)
            rng = tf.random.Generator.from_seed(7)

            def jitter(x):
                return x + rng.normal(tf.shape(x))

            ds = tf.data.Dataset.from_tensor_slices(x).cache().map(jitter).map(tf.math.abs)
            """,
            at=[(9, 73, '`cache()` after a `map` that')],
            run="epochs = [list(d.as_numpy_iterator()) for d in (ds, ds)]",
            effect=CHANGES,
            note="a tf.random.Generator; the deterministic map after it moves with it; the epochs now differ",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.from_tensor_slices(x).cache().map(lambda v: v / 255)
            """,
            note="a cheap map after cache",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.from_tensor_slices(x).map(
                lambda v: tf.image.stateless_random_flip_left_right(v, seed=(1, 2))).cache()
            """,
            note="stateless random op: the same every epoch anyway",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.from_tensor_slices(x).cache().map(
                lambda v: tf.image.random_flip_left_right(tf.image.resize(v, (64, 64))))
            """,
            note="the recommended order: cache, then random (and costly) map",
        ),
        clean(
            """
            import tensorflow as tf
            from preprocessing import decode

            ds = tf.data.Dataset.from_tensor_slices(x).cache().map(decode)
            """,
            note="an imported map function: unknown cost",
        ),
        clean(
            """
            import functools
            import pandas as pd
            import tensorflow as tf

            @functools.lru_cache()
            def load(path):
                return tf.io.read_file(path)

            frame = pd.read_csv("a.csv")
            frame["x"].map(str).cache().take(3)
            """,
            note="not a dataset",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).cache().take(-1)
            """,
            note="take(-1) reads everything",
        ),
        clean(
            """
            import tensorflow as tf

            paths = tf.data.Dataset.from_tensor_slices(names)
            ds = paths.take(5).map(tf.io.read_file).cache()
            """,
            note="take, then the costly map, then cache: the right order",
        ),
        flagged(
            """
            import tensorflow as tf

            paths = tf.data.Dataset.from_tensor_slices([b"YWJj", b"ZGVm"])
            ds = paths.cache().map(tf.io.decode_base64)
            """,
            fixed="""
            import tensorflow as tf

            paths = tf.data.Dataset.from_tensor_slices([b"YWJj", b"ZGVm"])
            ds = paths.map(tf.io.decode_base64).cache()
            """,
            at=[(4, 20, '`map` after `cache()` runs')],
            note="the op itself as the map function",
        ),
        # -- added with "fixes you can trust" ------------------------------
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.random(seed=4, rerandomize_each_iteration=True)
            sample = ds.cache().take(3)
            """,
            fixed="""
            import tensorflow as tf

            ds = tf.data.Dataset.random(seed=4, rerandomize_each_iteration=True)
            sample = ds.take(3).cache()
            """,
            at=[(4, 21, '`cache().take(k)` never')],
            run="epochs = [list(d.as_numpy_iterator()) for d in (sample, sample)]",
            effect=CHANGES,
            note="a source that differs every epoch: take(k).cache() freezes the first sample (unsafe)",
        ),
        flagged(
            """
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
            ds = (
                tf.data.Dataset.from_tensor_slices(images)
                .cache()  # keep the images in memory
                # upscale
                .map(lambda v: tf.image.resize(v, (8, 8)))  # bilinear
                .batch(2)
            )
            """,
            fixed="""
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
            ds = (
                tf.data.Dataset.from_tensor_slices(images)
                # upscale
                .map(lambda v: tf.image.resize(v, (8, 8)))  # bilinear
                .cache()  # keep the images in memory
                .batch(2)
            )
            """,
            at=[(8, 6, '`map` after `cache()` runs')],
            note="one call per line: each call's comments (above it and at the end of its line) move with it",
        ),
        flagged(
            """
            import tensorflow as tf

            x = tf.range(4, dtype=tf.float32)
            rng = tf.random.Generator.from_seed(7)
            ds = (
                tf.data.Dataset.from_tensor_slices(x)
                .map(lambda v: v + rng.normal(()))  # jitter
                .cache()  # reuse across epochs
            )
            """,
            fixed="""
            import tensorflow as tf

            x = tf.range(4, dtype=tf.float32)
            rng = tf.random.Generator.from_seed(7)
            ds = (
                tf.data.Dataset.from_tensor_slices(x)
                .cache()  # reuse across epochs
                .map(lambda v: v + rng.normal(()))  # jitter
            )
            """,
            at=[(8, 6, '`cache()` after a `map` that')],
            run="epochs = [list(d.as_numpy_iterator()) for d in (ds, ds)]",
            effect=CHANGES,
            note="the last call's comment sits before the closing parenthesis: it moves too",
        ),
        flagged(
            """
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
            ds = (tf.data.Dataset.from_tensor_slices(images).cache()  # in memory
                  .map(lambda v: tf.image.resize(v, (8, 8))).batch(2))
            """,
            at=[(5, 8, '`map` after `cache()` runs')],
            note="the cache's comment has no line break to go to after the map: reported without a fix",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(8).shuffle(8).map(lambda v: v + tf.random.uniform((), 0, 2, tf.int64)).cache()
            """,
            at=[(3, 99, '`cache()` after a `map` that')],
            note="a shuffle before the cache: the fixed pipeline would still replay one order, so no fix",
        ),
        flagged(
            """
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
            ds = tf.data.Dataset.from_tensor_slices(images).prefetch(1).cache().map(
                lambda v: tf.image.resize(v, (8, 8))).batch(2)
            for batch in ds:
                pass
            """,
            fixed="""
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
            ds = tf.data.Dataset.from_tensor_slices(images).prefetch(1).map(
                lambda v: tf.image.resize(v, (8, 8))).cache().batch(2)
            for batch in ds:
                pass
            """,
            at=[(4, 69, '`map` after `cache()` runs')],
            note="with TFG302 (prefetch mid-pipeline): all rules' fixes together end in "
                 "map(...).cache().batch(2).prefetch(1)",
        ),

        # -- added with "one semantic model in the engine" -------------------
        flagged(
            """
            import tensorflow as tf

            def upscale(images: tf.data.Dataset):
                return images.cache().map(lambda v: tf.image.resize(v, (8, 8)))
            """,
            fixed="""
            import tensorflow as tf

            def upscale(images: tf.data.Dataset):
                return images.map(lambda v: tf.image.resize(v, (8, 8))).cache()
            """,
            at=[(4, 27, '`map` after `cache()` runs `tf.image.resize`')],
            run="out = list(upscale(tf.data.Dataset.from_tensor_slices("
                "tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3)))).as_numpy_iterator())",
            note="a parameter annotated as a dataset is one",
        ),
        flagged(
            """
            import tensorflow_datasets as tfds

            splits = tfds.load("mnist", as_supervised=True)
            train = splits["train"].shuffle(1000).cache().take(100)
            """,
            at=[(4, 47, '`cache().take(k)` never completes')],
            note="tfds.load without a split returns a dict of datasets; no fix (a shuffle before the cache)",
        ),
        flagged(
            """
            import tensorflow as tf

            def sample(n):
                ds = tf.data.Dataset.range(n).map(lambda x: x * 2)
                ds = ds.cache()
                return ds.take(3)
            """,
            at=[(6, 15, '`cache().take(k)` never completes')],
            note="the pipeline continued in the return statement: reported, not fixed",
        ),
        clean(
            """
            import tensorflow as tf

            def sample(ds: tf.data.Dataset, other: tf.data.Dataset):
                ds = ds.cache()
                return other.take(3)
            """,
            note="the return continues another dataset",
        ),
        flagged(
            """
            import tensorflow as tf

            class Flip:
                def __call__(self, x):
                    return tf.image.random_flip_left_right(x)

            flip = Flip()
            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
            ds = tf.data.Dataset.from_tensor_slices(images).map(flip).cache()
            direct = tf.data.Dataset.from_tensor_slices(images).map(Flip()).cache()
            """,
            fixed="""
            import tensorflow as tf

            class Flip:
                def __call__(self, x):
                    return tf.image.random_flip_left_right(x)

            flip = Flip()
            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))
            ds = tf.data.Dataset.from_tensor_slices(images).cache().map(flip)
            direct = tf.data.Dataset.from_tensor_slices(images).cache().map(Flip())
            """,
            at=[(9, 59, '`cache()` after a `map` that uses `tf.image.random_flip_left_right`'),
                (10, 65, '`cache()` after a `map` that uses `tf.image.random_flip_left_right`')],
            run="out = [list(ds.as_numpy_iterator()), list(direct.as_numpy_iterator())]",
            effect=RANDOM,
            note="a callable object as the map function: its __call__ is what is traced (densenet's Preprocess)",
        ),
        clean(
            """
            import tensorflow as tf

            class Preprocess:
                def __init__(self, train):
                    self._train = train

                def __call__(self, image):
                    if self._train:
                        image = self.jitter(image)
                    return image

                def jitter(self, image):
                    return tf.image.random_crop(image, (2, 2, 3))

            test = tf.data.Dataset.range(3).map(Preprocess(train=False)).cache()
            """,
            note="random ops only under a Python flag of the map function (densenet's test pipeline): "
                 "whether they run depends on the configuration",
        ),
        flagged(
            """
            import tensorflow as tf

            def make(files, augment):
                ds = tf.data.TFRecordDataset(files)
                if augment:
                    ds = ds.map(lambda x: tf.image.random_flip_left_right(x))
                ds = ds.cache()
                return ds.batch(2)
            """,
            at=[(7, 13, "`cache()` after a `map` that uses `tf.image.random_flip_left_right`: every epoch replays "
                        "the first epoch's augmentation (when `augment` is true)")],
            note="the random map under `if augment:` joins the pipeline the cache continues (TF 2.21: "
                 "range(8), a map adding tf.random.uniform under the branch, then cache(): two epochs equal)",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.TFRecordDataset(["a.tfrecord"])
            ds = ds.map(lambda x: tf.image.random_flip_left_right(x))
            for x in ds:
                pass

            ds = tf.data.TFRecordDataset(["b.tfrecord"])
            ds = ds.cache()
            """,
            note="a notebook rebuilding `ds` in a later cell: the earlier pipeline's random map is not before the "
                 "later cache",
        ),
    ]


def _reorder_fix(chain: Chain, span: List[cst.Call], new_order: List[cst.Call], ctx, message: str,
                 safety: Safety) -> Optional[Fix]:
    """Rebuild ``span`` (consecutive stages the chain owns) in ``new_order``; None when the
    fixed pipeline would keep a `shuffle` before a `cache` or a comment cannot follow its call."""
    start = chain.position(span[0])
    own = chain.stages
    names = (upstream(chain, ctx) + [method(s) for s in chain.all_stages()[:chain.index(span[0])]]
             + [method(s) for s in new_order] + [method(s) for s in own[start + len(span):]]
             + [method(s) for s in chain.later_stages()])
    if shuffle_before_cache(names):
        return None
    replacement = reorder(own, start, start + len(span), new_order)
    if replacement is None:
        return None
    old, new = replacement
    return Fix(message, safety, {old: new})


def _randomness(stage: cst.Call, scope: ScopeInfo, ctx):
    """A description of the randomness a map stage's function uses; False if it
    certainly uses none; None if its function cannot be resolved or uses
    randomness only under a Python flag (``if self._train:``)."""
    calls = function_calls(map_function(stage), scope, ctx)
    if calls is None:
        return None
    maybe = False
    flagged = flagged_calls(map_function(stage), scope, ctx)
    for call, inner in calls:
        found = random_call(call, inner, ctx)
        if found:
            if id(call) not in flagged:
                return found
            maybe = None  # random only when a Python flag is set: not a certain finding, not a safe move
    return maybe


def _expensive(qualname: str) -> bool:
    return qualname in _EXPENSIVE or qualname.startswith(_EXPENSIVE_PREFIXES)


def _cost_rank(qualname: str) -> Tuple[int, str]:
    """File reads first, then decoding and parsing, then the rest: what the message names."""
    if "read_file" in qualname:
        return (0, qualname)
    if "decode" in qualname or "parse" in qualname:
        return (1, qualname)
    return (2, qualname)


def _has_effect(call: cst.Call, scope: ScopeInfo, ctx) -> bool:
    if ctx.qualname(call.func, scope) in _EFFECTS:
        return True
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value.startswith(_STATE_METHODS)


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _varies_per_epoch(chain: Chain, before: List[cst.Call], ctx) -> bool:
    """Whether the pipeline before the cache may yield other elements next epoch."""
    for stage in before:
        name = method(stage)
        if name == "shuffle":
            return True
        if name in ("map", "interleave", "flat_map", "filter", "apply"):
            if name != "map" or _randomness(stage, chain.scope, ctx) is not False:
                return True
    origin = chain.origin()
    if isinstance(origin, cst.Name):
        return _name_varies(origin, chain.scope, ctx, depth=0)
    return _source_varies(origin, chain.scope, ctx)


def _source_varies(expr: cst.BaseExpression, scope: ScopeInfo, ctx) -> bool:
    if not isinstance(expr, cst.Call):
        return True
    qualname = ctx.qualname(expr.func, scope)
    if qualname in _RANDOM_SOURCES:
        return True
    if qualname == "tensorflow.data.Dataset.list_files":
        shuffle = argument(expr, 1, "shuffle")
        return not (isinstance(shuffle, cst.Name) and shuffle.value == "False")
    return qualname is None


def _name_varies(name: cst.Name, scope: ScopeInfo, ctx, depth: int) -> bool:
    """Follow a name bound (once, or once where it is read) to a dataset
    expression; unknown counts as varying."""
    value = single_value(name.value, scope, name)
    if value is None or depth > 10:
        return True
    stages: List[cst.Call] = []
    while is_stage(value):
        stages.append(value)
        value = value.func.value
    for chain in chains(ctx):
        if chain.outermost is (stages[0] if stages else None):
            return _varies_per_epoch(chain, chain.all_stages(), ctx)
    if stages:
        return True
    if isinstance(value, cst.Name):
        return _name_varies(value, scope, ctx, depth + 1)
    return _source_varies(value, scope, ctx)
