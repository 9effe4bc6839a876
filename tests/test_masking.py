"""semantic/masking.py: padding masks, and means over values multiplied by one."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.model import walk

CODE = cst.Module(body=[]).code_for_node


def _means(source: str):
    """{function name: [(mean call code, mask code)]} for every call of the function bodies."""
    ctx = analyse(cst.parse_module(textwrap.dedent(source)), [])
    out = {}
    for scope in ctx.model.scopes:
        if scope.kind != "function":
            continue
        found = []
        for call in scope.calls:
            mean = ctx.masks.masked_mean(call, scope)
            if mean is not None:
                found.append((CODE(call), CODE(mean.mask)))
        out[scope.name] = found
    return out


def test_a_mean_of_a_product_with_a_padding_mask_names_the_mask():
    means = _means("""
        import tensorflow as tf
        from keras import ops

        def tutorial(real, pred, loss_object):
            mask = tf.math.logical_not(tf.math.equal(real, 0))
            loss_ = loss_object(real, pred)
            mask = tf.cast(mask, dtype=loss_.dtype)
            loss_ *= mask
            return tf.reduce_mean(loss_)

        def lengths(loss, n, t):
            return tf.reduce_mean(tf.multiply(loss, tf.cast(tf.sequence_mask(n, t), tf.float32)))

        def compare(loss, y):
            m = ops.cast(y > 0, "float32")
            out = m * loss
            return ops.mean(out, axis=None)

        def complement(loss, y):
            pad = tf.cast(tf.equal(y, 0), tf.float32)
            return tf.reduce_mean(loss * (1 - pad))

        def numpy_mask(loss, y):
            import numpy as np
            return tf.reduce_mean(loss * (1.0 - np.equal(y, 0)))
    """)
    assert means["tutorial"] == [("tf.reduce_mean(loss_)", "mask")]
    assert means["lengths"] == [("tf.reduce_mean(tf.multiply(loss, tf.cast(tf.sequence_mask(n, t), tf.float32)))",
                                 "tf.cast(tf.sequence_mask(n, t), tf.float32)")]
    assert means["compare"] == [("ops.mean(out, axis=None)", "m")]
    assert means["complement"] == [("tf.reduce_mean(loss * (1 - pad))", "(1 - pad)")]
    assert means["numpy_mask"] == [("tf.reduce_mean(loss * (1.0 - np.equal(y, 0)))", "(1.0 - np.equal(y, 0))")]


def test_parameters_are_masks_by_what_the_module_passes_or_by_a_padding_name():
    means = _means("""
        import tensorflow as tf

        def filled(loss, mask):
            return tf.reduce_mean(loss * mask)

        def caller(y, p):
            return filled(tf.abs(y - p), tf.cast(y != 0, tf.float32))

        def named(loss, seq_mask):
            return tf.reduce_mean(loss * seq_mask)

        def bare(loss, mask):
            return tf.reduce_mean(loss * mask)

        def image(loss, y):
            return filled2(loss, tf.cast(tf.equal(y, 0), tf.float32))

        def filled2(loss, mask):
            return tf.reduce_mean(loss * mask)
    """)
    assert means["filled"] == [("tf.reduce_mean(loss * mask)", "mask")]
    assert means["named"] == [("tf.reduce_mean(loss * seq_mask)", "seq_mask")]
    assert means["bare"] == [] and means["filled2"] == []  # nothing fills it; a mask of the padding itself


def test_the_mask_reduced_or_the_mean_divided_or_an_axis_is_no_masked_mean():
    source = """
        import tensorflow as tf

        def summed(loss, y):
            mask = tf.cast(tf.not_equal(y, 0), loss.dtype)
            loss *= mask
            return tf.reduce_mean(loss) * tf.size(mask, out_type=loss.dtype) / tf.reduce_sum(mask)

        def counted(loss, y):
            mask = y != 0
            return tf.reduce_mean(loss * tf.cast(mask, loss.dtype)) / tf.cast(tf.math.count_nonzero(mask), loss.dtype)

        def axis(loss, y):
            return tf.reduce_mean(loss * tf.cast(y != 0, loss.dtype), axis=1)

        def rebound(loss, y):
            loss = loss * tf.cast(y != 0, loss.dtype)
            loss = loss + 1.0
            return tf.reduce_mean(loss)
    """
    assert _means(source) == {"summed": [], "counted": [], "axis": [], "rebound": []}
    ctx = analyse(cst.parse_module(textwrap.dedent("""
        import tensorflow as tf

        def divided(loss, y, count):
            mask = tf.cast(y != 0, loss.dtype)
            return tf.reduce_mean(loss * mask) / count
    """)), [])
    scope = next(s for s in ctx.model.scopes if s.name == "divided")
    mean = next(c for c in walk(scope.node) if isinstance(c, cst.Call) and CODE(c).startswith("tf.reduce_mean(loss"))
    assert ctx.masks.masked_mean(mean, scope) is not None  # the fact alone: a mean over padding ...
    assert ctx.masks.masked_mean(mean, scope, divisor=cst.Name("count")) is None  # ... unless divided (the rule
    # tells it), but not by a scale: the replica count or a number
    replicas = cst.parse_expression("tf.distribute.get_strategy().num_replicas_in_sync")
    assert ctx.masks.masked_mean(mean, scope, divisor=replicas) is not None
    assert ctx.masks.masked_mean(mean, scope, divisor=cst.Integer("2")) is not None


def test_a_fix_may_write_the_mask_again_only_where_it_is_one_stable_name():
    ctx = analyse(cst.parse_module(textwrap.dedent("""
        import tensorflow as tf

        def kept(loss, y):
            mask = tf.cast(y != 0, loss.dtype)
            loss *= mask
            return tf.reduce_mean(loss)

        def rebound(loss, y):
            mask = tf.cast(y != 0, loss.dtype)
            loss *= mask
            mask = tf.ones_like(mask)
            return tf.reduce_mean(loss)
    """)), [])
    stable = {}
    for scope in ctx.model.scopes:
        for call in scope.calls:
            found = ctx.masks.masked_mean(call, scope)
            if found is not None:
                stable[scope.name] = found.stable
    assert stable == {"kept": True, "rebound": False}
