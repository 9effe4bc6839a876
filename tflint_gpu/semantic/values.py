"""Value kinds: one answer to "what is this expression?" for every rule.

``ValueKinds.kind(expr, scope)`` combines the engine's separate facts into
one of the kinds below, in this order of evidence: a variable (``tf.Variable``,
``add_weight``), a tf.data dataset (``datasets.py``), a known object (Keras
model or layer, loss, metric, TFP distribution, gradient tape:
``tensors.object_kind``), a tensor (``tensors.is_tensor``), a NumPy array
made by a NumPy function, a fresh Python value (container, scalar, ``None``:
``run_once.python_value_kind``), following a name bound once in its scope.
Anything else is ``UNKNOWN``: rules treat unknown as "not what I look for".
"""
from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from tflint_gpu.semantic import run_once, tensors
from tflint_gpu.semantic.api import keyword
from tflint_gpu.semantic.model import ScopeInfo, assigned

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


class ValueKinds:
    def __init__(self, resolver, graphs, tensor_inference) -> None:
        self.resolver = resolver
        self.graphs = graphs
        self.tensors = tensor_inference

    def kind(self, expr: cst.BaseExpression, scope: ScopeInfo) -> str:
        return self._kind(expr, scope, set())

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


def describe(kind: str) -> str:
    return kind.replace("-", " ")


def is_python(kind: Optional[str]) -> bool:
    return kind in (PY_CONTAINER, PY_SCALAR, PY_NONE)
