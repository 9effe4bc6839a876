from __future__ import annotations

from typing import Dict, List, Tuple

import libcst as cst

from tflint_gpu.semantic.api import keyword
from tflint_gpu.semantic.callbacks import fit_arguments, fit_validates, given_callbacks, watched_metric
from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.rules.base import Rule, clean, flagged


class MonitorWithoutValidation(Rule):
    """A callback that watches a validation figure, given to a `fit` that has no validation data.

    ## What it does
    Finds a Keras `EarlyStopping`, `ReduceLROnPlateau` or
    `ModelCheckpoint(save_best_only=True)` that watches a validation figure
    (`monitor="val_loss"`, `"val_accuracy"`, any `val_` name, or the
    default, which is `"val_loss"` for all three in Keras 3.15 and tf_keras
    2.21) and is given to a `fit` (or tf_keras's `fit_generator`) that has
    neither `validation_data` nor `validation_split` (`validation_freq` alone
    does not validate). The callbacks are followed through names, lists and
    tuples (`callbacks=[es, ckpt]`, `cbs = [...]; fit(..., callbacks=cbs)`),
    `cbs.append(es)`, `cbs += [...]`, `a + b`, parameters and the module's
    defs (the engine's `Flow.sources`). Reported at the callback's
    construction, once, whichever `fit`s it is given to.

    Not reported: a callback also given to a `fit` that validates (or may:
    an unreadable `validation_data`), a `fit` whose `*args`/`**kwargs` may
    hold validation arguments, a `monitor` that is not a `val_` figure
    (`"loss"`) or cannot be read, `ModelCheckpoint` without
    `save_best_only=True` (it saves every epoch and does not depend on the
    figure), the receiver of `fit` typed as something other than a Keras
    model, and test code.

    ## Why is this bad?
    A `fit` without validation data logs no `val_` figure, so the callback
    never sees the number it waits for. Keras warns (`Early stopping
    conditioned on metric `val_loss` which is not available`: tf_keras at
    every epoch through its logger, Keras 3 as a Python `UserWarning`, shown
    once) among the training output, and carries on:
    * `EarlyStopping` never stops training (and never restores the best
      weights);
    * `ReduceLROnPlateau` never lowers the learning rate;
    * `ModelCheckpoint(save_best_only=True)`: Keras 3 saves the model at
      every epoch (the last one, not the best), tf_keras saves nothing.

    The training runs to its last epoch at the first learning rate, which is
    not what the code says.

    ## Example
    ```python
    reduce_lr = ReduceLROnPlateau(monitor="val_loss", factor=0.1, patience=10)
    model.fit(x_train, y_train, epochs=100, callbacks=[reduce_lr])
    ```

    Use instead:
    ```python
    reduce_lr = ReduceLROnPlateau(monitor="val_loss", factor=0.1, patience=10)
    model.fit(x_train, y_train, epochs=100, callbacks=[reduce_lr], validation_split=0.1)
    ```

    ## Fix safety
    No fix: the code says neither which data to hold out (a split, a test
    set, a generator's `subset="validation"`) nor whether watching the
    training figure (`monitor="loss"`) was meant instead; either changes
    what the model is trained on or how.

    ## Measured effect
    TF 2.21 CPU, Keras 3.15.1 and tf_keras 2.21.0, a small Dense regression
    fit 4 epochs with no validation and `EarlyStopping(patience=0)`,
    `ReduceLROnPlateau(patience=0, min_delta=10)` and
    `ModelCheckpoint(path, save_best_only=True)`: all 4 epochs run, the
    learning rate stays 0.01, each callback warns that `val_loss` is not
    available; Keras 3 writes the checkpoint (every epoch), tf_keras writes
    no file. The same callbacks with `validation_split=0.25`: training stops
    after 2 epochs. `validation_freq=2` alone: 4 epochs, the warning again.
    examples/TFG613 (fixes-behaviour): before, `EarlyStopping` on an
    overfitting model lets all epochs run; after, with a validation split,
    it stops early.
    """

    code = "TFG613"
    name = "monitor-without-validation"
    message = "This callback watches a validation figure, but the `fit` it is given to has no validation data"
    needs = (("fit", "fit_generator"), ("callbacks",))
    reads_index = ("Call",)

    def visit_Module(self, node: cst.Module, ctx) -> None:
        if ctx.in_test_module:
            return
        fits: Dict[int, List[bool]] = {}
        watched: Dict[int, Tuple[cst.Call, str, str]] = {}
        flow, objects = ctx.graphs.flow, ctx.graphs.objects
        for call, scope in ctx.model.index.get("Call", ()):
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in ("fit", "fit_generator"):
                continue
            method = func.attr.value
            given = fit_arguments(call, method)
            callbacks = given.get("callbacks") if given is not None else None
            if callbacks is None:
                found = keyword(call, "callbacks")
                if found is None:
                    continue
                callbacks = found.value
            validates = fit_validates(call, method, scope)
            outer, ctx.scope = ctx.scope, scope  # the receiver's facts are read where the call is
            try:
                quiet = validates is not False or in_test_function(scope) \
                    or not ctx.may_be_keras_model(func.value, method)
            finally:
                ctx.scope = outer
            for made, where in given_callbacks(callbacks, scope, flow, objects).found:
                if not isinstance(made, cst.Call):
                    continue
                watching = watched_metric(made, where, ctx.migration)
                if watching is None or not watching[1].startswith("val_"):
                    continue
                fits.setdefault(id(made), []).append(quiet)
                watched[id(made)] = (made, watching[1], watching[0].rsplit(".", 1)[-1])
        for key, quiets in fits.items():
            if any(quiets):
                continue
            made, metric, cls = watched[key]
            if cls == "ModelCheckpoint":
                effect = ("Keras 3 saves every epoch (the last model, not the best), tf_keras saves nothing")
            elif cls == "EarlyStopping":
                effect = "training never stops early"
            else:
                effect = "the learning rate is never reduced"
            ctx.report(made, f"`{cls}` watches `{metric}`, but the `fit` it is given to has no validation data "
                             f"(no `validation_data`/`validation_split`): {effect}")


MonitorWithoutValidation.cases = [
    flagged(
        """
        import numpy as np
        from tensorflow.keras.callbacks import ModelCheckpoint, ReduceLROnPlateau
        from tensorflow.keras.preprocessing.image import ImageDataGenerator

        def train(model, x_train, y_train, epochs):
            mcp_save = ModelCheckpoint(filepath="ckpt.h5", monitor='loss', save_best_only=False)
            reduce_lr = ReduceLROnPlateau(monitor='val_loss', factor=np.sqrt(0.1), patience=10)
            data_aug = ImageDataGenerator(rotation_range=15, validation_split=0.1)
            model.fit(data_aug.flow(x_train, y_train, batch_size=32), epochs=epochs,
                      callbacks=[mcp_save, reduce_lr], shuffle=True, verbose=1)
        """,
        at=[(7, 17, "`ReduceLROnPlateau` watches `val_loss`, but the `fit` it is given to has no validation "
                    "data (no `validation_data`/`validation_split`): the learning rate is never reduced")],
        note="andreacos/Deep-Neural-Networks-Robust-Watermark Finetune_or_TransferLearning_CIFAR10.py: the "
             "generator's validation_split makes a subset nobody asks for; the loss checkpoint is fine",
    ),
    flagged(
        """
        import keras

        model = keras.Sequential([keras.layers.Dense(1)])
        model.compile("adam", "mse")
        stop = keras.callbacks.EarlyStopping(patience=3)
        best = keras.callbacks.ModelCheckpoint("best.keras", "val_accuracy", 0, True)
        cbs = [stop]
        cbs.append(best)
        cbs += [keras.callbacks.ReduceLROnPlateau(monitor="val_mae")]
        model.fit(x, y, epochs=50, callbacks=cbs, validation_freq=2)
        model.fit(x, y, epochs=50, callbacks=cbs)
        """,
        at=[(5, 8, "`EarlyStopping` watches `val_loss`, but the `fit` it is given to has no validation data "
                   "(no `validation_data`/`validation_split`): training never stops early"),
            (6, 8, "`ModelCheckpoint` watches `val_accuracy`, but the `fit` it is given to has no validation "
                   "data (no `validation_data`/`validation_split`): Keras 3 saves every epoch"),
            (9, 9, "`ReduceLROnPlateau` watches `val_mae`")],
        note="the default monitor (val_loss), positional monitor and save_best_only, a list name appended to "
             "and extended; validation_freq alone does not validate; one finding per callback",
    ),
    flagged(
        """
        import tf_keras

        def fit_model(model, data, callbacks):
            return model.fit(data, epochs=10, callbacks=callbacks)

        net = tf_keras.Sequential([tf_keras.layers.Dense(1)])
        early = tf_keras.callbacks.EarlyStopping(monitor="val_loss", restore_best_weights=True)
        fit_model(net, ds, [early] + [tf_keras.callbacks.TensorBoard()])
        net.fit_generator(gen, 100, 5, 1, (early,), None)
        """,
        at=[(7, 9, "`EarlyStopping` watches `val_loss`")],
        note="through a parameter and a concatenation; tf_keras's fit_generator with a positional "
             "validation_data of None",
    ),
    clean(
        """
        import keras

        model = keras.Sequential([keras.layers.Dense(1)])
        es = keras.callbacks.EarlyStopping()
        shared = keras.callbacks.ReduceLROnPlateau()
        loss_only = keras.callbacks.ReduceLROnPlateau(monitor="loss")
        every = keras.callbacks.ModelCheckpoint("m.keras")
        not_best = keras.callbacks.ModelCheckpoint("m.keras", monitor="val_loss", save_best_only=False)
        metric = keras.callbacks.EarlyStopping(monitor=chosen_metric)
        model.fit(x, y, validation_split=0.2, callbacks=[es])
        model.fit(x, y, validation_data=(xv, yv), callbacks=[shared])
        model.fit(x, y, callbacks=[shared, loss_only, every, not_best, metric])
        model.fit(x, y, validation_data=val, callbacks=[keras.callbacks.EarlyStopping()])
        model.fit(x, y, **options, callbacks=[keras.callbacks.EarlyStopping()])
        model.fit(*args, callbacks=[keras.callbacks.EarlyStopping()])
        """,
        note="fits that validate; one callback also given to a fit that validates; a training figure; a "
             "checkpoint that saves every epoch; an unreadable monitor; **kwargs/*args that may validate",
    ),
    clean(
        """
        import keras

        class Trainer:
            def fit(self, x, callbacks=()):
                pass

        trainer = Trainer()
        trainer.fit(x, callbacks=[keras.callbacks.EarlyStopping()])
        path_table = {"a": 1}
        path_table.fit(x, callbacks=[keras.callbacks.EarlyStopping()])
        """,
        note="fit of a receiver the engine types as not a Keras model (a dict); the Trainer's own fit is "
             "checked below",
    ),
]
