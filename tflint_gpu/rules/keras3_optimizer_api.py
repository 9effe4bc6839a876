from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic import values
from tflint_gpu.semantic.migration import KERAS3, TF_KERAS, is_model_class
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

_LOSS_SCALE = "keras.mixed_precision.LossScaleOptimizer"
_SCALING = frozenset({"get_scaled_loss", "get_unscaled_gradients"})
_SET_VALUE = "keras.backend.set_value"
_GET_VALUE = "keras.backend.get_value"
_RATES = frozenset({"lr", "learning_rate"})
# What Keras 3.15's `keras.optimizers.legacy` holds: stubs whose __init__ raises ImportError.
_LEGACY_STUBS = frozenset({"Adagrad", "Adam", "Ftrl", "Optimizer", "RMSprop", "SGD"})


def _is_optimizer_class(qualname: Optional[str]) -> bool:
    if qualname is None:
        return False
    parts = qualname.split(".")
    return qualname == _LOSS_SCALE or (len(parts) == 3 and parts[:2] == ["keras", "optimizers"]
                                       and parts[2][:1].isupper() and parts[2] != "schedules")


class Keras3OptimizerApi(Rule):
    """A Keras 2 optimizer API that changed in Keras 3: `optimizer.lr`, `_decayed_lr()`, `variables()`, `get_scaled_loss()`.

    ## What it does
    Finds, in Keras 3 code (`keras`, or `tf.keras` under TensorFlow 2.16+):

    * `optimizer.variables()` called, on a Keras optimizer (made by
      `keras.optimizers.X(...)` or `LossScaleOptimizer(...)`, through names
      and `self.x` bound once) or a Keras 3 model's `optimizer`
      (`model.optimizer`, `self.optimizer` in a `keras.Model` subclass);
    * `self.optimizer.get_scaled_loss(loss)` and
      `get_unscaled_gradients(grads)` on a Keras 3 model's `optimizer` (the
      custom `train_step` of Keras 2's mixed precision guide), where the
      optimizer's class cannot be read: on a `LossScaleOptimizer(...)` object
      TFG902 reports them from the migration table;
    * `optimizer.lr` read (`K.get_value(model.optimizer.lr)`) or set
      (`opt.lr = 0.01`), on a Keras 3 optimizer: made by a Keras 3 optimizer
      class (also picked from a dict or list display of them,
      `{"adam": Adam(...), "sgd": SGD(...)}[kind]`), a Keras 3 model's
      `optimizer`, a callback's `self.model.optimizer`;
    * `backend.set_value(optimizer.lr, value)` and
      `backend.set_value(optimizer.learning_rate, value)` (`tf.keras.backend`,
      `K` imported from it), where the optimizer is one of those or an object
      the module does not show the maker of (a parameter);
    * `optimizer._decayed_lr(dtype)`, Keras 2's private "current learning
      rate", on such an optimizer or an object the module does not show the
      maker of (in Keras 3 code, or a TensorFlow file naming no Keras under a
      Keras 3 target), unless the module's own classes define `_decayed_lr`;
    * a class deriving from `tf.keras.optimizers.legacy.X`.

    Not reported: tf_keras code; models (`model.variables` is a list in
    Keras 2 too); a `tf.Module`; branches that never run under Keras 3 and
    code a test expects to raise.

    ## Why is this bad?
    Measured under TensorFlow 2.21 with Keras 3.15:
    * `opt.variables()`: `TypeError: 'list' object is not callable`
      (`variables` is a list property; tf_keras 2.21's is a `CallableList`,
      so both spellings ran there);
    * `self.optimizer.get_scaled_loss(loss)` in a `train_step` under the
      `mixed_float16` policy (where `compile` makes the optimizer a
      `LossScaleOptimizer`): `AttributeError: 'LossScaleOptimizer' object has
      no attribute 'get_scaled_loss'` at the first `fit` step; the same step
      trains under tf_keras 2.21. Keras 3 spells it `scale_loss(loss)` (on
      every optimizer: a plain one returns the loss), and its
      `LossScaleOptimizer.apply_gradients` unscales the gradients itself
      (measured: a gradient of 1 scaled by 32768 moves a variable by
      exactly -1 with SGD(1.0)), so `get_unscaled_gradients` has no
      counterpart: pass the scaled gradients to `apply_gradients`.
    * `opt.lr`: `AttributeError: 'Adam' object has no attribute 'lr'`;
      `opt.lr = 0.3` raises nothing and makes a plain attribute: the learning
      rate stays what it was (measured: 1.0 before and after). tf_keras 2.21
      (both its optimizers and `optimizers.legacy`) reads and sets the same
      variable through `lr` and `learning_rate`.
    * `tf.keras.backend.set_value(opt.learning_rate, 0.25)`: `AttributeError:
      'str' object has no attribute 'name'` (the Keras 2 backend kept in
      `tf.keras.backend` reads `x.dtype.name`; a Keras 3 variable's dtype is a
      string); `tf.keras.backend.get_value(opt.learning_rate)` works (a NumPy
      float32). `keras.backend` of Keras 3 has neither (TFG903).
    * `opt._decayed_lr(tf.float32)`: `AttributeError: 'Adam' object has no
      attribute '_decayed_lr'` (tf_keras 2.21's non-legacy optimizers lack it
      too; it is the legacy `OptimizerV2`'s).
    * `class C(tf.keras.optimizers.legacy.Optimizer)`: the class is made (a
      stub), `C()` raises `ImportError: keras.optimizers.legacy is not
      supported in Keras 3`; a legacy name Keras 3 does not keep
      (`legacy.Nadam`) raises AttributeError when the class is made.

    ## Example
    ```python
    with tf.GradientTape() as tape:
        loss = self.compute_loss(x, y, self(x, training=True))
        scaled = self.optimizer.get_scaled_loss(loss)
    grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, self.trainable_variables))
    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
    slots = len(self.optimizer.variables())
    ```

    Use instead:
    ```python
    with tf.GradientTape() as tape:
        loss = self.compute_loss(x, y, self(x, training=True))
        scaled = self.optimizer.scale_loss(loss)
    grads = tape.gradient(scaled, self.trainable_variables)
    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
    slots = len(self.optimizer.variables)
    ```

    ## Fix safety
    Safe: `opt.lr` → `opt.learning_rate` (read, set, augmented: the same
    variable in tf_keras, the property whose setter assigns it in Keras 3);
    `K.set_value(opt.lr, v)` (or `opt.learning_rate`) →
    `opt.learning_rate.assign(v)` when the call is a statement (it also runs
    under tf_keras 2.21, new and legacy optimizers; the value is converted to
    the variable's float32 as `set_value` did); `opt._decayed_lr(dtype)` →
    `tf.cast(opt.learning_rate, dtype)`: Keras 3's `learning_rate` property
    evaluates a schedule at the optimizer's current iteration as
    `_decayed_lr` did (measured step by step over 5 steps for
    `ExponentialDecay`, `PiecewiseConstantDecay` and a float, SGD and Adam,
    eager and in a `tf.function`: identical float32 values). Not the same
    where Keras 2's optimizer was built with `decay=`: `_decayed_lr` applied
    it, Keras 3 ignores `decay` (TFG901), so the fixed code shows the rate
    Keras 3 really uses. No fix when the optimizer is built on a schedule
    and its rate is set (TFG610), nor for legacy subclasses.
    `variables()` → `variables` (the same list; it also runs under
    tf_keras) and `get_scaled_loss(loss)` → `scale_loss(loss)` (the same
    product, and the loss unchanged for an optimizer without loss scaling):
    the tests run the original, which raises, and the fixed code. No fix for
    `get_unscaled_gradients`: dropping it is right only when the gradients
    go to the same `LossScaleOptimizer`'s `apply_gradients`.
    Executed under tf_keras too (the fix-execution test's Keras 2 run):
    `.variables` gives the same values there.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the errors above. tf_keras 2.21:
    `variables()` returns 3 variables after a step, and the mixed precision
    `train_step` runs two epochs. examples/TFG909 (`tflint-gpu verify --rule
    TFG909`): fixes-error, `AttributeError` before, the fixed `fit` runs after.
    The fix cases run the originals under tf_keras 2.21 and the fixed code
    under Keras 3.15 (a per-epoch rate set through `K.set_value`, a
    callback halving the rate, `_decayed_lr` of a legacy SGD on an
    `ExponentialDecay`): identical weights and rates.
    """

    code = "TFG909"
    name = "keras3-optimizer-api"
    message = "This optimizer API changed in Keras 3"
    needs = (("variables", "get_scaled_loss", "get_unscaled_gradients", "lr", "set_value", "legacy"),)
    fix_safety = Safety.SAFE
    migration = True

    def visit_ClassDef(self, node: cst.ClassDef, ctx) -> None:
        """A class deriving from `optimizers.legacy.X` in Keras 3 code."""
        if ctx.keras_internals:
            return
        for base in node.bases:
            qualname = ctx.qualname(base.value)
            if qualname is None or not qualname.startswith("keras.optimizers.legacy.") \
                    or ctx.migration.api_flavour(base.value, ctx.scope) != KERAS3 \
                    or ctx.migration.guarded(base, ctx.scope):
                continue
            short = qualname.rsplit(".", 1)[1]
            if short in _LEGACY_STUBS:
                ctx.report(base, f"Keras 3's `optimizers.legacy.{short}` is a stub: the class is made, but making an "
                                 f"instance raises ImportError (its `__init__`); derive from "
                                 f"`keras.optimizers.Optimizer` (its API differs: `build`, `update_step`) or stay "
                                 f"on Keras 2 (`tf_keras` with `TF_USE_LEGACY_KERAS=1`)")
            else:
                ctx.report(base, f"Keras 3 has no `optimizers.legacy.{short}` (AttributeError when the class is "
                                 f"made); derive from `keras.optimizers.Optimizer` (its API differs) or stay on "
                                 f"Keras 2 (`tf_keras` with `TF_USE_LEGACY_KERAS=1`)")

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        """`optimizer.lr` read or set on a Keras 3 optimizer."""
        if node.attr.value != "lr":
            return
        receiver = node.value
        parent = next(iter(ctx.scope.ancestors(node)), None)
        backend = self._backend_argument(node, parent, ctx)
        if backend == _SET_VALUE:
            return  # the whole call is reported (`_set_value`)
        in_backend = backend is not None
        if not (self._rate_owner(receiver, ctx) or (in_backend and self._unknown_optimizer(receiver, "lr", ctx))):
            return
        if ctx.migration.guarded(node, ctx.scope) or self._checked(node, receiver, ctx):
            return
        fix = Fix("Use `learning_rate`", Safety.SAFE, {node.attr: cst.Name("learning_rate")})
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) and parent.target is node:
            ctx.report(node.attr, "Setting `lr` on a Keras 3 optimizer makes a new attribute and leaves the "
                                  "learning rate unchanged (no error): set `learning_rate`", fix)
        else:
            ctx.report(node.attr, "Keras 3 optimizers have no `lr` (AttributeError): use `learning_rate` (the "
                                  "same variable, also under Keras 2)", fix)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method == "_decayed_lr":
            self._decayed_lr(node, func, ctx)
            return
        if method == "set_value":
            self._set_value(node, ctx)
            return
        if method == "variables" and not node.args:
            if self._optimizer(func.value, ctx, known_class=True) and not ctx.migration.guarded(node, ctx.scope):
                ctx.report(node, "Keras 3 optimizers' `variables` is a list, not a method (TypeError: 'list' "
                                 "object is not callable): drop the `()`",
                           Fix("Read `variables` without calling it", Safety.SAFE, {node: func}))
        elif method in _SCALING:
            if not self._optimizer(func.value, ctx, known_class=False) or ctx.migration.guarded(node, ctx.scope):
                return
            if method == "get_scaled_loss":
                fix = None
                if len(node.args) == 1 and not node.args[0].star and node.args[0].keyword is None:
                    fix = Fix("Call `scale_loss()`", Safety.SAFE, {func.attr: cst.Name("scale_loss")})
                ctx.report(func.attr, "Keras 3 optimizers have no `get_scaled_loss()` (AttributeError): use "
                                      "`scale_loss(loss)`", fix)
            else:
                ctx.report(func.attr, "Keras 3 optimizers have no `get_unscaled_gradients()` (AttributeError): "
                                      "a LossScaleOptimizer's `apply_gradients` unscales the gradients itself")

    def _decayed_lr(self, node: cst.Call, func: cst.Attribute, ctx) -> None:
        receiver = func.value
        if ctx.graphs.objects.defined("_decayed_lr"):
            return  # the module's own optimizer class defines it
        if not (self._rate_owner(receiver, ctx) or self._unknown_optimizer(receiver, "_decayed_lr", ctx)) \
                or ctx.migration.guarded(node, ctx.scope):
            return
        fix = None
        args = node.args
        if len(args) == 1 and not args[0].star and (args[0].keyword is None or args[0].keyword.value == "var_dtype"):
            spelled = ctx.module_expr("tensorflow", "cast")
            if spelled is not None:
                cast, imports = spelled
                rate = cst.Attribute(value=receiver, attr=cst.Name("learning_rate"))
                fix = Fix("Cast `learning_rate` to the dtype", Safety.SAFE,
                          {node: cst.Call(func=cast, args=[cst.Arg(rate, comma=cst.Comma(
                              whitespace_after=cst.SimpleWhitespace(" "))), args[0].with_changes(
                              keyword=None, equal=cst.MaybeSentinel.DEFAULT, comma=cst.MaybeSentinel.DEFAULT)])},
                          imports)
        ctx.report(func.attr, "Keras 3 optimizers have no `_decayed_lr()` (AttributeError): the current learning "
                              "rate is `learning_rate` (a schedule's value at the current step)", fix)

    def _set_value(self, node: cst.Call, ctx) -> None:
        """`backend.set_value(optimizer.lr | optimizer.learning_rate, value)` in Keras 3 code."""
        if ctx.call_name(node) != _SET_VALUE or ctx.migration.api_flavour(node.func, ctx.scope) != KERAS3:
            return
        args = node.args
        if len(args) != 2 or any(a.star or a.keyword is not None for a in args):
            return
        rate = args[0].value
        if not isinstance(rate, cst.Attribute) or rate.attr.value not in _RATES:
            return
        receiver = rate.value
        member = rate.attr.value
        if not (self._rate_owner(receiver, ctx) or self._unknown_optimizer(receiver, member, ctx)):
            return
        if ctx.learning_rates.schedule(receiver, ctx.scope) is not None:
            return  # built on a schedule: its rate cannot be set at all (TFG610)
        if ctx.migration.guarded(node, ctx.scope) or self._checked(node, receiver, ctx):
            return
        parent = next(iter(ctx.scope.ancestors(node)), None)
        fix = None
        if isinstance(parent, cst.Expr):
            assign = cst.Call(func=cst.Attribute(value=cst.Attribute(value=receiver, attr=cst.Name("learning_rate")),
                                                 attr=cst.Name("assign")),
                              args=[args[1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
            fix = Fix("Assign the learning rate", Safety.SAFE, {node: assign})
        what = "Keras 3 optimizers have no `lr` (AttributeError)" if member == "lr" else \
            "A Keras 3 optimizer's learning rate is a Keras variable, which `backend.set_value` fails on " \
            "(AttributeError: 'str' object has no attribute 'name')"
        ctx.report(node, f"{what}: assign it, `optimizer.learning_rate.assign(value)`", fix)

    @staticmethod
    def _backend_argument(node: cst.Attribute, parent, ctx) -> Optional[str]:
        """The backend function (`set_value`/`get_value`) ``node`` is the first argument of, or None."""
        if not isinstance(parent, cst.Arg) or parent.keyword is not None:
            return None
        call = next(iter(ctx.scope.ancestors(parent)), None)
        if not isinstance(call, cst.Call) or not call.args or call.args[0] is not parent:
            return None
        name = ctx.call_name(call)
        return name if name in (_SET_VALUE, _GET_VALUE) else None

    def _rate_owner(self, receiver: cst.BaseExpression, ctx) -> bool:
        """Is ``receiver`` a Keras 3 optimizer the module shows: made by a Keras 3 optimizer class (also
        picked from a display of them), a Keras 3 model's ``optimizer``, a callback's
        ``self.model.optimizer``?"""
        if _is_optimizer_class(ctx.keras3_class(receiver, "lr")):
            return True
        if self._optimizer(receiver, ctx, known_class=True):
            return True
        return ctx.learning_rates.keras3_optimizer(receiver, ctx.scope) and not ctx.migration.legacy_env

    @staticmethod
    def _unknown_optimizer(receiver: cst.BaseExpression, member: str, ctx) -> bool:
        """An object the module does not show the maker of (a parameter), in Keras 3 code, read where
        only an optimizer fits (``_decayed_lr()``, ``backend.set_value(x.lr, ...)``)."""
        return ctx.migration.object_flavour(receiver, ctx.scope) != TF_KERAS \
            and ctx.unknown_keras3_model(receiver, member, distinctive=True)

    @staticmethod
    def _checked(node: cst.CSTNode, receiver: cst.BaseExpression, ctx) -> bool:
        """In a branch of ``if hasattr(opt, "lr")`` (or of ``not hasattr(opt, "learning_rate")``)."""
        for obj, name, has in ctx.migration.hasattr_guards(node, ctx.scope):
            if obj.deep_equals(receiver) and ((name == "lr" and has) or (name == "learning_rate" and not has)):
                return True
        return False

    @staticmethod
    def _optimizer(receiver: cst.BaseExpression, ctx, known_class: bool) -> bool:
        """Is ``receiver`` a Keras 3 optimizer: a Keras 3 model's ``optimizer``
        (any receiver), or (``known_class``) one made by a Keras optimizer class?"""
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "optimizer":
            owner = receiver.value
            cls = ctx.graphs.objects.self_class(owner, ctx.scope)
            if cls is not None:
                if ctx.migration.class_base(cls) is None or ctx.graphs.keras_flavour(cls) != KERAS3 \
                        or ctx.migration.legacy_env:
                    return False
                attribute = ctx.values.attribute(receiver, ctx.scope)
                if attribute is None or attribute.bound:
                    # An optimizer of its own: its class decides.
                    return attribute is not None and _is_optimizer_class(
                        ctx.migration.object_class(receiver, ctx.scope))
                return True
            if ctx.value_kind(owner) != values.KERAS:
                return False
            made = ctx.migration.object_class(owner, ctx.scope)
            return (made is None or is_model_class(made) or made.startswith("keras.applications.")) \
                and ctx.migration.object_flavour(owner, ctx.scope) == KERAS3
        if not known_class:
            return False
        return _is_optimizer_class(ctx.migration.object_class(receiver, ctx.scope)) \
            and ctx.migration.object_flavour(receiver, ctx.scope) == KERAS3

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam(learning_rate=0.1)
            w = tf.Variable(1.0)
            opt.apply_gradients([(tf.constant(1.0), w)])
            count = len(opt.variables())
            names = [v.name for v in opt.variables()]
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam(learning_rate=0.1)
            w = tf.Variable(1.0)
            opt.apply_gradients([(tf.constant(1.0), w)])
            count = len(opt.variables)
            names = [v.name for v in opt.variables]
            """,
            at=[(7, 13, "Keras 3 optimizers' `variables` is a list, not a method (TypeError"),
                (8, 26, "Keras 3 optimizers' `variables` is a list")],
            run="n = np.array(count)",
            effect=FIXES_ERROR,
            keras2=True,
        ),
        flagged(
            """
            import numpy as np
            import keras
            import tensorflow as tf

            class Model(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        pred = self(x, training=True)
                        loss = tf.reduce_mean(tf.square(tf.cast(pred, "float32") - y))
                        scaled = self.optimizer.get_scaled_loss(loss)
                    grads = tape.gradient(scaled, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss, "slots": len(self.optimizer.variables())}

            def train():
                inputs = keras.Input((3,))
                model = Model(inputs, keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
                model.compile(keras.optimizers.SGD(0.01))
                history = model.fit(np.ones((8, 3), "float32"), np.ones((8, 1), "float32"), epochs=2, verbose=0)
                return np.array(history.history["loss"])
            """,
            fixed="""
            import numpy as np
            import keras
            import tensorflow as tf

            class Model(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        pred = self(x, training=True)
                        loss = tf.reduce_mean(tf.square(tf.cast(pred, "float32") - y))
                        scaled = self.optimizer.scale_loss(loss)
                    grads = tape.gradient(scaled, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss, "slots": len(self.optimizer.variables)}

            def train():
                inputs = keras.Input((3,))
                model = Model(inputs, keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
                model.compile(keras.optimizers.SGD(0.01))
                history = model.fit(np.ones((8, 3), "float32"), np.ones((8, 1), "float32"), epochs=2, verbose=0)
                return np.array(history.history["loss"])
            """,
            at=[(11, 37, "Keras 3 optimizers have no `get_scaled_loss()` (AttributeError): use `scale_loss(loss)`"),
                (14, 44, "Keras 3 optimizers' `variables` is a list")],
            run="losses = train()",
            effect=FIXES_ERROR,
            note="self.optimizer of a Keras 3 model subclass: scale_loss without mixed precision returns the loss",
        ),
        flagged(
            """
            import keras

            def step(model, tape, loss):
                ...

            class Trainer(keras.Model):
                def train_step(self, data):
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(data[0], data[1], self(data[0]))
                        scaled = self.optimizer.get_scaled_loss(loss, extra)
                    grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, self.trainable_variables))
                    return {}

            model = keras.Sequential([keras.layers.Dense(1)])
            state = model.optimizer.variables()
            """,
            fixed="""
            import keras

            def step(model, tape, loss):
                ...

            class Trainer(keras.Model):
                def train_step(self, data):
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(data[0], data[1], self(data[0]))
                        scaled = self.optimizer.get_scaled_loss(loss, extra)
                    grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, self.trainable_variables))
                    return {}

            model = keras.Sequential([keras.layers.Dense(1)])
            state = model.optimizer.variables
            """,
            at=[(10, 37, "Keras 3 optimizers have no `get_scaled_loss()`"),
                (11, 32, "Keras 3 optimizers have no `get_unscaled_gradients()` (AttributeError): a LossScaleOptimizer"),
                (15, 9, "Keras 3 optimizers' `variables` is a list")],
            note="no exact rewrite for get_unscaled_gradients or a call with other arguments; a model's optimizer",
        ),
        clean(
            """
            import keras
            import tf_keras
            import tensorflow as tf

            opt = keras.optimizers.Adam()
            slots = opt.variables
            model = keras.Sequential([keras.layers.Dense(1)])
            weights = model.variables
            old = tf_keras.optimizers.Adam()
            n = len(old.variables())
            module = tf.Module()
            params = module.variables

            class Agent:
                def __init__(self):
                    self.optimizer = Optimizer()

                def step(self):
                    return self.optimizer.variables(), self.optimizer.get_scaled_loss(1.0)

            class Legacy(tf_keras.Model):
                def train_step(self, data):
                    return self.optimizer.get_scaled_loss(data)
            """,
            note="Keras 3 code already migrated; tf_keras optimizers (CallableList) and models; a class of the file's "
                 "own that is no Keras model",
        ),
        clean(
            """
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam()
            if hasattr(opt, "get_scaled_loss"):
                scaled = opt.get_scaled_loss(loss)
            try:
                v = opt.variables
            except TypeError:
                v = opt.variables()
            """,
            note="guards: a hasattr branch never taken under Keras 3 (and not an optimizer model attribute), an "
                 "except fallback",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf
            from tensorflow.keras import backend as K
            from tensorflow.keras.optimizers import SGD, Adam

            def schedule(epoch):
                return 0.1 * 0.5 ** epoch

            def train(kind):
                optimizer = {"adam": Adam(learning_rate=0.1), "sgd": SGD(learning_rate=0.1)}[kind]
                w = tf.Variable([1.0, 2.0])
                rates = []
                for epoch in range(3):
                    K.set_value(optimizer.lr, schedule(epoch))
                    optimizer.apply_gradients([(tf.constant([1.0, -1.0]), w)])
                    rates.append(K.get_value(optimizer.lr))
                optimizer.lr = 0.01
                optimizer.apply_gradients([(tf.constant([1.0, -1.0]), w)])
                return w.numpy(), np.array(rates)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf
            from tensorflow.keras import backend as K
            from tensorflow.keras.optimizers import SGD, Adam

            def schedule(epoch):
                return 0.1 * 0.5 ** epoch

            def train(kind):
                optimizer = {"adam": Adam(learning_rate=0.1), "sgd": SGD(learning_rate=0.1)}[kind]
                w = tf.Variable([1.0, 2.0])
                rates = []
                for epoch in range(3):
                    optimizer.learning_rate.assign(schedule(epoch))
                    optimizer.apply_gradients([(tf.constant([1.0, -1.0]), w)])
                    rates.append(K.get_value(optimizer.learning_rate))
                optimizer.learning_rate = 0.01
                optimizer.apply_gradients([(tf.constant([1.0, -1.0]), w)])
                return w.numpy(), np.array(rates)
            """,
            at=[(14, 9, "Keras 3 optimizers have no `lr` (AttributeError): assign it, "
                        "`optimizer.learning_rate.assign(value)`"),
                (16, 44, "Keras 3 optimizers have no `lr` (AttributeError): use `learning_rate`"),
                (17, 15, "Setting `lr` on a Keras 3 optimizer makes a new attribute and leaves the learning rate "
                         "unchanged")],
            run="w, rates = train('sgd')",
            effect=FIXES_ERROR,
            keras2=True,
            keras2_before=True,
            note="bubbliiiing/unet-tf2 train.py:420 (an optimizer picked from a dict display of optimizers, its "
                 "rate set per epoch with backend.set_value); the fix runs under tf_keras too, same values",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def fit(optimizer, w, steps):
                rates = []
                for _ in range(steps):
                    optimizer.apply_gradients([(tf.constant([1.0, 1.0]), w)])
                    rates.append(optimizer._decayed_lr(tf.float32).numpy())
                return np.array(rates)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            def fit(optimizer, w, steps):
                rates = []
                for _ in range(steps):
                    optimizer.apply_gradients([(tf.constant([1.0, 1.0]), w)])
                    rates.append(tf.cast(optimizer.learning_rate, tf.float32).numpy())
                return np.array(rates)
            """,
            at=[(8, 32, "Keras 3 optimizers have no `_decayed_lr()` (AttributeError): the current learning rate "
                        "is `learning_rate`")],
            run="""
            schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5)
            try:  # Keras 2: the optimizer of TF <= 2.10, which has _decayed_lr
                opt = tf.keras.optimizers.legacy.SGD(schedule, momentum=0.9)
            except ImportError:  # Keras 3 keeps only a stub
                opt = tf.keras.optimizers.SGD(schedule, momentum=0.9)
            w = tf.Variable([1.0, 2.0])
            rates = fit(opt, w, 5)
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            note="bubbliiiing/unet-tf2 utils/utils_fit.py:73 (the optimizer a parameter, in a file naming no "
                 "Keras): the schedule's value at each step, as _decayed_lr gave it under Keras 2",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            class Halve(tf.keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    rate = tf.keras.backend.get_value(self.model.optimizer.lr)
                    tf.keras.backend.set_value(self.model.optimizer.learning_rate, rate * 0.5)

            def train():
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
                model.compile(tf.keras.optimizers.SGD(0.1), "mse")
                model.fit(np.ones((8, 2), "float32"), np.zeros((8, 1), "float32"), epochs=3, verbose=0,
                          callbacks=[Halve()])
                return float(tf.keras.backend.get_value(model.optimizer.learning_rate))
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            class Halve(tf.keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    rate = tf.keras.backend.get_value(self.model.optimizer.learning_rate)
                    self.model.optimizer.learning_rate.assign(rate * 0.5)

            def train():
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
                model.compile(tf.keras.optimizers.SGD(0.1), "mse")
                model.fit(np.ones((8, 2), "float32"), np.zeros((8, 1), "float32"), epochs=3, verbose=0,
                          callbacks=[Halve()])
                return float(tf.keras.backend.get_value(model.optimizer.learning_rate))
            """,
            at=[(6, 64, "Keras 3 optimizers have no `lr` (AttributeError)"),
                (7, 9, "A Keras 3 optimizer's learning rate is a Keras variable, which `backend.set_value` fails "
                       "on (AttributeError: 'str' object has no attribute 'name')")],
            run="rate = train()",
            effect=FIXES_ERROR,
            keras2=True,
            keras2_before=True,
            note="bubbliiiing/unet-tf2 utils/callbacks.py:92-93: a callback's self.model.optimizer; set_value "
                 "fails on `learning_rate` too under Keras 3",
        ),
        flagged(
            """
            import tensorflow as tf

            class Clipped(tf.keras.optimizers.legacy.Optimizer):
                pass

            class Old(tf.keras.optimizers.legacy.Nadam):
                pass
            """,
            at=[(3, 15, "Keras 3's `optimizers.legacy.Optimizer` is a stub: the class is made, but making an "
                        "instance raises ImportError"),
                (6, 11, "Keras 3 has no `optimizers.legacy.Nadam` (AttributeError when the class is made)")],
            note="subclasses of the legacy optimizers (no fix: Keras 3's optimizer API differs)",
        ),
        clean(
            """
            import argparse
            import tensorflow as tf
            import tf_keras
            from tensorflow.keras import backend as K

            args = argparse.ArgumentParser().parse_args()
            rate = args.lr
            old = tf_keras.optimizers.Adam()
            old.lr = 0.1
            K.set_value(old.lr, 0.1)

            class Trainer:
                def __init__(self):
                    self.lr = 0.1

                def decay(self):
                    self.lr = self.lr * 0.5
                    return self.lr

            def report(config, optimizer):
                print(config.lr)
                if hasattr(optimizer, "lr"):
                    print(K.get_value(optimizer.lr))
                K.set_value(optimizer.iterations, 0)

            class Legacy(tf_keras.optimizers.legacy.Optimizer):
                pass

            class Decayed(tf.keras.optimizers.SGD):
                def _decayed_lr(self, dtype):
                    return tf.cast(self.learning_rate, dtype)

                def rate(self):
                    return self._decayed_lr(tf.float32)
            """,
            note="a parameter's or a plain object's lr; a tf_keras optimizer; a hasattr guard; set_value of "
                 "something other than the rate; a tf_keras legacy base; an optimizer class defining _decayed_lr",
        ),
    ]
