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

from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.api import (
    TF_FUNCTION,
    EAGER_WRAPPERS,
    DATASET_FUNCTION_ARGS,
    TRACING_FUNCTIONS,
    KERAS_GRAPH_METHODS,
    ASSERT_FEATURES,
    TRANSPARENT_DECORATORS,
    OTHER_BACKENDS,
    keyword,
    argument,
    is_false,
)
from tflint_gpu.semantic.datasets import DatasetInference
from tflint_gpu.semantic.model import ModuleModel, ScopeInfo, assigned, lookup
from tflint_gpu.semantic.names import Resolver, normalize
from tflint_gpu.semantic.objects import Objects
from tflint_gpu.semantic.uses import Uses


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
    # For kind == "keras": "keras3" (Keras 3, or tf.keras in TF 2.16+) or
    # "tf_keras" (Keras 2: it converts `call` with AutoGraph).
    keras: Optional[str] = None
    # For kind == "tf.function": AutoGraph turns `assert` statements into
    # tf.Assert (`experimental_autograph_options` holds
    # Feature.ASSERT_STATEMENTS or Feature.ALL; not by default in TF 2.21).
    converts_asserts: bool = False


class GraphAnalysis:
    def __init__(self, model: ModuleModel, resolver: Resolver) -> None:
        self.model = model
        self.resolver = resolver
        self.datasets = DatasetInference(self)
        self._bases: Dict[int, List[str]] = {}
        self._objects = None
        self._uses = None
        self._other_backend: Optional[bool] = None

    # -- datasets -------------------------------------------------------
    def is_dataset(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is ``expr`` known to be a ``tf.data.Dataset``? (``semantic.datasets.DatasetInference``)"""
        return self.datasets.is_dataset(expr, scope)

    # -- graph contexts -------------------------------------------------
    def run(self) -> None:
        model = self.model
        for node, scope in model.index.get("FunctionDef", ()):
            inner = model.scope_of_node[node]
            for decorator in node.decorators:
                self._mark_decorator(inner, decorator.decorator, scope)
            if node.name.value in KERAS_GRAPH_METHODS:
                cls = inner.enclosing_class
                flavour = self.keras_flavour(cls) if cls is not None else None
                if flavour is not None and not (flavour == "keras3" and self._other_backend_module()):
                    self._mark(
                        inner,
                        GraphInfo(
                            reason=f"Keras traces `{node.name.value}` into a graph under fit/evaluate/predict",
                            kind="keras",
                            # Keras 3 runs no AutoGraph on user code; Keras 2 (tf_keras)
                            # converts `call` (and what it calls), not the step methods.
                            autograph=flavour == "tf_keras" and node.name.value == "call",
                            keras=flavour,
                        ),
                    )
        for call, scope in model.index.get("Call", ()):
            self._mark_call(call, scope)
        self._propagate()

    def function_scope(self, expr: Optional[cst.BaseExpression], scope: ScopeInfo) -> Optional[ScopeInfo]:
        """The same-module function or lambda ``expr`` (a callee, a function
        argument) refers to, if it can be told: ``f``, ``self.method``,
        ``lambda ...``, ``functools.partial(f, ...)``, and the ``__call__`` of
        an instance of a same-module class (``Preprocess()``, or a name bound
        once to one)."""
        if isinstance(expr, cst.Lambda):
            return self.model.scope_of_node.get(expr)
        if isinstance(expr, cst.Name):
            found = scope.lookup_def(expr.value, expr)
            if found is None:
                value = assigned(expr.value, scope)
                instance = value.single_value if value is not None else None
                if isinstance(instance, cst.Call):
                    return self._instance_call(instance, value.scope)
            return found
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = scope.method_class()
            if cls is not None:
                return cls.defs.get(expr.attr.value)
        if isinstance(expr, cst.Call):
            # functools.partial(f, ...)
            qualname = self.resolver.qualname(expr.func, scope)
            if qualname == "functools.partial" and expr.args:
                return self.function_scope(expr.args[0].value, scope)
            return self._instance_call(expr, scope)
        return None

    @staticmethod
    def _instance_call(call: cst.Call, scope: ScopeInfo) -> Optional[ScopeInfo]:
        """``Cls(...)`` of a same-module class with a ``__call__``: that method."""
        if not isinstance(call.func, cst.Name):
            return None
        cls = scope.lookup_class(call.func.value)
        return cls.defs.get("__call__") if cls is not None else None

    def _mark_decorator(self, inner: ScopeInfo, decorator: cst.BaseExpression, scope: ScopeInfo) -> None:
        call = decorator if isinstance(decorator, cst.Call) else None
        target = call.func if call is not None else decorator
        qualname = self.resolver.qualname(target, scope)
        if qualname in EAGER_WRAPPERS or self._wraps_eagerly(target, scope):
            inner.excluded = True  # `@tf.py_function(Tout=...)`, or a decorator handing it to one
            return
        if qualname != TF_FUNCTION:
            return
        self._mark(inner, self._tf_function_info(call, decorator, "decorated with `tf.function`", scope))

    def _wraps_eagerly(self, decorator: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """A same-module decorator whose wrapper hands the decorated function to
        ``tf.py_function``/``tf.numpy_function`` (``def deco(func): def wrapper(*a):
        return tf.py_function(func, a, ...)``): the function runs eagerly."""
        if not isinstance(decorator, cst.Name):
            return False
        outer = scope.lookup_def(decorator.value)
        parameter = bindings.first_parameter(outer) if outer is not None else None
        if parameter is None:
            return False
        for current in [outer] + list(outer.nested):
            for call in current.calls:
                func = argument(call, 0, "func")
                if isinstance(func, cst.Name) and func.value == parameter \
                        and self.resolver.qualname(call.func, current) in EAGER_WRAPPERS:
                    return True
        return False

    def _tf_function_info(self, call: Optional[cst.Call], origin: cst.BaseExpression, reason: str,
                          scope: ScopeInfo) -> GraphInfo:
        autograph = True
        jit = None
        asserts = False
        if call is not None:
            autograph_arg = keyword(call, "autograph")
            autograph = not (autograph_arg is not None and is_false(autograph_arg.value))
            jit = keyword(call, "jit_compile") or keyword(call, "experimental_compile")
            options = keyword(call, "experimental_autograph_options")
            asserts = autograph and options is not None and any(
                isinstance(node, (cst.Attribute, cst.Name)) and self.resolver.qualname(node, scope) in ASSERT_FEATURES
                for node in bindings.expression_nodes(options.value))
        if not autograph:
            reason += " with `autograph=False`"
        return GraphInfo(reason=reason, kind="tf.function", autograph=autograph, origin=origin, jit_compile=jit,
                         converts_asserts=asserts)

    def below_tf_function(self, function: ScopeInfo) -> List[cst.BaseExpression]:
        """The decorators a decorated ``tf.function`` is stacked over (written
        below it), so applied first: the tf.function traces what they return,
        not the body as written. ``staticmethod``, ``classmethod``,
        ``functools.wraps(...)``, TensorFlow's own decorators
        (``tf.custom_gradient``) and Keras's ``register_keras_serializable``
        are left out: they hand on the body."""
        info = function.graph
        node = function.node
        if info is None or info.kind != "tf.function" or not isinstance(node, cst.FunctionDef):
            return []
        place = next((i for i, d in enumerate(node.decorators) if d.decorator is info.origin), None)
        if place is None:
            return []
        outer = function.parent or function
        found = []
        for decorator in node.decorators[place + 1:]:
            expr = decorator.decorator
            target = expr.func if isinstance(expr, cst.Call) else expr
            qualname = self.resolver.qualname(target, outer)
            if isinstance(target, cst.Name) and target.value in ("staticmethod", "classmethod") \
                    and lookup(target.value, outer) is None:
                continue
            if qualname in TRANSPARENT_DECORATORS or (
                    qualname is not None and qualname.startswith("tensorflow.") and qualname not in EAGER_WRAPPERS):
                continue
            if qualname is not None and qualname.startswith("keras.") \
                    and qualname.endswith(".register_keras_serializable"):
                continue  # registers the function and returns it (TF 2.21: `deco(f) is f`)
            found.append(expr)
        return found

    def _mark_call(self, call: cst.Call, scope: ScopeInfo) -> None:
        qualname = self.resolver.qualname(call.func, scope)
        if qualname == TF_FUNCTION:
            target = self.function_scope(argument(call, 0, "func"), scope)
            if target is not None:
                self._mark(target, self._tf_function_info(call, call, "wrapped by `tf.function`", scope))
            return
        if qualname in EAGER_WRAPPERS:
            target = self.function_scope(argument(call, 0, "func"), scope)
            if target is not None:
                target.excluded = True
            return
        func = call.func
        if qualname in TRACING_FUNCTIONS:
            self._mark_traced_arguments(call, TRACING_FUNCTIONS[qualname], scope, qualname.rsplit(".", 1)[1])
        elif isinstance(func, cst.Attribute) and func.attr.value in DATASET_FUNCTION_ARGS \
                and self.is_dataset(func.value, scope):
            self._mark_traced_arguments(call, DATASET_FUNCTION_ARGS[func.attr.value], scope,
                                        f"Dataset.{func.attr.value}")

    def _mark_traced_arguments(self, call: cst.Call, parameters, scope: ScopeInfo, what: str) -> None:
        for position, name in parameters:
            target = self.function_scope(argument(call, position, name), scope)
            if target is not None:
                self._mark(target, GraphInfo(reason=f"tf.data traces functions given to `{what}`", kind="dataset"))

    def _mark(self, scope: ScopeInfo, info: GraphInfo) -> None:
        """Record why ``scope`` runs as a graph, keeping the strongest evidence.

        AutoGraph is a property of each function: a ``tf.function`` (or a
        tf.data function) converts its own body whoever calls it, and a Keras 3
        method is never converted; only a function that runs inside its
        callers' graphs ("called", "nested") is converted if every caller's is."""
        existing = scope.graph
        if existing is None:
            scope.graph = info
            return
        own = ("tf.function", "dataset", "keras")
        if existing.kind in own:
            return
        if info.kind in own:
            scope.graph = info
            return
        existing.autograph = existing.autograph and info.autograph
        if existing.kind == "called" and info.kind == "called":
            existing.call_sites.extend(info.call_sites)
        elif existing.kind == "nested" and info.kind == "called":
            info.autograph = existing.autograph  # keep the call sites: rules read them
            scope.graph = info

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

    def reachable(self, start: ScopeInfo, through_arguments: bool = False,
                  through_objects: bool = False) -> List[ScopeInfo]:
        """``start``, the functions nested in it, and the same-module functions they
        call (with ``through_arguments``, also those handed by name to a call, as in
        ``tf.while_loop(cond, body, ...)``), transitively; ``start`` first. With
        ``through_objects``, also through the module's own objects (``objects``:
        ``self.decoder.cell.get_initial_state(x)``, a layer of the file called,
        ``tf.while_loop(self.cond, self.body, ...)``)."""
        return self.reach(start, through_arguments, through_objects)[0]

    def reach(self, start: ScopeInfo, through_arguments: bool = False, through_objects: bool = False
              ) -> Tuple[List[ScopeInfo], List[Tuple[cst.Call, ScopeInfo]]]:
        """``reachable``, and (with ``through_objects``) the calls among them that
        go to a method the engine cannot find on an object of one of the module's
        own classes: code of the module that cannot be followed."""
        found = [start]
        seen = {id(start)}
        unresolved: List[Tuple[cst.Call, ScopeInfo]] = []
        for current in found:
            targets: List[Optional[ScopeInfo]] = list(current.nested)
            for call in current.calls:
                targets.append(self.function_scope(call.func, current))
                if through_objects:
                    more, lost = self.objects.callees(call, current)
                    targets.extend(more)
                    if lost:
                        unresolved.append((call, current))
                if through_arguments:
                    for arg in call.args:
                        if isinstance(arg.value, cst.Name):
                            targets.append(self.function_scope(arg.value, current))
                        elif through_objects and isinstance(arg.value, cst.Attribute):
                            targets.append(self.function_scope(arg.value, current))
                            targets.extend(self.objects.references(arg.value, current))
            for target in targets:
                if target is not None and id(target) not in seen:
                    seen.add(id(target))
                    found.append(target)
        return found, unresolved

    @property
    def uses(self):
        """Where the module's own functions are used by name, and which only
        tf.data or Keras trace, built on first use: an ``semantic.uses.Uses``."""
        if self._uses is None:
            self._uses = Uses(self)
        return self._uses

    @property
    def objects(self):
        """Objects of the module's own classes (which class an object is, which
        methods a call on it runs), built on first use: an
        ``semantic.objects.Objects``."""
        if self._objects is None:
            self._objects = Objects(self)
        return self._objects

    @staticmethod
    def describe(scope: ScopeInfo) -> str:
        cls = scope.enclosing_class
        return f"{cls.name}.{scope.name}" if cls is not None else scope.name

    # -- Keras ----------------------------------------------------------
    def is_keras_class(self, cls: ScopeInfo) -> bool:
        return self.keras_flavour(cls) is not None

    def class_bases(self, cls: ScopeInfo) -> List[str]:
        """The imported base classes of a class (raw qualified names, as
        ``Resolver.raw_qualname`` gives them), through its same-module bases,
        depth first in the order the bases are written."""
        key = id(cls)
        found = self._bases.get(key)
        if found is not None:
            return found
        self._bases[key] = found = []  # a cycle of bases adds nothing
        if not isinstance(cls.node, cst.ClassDef):
            return found
        parent = cls.parent or cls
        for base in cls.node.bases:
            if base.keyword is not None or base.star:
                continue
            raw = self.resolver.raw_qualname(base.value, parent)
            if raw is not None:
                found.extend(self.resolver.class_bases(raw))  # and a project class's own, across modules
            elif isinstance(base.value, cst.Name):
                local = parent.lookup_class(base.value.value)
                if local is not None and local is not cls:
                    found.extend(self.class_bases(local))
        return found

    def keras_flavour(self, cls: ScopeInfo) -> Optional[str]:
        """Which Keras a class derives from, decided per class by its bases:
        "tf_keras" (Keras 2: ``tf_keras``, ``tensorflow.python.keras``) or
        "keras3" (``keras``, and ``tf.keras`` as in TensorFlow 2.16+); None
        if it is not a Keras class."""
        for raw in self.class_bases(cls):
            if normalize(raw).startswith("keras."):
                return "tf_keras" if raw.startswith(("tf_keras.", "tensorflow.python.keras.")) else "keras3"
        return None

    def _other_backend_module(self) -> bool:
        """Does this module import another Keras backend and not TensorFlow? (Once
        per file: asked for each Keras graph method.)"""
        if self._other_backend is None:
            targets = [normalize(t) for scope in self.model.scopes for t in scope.imports.values()]
            self._other_backend = not any(t == "tensorflow" or t.startswith("tensorflow.") for t in targets) and any(
                t.split(".", 1)[0] in OTHER_BACKENDS for t in targets
            )
        return self._other_backend
