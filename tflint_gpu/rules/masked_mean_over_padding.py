from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged

_TF_MEANS = frozenset({"tensorflow.reduce_mean", "tensorflow.math.reduce_mean"})


class MaskedMeanOverPadding(Rule):
    """A loss multiplied by a padding mask, then averaged over every position, padding included.

    ## What it does
    Finds a mean over all elements (`tf.reduce_mean(v)`, `tf.math.
    reduce_mean`, `keras.ops.mean`, `keras.backend.mean`, no `axis`) of a
    value multiplied by a padding mask: `loss *= mask; return tf.reduce_mean(
    loss)` (the shape of TensorFlow's old neural machine translation
    tutorial), `tf.reduce_mean(loss * mask)`, `tf.multiply(loss, mask)`.

    A padding mask is what the engine sees made by a comparison that marks
    real positions: `tf.math.logical_not(tf.math.equal(y, 0))`,
    `tf.math.not_equal(y, pad)`, `tf.math.greater(y, 0)`, `y != 0`, `y > 0`,
    `tf.sequence_mask(lengths, ...)` (and the `keras.ops` spellings), or a
    cast of one, through names, parameters filled by the module's calls and
    rebindings (`semantic.masking`); a parameter no call fills counts when its
    name says padding (`padding_mask`, `seq_mask`...). Not reported: a mean
    divided by something (`tf.reduce_mean(v) / tf.reduce_mean(mask)` is the
    masked mean) other than a number or the replica count (`/
    strategy.num_replicas_in_sync` scales a per-replica mean, TFG504's fix:
    the mean is still over padding), a function that also reduces the mask
    (`tf.reduce_sum(loss * mask) / tf.reduce_sum(mask)`, `count_nonzero`), a
    mean along an axis, a bare `mask` parameter nothing in the module fills
    (an inpainting loss averages its hole mask over the whole image on
    purpose), attention and image masks, test code.

    ## Why is this bad?
    The mask zeroes the padded positions, but the mean still divides by every
    position, padded ones included. The loss is then the masked mean times the
    fraction of real positions: it shrinks as a batch holds more padding, so a
    batch of short sentences padded to one long one counts for less, the
    learning rate is in effect scaled per batch, and the figure logged is not
    the per-token loss. `tf.reduce_sum(loss * mask) / tf.reduce_sum(mask)` is
    the mean over real positions (what TensorFlow's current translation
    tutorials compute).

    ## Example
    ```python
    def loss_function(real, pred):
        mask = tf.math.logical_not(tf.math.equal(real, 0))
        loss_ = loss_object(real, pred)
        mask = tf.cast(mask, dtype=loss_.dtype)
        loss_ *= mask
        return tf.reduce_mean(loss_)
    ```

    Use instead:
    ```python
    def loss_function(real, pred):
        mask = tf.math.logical_not(tf.math.equal(real, 0))
        loss_ = loss_object(real, pred)
        mask = tf.cast(mask, dtype=loss_.dtype)
        loss_ *= mask
        return tf.math.divide_no_nan(tf.reduce_sum(loss_), tf.reduce_sum(tf.broadcast_to(mask, tf.shape(loss_))))
    ```

    ## Fix safety
    Unsafe: the loss changes value, which is the point (it becomes the mean
    over real positions, larger by the inverse of the fraction of real
    positions). Offered for `tf.reduce_mean(v)` / `tf.math.reduce_mean(v)`
    where `v` is a name holding the masked product and the mask is a name
    not rebound between the product and the mean. The count divided by is the
    mask broadcast to the product's shape, so a mask of shape `(batch, time,
    1)` on a loss of shape `(batch, time, features)` counts every real
    element, and `divide_no_nan` keeps a batch of padding only at 0, as
    before.

    ## Measured effect
    TensorFlow 2.21 (CPU), a `SparseCategoricalCrossentropy(from_logits=True,
    reduction="none")` loss over two target sequences of 3 and 2 tokens,
    padded to 6, 12 and 24 positions: the tutorial's mean gave 1.174, 0.587
    and 0.293 (halving each time the padding doubles), the masked mean 2.817
    each time. `examples/TFG615`, `tflint-gpu verify --rule TFG615 --device
    cpu --size small`: fixes-behaviour (the loss no longer depends on the
    padded length).
    """

    code = "TFG615"
    name = "masked-mean-over-padding"
    message = "Mean of a masked loss divides by every position, padding included"
    needs = (("mean",),)
    fix_safety = Safety.UNSAFE

    def __init__(self) -> None:
        super().__init__()
        self._divided: Dict[int, cst.BaseExpression] = {}

    def visit_Module(self, node: cst.Module, ctx) -> None:
        self._divided = {}

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        if isinstance(node.operator, (cst.Divide, cst.FloorDivide)):
            self._divided[id(node.left)] = node.right

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if in_test_function(ctx.scope) or ctx.in_test_module:
            return
        found = ctx.masks.masked_mean(node, ctx.scope, self._divided.get(id(node)))
        if found is None:
            return
        mean = ctx.call_name(node) or ""
        ctx.report(node, f"`{mean.replace('tensorflow.', 'tf.')}` of a value multiplied by a padding mask "
                         f"divides by every position, padding included: the loss shrinks as padding grows "
                         f"(divide the sum by the mask's sum)", self._fix(node, found, ctx))

    @staticmethod
    def _fix(node: cst.Call, found, ctx) -> Optional[Fix]:
        value, mask = found.value, found.mask
        if ctx.call_name(node) not in _TF_MEANS or len(node.args) != 1:
            return None
        if not isinstance(value, cst.Name) or not found.stable:
            return None  # an inline product, or a mask rebound between the product and the mean
        names = [ctx.module_expr("tensorflow", "math.divide_no_nan"), ctx.module_expr("tensorflow", "reduce_sum"),
                 ctx.module_expr("tensorflow", "broadcast_to"), ctx.module_expr("tensorflow", "shape")]
        if any(n is None for n in names):
            return None
        (divide, imports), (total, _), (broadcast, _), (shape, _) = names
        v = cst.Arg(value)
        count = cst.Call(total, [cst.Arg(cst.Call(broadcast, [cst.Arg(mask), cst.Arg(cst.Call(shape, [v]))]))])
        fixed = cst.Call(divide, [cst.Arg(cst.Call(total, [v])), cst.Arg(count)])
        return Fix("Divide the sum by the number of real positions", Safety.UNSAFE, {node: fixed}, imports)

    cases = [
        flagged(
            """
            import tensorflow as tf

            loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

            def loss_function(real, pred):
                mask = tf.math.logical_not(tf.math.equal(real, 0))
                loss_ = loss_object(real, pred)
                mask = tf.cast(mask, dtype=loss_.dtype)
                loss_ *= mask
                return tf.reduce_mean(loss_)
            """,
            """
            import tensorflow as tf

            loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

            def loss_function(real, pred):
                mask = tf.math.logical_not(tf.math.equal(real, 0))
                loss_ = loss_object(real, pred)
                mask = tf.cast(mask, dtype=loss_.dtype)
                loss_ *= mask
                return tf.math.divide_no_nan(tf.reduce_sum(loss_), tf.reduce_sum(tf.broadcast_to(mask, tf.shape(loss_))))
            """,
            at=[(10, 12, "`tf.reduce_mean` of a value multiplied by a padding mask divides by every position")],
            run="""
            real = tf.constant([[3, 4, 5, 0, 0, 0], [6, 7, 0, 0, 0, 0]])
            pred = tf.random.stateless_normal([2, 6, 10], seed=(1, 2))
            result = [float(loss_function(real, pred)),
                      float(loss_function(tf.pad(real, [[0, 0], [0, 6]]), tf.pad(pred, [[0, 0], [0, 6], [0, 0]])))]
            """,
            effect=CHANGES,
            note="the old translation tutorial's loss: the mask rebound by a cast, `*=`; the fixed loss is the "
                 "same for both paddings",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf
            from keras import ops

            def sequence_loss(y, p, lengths):
                per_step = keras.losses.mean_squared_error(y, p)
                weights = tf.cast(tf.sequence_mask(lengths, tf.shape(y)[1]), per_step.dtype)
                return tf.reduce_mean(per_step * weights)

            def token_loss(y, p):
                keep = ops.cast(y != 0, "float32")
                return ops.mean(ops.multiply(keras.losses.sparse_categorical_crossentropy(y, p), keep))

            def padded(y, p, padding_mask):
                return tf.math.reduce_mean(tf.abs(y - p) * padding_mask)
            """,
            at=[(8, 12, "`tf.reduce_mean` of a value multiplied by a padding mask"),
                (12, 12, "`keras.ops.mean` of a value multiplied by a padding mask"),
                (15, 12, "`tf.math.reduce_mean` of a value multiplied by a padding mask")],
            note="an inline product with a sequence mask, keras.ops with a Python comparison, a parameter named "
                 "for padding; no fix (the product is not a name)",
        ),
        flagged(
            """
            import tensorflow as tf

            def masked(loss, mask):
                loss = loss * mask
                return tf.reduce_mean(loss)

            def step(y, p):
                return masked(tf.square(y - p), tf.cast(tf.not_equal(y, 0.0), tf.float32))
            """,
            """
            import tensorflow as tf

            def masked(loss, mask):
                loss = loss * mask
                return tf.math.divide_no_nan(tf.reduce_sum(loss), tf.reduce_sum(tf.broadcast_to(mask, tf.shape(loss))))

            def step(y, p):
                return masked(tf.square(y - p), tf.cast(tf.not_equal(y, 0.0), tf.float32))
            """,
            at=[(5, 12, "`tf.reduce_mean` of a value multiplied by a padding mask")],
            run="""
            y = tf.constant([[1.0, 2.0, 0.0], [3.0, 0.0, 0.0]])
            result = float(step(y, tf.ones([2, 3])))
            """,
            effect=CHANGES,
            note="a bare `mask` parameter that the module's call fills with a padding comparison",
        ),
        flagged(
            """
            import tensorflow as tf

            def loss_function(real, pred):
                mask = tf.cast(tf.math.not_equal(real, 0), tf.float32)
                loss = tf.square(pred - tf.cast(real, tf.float32)) * mask
                return tf.reduce_mean(loss) / tf.distribute.get_strategy().num_replicas_in_sync
            """,
            """
            import tensorflow as tf

            def loss_function(real, pred):
                mask = tf.cast(tf.math.not_equal(real, 0), tf.float32)
                loss = tf.square(pred - tf.cast(real, tf.float32)) * mask
                return tf.math.divide_no_nan(tf.reduce_sum(loss), tf.reduce_sum(tf.broadcast_to(mask, tf.shape(loss)))) / tf.distribute.get_strategy().num_replicas_in_sync
            """,
            at=[(6, 12, "`tf.reduce_mean` of a value multiplied by a padding mask")],
            run="""
            result = float(loss_function(tf.constant([[1, 2, 0, 0]]), tf.constant([[0.0, 0.0, 5.0, 5.0]])))
            """,
            effect=CHANGES,
            note="divided by the replica count (TFG504's fix): a scale, the mean is still over padding",
        ),
        clean(
            """
            import tensorflow as tf

            def loss_function(real, pred, loss_object):
                mask = tf.math.logical_not(tf.math.equal(real, 0))
                loss_ = loss_object(real, pred)
                mask = tf.cast(mask, dtype=loss_.dtype)
                loss_ *= mask
                return tf.reduce_sum(loss_) / tf.reduce_sum(mask)

            def ratio(loss, real):
                mask = tf.cast(real != 0, loss.dtype)
                return tf.reduce_mean(loss * mask) / tf.reduce_mean(mask)

            def per_step(loss, real):
                mask = tf.cast(real != 0, loss.dtype)
                return tf.reduce_mean(loss * mask, axis=-1)
            """,
            note="the masked mean written two ways, and a mean along an axis",
        ),
        clean(
            """
            import tensorflow as tf

            def inpainting_l1(y, p, mask):
                return tf.reduce_mean(tf.abs(y - p) * mask)

            def attention(scores, attention_mask):
                return tf.reduce_mean(scores * attention_mask)

            def weighted(loss, weights):
                return tf.reduce_mean(loss * weights)

            def holes(image, target):
                hole = tf.cast(tf.equal(image, 0.0), tf.float32)
                return tf.reduce_mean(tf.abs(image - target) * hole)
            """,
            note="a bare `mask` nothing fills, attention masks, weights, a mask of the padding itself (equal)",
        ),
    ]
