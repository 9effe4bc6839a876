from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from tflint_gpu.autofix.dataset_chain import reorder
from tflint_gpu.semantic.api import argument, is_false
from tflint_gpu.semantic.datasets import Chain, chains, method, shuffle_before_cache, upstream, when
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged

# Stages between the shuffle and the cache that the shuffle may move past: they
# keep elements one by one (no batching, no counting), so the cached data set is
# the same and only the order changes.
_ELEMENTWISE = frozenset({"map", "filter", "prefetch", "with_options", "ignore_errors"})


class DatasetShuffleBeforeCache(Rule):
    """`Dataset.shuffle` before `cache()`: every epoch replays the first epoch's order.

    ## What it does
    Finds a `shuffle(...)` that comes before a `cache()` (in memory or
    `cache(filename)`) in one `tf.data` pipeline, in one expression or across
    statements reassigning the same name: `ds.shuffle(1000).cache()`,
    `ds.shuffle(1000).map(parse).cache().batch(32)`.

    Not flagged: `shuffle(n, reshuffle_each_iteration=False)` (one fixed order
    is asked for); a pipeline that shuffles again after the cache (the later
    shuffle reorders every epoch); a `repeat` between the shuffle and the cache
    (the cache then holds several epochs); `shuffle(1)` (no shuffle: TFG305);
    a shuffle that reaches the cache only through another name
    (`shuffled = ds.shuffle(n)`, then `shuffled.cache()`), and the implicit
    shuffle of `Dataset.list_files` (it shuffles file names, often not on
    purpose).

    ## Why is this bad?
    The cache stores the elements in the order the first epoch produced them
    and replays that order: from the second epoch on the data is no longer
    shuffled. (TF 2.21: `range(10).shuffle(10).cache()` yields the same order
    in epochs 1, 2 and 3; `range(10).cache().shuffle(10)` a new one each
    epoch.) Training sees the same sequence of batches every epoch.

    ## Example
    ```python
    ds = tf.data.TFRecordDataset(files).shuffle(10_000).map(parse).cache().batch(32)
    ```

    Use instead:
    ```python
    ds = tf.data.TFRecordDataset(files).map(parse).cache().shuffle(10_000).batch(32)
    ```

    ## Fix safety
    Unsafe: the order of the elements changes, which is the point (a new
    order every epoch; the first epoch's order differs too). The same
    elements are cached. The fix moves the `shuffle` (with its arguments and
    comments) to right after the cache; offered when only element-wise stages
    (`map`, `filter`, `prefetch`, `with_options`, `ignore_errors`) lie between
    them in one expression. Not offered past a `batch` (it would shuffle
    whole batches), a `take`/`skip` (another sample), or across statements, or
    when the fixed pipeline would still have a shuffle before a cache.

    ## Measured effect
    TF 2.21, CPU: `Dataset.range(10).shuffle(10).cache()` iterated three
    times gives `[0, 6, 9, 8, 5, 3, 7, 4, 1, 2]` three times;
    `cache().shuffle(10)` three different orders. `examples/TFG304` (`tflint-gpu
    verify --device cpu --size small`): 3 epochs of 64 elements, 1 distinct
    epoch order before, 3 after (fixes-behaviour).
    """

    code = "TFG304"
    name = "dataset-shuffle-before-cache"
    message = "`shuffle` before `cache()`: every epoch replays the first epoch's order"
    needs = ((".shuffle(",), (".cache(",))
    fix_safety = Safety.UNSAFE

    def visit_Module(self, node: cst.Module, ctx) -> None:
        reported: Set[int] = set()
        for chain in chains(ctx):
            stages = chain.all_stages()
            for stage in chain.stages:
                if method(stage) != "cache":
                    continue
                k = chain.index(stage)
                i = _shuffle_before(stages, k)
                if i is None or id(stages[i]) in reported:
                    continue
                later = stages[k + 1:] + chain.later_stages()
                if any(method(s) == "shuffle" for s in later):
                    continue  # shuffled again every epoch after the cache
                reported.add(id(stages[i]))
                ctx.report(stages[i].func.attr, self.message + when(chain, stages[i], stages[k]),
                           _fix(chain, stages, i, k, ctx))

    cases = [
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).shuffle(10).cache()
            """,
            fixed="""
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).cache().shuffle(10)
            """,
            at=[(3, 32, "`shuffle` before `cache()`")],
            run="epochs = [list(ds.as_numpy_iterator()) for _ in range(3)]",
            effect=CHANGES,
            note="the order of epoch 1 is replayed in epochs 2 and 3; after the fix each epoch has its own",
        ),
        flagged(
            """
            import tensorflow as tf

            x = tf.reshape(tf.range(24, dtype=tf.float32), (8, 3))
            ds = (
                tf.data.Dataset.from_tensor_slices(x)
                .shuffle(8, seed=3)  # mix
                .map(lambda v: v * 2.0)
                .cache()
                .batch(4)
            )
            """,
            fixed="""
            import tensorflow as tf

            x = tf.reshape(tf.range(24, dtype=tf.float32), (8, 3))
            ds = (
                tf.data.Dataset.from_tensor_slices(x)
                .map(lambda v: v * 2.0)
                .cache()
                .shuffle(8, seed=3)  # mix
                .batch(4)
            )
            """,
            at=[(6, 6, "`shuffle` before `cache()`")],
            run="epochs = [list(ds.as_numpy_iterator()) for _ in range(2)]",
            effect=CHANGES,
            note="the shuffle moves past the map to right after the cache, with its comment; "
                 "the cache keeps the mapped elements",
        ),
        flagged(
            """
            import tensorflow as tf

            def make(files):
                ds = tf.data.TFRecordDataset(files)
                ds = ds.shuffle(1000)
                ds = ds.cache()
                return ds.batch(32)
            """,
            at=[(5, 13, "`shuffle` before `cache()`")],
            note="across statements: reported, not fixed",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).shuffle(100).batch(10).cache()
            """,
            at=[(3, 33, "`shuffle` before `cache()`")],
            note="a batch in between: moving the shuffle after the cache would shuffle whole batches; no fix",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).shuffle(100).take(10).cache()
            """,
            at=[(3, 33, "`shuffle` before `cache()`")],
            note="a random sample of 10, frozen; moving the shuffle would change the sample: no fix",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).shuffle(10, reshuffle_each_iteration=False).cache()
            """,
            note="one fixed order asked for explicitly",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).cache().shuffle(10).batch(2)
            """,
            note="the recommended order",
        ),
        clean(
            """
            import tensorflow as tf

            files = tf.data.Dataset.list_files("*.tfrecord").shuffle(100)
            ds = files.interleave(tf.data.TFRecordDataset, cycle_length=4).cache().shuffle(1000)
            """,
            note="shuffled again after the cache, every epoch",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).shuffle(10).repeat(3).cache()
            """,
            note="a repeat between: the cache holds three differently shuffled epochs",
        ),
        clean(
            """
            import pandas as pd

            frame = pd.read_csv("a.csv")
            frame.shuffle(10).cache()
            """,
            note="not a dataset",
        ),
        flagged(
            """
            import tensorflow as tf

            def make(x, shuffle):
                ds = tf.data.Dataset.from_tensor_slices(x)
                if shuffle:
                    ds = ds.shuffle(100)
                ds = ds.cache()
                return ds.batch(2)

            raw = tf.data.Dataset.range(100).shuffle(100)
            train = raw.cache()
            """,
            at=[(6, 17, "`shuffle` before `cache()`: every epoch replays the first epoch's order "
                        "(when `shuffle` is true)"),
                (10, 34, "`shuffle` before `cache()`")],
            note="a shuffle under `if shuffle:` joins the pipeline the cache continues (TF 2.21: under the branch, "
                 "range(8).shuffle(8).cache() gave [0 3 4 5 1 7 6 2] in both epochs); a pipeline continued under "
                 "another name; no fix: the two stages are in different statements",
        ),
    ]


def _shuffle_before(stages: List[cst.Call], k: int) -> Optional[int]:
    """The index of the shuffle whose order the cache at ``k`` freezes, or None."""
    for i in range(k - 1, -1, -1):
        name = method(stages[i])
        if name in ("repeat", "cache"):
            return None
        if name == "shuffle":
            shuffle = stages[i]
            if is_false(argument(shuffle, 2, "reshuffle_each_iteration")):
                return None
            size = argument(shuffle, 0, "buffer_size")
            if isinstance(size, cst.Integer) and size.value == "1":
                return None  # no shuffle at all (TFG305)
            if any(arg.star for arg in shuffle.args):
                return None
            return i
    return None


def _fix(chain: Chain, stages: List[cst.Call], i: int, k: int, ctx) -> Optional[Fix]:
    shuffle, cache = stages[i], stages[k]
    span = stages[i:k + 1]
    if not all(chain.owns(s) for s in span) or any(method(s) not in _ELEMENTWISE for s in span[1:-1]):
        return None
    new_order = span[1:] + [shuffle]
    start = chain.position(shuffle)
    names = (upstream(chain, ctx) + [method(s) for s in stages[:i]] + [method(s) for s in new_order]
             + [method(s) for s in stages[k + 1:]] + [method(s) for s in chain.later_stages()])
    if shuffle_before_cache(names):
        return None
    replacement = reorder(chain.stages, start, chain.position(cache) + 1, new_order)
    if replacement is None:
        return None
    old, new = replacement
    return Fix("Shuffle after the cache, so every epoch has a new order", Safety.UNSAFE, {old: new})
