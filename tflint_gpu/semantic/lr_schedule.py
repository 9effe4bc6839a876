"""Which optimizers were built on a learning-rate schedule.

``LearningRates(migration).schedule(expr, scope)`` answers "was the optimizer
``expr`` names made with a ``LearningRateSchedule`` as its learning rate?" with
the schedule's call, or None when the file does not tell. It follows, through
``semantic.flow`` (names, ``self.x`` attributes, parameters, the module's
defs):

* the optimizer to the calls that made it: every one a Keras optimizer class
  (``keras.optimizers.Adam(...)``, ``tf.keras.optimizers.experimental.SGD``;
  not ``optimizers.legacy.X``, whose learning rate may be replaced), nothing
  else reaching it (a ``None`` binding aside);
* a model's ``optimizer`` (``model.optimizer``) to the ``optimizer=`` (or first)
  argument of every ``compile`` of the same model in the module (the same call
  made both receivers: ``migration.made_by``);
* each optimizer's ``learning_rate=`` (``lr=``, or first) argument to the calls
  that made it: every one a schedule (``keras.optimizers.schedules.X``, a
  same-module subclass of ``LearningRateSchedule``, ``keras.experimental.CosineDecay``).

Every maker must be a schedule-built optimizer: an optimizer that may also be
made with a float learning rate is not one.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.semantic.migration import KERAS3

Made = Tuple[cst.Call, ScopeInfo]
_DEPTH = 4
LR_CALLBACKS = frozenset({"keras.callbacks.ReduceLROnPlateau", "keras.callbacks.LearningRateScheduler"})
_EXPERIMENTAL_SCHEDULES = frozenset({
    "keras.experimental.CosineDecay", "keras.experimental.CosineDecayRestarts",
    "keras.experimental.LinearCosineDecay", "keras.experimental.NoisyLinearCosineDecay",
})


def is_optimizer_class(qualname: Optional[str]) -> bool:
    """A normalized Keras optimizer class whose learning rate is not settable over a schedule (the
    optimizers of Keras 3 and tf_keras since TF 2.11; ``experimental`` ones of TF 2.9/2.10)."""
    if qualname is None:
        return False
    parts = qualname.split(".")
    if parts[:2] != ["keras", "optimizers"] or not parts[-1][:1].isupper():
        return False
    return len(parts) == 3 or (len(parts) == 4 and parts[2] == "experimental")


def is_schedule_class(qualname: Optional[str]) -> bool:
    return qualname is not None and (qualname.startswith("keras.optimizers.schedules.")
                                     or qualname in _EXPERIMENTAL_SCHEDULES)


def argument(call: cst.Call, keywords: Tuple[str, ...], position: int) -> Optional[cst.BaseExpression]:
    """The argument of ``call`` given by one of ``keywords`` or at ``position``; None when absent or
    when a ``*args``/``**kwargs`` may hold it."""
    positional = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if positional == position:
                return arg.value
            positional += 1
        elif arg.keyword.value in keywords:
            return arg.value
    return None


def _picked(value: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The values ``value`` may be: itself, or, for an item picked from a dict, list or tuple display
    (``{"adam": Adam(), "sgd": SGD()}[name]``), every item of the display."""
    if isinstance(value, cst.Subscript) and isinstance(value.value, (cst.Dict, cst.List, cst.Tuple)):
        items: List[cst.BaseExpression] = []
        for element in value.value.elements:
            if isinstance(element, (cst.StarredDictElement, cst.StarredElement)):
                return [value]
            items.append(element.value)
        return items or [value]
    return [value]


class LearningRates:
    def __init__(self, migration) -> None:
        self.migration = migration
        self.graphs = migration.graphs
        self._schedules: Dict[int, Tuple[cst.Call, Optional[Made]]] = {}
        self._compiles: Optional[List[Made]] = None

    # -- optimizers -----------------------------------------------------------------------
    def schedule(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[Made]:
        """The schedule call the optimizer ``expr`` was built on (its first, when several makers
        may have made it, each on a schedule), or None when the file does not tell that it was."""
        return self._schedule(expr, scope, 0)

    def optimizer_calls(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[List[Made]]:
        """Every Keras optimizer call that may have made ``expr``; None when something else may have."""
        return self._optimizer_calls(expr, scope, 0)

    def _schedule(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int) -> Optional[Made]:
        return self._all_built_on(self._optimizer_calls(expr, scope, depth))

    def _all_built_on(self, calls: Optional[List[Made]]) -> Optional[Made]:
        """The first schedule when every one of these optimizer calls is built on one, else None."""
        if not calls:
            return None
        first = None
        for call, where in calls:
            found = self.built_on(call, where)
            if found is None:
                return None
            first = first or found
        return first

    def built_on(self, call: cst.Call, where: ScopeInfo) -> Optional[Made]:
        """The schedule call the optimizer call ``call`` is given as its learning rate, or None."""
        kept = self._schedules.get(id(call))
        if kept is not None and kept[0] is call:
            return kept[1]
        found = None
        rate = argument(call, ("learning_rate", "lr"), 0)
        if rate is not None:
            sources = self.graphs.flow.sources(rate, where)
            values = sources.values()
            if not sources.unknown and values and all(
                    isinstance(v, cst.Call) and is_schedule_class(self.migration._call_class(v, w)) for v, w in values):
                found = values[0]
        self._schedules[id(call)] = (call, found)
        return found

    def _optimizer_calls(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int) -> Optional[List[Made]]:
        if depth > _DEPTH:
            return None
        if isinstance(expr, cst.Attribute) and expr.attr.value == "optimizer":
            known = self.migration.keras_attribute(expr, scope)
            if known is not None and known[0] == "keras.optimizers.Optimizer":
                return self._compiled(expr.value, scope, depth)
        sources = self.graphs.flow.sources(expr, scope)
        if sources.unknown:
            return None
        found: List[Made] = []
        for value, where in sources.values():
            if isinstance(value, cst.Name) and value.value == "None":
                continue
            for item in _picked(value):
                if not isinstance(item, cst.Call) or not is_optimizer_class(self.migration._call_class(item, where)):
                    return None
                found.append((item, where))
        return found or None

    def keras3_optimizer(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is ``expr`` a Keras 3 optimizer by its makers: every call that may have made it (through
        names, ``self.x``, parameters, the module's defs, an item picked from a dict or list display of
        optimizers: ``{"adam": Adam(...), "sgd": SGD(...)}[kind]``, a model's ``optimizer``) makes a
        Keras optimizer spelled as Keras 3 (``keras.optimizers.X``, ``tf.keras`` under a Keras 3
        target)?"""
        calls = self._optimizer_calls(expr, scope, 0)
        return bool(calls) and all(self.migration.api_flavour(call.func, where) == KERAS3 for call, where in calls)

    # -- a model's optimizer --------------------------------------------------------------
    def compiles(self, model: cst.BaseExpression, scope: ScopeInfo) -> List[Made]:
        """The ``compile`` calls of the module whose receiver the same call made as ``model``."""
        made = self.migration.made_by(model, scope)
        if made is None:
            return []
        if self._compiles is None:
            self._compiles = [(node, where) for node, where in self.graphs.model.index.get("Call", ())
                              if isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile"]
        found = []
        for call, where in self._compiles:
            other = self.migration.made_by(call.func.value, where)
            if other is not None and other[0] is made[0]:
                found.append((call, where))
        return found

    def model_schedule(self, model: cst.BaseExpression, scope: ScopeInfo) -> Optional[Made]:
        """The schedule the optimizer of ``model`` (every ``compile`` of it in the module) was built on."""
        return self._all_built_on(self._compiled(model, scope, 0))

    def _compiled(self, model: cst.BaseExpression, scope: ScopeInfo, depth: int) -> Optional[List[Made]]:
        compiles = self.compiles(model, scope)
        if not compiles:
            return None
        found: List[Made] = []
        for call, where in compiles:
            optimizer = argument(call, ("optimizer",), 0)
            if optimizer is None:
                return None
            calls = self._optimizer_calls(optimizer, where, depth + 1)
            if calls is None:
                return None
            found.extend(calls)
        return found

    # -- values set -----------------------------------------------------------------------
    def may_be_schedule(self, value: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """May ``value`` be a schedule or another callable, which an optimizer's ``learning_rate`` setter
        takes in place of its schedule (Keras 3, tf_keras 2.21)? True when something the module does
        not show may make it, for a ``lambda``, a def, a class or import named, ``functools.partial``,
        a schedule or any class of the module made; False for numbers, arithmetic and other calls."""
        sources = self.graphs.flow.sources(value, scope)
        if sources.unknown:
            return True
        for found, where in sources.values():
            if isinstance(found, (cst.Lambda, cst.Name)):
                return True  # a Name source is a def, class, import or builtin, not a number
            if isinstance(found, cst.Call):
                if is_schedule_class(self.migration._call_class(found, where)):
                    return True
                qualname = self.migration.resolver.qualname(found.func, where)
                if qualname == "functools.partial":
                    return True
                if isinstance(found.func, cst.Name) and where.lookup_class(found.func.value) is not None:
                    return True
        return False

    # -- callbacks ------------------------------------------------------------------------
    def rate_callbacks(self, callbacks: cst.BaseExpression, scope: ScopeInfo) -> List[Tuple[cst.Call, str]]:
        """The calls making a Keras callback that sets the optimizer's learning rate
        (``ReduceLROnPlateau``, ``LearningRateScheduler``) among the elements of every list or tuple
        display ``callbacks`` (``fit(callbacks=...)``) may come from, with their class."""
        found: List[Tuple[cst.Call, str]] = []
        flow = self.graphs.flow
        for container, where in flow.sources(callbacks, scope).values():
            if not isinstance(container, (cst.List, cst.Tuple)):
                continue
            for element in container.elements:
                if isinstance(element, cst.StarredElement):
                    continue
                for made, made_where in flow.sources(element.value, where).values():
                    if isinstance(made, cst.Call):
                        cls = self.migration._call_class(made, made_where)
                        if cls in LR_CALLBACKS and all(made is not f for f, _ in found):
                            found.append((made, cls))
        return found
