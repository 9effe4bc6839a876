from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import argument
from tflint_gpu.semantic.bindings import redefined_outside
from tflint_gpu.semantic.model_outputs import SOFTMAX, LogitsLoss, Probabilities
from tflint_gpu.semantic.names import short_name
from tflint_gpu.rules.base import Rule, clean, flagged


class ProbabilitiesIntoLogitsLoss(Rule):
    """Softmax or sigmoid probabilities fed to a loss that takes logits: the activation is applied twice.

    ## What it does
    Finds a value that is already probabilities reaching a loss that applies
    a softmax or sigmoid to what it is given:

    * the losses: `tf.nn.softmax_cross_entropy_with_logits`,
      `tf.nn.sparse_softmax_cross_entropy_with_logits`,
      `tf.nn.sigmoid_cross_entropy_with_logits`,
      `tf.nn.weighted_cross_entropy_with_logits`, TensorFlow 1's
      `tf.compat.v1.losses.softmax_cross_entropy` / `sparse_...` /
      `sigmoid_...`; and a Keras cross-entropy built or called with
      `from_logits=True` when the probabilities come from `tf.nn.softmax` /
      `tf.math.sigmoid` in code that runs eagerly (see below);
    * the probabilities: `tf.nn.softmax(h)`, `tf.math.sigmoid(h)`,
      `keras.activations.softmax(h)`, a model the file builds whose last
      layer is a softmax or sigmoid (`model(x)`, `model.predict(x)`), and a
      call of a same-module function or Keras model subclass whose returned
      value is one of those for the arguments given: `return tf.nn.softmax(x)`,
      or `if not training: x = tf.nn.softmax(x)` with `training` left at its
      default `False`;
    * directly, through a name, or through a same-module helper that hands its
      parameter on to the loss unchanged (`def loss_fn(pred, y): return
      tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=pred)`,
      then `loss_fn(model(x), y)`).

    Not reported: a Keras cross-entropy with `from_logits=True` given the
    output of a Keras softmax or sigmoid (`Dense(10, activation="softmax")`,
    `keras.activations.softmax`), or given `tf.nn.softmax`'s output in a
    `tf.function` or `fit`: Keras recognises those tensors, warns, and computes
    the loss from the logits (measured: the right value). A value the linter
    cannot follow (a model loaded from a file, a layer it cannot tell).

    ## Why is this bad?
    The loss applies the softmax (or sigmoid) again to values already in
    (0, 1): the result is not the cross-entropy of the predictions, and
    nothing warns. When the loss is only logged, the logged figure is wrong;
    when it is trained on, the gradients are those of the wrong loss too
    (squashed: the probabilities differ by less than the logits did).
    Measured under TensorFlow 2.21 with Keras 3.15 and tf_keras 2.21 on the
    CPU (a `Dense(3, activation="softmax")` model, 64 random samples of 3
    classes): the true cross-entropy 1.477, while
    `tf.nn.sparse_softmax_cross_entropy_with_logits` of the model's output
    gives 1.145; a subclassed model returning `tf.nn.softmax(x)` called
    eagerly and given to `SparseCategoricalCrossentropy(from_logits=True)`:
    1.132 against the true 1.537 (traced, the same call gives 1.537); a
    sigmoid model through `tf.nn.sigmoid_cross_entropy_with_logits`: 0.698
    against 0.828. No warning in any of these.

    ## Example
    ```python
    class Net(keras.Model):
        def call(self, x, training=False):
            x = self.out(x)
            if not training:
                x = tf.nn.softmax(x)  # probabilities for inference
            return x

    pred = net(batch_x)  # training=False: probabilities
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=batch_y, logits=pred))
    ```

    Use instead:
    ```python
    pred = net(batch_x)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(batch_y, pred))
    ```
    (or pass the logits: `net(batch_x, training=True)` here, or a model
    without the final softmax).

    ## Fix safety
    No fix: the right loss depends on what the code meant (the logits may be
    at hand elsewhere, a helper may serve logits at another call), and every
    correction changes the values on purpose.

    ## Measured effect
    The figures above. examples/TFG606 (`tflint-gpu verify --device cpu
    --size small --rule TFG606`, 512 samples of a learnable 10-class rule, a
    `Dense(10, activation="softmax")` classifier, `Adam(0.01)`, 15 epochs of a
    custom loop): fixes-behaviour. With
    `tf.nn.sparse_softmax_cross_entropy_with_logits` of the model's output the
    true cross-entropy ends at 0.569 and the accuracy at 0.949, while the loop
    logged 1.537; with `keras.losses.sparse_categorical_crossentropy`: 0.084,
    1.000, logged 0.095. On an easier 4-class rule (8 features, Adam(0.01))
    the accuracy is about the same (0.992 against 0.994): what is wrong then
    is the logged loss (0.784 logged, 0.056 true).
    """

    code = "TFG606"
    name = "probabilities-into-logits-loss"
    message = "Probabilities fed to a loss that takes logits"
    needs = (("logits", "from_logits"),)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if ctx.in_test_module:
            return  # a test may feed whatever on purpose
        outputs = ctx.model_outputs
        loss = outputs.logits_argument(node, ctx.scope)
        if loss is not None:
            found = outputs.probabilities(loss.logits, ctx.scope, at=loss.logits)
            if self._wrong(found, loss, ctx.graph() is not None):
                self._report(loss.logits, found, loss, None, ctx)
            return
        function = ctx.graphs.function_scope(node.func, ctx.scope)
        if function is None or (isinstance(node.func, cst.Name) and redefined_outside(node.func.value, ctx.scope)):
            return
        handed = outputs.logits_parameter(function)
        if handed is None:
            return
        index, parameter, loss = handed
        given = argument(node, index, parameter)
        if given is None:
            return
        found = outputs.probabilities(given, ctx.scope, at=given)
        traced = ctx.graph() is not None or ctx.graph(function) is not None
        if self._wrong(found, loss, traced):
            self._report(given, found, loss, node.func, ctx)

    @staticmethod
    def _wrong(found: Optional[Probabilities], loss: LogitsLoss, traced: bool) -> bool:
        if found is None:
            return False
        if loss.keras and (found.keras or traced):
            return False  # Keras's cross-entropies take the logits back from such a tensor (measured)
        return True

    def _report(self, node: cst.BaseExpression, found: Probabilities, loss: LogitsLoss,
                helper: Optional[cst.BaseExpression], ctx) -> None:
        name = loss.loss
        spelled = "tf.compat.v1." + name[len("tensorflow."):] if name.startswith("tensorflow.losses.") \
            else short_name(name)
        spelled = f"`{spelled}`" + (" with `from_logits=True`" if loss.keras else "")
        if helper is not None:
            spelled += f" (through `{cst.Module([]).code_for_node(helper)}`)"
        made = "Softmax" if found.kind == SOFTMAX else "Sigmoid"
        applied = "softmax" if loss.activation == SOFTMAX else "sigmoid"
        ctx.report(node, f"{made} probabilities fed to {spelled}, which takes logits and applies a {applied}: "
                         f"the loss is wrong; pass the logits, or use a loss that takes probabilities")

    cases = [
        flagged(
            """
            import tensorflow as tf
            from tensorflow.keras import Model, layers

            class ConvNet(Model):
                def __init__(self):
                    super().__init__()
                    self.out = layers.Dense(10)

                def call(self, x, is_training=False):
                    x = self.out(x)
                    if not is_training:
                        x = tf.nn.softmax(x)
                    return x

            conv_net = ConvNet()

            def cross_entropy_loss(x, y):
                loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.cast(y, tf.int64), logits=x)
                return tf.reduce_mean(loss)

            def run_optimization(x, y):
                with tf.GradientTape() as g:
                    pred = conv_net(x, is_training=True)
                    loss = cross_entropy_loss(pred, y)
                return g.gradient(loss, conv_net.trainable_variables)

            for step, (batch_x, batch_y) in enumerate(data):
                run_optimization(batch_x, batch_y)
                if step % 10 == 0:
                    pred = conv_net(batch_x)
                    loss = cross_entropy_loss(pred, batch_y)
            """,
            at=[(31, 35, "Softmax probabilities fed to `tf.nn.sparse_softmax_cross_entropy_with_logits` (through "
                         "`cross_entropy_loss`), which takes logits and applies a softmax: the loss is wrong; pass "
                         "the logits, or use a loss that takes probabilities")],
            note="a subclassed model returning softmax unless training, logged through a helper; the training "
                 "call passes is_training=True: logits, right",
        ),
        flagged(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1, activation="sigmoid")])
            probs = tf.nn.softmax(logits)
            a = tf.nn.softmax_cross_entropy_with_logits(labels, probs)
            b = tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=model(x))
            c = tf.keras.losses.CategoricalCrossentropy(from_logits=True)(labels, probs)
            d = tf.compat.v1.losses.sparse_softmax_cross_entropy(y, model.predict(x))

            @tf.function
            def traced(labels, logits):
                return tf.keras.losses.CategoricalCrossentropy(from_logits=True)(labels, tf.nn.softmax(logits))
            """,
            at=[(5, 53, "Softmax probabilities fed to `tf.nn.softmax_cross_entropy_with_logits`, which takes"),
                (6, 62, "Sigmoid probabilities fed to `tf.nn.sigmoid_cross_entropy_with_logits`, which takes "
                        "logits and applies a sigmoid"),
                (7, 71, "Softmax probabilities fed to `keras.losses.CategoricalCrossentropy` with "
                        "`from_logits=True`, which takes logits"),
                (8, 57, "Sigmoid probabilities fed to `tf.compat.v1.losses.sparse_softmax_cross_entropy`, which "
                        "takes logits and applies a softmax")],
            note="tf.nn.softmax eagerly into a Keras loss with from_logits=True is wrong; traced, Keras takes the "
                 "logits back (line 12, not reported)",
        ),
        flagged(
            """
            import tensorflow as tf
            from tensorflow.keras import Model, layers

            class NeuralNet(Model):
                def __init__(self):
                    super().__init__()
                    self.out = layers.Dense(10, activation=tf.nn.softmax)

                def call(self, x, is_training=False):
                    return self.out(x)

            net = NeuralNet()

            def train(x, y):
                logits = net(x, is_training=True)
                return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            """,
            at=[(16, 76, "Softmax probabilities fed to `tf.nn.sparse_softmax_cross_entropy_with_logits`")],
            note="the output layer, an attribute bound once in __init__, ends in a softmax: the training loss "
                 "itself is wrong",
        ),
        clean(
            """
            import tensorflow as tf

            def log_loss(y_pred, y):
                return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=y_pred))

            class LogisticRegression(tf.Module):
                def __call__(self, x, train=True):
                    z = tf.matmul(x, self.w) + self.b
                    if train:
                        return z
                    return tf.sigmoid(z)

            log_reg = LogisticRegression()

            def cross_entropy(pred, y):
                return -tf.reduce_sum(y * tf.math.log(pred))

            def step(x, y):
                return cross_entropy(tf.nn.softmax(x), y)

            def cross_entropy(pred, y):
                return tf.nn.softmax_cross_entropy_with_logits(y, pred)

            for x, y in data:
                loss = log_loss(log_reg(x), y)
                step(x, y)
            """,
            note="an early return of the logits while training (the default); a helper redefined later: which "
                 "one a function calls depends on when it runs",
        ),
        clean(
            """
            import tensorflow as tf
            from tensorflow import keras

            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
            loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            a = loss_fn(y, model(x))
            b = keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True)
            logits_model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
            c = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits_model(x))
            d = tf.nn.softmax_cross_entropy_with_logits(labels, tf.nn.softmax(h) if p else h)
            e = keras.losses.SparseCategoricalCrossentropy()(y, model(x))

            class Net(keras.Model):
                def call(self, x, training=False):
                    x = self.out(x)
                    if not training:
                        x = tf.nn.softmax(x)
                    return x

            net = Net()
            f = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=net(x, training=True))
            g = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=net(x, training=flag))
            """,
            note="a Keras softmax output into a Keras from_logits=True loss (Keras takes the logits back, measured); "
                 "logits into a logits loss; a value the linter cannot tell; probabilities into a probability loss; "
                 "the subclass called with training=True or an unknown flag",
        ),
    ]
