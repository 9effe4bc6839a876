from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from tflint_gpu.semantic.api import arguments_by_name
from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.rules.base import CHANGES, IDENTICAL, Fix, Rule, Safety, clean, flagged

_LOSS_PARAMS = ("y", "y_pred", "sample_weight", "regularization_losses")


class Keras3CompiledLoss(Rule):
    """`self.compiled_loss(...)` in a Keras 3 `train_step`: a deprecated shim of `compute_loss`.

    ## What it does
    Finds, in a method of a Keras 3 `Model` subclass (`keras.Model`, or
    `tf.keras.Model` under TensorFlow 2.16+), the Keras 2 custom-training
    idiom `self.compiled_loss(y, y_pred, ...)`; the message says when its
    `regularization_losses=` term is one Keras 3 leaves out of the loss. Its companion
    `self.compiled_metrics.update_state(...)`, which logs a wrong loss, is
    TFG911. Not reported: tf_keras subclasses, a class that defines or
    assigns its own `compiled_loss`, a file that mentions
    `TF_USE_LEGACY_KERAS`, branches that never run under Keras 3.

    ## Why is this bad?
    Keras 3 keeps it only as a deprecated shim (source:
    `keras/src/backend/tensorflow/trainer.py`) that warns at every trace and
    calls `compute_loss(x=None, y, y_pred, sample_weight)`, ignoring
    `regularization_losses=` (it adds the model's `losses` itself); code
    written against it usually pairs it with `compiled_metrics`, which is
    silently wrong (TFG911). A term passed as `regularization_losses=` that
    is not the model's own `losses` (a weight decay computed in the step, as
    in google/automl's efficientdet: `regularization_losses=
    [self._reg_l2_loss(wd)]`) is silently left out of the loss under Keras 3
    (tf_keras added `tf.add_n` of the list): the message says so. Measured
    (TF 2.21, a `Dense(1, kernel_initializer="ones")` model, SGD(0.01), a
    weight decay 0.1 x the L2 norm, two steps): under tf_keras the kernel
    decays to 0.99802244 and the logged loss is 0.150; under Keras 3 the
    kernel stays at 1.0 and the logged loss is 0.0, no other warning than
    the deprecation. Measured under TensorFlow 2.21 with Keras 3.15, a
    `train_step` computing `loss = self.compiled_loss(y, p,
    regularization_losses=self.losses)` and calling
    `self.compiled_metrics.update_state(y, p)`, compiled with `"mse"` and
    `metrics=["mae"]`, three epochs: `UserWarning: model.compiled_loss() is
    deprecated. Instead, use model.compute_loss(x, y, y_pred, sample_weight,
    training)`; the model trains as before (the `mae` history 3.0281,
    2.9664, 2.9061 is the same as with `compute_loss` and as under
    tf_keras).

    ## Example
    ```python
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                           self.trainable_variables))
        return {"loss": loss}
    ```

    Use instead:
    ```python
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=None, y=y, y_pred=y_pred)
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                           self.trainable_variables))
        return {"loss": loss}
    ```

    ## Fix safety
    `self.compiled_loss(y, y_pred, sample_weight)`, with no
    `regularization_losses`, or with `regularization_losses=self.losses`,
    `None` or `[]` → `self.compute_loss(x=None, y=y, y_pred=y_pred,
    sample_weight=...)`: safe, it is the call Keras 3's shim makes (which adds
    the model's own `losses` itself), without the warning; under tf_keras
    `compute_loss` passes `regularization_losses=self.losses` itself, so the
    fixed code computes the same there too.

    Any other term is kept, never deleted: `regularization_losses=[t1, t2]`
    (a non-empty list or tuple written in the call) →
    `self.compute_loss(...) + tf.add_n([t1, t2])`, what tf_keras's
    `compiled_loss` added (parenthesised where the call was an operand).
    Unsafe: under Keras 3 it changes the training, on purpose, back to what
    the code did under Keras 2 (the weights after the fix under Keras 3 are
    bit for bit those of the original under tf_keras: the fix-execution
    test runs both). The loss Keras 3 logs is still `compute_loss`'s (its
    loss tracker), without the term, where tf_keras's logged loss included
    it. No fix for a term given as a name or another expression (it may be
    an empty list at run time: tf_keras then added nothing, `tf.add_n([])`
    raises), for a term reading `self.losses` (`compute_loss` adds them
    already: they would count twice), where `tensorflow` is not imported, or
    when another argument is passed.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the warning above; the weights after
    two epochs are the same before and after the fix (the fix-execution
    test); with a weight-decay term, the kernel after two steps is 1.0
    before the fix and 0.99802244 after it, as under tf_keras before it.
    examples/TFG910 (`tflint-gpu verify --rule TFG910`): equivalent.
    """

    code = "TFG910"
    name = "keras3-compiled-loss"
    message = "Keras 3 keeps `compiled_loss` only as a deprecated shim"
    needs = (("compiled_loss",),)
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)
    migration = True

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        name = node.attr.value
        if name != "compiled_loss":
            return
        if not keras3_self(node, ctx) or ctx.migration.guarded(node, ctx.scope):
            return
        call = self._called(node, ctx)
        found = arguments_by_name(call, _LOSS_PARAMS, known_only=True) if call is not None else None
        term = found.get("regularization_losses") if found is not None else None
        if term is not None and not _dropped(term):
            ctx.report(node.attr, "Keras 3 keeps `compiled_loss()` only as a deprecated shim that ignores "
                                  "`regularization_losses=`: that term is left out of the loss; call "
                                  "`self.compute_loss(x=x, y=y, y_pred=y_pred)` and add it",
                       self._fix(call, found, term, ctx))
            return
        ctx.report(node.attr, "Keras 3 keeps `compiled_loss()` only as a deprecated shim (UserWarning): call "
                              "`self.compute_loss(x=x, y=y, y_pred=y_pred)`",
                   self._fix(call, found, None, ctx) if found is not None else None)

    @staticmethod
    def _called(node: cst.Attribute, ctx) -> Optional[cst.Call]:
        parent = next(iter(ctx.scope.ancestors(node)), None)
        return parent if isinstance(parent, cst.Call) and parent.func is node else None

    @staticmethod
    def _fix(call: cst.Call, found: Dict[str, cst.BaseExpression], term: Optional[cst.BaseExpression],
             ctx) -> Optional[Fix]:
        """``compute_loss(x=None, y=..., y_pred=..., sample_weight=...)``, plus
        ``tf.add_n([...])`` of a regularization term Keras 3 would drop."""
        if "y" not in found or "y_pred" not in found:
            return None
        args: List[cst.Arg] = [cst.Arg(cst.Name("None"), keyword=cst.Name("x"), equal=_EQUAL,
                                       comma=_COMMA)]
        for key in ("y", "y_pred", "sample_weight"):
            if key in found:
                args.append(cst.Arg(found[key], keyword=cst.Name(key), equal=_EQUAL, comma=_COMMA))
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        func = call.func
        assert isinstance(func, cst.Attribute)
        computed = call.with_changes(func=func.with_changes(attr=cst.Name("compute_loss")), args=args)
        if term is None:
            return Fix("Call `self.compute_loss()`", Safety.SAFE, {call: computed})
        # tf_keras's compiled_loss adds tf.add_n(regularization_losses) to the loss; Keras 3's
        # compute_loss adds the model's own `losses` itself, so a term reading them would count twice.
        tf_name = ctx.resolver.module_alias("tensorflow", ctx.scope)
        if tf_name is None or not isinstance(term, (cst.List, cst.Tuple)) or not term.elements \
                or any(isinstance(e, cst.StarredElement) for e in term.elements) \
                or any(_self_losses(node) for node in ctx.descendants(term)):
            return None
        added = cst.Call(cst.Attribute(cst.Name(tf_name), cst.Name("add_n")),
                         [cst.Arg(cst.List([cst.Element(e.value, comma=e.comma) for e in term.elements]))])
        total = cst.BinaryOperation(computed, cst.Add(), added)
        parent = next(iter(ctx.scope.ancestors(call)), None)
        if not isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Arg, cst.Expr)):
            total = total.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return Fix("Call `self.compute_loss()` and add the regularization term", Safety.UNSAFE, {call: total})

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            class Model(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        y_pred = self(x, training=True)
                        loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}

            def train():
                inputs = tf.keras.Input((3,))
                model = Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
                model.compile(tf.keras.optimizers.SGD(0.01), "mse")
                x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
                model.fit(x, x.sum(axis=1, keepdims=True), epochs=2, verbose=0)
                return model.get_weights()
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            class Model(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        y_pred = self(x, training=True)
                        loss = self.compute_loss(x=None, y=y, y_pred=y_pred)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}

            def train():
                inputs = tf.keras.Input((3,))
                model = Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
                model.compile(tf.keras.optimizers.SGD(0.01), "mse")
                x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
                model.fit(x, x.sum(axis=1, keepdims=True), epochs=2, verbose=0)
                return model.get_weights()
            """,
            at=[(9, 25, "Keras 3 keeps `compiled_loss()` only as a deprecated shim (UserWarning)")],
            run="weights = train()",
            effect=IDENTICAL,
            note="the shim calls compute_loss(x=None, y, y_pred, sample_weight), which adds the model's losses "
                 "itself: same weights after training, under Keras 3 and under Keras 2",
            keras2=True,
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            class Model(tf.keras.Model):
                def _reg_l2_loss(self, weight_decay):
                    return weight_decay * tf.add_n([tf.nn.l2_loss(v) for v in self.trainable_variables])

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        pred = self(x, training=True)
                        loss = self.compiled_loss(y, pred, regularization_losses=[self._reg_l2_loss(0.1)])
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}

            def train():
                inputs = tf.keras.Input((3,))
                model = Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones")(inputs))
                model.compile(tf.keras.optimizers.SGD(0.01), "mse")
                x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
                model.fit(x, x.sum(axis=1, keepdims=True), batch_size=8, epochs=2, verbose=0)
                return model.get_weights()
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            class Model(tf.keras.Model):
                def _reg_l2_loss(self, weight_decay):
                    return weight_decay * tf.add_n([tf.nn.l2_loss(v) for v in self.trainable_variables])

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        pred = self(x, training=True)
                        loss = self.compute_loss(x=None, y=y, y_pred=pred) + tf.add_n([self._reg_l2_loss(0.1)])
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}

            def train():
                inputs = tf.keras.Input((3,))
                model = Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones")(inputs))
                model.compile(tf.keras.optimizers.SGD(0.01), "mse")
                x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
                model.fit(x, x.sum(axis=1, keepdims=True), batch_size=8, epochs=2, verbose=0)
                return model.get_weights()
            """,
            at=[(12, 25, "Keras 3 keeps `compiled_loss()` only as a deprecated shim that ignores "
                         "`regularization_losses=`: that term is left out of the loss")],
            run="weights = train()",
            effect=CHANGES,
            note="a weight-decay term (google/automl efficientdet's form): Keras 3's shim drops it (the kernel "
                 "stays at 1.0), the fix adds it as tf_keras's compiled_loss did (tf.add_n of the list): the "
                 "weights under Keras 3 after the fix are those of the original under Keras 2, and the fix "
                 "computes the same under Keras 2",
            keras2=True,
            keras2_before=True,
        ),
        flagged(
            """
            import tensorflow as tf

            class Model(tf.keras.Model):
                extra_losses = ()

                def decay(self):
                    return 0.01 * tf.add_n([tf.nn.l2_loss(v) for v in self.trainable_variables])

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        pred = self(x, training=True)
                        a = 2.0 * self.compiled_loss(y, pred, None, [self.decay()])
                        b = self.compiled_loss(y, pred, regularization_losses=self.extra_losses)
                        c = self.compiled_loss(y, pred, regularization_losses=[tf.add_n(self.losses)])
                        d = self.compiled_loss(y, pred, regularization_losses=None)
                        loss = a + b + c + d
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """,
            fixed="""
            import tensorflow as tf

            class Model(tf.keras.Model):
                extra_losses = ()

                def decay(self):
                    return 0.01 * tf.add_n([tf.nn.l2_loss(v) for v in self.trainable_variables])

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        pred = self(x, training=True)
                        a = 2.0 * (self.compute_loss(x=None, y=y, y_pred=pred, sample_weight=None) + tf.add_n([self.decay()]))
                        b = self.compiled_loss(y, pred, regularization_losses=self.extra_losses)
                        c = self.compiled_loss(y, pred, regularization_losses=[tf.add_n(self.losses)])
                        d = self.compute_loss(x=None, y=y, y_pred=pred)
                        loss = a + b + c + d
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """,
            at=[(13, 28, "Keras 3 keeps `compiled_loss()` only as a deprecated shim that ignores"),
                (14, 22, "Keras 3 keeps `compiled_loss()` only as a deprecated shim that ignores"),
                (15, 22, "Keras 3 keeps `compiled_loss()` only as a deprecated shim that ignores"),
                (16, 22, "Keras 3 keeps `compiled_loss()` only as a deprecated shim (UserWarning)")],
            run="""
            inputs = tf.keras.Input((3,))
            model = Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones", kernel_regularizer="l2")(inputs))
            model.compile(tf.keras.optimizers.SGD(0.01), "mse")
            x = tf.reshape(tf.linspace(-1.0, 1.0, 24), (8, 3))
            model.fit(x, tf.reduce_sum(x, axis=1, keepdims=True), batch_size=8, epochs=1, verbose=0)
            weights = model.get_weights()
            """,
            effect=CHANGES,
            note="the term passed by position, inside a product (parenthesised); no fix for a term that may be an "
                 "empty list (tf.add_n([]) raises where tf_keras added nothing) or that reads self.losses "
                 "(compute_loss adds them already: they would count twice); None adds nothing in tf_keras",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            class GAN(keras.Model):
                def test_step(self, data):
                    x, y = data
                    y_pred = self(x, training=False)
                    self.compiled_loss(y, y_pred, sample_weight, self.losses, extra)
                    return {m.name: m.result() for m in self.metrics}
            """,
            at=[(8, 14, "Keras 3 keeps `compiled_loss()` only as a deprecated shim")],
            note="no exact rewrite: an argument compute_loss has no place for",
        ),
        clean(
            """
            import tf_keras
            import keras

            class Old(tf_keras.Model):
                def train_step(self, data):
                    x, y = data
                    y_pred = self(x, training=True)
                    loss = self.compiled_loss(y, y_pred)
                    self.compiled_metrics.update_state(y, y_pred)
                    return {"loss": loss}

            class Own(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.compiled_loss = keras.losses.MeanSquaredError()

                def train_step(self, data):
                    return {"loss": self.compiled_loss(data[1], self(data[0]))}

            class Trainer:
                def step(self):
                    return self.compiled_loss(1, 2)

            class New(keras.Model):
                def train_step(self, data):
                    x, y = data
                    y_pred = self(x, training=True)
                    loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
                    for metric in self.metrics:
                        metric.update_state(y, y_pred)
                    return {"loss": loss}
            """,
            note="tf_keras models keep both; an attribute of the class's own; no Keras class; migrated Keras 3 code",
        ),
    ]


def keras3_self(node: cst.Attribute, ctx) -> bool:
    """Is ``node`` (``self.<name>``) read in a method of a Keras 3 Model subclass
    that neither defines nor assigns ``<name>``?"""
    objects = ctx.graphs.objects
    cls = objects.self_class(node.value, ctx.scope)
    if cls is None or ctx.migration.legacy_env or ctx.graphs.keras_flavour(cls) != KERAS3:
        return False
    name = node.attr.value
    if objects.defines(cls, name) or objects.attribute_bindings(cls, name, family=True):
        return False
    base = ctx.migration.class_base(cls)
    return base is not None and base.split(".")[-1] in ("Model", "Sequential", "Functional")


def _dropped(term: cst.BaseExpression) -> bool:
    """Is a ``regularization_losses=`` argument one Keras 3's ``compute_loss`` accounts for:
    ``self.losses`` (it adds the model's losses itself), ``None`` or an empty list (tf_keras adds nothing)?"""
    if _self_losses(term) or (isinstance(term, cst.Name) and term.value == "None"):
        return True
    return isinstance(term, (cst.List, cst.Tuple)) and not term.elements


def _self_losses(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "losses" \
        and isinstance(node.value, cst.Name) and node.value.value == "self"


_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
