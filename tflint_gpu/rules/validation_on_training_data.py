from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.api import arguments_by_name
from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.semantic.values import KERAS, UNKNOWN
from tflint_gpu.rules.base import Rule, clean, flagged

# ``Model.fit``'s parameters in order, as Keras 3.15 and tf_keras 2.21 both declare them (tf_keras
# adds max_queue_size, workers, use_multiprocessing after these).
_FIT = ("x", "y", "batch_size", "epochs", "verbose", "callbacks", "validation_split", "validation_data",
        "shuffle", "class_weight", "sample_weight", "initial_epoch", "steps_per_epoch", "validation_steps",
        "validation_batch_size", "validation_freq")
# tf_keras 2.21's ``Model.fit_generator`` (removed by Keras 3), its generator taken for ``x``.
_FIT_GENERATOR = ("x", "steps_per_epoch", "epochs", "verbose", "callbacks", "validation_data", "validation_steps",
                  "validation_freq", "class_weight", "max_queue_size", "workers", "use_multiprocessing",
                  "shuffle", "initial_epoch")


class ValidationOnTrainingData(Rule):
    """`model.fit(x, y, validation_data=(x, y))`: the validation data is the training data.

    ## What it does
    Finds a Keras `fit` whose `validation_data` is the very data it trains
    on: a tuple whose inputs and targets are the same values as `fit`'s `x`
    and `y` (`validation_data=(x_train, y_train)`), also through names
    (`val = (x, y)`, `x_val = x_train`), and a dataset given as both
    (`fit(train_ds, validation_data=train_ds)`), and augmented batches of the
    arrays validated on (`fit(datagen.flow(x, y), validation_data=(x, y))`
    with a Keras `ImageDataGenerator`; tf_keras's `fit_generator` too).
    Keyword and positional `x`/`y` (and a positional `validation_data`),
    Keras 3 and tf_keras alike; the receiver is any object the engine does
    not type as something other than a Keras model (a wrapper's `fit` that
    takes `validation_data`, AutoKeras's, passes it on to Keras's).

    Sameness is the engine's (`semantic.sameness`): two reads are the same
    value only when the same binding reaches both (a name not rebound between
    them, an alias of it, the one binding of `self.x_train`), never because
    two expressions look alike. Not reported: a held-out split (`x_val,
    y_val`, `x[:n]`, `train_test_split(...)`), `validation_split=0.2`, a tuple
    whose inputs are the training inputs but whose targets differ (or the
    reverse), a name rebound between the two uses, `evaluate(x_train,
    y_train)` (a reading asked for, not a validation), and test code (a test
    may run the validation machinery on its training batch on purpose).

    ## Why is this bad?
    Keras evaluates `validation_data` at the end of each epoch and logs it as
    `val_loss`/`val_<metric>`; `EarlyStopping`, `ModelCheckpoint(save_best_only
    =True)` and `ReduceLROnPlateau` usually watch those figures. Given the
    training data, every validation figure is a training figure: it shows no
    overfitting, early stopping never sees the validation loss rise, and the
    "best" checkpoint is the one that fits the training set best.

    ## Example
    ```python
    model.fit(x_train, y_train, epochs=10, validation_data=(x_train, y_train))
    ```

    Use instead:
    ```python
    x_tr, x_val, y_tr, y_val = train_test_split(x_train, y_train, test_size=0.2)
    model.fit(x_tr, y_tr, epochs=10, validation_data=(x_val, y_val))
    ```

    ## Fix safety
    No fix: holding out data means choosing which samples (a random split, a
    time cut, a group split) and how many, and trains on fewer samples.

    ## Measured effect
    TF 2.21 CPU, Keras 3.15.1 and tf_keras 2.21.0: a small Dense classifier
    fit 3 epochs with `validation_data=(x, y)`; at each epoch's end
    `logs["val_loss"]` and `val_accuracy` equal `model.evaluate(x, y)` to
    every printed digit (Keras 3: 0.7335692644, 0.7172669768, 0.7020618916;
    tf_keras: 0.7335692644, 0.7169376612, 0.7023172379). One shuffled
    `tf.data` dataset as `x` and `validation_data`: `val_loss` equals
    `evaluate(ds)` (Keras 3: to every digit; tf_keras: to 6 digits, the
    reshuffled order summing differently). examples/TFG608
    (fixes-behaviour): before, the last `val_loss` is the training data's
    loss; after holding out a fifth of the samples, it is the held-out
    samples' loss, above the training data's: the overfitting the
    validation figure exists to show.

    On the projects and packages checked here and on keras/src and
    tf_keras/src: no finding outside tests. Their tests do it 24 times
    (Keras's TensorBoard and SwapEMAWeights tests, AutoKeras's, also through
    `test_x = train_x`), on purpose, and are not reported.
    """

    code = "TFG608"
    name = "validation-on-training-data"
    message = ("`validation_data` is the training data: every validation figure is a training figure; "
               "hold out a split")
    needs = (("validation_data",),)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("fit", "fit_generator"):
            return
        given = arguments_by_name(node, _FIT if func.attr.value == "fit" else _FIT_GENERATOR)
        if given is None or "validation_data" not in given or "x" not in given:
            return
        scope = ctx.scope
        if in_test_function(scope) or ctx.in_test_module or ctx.value_kind(func.value) not in (KERAS, UNKNOWN):
            return
        x, y, validation = given["x"], given.get("y"), given["validation_data"]
        if y is None and isinstance(x, cst.Call):
            x, y = _flowed(x, scope, ctx)  # fit(datagen.flow(x, y), validation_data=(x, y))
            if x is None:
                return
        sameness = ctx.sameness
        elements = sameness.display(validation, scope, node)
        if elements is not None:
            if y is None or len(elements) < 2:
                return
            (vx, x_scope), (vy, y_scope) = elements[0], elements[1]
            if sameness.same_value(x, vx, scope, x_scope) and sameness.same_value(y, vy, scope, y_scope):
                ctx.report(validation)
        elif (y is None or (isinstance(y, cst.Name) and y.value == "None")) \
                and sameness.same_value(x, validation, scope):
            ctx.report(validation)


def _flowed(call: cst.Call, scope, ctx):
    """The arrays ``ImageDataGenerator(...).flow(x, y, ...)`` yields (augmented) batches of: (x, y), or
    (None, None) for any other call."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "flow":
        return None, None
    made = ctx.migration.made_by(func.value, scope)
    if made is None or not (ctx.qualname(made[0].func, made[1]) or "").endswith(".image.ImageDataGenerator"):
        return None, None
    flowed = arguments_by_name(call, ("x", "y"))
    if flowed is None or "x" not in flowed or "y" not in flowed:
        return None, None
    return flowed["x"], flowed["y"]


ValidationOnTrainingData.cases = [
    flagged(
        """
        import numpy as np
        import tensorflow as tf

        x_train = np.random.rand(64, 4)
        y_train = np.random.rand(64, 1)
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile("adam", "mse")
        model.fit(x_train, y_train, epochs=2, validation_data=(x_train, y_train))
        model.fit(x=x_train, y=y_train, validation_data=[x_train, y_train])
        """,
        at=[(8, 56, "`validation_data` is the training data: every validation figure is a training figure"),
            (9, 49, "`validation_data` is the training data")],
        note="positional and keyword x/y; a list display is a validation tuple too (Keras 3.15, tf_keras 2.21: "
             "val_loss equals evaluate(x, y))",
    ),
    flagged(
        """
        import numpy as np
        import tf_keras

        def train(x, y, model):
            val = (x, y)
            x_val = x
            y_val = y
            model.fit(x, y, 32, 5, 0, None, 0.0, val)
            model.fit(x, y, validation_data=(x_val, y_val))
            return model

        (features, labels), _ = np.load("d.npy"), None
        net = tf_keras.Sequential([tf_keras.layers.Dense(1)])
        net.fit(features, labels, validation_data=(features, labels))
        """,
        at=[(8, 42, "`validation_data` is the training data"),
            (9, 38, "`validation_data` is the training data"),
            (14, 44, "`validation_data` is the training data")],
        note="names bound to the same arrays (a tuple name, aliases, parameters, unpacked names); positional "
             "validation_data; tf_keras",
    ),
    flagged(
        """
        import tensorflow as tf

        train_ds = tf.data.Dataset.from_tensor_slices(([1.0], [2.0])).batch(1)
        ds = train_ds
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.fit(train_ds, epochs=3, validation_data=train_ds)
        model.fit(ds, validation_data=train_ds)

        class Trainer:
            def __init__(self, data):
                self.data = data
                self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

            def run(self):
                self.model.fit(self.data, validation_data=self.data)
        """,
        at=[(6, 47, "`validation_data` is the training data"),
            (7, 31, "`validation_data` is the training data"),
            (15, 51, "`validation_data` is the training data")],
        note="one dataset given as x and as validation_data (an alias; an attribute bound once)",
    ),
    flagged(
        """
        import tensorflow as tf

        (x_tr, y_tr), (x_te, y_te) = tf.keras.datasets.mnist.load_data()
        datagen = tf.keras.preprocessing.image.ImageDataGenerator(rotation_range=10)
        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        model.fit(datagen.flow(x_tr, y_tr, batch_size=32), epochs=2, validation_data=(x_tr, y_tr))
        model.fit_generator(datagen.flow(x_tr, y_tr), validation_data=(x_tr, y_tr))
        model.fit(datagen.flow(x_tr, y_tr), validation_data=(x_te, y_te))
        model.fit(datagen.flow(x_tr, y_tr), validation_data=datagen.flow(x_tr, y_tr))
        """,
        at=[(6, 79, "`validation_data` is the training data"),
            (7, 64, "`validation_data` is the training data")],
        note="augmented batches of the arrays validated on (Keras 2's fit_generator too); the test split and a "
             "second generator are not reported",
    ),
    clean(
        """
        import numpy as np
        import tensorflow as tf
        from sklearn.model_selection import train_test_split

        x = np.random.rand(100, 4)
        y = np.random.rand(100, 1)
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        x_train, x_val, y_train, y_val = train_test_split(x, y)
        model.fit(x_train, y_train, validation_data=(x_val, y_val))
        model.fit(x[20:], y[20:], validation_data=(x[:20], y[:20]))
        model.fit(x, y, validation_split=0.2)
        model.fit(x, y, validation_data=(x, y_val))
        model.fit(x, y, validation_data=(x_val, y))
        model.fit(x, y, validation_data=(x, y * 2))
        model.evaluate(x, y)
        model.fit(np.random.rand(3, 4), np.random.rand(3, 1), validation_data=(np.random.rand(3, 4),
                                                                               np.random.rand(3, 1)))
        """,
        note="a held-out split, slices, validation_split, x equal but y not (and the reverse), evaluate, "
             "calls (a new value each time)",
    ),
    clean(
        """
        import numpy as np
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        a = np.random.rand(10, 4)
        b = np.random.rand(10, 1)
        val = (a, b)
        a = np.random.rand(10, 4)
        model.fit(a, b, validation_data=val)
        c = np.random.rand(10, 4)
        d = np.random.rand(10, 4)
        model.fit(c, b, validation_data=(d, b))
        if a.any():
            e = a
        else:
            e = c
        model.fit(e, b, validation_data=(a, b))
        for part in range(3):
            f = np.random.rand(10, 4)
            if part == 0:
                first = (f, b)
            model.fit(f, b, validation_data=first)
        """,
        note="a name rebound between the tuple and the fit; different names bound to different arrays; a name "
             "bound in two branches; a tuple made on an earlier turn of the loop",
    ),
    clean(
        """
        import tensorflow as tf

        train_ds = tf.data.Dataset.range(4)
        val_ds = tf.data.Dataset.range(2)
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.fit(train_ds, validation_data=val_ds)
        model.fit(train_ds.repeat(), validation_data=train_ds.take(1))

        class Data:
            def __init__(self, train, val):
                self.train = train
                self.val = val

            def reload(self, other):
                self.train = other

            def fit(self, model):
                model.fit(self.train, validation_data=self.train)
        """,
        note="another dataset; made by calls; an attribute bound twice (may be reloaded between)",
    ),
    clean(
        """
        import numpy as np
        import tensorflow as tf

        def test_fit_runs_validation():
            x = np.ones((4, 2))
            y = np.ones((4, 1))
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(x, y, validation_data=(x, y))
        """,
        note="a test exercising the validation machinery on its training batch",
    ),
]
