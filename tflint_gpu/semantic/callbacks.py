"""Keras callbacks given to ``fit``, and the figure each one watches.

``given_callbacks(expr, flow, objects)`` answers "which callback objects may the
``callbacks=`` argument ``expr`` of a ``fit`` hold?": the expressions (with the
scope each is read in) found as elements of every list or tuple display the
argument may come from (``semantic.flow``: names, parameters, ``self.x``, the
module's defs), of the displays concatenated with ``+``, and what the code
appends to or extends a named list with (``cbs.append(es)``, ``cbs +=
[es]``), each element followed through ``Flow.sources`` in turn. ``complete``
is False when something else may be in the list too (an unknown source, a
starred element, a comprehension).

``watched_metric(call, scope, migration)`` answers "which logged figure does
this callback act on?" (with its class) for the callbacks that act only on a figure (``MONITORING``):
the ``monitor`` argument (a literal, or a name bound once to one) or the class's
default, and only where the callback depends on it (``ModelCheckpoint`` only
with ``save_best_only=True``). None when the callback is not one of those, the
figure cannot be read, or ``*args``/``**kwargs`` may hold an argument.

``fit_validates(call)`` answers "may this ``fit`` log validation figures?":
True when it is given ``validation_data`` or ``validation_split`` other than a
literal ``None``/``0`` (anything unreadable counts as validating), False when
neither is given, None when ``*args``/``**kwargs`` may hold them.

``LoggedFigures(ctx)`` (``facts.logged_figures``) answers "is this a Keras 3 History's ``history``
dict, or a Keras 3 callback's epoch ``logs``?" and "which keys does the module store itself?".
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.semantic.api import arguments_by_name
from tflint_gpu.semantic.literals import literal_value
from tflint_gpu.semantic.model import ASSIGNED, AUGMENTED, ScopeInfo, lookup
from tflint_gpu.semantic.objects import ADD, EXTEND

Source = Tuple[cst.BaseExpression, ScopeInfo]
_DEPTH = 6

# The callbacks that act only on a logged figure: (position of ``monitor``, default monitor, the
# boolean argument the watching depends on as (position, keyword) or None). Keras 3.15.1
# (keras/src/callbacks/early_stopping.py, reduce_lr_on_plateau.py, model_checkpoint.py) and tf_keras
# 2.21.0 (tf_keras/src/callbacks.py) declare the same parameters in the same order and the same
# default; tests/test_callbacks.py checks this table against both installed signatures.
MONITORING: Dict[str, Tuple[int, str, Optional[Tuple[int, str]]]] = {
    "keras.callbacks.EarlyStopping": (0, "val_loss", None),
    "keras.callbacks.ReduceLROnPlateau": (0, "val_loss", None),
    "keras.callbacks.ModelCheckpoint": (1, "val_loss", (3, "save_best_only")),
}

# ``Model.fit``'s parameters in order, as Keras 3.15 and tf_keras 2.21 both declare them (tf_keras
# adds max_queue_size, workers, use_multiprocessing after these), and tf_keras's ``fit_generator``.
FIT_PARAMETERS = ("x", "y", "batch_size", "epochs", "verbose", "callbacks", "validation_split", "validation_data",
                  "shuffle", "class_weight", "sample_weight", "initial_epoch", "steps_per_epoch",
                  "validation_steps", "validation_batch_size", "validation_freq", "max_queue_size", "workers",
                  "use_multiprocessing")
FIT_GENERATOR_PARAMETERS = ("x", "steps_per_epoch", "epochs", "verbose", "callbacks", "validation_data",
                            "validation_steps", "validation_freq", "class_weight", "max_queue_size", "workers",
                            "use_multiprocessing", "shuffle", "initial_epoch")


def fit_arguments(call: cst.Call, method: str) -> Optional[Dict[str, cst.BaseExpression]]:
    """``fit``'s (``fit_generator``'s) arguments by parameter name; None when ``*``/``**`` may hold any."""
    return arguments_by_name(call, FIT_PARAMETERS if method == "fit" else FIT_GENERATOR_PARAMETERS)


def fit_validates(call: cst.Call, method: str, scope: ScopeInfo) -> Optional[bool]:
    given = fit_arguments(call, method)
    if given is None:
        return None
    for name, absent in (("validation_data", (None,)), ("validation_split", (None, 0, 0.0))):
        value = given.get(name)
        if value is None:
            continue
        read = literal_value(value, scope)
        if read is None or read[0] not in absent:
            return True
    return False


def watched_metric(call: cst.Call, scope: ScopeInfo, migration) -> Optional[Tuple[str, str]]:
    """(the callback's class, the figure it watches); see the module's docstring."""
    cls = migration._call_class(call, scope)
    table = MONITORING.get(cls or "")
    if table is None or any(arg.star for arg in call.args):
        return None
    position, default, gate = table
    names = ["" for _ in range(max(position, gate[0] if gate else 0) + 1)]
    names[position] = "monitor"
    if gate is not None:
        names[gate[0]] = gate[1]
    given = arguments_by_name(call, names)
    if given is None:
        return None
    if gate is not None:
        flag = given.get(gate[1])
        read = literal_value(flag, scope) if flag is not None else None
        if read is None or read[0] is not True:
            return None  # the default (False) or unreadable: the callback does not depend on the figure
    monitor = given.get("monitor")
    if monitor is None:
        return cls, default
    read = literal_value(monitor, scope)
    return (cls, read[0]) if read is not None and isinstance(read[0], str) else None


class Given:
    __slots__ = ("found", "complete")

    def __init__(self) -> None:
        self.found: List[Source] = []
        self.complete = True

    def add(self, expr: cst.BaseExpression, scope: ScopeInfo) -> None:
        if all(e is not expr for e, _ in self.found):
            self.found.append((expr, scope))


def given_callbacks(expr: cst.BaseExpression, scope: ScopeInfo, flow, objects) -> Given:
    result = Given()
    _containers(expr, scope, flow, objects, result, 0)
    return result


def _containers(expr: cst.BaseExpression, scope: ScopeInfo, flow, objects, result: Given, depth: int) -> None:
    if depth > _DEPTH:
        result.complete = False
        return
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        _containers(expr.left, scope, flow, objects, result, depth + 1)
        _containers(expr.right, scope, flow, objects, result, depth + 1)
        return
    if isinstance(expr, cst.Name):
        _additions(expr.value, scope, flow, objects, result, depth)
        extended = _extended_list(expr.value, scope)
        if extended is not None:  # cbs = [...]; cbs += [...]: the first list and what is added (above)
            for value, where in extended:
                _containers(value, where, flow, objects, result, depth + 1)
            return
    sources = flow.sources(expr, scope)
    if sources.unknown:
        result.complete = False
    for container, where in sources.values():
        if isinstance(container, cst.BinaryOperation) and container is not expr:
            _containers(container, where, flow, objects, result, depth + 1)
        elif isinstance(container, (cst.List, cst.Tuple)):
            for element in container.elements:
                if isinstance(element, cst.StarredElement):
                    _containers(element.value, where, flow, objects, result, depth + 1)
                else:
                    _elements(element.value, where, flow, result)
        else:
            result.complete = False


def _extended_list(name: str, scope: ScopeInfo) -> Optional[List[Source]]:
    """The values bound to ``name`` when it is also extended in place with ``+=`` (which the flow does
    not follow): its plain bindings, each with its scope; None when it is not so extended or bound
    otherwise too (a loop, a parameter)."""
    found = lookup(name, scope, None)
    if found is None or found.kind != ASSIGNED or found.writers:
        return None
    plain: List[Source] = []
    extended = False
    for value in found.own_values:
        if isinstance(value, cst.BaseExpression):
            plain.append((value, found.scope))
        elif isinstance(value, tuple) and value[0] == AUGMENTED and isinstance(value[1], cst.AugAssign) \
                and isinstance(value[1].operator, cst.AddAssign):
            extended = True
        else:
            return None
    return plain if extended and plain else None


def _additions(name: str, scope: ScopeInfo, flow, objects, result: Given, depth: int) -> None:
    """What the code appends to (``ADD``) or extends (``EXTEND``) the list bound to ``name`` with."""
    found = lookup(name, scope, None)
    if found is None or found.kind != ASSIGNED:
        return
    for how, value, _ in objects.container_additions(found.scope, name):
        if not isinstance(value, cst.BaseExpression):
            result.complete = False
        elif how == ADD:
            _elements(value, found.scope, flow, result)
        elif how == EXTEND:
            _containers(value, found.scope, flow, objects, result, depth + 1)


def _elements(expr: cst.BaseExpression, scope: ScopeInfo, flow, result: Given) -> None:
    sources = flow.sources(expr, scope)
    if sources.unknown:
        result.complete = False
    for made, where in sources.values():
        result.add(made, where)


# -- the figures Keras logs ------------------------------------------------------------------

_FITS = frozenset({"fit", "fit_generator"})
_EPOCH_HOOK = "on_epoch_end"  # the only hook whose logs held Keras 2's "lr" (its rate callbacks write it there)


class LoggedFigures:
    """What a module reads of the figures Keras logs, in Keras 3 code.

    ``history_fits(expr, scope)``: is ``expr`` the ``history`` dict of a Keras 3 ``History`` (the
    result of ``model.fit(...)``/``fit_generator``, ``model.history``, ``keras.callbacks.History()``),
    read directly or through names and parameters (``h = history.history``; ``plot(history)``)?
    The ``fit`` calls that made it (empty when one is not a ``fit``: ``model.history``), or None.
    ``epoch_logs(expr, scope)``: is ``expr`` the ``logs`` of ``on_epoch_end`` in a Keras 3
    ``Callback`` subclass? ``written_keys()``: the string keys the module stores into any
    mapping (``logs["lr"] = ...``, ``d.update(lr=...)``, ``d.setdefault("lr", ...)``): a key of
    its own making, which no Keras rename touches.
    """

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.migration = ctx.migration
        self.flow = ctx.graphs.flow
        self._written: Optional[frozenset] = None

    def history_fits(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int = 0) -> Optional[List[Source]]:
        if depth > _DEPTH:
            return None
        if isinstance(expr, cst.Attribute) and expr.attr.value == "history":
            return self._history_object(expr.value, scope)
        sources = self.flow.sources(expr, scope)
        values = sources.values()
        if sources.unknown or not values or any(v is expr for v, _ in values):
            return None
        found: List[Source] = []
        for value, where in values:
            if not (isinstance(value, cst.Attribute) and value.attr.value == "history"):
                return None
            fits = self._history_object(value.value, where)
            if fits is None:
                return None
            found.extend(fits)
        return found

    def _history_object(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[List[Source]]:
        """The ``fit`` calls that made the History ``expr`` (``[]`` for a model's ``history`` or a
        ``History()`` made in the module); None when it may be something else."""
        if isinstance(expr, cst.Attribute) and expr.attr.value == "history":
            return [] if self._keras3_model(expr.value, scope, "history") else None
        sources = self.flow.sources(expr, scope)
        values = sources.values()
        if sources.unknown or not values:
            return None
        found: List[Source] = []
        for value, where in values:
            if not isinstance(value, cst.Call):
                if isinstance(value, cst.Attribute) and value.attr.value == "history" and value is not expr \
                        and self._keras3_model(value.value, where, "history"):
                    continue
                return None
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value in _FITS:
                if not self._keras3_model(func.value, where, func.attr.value):
                    return None
                found.append((value, where))
            elif self.migration._call_class(value, where) == "keras.callbacks.History" \
                    and self.migration.api_flavour(func, where) == "keras3" and not self.migration.legacy_env:
                continue
            else:
                return None
        return found

    def _keras3_model(self, expr: cst.BaseExpression, scope: ScopeInfo, method: str) -> bool:
        ctx = self.ctx
        if ctx.value_kind(expr, scope) == "keras":
            return self.migration.object_flavour(expr, scope) == "keras3" and not self.migration.legacy_env
        saved = ctx.scope
        ctx.scope = scope
        try:
            return ctx.unknown_keras3_model(expr, method)
        finally:
            ctx.scope = saved

    def epoch_logs(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        if not isinstance(expr, cst.Name) or scope.kind != "function" or scope.name != _EPOCH_HOOK:
            return False
        function = scope.node
        params = function.params.params if isinstance(function, cst.FunctionDef) else ()
        if len(params) < 3 or params[2].name.value != expr.value:
            return False
        cls = scope.method_class()
        if cls is None:
            return False
        base = self.migration.class_base(cls)
        return base is not None and base.startswith("keras.callbacks.") \
            and self.migration.graphs.keras_flavour(cls) == "keras3" and not self.migration.legacy_env

    def written_keys(self) -> frozenset:
        if self._written is None:
            self._written = frozenset(_stored_keys(self.ctx.model.root.node))
        return self._written


class _StoredKeys(cst.CSTVisitor):
    def __init__(self) -> None:
        self.keys: Set[str] = set()

    def _key(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Subscript) and len(target.slice) == 1 \
                and isinstance(target.slice[0].slice, cst.Index):
            read = _string(target.slice[0].slice.value)
            if read is not None:
                self.keys.add(read)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._key(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._key(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._key(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("update", "setdefault", "__setitem__"):
            return
        for arg in node.args:
            if arg.keyword is not None:
                self.keys.add(arg.keyword.value)
            elif isinstance(arg.value, cst.Dict):
                for element in arg.value.elements:
                    if isinstance(element, cst.DictElement):
                        read = _string(element.key)
                        if read is not None:
                            self.keys.add(read)
        if func.attr.value in ("setdefault", "__setitem__") and node.args:
            read = _string(node.args[0].value)
            if read is not None:
                self.keys.add(read)


def _string(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _stored_keys(module: cst.CSTNode) -> Set[str]:
    visitor = _StoredKeys()
    module.visit(visitor)
    return visitor.keys


__all__ = ["FIT_GENERATOR_PARAMETERS", "FIT_PARAMETERS", "Given", "LoggedFigures", "MONITORING", "fit_arguments",
           "fit_validates", "given_callbacks", "watched_metric"]
