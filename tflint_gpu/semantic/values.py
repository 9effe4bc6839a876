"""Value kinds: one answer to "what is this expression?" for every rule.

``ValueKinds.kind(expr, scope)`` combines the engine's separate facts into
one of the kinds below, in this order of evidence: a variable (``tf.Variable``,
``add_weight``), a tf.data dataset (``datasets.py``), a known object (Keras
model or layer, loss, metric, TFP distribution, gradient tape:
``tensors.object_kind``), a tensor (``tensors.is_tensor``), a NumPy array
made by a NumPy function, a fresh Python value (container, scalar, ``None``:
``run_once.python_value_kind``), following a name bound once in its scope,
and an instance attribute ``self.x`` through every binding the class and its
same-module bases give it (``None`` aside; ``self.x += 1`` on a Python number
keeps it a number; a method or property of that name is unknown).
Anything else is ``UNKNOWN``: rules treat unknown as "not what I look for".

``attribute(expr, scope)`` gives the whole fact about ``self.x``
(``InstanceAttribute``): its class, its kind, and its bindings with where each
is made (``__init__``, ``build``, another method) and how (bound, augmented,
filled: ``semantic.objects.AttributeBinding``).
"""
from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from tflint_gpu.semantic import run_once, tensors
from tflint_gpu.semantic.api import keyword
from tflint_gpu.semantic.model import ScopeInfo, assigned
from tflint_gpu.semantic.objects import AUGMENT, BIND, AttributeBinding

VARIABLE = "variable"
DATASET = "dataset"
TENSOR = "tensor"
KERAS = "keras"  # a Keras model or layer
LOSS = tensors.LOSS
METRIC = tensors.METRIC
DISTRIBUTION = tensors.DISTRIBUTION
TAPE = tensors.TAPE
NUMPY_ARRAY = "numpy-array"
PY_CONTAINER = "python-container"
PY_SCALAR = "python-scalar"
PY_NONE = "python-none"
UNKNOWN = "unknown"

_OBJECTS = {tensors.KERAS: KERAS, tensors.KERAS_SEQUENCE: KERAS, tensors.LOSS: LOSS, tensors.METRIC: METRIC,
            tensors.DISTRIBUTION: DISTRIBUTION, tensors.TAPE: TAPE}
_PYTHON = {run_once.CONTAINER: PY_CONTAINER, run_once.SCALAR: PY_SCALAR, run_once.NONE: PY_NONE}
_VARIABLES = frozenset({"tensorflow.Variable", "keras.Variable", "keras.backend.Variable"})
_VARIABLE_METHODS = frozenset({"add_weight", "add_variable"})
# NumPy functions that return a new array (not a scalar or a tuple).
_NUMPY_ARRAYS = frozenset({
    "array", "asarray", "zeros", "ones", "full", "empty", "eye", "identity", "arange", "linspace", "zeros_like",
    "ones_like", "full_like", "stack", "concatenate", "reshape", "load", "loadtxt", "genfromtxt", "frombuffer",
})
_NUMPY_RANDOM_ARRAYS = frozenset({"rand", "randn", "permutation"})


# Where a binding sets a Keras layer up (runs once, before any call or trace).
SETUP_METHODS = frozenset({"__init__", "build"})


class InstanceAttribute:
    """``self.<name>`` of an instance of ``cls``: its kind (worked out on first use) and every binding."""

    __slots__ = ("cls", "name", "bindings", "_kind", "_values")

    def __init__(self, cls: ScopeInfo, name: str, bindings: List[AttributeBinding], values: "ValueKinds") -> None:
        self.cls = cls
        self.name = name
        self.bindings = bindings
        self._kind: Optional[str] = None
        self._values = values

    @property
    def kind(self) -> str:
        if self._kind is None:
            self._kind = self._values._attribute_kind(self.bindings, set())
        return self._kind

    @property
    def bound(self) -> List[AttributeBinding]:
        """The plain bindings (``self.x = value``)."""
        return [b for b in self.bindings if b.how == BIND]

    @property
    def changed_after_setup(self) -> List[AttributeBinding]:
        """Bindings that change the value after ``__init__``/``build``: an
        augmented assignment anywhere, a plain one in another method."""
        return [b for b in self.bindings
                if b.how == AUGMENT or (b.how == BIND and b.where not in SETUP_METHODS and b.where != "<class>")]


class ValueKinds:
    def __init__(self, resolver, graphs, tensor_inference) -> None:
        self.resolver = resolver
        self.graphs = graphs
        self.tensors = tensor_inference

    def kind(self, expr: cst.BaseExpression, scope: ScopeInfo) -> str:
        return self._kind(expr, scope, set())

    def attribute(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[InstanceAttribute]:
        """The fact about ``self.x`` (``expr``) read in ``scope``: None when
        ``expr`` is not an attribute of a method's ``self``, or names a method
        or property."""
        if not isinstance(expr, cst.Attribute):
            return None
        objects = self.graphs.objects
        cls = objects.self_class(expr.value, scope)
        if cls is None:
            return None
        name = expr.attr.value
        if any(name in c.defs for c in objects.mro(cls)):
            return None
        found = objects.attribute_bindings(cls, name)
        return InstanceAttribute(cls, name, found, self)

    def _attribute_kind(self, found: List[AttributeBinding], seen: Set) -> str:
        kinds = set()
        augmented = []
        for binding in found:
            if binding.how == BIND:
                if not binding.readable or not isinstance(binding.value, cst.BaseExpression):
                    return UNKNOWN
                key = ("attribute", id(binding.value))
                if key in seen:
                    return UNKNOWN
                seen.add(key)
                try:
                    for value in _alternatives(binding.value):
                        kind = self._kind(value, binding.method, seen)
                        if kind != PY_NONE:
                            kinds.add(kind)
                finally:
                    seen.discard(key)
            elif binding.how == AUGMENT:
                augmented.append(binding)
        if len(kinds) != 1:
            return UNKNOWN
        kind = kinds.pop()
        for binding in augmented:
            # `self.steps += 1` keeps a number a number (and a tensor a tensor).
            added = self._kind(binding.value, binding.method, seen) \
                if isinstance(binding.value, cst.BaseExpression) else UNKNOWN
            if added != PY_SCALAR and not (kind == TENSOR and added == TENSOR):
                return UNKNOWN
        return kind

    def _kind(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: Set) -> str:
        if isinstance(expr, cst.Call):
            qualname = self.resolver.qualname(expr.func, scope)
            if qualname in _VARIABLES or (isinstance(expr.func, cst.Attribute)
                                          and expr.func.attr.value in _VARIABLE_METHODS and qualname is None):
                return VARIABLE
            if qualname is not None and qualname.startswith("numpy.") and self._numpy_array(qualname, expr):
                return NUMPY_ARRAY
        if self.graphs.is_dataset(expr, scope):
            return DATASET
        obj = self.tensors.object_kind(expr, scope)
        if obj is not None:
            return _OBJECTS.get(obj, UNKNOWN)
        if self.tensors.is_tensor(expr, scope):
            return TENSOR
        python = run_once.python_value_kind(expr, scope, self.resolver)
        if python is not None:
            return _PYTHON[python]
        if isinstance(expr, cst.Name):
            return self._name_kind(expr.value, scope, seen)
        if isinstance(expr, cst.Attribute):
            objects = self.graphs.objects
            cls = objects.self_class(expr.value, scope)
            if cls is not None and not any(expr.attr.value in c.defs for c in objects.mro(cls)):
                return self._attribute_kind(objects.attribute_bindings(cls, expr.attr.value), seen)
        return UNKNOWN

    def _name_kind(self, name: str, scope: ScopeInfo, seen: Set) -> str:
        """The kind of the value a name is bound to once in the scope whose binding it sees."""
        found = assigned(name, scope)
        key = (name, id(found.scope) if found is not None else None)
        if found is None or key in seen or name in found.scope.globals:
            return UNKNOWN
        value = found.single_value
        if not isinstance(value, cst.BaseExpression):
            return UNKNOWN
        seen.add(key)
        try:
            return self._kind(value, found.scope, seen)
        finally:
            seen.discard(key)

    @staticmethod
    def _numpy_array(qualname: str, call: cst.Call) -> bool:
        short = qualname[len("numpy."):]
        if short in _NUMPY_ARRAYS:
            return True
        if short.startswith("random."):
            name = short[len("random."):]
            # With a size (or rand/randn with dimensions) NumPy returns an array; without, a Python float.
            return (name in _NUMPY_RANDOM_ARRAYS and bool(call.args)) or keyword(call, "size") is not None
        return False


def _alternatives(value: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The values a binding may give: both branches of ``a if c else b`` (``self.bias =
    self.add_weight(...) if use_bias else None``), else the value itself."""
    if isinstance(value, cst.IfExp):
        return _alternatives(value.body) + _alternatives(value.orelse)
    return [value]


def made_by(value: cst.BaseExpression) -> Optional[cst.Call]:
    """The call among a binding's alternatives (``_alternatives``), if exactly one is a call."""
    calls = [v for v in _alternatives(value) if isinstance(v, cst.Call)]
    return calls[0] if len(calls) == 1 else None


def describe(kind: str) -> str:
    return kind.replace("-", " ")


def is_python(kind: Optional[str]) -> bool:
    return kind in (PY_CONTAINER, PY_SCALAR, PY_NONE)
