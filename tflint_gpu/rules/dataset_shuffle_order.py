from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import argument, is_false
from tflint_gpu.semantic.datasets import chains, is_stage, method, project_upstream, single_value, upstream, when
from tflint_gpu.rules.base import Rule, clean, flagged

# Stages that turn elements into batches, and back.
_BATCHING = frozenset({"batch", "padded_batch", "ragged_batch", "sparse_batch"})
_UNBATCHING = frozenset({"unbatch", "rebatch", "flat_map", "interleave"})
# Constructors that shuffle by default (``shuffle=True``).
_SHUFFLING_SOURCES = frozenset({"tensorflow.data.experimental.make_csv_dataset",
                                "tensorflow.data.experimental.make_batched_features_dataset"})


class DatasetShuffleOrder(Rule):
    """A `Dataset.shuffle` that does not shuffle what it seems to: after `batch`, after `repeat`, or `shuffle(1)`.

    ## What it does
    Finds three placements of `shuffle(...)` in a `tf.data` pipeline (in one
    expression or across statements reassigning the same name):

    1. `batch(b).shuffle(n)` with no shuffle before the batch, and no
       further `batch` or `unbatch` after the shuffle;
    2. `repeat().shuffle(n)` with no shuffle before the repeat;
    3. `shuffle(1)` (`buffer_size=1`), a literal buffer of one element.

    The batch may come from a def that returns the pipeline (`ds =
    make(files)` where `make` ends in `return ds.batch(32)`, in this module
    or another of the project) or from `apply` of a batching transformation
    (`dense_to_ragged_batch`, `bucket_by_sequence_length`).

    Not flagged: a shuffle after a batch when the elements were shuffled
    before it (shuffling batches on top, as after bucketing, is deliberate);
    `batch(seq_len).map(split).shuffle(n).batch(b)` (the first batch makes
    sequences that are then shuffled and batched: the text-generation
    tutorial's pattern); `batch(k).shuffle(n).unbatch()` (a block shuffle
    of chunks of consecutive elements); `repeat(1)`; a shuffle after `unbatch`/`flat_map`/
    `interleave` (elements again); a buffer size that is not the literal 1.
    Upstream stages seen through another name (`ds = raw.shuffle(n)` where
    `raw` is shuffled) count, and so do the stages a def of another module of
    the project applies to the dataset it returns on every path (`train_ds =
    load(files).shuffle(1000)` where `data.load` returns `ds.batch(32)`: the
    message names `data.load`), and sources that shuffle by default
    (`Dataset.list_files`, `tf.data.experimental.make_csv_dataset`, Keras
    `image_dataset_from_directory` and its siblings, unless `shuffle=False`).

    ## Why is this bad?
    1. `shuffle` after `batch` shuffles whole batches: each batch holds
       consecutive elements of its input (every epoch the same batches,
       unless the source itself shuffles), only their order changes. (TF
       2.21: `range(12).batch(3).shuffle(4)` gives `[9 10 11] [6 7 8] [0 1 2]
       [3 4 5]`.)
    2. `repeat` before `shuffle` mixes the epochs in the buffer: an element
       can come twice before another comes once, and an "epoch" of N
       elements is not the data set (the tf.data guide: the epoch
       boundaries blur). TF 2.21: `range(6).repeat(2).shuffle(12)`, the first
       6 elements were not the 6 distinct values in 49 of 50 seeds.
    3. With a buffer of one element, `shuffle` returns its input in order
       (TF 2.21: `range(10).shuffle(1)` yields 0..9): no shuffling at all.

    ## Example
    ```python
    train = ds.batch(32).shuffle(1000)
    train = ds.repeat().shuffle(1000).batch(32)
    train = ds.shuffle(1).batch(32)
    ```

    Use instead:
    ```python
    train = ds.shuffle(1000).batch(32)
    train = ds.shuffle(1000).repeat().batch(32)
    train = ds.shuffle(len_of_ds).batch(32)  # a buffer as large as practical
    ```

    ## Fix safety
    No fix: the right order depends on intent (batches of consecutive
    elements, a buffer size), and every rewrite changes the data the model
    sees.

    ## Measured effect
    TF 2.21, CPU: as above. `examples/TFG305` (`tflint-gpu verify --device
    cpu --size small`): `batch(8).shuffle(8)` over 64 elements, 3 epochs:
    the same 8 batches every epoch (1 distinct set of batches) before; after
    `shuffle(64).batch(8)`, 3 distinct sets (fixes-behaviour).
    """

    code = "TFG305"
    name = "dataset-shuffle-order"
    message = "`shuffle` is placed where it does not shuffle the elements"
    needs = ((".shuffle(",),)

    def visit_Module(self, node: cst.Module, ctx) -> None:
        for chain in chains(ctx):
            stages = chain.all_stages()
            for stage in chain.stages:
                if method(stage) != "shuffle" or any(arg.star for arg in stage.args):
                    continue
                k = chain.index(stage)
                found = _problem(stages, k, chain, ctx)
                if found is not None:
                    message, culprit = found
                    ctx.report(stage.func.attr, message + when(chain, stage, *culprit))

    cases = [
        flagged(
            """
            import tensorflow as tf


            def make(n, batch_size):
                ds = tf.data.Dataset.range(n)
                return ds.batch(batch_size)


            def train_input():
                ds = make(64, 8)
                return ds.shuffle(100)


            def ragged(ds):
                ds = ds.apply(tf.data.experimental.dense_to_ragged_batch(8))
                return ds.shuffle(100)


            def unbatched():
                ds = make(64, 8).unbatch()
                return ds.shuffle(100)
            """,
            at=[(11, 15, "`shuffle` after the `batch` in `make` shuffles whole batches"),
                (16, 15, "`shuffle` after `batch` shuffles whole batches")],
            note="issue 35: the batch comes from a helper of the module that returns the pipeline, or from "
                 "apply(dense_to_ragged_batch) on a parameter used as only a dataset is (apply of a "
                 "tf.data.experimental transformation); not after an unbatch",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(12).batch(3).shuffle(4)
            """,
            at=[(3, 41, "`shuffle` after `batch` shuffles whole batches")],
        ),
        flagged(
            """
            import tensorflow as tf

            def make(x, y):
                ds = tf.data.Dataset.from_tensor_slices((x, y))
                ds = ds.batch(32)
                ds = ds.shuffle(buffer_size=100)
                return ds.prefetch(1)
            """,
            at=[(6, 13, "`shuffle` after `batch` shuffles whole batches")],
            note="across statements",
        ),
        flagged(
            """
            import tensorflow as tf

            def resize(dataset):
                dataset = dataset.map(lambda x: x * 2)
                return dataset

            def load(filenames):
                dataset = tf.data.TFRecordDataset(filenames)
                dataset = resize(dataset)
                return dataset

            def training(filenames):
                dataset = load(filenames)
                dataset = dataset.repeat()
                dataset = dataset.shuffle(2048)
                return dataset
            """,
            at=[(15, 23, "`shuffle` after `repeat` mixes epochs")],
            note="the dataset comes through two helpers, one transforming the dataset it is given",
        ),
        clean(
            """
            def resize(frame):
                frame = frame.map(lambda x: x * 2)
                return frame

            def training(table):
                frame = resize(table)
                frame = frame.repeat()
                return frame.shuffle(2048)
            """,
            note="the same helper given something that is not known to be a dataset",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(6).repeat().shuffle(12).batch(3)
            """,
            at=[(3, 40, "`shuffle` after `repeat` mixes epochs")],
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).shuffle(1).batch(2)
            other = tf.data.Dataset.range(10).shuffle(buffer_size=1)
            """,
            at=[(3, 32, "`shuffle(1)` does not shuffle"), (4, 35, "`shuffle(1)` does not shuffle")],
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(12).shuffle(12).batch(3).shuffle(4)
            """,
            note="elements shuffled before the batch: shuffling batches on top is deliberate",
        ),
        clean(
            """
            import tensorflow as tf

            ids = tf.data.Dataset.range(1000)
            sequences = ids.batch(101, drop_remainder=True)
            dataset = sequences.map(lambda s: (s[:-1], s[1:]))
            dataset = dataset.shuffle(10000).batch(64, drop_remainder=True)
            """,
            note="text-generation tutorial: the first batch makes sequences, shuffled and batched again",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(12).batch(3).map(lambda b: b * 2).unbatch().shuffle(12)
            """,
            note="unbatched again: the shuffle sees elements",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(1000).batch(50).shuffle(20).unbatch().batch(32)
            """,
            note="shuffling chunks of consecutive elements, then unbatching: a deliberate block shuffle",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(6).shuffle(6).repeat().shuffle(12)
            ok = tf.data.Dataset.range(6).repeat(1).shuffle(6)
            """,
            note="shuffled before the repeat (mixing epochs on top is deliberate); repeat(1) is no repeat",
        ),
        clean(
            """
            import tensorflow as tf

            def make(ds: tf.data.Dataset, training: bool):
                return ds.shuffle(1000 if training else 1).batch(32)
            """,
            note="a buffer size that is not the literal 1",
        ),
        clean(
            """
            import tensorflow as tf

            raw = tf.data.Dataset.range(12).shuffle(12)
            ds = raw.batch(3).shuffle(4)
            """,
            note="shuffled upstream, through another name",
        ),
        clean(
            """
            import tensorflow as tf

            def train_input_fn(path):
                titanic = tf.data.experimental.make_csv_dataset(path, batch_size=32, label_name="survived")
                return titanic.cache().repeat().shuffle(500).prefetch(tf.data.AUTOTUNE)
            """,
            note="tensorflow/docs estimator guide: make_csv_dataset shuffles (and batches) by default",
        ),
        flagged(
            """
            import tensorflow as tf
            import tensorflow_datasets as tfds

            def make(x, shuffle, batch_size):
                ds = tf.data.Dataset.from_tensor_slices(x)
                ds = ds.batch(batch_size)
                if shuffle:
                    ds = ds.shuffle(100)
                ds = ds.prefetch(1)
                return ds

            def load(split):
                d = tfds.load("mnist", split=split)
                return d.batch(2).shuffle(10)

            ds = tf.data.Dataset.range(100).map(lambda v: v * 2)
            train = ds.batch(32)
            train = train.shuffle(100)

            train_ds, val_ds = tfds.load("mnist", split=["train", "test"])
            train_ds = train_ds.batch(32).shuffle(10)
            splits = tfds.load("mnist")
            test = splits["test"]
            test = test.batch(32)
            test = test.shuffle(10)
            """,
            at=[(8, 17, "`shuffle` after `batch` shuffles whole batches: each batch holds consecutive elements "
                        "(when `shuffle` is true)"),
                (14, 23, "`shuffle` after `batch`"), (18, 15, "`shuffle` after `batch`"),
                (21, 31, "`shuffle` after `batch`"), (25, 13, "`shuffle` after `batch`")],
            note="a stage under `if shuffle:` (the finding names the branch); `tfds.load` with a split given "
                 "as a parameter (transformed, so a dataset); a pipeline continued under another name; "
                 "`tfds.load` unpacked and subscripted (TF 2.21: under `if shuffle:` the same 4 batches "
                 "every epoch, only their order changes)",
        ),
        clean(
            """
            import tensorflow as tf

            def make(x, shuffle, batch_size):
                ds = tf.data.Dataset.from_tensor_slices(x)
                if shuffle:
                    ds = ds.shuffle(100)
                ds = ds.batch(batch_size)
                return ds.prefetch(1)

            ds = tf.data.Dataset.range(100).batch(10)
            ds = tf.data.Dataset.range(100)
            ds = ds.shuffle(100)
            """,
            note="the shuffle under the `if` comes before the batch; a pipeline rebuilt under the same name: "
                 "the earlier one's batch is not upstream of the later shuffle",
        ),
        flagged(
            """
            import tensorflow as tf

            def make(x, repeat):
                ds = tf.data.Dataset.from_tensor_slices(x)
                if repeat:
                    ds = ds.repeat()
                return ds.shuffle(100).batch(8)
            """,
            at=[(7, 15, "`shuffle` after `repeat` mixes epochs: some elements come twice before others once "
                        "(when `repeat` is true)")],
            note="the culprit stage under an `if`: the finding holds when it runs (TF 2.21: range(6), repeat(2) "
                 "under the branch, then shuffle(12): the first 6 elements were not 6 distinct values in 48 of "
                 "50 seeds)",
        ),
    ]


def _problem(stages: List[cst.Call], k: int, chain, ctx) -> Optional[Tuple[str, List[cst.Call]]]:
    """What is wrong with the shuffle at ``k``, and the stage before it that makes it so."""
    shuffle = stages[k]
    size = argument(shuffle, 0, "buffer_size")
    if isinstance(size, cst.Integer) and size.value == "1":
        return "`shuffle(1)` does not shuffle: a buffer of one element yields the input order", []
    for i in range(k - 1, -1, -1):
        name = method(stages[i])
        if name in ("shuffle",) or name in _UNBATCHING:
            return None
        if name in _BATCHING:
            later = stages[k + 1:] + chain.later_stages()
            if any(method(s) in _BATCHING or method(s) in _UNBATCHING for s in later) \
                    or _shuffled(stages[:i], chain, ctx):
                return None
            return "`shuffle` after `batch` shuffles whole batches: each batch holds consecutive elements", \
                [stages[i]]
        if name == "repeat":
            count = argument(stages[i], 0, "count")
            if isinstance(count, cst.Integer) and count.value == "1":
                continue
            if _shuffled(stages[:i], chain, ctx):
                return None
            return "`shuffle` after `repeat` mixes epochs: some elements come twice before others once", [stages[i]]
    return _upstream_problem(*project_upstream(chain, ctx), stages[k + 1:] + chain.later_stages())


def _upstream_problem(where: str, names: List[str], later: List[cst.Call]) -> Optional[Tuple[str, List[cst.Call]]]:
    """The same verdict when the batch comes upstream in another module (a def there returning
    ``ds.batch(32)``): the last of the batches and shuffles there decides."""
    for name in reversed(names):
        if name == "shuffle" or name in _UNBATCHING:
            return None
        if name in _BATCHING:
            if any(method(s) in _BATCHING or method(s) in _UNBATCHING for s in later):
                return None
            return f"`shuffle` after the `{name}` in `{where}` shuffles whole batches: each batch holds " \
                "consecutive elements", []
    return None


def _shuffled(before: List[cst.Call], chain, ctx) -> bool:
    """Is there a shuffle before these stages (in them, upstream through names, or
    a source that shuffles by default)?"""
    return any(method(s) == "shuffle" for s in before) or "shuffle" in upstream(chain, ctx) \
        or _source_shuffles(chain.origin(), chain.scope, ctx)


def _source_shuffles(expr: cst.BaseExpression, scope, ctx, depth: int = 0) -> bool:
    """Does the pipeline start from a constructor that shuffles unless told not to
    (``make_csv_dataset``, Keras ``*_dataset_from_directory``), seen through names bound once?"""
    while is_stage(expr):
        expr = expr.func.value  # type: ignore[attr-defined]
    if isinstance(expr, cst.Name) and depth < 10:
        value = single_value(expr.value, scope, expr)
        return value is not None and _source_shuffles(value, scope, ctx, depth + 1)
    if not isinstance(expr, cst.Call):
        return False
    qualname = ctx.qualname(expr.func, scope) or ""
    if qualname in _SHUFFLING_SOURCES or (qualname.startswith("keras.") and qualname.endswith("_from_directory")):
        return not is_false(argument(expr, 99, "shuffle"))
    return False
