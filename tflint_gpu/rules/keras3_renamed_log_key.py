from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

_OLD = "lr"
_NEW = "learning_rate"


def _key(node: cst.BaseExpression) -> Optional[cst.SimpleString]:
    """The string literal ``node`` is when it spells "lr"."""
    if isinstance(node, cst.SimpleString) and node.evaluated_value == _OLD:
        return node
    return None


def _renamed(literal: cst.SimpleString) -> cst.SimpleString:
    return literal.with_changes(value=f"{literal.prefix}{literal.quote}{_NEW}{literal.quote}")


class Keras3RenamedLogKey(Rule):
    """`history.history["lr"]` or `logs["lr"]`: Keras 3 logs the learning rate as `learning_rate`.

    ## What it does
    Finds, in Keras 3 code (`keras`, or `tf.keras` under TensorFlow 2.16+),
    the key `"lr"` read (`d["lr"]`, `d.get("lr")`, `d.get("lr", default)`)
    from:

    * the `history` dict of a Keras 3 `History`: the result of
      `model.fit(...)` (`fit_generator`), `model.history`, a
      `keras.callbacks.History()`, followed through names and parameters
      (`h = history.history`, `plot(history)` called with it);
    * the `logs` of `on_epoch_end(self, epoch, logs)` in a subclass of a
      Keras 3 callback.

    Not reported: a module that stores an `"lr"` key itself (`logs["lr"] =
    ...`, `logs.update(lr=...)`: its own figure, which Keras 3 keeps), tf_keras
    code, other mappings (`config["lr"]`, a parameter nothing in the module
    passes a History to), batch-level hooks (whose logs never held the rate).

    ## Why is this bad?
    Measured under TensorFlow 2.21: `ReduceLROnPlateau` and
    `LearningRateScheduler` add the optimizer's rate to the epoch logs, and so
    to `History.history`, as `"lr"` under tf_keras 2.21 and as
    `"learning_rate"` under Keras 3.15 (same values: 0.05, 0.025 for a
    scheduler halving 0.1). Reading `"lr"` raises `KeyError: 'lr'` after a
    Keras 3 `fit` (a plot of the rate at the end of training, a callback
    after the rate callback); `.get("lr")` gives `None` without a word.

    ## Example
    ```python
    history = model.fit(x, y, epochs=10, callbacks=[keras.callbacks.ReduceLROnPlateau()])
    plt.plot(history.history["lr"])
    ```

    Use instead:
    ```python
    history = model.fit(x, y, epochs=10, callbacks=[keras.callbacks.ReduceLROnPlateau()])
    plt.plot(history.history["learning_rate"])
    ```

    ## Fix safety
    Unsafe: the fix renames the key, and the values it reads are those
    tf_keras logged under `"lr"` (measured for both callbacks), but tf_keras
    logged NumPy float32 scalars and Keras 3 logs Python floats
    (`np.array(history.history[...])` is float32 before, float64 after: the
    same numbers); and a callback of another module that logs its own `"lr"`
    (which Keras 3 keeps) would no longer be read.

    ## Measured effect
    TensorFlow 2.21, tf_keras 2.21 / Keras 3.15, CPU, a one-layer model fit
    2 epochs with each callback: history keys `['loss', 'lr']` under tf_keras,
    `['learning_rate', 'loss']` under Keras 3, equal values; a callback after
    `LearningRateScheduler` in the list sees `learning_rate` in its epoch
    logs (one before it sees neither key, in both flavours). The fix cases
    run the original under tf_keras and the fix under Keras 3: identical
    rates. examples/TFG923 (`tflint-gpu verify --rule TFG923`): fixes-error.
    """

    code = "TFG923"
    name = "keras3-renamed-log-key"
    message = "Keras 3 logs the learning rate as `learning_rate`, not `lr`"
    needs = (("lr",), ("history", "on_epoch_end"))
    fix_safety = Safety.UNSAFE
    migration = True

    def visit_Subscript(self, node: cst.Subscript, ctx) -> None:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return
        literal = _key(node.slice[0].slice.value)
        if literal is None:
            return
        parent = next(iter(ctx.scope.ancestors(node)), None)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del)) \
                and getattr(parent, "target", None) is node:
            return
        self._check(node.value, literal, node, "KeyError: 'lr'", ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "get") or not node.args \
                or node.args[0].keyword is not None or node.args[0].star:
            return
        literal = _key(node.args[0].value)
        if literal is not None:
            self._check(func.value, literal, node, "`get` gives None (or the default) without a word", ctx)

    def _check(self, mapping: cst.BaseExpression, literal: cst.SimpleString, node: cst.CSTNode, error: str,
               ctx) -> None:
        figures = ctx.logged_figures
        if _OLD in figures.written_keys():
            return
        if figures.history_fits(mapping, ctx.scope) is not None:
            what = "a History's `history`"
        elif figures.epoch_logs(mapping, ctx.scope):
            what = "a callback's epoch `logs`"
        else:
            return
        if ctx.migration.guarded(node, ctx.scope):
            return
        fix = Fix("Read `learning_rate`", Safety.UNSAFE, {literal: _renamed(literal)})
        ctx.report(node, f"Keras 3's ReduceLROnPlateau and LearningRateScheduler log the rate as `learning_rate`: "
                         f"\"lr\" is not in {what} ({error})", fix)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def train():
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.compile(tf.keras.optimizers.SGD(0.1), "mse")
                halve = tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
                history = model.fit(np.ones((8, 2), "float32"), np.zeros((8, 1), "float32"), epochs=3, verbose=0,
                                    callbacks=[halve])
                figures = history.history
                rates = np.array(history.history["lr"], "float32")
                return rates, np.array(figures.get("lr"), "float32")
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            def train():
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.compile(tf.keras.optimizers.SGD(0.1), "mse")
                halve = tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
                history = model.fit(np.ones((8, 2), "float32"), np.zeros((8, 1), "float32"), epochs=3, verbose=0,
                                    callbacks=[halve])
                figures = history.history
                rates = np.array(history.history["learning_rate"], "float32")
                return rates, np.array(figures.get("learning_rate"), "float32")
            """,
            at=[(11, 22, "Keras 3's ReduceLROnPlateau and LearningRateScheduler log the rate as `learning_rate`: "
                         "\"lr\" is not in a History's `history` (KeyError: 'lr')"),
                (12, 28, "Keras 3's ReduceLROnPlateau and LearningRateScheduler log the rate as `learning_rate`: "
                         "\"lr\" is not in a History's `history` (`get` gives None")],
            run="rates, got = train()",
            effect=FIXES_ERROR,
            keras2_before=True,
            note="a LearningRateScheduler's rates, read directly and through a name: the same values (tf_keras "
                 "logged float32 scalars, Keras 3 Python floats: read as float32 here)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def plateau():
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.compile(tf.keras.optimizers.SGD(0.1), "mse")
                hist = model.fit(np.ones((8, 2), "float32"), np.zeros((8, 1), "float32"), epochs=2, verbose=0,
                                 callbacks=[tf.keras.callbacks.ReduceLROnPlateau(monitor="loss", patience=1)])
                return np.array(hist.history["lr"], "float32")
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            def plateau():
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.compile(tf.keras.optimizers.SGD(0.1), "mse")
                hist = model.fit(np.ones((8, 2), "float32"), np.zeros((8, 1), "float32"), epochs=2, verbose=0,
                                 callbacks=[tf.keras.callbacks.ReduceLROnPlateau(monitor="loss", patience=1)])
                return np.array(hist.history["learning_rate"], "float32")
            """,
            at=[(9, 21, "Keras 3's ReduceLROnPlateau and LearningRateScheduler log the rate as `learning_rate`: "
                        "\"lr\" is not in a History's `history` (KeyError: 'lr')")],
            run="rates = plateau()",
            effect=FIXES_ERROR,
            keras2_before=True,
            note="ReduceLROnPlateau: the same values read as float32 (run: the original under tf_keras, the fix "
                 "under Keras 3)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            class RateLog(tf.keras.callbacks.Callback):
                def __init__(self):
                    super().__init__()
                    self.rates = []

                def on_epoch_end(self, epoch, logs=None):
                    self.rates.append(float(logs["lr"]))

            def train():
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.compile(tf.keras.optimizers.SGD(0.1), "mse")
                log = RateLog()
                schedule = tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
                model.fit(np.ones((8, 2), "float32"), np.zeros((8, 1), "float32"), epochs=3, verbose=0,
                          callbacks=[schedule, log])
                return np.array(log.rates)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            class RateLog(tf.keras.callbacks.Callback):
                def __init__(self):
                    super().__init__()
                    self.rates = []

                def on_epoch_end(self, epoch, logs=None):
                    self.rates.append(float(logs["learning_rate"]))

            def train():
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.compile(tf.keras.optimizers.SGD(0.1), "mse")
                log = RateLog()
                schedule = tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
                model.fit(np.ones((8, 2), "float32"), np.zeros((8, 1), "float32"), epochs=3, verbose=0,
                          callbacks=[schedule, log])
                return np.array(log.rates)
            """,
            at=[(10, 33, "Keras 3's ReduceLROnPlateau and LearningRateScheduler log the rate as `learning_rate`: "
                         "\"lr\" is not in a callback's epoch `logs`")],
            run="rates = train()",
            effect=FIXES_ERROR,
            keras2_before=True,
            note="a callback after the scheduler reads the rate from its epoch logs (unsafe: the fit is not "
                 "the callback's to see)",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf
            import tf_keras

            config = {"lr": 0.1}
            rate = config["lr"]

            class Own(tf.keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    logs["lr"] = float(self.model.optimizer.learning_rate)

                def on_train_batch_end(self, batch, logs=None):
                    print(logs.get("lr"))

            def train(model, old):
                history = model.fit(np.ones((8, 2)), np.ones((8, 1)), callbacks=[Own()])
                kept = old.fit(np.ones((8, 2)), np.ones((8, 1)))
                return history.history["lr"], kept.history["lr"]
            """,
            note="a module logging its own 'lr' (Keras 3 keeps it); a config dict",
        ),
        clean(
            """
            import tf_keras
            import numpy as np

            model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
            history = model.fit(np.ones((8, 2)), np.ones((8, 1)))
            rates = history.history["lr"]

            class Log(tf_keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    print(logs["lr"])

            def table(results):
                return results.history["lr"]
            """,
            note="tf_keras code (Keras 2 logs 'lr'); a parameter nothing in the module passes a History to",
        ),
    ]
