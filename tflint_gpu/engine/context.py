"""Graph-context analysis: which function bodies run traced as a graph.

A body runs as a graph when it is
* decorated with ``tf.function`` (any spelling, bare or called with arguments);
* wrapped: ``g = tf.function(f, ...)`` or ``tf.function(lambda x: ...)``;
* given to a ``tf.data.Dataset`` transformation (``map``, ``filter``,
  ``flat_map``, ``interleave``, ``reduce``, ``scan``) on a value known to be a
  dataset: tf.data always traces these functions, even in eager programs;
* a Keras ``Layer.call`` or ``Model.train_step/test_step/predict_step`` of a
  subclass of a Keras class (Keras 3 traces them under fit/evaluate/predict and
  does not run AutoGraph on user code);
* a function of the same module called from a graph body (transitively), or
  a function/lambda nested in one;
but not when it is handed to ``tf.py_function``/``tf.numpy_function``, which
run it eagerly.

For each graph body we keep why (for messages), whether AutoGraph converts
it, and the ``tf.function`` call that made it (for the jit_compile rule).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.engine.model import ModuleModel, ScopeInfo
from tflint_gpu.engine.names import Resolver

TF_FUNCTION = "tensorflow.function"
EAGER_WRAPPERS = frozenset({"tensorflow.py_function", "tensorflow.numpy_function", "tensorflow.py_func"})
# Dataset method -> (positional index, keyword) of the function it traces.
DATASET_FUNCTION_ARGS: Dict[str, Tuple[int, str]] = {
    "map": (0, "map_func"),
    "filter": (0, "predicate"),
    "flat_map": (0, "map_func"),
    "interleave": (0, "map_func"),
    "parallel_interleave": (0, "map_func"),
    "reduce": (1, "reduce_func"),
    "scan": (1, "scan_func"),
    "group_by_window": (0, "key_func"),
}
DATASET_METHODS = frozenset(
    {
        "map",
        "filter",
        "flat_map",
        "interleave",
        "batch",
        "padded_batch",
        "unbatch",
        "rebatch",
        "ragged_batch",
        "shuffle",
        "repeat",
        "prefetch",
        "cache",
        "take",
        "skip",
        "shard",
        "concatenate",
        "zip",
        "with_options",
        "apply",
        "enumerate",
        "window",
        "scan",
        "take_while",
        "unique",
        "group_by_window",
        "bucket_by_sequence_length",
        "ignore_errors",
        "snapshot",
        "rejection_resample",
        "sample_from_datasets",
        "choose_from_datasets",
        "random",
        "range",
        "from_tensor_slices",
        "from_tensors",
        "from_generator",
        "list_files",
        "load",
    }
)
DATASET_FACTORIES_PREFIX = ("tensorflow.data.",)
DATASET_FACTORIES = frozenset(
    {
        "keras.utils.image_dataset_from_directory",
        "keras.utils.text_dataset_from_directory",
        "keras.utils.audio_dataset_from_directory",
        "keras.utils.timeseries_dataset_from_array",
        "keras.preprocessing.image_dataset_from_directory",
        "keras.preprocessing.text_dataset_from_directory",
    }
)
KERAS_GRAPH_METHODS = frozenset({"call", "train_step", "test_step", "predict_step"})


@dataclass
class GraphInfo:
    """Why a body runs as a graph, and how."""

    reason: str  # human words for messages: "decorated with tf.function"
    kind: str  # "tf.function" | "dataset" | "keras" | "called" | "nested"
    autograph: bool = True
    # For kind == "tf.function": the call or decorator expression that made it.
    origin: Optional[cst.BaseExpression] = None
    jit_compile: Optional[cst.Arg] = None
    # For kind == "called": the call sites (call, caller scope) reaching it.
    call_sites: List[Tuple[cst.Call, ScopeInfo]] = field(default_factory=list)


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def argument(call: cst.Call, position: int, name: str) -> Optional[cst.BaseExpression]:
    """The expression passed at ``position`` or as keyword ``name``."""
    found = keyword(call, name)
    if found is not None:
        return found.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position < len(positional):
        return positional[position].value
    return None


def is_false(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


class GraphAnalysis:
    def __init__(self, model: ModuleModel, resolver: Resolver) -> None:
        self.model = model
        self.resolver = resolver
        self._dataset_cache: Dict[int, bool] = {}

    # -- datasets -------------------------------------------------------
    def is_dataset(self, expr: cst.BaseExpression, scope: ScopeInfo, _seen: Optional[set] = None) -> bool:
        key = id(expr)
        cached = self._dataset_cache.get(key)
        if cached is not None:
            return cached
        seen = _seen if _seen is not None else set()
        result = self._is_dataset(expr, scope, seen)
        if _seen is None:
            self._dataset_cache[key] = result
        return result

    def _is_dataset(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: set) -> bool:
        if isinstance(expr, cst.Call):
            qualname = self.resolver.qualname(expr.func, scope)
            if qualname is not None:
                return qualname.startswith(DATASET_FACTORIES_PREFIX) or qualname in DATASET_FACTORIES
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in DATASET_METHODS:
                return self.is_dataset(func.value, scope, seen)
            return False
        if isinstance(expr, cst.Name):
            return self._name_is(expr.value, scope, seen, self.is_dataset)
        return False

    def _name_is(self, name: str, scope: ScopeInfo, seen: set, predicate) -> bool:
        """True if some expression bound to ``name`` (in the innermost scope that
        binds it) satisfies ``predicate``; parameters and loop targets never do."""
        current = scope.binding_scope(name)
        if current is None or (name, id(current)) in seen:
            return False
        seen.add((name, id(current)))
        try:
            return any(
                isinstance(value, cst.BaseExpression) and predicate(value, current, seen)
                for value in current.assigned[name]
            )
        finally:
            seen.discard((name, id(current)))

    # -- graph contexts -------------------------------------------------
    def run(self) -> None:
        model = self.model
        for node, scope in model.index.get("FunctionDef", ()):
            inner = model.scope_of_node[node]
            for decorator in node.decorators:
                self._mark_decorator(inner, decorator.decorator, scope)
            if node.name.value in KERAS_GRAPH_METHODS:
                cls = inner.enclosing_class
                if cls is not None and self.is_keras_class(cls):
                    self._mark(
                        inner,
                        GraphInfo(
                            reason=f"Keras traces `{node.name.value}` into a graph under fit/evaluate/predict",
                            kind="keras",
                            autograph=False,
                        ),
                    )
        for call, scope in model.index.get("Call", ()):
            self._mark_call(call, scope)
        self._propagate()

    def function_scope(self, expr: Optional[cst.BaseExpression], scope: ScopeInfo) -> Optional[ScopeInfo]:
        """The same-module function or lambda ``expr`` (a callee, a function
        argument) refers to, if it can be told: ``f``, ``self.method``,
        ``lambda ...``, ``functools.partial(f, ...)``."""
        if isinstance(expr, cst.Lambda):
            return self.model.scope_of_node.get(expr)
        if isinstance(expr, cst.Name):
            return scope.lookup_def(expr.value)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = _method_class(scope)
            if cls is not None:
                return cls.defs.get(expr.attr.value)
        if isinstance(expr, cst.Call):
            # functools.partial(f, ...)
            qualname = self.resolver.qualname(expr.func, scope)
            if qualname == "functools.partial" and expr.args:
                return self.function_scope(expr.args[0].value, scope)
        return None

    def _mark_decorator(self, inner: ScopeInfo, decorator: cst.BaseExpression, scope: ScopeInfo) -> None:
        call = decorator if isinstance(decorator, cst.Call) else None
        target = call.func if call is not None else decorator
        if self.resolver.qualname(target, scope) != TF_FUNCTION:
            return
        self._mark(inner, self._tf_function_info(call, decorator, "decorated with `tf.function`"))

    def _tf_function_info(self, call: Optional[cst.Call], origin: cst.BaseExpression, reason: str) -> GraphInfo:
        autograph = True
        jit = None
        if call is not None:
            autograph_arg = keyword(call, "autograph")
            autograph = not (autograph_arg is not None and is_false(autograph_arg.value))
            jit = keyword(call, "jit_compile") or keyword(call, "experimental_compile")
        if not autograph:
            reason += " with `autograph=False`"
        return GraphInfo(reason=reason, kind="tf.function", autograph=autograph, origin=origin, jit_compile=jit)

    def _mark_call(self, call: cst.Call, scope: ScopeInfo) -> None:
        qualname = self.resolver.qualname(call.func, scope)
        if qualname == TF_FUNCTION:
            target = self.function_scope(argument(call, 0, "func"), scope)
            if target is not None:
                self._mark(target, self._tf_function_info(call, call, "wrapped by `tf.function`"))
            return
        if qualname in EAGER_WRAPPERS:
            target = self.function_scope(argument(call, 0, "func"), scope)
            if target is not None:
                target.excluded = True
            return
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in DATASET_FUNCTION_ARGS:
            position, name = DATASET_FUNCTION_ARGS[func.attr.value]
            function_expr = argument(call, position, name)
            if function_expr is None:
                return
            target = self.function_scope(function_expr, scope)
            if target is not None and self.is_dataset(func.value, scope):
                self._mark(
                    target,
                    GraphInfo(
                        reason=f"tf.data traces functions given to `Dataset.{func.attr.value}`",
                        kind="dataset",
                    ),
                )

    def _mark(self, scope: ScopeInfo, info: GraphInfo) -> None:
        existing = scope.graph
        if existing is None:
            scope.graph = info
            return
        # Keep the strongest evidence; AutoGraph is on only if on for every caller.
        existing.autograph = existing.autograph and info.autograph
        if existing.kind in ("called", "nested") and info.kind not in ("called", "nested"):
            info.autograph = existing.autograph
            scope.graph = info
        elif existing.kind == "called" and info.kind == "called":
            existing.call_sites.extend(info.call_sites)

    def _propagate(self) -> None:
        worklist = [s for s in self.model.scopes if s.graph is not None]
        done = set()
        while worklist:
            scope = worklist.pop()
            if id(scope) in done:
                continue
            done.add(id(scope))
            for call in scope.calls:
                target = self.function_scope(call.func, scope)
                if target is None or target is scope or target.excluded:
                    continue
                first = target.graph is None
                self._mark(
                    target,
                    GraphInfo(
                        reason=f"called from graph function `{self.describe(scope)}`",
                        kind="called",
                        autograph=scope.graph.autograph if scope.graph else True,
                        call_sites=[(call, scope)],
                    ),
                )
                if first:
                    worklist.append(target)
            # Functions and lambdas nested in a graph body run in that graph.
            for nested in scope.nested:
                if nested.graph is None and not nested.excluded:
                    nested.graph = GraphInfo(
                        reason=f"nested in graph function `{self.describe(scope)}`",
                        kind="nested",
                        autograph=scope.graph.autograph if scope.graph else True,
                    )
                    worklist.append(nested)

    def reachable(self, start: ScopeInfo, through_arguments: bool = False) -> List[ScopeInfo]:
        """``start``, the functions nested in it, and the same-module functions they
        call (with ``through_arguments``, also those handed by name to a call, as in
        ``tf.while_loop(cond, body, ...)``), transitively; ``start`` first."""
        found = [start]
        seen = {id(start)}
        for current in found:
            targets: List[Optional[ScopeInfo]] = list(current.nested)
            for call in current.calls:
                targets.append(self.function_scope(call.func, current))
                if through_arguments:
                    targets.extend(
                        self.function_scope(arg.value, current) for arg in call.args if isinstance(arg.value, cst.Name)
                    )
            for target in targets:
                if target is not None and id(target) not in seen:
                    seen.add(id(target))
                    found.append(target)
        return found

    @staticmethod
    def describe(scope: ScopeInfo) -> str:
        cls = scope.enclosing_class
        return f"{cls.name}.{scope.name}" if cls is not None else scope.name

    # -- Keras ----------------------------------------------------------
    def is_keras_class(self, cls: ScopeInfo, _depth: int = 0) -> bool:
        if _depth > 20 or not isinstance(cls.node, cst.ClassDef):
            return False
        parent = cls.parent or cls
        for base in cls.node.bases:
            qualname = self.resolver.qualname(base.value, parent)
            if qualname is not None:
                if qualname.startswith("keras."):
                    return True
                continue
            if isinstance(base.value, cst.Name):
                local = parent.lookup_class(base.value.value)
                if local is not None and local is not cls and self.is_keras_class(local, _depth + 1):
                    return True
        return False


def _method_class(scope: ScopeInfo) -> Optional[ScopeInfo]:
    for current in scope.chain():
        cls = current.enclosing_class
        if cls is not None:
            return cls
    return None
