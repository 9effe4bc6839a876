"""Keras model inference calls: which object is a Keras model, and which calls run one.

``ModelCalls`` answers, for the rules about Keras models called per item in a
Python loop (TFG601):

* ``is_model(expr, scope)``: is ``expr`` a Keras model. A Keras object by
  ``values.kind`` (a model or layer class, ``Sequential``, ``load_model``, a
  same-module subclass: only a model has ``predict``/``evaluate``), or one of
  ``migration.object_class``'s model classes, and also an object made by a
  same-module function or method all of whose ``return`` values are models
  (``self.model = self.create_model()``), or an attribute of an object of the
  file's own classes bound to one (``self.critic.model`` after ``self.critic
  = Critic(...)``, ``agent.model``): through ``objects.kind``'s calls.
* ``is_whole_model(expr, scope)``: ``is_model``, and not a bare layer: made
  from a model class (``Sequential``, ``Model``, a subclass of one, a loaded
  model), a ``keras.applications`` architecture, or by a same-module factory
  the engine cannot name a class for (``make_model()``).
* ``inference(call, scope)``: for ``m.predict(x)`` / ``m.predict_on_batch(x)``
  / ``m.evaluate(x, ...)`` on a Keras model, the method name and the data
  argument (``x``, positional or keyword); None otherwise, and None when the
  receiver's same-module class defines the method itself.
* ``forwarder(function)``: a same-module function or method that runs such a
  call on one of its own parameters (``def predict(self, s): return
  self.model.predict(s)``): ``(the inner call, the parameter's index among the
  call's arguments, the method)``, so that a rule can judge each call site of
  the wrapper by what it passes; ``any_forwarder()``: does the module have one
  (no call's callee needs finding where it has none).
* ``per_item(expr, scope, at)``: is ``expr`` built as one sample with a batch
  axis of 1: ``np.reshape(s, [1, n])``, ``s.reshape(1, -1)``,
  ``np.expand_dims(s, 0)`` / ``tf.expand_dims(s, 0)``, ``s[None]`` /
  ``s[np.newaxis]``, ``np.array([s])``, ``np.atleast_2d(s)``, ``x[i:i + 1]``,
  directly or through a name bound (where ``at`` reads it) only to such values.

Nothing here walks the whole tree: returns are read per function asked about
(memoised), and everything else follows the bindings the model already has.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import argument, keyword
from tflint_gpu.semantic.migration import is_model_class
from tflint_gpu.semantic.model import ASSIGNED, ScopeInfo, assigned, returns
from tflint_gpu.semantic.values import KERAS

INFERENCE_METHODS = ("predict", "predict_on_batch", "evaluate")
_DEPTH = 6
_EXPAND = frozenset({"numpy.expand_dims", "tensorflow.expand_dims", "keras.ops.expand_dims"})
_ONE_ELEMENT = frozenset({"numpy.array", "numpy.asarray", "tensorflow.constant", "tensorflow.convert_to_tensor"})
_RESHAPE = frozenset({"numpy.reshape", "tensorflow.reshape", "keras.ops.reshape"})
# Libraries whose names (functions, classes, modules) are never a model instance.
_LIBRARIES = frozenset({"tensorflow", "keras", "tf_keras", "numpy", "builtins"})


class ModelCalls:
    def __init__(self, resolver, graphs, values, migration) -> None:
        self.resolver = resolver
        self.graphs = graphs
        self.values = values
        self.migration = migration
        self._returns: Dict[int, Optional[bool]] = {}
        self._forwarders: Dict[int, Optional[Tuple[cst.Call, int, str]]] = {}
        self._any_forwarder: Optional[bool] = None

    # -- models ---------------------------------------------------------------
    def is_model(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int = 0) -> bool:
        if depth > _DEPTH:
            return False
        if expr.__class__ is cst.Name or expr.__class__ is cst.Attribute:
            qualname = self.resolver.qualname(expr, scope)
            if qualname is not None and qualname.partition(".")[0] in _LIBRARIES:
                return False  # a library's function, class or module: no model object (a rule asks of every call)
        if self.values.kind(expr, scope) == KERAS:
            return True
        if is_model_class(self.migration.object_class(expr, scope)):
            return True
        if isinstance(expr, cst.Call):
            return self._call_makes_model(expr, scope, depth)
        if isinstance(expr, cst.Name):
            # Bound several times (`model = load_model(p) if p else self._model`, if/else):
            # a model whichever binding reaches.
            found = assigned(expr.value, scope)
            if found is not None and found.kind == ASSIGNED and expr.value not in found.scope.globals:
                values = [v for v in found.values if not (isinstance(v, cst.Name) and v.value == "None")]
                if len(values) > 1 and all(isinstance(v, cst.BaseExpression) for v in values):
                    # One binding a model, none known to be anything else (a library's object,
                    # a literal): the code uses the name as one object whichever branch ran.
                    models = [self.is_model(v, found.scope, depth + 1) for v in values]
                    if all(models):
                        return True
                    return any(models) and not any(self._other_object(v, found.scope)
                                                   for v, is_one in zip(values, models) if not is_one)
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return False
        kind = self.graphs.objects.kind(expr, scope)
        if kind.classes or not (kind.calls or kind.instances):
            return False
        if not all(is_model_class(self.migration.class_base(cls)) for cls in kind.instances):
            return False
        return all(self._call_makes_model(call, where, depth + 1) for call, where in kind.calls)

    def is_whole_model(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int = 0) -> bool:
        if depth > _DEPTH or not self.is_model(expr, scope):
            return False
        made = self.migration.object_class(expr, scope)
        if made is not None:
            return is_model_class(made) or made.startswith("keras.applications.")
        if isinstance(expr, cst.Name):
            found = assigned(expr.value, scope)
            values = [v for v in found.values if not (isinstance(v, cst.Name) and v.value == "None")] \
                if found is not None and found.kind == ASSIGNED else []
            if len(values) > 1:  # bound in branches: a model whichever binding reaches
                return all(isinstance(v, cst.BaseExpression) and self.is_whole_model(v, found.scope, depth + 1)
                           for v in values)
        return True  # a same-module factory or object whose class the engine cannot name

    def _other_object(self, value: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Known to be no Keras model: a literal or display, or made by another library."""
        if isinstance(value, cst.Call):
            qualname = self.resolver.qualname(value.func, scope)
            return qualname is not None and not qualname.startswith("keras.")
        return not isinstance(value, (cst.Name, cst.Attribute, cst.Subscript))

    def _call_makes_model(self, call: cst.Call, scope: ScopeInfo, depth: int) -> bool:
        if self.values.kind(call, scope) == KERAS or is_model_class(self.migration.object_class(call, scope)):
            return True
        target = self._callee(call, scope)
        return target is not None and self._returns_model(target, depth + 1)

    def _callee(self, call: cst.Call, scope: ScopeInfo) -> Optional[ScopeInfo]:
        target = self.graphs.function_scope(call.func, scope)
        if target is not None and target.kind == "function":
            return target
        methods = self.graphs.object_callees(call, scope)
        return methods[0] if len(methods) == 1 and methods[0].kind == "function" else None

    def _returns_model(self, function: ScopeInfo, depth: int) -> bool:
        key = id(function)
        if key in self._returns:
            return bool(self._returns[key])
        self._returns[key] = None  # recursion gives nothing
        found = False
        if isinstance(function.node, cst.FunctionDef):
            values = [n.value for n in returns(function.node.body)]
            found = bool(values) and all(v is not None and self.is_model(v, function, depth) for v in values)
        self._returns[key] = found
        return found

    # -- calls ----------------------------------------------------------------
    def inference(self, call: cst.Call, scope: ScopeInfo) -> Optional[Tuple[str, Optional[cst.BaseExpression]]]:
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in INFERENCE_METHODS:
            return None
        method = func.attr.value
        if self.graphs.object_callees(call, scope):
            return None  # the file's own class defines it
        if not self.is_model(func.value, scope) and not self._keras_spelling(call, func, scope):
            return None
        return method, argument(call, 0, "x")

    def _keras_spelling(self, call: cst.Call, func: cst.Attribute, scope: ScopeInfo) -> bool:
        """An object the file cannot tell, called with what only Keras's methods take:
        ``predict_on_batch``, or ``predict``/``evaluate`` with ``verbose=`` (scikit-learn's
        ``predict`` has no such argument), on an attribute or name the file binds to no
        other library object."""
        if func.attr.value != "predict_on_batch" and keyword(call, "verbose") is None:
            return False
        receiver = func.value
        if not isinstance(receiver, (cst.Name, cst.Attribute)) or self.resolver.raw_qualname(receiver, scope):
            return False
        kind = self.graphs.objects.kind(receiver, scope)
        if kind.instances or kind.classes:
            return False
        for made, where in kind.calls:
            qualname = self.resolver.qualname(made.func, where)
            if qualname is not None and not qualname.startswith("keras."):
                return False  # made by another library (a scikit-learn estimator...)
        return True

    def forwarder(self, function: ScopeInfo) -> Optional[Tuple[cst.Call, int, str]]:
        """(inner inference call, index of the parameter among a call's arguments, method)."""
        key = id(function)
        if key in self._forwarders:
            return self._forwarders[key]
        self._forwarders[key] = None
        found = None
        node = function.node
        if isinstance(node, cst.FunctionDef):
            params = [p.name.value for p in node.params.params]
            if function.binds_instance and params:
                params = params[1:]
            for inner in self.graphs.model.nodes_in(function, "Call"):  # the walk's index, no new walk
                func = inner.func
                if not isinstance(func, cst.Attribute) or func.attr.value not in INFERENCE_METHODS:
                    continue
                got = self.inference(inner, function)
                if got is None or not isinstance(got[1], cst.Name) or got[1].value not in params:
                    continue
                binding = assigned(got[1].value, function)
                if binding is None or binding.scope is not function or binding.rebound:
                    continue
                found = (inner, params.index(got[1].value), got[0])
                break
        self._forwarders[key] = found
        return found

    def any_forwarder(self) -> bool:
        """Is some function of the module a ``forwarder``? Worked out once, from the functions
        whose own calls include an inference method: where none is, no call's callee needs
        looking for (following an object's bindings to its class for every call of a file)."""
        if self._any_forwarder is None:
            self._any_forwarder = False
            asked = set()
            for call, scope in self.graphs.model.index.get("Call", ()):
                func = call.func
                if func.__class__ is cst.Attribute and func.attr.value in INFERENCE_METHODS \
                        and id(scope) not in asked:
                    asked.add(id(scope))
                    if self.forwarder(scope) is not None:
                        self._any_forwarder = True
                        break
        return self._any_forwarder

    def callee(self, call: cst.Call, scope: ScopeInfo) -> Optional[ScopeInfo]:
        """The one same-module function or method ``call`` runs, if told."""
        return self._callee(call, scope)

    # -- data ----------------------------------------------------------------
    def per_item(self, expr: Optional[cst.BaseExpression], scope: ScopeInfo, at: Optional[cst.CSTNode],
                 depth: int = 0) -> bool:
        if expr is None or depth > _DEPTH:
            return False
        if isinstance(expr, cst.Name):
            found = assigned(expr.value, scope, at)
            if found is None or expr.value in found.scope.globals:
                return False
            values = found.own_values if found.scope is scope else found.values
            if not values or any(isinstance(v, tuple) for v in values):
                return False
            return all(self.per_item(v, found.scope, v, depth + 1) for v in values)
        if isinstance(expr, cst.Subscript):
            return _new_axis_first(expr, self.resolver, scope) or _unit_slice(expr)
        if not isinstance(expr, cst.Call):
            return False
        qualname = self.resolver.qualname(expr.func, scope)
        if qualname in _EXPAND:
            axis = argument(expr, 1, "axis")
            return _int_value(axis) == 0
        if qualname in _RESHAPE:
            return _leading_one(argument(expr, 1, "newshape") or argument(expr, 1, "shape"))
        if qualname == "numpy.atleast_2d":
            return True
        if qualname in _ONE_ELEMENT:
            first = argument(expr, 0, "object") or argument(expr, 0, "value")
            return isinstance(first, cst.List) and len(first.elements) == 1 \
                and not isinstance(first.elements[0], cst.StarredElement) \
                and not isinstance(first.elements[0].value, (cst.List, cst.Tuple))
        if qualname is None and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "reshape":
            args = [a for a in expr.args if a.keyword is None and not a.star]
            if len(args) == 1:
                return _leading_one(args[0].value)
            return bool(args) and _int_value(args[0].value) == 1
        return False


def _int_value(expr: Optional[cst.BaseExpression]) -> Optional[int]:
    if isinstance(expr, cst.Integer):
        try:
            return int(expr.value)
        except ValueError:
            return None
    return None


def _leading_one(shape: Optional[cst.BaseExpression]) -> bool:
    if isinstance(shape, (cst.List, cst.Tuple)) and shape.elements:
        first = shape.elements[0]
        return not isinstance(first, cst.StarredElement) and _int_value(first.value) == 1
    return False


def _new_axis_first(expr: cst.Subscript, resolver, scope: ScopeInfo) -> bool:
    first = expr.slice[0].slice if expr.slice else None
    if not isinstance(first, cst.Index):
        return False
    value = first.value
    if isinstance(value, cst.Name) and value.value == "None":
        return True
    return resolver.qualname(value, scope) == "numpy.newaxis"


def _unit_slice(expr: cst.Subscript) -> bool:
    """``x[i:i + 1]``: one row kept with its batch axis."""
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Slice):
        return False
    part = expr.slice[0].slice
    lower, upper = part.lower, part.upper
    if part.step is not None or lower is None or upper is None:
        return False
    return isinstance(upper, cst.BinaryOperation) and isinstance(upper.operator, cst.Add) \
        and _int_value(upper.right) == 1 and lower.deep_equals(upper.left)


__all__ = ["ModelCalls", "INFERENCE_METHODS"]
