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
* a Keras 3/tf_keras method of a class inheriting it from a same-module base
  that is not itself a Keras class (``class Net(Mixin, keras.Model)``, the
  mixin's ``call``/``train_step``);
* a Loss subclass's ``call``, a Metric subclass's ``update_state`` and
  ``result`` (``__init__`` and ``reset_state`` run eagerly);
* a function (or object's ``__call__``) given to ``model.compile`` as
  ``loss=``, ``metrics=`` or ``weighted_metrics=`` (also in lists and dicts,
  and the function a same-module factory returns: ``loss=focal(2.0)``), unless
  ``run_eagerly=`` is set; a function given to ``keras.layers.Lambda``;
* a function handed to ``tf.map_fn``, ``tf.scan``, ``tf.foldl``/``foldr``,
  ``tf.while_loop`` (cond and body), ``tf.cond``, ``tf.switch_case``,
  ``tf.case`` or ``strategy.run`` by graph code: called eagerly, these run it
  eagerly, so they are graph code only where the call is; and a function
  handed to ``tf.vectorized_map``, which traces it even when called eagerly;
* a function of the same module called from a graph body (transitively;
  also a method of an object of the module's own classes whose class is
  told: ``self.pool(x)``, ``self.pool.query(x)`` after ``self.pool =
  ImagePool()``), or
  a function/lambda nested in one;
but not when it is handed to ``tf.py_function``/``tf.numpy_function``, which
run it eagerly.

AutoGraph (measured, TF 2.21, Keras 3.15, tf_keras 2.21): a ``tf.function``
converts its body (and what it calls) unless ``autograph=False``; tf.data
converts its functions; Keras 3 converts nothing (not ``call``, the steps,
losses, metrics nor ``Lambda`` functions); tf_keras converts ``call``, a Loss's
``call``, a Metric's ``update_state``/``result`` and the loss and metric
functions given to ``compile``, not the steps nor ``Lambda`` functions. Of the
functions handed to TensorFlow's control flow only ``tf.map_fn``'s is
converted, where the caller's AutoGraph status is enabled or unspecified (a
``tf.function``, tf.data, tf_keras code; not Keras 3 nor ``autograph=False``),
and ``strategy.run``'s under a ``tf.function`` only; a function nested in
converted code is converted with it whoever runs it. ``status`` keeps that
AutoGraph status for each body.

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
    KERAS_LOSS_METHODS,
    KERAS_METRIC_METHODS,
    KERAS_COMPILE_FUNCTIONS,
    CONTROL_FLOW_FUNCTIONS,
    CONVERTING_CONTROL_FLOW,
    VECTORIZED_MAP,
    STRATEGY_RUN_METHODS,
    ASSERT_FEATURES,
    TRANSPARENT_DECORATORS,
    OTHER_BACKENDS,
    keyword,
    argument,
    is_false,
)
from tflint_gpu.semantic.datasets import DatasetInference
from tflint_gpu.semantic.model import ModuleModel, ScopeInfo, assigned, lookup, returns
from tflint_gpu.semantic.names import Resolver, normalize
from tflint_gpu.semantic.objects import Objects
from tflint_gpu.semantic.uses import Uses


@dataclass
class GraphInfo:
    """Why a body runs as a graph, and how."""

    reason: str  # human words for messages: "decorated with tf.function"
    # "tf.function" | "dataset" | "keras" (what Keras runs: methods, losses,
    # metrics, Lambda functions) | "handed" (given to tf.map_fn, tf.cond, ... by
    # graph code, or to tf.vectorized_map) | "called" | "nested"
    kind: str
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
    # AutoGraph's status where the body runs: "enabled" (a tf.function with
    # AutoGraph and what it converts), "unspecified" (tf.data, tf_keras) or
    # "disabled" (`autograph=False`, Keras 3). tf.map_fn converts its function
    # unless disabled; strategy.run only when enabled.
    status: str = "enabled"
    # For kind == "keras": how many leading parameters (after `self`) Keras fills
    # with tensors: 1 for `call(inputs)`/`train_step(data)`/a Lambda function,
    # 2 for a loss's or metric's `(y_true, y_pred)`.
    data_parameters: int = 1
    # For kind == "called" from graph code of another module (no call site here): the positions
    # every such call gives a parameter of its graph def (the data: tensors there).
    data_positions: Tuple[int, ...] = ()


# AutoGraph statuses from the weakest: a body reached under several keeps the weakest.
_STATUS_ORDER = {"disabled": 0, "unspecified": 1, "enabled": 2}


_ALL_KERAS_METHODS = KERAS_GRAPH_METHODS | KERAS_LOSS_METHODS | KERAS_METRIC_METHODS


def _weakest(first: str, second: str) -> str:
    return first if _STATUS_ORDER[first] <= _STATUS_ORDER[second] else second


class GraphAnalysis:
    def __init__(self, model: ModuleModel, resolver: Resolver, tf_keras_is_keras2: bool = False,
                 file_settings: bool = True) -> None:
        self.model = model
        self.resolver = resolver
        # The file's target is Keras 2 (TF 2.15 and older, tf_keras under 2.16+, or the file sets
        # TF_USE_LEGACY_KERAS itself: ``semantic.target.file_target``): ``tf.keras`` is Keras 2.
        self.tf_keras_is_keras2 = tf_keras_is_keras2
        # A file that names TF_USE_LEGACY_KERAS may run under either Keras; not where the target
        # takes no file's setting (upgrade's destination: Keras 3 everywhere).
        self.file_settings = file_settings
        self.datasets = DatasetInference(self)
        self._bases: Dict[int, List[str]] = {}
        self._objects = None
        self._flow = None
        self._uses = None
        self._other_backend: Optional[bool] = None
        self._module_flavour: Optional[str] = None
        self._keras_import: Optional[bool] = None
        self._vectorized: List[Tuple[cst.Call, ScopeInfo]] = []
        self._done: set = set()
        self._call_sites: Optional[Dict[int, List[Tuple[cst.Call, ScopeInfo]]]] = None
        # id(function scope) -> this module's `compile(metrics=...)` calls that give it (``compile_metric``)
        self._metric_functions: Dict[int, List[cst.Call]] = {}

    # -- datasets -------------------------------------------------------
    def is_dataset(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is ``expr`` known to be a ``tf.data.Dataset``? (``semantic.datasets.DatasetInference``)"""
        return self.datasets.is_dataset(expr, scope)

    # -- graph contexts -------------------------------------------------
    def release(self) -> None:
        """Break the cycles between this analysis and the inferences that ask it (``ModuleModel.release``)."""
        self.datasets = None
        self._objects = None
        self._flow = None
        self._uses = None
        self._call_sites = None
        self.model.release()

    def call_sites(self, function: ScopeInfo) -> List[Tuple[cst.Call, ScopeInfo]]:
        """The calls of this module that call ``function`` directly: by a name (``train(model, opt)``,
        ``step(x)`` for an instance ``step`` of a class whose ``__call__`` it is) or as
        ``self.<method>(...)`` (in the method's class, and in a same-module subclass that inherits it:
        every definition the call may run); not through ``functools.partial``. Found once for every
        function."""
        if self._call_sites is None:
            sites: Dict[int, List[Tuple[cst.Call, ScopeInfo]]] = {}
            for call, scope in self.model.index.get("Call", ()):
                func = call.func
                if func.__class__ is cst.Name:
                    target = self.function_scope(func, scope)
                    if target is not None:
                        sites.setdefault(id(target), []).append((call, scope))
                elif func.__class__ is cst.Attribute and func.value.__class__ is cst.Name \
                        and func.value.value == "self":
                    cls = scope.method_class()
                    if cls is None:
                        continue
                    for target in self.objects.methods(cls, func.attr.value):
                        sites.setdefault(id(target), []).append((call, scope))
            self._call_sites = sites
        return self._call_sites.get(id(function), [])

    def run(self) -> None:
        model = self.model
        for node, scope in model.index.get("FunctionDef", ()):
            inner = model.scope_of_node[node]
            for decorator in node.decorators:
                self._mark_decorator(inner, decorator.decorator, scope)
            cls = inner.enclosing_class
            if cls is not None:
                self._mark_keras_method(inner, cls, cls)
        for cls in model.scopes:
            if cls.kind == "class":
                self._mark_inherited(cls)
        for call, scope in model.index.get("Call", ()):
            self._mark_call(call, scope)
        self._mark_called_from_other_graphs()
        self._propagate([s for s in self.model.scopes if s.graph is not None], set())
        # tf.vectorized_map traces its function even when called eagerly.
        late = []
        for call, scope in self._vectorized:
            function = scope.function()
            if function is not None and function.graph is not None and not function.excluded:
                continue  # marked while its graph was followed
            for target in self._handed_targets(call, ((0, "fn"),), scope):
                if target.graph is None:
                    late.append(target)
                self._mark(target, GraphInfo(reason="`tf.vectorized_map` traces it, even when called eagerly",
                                             kind="handed", autograph=False, status="unspecified"))
        if late:
            self._propagate(late, self._done)

    def _mark_called_from_other_graphs(self) -> None:
        """A top-level def of this module that another module of the project calls from its graph code
        (a ``@tf.function`` body, a Keras ``call``/``train_step``/``update_state``: the project index's
        ``graph_callers``) runs in that graph: ``.numpy()`` in a helper a metric's ``update_state`` calls."""
        project = self.resolver.project
        if project is None:
            return
        for node, scope in self.model.index.get("FunctionDef", ()):
            if scope is not self.model.root:
                continue
            inner = self.model.scope_of_node[node]
            if inner.graph is not None or inner.excluded:
                continue
            caller = project.graph_caller(node.name.value)
            if caller is not None:
                self._mark(inner, GraphInfo(reason=f"called from graph code in `{caller}`", kind="called",
                                            status="unspecified",
                                            data_positions=project.graph_data_positions(node.name.value)))

    # -- Keras ------------------------------------------------------------------
    def _keras_methods(self, cls: ScopeInfo) -> Dict[str, str]:
        """The methods Keras runs as graph code on a Keras class, each with its
        reason: ``call`` and the steps, a Loss's ``call``, a Metric's
        ``update_state``/``result``."""
        names = dict.fromkeys(KERAS_GRAPH_METHODS, "layer")
        role = self._keras_role(cls)
        if role == "loss":
            names.update(dict.fromkeys(KERAS_LOSS_METHODS, "loss"))
        elif role == "metric":
            names.update(dict.fromkeys(KERAS_METRIC_METHODS, "metric"))
        return names

    def _keras_role(self, cls: ScopeInfo) -> Optional[str]:
        """"loss" for a subclass of a Keras loss class, "metric" of a metric class."""
        for raw in self.class_bases(cls):
            parts = normalize(raw).split(".")
            if len(parts) >= 3 and parts[0] == "keras" and parts[-1][:1].isupper():
                area = parts[2] if parts[1] == "src" else parts[1]
                if area == "losses":
                    return "loss"
                if area == "metrics":
                    return "metric"
        return None

    def _mark_keras_method(self, method: ScopeInfo, owner: ScopeInfo, keras_cls: ScopeInfo) -> bool:
        """Mark ``method`` (defined on ``owner``) if Keras runs it as graph code
        on ``keras_cls`` (``owner`` itself, or a Keras class inheriting it)."""
        if method.name not in _ALL_KERAS_METHODS:
            return False
        flavour = self.keras_flavour(keras_cls)
        if flavour is None or (flavour == "keras3" and self._other_backend_module()):
            return False
        role = self._keras_methods(keras_cls).get(method.name)
        if role is None:
            return False
        name = method.name
        inherited = f" (inherited by `{keras_cls.name}`)" if owner is not keras_cls else ""
        if role == "layer":
            reason = f"Keras traces `{name}`{inherited} into a graph under fit/evaluate/predict"
            # Keras 3 runs no AutoGraph on user code; Keras 2 (tf_keras) converts
            # `call` (and what it calls), not the step methods.
            converts = flavour == "tf_keras" and name == "call"
        else:
            what = "loss" if role == "loss" else "metric"
            reason = f"Keras traces a {what}'s `{name}`{inherited} into its training and evaluation steps"
            converts = flavour == "tf_keras"  # tf_keras converts a Loss's call, a Metric's update_state/result
        self._mark(method, GraphInfo(
            reason=reason, kind="keras", autograph=converts, keras=flavour,
            status="unspecified" if flavour == "tf_keras" else "disabled",
            data_parameters=1 if role == "layer" else 2))
        return True

    def _mark_inherited(self, cls: ScopeInfo) -> None:
        """The methods a Keras class inherits from same-module bases that are not
        Keras classes themselves (a mixin's ``call``): Keras runs them on it."""
        if self.keras_flavour(cls) is None or not isinstance(cls.node, cst.ClassDef):
            return
        wanted = set(self._keras_methods(cls)) - set(cls.defs)
        for base in self._local_bases(cls):
            if not wanted:
                return
            found = wanted & set(base.defs)
            wanted -= found
            if self.keras_flavour(base) is not None:
                continue  # a Keras class: its methods are marked as its own
            for name in found:
                self._mark_keras_method(base.defs[name], base, cls)

    def _local_bases(self, cls: ScopeInfo) -> List[ScopeInfo]:
        """The same-module base classes of ``cls``, depth first in the order written."""
        found: List[ScopeInfo] = []
        stack = [cls]
        seen = {id(cls)}
        while stack:
            current = stack.pop()
            parent = current.parent or current
            local = []
            for base in current.node.bases if isinstance(current.node, cst.ClassDef) else ():
                if base.keyword is None and not base.star and isinstance(base.value, cst.Name):
                    other = parent.lookup_class(base.value.value)
                    if other is not None and id(other) not in seen:
                        seen.add(id(other))
                        local.append(other)
            found.extend(local)
            stack.extend(reversed(local))
        return found

    def _module_keras(self) -> str:
        """The Keras a file's `compile` calls belong to: "tf_keras" if it imports
        tf_keras (or tensorflow.python.keras), else "keras3"."""
        if self._module_flavour is None:
            targets = [t for scope in self.model.scopes for t in scope.imports.values()]
            self._module_flavour = "tf_keras" if any(
                t == "tf_keras" or t.startswith(("tf_keras.", "tensorflow.python.keras")) for t in targets) \
                or ("TF_USE_LEGACY_KERAS" in self.model.source and self.file_settings) \
                or self.tf_keras_is_keras2 else "keras3"
        return self._module_flavour

    def _mark_compile(self, call: cst.Call, scope: ScopeInfo) -> None:
        """``model.compile(loss=f, metrics=[g, M()])``: Keras traces them in its steps."""
        if self._other_backend_module() or not self._imports_keras():
            return
        for name in ("metrics", "weighted_metrics"):
            found = keyword(call, name)
            for item in _callables(found.value) if found is not None else ():
                target = self.keras_function(item, scope)
                if target is not None:
                    self._metric_functions.setdefault(id(target), []).append(call)
        run_eagerly = keyword(call, "run_eagerly")
        if run_eagerly is not None and not is_false(run_eagerly.value) and not (
                isinstance(run_eagerly.value, cst.Name) and run_eagerly.value.value == "None"):
            return  # run eagerly (or maybe: `run_eagerly=args.debug`)
        flavour = self._module_keras()
        for name in KERAS_COMPILE_FUNCTIONS:
            found = keyword(call, name)
            expr = argument(call, 1, name) if name == "loss" else found.value if found is not None else None
            if expr is None:
                continue
            for item in _callables(expr):
                target = self.keras_function(item, scope)
                if target is None or target.excluded:
                    continue
                what = "loss" if name == "loss" else "metric"
                self._mark(target, GraphInfo(
                    reason=f"Keras traces the {what} given to `compile` into its training and evaluation steps",
                    kind="keras", autograph=flavour == "tf_keras", keras=flavour,
                    status="unspecified" if flavour == "tf_keras" else "disabled", data_parameters=2))

    def compile_metric(self, function: ScopeInfo) -> Optional[str]:
        """Where ``function`` is given to Keras 3 as a metric function, run eagerly or not: "this module"
        when a ``compile(metrics=[...])``/``weighted_metrics=`` of this module gives it (``metrics=[f]``)
        or a call of a same-module factory returning it (``metrics=[f_score()]``, see ``keras_function``);
        else the file of another project module whose ``compile(metrics=...)`` gives this module's
        top-level def, or calls this module's top-level factory that returns it
        (``ProjectFile.metric_user``, which records the dependency); None otherwise, and in a module
        whose Keras is tf_keras (the other module's Keras is taken to be this one's)."""
        if self._module_keras() != "keras3":
            return None  # tf_keras's metric wrapper casts both to the metric's dtype first
        if id(function) in self._metric_functions:
            return "this module"
        project = self.resolver.project
        if project is None or function.parent is None or not isinstance(function.node, cst.FunctionDef):
            return None
        if function.parent is self.model.root:
            found = project.metric_user(function.node.name.value)
            return found[0] if found is not None and not found[1] else None
        factory = function.parent
        if factory.kind != "function" or factory.parent is not self.model.root \
                or not isinstance(factory.node, cst.FunctionDef) or self._returned_def(factory) is not function:
            return None
        found = project.metric_user(factory.node.name.value)
        return found[0] if found is not None and found[1] else None

    def _mark_lambda_layer(self, call: cst.Call, scope: ScopeInfo) -> None:
        """``keras.layers.Lambda(f)``: Keras traces ``f`` as the layer's ``call``
        (converted by neither Keras: a Python ``if`` on a tensor there raises)."""
        if self._other_backend_module():
            return
        raw = self.resolver.raw_qualname(call.func, scope) or ""
        flavour = "tf_keras" if raw.startswith(("tf_keras.", "tensorflow.python.keras.")) else "keras3"
        target = self.keras_function(argument(call, 0, "function"), scope)
        if target is not None and not target.excluded:
            self._mark(target, GraphInfo(
                reason="Keras traces the function of a `Lambda` layer into a graph (as the layer's `call`)",
                kind="keras", autograph=False, keras=flavour,
                status="unspecified" if flavour == "tf_keras" else "disabled", data_parameters=1))

    def keras_function(self, expr: Optional[cst.BaseExpression], scope: ScopeInfo) -> Optional[ScopeInfo]:
        """``function_scope``, and the function a same-module factory returns
        (``loss=focal_loss(2.0)`` where ``focal_loss`` returns a nested def),
        also through a name bound once to such a call."""
        found = self.function_scope(expr, scope)
        if found is not None or expr is None:
            return found
        if isinstance(expr, cst.Name):
            value = assigned(expr.value, scope)
            made = value.single_value if value is not None else None
            if isinstance(made, cst.Call) and not value.writers:
                return self._returned_function(made, value.scope)
            return None
        if isinstance(expr, cst.Call):
            return self._returned_function(expr, scope)
        return None

    def _returned_function(self, call: cst.Call, scope: ScopeInfo) -> Optional[ScopeInfo]:
        factory = self.function_scope(call.func, scope)
        if factory is None or not isinstance(factory.node, cst.FunctionDef):
            return None
        return self._returned_def(factory)

    def _returned_def(self, factory: ScopeInfo) -> Optional[ScopeInfo]:
        """The one function (a nested def or lambda) every return of ``factory`` gives, or None."""
        found: Optional[ScopeInfo] = None
        for node in returns(factory.node.body):
            value = node.value
            target = self.model.scope_of_node.get(value) if isinstance(value, cst.Lambda) else (
                factory.defs.get(value.value) if isinstance(value, cst.Name)
                and lookup(value.value, factory) is not None and lookup(value.value, factory).scope is factory
                else None)
            if target is None or (found is not None and target is not found):
                return None  # returns something else too
            found = target
        return found

    def _imports_keras(self) -> bool:
        if self._keras_import is None:
            self._keras_import = any(
                normalize(t).split(".", 1)[0] in ("tensorflow", "keras")
                for scope in self.model.scopes for t in scope.imports.values())
        return self._keras_import

    def function_scope(self, expr: Optional[cst.BaseExpression], scope: ScopeInfo) -> Optional[ScopeInfo]:
        """The same-module function or lambda ``expr`` (a callee, a function
        argument) refers to, if it can be told: ``f``, ``self.method``,
        ``lambda ...``, ``functools.partial(f, ...)``, and the ``__call__`` of
        an instance of a same-module class (``Preprocess()``, or a name bound
        once to one)."""
        if expr.__class__ is cst.Lambda:
            return self.model.scope_of_node.get(expr)
        if expr.__class__ is cst.Name:
            found = scope.lookup_def(expr.value, expr)
            if found is None:
                value = assigned(expr.value, scope)
                instance = value.single_value if value is not None else None
                if isinstance(instance, cst.Call):
                    return self._instance_call(instance, value.scope)
            return found
        if expr.__class__ is cst.Attribute and expr.value.__class__ is cst.Name and expr.value.value == "self":
            cls = scope.method_class()
            if cls is not None:
                return cls.defs.get(expr.attr.value)
        if expr.__class__ is cst.Call:
            # functools.partial(f, ...)
            qualname = self.resolver.qualname(expr.func, scope)
            if qualname == "functools.partial" and expr.args:
                return self.function_scope(expr.args[0].value, scope)
            return self._instance_call(expr, scope)
        return None

    def object_callees(self, call: cst.Call, scope: ScopeInfo) -> List[ScopeInfo]:
        """The same-module methods ``call`` runs on an object of the module's own
        classes whose class is told: ``self.actor.train(x)`` after ``self.actor =
        Actor()``, ``agent.run()`` after ``agent = Agent()``, ``self.pool(x)``
        (the object's ``__call__``, or a Keras class's ``call``). Never every
        method of that name (``objects.callees``, for hazards, is that broad):
        whoever asks must be sure it is the one."""
        func = call.func
        if not isinstance(func, cst.Attribute) or self.resolver.raw_qualname(func, scope) is not None:
            return []
        objects = self.objects
        receiver = func.value
        if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
            kind = objects.kind(func, scope)  # self.pool(x): an attribute holding an object
            if kind.unknown or kind.other:
                return []
            return [method for cls in kind.instances for method in objects.instance_call(cls)]
        if not isinstance(receiver, (cst.Name, cst.Attribute)):
            return []
        kind = objects.kind(receiver, scope)
        if kind.unknown or kind.other:
            return []
        return [method for cls in kind.instances for method in objects.methods(cls, func.attr.value)]

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
                         converts_asserts=asserts, status="enabled" if autograph else "disabled")

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
        if qualname == VECTORIZED_MAP:
            self._vectorized.append((call, scope))
            return
        if qualname is None and isinstance(func, cst.Attribute) and func.attr.value == "compile" \
                and (keyword(call, "loss") or keyword(call, "metrics") or keyword(call, "weighted_metrics")
                     or len([a for a in call.args if a.keyword is None]) >= 2):
            self._mark_compile(call, scope)
            return
        if qualname is not None and qualname.startswith("keras.") and qualname.endswith(".Lambda"):
            self._mark_lambda_layer(call, scope)
            return
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
                self._mark(target, GraphInfo(reason=f"tf.data traces functions given to `{what}`", kind="dataset",
                                             status="unspecified"))

    # -- functions handed to TensorFlow's control flow ----------------------------
    def _handed_targets(self, call: cst.Call, parameters, scope: ScopeInfo) -> List[ScopeInfo]:
        found = []
        for position, name in parameters:
            expr = argument(call, position, name)
            for item in _callables(expr) if expr is not None else ():
                target = self.function_scope(item, scope)
                if target is not None and not target.excluded and target not in found:
                    found.append(target)
        return found

    def _mark_handed(self, call: cst.Call, scope: ScopeInfo) -> List[ScopeInfo]:
        """In graph code ``scope``: the functions ``call`` hands to TensorFlow's
        control flow (``tf.map_fn(f, x)``, ``tf.cond(p, f, g)``,
        ``strategy.run(f)``, ``tf.vectorized_map(f, x)``) run in its graph.
        Returns those marked for the first time."""
        qualname = self.resolver.qualname(call.func, scope)
        caller = scope.graph
        if qualname in CONTROL_FLOW_FUNCTIONS:
            parameters = CONTROL_FLOW_FUNCTIONS[qualname]
            what = f"tf.{qualname.split('.', 1)[1]}"
            converts = qualname in CONVERTING_CONTROL_FLOW and caller.status != "disabled"
        elif qualname == VECTORIZED_MAP:
            parameters, what, converts = ((0, "fn"),), "tf.vectorized_map", False
        elif qualname is None and self._strategy_run(call, scope):
            parameters, what = ((0, "fn"),), f"strategy.{call.func.attr.value}"
            converts = caller.status == "enabled"
        else:
            return []
        first = []
        for target in self._handed_targets(call, parameters, scope):
            if target is scope:
                continue
            # A function nested in converted code is converted with it.
            enclosing = target.parent.function() if target.parent is not None else None
            lexical = enclosing is not None and enclosing.graph is not None and not enclosing.excluded \
                and enclosing.graph.autograph
            if target.graph is None:
                first.append(target)
            self._mark(target, GraphInfo(
                reason=f"`{what}` runs it in the graph of `{self.describe(scope)}`", kind="handed",
                autograph=converts or lexical, status=caller.status))
        return first

    def strategy_run(self, call: cst.Call, scope: ScopeInfo) -> bool:
        """Is ``call`` ``strategy.run(fn, ...)`` / ``experimental_run_v2`` on a ``tf.distribute``
        strategy (see ``_strategy_run``)?"""
        return self._strategy_run(call, scope)

    def _strategy_run(self, call: cst.Call, scope: ScopeInfo) -> bool:
        """``strategy.run(fn, ...)`` on a ``tf.distribute`` strategy: a name or
        attribute spelled ``...strategy`` or bound once to a strategy."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in STRATEGY_RUN_METHODS or not call.args:
            return False
        receiver = func.value
        last = receiver.attr.value if isinstance(receiver, cst.Attribute) else receiver.value \
            if isinstance(receiver, cst.Name) else None
        if last is not None and "strategy" in last.lower():
            return True
        made, where = receiver, scope
        if isinstance(receiver, cst.Name):
            value = assigned(receiver.value, scope)
            made = value.single_value if value is not None else None
            where = value.scope if value is not None else scope
        if isinstance(made, cst.Call):
            qualname = self.resolver.qualname(made.func, where) or ""
            return qualname.startswith("tensorflow.distribute.") and (
                qualname.endswith("Strategy") or qualname.endswith("get_strategy"))
        return False

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
        existing.status = _weakest(existing.status, info.status)
        if info.kind == "handed" and existing.kind != "handed":
            # Handed to TensorFlow's control flow: its parameters are the tensors
            # TensorFlow passes, whoever else calls it.
            info.autograph, info.status = existing.autograph, existing.status
            scope.graph = info
            return
        if existing.kind == "handed":
            return
        if existing.kind == "called" and info.kind == "called":
            existing.call_sites.extend(info.call_sites)
        elif existing.kind == "nested" and info.kind == "called":
            info.autograph = existing.autograph  # keep the call sites: rules read them
            scope.graph = info

    def _propagate(self, worklist: List[ScopeInfo], done: set) -> None:
        self._done = done
        while worklist:
            scope = worklist.pop()
            if id(scope) in done:
                continue
            done.add(id(scope))
            for call in scope.calls:
                target = self.function_scope(call.func, scope)
                for target in [target] if target is not None else self.object_callees(call, scope):
                    if target is scope or target.excluded:
                        continue
                    first = target.graph is None
                    self._mark(
                        target,
                        GraphInfo(
                            reason=f"called from graph function `{self.describe(scope)}`",
                            kind="called",
                            autograph=scope.graph.autograph if scope.graph else True,
                            call_sites=[(call, scope)],
                            status=scope.graph.status,
                        ),
                    )
                    if first:
                        worklist.append(target)
            for call in scope.calls:
                worklist.extend(self._mark_handed(call, scope))
            # Functions and lambdas nested in a graph body run in that graph.
            for nested in scope.nested:
                if nested.graph is None and not nested.excluded:
                    nested.graph = GraphInfo(
                        reason=f"nested in graph function `{self.describe(scope)}`",
                        kind="nested",
                        autograph=scope.graph.autograph if scope.graph else True,
                        status=scope.graph.status,
                    )
                    worklist.append(nested)
                elif nested.graph is not None and nested.graph.kind == "handed" and scope.graph.autograph:
                    nested.graph.autograph = True  # converted with the code it is written in

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

    @property
    def flow(self):
        """Where values come from through the module's functions, methods and objects
        (``semantic.flow.Flow``), built on first use."""
        if self._flow is None:
            from tflint_gpu.semantic.flow import Flow

            self._flow = Flow(self)
        return self._flow

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
        "tf_keras" (Keras 2: ``tf_keras``, ``tensorflow.python.keras``, and
        ``tf.keras`` where the project targets Keras 2) or "keras3" (``keras``,
        and ``tf.keras`` as in TensorFlow 2.16+); None if it is not a Keras class."""
        for raw in self.class_bases(cls):
            flavour = self.raw_keras_flavour(raw)
            if flavour is not None:
                return flavour
        return None

    def raw_keras_flavour(self, raw: Optional[str]) -> Optional[str]:
        """Which Keras a raw (not normalized) qualified name belongs to, for this
        project's target: "tf_keras" for ``tf_keras``, ``tensorflow.python.keras``
        and ``tf.keras`` where the project targets Keras 2; "keras3" for ``keras``
        and ``tf.keras`` as in TensorFlow 2.16+; None when it names no Keras API."""
        if raw is None or not normalize(raw).startswith("keras."):
            return None
        return "tf_keras" if raw.startswith(("tf_keras.", "tensorflow.python.keras.")) or (
            self.tf_keras_is_keras2 and raw.startswith("tensorflow.")) else "keras3"

    def _other_backend_module(self) -> bool:
        """Does this module import another Keras backend and not TensorFlow? (Once
        per file: asked for each Keras graph method.)"""
        if self._other_backend is None:
            targets = [normalize(t) for scope in self.model.scopes for t in scope.imports.values()]
            self._other_backend = not any(t == "tensorflow" or t.startswith("tensorflow.") for t in targets) and any(
                t.split(".", 1)[0] in OTHER_BACKENDS for t in targets
            )
        return self._other_backend


def _callables(expr: cst.BaseExpression, depth: int = 0) -> List[cst.BaseExpression]:
    """The function expressions in an argument that may hold several: a list,
    tuple or dict of them (``metrics=[f, g]``, ``loss={"out": f}``,
    ``branch_fns={0: f}``), or of (predicate, function) pairs (``tf.case``)."""
    if depth > 3:
        return []
    if isinstance(expr, (cst.List, cst.Tuple)):
        found: List[cst.BaseExpression] = []
        for element in expr.elements:
            value = element.value
            if isinstance(value, cst.Tuple) and len(value.elements) == 2 and depth == 0:
                found.extend(_callables(value.elements[1].value, depth + 1))  # (pred, fn)
            elif not isinstance(element, cst.StarredElement):
                found.extend(_callables(value, depth + 1))
        return found
    if isinstance(expr, cst.Dict):
        return [e for element in expr.elements if isinstance(element, cst.DictElement)
                for e in _callables(element.value, depth + 1)]
    return [expr]
