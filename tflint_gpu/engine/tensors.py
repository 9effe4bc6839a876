"""Tensor-value inference: is this expression (probably) a ``tf.Tensor``?

A small, local data-flow that errs toward "not a tensor": rules that fire on
tensors stay silent when unsure. A value is a tensor when it is

* the result of a TensorFlow op (``tf.reduce_sum(x)``, ``tf.math.exp(x)``,
  ``tf.random.normal(...)``, ``keras.ops.*``), or ``tf.Variable(...)``;
* arithmetic, comparison or indexing involving a tensor;
* a parameter of a graph function, unless its default or annotation marks
  it as a Python value (``training=False``, ``mask=None``, ``n: int``) or it
  is ``self``/``cls``; in Keras ``call``/``train_step``, only the first (the
  data); for helpers called from a graph function, only if every graph call
  site passes a tensor in that position;
* a local name whose every binding in the function is a tensor (a binding
  that reads the name itself, ``x = x * 2``, keeps the kind the others give).

``x.shape``, ``x.dtype``, ``x.ndim``, ``len(x)`` and ``x.numpy()`` are not
tensors: they are static or host values.
"""
from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.engine.context import GraphAnalysis
from tflint_gpu.engine.model import AUGMENTED, PARAM, UNPACKED, ScopeInfo
from tflint_gpu.engine.names import Resolver

# Top-level tf.* names that return something other than a tensor.
_NOT_TENSOR_TOP = frozenset(
    {
        "function",
        "print",
        "device",
        "name_scope",
        "py_function",
        "numpy_function",
        "group",
        "no_op",
        "control_dependencies",
        "init_scope",
        "custom_gradient",
        "recompute_grad",
        "executing_eagerly",
        "is_tensor",
        "get_static_value",
        "make_ndarray",
        "make_tensor_proto",
        "get_logger",
        "TensorShape",
        "TensorSpec",
        "RaggedTensorSpec",
        "SparseTensorSpec",
        "GradientTape",
        "DType",
        "as_dtype",
        "Module",
        "Graph",
        "Operation",
        "IndexedSlices",
        "SparseTensor",
        "RaggedTensor",
        "TensorArray",
        "CriticalSection",
        "OptionalSpec",
        "TypeSpec",
        "register_tensor_conversion_function",
        "unstack",
        "split",
        "meshgrid",
        "dynamic_partition",
        "while_loop",
        "case",
        "switch_case",
        "tuple",
        "gradients",
        "hessians",
        "nest",
    }
)
# keras.ops.* that return Python values (checked under the TF backend, in a graph).
_KERAS_OPS_NOT_TENSOR = frozenset({"is_tensor", "ndim", "shape", "dtype", "convert_to_numpy", "custom_gradient"})
# tf.<submodule>.* that return tensors (minus the names listed after them).
_TENSOR_SUBMODULES = {
    "math": frozenset({"top_k"}),
    "linalg": frozenset({"eig", "eigh", "qr", "svd", "lu", "LinearOperator"}),
    "nn": frozenset({"moments", "top_k", "ctc_beam_search_decoder", "RNNCellDropoutWrapper"}),
    "random": frozenset(
        {
            "Generator", "set_seed", "get_global_generator", "set_global_generator", "experimental",
            "create_rng_state", "all_candidate_sampler", "log_uniform_candidate_sampler",
            "fixed_unigram_candidate_sampler", "uniform_candidate_sampler", "learned_unigram_candidate_sampler",
        }
    ),
    "image": frozenset({"ResizeMethod"}),
    "signal": frozenset(),
    "strings": frozenset(),
    "bitwise": frozenset(),
    "dtypes": frozenset({"DType", "as_dtype"}),
    "raw_ops": frozenset(),
}
# Attributes of a tensor that are static Python values, and methods that leave TF.
STATIC_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "name", "device", "graph", "op", "rank"})
HOST_METHODS = frozenset({"numpy", "get_shape", "tolist", "item", "ref", "experimental_ref"})
PY_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "bytes", "list", "tuple", "dict", "None"})
_COMPARISONS_NOT_TENSOR = (cst.Is, cst.IsNot, cst.In, cst.NotIn)


def is_tf_op(qualname: Optional[str]) -> bool:
    """Does a call of this API return a tensor?"""
    if qualname is None:
        return False
    if qualname.startswith("keras.ops."):
        return qualname.rsplit(".", 1)[1] not in _KERAS_OPS_NOT_TENSOR
    if not qualname.startswith("tensorflow."):
        return False
    parts = qualname.split(".")[1:]
    if len(parts) == 1:
        name = parts[0]
        return name not in _NOT_TENSOR_TOP and (name[:1].islower() or name == "Variable")
    submodule, name = parts[0], parts[-1]
    if submodule == "experimental" and len(parts) >= 3 and parts[1] == "numpy":
        return True
    denied = _TENSOR_SUBMODULES.get(submodule)
    return denied is not None and name not in denied and parts[1] not in denied


class TensorInference:
    def __init__(self, resolver: Resolver, graphs: GraphAnalysis) -> None:
        self.resolver = resolver
        self.graphs = graphs
        self._cache: Dict[Tuple[int, int], bool] = {}

    def is_tensor(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        key = (id(expr), id(scope))
        cached = self._cache.get(key)
        if cached is None:
            cached = self._is_tensor(expr, scope, set())
            self._cache[key] = cached
        return cached

    def _is_tensor(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: Set) -> bool:
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                qualname = self.resolver.qualname(func, scope)
                if qualname is not None:
                    return is_tf_op(qualname)
                if method in HOST_METHODS:
                    return False
                if method in ("assign", "assign_add", "assign_sub", "read_value", "value"):
                    return self._is_tensor(func.value, scope, seen)
                return False
            return is_tf_op(self.resolver.qualname(func, scope))
        if isinstance(expr, cst.BinaryOperation):
            return self._is_tensor(expr.left, scope, seen) or self._is_tensor(expr.right, scope, seen)
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return False
            return self._is_tensor(expr.expression, scope, seen)
        if isinstance(expr, cst.Comparison):
            if any(isinstance(t.operator, _COMPARISONS_NOT_TENSOR) for t in expr.comparisons):
                return False
            operands = [expr.left] + [t.comparator for t in expr.comparisons]
            return any(self._is_tensor(o, scope, seen) for o in operands)
        if isinstance(expr, cst.Subscript):
            return self._is_tensor(expr.value, scope, seen)
        if isinstance(expr, cst.Attribute):
            return False  # x.shape, x.dtype, self.anything: static or unknown
        if isinstance(expr, cst.Name):
            return self._name_is_tensor(expr.value, scope, seen)
        return False

    def _name_is_tensor(self, name: str, scope: ScopeInfo, seen: Set) -> bool:
        # Only the innermost function's own bindings: module globals captured by
        # a graph function are concrete Python objects at trace time.
        function = scope.function()
        if function is None or name in function.globals:
            return False
        values = function.assigned.get(name)
        if not values:
            return False
        key = (name, id(function))
        if key in seen:
            # A binding that reads the name itself (`x = x * 2`) keeps the kind of
            # value the name's other bindings give it: they decide.
            return True
        seen.add(key)
        try:
            return all(self._binding_is_tensor(value, function, seen) for value in values)
        finally:
            seen.discard(key)

    def _binding_is_tensor(self, value, function: ScopeInfo, seen: Set) -> bool:
        if isinstance(value, cst.BaseExpression):
            return self._is_tensor(value, function, seen)
        marker = value[0]
        if marker == PARAM:
            return self._param_is_tensor(value[1], value[2], function, seen)
        if marker == UNPACKED:
            inner = value[1]
            return isinstance(inner, cst.BaseExpression) and self._is_tensor(inner, function, seen)
        if marker == AUGMENTED:
            return True  # keeps the kind of value it already had
        return False

    def _param_is_tensor(self, param: cst.Param, position: int, function: ScopeInfo, seen: Set) -> bool:
        graph = function.graph
        if graph is None or param.star:
            return False
        if position == 0 and function.enclosing_class is not None:
            return False  # self / cls
        if param.default is not None:
            return False  # training=False, mask=None, n=3: Python values
        annotation = param.annotation
        if annotation is not None:
            hint = annotation.annotation
            if isinstance(hint, cst.Subscript):
                hint = hint.value  # Sequence[float], List[tf.Tensor]: the container decides
            qualname = self.resolver.qualname(hint, function)
            if qualname is not None:
                return qualname.startswith("tensorflow.")
            return not (isinstance(hint, cst.Name) and hint.value in PY_ANNOTATIONS)
        if graph.kind == "keras":
            # Keras passes the data as the first argument (`inputs`, `data`); the others
            # (`training`, `mask`, extra options) are whatever the caller gives.
            return position == 1
        if graph.kind != "called":
            return True
        # A helper: a tensor only if every graph call site passes one.
        if not graph.call_sites:
            return False
        offset = 1 if function.enclosing_class is not None else 0
        for call, caller in graph.call_sites:
            arg = _argument_for(call, position - offset, param.name.value)
            if arg is None or not self._is_tensor(arg, caller, seen):
                return False
        return True


def _argument_for(call: cst.Call, position: int, name: str) -> Optional[cst.BaseExpression]:
    positional = []
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            positional.append(arg.value)
        elif arg.keyword.value == name:
            return arg.value
    if 0 <= position < len(positional):
        return positional[position]
    return None
