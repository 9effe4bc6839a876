from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from tflint_gpu.semantic.lr_schedule import argument
from tflint_gpu.semantic.migration import KERAS3, TF_KERAS
from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.semantic.target import NEW_OPTIMIZERS_TF
from tflint_gpu.rules.base import BY_TARGET, FIXES_ERROR, Rule, clean, flagged

_RATE = frozenset({"learning_rate", "lr"})
_ASSIGN = frozenset({"assign", "assign_add", "assign_sub"})
_SET_VALUE = frozenset({"keras.backend.set_value"})


class LrSetOnSchedule(Rule):
    """Setting the learning rate of an optimizer built on a `LearningRateSchedule`: an error in Keras 3, ignored in tf_keras.

    ## What it does
    Finds the learning rate of an optimizer made with a schedule
    (`Adam(keras.optimizers.schedules.ExponentialDecay(...))`, a subclass of
    `LearningRateSchedule` in the module) being set:

    * `optimizer.learning_rate = value` (`+=` too; `optimizer.lr = value`
      under tf_keras), in Keras 3 and in tf_keras from TF 2.11;
    * `optimizer.learning_rate.assign(value)` and
      `tf.keras.backend.set_value(optimizer.learning_rate, value)` (`lr`
      too under tf_keras), and a `ReduceLROnPlateau` or
      `LearningRateScheduler` callback given to `fit` of a model compiled
      with such an optimizer (reported at the callback): an error under
      Keras 3, silently ignored under tf_keras from TF 2.11.

    The optimizer is followed through names, `self.x` attributes, parameters
    and the module's defs, and a model's `optimizer` to every
    `compile(optimizer=...)` of that model; every way the optimizer may be
    made must be on a schedule. Not reported: a float learning rate, a
    schedule optimizer whose rate is only read, a callback of a model whose
    optimizer has a float rate, a value set that may be a new schedule or
    a callable (a lambda, a def, a parameter the module does not show: the
    setter takes those), `optimizers.legacy.X` (whose rate may be
    replaced), and tf_keras projects targeting TF 2.10 or older.

    ## Why is this bad?
    Measured under TensorFlow 2.21, Keras 3.15 and tf_keras 2.21, with
    `Adam(ExponentialDecay(1e-3, 100, 0.9))`:
    * `opt.learning_rate = 1e-5`: `TypeError: This optimizer was created with
      a LearningRateSchedule object as its learning_rate constructor argument,
      hence its learning rate is not settable` (Keras 3 and tf_keras; tf_keras
      for `opt.lr = 1e-5` too);
    * Keras 3: `opt.learning_rate` is the tensor the schedule computes, so
      `.assign(...)` and `set_value(...)` raise `AttributeError: 'EagerTensor'
      object has no attribute 'assign'`;
    * Keras 3: `ReduceLROnPlateau` raises the TypeError above at its first
      reduction, `LearningRateScheduler` at the first epoch.
    * tf_keras 2.21 runs `assign`, `set_value` and both callbacks without a
      word, and the schedule overwrites the value at the next step: a
      one-weight model trained by `SGD(ExponentialDecay(1.0, 1000, 0.999))`
      for 3 epochs ends at the same weight (1.999994) with no change, after
      `learning_rate.assign(1e-6)`, after `set_value(opt.lr, 1e-6)`, with
      `ReduceLROnPlateau(factor=1e-6, patience=0)` and with
      `LearningRateScheduler(lambda epoch, lr: 1e-6)`; the `lr` the callbacks
      log is the schedule's (1.0, 0.999999, 0.999998). The rate the code
      asks for is silently not the rate used.

    ## Example
    ```python
    opt = keras.optimizers.Adam(keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9))
    model.compile(optimizer=opt, loss="mse")
    model.fit(x, y, epochs=10, callbacks=[keras.callbacks.ReduceLROnPlateau()])
    ```

    Use instead (one of the two controls the learning rate):
    ```python
    opt = keras.optimizers.Adam(1e-3)
    model.compile(optimizer=opt, loss="mse")
    model.fit(x, y, epochs=10, callbacks=[keras.callbacks.ReduceLROnPlateau()])
    ```

    ## Fix safety
    No fix: whether the schedule or the code that sets the rate should
    decide is the author's choice.

    ## Measured effect
    TF 2.21 CPU: the errors above. examples/TFG610 (`tflint-gpu verify --rule
    TFG610`): fixes-error, `TypeError` at the first reduction of
    `ReduceLROnPlateau` before; after, a float rate, the same fit runs.
    """

    code = "TFG610"
    name = "lr-set-on-schedule"
    message = "This optimizer's learning rate is a schedule: setting it raises TypeError"
    needs = (("learning_rate", "lr", "ReduceLROnPlateau", "LearningRateScheduler"),)
    migration = BY_TARGET

    def __init__(self) -> None:
        super().__init__()
        self._reported: Set[int] = set()

    def visit_Module(self, node: cst.Module, ctx) -> None:
        self._reported = set()

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        if ctx.learning_rates.may_be_schedule(node.value, ctx.scope):
            return  # the setter takes a new schedule or callable
        for target in node.targets:
            self._set(target.target, ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        self._set(node.target, ctx)

    def _set(self, target: cst.BaseExpression, ctx) -> None:
        if not isinstance(target, cst.Attribute) or target.attr.value not in _RATE:
            return
        receiver = target.value
        flavour = self._flavour(receiver, ctx.scope, ctx)
        if flavour is None or (flavour == KERAS3 and target.attr.value == "lr"):
            return  # Keras 3 has no `lr`: setting it makes a new attribute
        if ctx.learning_rates.schedule(receiver, ctx.scope) is None or ctx.migration.expects_error(target, ctx.scope):
            return
        ctx.report(target, f"Setting `{target.attr.value}` of an optimizer built on a LearningRateSchedule raises "
                           f"TypeError (not settable)")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _ASSIGN:
            rate = func.value
            if isinstance(rate, cst.Attribute) and rate.attr.value in _RATE:
                self._rate_written(node, rate, ctx)
        elif isinstance(func, cst.Attribute) and func.attr.value == "fit":
            self._fit(node, ctx)
        elif ctx.qualname(func) in _SET_VALUE and node.args:
            rate = node.args[0].value
            if isinstance(rate, cst.Attribute) and rate.attr.value in _RATE:
                self._rate_written(node, rate, ctx)

    def _rate_written(self, node: cst.Call, rate: cst.Attribute, ctx) -> None:
        """``opt.learning_rate.assign(v)`` / ``set_value(opt.learning_rate, v)`` (``lr`` under tf_keras)."""
        optimizer = rate.value
        flavour = self._flavour(optimizer, ctx.scope, ctx)
        if flavour is None or (flavour == KERAS3 and rate.attr.value == "lr") \
                or ctx.learning_rates.schedule(optimizer, ctx.scope) is None \
                or ctx.migration.expects_error(node, ctx.scope):
            return
        if flavour == KERAS3:
            ctx.report(node, "Under Keras 3, `learning_rate` of an optimizer built on a LearningRateSchedule is the "
                             "schedule's output tensor: setting it raises AttributeError (no `assign`)")
        else:
            ctx.report(node, f"Under tf_keras, the LearningRateSchedule sets `{rate.attr.value}` again at every "
                             f"step: the value written here is silently ignored")

    def _fit(self, node: cst.Call, ctx) -> None:
        callbacks = argument(node, ("callbacks",), 99)
        if callbacks is None:
            return
        model = node.func.value
        if ctx.migration.object_flavour(model, ctx.scope) == KERAS3 and not ctx.migration.legacy_env:
            effect = "Keras 3 raises TypeError at its first change"
        elif ctx.target.at_least(NEW_OPTIMIZERS_TF):
            effect = "tf_keras silently ignores it (the schedule sets the rate again at every step)"
        else:
            return
        found = ctx.learning_rates.rate_callbacks(callbacks, ctx.scope)
        found = [(call, cls) for call, cls in found if id(call) not in self._reported]
        if not found or ctx.learning_rates.model_schedule(model, ctx.scope) is None:
            return
        for call, cls in found:
            self._reported.add(id(call))
            ctx.report(call, f"`{cls.rsplit('.', 1)[-1]}` sets the learning rate of an optimizer built on a "
                             f"LearningRateSchedule: {effect}")

    @staticmethod
    def _flavour(optimizer: cst.BaseExpression, scope: ScopeInfo, ctx) -> Optional[str]:
        """KERAS3 where the optimizer is Keras 3's, TF_KERAS where it is Keras 2's new optimizer (tf_keras,
        ``tf.keras`` of a Keras 2 target, from TF 2.11): where setting its rate over a schedule raises."""
        if not ctx.target.at_least(NEW_OPTIMIZERS_TF):
            return None
        if ctx.migration.object_flavour(optimizer, scope) == KERAS3 and not ctx.migration.legacy_env:
            return KERAS3
        return TF_KERAS  # the fact itself asks for a Keras optimizer class

LrSetOnSchedule.cases = [
    flagged(
        """
        import keras

        schedule = keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9)
        optimizer = keras.optimizers.Adam(learning_rate=schedule)
        optimizer.learning_rate = 1e-5
        """,
        at=[(5, 1, "Setting `learning_rate` of an optimizer built on a LearningRateSchedule raises TypeError")],
        note="the issue's case: the schedule through a name",
    ),
    flagged(
        """
        import tensorflow as tf

        class Warmup(tf.keras.optimizers.schedules.LearningRateSchedule):
            def __call__(self, step):
                return 1e-3

        class Trainer:
            def __init__(self):
                self.optimizer = tf.keras.optimizers.SGD(Warmup())

            def set_lr(self, epoch):
                lr = 1e-3 * 0.9 ** epoch
                self.optimizer.learning_rate = lr
                self.optimizer.learning_rate.assign(lr)
                tf.keras.backend.set_value(self.optimizer.learning_rate, lr)
        """,
        at=[(13, 9, "Setting `learning_rate` of an optimizer built on a LearningRateSchedule raises TypeError"),
            (14, 9, "Under Keras 3, `learning_rate` of an optimizer built on a LearningRateSchedule is the "
                    "schedule's output tensor: setting it raises AttributeError"),
            (15, 9, "Under Keras 3, `learning_rate`")],
        note="a schedule subclass of the module; self.optimizer; assign and set_value (Keras 3)",
    ),
    flagged(
        """
        import keras

        def build():
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
            opt = keras.optimizers.Adam(keras.optimizers.schedules.CosineDecay(1e-3, 1000))
            model.compile(optimizer=opt, loss="mse")
            return model

        def train(x, y):
            model = build()
            plateau = keras.callbacks.ReduceLROnPlateau(monitor="loss", patience=0)
            model.fit(x, y, epochs=10, callbacks=[plateau, keras.callbacks.EarlyStopping()])
            model.fit(x, y, epochs=1, callbacks=[plateau])
            model.optimizer.learning_rate = 1e-4
        """,
        at=[(11, 15, "`ReduceLROnPlateau` sets the learning rate of an optimizer built on a LearningRateSchedule: "
                     "Keras 3 raises TypeError at its first change"),
            (14, 5, "Setting `learning_rate` of an optimizer built on a LearningRateSchedule raises TypeError")],
        note="a model compiled with a schedule optimizer in a def; the callback through a name, reported once; "
             "model.optimizer",
    ),
    flagged(
        """
        import tf_keras

        opt = tf_keras.optimizers.Adam(tf_keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9))
        opt.lr = 1e-5
        opt.learning_rate.assign(1e-5)
        tf_keras.backend.set_value(opt.lr, 1e-5)

        model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
        model.compile(optimizer=opt, loss="mse")
        model.fit(x, y, callbacks=[tf_keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.9)])
        """,
        at=[(4, 1, "Setting `lr` of an optimizer built on a LearningRateSchedule raises TypeError"),
            (5, 1, "Under tf_keras, the LearningRateSchedule sets `learning_rate` again at every step: the value "
                   "written here is silently ignored"),
            (6, 1, "Under tf_keras, the LearningRateSchedule sets `lr` again"),
            (10, 28, "`LearningRateScheduler` sets the learning rate of an optimizer built on a LearningRateSchedule: "
                     "tf_keras silently ignores it")],
        note="tf_keras 2.21: setting `lr` raises too; `assign`, `set_value` and the callbacks run there, and the "
             "schedule overwrites what they set",
    ),
    clean(
        """
        import sys
        import keras

        plain = keras.optimizers.Adam(1e-3)
        plain.learning_rate = 1e-5
        plain.learning_rate.assign(1e-5)

        scheduled = keras.optimizers.Adam(keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9))
        print(float(scheduled.learning_rate))
        scheduled.lr = 1e-5

        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
        model.fit(None, None, callbacks=[keras.callbacks.ReduceLROnPlateau(),
                                         keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr)])

        either = keras.optimizers.Adam(keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9)) \\
            if sys.argv[1:] else keras.optimizers.Adam(1e-3)
        either.learning_rate = 1e-5
        """,
        note="a float rate set on a plain optimizer; a schedule optimizer whose rate is only read (and Keras 3's "
             "`lr`, a new attribute); callbacks of a model whose optimizer has a float rate; an optimizer that may "
             "be made with a float rate",
    ),
    clean(
        """
        import tensorflow as tf

        def make(opt):
            opt.learning_rate = 1e-5
            return opt

        legacy = tf.keras.optimizers.legacy.Adam(tf.keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9))
        legacy.learning_rate = 1e-5
        """,
        note="an optimizer nothing in the module makes; a legacy optimizer (its rate may be replaced)",
    ),
    clean(
        """
        import keras

        opt = keras.optimizers.Adam(keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9))
        opt.learning_rate = keras.optimizers.schedules.CosineDecay(1e-4, 1000)
        opt.learning_rate = lambda: 1e-4

        def set_rate(value):
            opt.learning_rate = value
        """,
        note="the setter takes a new schedule or a callable (Keras 3.15, tf_keras 2.21 source); a value the module "
             "does not show",
    ),
]
