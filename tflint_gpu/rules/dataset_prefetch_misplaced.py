from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.autofix.dataset_chain import reorder
from tflint_gpu.semantic.datasets import Chain, chains, method, shuffle_before_cache, upstream, when
from tflint_gpu.rules.base import Fix, Rule, Safety, clean, flagged

# `apply(...)` stages that must stay last and that a host prefetch legitimately precedes.
_DEVICE_COPIES = frozenset(
    {"tensorflow.data.experimental.prefetch_to_device", "tensorflow.data.experimental.copy_to_device"}
)
# Stages that expand each element into many: a prefetch right before one
# buffers the upstream work on purpose.
_EXPANDING = frozenset({"flat_map", "interleave", "unbatch"})


class DatasetPrefetchMisplaced(Rule):
    """A `Dataset.prefetch` followed by further transformations.

    ## What it does
    Finds `prefetch(...)` in a `tf.data` pipeline that is not its last
    transformation: `ds.prefetch(tf.data.AUTOTUNE).map(f).batch(32)`, also when
    the pipeline continues in the next statements (`ds = ds.prefetch(1)`,
    then `ds = ds.batch(32)`; also under an `if` and in a `for` loop applying
    stages to the same name, `for f in augmentations: ds = ds.map(f)`, whose
    first turn continues the pipeline). Transformations that only set options
    (`with_options`) do not count, and a host `prefetch` before
    `apply(tf.data.experimental.prefetch_to_device(...))` is left alone, as
    is a `prefetch` right before a `flat_map`/`interleave`/`unbatch` (it
    buffers the upstream elements each of which the next stage expands into
    many, as tf_keras's data adapter does for its index permutations; TF
    2.21, an 8 ms map over batches of 8 then `unbatch`, `inject_prefetch`
    off: 467 ms with `prefetch(AUTOTUNE).unbatch()`, 501 ms with the
    prefetch last, 920 ms with none).

    ## Why is this bad?
    `prefetch` overlaps the work *upstream* of it with the work of whoever
    reads *from* it. Placed mid-pipeline, it only buffers an intermediate
    stage: with `inject_prefetch` off, the later `map`/`batch` run in the
    consumer's thread, one element at a time, and the training step waits
    for them (measured: a 30 ms map after the prefetch, 62 ms an element
    against 32 ms with the prefetch last). The tf.data performance guide puts
    `prefetch` last for this reason.

    A *missing* final prefetch is not this rule (see TFG303, off by default,
    a hint): since TF 2.6 tf.data injects
    one when the last transformation is synchronous
    (`tf.data.Options().experimental_optimization.inject_prefetch`, documented
    "If None, defaults to True"; TF 2.21 leaves it `None`). With that default
    a mid-pipeline prefetch is useless rather than slow, and the fix mainly
    removes a buffer; it matters when the injection is off.

    ## Example
    ```python
    ds = tf.data.TFRecordDataset(files).prefetch(tf.data.AUTOTUNE).map(parse).batch(32)
    ```

    Use instead:
    ```python
    ds = tf.data.TFRecordDataset(files).map(parse).batch(32).prefetch(tf.data.AUTOTUNE)
    ```

    ## Fix safety
    Safe: `prefetch` never changes elements or their order, so moving it to
    the end (keeping its argument) yields the same values. Its buffer now
    holds final elements (after `batch`, `prefetch(2)` buffers two batches
    instead of two elements), so memory use changes. When the chain already
    ends with a `prefetch`, the fix removes the misplaced one. Each call keeps
    its comments (the comment ending its line, the comment lines above it).

    Reported without a fix: a pipeline split across statements; a pipeline
    with a `shuffle` before a `cache` (the fix could leave
    `.shuffle(...).cache()`, which replays one shuffled order every epoch);
    a misplaced `prefetch` that would be removed with its comment; and a
    layout where a comment could not stay with its call (two calls on one
    line, or a multi-line chain that is not parenthesised).

    ## Measured effect
    TF 2.21, CPU, 40 elements, a map with 10 ms of work per element and a
    consumer doing 10 ms per element (median of 3): `prefetch(AUTOTUNE).map(f)`
    with `inject_prefetch=False` 846 ms, `map(f).prefetch(AUTOTUNE)` 441 ms.
    With default options both take about 440 ms, because tf.data appends its
    own prefetch (`map(f)` alone: 436 ms; with the injection off: 839 ms).
    The results are the same values either way.
    """

    code = "TFG302"
    name = "dataset-prefetch-misplaced"
    message = "`prefetch` is not the last transformation of the tf.data pipeline"
    needs = ((".prefetch(",),)
    fix_safety = Safety.SAFE

    def visit_Module(self, node: cst.Module, ctx) -> None:
        for chain in chains(ctx):
            for stage in chain.stages:
                if method(stage) == "prefetch":
                    self._check(chain, stage, ctx)

    def _check(self, chain: Chain, stage: cst.Call, ctx) -> None:
        position = chain.position(stage)
        later_here = chain.stages[position + 1:]
        rest = later_here + chain.later_stages()
        if any(method(s) == "apply" and s.args and ctx.qualname(_callee(s.args[0].value), chain.scope) in _DEVICE_COPIES
               for s in rest):
            return
        working = [s for s in rest if method(s) != "with_options"]
        if not working or method(working[0]) in _EXPANDING:
            return
        ends_with_prefetch = method(rest[-1]) == "prefetch"
        followers = ", ".join(f"`{method(s)}`" for s in working if method(s) != "prefetch")
        if ends_with_prefetch and not followers:
            message = "A second `prefetch` right after this one: the first buffers nothing useful"
        elif ends_with_prefetch:
            message = f"`prefetch` followed by {followers}: redundant, the pipeline ends with a `prefetch`"
        else:
            message = f"`prefetch` is followed by {followers}: misplaced, it belongs at the end of the pipeline"
        ctx.report(stage.func.attr, message + when(chain, stage, some_of=working),
                   self._fix(chain, stage, ends_with_prefetch, ctx))

    @staticmethod
    def _fix(chain: Chain, stage: cst.Call, ends_with_prefetch: bool, ctx) -> Optional[Fix]:
        if chain.following is not None:
            return None  # the pipeline goes on in another statement
        position = chain.position(stage)
        affected = chain.stages[position:]
        if ends_with_prefetch:
            new_order = affected[1:]
            message = "Remove this `prefetch`: the pipeline already ends with one"
        else:
            new_order = affected[1:] + [stage]
            message = "Move `prefetch` to the end of the pipeline"
        before = upstream(chain, ctx) + [method(s) for s in chain.all_stages()[:chain.index(stage)]]
        if shuffle_before_cache(before + [method(s) for s in new_order]):
            return None  # the fixed pipeline would still cache one shuffled order
        replacement = reorder(chain.stages, position, len(chain.stages), new_order)
        if replacement is None:
            return None  # a comment could not stay with its call
        old, new = replacement
        return Fix(message, Safety.SAFE, {old: new})

    cases = [
        flagged(
            """
            import tensorflow as tf

            def preprocess(images, training, batch_size, augmentations=None):
                dataset = tf.data.Dataset.from_tensor_slices(images).map(tf.image.per_image_standardization)
                dataset = dataset.batch(batch_size, drop_remainder=training)
                dataset = dataset.prefetch(tf.data.AUTOTUNE)
                if training and augmentations is not None:
                    for augment in augmentations:
                        dataset = dataset.map(augment, num_parallel_calls=tf.data.AUTOTUNE)
                return dataset

            ds = preprocess(tf.zeros([8, 4, 4, 1]), True, 2)
            """,
            at=[(6, 23, "`prefetch` is followed by `map`: misplaced, it belongs at the end of the pipeline (when "
                        "`training and augmentations is not None` is true and the loop over `augmentations` runs)")],
            note="DeepRegNet/DeepReg dataset/loader/interface.py:140: the configured augmentations are mapped, in "
                 "a loop, after the prefetch; no fix across statements",
        ),
        clean(
            """
            import tensorflow as tf

            def permutation(_):
                return tf.random.shuffle(tf.range(100, dtype=tf.int64))

            indices = tf.data.Dataset.range(3).map(permutation).prefetch(1)
            batches = indices.flat_map(lambda i: tf.data.Dataset.from_tensor_slices(i).batch(10))
            """,
            note="a prefetch right before a flat_map buffers the expensive upstream elements on purpose "
                 "(tf_keras data_adapter.py)",
        ),
        clean(
            """
            import tensorflow as tf

            def slow(x):
                return x * 2

            ds = (
                tf.data.Dataset.range(64)
                .batch(8)
                .map(slow, num_parallel_calls=tf.data.AUTOTUNE)
                .cache()
                .prefetch(tf.data.AUTOTUNE)
                .unbatch()
            )
            """,
            note="a prefetch right before unbatch buffers the batched upstream work: as fast as a final "
                 "prefetch (tensorflow/docs data_performance.ipynb)",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).prefetch(tf.data.AUTOTUNE).map(lambda x: x * 2).batch(4)
            """,
            fixed="""
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).map(lambda x: x * 2).batch(4).prefetch(tf.data.AUTOTUNE)
            """,
            at=[(3, 32, '`prefetch` is followed by')],
            ),
        flagged(
            """
            import tensorflow as tf

            def pipeline(n):
                ds = (
                    tf.data.Dataset.range(n)
                    .prefetch(2)
                    .map(lambda x: x * 3, num_parallel_calls=tf.data.AUTOTUNE)
                    .batch(4)
                )
                return ds
            """,
            fixed="""
            import tensorflow as tf

            def pipeline(n):
                ds = (
                    tf.data.Dataset.range(n)
                    .map(lambda x: x * 3, num_parallel_calls=tf.data.AUTOTUNE)
                    .batch(4)
                    .prefetch(2)
                )
                return ds
            """,
            at=[(6, 10, '`prefetch` is followed by')],
            run="out = list(pipeline(10).as_numpy_iterator())",
            note="one call per line stays one call per line; arguments move with their call",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).prefetch(1).map(lambda x: x + 1).prefetch(tf.data.AUTOTUNE)
            """,
            fixed="""
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).map(lambda x: x + 1).prefetch(tf.data.AUTOTUNE)
            """,
            at=[(3, 32, '`prefetch` followed by `map`:')],
            note="already ends with a prefetch: the misplaced one is removed",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.from_tensor_slices(x)
            ds = ds.prefetch(tf.data.AUTOTUNE)
            ds = ds.batch(32)
            """,
            at=[(4, 9, '`prefetch` is followed by')],
            note="split across statements: reported, not fixed",
        ),
        flagged(
            """
            from tensorflow import data

            raw = data.Dataset.range(6)
            ds = raw.prefetch(4).shuffle(100).prefetch(8).batch(2)
            """,
            fixed="""
            from tensorflow import data

            raw = data.Dataset.range(6)
            ds = raw.shuffle(100).batch(2).prefetch(4)
            """,
            at=[(4, 10, '`prefetch` is followed by'), (4, 35, '`prefetch` is followed by')],
            note="two misplaced prefetches: fixed over two rounds",
        ),
        flagged(
            """
            import tensorflow as tf

            def make():
                ds = tf.data.Dataset.range(8)
                ds = ds.prefetch(2)
                AUTOTUNE = tf.data.AUTOTUNE
                ds = ds.map(lambda x: x + 1, num_parallel_calls=AUTOTUNE)
                return ds
            """,
            at=[(5, 13, '`prefetch` is followed by')],
            note="split chain: an unrelated assignment in between keeps the link",
        ),
        flagged(
            """
            import tensorflow as tf

            def make(shuffle):
                ds = tf.data.Dataset.range(8).prefetch(2)
                if shuffle:
                    ds = ds.shuffle(8)
                return ds
            """,
            at=[(4, 35, "`prefetch` is followed by `shuffle`: misplaced, it belongs at the end of the pipeline "
                        "(when `shuffle` is true)")],
            note="continued on one branch: the finding names the branch (no fix: the pipeline goes on in "
                 "another statement)",
        ),
        clean(
            """
            import tensorflow as tf

            def make(shuffle):
                ds = tf.data.Dataset.range(8)
                if shuffle:
                    ds = ds.shuffle(8)
                ds = ds.prefetch(2)
                return ds
            """,
            note="a stage under an `if`, then the prefetch after it on every path: last on both",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).map(lambda x: x * 2).batch(4).prefetch(tf.data.AUTOTUNE)
            """,
            note="prefetch last",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).map(lambda x: x * 2).batch(4)
            """,
            note="no prefetch: tf.data injects one (inject_prefetch defaults to True)",
        ),
        clean(
            """
            import tensorflow as tf

            options = tf.data.Options()
            ds = tf.data.Dataset.range(10).batch(4).prefetch(2).with_options(options)
            """,
            note="with_options only sets options",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).batch(4).prefetch(2).apply(
                tf.data.experimental.prefetch_to_device("/gpu:0"))
            """,
            note="host prefetch before prefetch_to_device",
        ),
        clean(
            """
            import tensorflow as tf

            def load(files):
                return reader(files).prefetch(2).map(parse)
            """,
            note="receiver not known to be a dataset (what a function the module does not define returns; a "
                 "parameter called with prefetch is one: semantic.datasets)",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).interleave(
                lambda i: tf.data.Dataset.range(i).prefetch(1), cycle_length=2).batch(2).prefetch(1)
            """,
            note="the inner dataset's prefetch is last in its own chain",
        ),
        # -- added with "fixes you can trust" ------------------------------
        flagged(
            """
            import tensorflow as tf

            def double(x):
                return x * 2

            def pipeline(n):
                ds = (
                    tf.data.Dataset.range(n)  # the source
                    .prefetch(2)  # overlap with the consumer
                    # double every element
                    .map(double, num_parallel_calls=tf.data.AUTOTUNE)
                    .batch(4)  # four per step
                )
                return ds
            """,
            fixed="""
            import tensorflow as tf

            def double(x):
                return x * 2

            def pipeline(n):
                ds = (
                    tf.data.Dataset.range(n)  # the source
                    # double every element
                    .map(double, num_parallel_calls=tf.data.AUTOTUNE)
                    .batch(4)  # four per step
                    .prefetch(2)  # overlap with the consumer
                )
                return ds
            """,
            at=[(9, 10, '`prefetch` is followed by')],
            run="out = list(pipeline(10).as_numpy_iterator())",
            note="one call per line with comments: each call keeps its comments",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = (tf.data.Dataset.range(10).prefetch(1)  # overlap
                  .map(lambda x: x + 1).batch(2))
            """,
            at=[(3, 33, '`prefetch` is followed by')],
            note="the prefetch's comment has no line break to go to at the end: reported without a fix",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = (
                tf.data.Dataset.range(10)
                .prefetch(1)  # early
                .map(lambda x: x + 1)
                .prefetch(tf.data.AUTOTUNE)
            )
            """,
            at=[(5, 6, '`prefetch` followed by `map`:')],
            note="removing the misplaced prefetch would delete its comment: reported without a fix",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = (
                tf.data.Dataset.range(10)
                .prefetch(1)
                .map(lambda x: x + 1)  # shift
                .batch(2)  # pairs
            )
            ds2 = ds.map(lambda b: b * 10)
            """,
            fixed="""
            import tensorflow as tf

            ds = (
                tf.data.Dataset.range(10)
                .map(lambda x: x + 1)  # shift
                .batch(2)  # pairs
                .prefetch(1)
            )
            ds2 = ds.map(lambda b: b * 10)
            """,
            at=[(5, 6, '`prefetch` is followed by')],
            note="the moved prefetch had no comment: the comment after the last call stays with its call",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(8).shuffle(8).prefetch(2).cache().batch(2)
            """,
            at=[(3, 42, '`prefetch` is followed by')],
            note="moving the prefetch would leave `.shuffle(8).cache()` (one shuffled order replayed every "
                 "epoch): reported without a fix",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(8).prefetch(2).map(lambda v: v * 2).shuffle(8)
            ds = ds.cache().take(4)
            """,
            at=[(3, 31, '`prefetch` is followed by')],
            note="the prefetch is followed by another statement's stages: reported without a fix "
                 "(TFG301's take fix is also refused: the shuffle would come before the cache)",
        ),
        flagged(
            """
            import tensorflow as tf

            x = tf.range(4, dtype=tf.float32)
            rng = tf.random.Generator.from_seed(7)
            ds = tf.data.Dataset.from_tensor_slices(x).prefetch(2).map(lambda v: v + rng.normal(())).cache().take(3)
            for v in ds:
                pass
            """,
            fixed="""
            import tensorflow as tf

            x = tf.range(4, dtype=tf.float32)
            rng = tf.random.Generator.from_seed(7)
            ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v + rng.normal(())).cache().take(3).prefetch(2)
            for v in ds:
                pass
            """,
            at=[(5, 44, '`prefetch` is followed by')],
            run="epochs = [list(d.as_numpy_iterator()) for d in (ds, ds)]",
            note="with TFG301 (cache after a random map, then take) on the same pipeline: all rules' fixes "
                 "together end in cache().map(...).take(3).prefetch(2)",
        ),

        # -- added with "one semantic model in the engine" -------------------
        flagged(
            """
            import tensorflow as tf

            def pipeline(ds: tf.data.Dataset):
                return ds.prefetch(2).map(lambda x: x * 2).batch(4)
            """,
            fixed="""
            import tensorflow as tf

            def pipeline(ds: tf.data.Dataset):
                return ds.map(lambda x: x * 2).batch(4).prefetch(2)
            """,
            at=[(4, 15, '`prefetch` is followed by')],
            run="out = list(pipeline(tf.data.Dataset.range(10)).as_numpy_iterator())",
            note="a parameter annotated as a dataset is one",
        ),
        clean(
            """
            import pandas as pd
            import tensorflow as tf

            class Dataset:
                def prefetch(self, n):
                    return self

            def pipeline(ds: Dataset, frame: pd.DataFrame, spec: tf.data.DatasetSpec):
                a = ds.prefetch(2).map(lambda x: x * 2).batch(4)
                return a, frame.prefetch(2).map(str), spec.prefetch(1).map(str)
            """,
            note="annotated with a local `Dataset` class, a DataFrame, a `tf.data.DatasetSpec`: not datasets",
        ),
        flagged(
            """
            import tensorflow as tf

            def load(n):
                return tf.data.Dataset.range(n).map(lambda x: x * 3)

            ds = load(10).prefetch(2).map(lambda x: x + 1).batch(3)
            """,
            fixed="""
            import tensorflow as tf

            def load(n):
                return tf.data.Dataset.range(n).map(lambda x: x * 3)

            ds = load(10).map(lambda x: x + 1).batch(3).prefetch(2)
            """,
            at=[(6, 15, '`prefetch` is followed by')],
            note="the result of a same-module function that returns a dataset is one",
        ),
        clean(
            """
            import tensorflow as tf

            def load(n):
                if n:
                    return tf.data.Dataset.range(n)
                return None

            def table(n):
                return make_table(n)

            a = load(10).prefetch(2).map(lambda x: x + 1).batch(3)
            b = table(10).prefetch(2).map(lambda x: x + 1).batch(3)
            """,
            note="functions that may return something else (None; whatever an unknown function returns)",
        ),
        flagged(
            """
            import tensorflow_datasets as tfds

            train, test = tfds.load("mnist", split=["train", "test"], as_supervised=True)
            train = train.prefetch(1)
            train = train.batch(32)
            """,
            at=[(4, 15, '`prefetch` is followed by')],
            note="tfds.load with a list of splits: the unpacked elements are datasets",
        ),
        clean(
            """
            import tensorflow as tf
            import my_datasets as tfds

            ds = tfds.load("mnist", split="train")
            ds = ds.prefetch(1)
            ds = ds.batch(32)
            """,
            note="a module named `tfds` that is not tensorflow_datasets",
        ),
        flagged(
            """
            import keras

            train, val = keras.utils.image_dataset_from_directory("images", validation_split=0.2, subset="both", seed=1)
            train = train.prefetch(1)
            train = train.map(lambda x, y: (x / 255, y))
            """,
            at=[(4, 15, '`prefetch` is followed by')],
            note='image_dataset_from_directory(subset="both") returns two datasets',
        ),
        clean(
            """
            import keras

            ds = keras.utils.image_dataset_from_directory("images", format="grain")
            ds = ds.prefetch(1)
            ds = ds.map(lambda x, y: (x / 255, y))
            """,
            note='format="grain" returns a grain dataset, not a tf.data one',
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(8)
            ds = ds.prefetch(2)


            def double(x):
                return x * 2


            ds = ds.map(double)
            """,
            at=[(4, 9, '`prefetch` is followed by')],
            note="a pipeline split over statements with a def in between",
        ),
        flagged(
            """
            import tensorflow as tf

            def make(n):
                ds = tf.data.Dataset.range(n)
                ds = ds.prefetch(2)
                return ds.batch(4)
            """,
            at=[(5, 13, '`prefetch` is followed by')],
            note="the pipeline continued in the return statement",
        ),
    ]


def _callee(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.func if isinstance(expr, cst.Call) else expr
