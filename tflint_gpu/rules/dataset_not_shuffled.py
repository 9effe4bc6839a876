from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.api import argument
from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.semantic.values import KERAS, UNKNOWN
from tflint_gpu.rules.base import Rule, clean, flagged


class DatasetNotShuffled(Rule):
    """`fit` on a dataset listed class by class and never shuffled: each batch holds one class.

    ## What it does
    Finds a Keras `fit` whose training data (`x`) is a `tf.data.Dataset`
    that starts from a source listing its elements in a grouped order and has
    no `shuffle` anywhere in its pipeline:
    * `image_dataset_from_directory(..., shuffle=False)` (also `text_`,
      `audio_dataset_from_directory`, under `keras.utils`, `tf.keras.utils`,
      `tf.keras.preprocessing`), with labels: the files are read directory by
      directory, so class by class. `shuffle` is a literal, a name bound to
      it, or a parameter that every call of the module fills with `False`
      (`make(path, shuffle=False)`);
    * `tf.data.Dataset.list_files(pattern, shuffle=False)` with a literal
      pattern that has a wildcard directory level (`"data/*/*.png"`): the
      file names come sorted, those of one directory together.

    The pipeline is followed backwards through names, rebindings, parameters
    the module's calls fill and the returns of the module's functions, and
    through the stages that keep the order (`map`, `filter`, `batch`,
    `prefetch`, `cache`, `repeat`, `interleave`...; `semantic.ordering`).
    A `shuffle` after batching does not help, and is reported as such: the
    Keras utilities batch (32 unless `batch_size=None`), so
    `image_dataset_from_directory(..., shuffle=False).shuffle(1000)`
    reorders whole one-class batches (`unbatch()` before the shuffle mixes
    the elements). Not reported: a `shuffle` of elements on any path, a stage
    the engine does not know
    (`apply`, `zip`, `concatenate`...), a value it cannot follow, a flat file
    pattern (`"shards/*.tfrecord"`: shards are often written shuffled),
    `labels=None`, validation data, `evaluate` and `predict` (order does not
    matter there, and it often must be kept), test code.

    ## Why is this bad?
    Keras's `fit(shuffle=True)` (the default) shuffles NumPy arrays, not a
    `Dataset`: a dataset is read in its own order every epoch (Keras 3 warns
    only when `shuffle=True` is passed explicitly). Trained class by class,
    each batch holds one class; the model is pulled toward the class of the
    batches it has just seen and forgets the others, batch normalisation
    normalises single-class batches, and what is learnt depends on which
    class comes last.

    ## Example
    ```python
    train = keras.utils.image_dataset_from_directory("data/train", shuffle=False)
    model.fit(train, epochs=10)
    ```

    Use instead:
    ```python
    train = keras.utils.image_dataset_from_directory("data/train", shuffle=True, seed=0)
    model.fit(train, epochs=10)
    ```

    ## Fix safety
    No fix: turning on `shuffle` changes the order every consumer of the
    dataset sees (a `predict` on the same dataset lines its outputs up with
    labels read in order), and the right place (the file list, or a
    `shuffle(buffer)` before `batch`) depends on the pipeline.

    ## Measured effect
    Checked with TensorFlow 2.21 and Keras 3.15 (CPU): 15 PNG files in 3
    class directories give labels `[0]*5 + [1]*5 + [2]*5` from
    `image_dataset_from_directory(..., shuffle=False)` (mixed without it),
    and `list_files("data/*/*.png", shuffle=False)` lists `a/`, then `b/`,
    then `c/`; `fit(dataset, shuffle=True)` reads the batches in the
    dataset's order. `examples/TFG308`, `tflint-gpu verify --rule TFG308
    --device cpu --size small`: fixes-behaviour (see examples/RESULTS.md for
    the accuracies, class-ordered against shuffled).
    """

    code = "TFG308"
    name = "dataset-not-shuffled"
    message = "fit on a dataset in class order that nothing shuffles"
    needs = (("shuffle",), ("fit",))

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "fit":
            return
        data = argument(node, 0, "x")
        if data is None or in_test_function(ctx.scope) or ctx.in_test_module:
            return
        if ctx.value_kind(func.value) not in (KERAS, UNKNOWN) or not ctx.is_dataset(data):
            return
        grouped = ctx.ordering.grouped(data, ctx.scope)
        if grouped is None:
            return
        called = cst.Module([]).code_for_node(grouped.source.func).rsplit(".", 1)[-1]
        if grouped.batch_shuffle is not None:
            ctx.report(data, f"`fit` trains on a dataset in class order, `{called}(..., shuffle=False)`, whose "
                             f"`shuffle` comes after batching: it reorders whole batches, each still one class")
            return
        ctx.report(data, f"`fit` trains on a dataset in class order, `{called}(..., shuffle=False)`, that "
                         f"nothing shuffles: each batch holds one class (`fit(shuffle=True)` does not shuffle a "
                         f"Dataset)")

    cases = [
        flagged(
            """
            import keras
            import tensorflow as tf

            def load(path):
                return keras.utils.image_dataset_from_directory(path, image_size=(64, 64), shuffle=False)

            model = keras.Sequential([keras.layers.Rescaling(1 / 255), keras.layers.Flatten(), keras.layers.Dense(3)])
            train = load("data/train")
            train = train.map(lambda x, y: (x, y)).prefetch(tf.data.AUTOTUNE)
            model.fit(train, epochs=3, shuffle=True)
            """,
            at=[(10, 11, "`fit` trains on a dataset in class order, `image_dataset_from_directory(..., "
                         "shuffle=False)`")],
            note="through a helper's return, a rebinding and order-keeping stages; fit(shuffle=True) does not help",
        ),
        flagged(
            """
            import tensorflow as tf

            def decode(path):
                label = tf.strings.split(path, "/")[-2] == "cat"
                return tf.io.decode_png(tf.io.read_file(path)), label

            files = tf.data.Dataset.list_files("images/*/*.png", shuffle=False)
            dataset = files.map(decode, num_parallel_calls=tf.data.AUTOTUNE).batch(32)

            def train(model, ds):
                model.fit(x=ds, epochs=5)

            train(tf.keras.Sequential([tf.keras.layers.Dense(1)]), dataset)
            """,
            at=[(11, 17, "`fit` trains on a dataset in class order, `list_files(..., shuffle=False)`")],
            note="list_files with a wildcard directory, through a parameter the module's call fills",
        ),
        flagged(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            train = tf.keras.utils.image_dataset_from_directory("data/train", shuffle=False, batch_size=32)
            model.fit(train.shuffle(1000), epochs=3)
            """,
            at=[(5, 11, "`fit` trains on a dataset in class order, `image_dataset_from_directory(..., "
                        "shuffle=False)`, whose `shuffle` comes after batching")],
            note="the utility batches: a shuffle after it reorders one-class batches",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            model = keras.Sequential([keras.layers.Dense(3)])
            u = keras.utils.image_dataset_from_directory("data/train", shuffle=False).unbatch().shuffle(500).batch(32)
            model.fit(u)
            a = keras.utils.image_dataset_from_directory("data/train", shuffle=False, batch_size=None).shuffle(100)
            model.fit(a)
            b = keras.utils.image_dataset_from_directory("data/train")
            model.fit(b)
            c = keras.utils.image_dataset_from_directory("data/val", shuffle=False)
            model.fit(b, validation_data=c)
            model.evaluate(c)
            d = tf.data.Dataset.list_files("shards/*.tfrecord", shuffle=False).interleave(tf.data.TFRecordDataset)
            model.fit(d)
            e = keras.utils.image_dataset_from_directory("unlabelled", labels=None, shuffle=False)
            model.fit(e)
            f = tf.data.Dataset.list_files("images/*/*.png", shuffle=False)
            f = f.apply(tf.data.experimental.ignore_errors())
            model.fit(f)
            """,
            note="unbatched and shuffled, shuffled after, default shuffle, validation/evaluate, flat shards, no labels, "
                 "an unknown stage",
        ),
        clean(
            """
            import keras

            def make(path, shuffle):
                return keras.utils.image_dataset_from_directory(path, shuffle=shuffle)

            model = keras.Sequential([keras.layers.Dense(3)])
            model.fit(make("data/train", True))
            if True:
                g = keras.utils.image_dataset_from_directory("data/train", shuffle=False)
            else:
                g = keras.utils.image_dataset_from_directory("data/train", shuffle=False, batch_size=None).shuffle(64)
            model.fit(g)
            """,
            note="a shuffle flag that is not a literal False; one path shuffles",
        ),
    ]
