"""Training steps a ``tf.distribute`` strategy runs once per replica, and the means they differentiate.

``ReplicaSteps.runs()``
    Every ``strategy.run(fn, ...)`` / ``strategy.experimental_run_v2(fn, ...)`` of the module whose
    receiver is a strategy (``GraphAnalysis.strategy_run``: a name or attribute spelled
    ``...strategy``, or bound once to a ``tf.distribute`` strategy; not one bound to a
    ``OneDeviceStrategy``, which has one replica), with the same-module function it hands over
    (``GraphAnalysis.function_scope``: a function by name, nested or not, ``self.method``, a
    lambda, ``functools.partial(f, ...)``).

``ReplicaSteps.per_replica_mean(node)``
    When ``node`` is a mean over the replica's own data (``tf.reduce_mean``, ``tf.math.reduce_mean``,
    ``keras.ops.mean``, ``keras.backend.mean``; or a sum over a count of the replica's data, as a
    masked mean: ``tf.reduce_sum(loss) / tf.reduce_sum(mask)``, ``tf.math.divide_no_nan(...)``, a
    count by ``tf.math.count_nonzero``, ``tf.size``, ``tf.shape(x)[0]``, through ``tf.cast`` and ``+
    eps``) whose value the GradientTape training step of such a function differentiates: the ``PerReplicaMean`` (the run call, the step); else None. The step is
    ``EagerFacts.step_function`` of the handed function (its own, or one a function it calls by
    name holds). The differentiated value is the first argument of ``tape.gradient`` (of
    ``optimizer.minimize`` with ``tape=``; a lambda's body), followed through
    ``semantic.flow`` (names, parameters, ``self.x``, returns of same-module functions and methods)
    and through ``+``, ``-``, a unary sign and a product with a number: ``0.5 *
    tf.reduce_mean(a) + tf.reduce_mean(b)``. Any other quotient stops it (``mean /
    strategy.num_replicas_in_sync``, ``mean / n``, ``tf.reduce_sum(loss) / GLOBAL_BATCH``: scaled, or
    not told).

    Not a per-replica mean: a step whose update does not aggregate (``apply_gradients(...,
    experimental_aggregate_gradients=False)``, ``skip_gradients_aggregation=True``) or that
    all-reduces itself (any ``.all_reduce(...)`` in the step's function); a mean of a Keras loss
    object built with a reduction other than ``"none"`` (the default included: Keras 3 scales it
    by the number of replicas itself, tf_keras raises ``ValueError`` inside ``strategy.run``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import STRATEGY_RUN_METHODS, argument
from tflint_gpu.semantic.bindings import mentions
from tflint_gpu.semantic.model import ASSIGNED, AUGMENTED, ScopeInfo, assigned, lookup

MEANS = frozenset({"tensorflow.reduce_mean", "tensorflow.math.reduce_mean", "keras.ops.mean",
                   "keras.backend.mean", "tf_keras.backend.mean", "tensorflow.keras.backend.mean"})
_SUMS = frozenset({"tensorflow.reduce_sum", "tensorflow.math.reduce_sum", "keras.ops.sum", "keras.backend.sum",
                   "tf_keras.backend.sum", "tensorflow.keras.backend.sum"})
_COUNTS = _SUMS | {"tensorflow.math.count_nonzero", "tensorflow.size"}
_QUOTIENTS = frozenset({"tensorflow.math.divide_no_nan", "tensorflow.math.divide", "tensorflow.divide",
                        "tensorflow.math.truediv", "tensorflow.truediv", "keras.ops.divide", "keras.ops.divide_no_nan"})
_ONE_REPLICA = "tensorflow.distribute.OneDeviceStrategy"
_NO_AGGREGATION = (("experimental_aggregate_gradients", "False"), ("skip_gradients_aggregation", "True"))
_LOSS_MODULES = ("keras.losses.", "tf_keras.losses.", "tensorflow.keras.losses.", "tensorflow.losses.")
_DEPTH = 8


@dataclass
class PerReplicaMean:
    mean: cst.BaseExpression  # the mean's call, or a quotient (sum over a per-replica count)
    scope: ScopeInfo  # where ``mean`` is written
    run: cst.Call  # strategy.run(fn, ...)
    step: object  # the semantic.eager.TrainingStep differentiating it


class ReplicaSteps:
    def __init__(self, graphs, eager) -> None:
        self.graphs = graphs
        self.eager = eager
        self.resolver = graphs.resolver
        self._runs: Optional[List[Tuple[cst.Call, ScopeInfo, ScopeInfo]]] = None
        self._means: Optional[Dict[int, PerReplicaMean]] = None

    def runs(self) -> List[Tuple[cst.Call, ScopeInfo, ScopeInfo]]:
        """(the run call, the scope it is written in, the function it runs per replica)."""
        if self._runs is None:
            found = []
            for call, scope in self.graphs.model.index.get("Call", ()):
                func = call.func
                if func.__class__ is not cst.Attribute or func.attr.value not in STRATEGY_RUN_METHODS:
                    continue
                if not self.graphs.strategy_run(call, scope) or self._one_replica(func.value, scope):
                    continue
                handed = argument(call, 0, "fn")
                target = self.graphs.function_scope(handed, scope) if handed is not None else None
                if target is not None and target.is_function:
                    found.append((call, scope, target))
            self._runs = found
        return self._runs

    def per_replica_mean(self, call: cst.BaseExpression) -> Optional[PerReplicaMean]:
        if self._means is None:
            self._means = {}
            for run, _, function in self.runs():
                step = self.eager.step_function(function)
                if step is None or not self._aggregates(step):
                    continue
                for mean, where in self._differentiated_means(step):
                    self._means.setdefault(id(mean), PerReplicaMean(mean, where, run, step))
        found = self._means.get(id(call))
        return found if found is not None and found.mean is call else None

    # -- the step ---------------------------------------------------------------------
    def _one_replica(self, receiver: cst.BaseExpression, scope: ScopeInfo) -> bool:
        if not isinstance(receiver, cst.Name):
            return False
        found = assigned(receiver.value, scope)
        made = found.single_value if found is not None else None
        return isinstance(made, cst.Call) and self.resolver.qualname(made.func, found.scope) == _ONE_REPLICA

    @staticmethod
    def _aggregates(step) -> bool:
        """Does the step's update sum the replicas' gradients (no opt-out keyword, no all-reduce of its own)?"""
        for name, value in _NO_AGGREGATION:
            given = argument(step.update, 99, name)
            if isinstance(given, cst.Name) and given.value == value:
                return False
        for scope in {id(step.scope): step.scope, id(step.where): step.where}.values():
            if any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "all_reduce" for c in scope.calls):
                return False
        return True

    def _differentiated_means(self, step) -> List[Tuple[cst.BaseExpression, ScopeInfo]]:
        if step.gradient is not None:
            value = argument(step.gradient, 0, "target")
            if value is None:
                value = argument(step.gradient, 0, "loss")  # optimizer.compute_gradients(loss, ..., tape=)
            scope = step.scope
        else:
            value, scope = argument(step.update, 0, "loss"), step.where
            if isinstance(value, cst.Lambda):
                scope = self.graphs.model.scope_of_node.get(value) or scope
                value = value.body
        found: List[Tuple[cst.BaseExpression, ScopeInfo]] = []
        if value is not None:
            self._means_in(value, scope, found, 0)
        return found

    def _means_in(self, expr: cst.BaseExpression, scope: ScopeInfo, found: List[Tuple[cst.BaseExpression, ScopeInfo]],
                  depth: int) -> None:
        if depth > _DEPTH:
            return
        if isinstance(expr, cst.Name):
            rebound = self._rebound(expr, scope)
            if rebound is not None:  # loss = loss / n, loss /= n: the earlier value is replaced
                for value, where in rebound:
                    self._means_in(value, where, found, depth + 1)
                return
        for source, where in self.graphs.flow.sources(expr, scope).values():
            if isinstance(source, cst.Call):
                qualname = self.resolver.qualname(source.func, where)
                if (qualname in MEANS and not self._scaled_loss(source, where)) or (
                        qualname in _QUOTIENTS and len(source.args) >= 2
                        and self._sum_over_count(source.args[0].value, source.args[1].value, where)):
                    if all(m is not source for m, _ in found):
                        found.append((source, where))
            elif isinstance(source, cst.BinaryOperation):
                operator = source.operator
                if isinstance(operator, cst.Divide) and self._sum_over_count(source.left, source.right, where):
                    if all(m is not source for m, _ in found):
                        found.append((source, where))
                elif isinstance(operator, (cst.Add, cst.Subtract)):
                    self._means_in(source.left, where, found, depth + 1)
                    self._means_in(source.right, where, found, depth + 1)
                elif isinstance(operator, cst.Multiply):
                    if _number(source.left):
                        self._means_in(source.right, where, found, depth + 1)
                    elif _number(source.right):
                        self._means_in(source.left, where, found, depth + 1)
            elif isinstance(source, cst.UnaryOperation) and isinstance(source.operator, (cst.Minus, cst.Plus)):
                self._means_in(source.expression, where, found, depth + 1)

    @staticmethod
    def _rebound(name: cst.Name, scope: ScopeInfo) -> Optional[List[Tuple[cst.BaseExpression, ScopeInfo]]]:
        """When a binding of ``name`` reaching the read is computed from ``name`` itself (``loss = loss /
        n``, ``loss /= n``, ``loss += reg``), what to follow instead of the name's sources (the engine's
        reaching bindings keep a binding made in a ``with`` body next to a later one that replaces it):
        such an expression itself (its own read of ``name`` reaches the earlier value); an augmented
        one's value, and the other bindings only when every augmentation adds, subtracts or multiplies
        by a number. None: no such binding."""
        found = lookup(name.value, scope, name)
        if found is None or found.kind != ASSIGNED:
            return None
        follow: List[Tuple[cst.BaseExpression, ScopeInfo]] = []
        others: List[Tuple[cst.BaseExpression, ScopeInfo]] = []
        selfish = rewritten = False
        keep_others = True
        for value in found.own_values:
            if isinstance(value, tuple) and value and value[0] == AUGMENTED:
                selfish = True
                node = value[1]
                if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
                    follow.append((node.value, found.scope))
                elif not (isinstance(node.operator, cst.MultiplyAssign) and _number(node.value)):
                    keep_others = False
            elif isinstance(value, cst.BaseExpression) and name.value in mentions(value):
                selfish = rewritten = True
                follow.append((value, found.scope))
            elif isinstance(value, cst.BaseExpression):
                others.append((value, found.scope))
        if not selfish:
            return None
        if rewritten:
            keep_others = False  # ``loss = f(loss)``: its own read of ``loss`` reaches the earlier values
        return follow + (others if keep_others else [])

    def _sum_over_count(self, numerator: cst.BaseExpression, denominator: cst.BaseExpression,
                        scope: ScopeInfo) -> bool:
        """Is ``numerator / denominator`` a mean over what this replica holds: a sum (``tf.reduce_sum``)
        over a count of the replica's own data (``tf.reduce_sum(mask)``, ``tf.math.count_nonzero``,
        ``tf.size(x)``, ``tf.shape(x)[0]``; through ``tf.cast`` and ``+ eps``)? Not a sum over a
        number or a name the count cannot be read from (``GLOBAL_BATCH_SIZE``)."""
        sums = self.graphs.flow.sources(numerator, scope)
        if sums.unknown or not sums.values() or not all(
                isinstance(e, cst.Call) and self.resolver.qualname(e.func, w) in _SUMS for e, w in sums.values()):
            return False
        return self._count(denominator, scope, 0)

    def _count(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int) -> bool:
        if depth > 3:
            return False
        if self._first_dimension(expr, scope):
            return True
        found = self.graphs.flow.sources(expr, scope)
        if found.unknown or not found.values():
            return False
        for value, where in found.values():
            if isinstance(value, cst.Call):
                qualname = self.resolver.qualname(value.func, where)
                if qualname in _COUNTS:
                    continue
                if qualname == "tensorflow.cast" and value.args and self._count(value.args[0].value, where, depth + 1):
                    continue
            elif isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) \
                    and _number(value.right) and self._count(value.left, where, depth + 1):
                continue
            elif self._first_dimension(value, where):
                continue
            return False
        return True

    def _first_dimension(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """``tf.shape(x)[0]``: the replica's batch size."""
        return isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Call) \
            and self.resolver.qualname(expr.value.func, scope) == "tensorflow.shape" \
            and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index) \
            and isinstance(expr.slice[0].slice.value, cst.Integer) and expr.slice[0].slice.value.value == "0"

    def _scaled_loss(self, mean: cst.Call, scope: ScopeInfo) -> bool:
        """Is the mean's argument the output of a Keras loss object whose reduction is not "none"
        (a scalar Keras reduces and, under Keras 3, divides by the replicas itself)?"""
        value = argument(mean, 0, "input_tensor") or argument(mean, 0, "x")
        if value is None:
            return False
        for source, where in self.graphs.flow.sources(value, scope).values():
            if not isinstance(source, cst.Call):
                continue
            for maker, made_in in self.graphs.flow.sources(source.func, where).values():
                if not isinstance(maker, cst.Call):
                    continue
                qualname = self.resolver.qualname(maker.func, made_in) or ""
                last = qualname.rsplit(".", 1)[-1]
                if qualname.startswith(_LOSS_MODULES) and last[:1].isupper() and not _reduces_none(maker):
                    return True
        return False


def _reduces_none(maker: cst.Call) -> bool:
    """Was the Keras loss built with ``reduction="none"`` (or ``Reduction.NONE``)?"""
    given = argument(maker, 99, "reduction")
    if isinstance(given, cst.SimpleString):
        return given.evaluated_value == "none"
    if isinstance(given, cst.Attribute):
        return given.attr.value == "NONE"
    return False


def _number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


__all__ = ["MEANS", "PerReplicaMean", "ReplicaSteps"]
