"""Padding masks, and means taken over masked values.

A sequence batch is padded to its longest member; a loss written for it is
multiplied by a mask that is 1 on real positions and 0 on padding. The facts:

* ``padding_mask(expr, scope)``: is this expression such a mask? It is when
  every value the engine's flow (``semantic.flow``) finds for it is made by a
  comparison that marks padding (``tf.math.logical_not(tf.math.equal(y, 0))``,
  ``tf.not_equal(y, pad)``, ``tf.math.greater(y, 0)``, ``y != 0``, ``y > 0``,
  ``tf.sequence_mask(lengths, ...)``, the ``keras.ops`` spellings), or a cast
  of one (``tf.cast(mask, loss.dtype)``). A parameter no call in the module
  fills counts when its name says it holds padding (``padding_mask``,
  ``pad_mask``, ``seq_mask``, ``sequence_mask``...); a bare ``mask``
  parameter does not (an inpainting loss averages its hole mask over the
  whole image on purpose), nor attention, causal, image or box masks.
* ``masked_mean(call, scope)``: is ``call`` a mean over every element
  (``tf.reduce_mean(v)``, ``tf.math.reduce_mean``, ``keras.ops.mean``,
  ``keras.backend.mean``, no ``axis`` or ``axis=None``) of a product with a
  padding mask: ``v`` written ``loss * mask`` / ``tf.multiply(loss, mask)``,
  or a name whose bindings reaching the mean are all such products (``loss *=
  mask``, ``loss = loss * mask``)? The answer names the mask and the product;
  none when the scope also reduces the mask (``tf.reduce_sum(mask)``,
  ``count_nonzero``: the author divides by it) or the mean is itself divided
  (``divisor``: ``tf.reduce_mean(v) / tf.reduce_mean(mask)`` is the masked
  mean), unless by a number or the replica count (``/
  strategy.num_replicas_in_sync`` scales a per-replica mean: still over
  padding). ``stable`` says whether the mask is a name holding the same value
  at the product and at the mean (what a fix may write again).
"""
from __future__ import annotations

import re
from typing import Callable, List, NamedTuple, Optional

import libcst as cst

from tflint_gpu.semantic.model import ASSIGNED, AUGMENTED, ScopeInfo, lookup, walk

Qualname = Callable[[cst.BaseExpression, ScopeInfo], Optional[str]]

_MEANS = frozenset({"tensorflow.reduce_mean", "tensorflow.math.reduce_mean", "keras.ops.mean",
                    "keras.backend.mean"})
_REDUCTIONS = _MEANS | frozenset({
    "tensorflow.reduce_sum", "tensorflow.math.reduce_sum", "tensorflow.math.count_nonzero",
    "tensorflow.count_nonzero", "keras.ops.sum", "keras.ops.count_nonzero", "keras.backend.sum"})
_MULTIPLY = frozenset({"tensorflow.multiply", "tensorflow.math.multiply", "keras.ops.multiply"})
_CASTS = frozenset({"tensorflow.cast", "tensorflow.dtypes.cast", "keras.ops.cast", "keras.backend.cast",
                    "tensorflow.expand_dims", "keras.ops.expand_dims",
                    "numpy.expand_dims"})
# Comparisons that mark real positions 1 (the pad value is compared, the mask keeps what differs).
_MARKS = frozenset({"tensorflow.math.not_equal", "tensorflow.not_equal", "tensorflow.math.greater",
                    "tensorflow.greater", "keras.ops.not_equal", "keras.ops.greater", "tensorflow.sequence_mask",
                    "keras.ops.sequence_mask", "numpy.not_equal", "numpy.greater"})
# Comparisons that mark the padding itself 1: a mask once negated (logical_not, or 1 - it).
_EQUAL = frozenset({"tensorflow.math.equal", "tensorflow.equal", "keras.ops.equal", "numpy.equal"})
_NOT = frozenset({"tensorflow.math.logical_not", "tensorflow.logical_not", "keras.ops.logical_not",
                  "numpy.logical_not"})
# Names of a parameter that holds a padding mask (a name alone, when no call in the module tells more).
# A bare ``mask`` is not enough: an inpainting loss's ``mask`` (holes of an image) is averaged over the whole
# image on purpose.
_PADDING_NAME = re.compile(r"^(?:padding|pad|seq|sequence|len|length)_masks?$")


class MaskedMean(NamedTuple):
    mask: cst.BaseExpression  # the mask operand of the product
    product: cst.CSTNode  # the BinaryOperation, multiply call or AugAssign that multiplies
    value: cst.BaseExpression  # the mean's argument
    stable: bool  # one product, and its mask a name that holds the same value at the mean


class Masks:
    def __init__(self, flow, qualname: Qualname) -> None:
        self._flow = flow
        self._qualname = qualname

    # -- padding masks ---------------------------------------------------------------
    def padding_mask(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        return self._mask(expr, scope, 0)

    def _mask(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int) -> bool:
        if depth > 4:
            return False
        sources = self._flow.sources(expr, scope)
        if not sources.found:
            return sources.unknown and self._named(expr, scope)
        for value, where in sources.found:
            if not self._marks(value, where, depth):
                return False
        return True

    def _named(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """A parameter (no module call fills it) whose name says padding mask."""
        if not isinstance(expr, cst.Name) or not _PADDING_NAME.match(expr.value):
            return False
        found = lookup(expr.value, scope, None)
        return found is not None and found.kind == ASSIGNED and any(
            isinstance(v, tuple) and v[0] == "param" for v in found.own_values)

    def _marks(self, value: cst.BaseExpression, scope: ScopeInfo, depth: int) -> bool:
        if isinstance(value, cst.Comparison) and len(value.comparisons) == 1:
            return isinstance(value.comparisons[0].operator, (cst.NotEqual, cst.GreaterThan))
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Subtract) \
                and isinstance(value.left, (cst.Integer, cst.Float)) and float(value.left.value) == 1.0:
            return self._padding(value.right, scope, depth + 1)  # 1 - cast(equal(y, 0)): the complement
        if not isinstance(value, cst.Call) or not value.args:
            return False
        name = self._qualname(value.func, scope)
        if name in _MARKS:
            return True
        first = value.args[0].value
        if name in _NOT:
            return self._padding(first, scope, depth + 1)
        if name in _CASTS:
            return self._mask(first, scope, depth + 1)
        return False

    def _padding(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int) -> bool:
        """Is ``expr`` a mask of the padding itself (``equal(y, 0)``, ``y == 0``, a cast of one)?"""
        if depth > 4:
            return False
        inner = self._flow.sources(expr, scope)
        if not inner.found or inner.unknown:
            return False
        for value, where in inner.found:
            if isinstance(value, cst.Comparison) and len(value.comparisons) == 1 \
                    and isinstance(value.comparisons[0].operator, cst.Equal):
                continue
            if not isinstance(value, cst.Call) or not value.args:
                return False
            name = self._qualname(value.func, where)
            if name in _EQUAL:
                continue
            if name in _CASTS and self._padding(value.args[0].value, where, depth + 1):
                continue
            return False
        return True

    # -- means over masked values -----------------------------------------------------
    def masked_mean(self, call: cst.Call, scope: ScopeInfo,
                    divisor: Optional[cst.BaseExpression] = None) -> Optional[MaskedMean]:
        """``divisor``: what the call is divided by, when it is the left side of a division (a masked mean
        already, unless the divisor is a number or the count of replicas: a scale)."""
        if self._qualname(call.func, scope) not in _MEANS or not call.args or call.args[0].keyword is not None:
            return None
        if any(a.star for a in call.args) or len(call.args) > 1 and not _axis_none(call.args[1:]):
            return None
        if divisor is not None and not _scale(divisor):
            return None
        value = call.args[0].value
        products = self._products(value, scope, call)
        if not products:
            return None
        masks = [mask for mask, _ in products]
        if self._reduces(scope, masks):
            return None
        mask, product = products[0]
        return MaskedMean(mask, product, value, len(products) == 1 and self._same_binding(mask, product, call, scope))

    @staticmethod
    def _same_binding(mask: cst.BaseExpression, product: cst.CSTNode, mean: cst.Call, scope: ScopeInfo) -> bool:
        """Does the mask name hold at the mean what it held at the product (not rebound between)?"""
        if not isinstance(mask, cst.Name):
            return False
        at_mean = lookup(mask.value, scope, mean)
        at_product = lookup(mask.value, scope, product)
        return at_mean is not None and at_product is not None and at_mean.own_values == at_product.own_values

    def _products(self, value: cst.BaseExpression, scope: ScopeInfo, at: cst.CSTNode):
        """(mask, node) for each way ``value`` is a product with a padding mask; empty unless every
        reaching binding is one."""
        found = self._product(value, scope)
        if found is not None:
            return [found]
        if not isinstance(value, cst.Name):
            return []
        binding = lookup(value.value, scope, at)
        if binding is None or binding.kind != ASSIGNED or binding.scope is not scope or not binding.own_values:
            return []
        out = []
        for bound in binding.own_values:
            if isinstance(bound, tuple) and bound[0] == AUGMENTED:
                node = bound[1]
                if not isinstance(node.operator, cst.MultiplyAssign) or not self.padding_mask(node.value, scope):
                    return []
                out.append((node.value, node))
            elif isinstance(bound, cst.BaseExpression):
                product = self._product(bound, scope)
                if product is None:
                    return []
                out.append(product)
            else:
                return []
        return out

    def _product(self, expr: cst.BaseExpression, scope: ScopeInfo):
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
            operands = (expr.right, expr.left)
        elif isinstance(expr, cst.Call) and self._qualname(expr.func, scope) in _MULTIPLY and len(expr.args) >= 2:
            operands = (expr.args[1].value, expr.args[0].value)
        else:
            return None
        for operand in operands:
            if self.padding_mask(operand, scope):
                return operand, expr
        return None

    def _reduces(self, scope: ScopeInfo, masks: List[cst.BaseExpression]) -> bool:
        """Does the scope reduce one of the masks (a count of the real positions to divide by)?"""
        masks = [self._uncast(m, scope) for m in masks]
        names = {m.value for m in masks if isinstance(m, cst.Name)}
        for call in scope.calls:
            if not call.args or self._qualname(call.func, scope) not in _REDUCTIONS:
                continue
            first = self._uncast(call.args[0].value, scope)
            if isinstance(first, cst.Name) and first.value in names \
                    or any(first is m or first.deep_equals(m) for m in masks):
                return True
        return False

    def _uncast(self, expr: cst.BaseExpression, scope: ScopeInfo) -> cst.BaseExpression:
        while isinstance(expr, cst.Call) and expr.args and self._qualname(expr.func, scope) in _CASTS:
            expr = expr.args[0].value
        return expr


def _scale(divisor: cst.BaseExpression) -> bool:
    """A number, or an expression of the replica count (``/ strategy.num_replicas_in_sync``): a scale, not
    a count of real positions."""
    if isinstance(divisor, (cst.Integer, cst.Float)):
        return True
    return any(isinstance(node, cst.Attribute) and node.attr.value == "num_replicas_in_sync" for node in walk(divisor))


def _axis_none(args) -> bool:
    for arg in args:
        if arg.keyword is not None and arg.keyword.value not in ("axis", "keepdims", "name"):
            return False
        if (arg.keyword is None or arg.keyword.value == "axis") and not (
                isinstance(arg.value, cst.Name) and arg.value.value == "None"):
            return False
    return True
