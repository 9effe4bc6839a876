"""Tensor-value inference: is this expression (probably) a ``tf.Tensor``?

A small, local data-flow that errs toward "not a tensor": rules that fire on
tensors stay silent when unsure. A value is a tensor when it is

* the result of a TensorFlow op (``tf.reduce_sum(x)``, ``tf.math.exp(x)``,
  ``tf.random.normal(...)``, ``keras.ops.*``), or ``tf.Variable(...)``; of a
  Keras loss or metric function (``keras.losses.mean_squared_error(y, p)``);
* arithmetic, comparison or indexing involving a tensor; an element of a list
  of tensors (``tape.gradient(loss, vars)[0]``, ``tf.split(x, 2)[1]``, a loop
  over either, unpacking either);
* a parameter of a graph function, unless its default or annotation marks
  it as a Python value (``training=False``, ``mask=None``, ``n: int``) or it
  is ``self``/``cls``; in Keras ``call``/``train_step``, only the first (the
  data); for helpers called from a graph function, only if every graph call
  site passes a tensor in that position;
* a local name whose every binding in the function is a tensor (a binding
  that reads the name itself, ``x = x * 2``, keeps the kind the others give);
* the result of calling a known object (see below): a Keras model or layer
  (``model(x)``, ``self.dense(x)``, ``self(x)`` in a Keras model, ``.call``,
  ``self.compute_loss``; not an RNN cell, a layer given ``return_state`` or
  ``return_attention_scores``, or a same-module layer whose ``call`` returns
  a tuple: those give lists of tensors), a Keras loss object, a Keras metric (its call and
  ``result()``), a TensorFlow Probability distribution's ``sample``,
  ``log_prob``, ``mean``..., a ``tf.GradientTape``'s ``gradient`` with a
  tensor as sources (with a list of sources, a list of tensors);
* the result of a same-module function (or lambda) whose every ``return``
  returns a tensor (followed one level).

Known objects are names (local, enclosing or module-level; every binding must
agree, ``None`` aside) and ``self`` attributes (every assignment in the class
and its same-module bases must agree) bound to a constructor call
(``keras.Sequential(...)``, ``keras.layers.Dense(...)``, a same-module
subclass of a Keras layer/model/loss/metric, ``keras.losses.*`` classes,
``keras.models.load_model``, ``tfd.Normal(...)``, ``tf.GradientTape()`` also
as ``with ... as tape``), a parameter annotated with such a class, or ``self``
in a method of such a class. Module aliases made by assignment
(``tfd = tfp.distributions``) resolve like imports.

``x.shape``, ``x.dtype``, ``x.ndim``, ``len(x)``, ``x.numpy()`` and
``model.predict(x)`` (NumPy) are not tensors: they are static or host values.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.api import arguments_by_name, exact_argument
from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import (AUGMENTED, ITERATED, OPAQUE, PARAM, SCOPE_TYPES, UNPACKED, ScopeInfo, assigned,
                                     returns, walk)
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.semantic.objects import ADD, AUGMENT, BIND

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


# tf.* calls that return a Python list (or tuple) of tensors.
_TENSOR_SEQUENCE_APIS = frozenset(
    {"tensorflow.gradients", "tensorflow.unstack", "tensorflow.split", "tensorflow.meshgrid",
     "tensorflow.dynamic_partition"}
)

# Kinds of objects whose calls or methods give tensors in graph code.
KERAS = "keras"  # a Keras model or layer: calling it gives a tensor
KERAS_SEQUENCE = "keras-sequence"  # a same-module Keras layer whose call returns a tuple or list
LOSS = "loss"  # a Keras loss object
METRIC = "metric"  # a Keras metric object
DISTRIBUTION = "distribution"  # a TensorFlow Probability distribution
TAPE = "tape"  # a tf.GradientTape
_CALLABLE_KINDS = frozenset({KERAS, LOSS, METRIC})
# How the elements of a container are taken.
INDEX = "index"  # ms[0], d[k]: a dict gives its values
ITER = "iter"  # for m in ms: a dict gives its keys
# Methods that return a tensor, by kind (Keras 3 and tf_keras alike).
_TENSOR_METHODS = {
    KERAS: frozenset({"call", "compute_loss"}),
    KERAS_SEQUENCE: frozenset({"compute_loss"}),
    LOSS: frozenset({"call"}),
    METRIC: frozenset({"result"}),
    DISTRIBUTION: frozenset(
        {
            "sample", "log_prob", "prob", "mean", "mode", "stddev", "variance", "entropy", "cdf", "log_cdf",
            "survival_function", "log_survival_function", "quantile", "cross_entropy", "kl_divergence",
            "covariance", "unnormalized_log_prob", "batch_shape_tensor", "event_shape_tensor",
        }
    ),
    TAPE: frozenset(),
}
_TAPE_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian"})
_TAPES = frozenset({"tensorflow.GradientTape", "tensorflow.autodiff.GradientTape"})
# keras.losses / keras.metrics names that are functions though capitalised (tf_keras aliases).
_KERAS_FUNCTION_ALIASES = frozenset({"MSE", "MAE", "MAPE", "MSLE", "KLD"})
_KERAS_NOT_TENSOR_FUNCTIONS = frozenset({"get", "serialize", "deserialize"})
_KERAS_MODEL_CLASSES = frozenset({"Model", "Sequential", "Functional", "Layer"})
_KERAS_MODEL_FACTORIES = frozenset(
    {
        "keras.models.load_model", "keras.saving.load_model", "keras.models.clone_model",
        "keras.models.model_from_json", "keras.models.model_from_config", "keras.models.model_from_yaml",
    }
)
_KERAS_LAYERS_NOT_LAYERS = frozenset({"Input", "InputSpec"})
# Keyword arguments (of a layer's constructor or call) that make it return a list or tuple.
_RETURNS_SEQUENCE_KEYWORDS = ("return_state", "return_attention_scores")
# Abstract bases: instances of them are not usable objects (but subclasses are).
_ABSTRACT_BASES = frozenset({"Layer", "Loss", "Metric", "Distribution"})
_TFP_DISTRIBUTIONS = ("tensorflow_probability.distributions.", "tensorflow_probability.python.distributions.")
_TFP_NOT_DISTRIBUTIONS = frozenset({"ReparameterizationType", "RegisterKL"})
_TENSOR_PARAMETERS_CONTAINERS = frozenset(
    {"trainable_variables", "trainable_weights", "variables", "weights", "non_trainable_variables"}
)


def _is_class_name(name: str) -> bool:
    return name[:1].isupper() and "_" not in name


def base_kind(qualname: Optional[str]) -> Optional[str]:
    """The kind of object an instance of this (normalized) class is: a Keras
    model/layer, loss or metric, a TFP distribution, a gradient tape; None."""
    if qualname is None:
        return None
    if qualname in _TAPES:
        return TAPE
    if qualname.startswith(_TFP_DISTRIBUTIONS):
        name = qualname.rsplit(".", 1)[1]
        if _is_class_name(name) and not name.startswith("Joint") and name not in _TFP_NOT_DISTRIBUTIONS:
            return DISTRIBUTION
        return None
    parts = qualname.split(".")
    if parts[0] != "keras" or len(parts) < 2:
        return None
    name = parts[-1]
    if not _is_class_name(name):
        return None
    if len(parts) == 2:
        if name in _KERAS_MODEL_CLASSES:
            return KERAS
        return {"Loss": LOSS, "Metric": METRIC}.get(name)
    area = parts[1]
    if area == "layers":
        # An RNN cell returns (output, states), not a tensor.
        return KERAS if name not in _KERAS_LAYERS_NOT_LAYERS and not name.endswith(("Cell", "Cells")) else None
    if area in ("models", "engine"):
        return KERAS if name in _KERAS_MODEL_CLASSES else None
    if area == "applications":
        return KERAS
    if area == "losses":
        return LOSS if name != "Reduction" and name not in _KERAS_FUNCTION_ALIASES else None
    if area == "metrics":
        return METRIC if name not in _KERAS_FUNCTION_ALIASES else None
    return None


def constructor_kind(qualname: Optional[str]) -> Optional[str]:
    """The kind of object a call of this API returns (a class, or a factory)."""
    if qualname is None:
        return None
    if qualname in _KERAS_MODEL_FACTORIES:
        return KERAS
    if qualname == "keras.losses.get":
        return LOSS
    kind = base_kind(qualname)
    if kind is not None and qualname.rsplit(".", 1)[1] in _ABSTRACT_BASES:
        return None
    return kind


def api_returns_tensor(qualname: Optional[str]) -> bool:
    """Non-TensorFlow APIs whose call returns a tensor: Keras loss and metric
    functions (``keras.losses.mean_squared_error``), ``tfd.kl_divergence``."""
    if qualname is None:
        return False
    parts = qualname.split(".")
    if len(parts) == 3 and parts[0] == "keras" and parts[1] in ("losses", "metrics"):
        name = parts[2]
        return (name[:1].islower() and name not in _KERAS_NOT_TENSOR_FUNCTIONS) or name in _KERAS_FUNCTION_ALIASES
    return qualname in ("tensorflow_probability.distributions.kl_divergence",
                        "tensorflow_probability.python.distributions.kl_divergence")


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
        self._class_kinds: Dict[int, Optional[str]] = {}
        self._loops: Optional[Dict[int, cst.For]] = None
        self._attributes: Dict[int, Dict[str, List[Any]]] = {}

    def is_tensor(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        key = (id(expr), id(scope))
        cached = self._cache.get(key)
        if cached is None:
            cached = self._is_tensor(expr, scope, set())
            self._cache[key] = cached
        return cached

    def object_kind(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        """What known object ``expr`` is (``KERAS``, ``LOSS``, ``METRIC``,
        ``DISTRIBUTION``, ``TAPE``), or None."""
        return self._object_kind(expr, scope, set())

    # -- tensors ----------------------------------------------------------
    def _is_tensor(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: Set) -> bool:
        if isinstance(expr, cst.Call):
            return self._call_is_tensor(expr, scope, seen)
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
            if self._is_tensor(expr.value, scope, seen):
                return True
            return bindings.single_index(expr) is not None and self._is_sequence(expr.value, scope, seen)
        if isinstance(expr, cst.Attribute):
            return False  # x.shape, x.dtype, self.anything: static or unknown
        if isinstance(expr, cst.Name):
            return self._name_is_tensor(expr.value, scope, seen)
        return False

    def _call_is_tensor(self, expr: cst.Call, scope: ScopeInfo, seen: Set) -> bool:
        func = expr.func
        qualname = self.resolver.qualname(func, scope)
        if qualname is not None:
            return is_tf_op(qualname) or api_returns_tensor(qualname)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in HOST_METHODS:
                return False
            if method in ("assign", "assign_add", "assign_sub", "read_value", "value"):
                return self._is_tensor(func.value, scope, seen)
            target = self._callee(func, scope)
            if target is not None:
                # A method defined here (an own compute_loss may return a tuple): its returns decide.
                return self._returns_tensor(target, seen)
            kind = self._object_kind(func.value, scope, seen)
            if kind == TAPE and method in _TAPE_METHODS:
                # A tensor for a tensor (or variable) source; a list for a list of sources.
                sources = exact_argument(expr, 1, "source" if method == "batch_jacobian" else "sources")
                return sources is not None and self._is_tensor(sources, scope, seen)
            if kind is not None and method in _TENSOR_METHODS[kind]:
                return True
        kind = self._object_kind(func, scope, seen)
        if kind in _CALLABLE_KINDS:
            # model(x), self.dense(x), self(x), loss_fn(y, p), metric(y, p)
            return not (kind == KERAS and _returns_sequence_keyword(expr))
        target = self._callee(func, scope)
        if target is not None:
            return self._returns_tensor(target, seen)
        return False

    def _callee(self, func: cst.BaseExpression, scope: ScopeInfo) -> Optional[ScopeInfo]:
        """The same-module function or lambda a call calls: as the graph analysis
        finds it, or a name bound once, to a lambda (``square = lambda t: ...``)."""
        target = self.graphs.function_scope(func, scope)
        if target is None and isinstance(func, cst.Name):
            found = self._bindings(func.value, scope)
            if found is not None and len(found[1]) == 1 and isinstance(found[1][0], cst.Lambda):
                target = self.graphs.model.scope_of_node.get(found[1][0])
        return target

    def _returns_tensor(self, function: ScopeInfo, seen: Set) -> bool:
        """Does every ``return`` of this same-module function (or lambda) return
        a tensor? Followed one level: no further calls are followed from there."""
        values = None if _FOLLOWING in seen else _always_returned(function)
        if not values:
            return False
        seen.add(_FOLLOWING)
        try:
            return all(self._is_tensor(value, function, seen) for value in values)
        finally:
            seen.discard(_FOLLOWING)

    def _returns_object(self, function: ScopeInfo, seen: Set) -> Optional[str]:
        """The object kind every ``return`` of this same-module function (or method) returns
        (``self.model = self.build_model()``), or None; followed one level, as ``_returns_tensor``."""
        values = None if _FOLLOWING in seen else _always_returned(function)
        if not values:
            return None
        seen.add(_FOLLOWING)
        try:
            kinds = {self._object_kind(value, function, seen) for value in values}
        finally:
            seen.discard(_FOLLOWING)
        return kinds.pop() if len(kinds) == 1 else None

    def _is_sequence(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: Set) -> bool:
        """Is ``expr`` a Python list or tuple of tensors?"""
        if isinstance(expr, cst.Call):
            func = expr.func
            if self.resolver.qualname(func, scope) in _TENSOR_SEQUENCE_APIS:
                return True
            if isinstance(func, cst.Attribute) and func.attr.value in _TAPE_METHODS:
                return self._object_kind(func.value, scope, seen) == TAPE
            kind = self._object_kind(func, scope, seen)
            # attention(q, v, return_attention_scores=True): (outputs, scores)
            return kind == KERAS_SEQUENCE or (kind == KERAS and _returns_sequence_keyword(expr))
        if isinstance(expr, (cst.List, cst.Tuple)):
            return bool(expr.elements) and all(
                not isinstance(e, cst.StarredElement) and self._is_tensor(e.value, scope, seen)
                for e in expr.elements
            )
        if isinstance(expr, cst.ListComp):
            return _in_comprehension(expr, seen, lambda: self._is_tensor(expr.elt, scope, seen))
        if isinstance(expr, cst.Name):
            function = scope.function()
            if function is None or expr.value in function.globals or (_COMPREHENSION, expr.value) in seen:
                return False
            values = function.assigned.get(expr.value)
            key = (_SEQUENCE, expr.value, id(function))
            if not values or key in seen:
                return False
            seen.add(key)
            try:
                return all(isinstance(v, cst.BaseExpression) and self._is_sequence(v, function, seen) for v in values)
            finally:
                seen.discard(key)
        return False

    def _name_is_tensor(self, name: str, scope: ScopeInfo, seen: Set) -> bool:
        # Only the innermost function's own bindings: module globals captured by
        # a graph function are concrete Python objects at trace time.
        function = scope.function()
        if function is None or name in function.globals or (_COMPREHENSION, name) in seen:
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
            return isinstance(inner, cst.BaseExpression) and (
                self._is_tensor(inner, function, seen) or self._is_sequence(inner, function, seen)
            )
        if marker == ITERATED:
            inner = value[1]
            return isinstance(inner, cst.BaseExpression) and self._is_sequence(inner, function, seen)
        if marker == AUGMENTED:
            return True  # keeps the kind of value it already had
        return False

    def _param_is_tensor(self, param: cst.Param, position: int, function: ScopeInfo, seen: Set) -> bool:
        graph = function.graph
        if graph is None or param.star:
            return False
        if position == 0 and function.binds_instance:
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
            # Keras passes the data as the leading arguments (`inputs`, `data`; a loss's or
            # metric's `y_true, y_pred`); the others (`training`, `mask`, extra options) are
            # whatever the caller gives.
            first = 1 if function.binds_instance else 0
            return first <= position < first + getattr(graph, "data_parameters", 1)
        if graph.kind != "called":
            return True
        # A helper: a tensor only if every graph call site passes one.
        if not graph.call_sites:
            # called from another module's graph code: where every such call gives its graph def's data
            offset = 1 if function.binds_instance else 0
            return position - offset in getattr(graph, "data_positions", ())
        offset = 1 if function.binds_instance else 0
        for call, caller in graph.call_sites:
            arg = exact_argument(call, position - offset, param.name.value)
            if arg is None or not self._is_tensor(arg, caller, seen):
                return False
        return True

    # -- known objects ----------------------------------------------------
    def _object_kind(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: Set) -> Optional[str]:
        if isinstance(expr, cst.Call):
            func = expr.func
            qualname = self.resolver.qualname(func, scope)
            if qualname is not None:
                kind = constructor_kind(qualname)
                if kind == KERAS and _returns_sequence_keyword(expr):
                    return None  # keras.layers.LSTM(4, return_state=True) returns a list
                return kind
            if isinstance(func, cst.Name):
                cls = scope.lookup_class(func.value)
                if cls is not None:
                    return self.class_kind(cls)
            target = self._callee(func, scope)
            return self._returns_object(target, seen) if target is not None else None
        if isinstance(expr, cst.Name):
            return self._name_kind(expr.value, scope, seen)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value == "layers" and self._object_kind(expr.value, scope, seen) in (KERAS, KERAS_SEQUENCE):
                return None  # a list of layers, not a layer
            return self._attribute_kind(expr, scope, seen)
        if isinstance(expr, cst.Subscript):
            if bindings.single_index(expr) is None:
                return None
            kind = self._element_kind(expr.value, scope, seen, INDEX)  # ms[0], self.metrics_dict[name]
            return None if kind == _NONE else kind
        return None

    def _element_kind(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: Set,
                      mode: str = ITER) -> Optional[str]:
        """The kind shared by every element of the container ``expr``: taken by
        index (``INDEX``: a dict's values) or by iteration (``ITER``: a dict's
        keys, which are no objects). ``_NONE`` for an empty display (it adds
        nothing to the kinds of a container filled later)."""
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            if not expr.elements:
                return _NONE
            return _common(self._element_kind(e.value, scope, seen, ITER) if isinstance(e, cst.StarredElement)
                           else self._object_kind(e.value, scope, seen) for e in expr.elements)
        if isinstance(expr, cst.Dict):
            if mode != INDEX:
                return None
            if not expr.elements:
                return _NONE
            return _common(self._object_kind(e.value, scope, seen) if isinstance(e, cst.DictElement)
                           else self._element_kind(e.value, scope, seen, INDEX) for e in expr.elements)
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            return _in_comprehension(expr, seen, lambda: self._object_kind(expr.elt, scope, seen))
        if isinstance(expr, cst.DictComp):
            return _in_comprehension(expr, seen, lambda: self._object_kind(expr.value, scope, seen)) \
                if mode == INDEX else None
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            return _common((self._element_kind(expr.left, scope, seen, mode),
                            self._element_kind(expr.right, scope, seen, mode)))  # [loss_tracker] + metrics
        if isinstance(expr, cst.Call):
            return self._call_elements(expr, scope, seen, mode)
        if isinstance(expr, cst.Attribute):
            owner = expr.attr.value
            if owner in _KERAS_LISTS and not self._own_attribute(expr, scope) \
                    and self._object_kind(expr.value, scope, seen) in (KERAS, KERAS_SEQUENCE):
                return _KERAS_LISTS[owner]  # model.layers, model.metrics
            return self._attribute_kind(expr, scope, seen, mode)
        if isinstance(expr, cst.Name):
            return self._name_kind(expr.value, scope, seen, mode)
        return None

    def _call_elements(self, call: cst.Call, scope: ScopeInfo, seen: Set, mode: str) -> Optional[str]:
        """Elements of ``list(xs)``, ``tuple(xs)``, ``sorted(xs)``, ``reversed(xs)``
        (those of ``xs``), ``d.values()`` (``d``'s values), ``dict(a=m, ...)``."""
        func = call.func
        args = call.args
        if isinstance(func, cst.Name) and func.value in _COPYING_BUILTINS and scope.lookup(func.value) is None:
            if func.value == "dict":
                if mode != INDEX or any(a.star for a in args):
                    return None
                positional = [a for a in args if a.keyword is None]
                kinds = [self._object_kind(a.value, scope, seen) for a in args if a.keyword is not None]
                kinds += [self._element_kind(a.value, scope, seen, INDEX) for a in positional]
                return _common(kinds) if kinds else _NONE
            if len(args) == 1 and args[0].keyword is None and not args[0].star:
                return self._element_kind(args[0].value, scope, seen, ITER)
            return _NONE if not args else None
        if isinstance(func, cst.Attribute) and func.attr.value == "values" and not args:
            return self._element_kind(func.value, scope, seen, INDEX)
        return None

    def _own_attribute(self, expr: cst.Attribute, scope: ScopeInfo) -> bool:
        """Is ``self.attr`` bound or defined by the module's own class (not Keras's)?"""
        cls = self._self_class(expr, scope)
        if cls is None:
            return False
        objects = self.graphs.objects
        name = expr.attr.value
        return any(name in c.defs for c in objects.mro(cls)) or bool(objects.attribute_bindings(cls, name))

    def _value_kind(self, value: Any, scope: ScopeInfo, seen: Set, elements: Optional[str],
                    name: Optional[str] = None) -> Optional[str]:
        """The kind of one binding (an expression or a binding marker); ``_NONE`` for ``None``.
        ``elements``: the kind of its elements instead (``INDEX`` or ``ITER``)."""
        if isinstance(value, cst.BaseExpression):
            if isinstance(value, cst.Name) and value.value == "None":
                return _NONE
            if elements:
                return self._element_kind(value, scope, seen, elements)
            kind = self._object_kind(value, scope, seen)
            if kind is None:
                # `model: tf.keras.Model = REGISTRY.build_model(...)`: what the annotation says, as for a
                # parameter's
                annotation = bindings.annotation_of(value, scope)
                if annotation is not None:
                    kind = base_kind(self.resolver.qualname(annotation, scope))
            return kind
        marker = value[0]
        if elements:
            if marker == AUGMENTED and isinstance(value[1], cst.AugAssign) \
                    and isinstance(value[1].operator, cst.AddAssign) \
                    and isinstance(value[1].value, (cst.List, cst.Tuple, cst.ListComp)):
                return _NONE  # `ms += [m]`: its elements count as what the scope adds (container_additions)
            return None
        if marker == PARAM:
            return self._param_kind(value[1], value[2], scope, seen)
        if marker == OPAQUE and isinstance(value[1], cst.WithItem):
            item = value[1]
            if item.asname is not None and isinstance(item.asname.name, cst.Name):
                # `with tf.GradientTape() as tape`: the tape's __enter__ returns the tape.
                kind = self._object_kind(item.item, scope, seen)
                return kind if kind == TAPE else None
            return None
        if marker == ITERATED and isinstance(value[1], cst.BaseExpression):
            loop = self._loop_of(value[1])
            if loop is not None and isinstance(loop.target, (cst.Tuple, cst.List)):
                return self._unpacked_element_kind(loop, name, scope, seen)
            return self._element_kind(value[1], scope, seen, ITER)  # for layer in self.blocks
        return None

    def _loop_of(self, iterable: cst.BaseExpression) -> Optional[cst.For]:
        """The ``for`` statement iterating over ``iterable``."""
        if self._loops is None:
            self._loops = {id(node.iter): node for node, _ in self.graphs.model.index.get("For", ())}
        return self._loops.get(id(iterable))

    def _unpacked_element_kind(self, loop: cst.For, name: Optional[str], scope: ScopeInfo,
                               seen: Set) -> Optional[str]:
        """``for k, m in d.items()``, ``for i, m in enumerate(ms)``, ``for a, b in zip(xs, ys)``: the kind
        of the element the name ``name`` takes."""
        position = next((i for i, e in enumerate(loop.target.elements)
                         if isinstance(e.value, cst.Name) and e.value.value == name), None)
        call = loop.iter
        if position is None or not isinstance(call, cst.Call) or any(a.star or a.keyword for a in call.args):
            return None
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "items" and not call.args:
            return self._element_kind(func.value, scope, seen, INDEX) if position == 1 else None
        if isinstance(func, cst.Name) and scope.lookup(func.value) is None:
            if func.value == "enumerate" and len(call.args) in (1, 2) and len(loop.target.elements) == 2:
                return self._element_kind(call.args[0].value, scope, seen, ITER) if position == 1 else None
            if func.value == "zip" and len(call.args) == len(loop.target.elements):
                return self._element_kind(call.args[position].value, scope, seen, ITER)
        return None

    def _added_kind(self, how: str, value: Any, scope: ScopeInfo, seen: Set) -> Optional[str]:
        """The kind of what ``append(v)``/``d[k] = v`` (``ADD``) or
        ``extend(xs)``/``+= [...]`` (``EXTEND``) puts into a container."""
        if not isinstance(value, cst.BaseExpression):
            return None
        if how == ADD:
            return self._object_kind(value, scope, seen)
        return self._element_kind(value, scope, seen, INDEX if isinstance(value, (cst.Dict, cst.DictComp)) else ITER)

    def _name_kind(self, name: str, scope: ScopeInfo, seen: Set, elements: Optional[str] = None) -> Optional[str]:
        """The kind every binding of ``name`` gives it (``elements``: of its
        elements, with what the binding scope appends or stores into it)."""
        if (_COMPREHENSION, name) in seen:
            return None
        found = self._bindings(name, scope)
        if found is None:
            return None
        current, values = found
        key = (_OBJECT, name, id(current), elements)
        if key in seen:
            return None
        seen.add(key)
        try:
            kinds = [self._value_kind(value, current, seen, elements, name) for value in values]
            if elements:
                kinds += [self._added_kind(how, value, current, seen)
                          for how, value, _node in self.graphs.objects.container_additions(current, name)]
            return _common(kinds)
        finally:
            seen.discard(key)

    def _param_kind(self, param: cst.Param, position: int, function: ScopeInfo, seen: Set) -> Optional[str]:
        if param.star:
            return None
        cls = function.enclosing_class
        method = cls is not None and isinstance(function.node, cst.FunctionDef) and not any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in function.node.decorators)
        if position == 0 and method:
            if any(isinstance(d.decorator, cst.Name) and d.decorator.value == "classmethod"
                   for d in function.node.decorators):
                return None
            return self.class_kind(cls)  # self in a method of a Keras model, layer, loss, metric
        annotation = param.annotation
        if annotation is not None and param.default is None:
            return base_kind(self.resolver.qualname(annotation.annotation, function))
        return self._passed_kind(param, 1 if method else 0, function, seen)

    def _passed_kind(self, param: cst.Param, shift: int, function: ScopeInfo, seen: Set) -> Optional[str]:
        """The kind every call of ``function`` in this module gives the parameter (issue 35: a model or
        optimizer made in ``main()`` and passed to ``train(model, optimizer)``): the argument in its
        place or of its name, else its default; through chains of such calls. None when the module
        has no such call, when one unpacks ``*args``/``**kwargs`` or passes more than it takes, or when
        they disagree (``shift``: the leading parameters a call fills itself, ``self``; a call from
        another module is not seen: what this module passes is what its own calls run with)."""
        node = function.node
        if not isinstance(node, cst.FunctionDef):
            return None
        sites = self.graphs.call_sites(function)
        if not sites:
            return None
        positional = [p.name.value for p in list(node.params.posonly_params) + list(node.params.params)]
        names = positional[shift:]  # what a call's positional arguments fill (after self)
        kinds = []
        for call, where in sites:
            passed = arguments_by_name(call, names)
            if passed is None:
                return None  # *args / **kwargs, or more than it takes: not told
            given = passed.get(param.name.value)
            if given is None:
                given, where = param.default, function.parent or function
                if given is None:
                    continue  # a call that does not run (a TypeError), or fills it otherwise
            if isinstance(given, cst.Name) and given.value == "None":
                kinds.append(_NONE)
                continue
            kinds.append(self._object_kind(given, where, seen))
        return _common(kinds)

    def class_kind(self, cls: ScopeInfo, _depth: int = 0) -> Optional[str]:
        """The kind of an instance of a same-module class, from its bases."""
        key = id(cls)
        if key in self._class_kinds:
            return self._class_kinds[key]
        self._class_kinds[key] = None  # a cycle of bases gives nothing
        kind = None
        if isinstance(cls.node, cst.ClassDef) and _depth < 20:
            parent = cls.parent or cls
            for base in cls.node.bases:
                if base.keyword is not None or base.star:
                    continue
                qualname = self.resolver.qualname(base.value, parent)
                if qualname is not None:
                    kind = base_kind(qualname)
                elif isinstance(base.value, cst.Name):
                    local = parent.lookup_class(base.value.value)
                    if local is not None and local is not cls:
                        kind = self.class_kind(local, _depth + 1)
                if kind is not None:
                    break
        if kind == TAPE:
            kind = None
        if kind in (KERAS, KERAS_SEQUENCE) and "call" in cls.defs:
            # What its own `call` returns: a tuple of outputs is not a tensor.
            kind = _call_kind(cls.defs["call"])
        self._class_kinds[key] = kind
        return kind

    def _self_class(self, expr: cst.Attribute, scope: ScopeInfo) -> Optional[ScopeInfo]:
        """The class whose method's ``self`` ``expr.value`` is, if it is one."""
        if not isinstance(expr.value, cst.Name):
            return None
        found = self._bindings(expr.value.value, scope)
        if found is None:
            return None
        method, values = found
        if len(values) != 1 or isinstance(values[0], cst.BaseExpression) or values[0][0] != PARAM \
                or values[0][2] != 0:
            return None
        return method.enclosing_class

    def _attribute_kind(self, expr: cst.Attribute, scope: ScopeInfo, seen: Set,
                        elements: Optional[str] = None) -> Optional[str]:
        """``self.dense``: the kind every binding of ``self.dense`` in the class
        (and its same-module bases) gives it; ``None`` bindings aside. A method
        or property of that name, ``self.dense += ...`` or a binding that cannot
        be read (``self.a, self.b = ...``) give no kind. ``elements``: the kind
        of its elements, from the bindings and what the class appends or stores
        into it (``self.trackers.append(m)``, ``self.models[k] = m``), or the
        list displays a property of that name returns."""
        cls = self._self_class(expr, scope)
        if cls is None:
            return None
        objects = self.graphs.objects
        name = expr.attr.value
        method = next((c.defs[name] for c in objects.mro(cls) if name in c.defs), None)
        key = (_OBJECT, "self." + name, id(cls), elements)
        if key in seen:
            return None
        if method is not None:
            if not elements or not _is_property(method):
                return None
            seen.add(key)
            try:
                returned = _returned_values(method)
                return _common(self._element_kind(v, method, seen, elements) for v in returned) if returned else None
            finally:
                seen.discard(key)
        found = objects.attribute_bindings(cls, name)
        if not found:
            return None
        seen.add(key)
        try:
            kinds = []
            for binding in found:
                if binding.how == BIND:
                    kinds.append(self._value_kind(binding.value, binding.method, seen, elements)
                                 if binding.readable else None)
                elif binding.how == AUGMENT:
                    kinds.append(None)
                elif elements:
                    kinds.append(self._added_kind(binding.how, binding.value, binding.method, seen))
            return _common(kinds)
        finally:
            seen.discard(key)

    @staticmethod
    def _bindings(name: str, scope: ScopeInfo) -> Optional[Tuple[ScopeInfo, List[Any]]]:
        """The scope that binds ``name`` by assignment as seen from ``scope``, with
        the values bound there (``model.assigned``: functions' ``global``
        rebindings included, as opaque values)."""
        found = assigned(name, scope)
        return (found.scope, found.values) if found is not None else None


# Markers kept in the `seen` set of one inference.
_FOLLOWING = ("following",)  # inside the returns of a called function: follow no further


def _always_returned(function: ScopeInfo) -> Optional[List[cst.BaseExpression]]:
    """What a same-module function or lambda returns, one expression a ``return``: None unless it
    always returns a value (a bare ``return``, a ``yield`` or ``await``, a path that falls off
    the end: not one value)."""
    node = function.node
    if isinstance(node, cst.Lambda):
        return [node.body]
    if isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.IndentedBlock) \
            and bindings.always_returns(node.body.body):
        return _returned_values(function) or None
    return None
_COMPREHENSION = "comprehension"  # (marker, name): a comprehension variable, not the function's binding
_SEQUENCE = "sequence"
_OBJECT = "object"
_NONE = "none"  # a binding to None (or an empty container), which does not decide an object's kind
# Lists a Keras model or layer holds, and the kind of their elements.
_KERAS_LISTS = {"layers": KERAS, "metrics": METRIC}
# Builtins that make a container from an iterable's elements.
_COPYING_BUILTINS = frozenset({"list", "tuple", "sorted", "reversed", "set", "frozenset", "dict"})


def _common(kinds) -> Optional[str]:
    """The one kind every binding gives (None bindings aside), else None."""
    result = None
    for kind in kinds:
        if kind is None:
            return None
        if kind == _NONE:
            continue
        if result is not None and kind != result:
            return None
        result = kind
    return result


def _is_property(method: ScopeInfo) -> bool:
    node = method.node
    return isinstance(node, cst.FunctionDef) and any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "property" for d in node.decorators)


def _returned_values(method: ScopeInfo) -> List[cst.BaseExpression]:
    """What every ``return`` of a method returns (empty: one returns nothing)."""
    node = method.node
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
        return []
    found = []
    for inner in walk(node.body, skip=SCOPE_TYPES):
        if isinstance(inner, (cst.Yield, cst.Await)):
            return []
        if isinstance(inner, cst.Return):
            if inner.value is None:
                return []
            found.append(inner.value)
    return found


def _call_kind(method: ScopeInfo) -> Optional[str]:
    """``KERAS`` if a layer's own ``call`` returns what may be a tensor,
    ``KERAS_SEQUENCE`` if it returns tuple or list displays, else None."""
    node = method.node
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
        return None
    kinds = set()
    for inner in returns(node.body):
        value = inner.value
        if isinstance(value, (cst.Tuple, cst.List)):
            kinds.add(KERAS_SEQUENCE)
        elif value is None or isinstance(value, (cst.Dict, cst.DictComp, cst.ListComp, cst.Set, cst.SimpleString)) \
                or (isinstance(value, cst.Name) and value.value == "None"):
            return None
        else:
            kinds.add(KERAS)
    return kinds.pop() if len(kinds) == 1 else None


def _returns_sequence_keyword(call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in _RETURNS_SEQUENCE_KEYWORDS:
            return not (isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None"))
    return False


def _in_comprehension(expr: cst.BaseComp, seen: Set, ask):
    """``ask()`` about the comprehension's element with its loop variables
    masked, so that they do not fall through to outer bindings of those names."""
    masked = {(_COMPREHENSION, name) for name in _comprehension_names(expr)} - seen
    seen.update(masked)
    try:
        return ask()
    finally:
        seen.difference_update(masked)


def _comprehension_names(expr: cst.BaseComp) -> Set[str]:
    names: Set[str] = set()
    clause: Optional[cst.CompFor] = expr.for_in
    while clause is not None:
        for node in walk(clause.target):
            if isinstance(node, cst.Name):
                names.add(node.value)
        clause = clause.inner_for_in
    return names

