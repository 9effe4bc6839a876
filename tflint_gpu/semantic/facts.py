"""What a rule may ask: one file's facts, behind one object (``RuleContext``).

The driver (``engine.lint``) builds the model and the analyses of a file and
hands this object to every rule visit; a rule asks it and never walks the tree
or resolves names itself. Analyses that only some rules need are built on
first use.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Container, Iterator, List, Optional, Tuple

import libcst as cst

from tflint_gpu.findings import Fix
from tflint_gpu.semantic import api_since
from tflint_gpu.semantic.api import arguments_by_name
from tflint_gpu.semantic.context import GraphAnalysis, GraphInfo
from tflint_gpu.semantic.model import CLASS, DEF, IMPORT, PARAM, SCOPE_TYPES, Binding, ModuleModel, ScopeInfo, assigned, lookup, walk
from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.semantic.names import Resolver, normalize
from tflint_gpu.semantic.project import CALLBACK_MODEL, GUARD, WEIGHTS_GIVEN
from tflint_gpu.semantic.repetition import Repetition
from tflint_gpu.semantic.retracing import Retracing
from tflint_gpu.semantic.run_once import RunOnce
from tflint_gpu.semantic.target import NEWEST, Target
from tflint_gpu.semantic.tensors import TensorInference
from tflint_gpu.semantic.values import KERAS, UNKNOWN, ValueKinds

# A rule, as the engine sees it: a class with ``code``, ``name``, ``message``,
# ``needs`` and ``node_types``, whose instances have ``visit_<NodeType>(node,
# ctx)`` for each of its node types (``rules.base.Rule`` is the one base the
# catalogue uses; the engine imports no rule module).
RuleClass = type

# Spellings of Keras classes that the migration table names otherwise.
_CLASS_ALIASES = {"keras.models.Model": "keras.Model", "keras.models.Sequential": "keras.Sequential",
                  "keras.engine.training.Model": "keras.Model", "keras.engine.sequential.Sequential": "keras.Sequential",
                  "keras.layers.Layer": "keras.layers.Layer", "keras.Layer": "keras.layers.Layer",
                  "keras.Metric": "keras.metrics.Metric", "keras.Loss": "keras.losses.Loss",
                  "keras.Optimizer": "keras.optimizers.Optimizer"}


_LOSS_SCALE = "keras.mixed_precision.LossScaleOptimizer"


# Among the keywords ``path_handoffs`` gives: the save is a Keras callback's, on the model it is given.
CALLBACK_SAVE = "@callback"


def _guard_holds(mark: str, given) -> bool:
    """Does the argument a ``semantic.project.GUARD`` mark names (``?save_weights_only=0``: true;
    ``?!name=1``: false; after ``=``, the parameter's default) hold, as the call gives it (a literal
    ``True``/``False``, or its default where it is not given)?"""
    negated = mark[1:2] == "!"
    name, _, default = mark[2 if negated else 1:].partition("=")
    value = given.get(name)
    if value is None:
        truth = {"1": True, "0": False}.get(default)
    elif isinstance(value, cst.Name) and value.value in ("True", "False"):
        truth = value.value == "True"
    else:
        truth = None
    return truth is not None and truth != negated


@dataclass
class Report:
    rule: RuleClass
    node: cst.CSTNode
    message: str
    fix: Optional[Fix] = None


class RuleContext:
    """What a rule may ask while it looks at one node."""

    def __init__(self, module: cst.Module, model: ModuleModel, resolver: Resolver,
                 graphs: GraphAnalysis, tensors: TensorInference, target: Optional[Target] = None) -> None:
        self.module = module
        # The TensorFlow and Keras the file's project targets (``semantic.target.Target``:
        # ``tf``, ``keras``, ``at_least((2, 16))``); the newest release when not told.
        self.target: Target = target if target is not None else NEWEST
        self.model = model
        self.resolver = resolver
        self.graphs = graphs
        self.tensors = tensors
        self.repetition = Repetition(model, graphs)
        self.values = ValueKinds(resolver, graphs, tensors)
        self._run_once: Optional[RunOnce] = None
        self._retracing: Optional[Retracing] = None
        self.scope: ScopeInfo = model.root
        self.rule: Optional[RuleClass] = None
        self.reports: List[Report] = []
        self._keras_internals: Optional[bool] = None

    @property
    def keras_internals(self) -> bool:
        """Does the file's text name ``keras.src`` (Keras's own code, or code reaching into it)?
        Searched once a file: rules ask it of many calls."""
        if self._keras_internals is None:
            self._keras_internals = "keras.src" in self.model.source
        return self._keras_internals

    def release(self) -> None:
        """Once the file's result is made: break the reference cycles of its facts, so that they and
        the syntax tree are freed at once (``ModuleModel.release``). Nothing may be asked after."""
        self.graphs.release()

    # -- names ------------------------------------------------------------
    def qualname(self, expr: cst.BaseExpression, scope: Optional[ScopeInfo] = None) -> Optional[str]:
        return self.resolver.qualname(expr, scope or self.scope)

    def call_name(self, node: cst.CSTNode) -> Optional[str]:
        """The qualified name of the function a Call calls, if it resolves."""
        if isinstance(node, cst.Call):
            return self.resolver.qualname(node.func, self.scope)
        return None

    def module_expr(self, module: str, attribute: str, scope: Optional[ScopeInfo] = None,
                    exact: bool = False) -> Optional[Tuple[cst.BaseExpression, Tuple[str, ...]]]:
        """An expression for ``module.attribute`` in this file's spelling at the
        current scope, and the imports it needs (``tensorflow``, ``zeros`` ->
        ``tf.zeros`` or ``tfl.zeros``); ``None`` when every name it could use
        is bound to something else here (a parameter or local named ``tf``).
        ``scope``: where the expression will stand (default: the current one);
        ``exact``: only an import of ``module`` itself will do (see
        ``Resolver.module_alias``). A TensorFlow name the target lacks is spelled as the target
        has it (``tf.data.experimental.AUTOTUNE`` before TF 2.4), or None (``semantic.api_since``)."""
        scope = scope or self.scope
        if module == "tensorflow":
            spelled = api_since.spelling(self.target, f"{module}.{attribute}")
            if spelled is None:
                return None
            attribute = spelled[len(module) + 1:]
        alias = self.resolver.module_alias(module, scope, exact)
        imports: Tuple[str, ...] = ()
        if alias is None and not exact:
            # A submodule the file already names (`from tensorflow import data as tf_data`).
            parts = attribute.split(".")
            for cut in range(len(parts) - 1, 0, -1):
                sub = self.resolver.module_alias(".".join([module] + parts[:cut]), scope)
                if sub is not None:
                    return cst.parse_expression(".".join([sub] + parts[cut:])), ()
        if alias is None:
            short = {"tensorflow": "tf", "numpy": "np"}.get(module)
            candidates = ([short] if short else []) + ([module] if "." not in module else [])
            alias = next((c for c in candidates if self.resolver.is_free(c, scope)), None)
            if alias is None:
                return None
            imports = (f"import {module} as {alias}" if alias != module else f"import {module}",)
        return cst.parse_expression(f"{alias}.{attribute}"), imports

    def target_has(self, name: str) -> bool:
        """Does the target TensorFlow have ``name`` (``tensorflow.data.AUTOTUNE``, or a keyword as
        ``tensorflow.function(reduce_retracing=)``)? A fix writes only names it has."""
        return api_since.available(self.target, name)

    def binding(self, name: str, at: Optional[cst.CSTNode] = None,
                scope: Optional[ScopeInfo] = None) -> Optional[Binding]:
        """What ``name`` read in ``scope`` (default: the current one) binds to:
        an import, def, class or assignments (``model.lookup``); with ``at``,
        a node of that scope's own code, only the assignments that can reach it."""
        return lookup(name, scope or self.scope, at)

    def assigned(self, name: str, at: Optional[cst.CSTNode] = None,
                 scope: Optional[ScopeInfo] = None) -> Optional[Binding]:
        """``binding``, when ``name`` is bound by assignment (parameters, loop
        targets, with-targets included); else None."""
        return assigned(name, scope or self.scope, at)

    def is_parameter(self, name: str, scope: Optional[ScopeInfo] = None) -> bool:
        """Is ``name``, read in ``scope``, a parameter of the innermost function there?"""
        scope = scope or self.scope
        found = assigned(name, scope)
        return found is not None and found.scope is scope.function() and found.is_parameter

    def none_by_default(self, name: str, scope: Optional[ScopeInfo] = None) -> bool:
        """Is ``name``, read in ``scope``, a parameter of the innermost function there whose default
        is ``None`` (``teacher=None``) and that the function never rebinds: ``None`` whenever the
        caller leaves it out?"""
        scope = scope or self.scope
        found = assigned(name, scope)
        function = scope.function()
        if found is None or function is None or found.scope is not function or not found.is_parameter \
                or len(found.own_values) != 1 or not isinstance(function.node, cst.FunctionDef):
            return False
        params = function.node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value == name:
                return isinstance(param.default, cst.Name) and param.default.value == "None"
        return False

    # -- analyses ------------------------------------------------------
    def graph(self, scope: Optional[ScopeInfo] = None) -> Optional[GraphInfo]:
        """How the innermost function around ``scope`` runs, if as a graph."""
        function = (scope or self.scope).function()
        if function is None or function.excluded:
            return None
        return function.graph

    def is_tensor(self, expr: cst.BaseExpression, scope: Optional[ScopeInfo] = None) -> bool:
        return self.tensors.is_tensor(expr, scope or self.scope)

    def unknown_keras3_model(self, receiver: cst.BaseExpression, method: str = "",
                             distinctive: bool = False, judge_maker: bool = True,
                             project_classes: bool = False) -> bool:
        """Is ``receiver``, an object whose maker the engine cannot follow (a parameter, a factory's
        result), to be taken for a Keras 3 model that ``method`` is called on? Only in Keras 3 code (the
        file's Keras; or, for a ``distinctive`` use, one no other library's objects have, such as
        ``save_weights`` or ``fit(workers=)``, a TensorFlow file naming no Keras under a Keras 3 target),
        never when something else made it (an imported API other than Keras, a same-module class of
        no Keras base; not asked with ``judge_maker=False``, for a use only a Keras model has whatever
        made it, such as ``fit(workers=)`` on a project factory's result), when the file's own classes
        define ``method``, or in Keras's own code. With ``project_classes``, a class of another project
        module deriving from a Keras class made it as Keras does, and a def of another project module
        (``get_model()``) is not judged (``_made_by_other``)."""
        if self.value_kind(receiver) not in (UNKNOWN, KERAS) or self.keras_internals:
            return False  # a Keras object whose class is not told (made by a same-module function) is asked too
        if method and self.graphs.objects.defined(method):
            return False
        migration = self.migration
        keras3 = migration.module_flavour() == KERAS3 or (
            (distinctive or (project_classes and self._made_by_project_model_def(receiver)))
            and not migration.module_flavours() and self.target.keras3 and "tensorflow" in self.model.source)
        return keras3 and not (judge_maker and self._made_by_other(receiver, project_classes, project_classes))

    def may_be_keras_model(self, receiver: cst.BaseExpression, method: str) -> bool:
        """May ``receiver`` (read in ``self.scope``) be a Keras model whose own ``method`` is called, in
        either flavour? Typed a Keras model or layer; or not typed, when the file's own classes do not
        define ``method`` and nothing other than Keras made it (``_made_by_other``)."""
        kind = self.value_kind(receiver)
        if kind == KERAS:
            return True
        return kind == UNKNOWN and not self.graphs.objects.defined(method) \
            and not self._made_by_other(receiver, project_classes=True)

    def is_string(self, expr: cst.BaseExpression, scope: Optional[ScopeInfo] = None) -> bool:
        """Is ``expr`` a ``str`` whatever runs (``semantic.literals.is_string``, through the flow)?"""
        from tflint_gpu.semantic.literals import is_string

        return is_string(expr, scope or self.scope, self.graphs.flow)

    def may_be_keras_object(self, expr: cst.BaseExpression, scope: Optional[ScopeInfo] = None) -> bool:
        """Is ``expr`` a Keras model or layer, as far as the file tells? Typed one (``value_kind``); or
        not typed, when every value the flow finds for it is one and something unknown (a parameter
        no call in the module gives) is the only other possibility: ``model`` in ``if isinstance(model,
        str): model = load_model(model)``."""
        scope = scope or self.scope
        kind = self.value_kind(expr, scope)
        if kind != UNKNOWN:
            return kind == KERAS
        found = self.graphs.flow.sources(expr, scope).values()
        return bool(found) and all(self.value_kind(value, where) == KERAS for value, where in found)

    def _made_by_other(self, expr: cst.BaseExpression, project_classes: bool = False,
                       project_functions: bool = False) -> bool:
        """Was ``expr`` (a name or ``self.x``) made by a call of something that may not be a Keras
        model: an imported API other than Keras (``tf.train.Checkpoint``, ``Image.open``, a project's
        ``stores.get(...)``), or a same-module class that is not a Keras class? (A same-module
        function's result is not judged.) With ``project_classes``, a class of another project module
        deriving from a Keras class (``from models import CustomModel``) is a Keras maker; with
        ``project_functions``, a def of another project module is not judged, as a same-module one."""
        if isinstance(expr, cst.Name):
            found = self.assigned(expr.value)
            if found is None:
                return False
            calls = [(v, found.scope) for v in found.values if isinstance(v, cst.Call)]
        elif isinstance(expr, cst.Attribute):
            attribute = self.values.attribute(expr, self.scope)
            if attribute is None:
                return True  # a method or property: not a model the engine can tell
            calls = [(b.value, b.method) for b in attribute.bound if isinstance(b.value, cst.Call)]
        else:
            return True
        untold = False
        keras = False
        for call, where in calls:
            func = call.func
            qualname = self.qualname(func, where)
            if qualname is not None:
                if project_functions and self._project_def(func, where):
                    continue  # not judged, as a same-module def's result
                if not qualname.startswith("keras.") and not (project_classes and self._project_keras_class(func, where)):
                    return True
                keras = True
                continue
            if isinstance(func, cst.Attribute):
                untold = True  # Indexer.load(...), obj.make(): not told
                continue
            if isinstance(func, cst.Name):
                cls = where.lookup_class(func.value)
                if cls is not None and self.migration.class_base(cls) is None:
                    return True
        # A method call of an object the engine cannot type adds "unknown" to bindings of which one is a
        # Keras model (`self.model = Sequential(...)`, then `self.model = self.model.build_model(cfg)`):
        # alone, it tells nothing of a model.
        return untold and not keras

    def _made_by_project_model_def(self, expr: cst.BaseExpression) -> bool:
        """Is ``expr`` (a name) bound only to calls of defs of other project modules every ``return`` of
        which is a Keras ``Model(...)``/``Sequential(...)`` call (``ProjectFile.returns``: ``yolo =
        YoloV3(...)`` where yolov3_tf2/models.py's ``YoloV3`` returns ``Model(inputs, outputs)``, with
        ``from tensorflow.keras import Model``)?"""
        project = self.resolver.project
        found = self.assigned(expr.value) if isinstance(expr, cst.Name) and project is not None else None
        if found is None or not found.values or not all(isinstance(v, cst.Call) for v in found.values):
            return False
        for call in found.values:
            raw = self.resolver.raw_qualname(call.func, found.scope)
            returned = project.returns(raw) if raw is not None and project.is_def(raw) else None
            if not returned or not all(
                    kind == "call" and isinstance(made, tuple) and made[0] == "external" and not methods
                    and normalize(made[1]) in ("keras.Model", "keras.models.Model", "keras.Sequential",
                                               "keras.models.Sequential")
                    for kind, made, methods in returned):
                return False
        return True

    def _project_def(self, func: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is ``func`` a top-level def of another project module (through the project index)?"""
        project = self.resolver.project
        raw = self.resolver.raw_qualname(func, scope)
        return project is not None and raw is not None and project.is_def(raw)

    def _project_keras_class(self, func: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is ``func`` a class of another project module with a Keras base (through the project index)?"""
        raw = self.resolver.raw_qualname(func, scope)
        return raw is not None and any(normalize(base).startswith("keras.")
                                       for base in self.resolver.class_bases(raw)[1:])

    def value_kind(self, expr: cst.BaseExpression, scope: Optional[ScopeInfo] = None) -> str:
        """What ``expr`` is: one of ``semantic.values``' kinds (tensor, variable,
        dataset, Keras model/layer, loss, NumPy array, Python container...,
        or unknown)."""
        return self.values.kind(expr, scope or self.scope)

    def own_module(self, name: str) -> bool:
        """Is the top-level module ``name`` one of the checked project's own (``tensorflow_addons``
        while checking tensorflow/addons)? False for a file read alone."""
        project = self.resolver.project
        return project is not None and project.index.locate(name) is not None

    def descendants(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """``node`` and the nodes below it in the same scope's code (nested functions, classes
        and lambdas are not entered): for a rule that reads one small part of the tree."""
        return walk(node, skip=SCOPE_TYPES)

    def nodes_in(self, scope: ScopeInfo, *type_names: str) -> List[cst.CSTNode]:
        """The nodes of these types whose own scope is ``scope`` (not inside a
        nested function, class or lambda), from the walk's index; the rule
        names the types in ``reads_index``."""
        return [node for name in type_names for node in self.model.nodes_in(scope, name)]

    def runs_repeatedly(self, node: cst.CSTNode, scope: Optional[ScopeInfo] = None,
                        python: bool = True) -> Optional[str]:
        """Why ``node`` runs many times, or None. ``python=True``: the Python
        statement itself executes repeatedly (a loop, a callee of one, a
        per-batch callback...); ``False``: its TensorFlow ops run every
        call/step/element (all graph code too)."""
        scope = scope or self.scope
        return (self.repetition.python_repeats(node, scope) if python
                else self.repetition.per_call(node, scope))

    @property
    def run_once(self) -> RunOnce:
        """Run-once facts of this file (lazy blocks, setup functions, per-call
        scratch), built on first use."""
        if self._run_once is None:
            self._run_once = RunOnce(self.model, self.graphs)
        return self._run_once

    def is_dataset(self, expr: cst.BaseExpression, scope: Optional[ScopeInfo] = None) -> bool:
        return self.graphs.is_dataset(expr, scope or self.scope)

    def keras_flavour(self, what, scope: Optional[ScopeInfo] = None) -> Optional[str]:
        """Which Keras ``what`` belongs to: "tf_keras" (Keras 2) or "keras3".
        ``what`` is a class's ScopeInfo (decided by its bases, as for graph
        contexts) or an expression naming a Keras API: ``tf_keras.layers.X``
        and ``tensorflow.python.keras...`` are Keras 2, ``keras.layers.X`` and
        ``tf.keras.layers.X`` Keras 3. None when it is not Keras."""
        if isinstance(what, ScopeInfo):
            return self.graphs.keras_flavour(what) if what.kind == "class" else None
        return self.graphs.raw_keras_flavour(self.resolver.raw_qualname(what, scope or self.scope))

    @property
    def retracing(self) -> Retracing:
        """Retracing facts of this file (calls of tf.functions, per-iteration
        Python values, tf.function objects made repeatedly, recursion), built
        on first use."""
        if self._retracing is None:
            self._retracing = Retracing(self.model, self.graphs, self.values)
        return self._retracing

    # -- reporting -----------------------------------------------------
    def report(self, node: cst.CSTNode, message: Optional[str] = None, fix: Optional[Fix] = None) -> None:
        assert self.rule is not None
        self.reports.append(Report(self.rule, node, message or self.rule.message, fix))

    # -- eager training (semantic/eager.py) --------------------------------
    @property
    def eager(self):
        """Eager-training facts of this file (GradientTape training steps, what
        tracing a function would change, eager-mode switches, guards), built
        on first use: an ``semantic.eager.EagerFacts``."""
        facts = getattr(self, "_eager", None)
        if facts is None:
            from tflint_gpu.semantic.eager import EagerFacts

            facts = self._eager = EagerFacts(self.model, self.graphs, self.tensors, self.values, self.retracing)
        return facts

    @property
    def replicas(self):
        """Training steps a ``tf.distribute`` strategy runs per replica and the means they
        differentiate, built on first use: a ``semantic.replicas.ReplicaSteps``."""
        facts = getattr(self, "_replicas", None)
        if facts is None:
            from tflint_gpu.semantic.replicas import ReplicaSteps

            facts = self._replicas = ReplicaSteps(self.graphs, self.eager)
        return facts

    # -- state frozen at trace (semantic/trace_state.py) -------------------
    @property
    def trace_state(self):
        """Which outer names graph code reads and whether they are rebound after
        a trace, built on first use: an ``semantic.trace_state.TraceState``."""
        facts = getattr(self, "_trace_state", None)
        if facts is None:
            from tflint_gpu.semantic.trace_state import TraceState

            facts = self._trace_state = TraceState(self.model, self.graphs, self.repetition, self.retracing)
        return facts

    # -- sameness of values (semantic/sameness.py) --------------------------
    @property
    def sameness(self):
        """Whether two expressions read the same value (``same_value(a, b, scope)``) and the elements
        of the display a name holds (``display``), built on first use: a ``semantic.sameness.Sameness``."""
        facts = getattr(self, "_sameness", None)
        if facts is None:
            from tflint_gpu.semantic.sameness import Sameness

            facts = self._sameness = Sameness(self.graphs)
        return facts

    # -- Keras migration (semantic/migration.py) ---------------------------
    @property
    def migration(self):
        """Which Keras a file, an API spelling or an object belongs to (Keras 3
        or tf_keras), and the Keras class an object was made from, built on
        first use: an ``semantic.migration.Migration``."""
        facts = getattr(self, "_migration", None)
        if facts is None:
            from tflint_gpu.semantic.migration import Migration

            facts = self._migration = Migration(self.model, self.resolver, self.graphs)
        return facts

    def made_classes(self, expr: cst.BaseExpression, scope: Optional[ScopeInfo] = None):
        """The project classes (``semantic.instances.MadeClass``: name, members, outside bases) the
        object ``expr`` may be an instance of, when every value that reaches it is a call making one (a
        class of the module or of another project module, or a project def returning such a call:
        ``model = resnet_50()``); None otherwise (``semantic.instances``)."""
        facts = getattr(self, "_instances", None)
        if facts is None:
            from tflint_gpu.semantic.instances import Instances

            facts = self._instances = Instances(self.graphs, self.resolver)
        return facts.classes(expr, scope or self.scope)

    def keras_expr(self, attribute: str, scope: Optional[ScopeInfo] = None
                   ) -> Optional[Tuple[cst.BaseExpression, Tuple[str, ...]]]:
        """Keras's ``attribute`` (``Input``) written as the file writes Keras: through a name bound to
        Keras there (``keras``, ``from tensorflow import keras``); else, in a file that imports
        TensorFlow and no Keras, through TensorFlow (``tf.keras.Input``); else as ``module_expr``
        gives it (``keras.Input`` and its import)."""
        scope = scope or self.scope
        if self.resolver.module_alias("keras", scope) is None:
            tf = self.resolver.module_alias("tensorflow", scope, exact=True)
            if tf is not None:
                return cst.parse_expression(f"{tf}.keras.{attribute}"), ()
        return self.module_expr("keras", attribute, scope)

    def keras3_class(self, receiver: cst.BaseExpression, member: Optional[str] = None) -> Optional[str]:
        """The Keras 3 class (as the migration table names it: ``keras.layers.Dense``) the object
        ``receiver`` is an instance of: made by a Keras 3 call (through names bound once and ``self.x``),
        or ``self`` in a method of a class deriving from a Keras 3 class (when neither that class nor
        its same-module bases define or assign ``member``). None when it cannot be told, for Keras 2
        (tf_keras) objects, and in files reaching Keras's internals (``keras.src``)."""
        if self.keras_internals:
            return None
        migration = self.migration
        objects = migration.graphs.objects
        cls_scope = objects.self_class(receiver, self.scope)
        if cls_scope is not None:
            if member is not None and (objects.defines(cls_scope, member)
                                       or objects.attribute_bindings(cls_scope, member)):
                return None
            if migration.graphs.keras_flavour(cls_scope) != KERAS3 or migration.legacy_env:
                return None
            name = migration.class_base(cls_scope)
        else:
            if member is not None and any(objects.defines(c, member)
                                          for cls in objects.kind(receiver, self.scope).instances
                                          for c in [cls] + objects.mro(cls)):
                return None  # an instance of a same-module class that defines the member itself
            # a member only Keras 2's layers have tells an object of unknown origin (under a Keras 3 target)
            name = migration.member_class(receiver, self.scope, member) if member is not None else None
            if name is not None and not self.target.keras3:
                return None
            if name is None:
                if migration.object_flavour(receiver, self.scope) == KERAS3:
                    name = migration.object_class(receiver, self.scope)
            if name is None and member is not None:
                name = self._possible_class(receiver, member)
        if name is None:
            return None
        from tflint_gpu.semantic.migration_table import table

        name = _CLASS_ALIASES.get(name, name)
        return name if table().known_class(name) else None

    def _possible_class(self, receiver: cst.BaseExpression, member: str) -> Optional[str]:
        """``keras.mixed_precision.LossScaleOptimizer`` when one of the calls that may have made
        ``receiver`` made one and ``member`` is one of Keras 2's LossScaleOptimizer's own members that
        Keras 3's lacks (``get_scaled_loss``: no other class of Keras or TensorFlow has it): the code
        reads it because the object is that optimizer (``self.opt.get_scaled_loss(...)``, ``self.opt``
        bound to a parameter and, when mixed precision is on, to ``LossScaleOptimizer(self.opt)``)."""
        from tflint_gpu.semantic.migration_table import table

        removal = table().removed_member(_LOSS_SCALE, member)
        if removal is None or removal.qualname != _LOSS_SCALE:
            return None
        for name in self.migration.possible_classes(receiver, self.scope):
            # Keras 2.4's experimental spelling is the class Keras 2 later kept as `mixed_precision.X`
            if name.replace("keras.mixed_precision.experimental.", "keras.mixed_precision.") == _LOSS_SCALE:
                return _LOSS_SCALE
        return None

    def keras3_callables(self, node: cst.Call, methods: Optional[Container[str]] = None) -> List[str]:
        """The migration table's names for what ``node`` calls under Keras 3: ``keras.layers.Dense``
        (a constructor or function spelled through keras/tf.keras), ``keras.Sequential.fit`` and its
        bases' ``keras.layers.Layer.fit`` (a method of a Keras 3 object, or of ``self`` in a subclass).
        ``methods``: the method names the asker's table holds (no other method call needs its
        receiver's class worked out)."""
        if self.keras_internals:
            return []
        func = node.func
        raw = self.resolver.raw_qualname(func, self.scope)
        if raw is not None:
            if raw.startswith("keras.src") or self.migration.api_flavour(func, self.scope) != KERAS3:
                return []
            qualname = self.call_name(node)
            return [qualname] if qualname else []
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            base = self._super_class(func.value, method)
            if base is not None and method == "__init__":  # super().__init__(...): the base's constructor
                return [base] if methods is None or base.rsplit(".", 1)[1] in methods else []
            if methods is not None and method not in methods:
                return []
            cls = base if base is not None else self.keras3_class(func.value, method)
            if cls is None:
                return []
            from tflint_gpu.semantic.migration_table import table

            return [f"{c}.{method}" for c in [cls] + list(table().bases_of(cls))]
        return []

    def _super_class(self, receiver: cst.BaseExpression, member: str) -> Optional[str]:
        """The Keras 3 class (the table's name) whose ``member`` ``super().member`` or ``super(C,
        self).member`` runs, in a method of class ``C`` deriving from it when no same-module base of
        ``C`` defines ``member``; else None."""
        if not (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name)
                and receiver.func.value == "super" and lookup("super", self.scope) is None):
            return None
        cls = self.scope.method_class()
        if cls is None:
            return None
        args = receiver.args
        if args and not (len(args) == 2 and isinstance(args[0].value, cst.Name) and args[0].value.value == cls.name
                         and not args[0].star and not args[1].star):
            return None  # super(Other, obj): another class's next base
        migration = self.migration
        if any(member in base.defs for base in migration.graphs.objects.mro(cls)[1:]):
            return None
        if migration.graphs.keras_flavour(cls) != KERAS3 or migration.legacy_env:
            return None
        name = migration.class_base(cls)
        if name is None:
            return None
        from tflint_gpu.semantic.migration_table import table

        name = _CLASS_ALIASES.get(name, name)
        return name if table().known_class(name) else None

    @property
    def symbolic(self):
        """Keras 3 symbolic tensors of this file (``keras.Input`` and the layer
        calls a functional model is built from), built on first use: an
        ``semantic.symbolic.SymbolicTensors``."""
        facts = getattr(self, "_symbolic", None)
        if facts is None:
            from tflint_gpu.semantic.symbolic import SymbolicTensors

            facts = self._symbolic = SymbolicTensors(self.resolver, self.graphs, self.tensors, self.migration)
        return facts

    @property
    def learning_rates(self):
        """Which optimizers (and models' optimizers) were built on a learning-rate schedule, built on
        first use: a ``semantic.lr_schedule.LearningRates``."""
        facts = getattr(self, "_learning_rates", None)
        if facts is None:
            from tflint_gpu.semantic.lr_schedule import LearningRates

            facts = self._learning_rates = LearningRates(self.migration)
        return facts

    @property
    def logged_figures(self):
        """What the module reads of the figures Keras logs (a History's dict, a callback's epoch logs),
        built on first use: a ``semantic.callbacks.LoggedFigures``."""
        facts = getattr(self, "_logged_figures", None)
        if facts is None:
            from tflint_gpu.semantic.callbacks import LoggedFigures

            facts = self._logged_figures = LoggedFigures(self)
        return facts

    @property
    def eager_only(self):
        """Keras model calls that need eager execution (``semantic.eager_only.EagerOnly``), built on
        first use."""
        facts = getattr(self, "_eager_only", None)
        if facts is None:
            from tflint_gpu.semantic.eager_only import EagerOnly

            facts = self._eager_only = EagerOnly(self)
        return facts

    @property
    def tape_models(self):
        """Gradients taken for a model the tape's block never runs (``semantic.tape_models.TapeModels``),
        built on first use."""
        facts = getattr(self, "_tape_models", None)
        if facts is None:
            from tflint_gpu.semantic.tape_models import TapeModels

            facts = self._tape_models = TapeModels(self.graphs.flow, self.resolver.qualname)
        return facts

    @property
    def ordering(self):
        """Datasets in a grouped order that nothing shuffles (``semantic.ordering.Ordering``), built on
        first use."""
        facts = getattr(self, "_ordering", None)
        if facts is None:
            from tflint_gpu.semantic.ordering import Ordering

            facts = self._ordering = Ordering(self.graphs.flow, self.resolver.qualname)
        return facts

    @property
    def masks(self):
        """Padding masks and means over masked values (``semantic.masking.Masks``), built on first use."""
        facts = getattr(self, "_masks", None)
        if facts is None:
            from tflint_gpu.semantic.masking import Masks

            facts = self._masks = Masks(self.graphs.flow, self.resolver.qualname)
        return facts

    def path_readers(self):
        """How the project's other checked modules read this module's top-level names as paths of saves
        and loads: name -> ((how, module), ...) (``ProjectFile.path_readers``; empty without a project)."""
        project = self.resolver.project
        return project.path_readers() if project is not None else {}

    def flag_readers(self, key: str):
        """How the project reads the value of the absl flag ``key`` this file defines: ((how, module), ...)
        (``ProjectFile.flag_readers``: the path of a weights save or load, or another read; a file
        checked alone, or a notebook, which the project's index leaves out: its own reads)."""
        project = self.resolver.project
        if project is None or project.own_notebook:  # not in a project's index: its own reads
            own = self._own_summary()
            name = (project.own_name() if project is not None else None) or "this module"
            return tuple((how, name) for how in own.flag_reads.get(key, ())) if own is not None else ()
        return project.flag_readers(key)

    def callback_weights_paths(self, call: cst.Call) -> List[Tuple[str, str]]:
        """For ``self.model.save_weights(...)`` in a method of a top-level Keras callback class of this
        module that saves its model's weights at its constructor's path (``semantic.project._class_saves``):
        the path endings other checked modules construct it with, given ``save_weights_only=True``
        (``ProjectIndex.path_readers``), each with the constructing module; empty otherwise."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "save_weights"
                and isinstance(func.value, cst.Attribute) and func.value.attr.value == "model"
                and isinstance(func.value.value, cst.Name) and func.value.value.value == "self"):
            return []
        cls = self.scope.enclosing_class
        if cls is None or cls.parent is None or cls.parent.parent is not None:
            return []
        own = self._own_summary()
        saves = own.saves.get(cls.name) if own is not None else None
        if saves is None or not any(s[1] == "save_weights" and s[2] == CALLBACK_MODEL for s in saves[1]):
            return []
        return [(how[len(WEIGHTS_GIVEN):], module) for how, module in self.path_readers().get(cls.name, ())
                if how.startswith(WEIGHTS_GIVEN)]

    @property
    def file_renames(self):
        """Renames of the file a save writes, with its loads (``semantic.file_renames.FileRenames``),
        built on first use."""
        facts = getattr(self, "_file_renames", None)
        if facts is None:
            from tflint_gpu.semantic.file_renames import FileRenames

            facts = self._file_renames = FileRenames(self.graphs)
        return facts

    def absl_flag(self, expr: cst.BaseExpression) -> Optional[str]:
        """The absl flag (``ABSL + name``) that ``expr``, ``FLAGS.name``, names (absl's ``FLAGS``, or
        TensorFlow's: ``semantic.migration._flag_reader``); None for anything else."""
        from tflint_gpu.semantic.migration import _flag_reader
        from tflint_gpu.semantic.project import ABSL

        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)):
            return None
        reader = _flag_reader(expr.value, self.scope, self.resolver)
        return ABSL + expr.attr.value if reader is not None and reader[0] == ABSL else None

    def suffix_tested(self, expr: cst.BaseExpression) -> bool:
        """Is ``expr`` a name read in the body of ``if name.endswith("text"):`` (``semantic.migration``'s
        ``_tested_ending``: a branch only for paths of that suffix, ``if ckpt_path.endswith(".ckpt"):``)?"""
        from tflint_gpu.semantic.migration import _tested_ending

        found = lookup(expr.value, self.scope, expr) if isinstance(expr, cst.Name) else None
        return found is not None and _tested_ending(expr, found, self.scope) is not None

    def path_ending(self, expr, scope: Optional[ScopeInfo] = None) -> Optional[str]:
        """Text a file-path expression is known to end with (a literal, the last
        part of ``os.path.join``/``+``/an f-string, through names bound once):
        ``semantic.migration.path_ending``."""
        from tflint_gpu.semantic.migration import PathWorld, path_ending

        world = getattr(self, "_path_world", None)
        if world is None:
            world = self._path_world = PathWorld(self._flag_default, self.graphs.call_sites)
        return path_ending(expr, scope or self.scope, self.resolver, world=world)

    def _flag_default(self, key: str, own_only: bool = False) -> Optional[str]:
        """What the default of command-line flag ``key`` ends with (``ProjectFile.flag_default``; a file
        checked alone, or ``own_only``: its own definition)."""
        project = self.resolver.project
        own = self._own_summary()
        if own_only and (own is None or key not in own.flags):
            return None
        if project is not None:
            return project.flag_default(key, own)
        value = own.flags.get(key) if own is not None else None
        return value[1] if value is not None and value[0] == "text" else None

    def path_handoffs(self, call: cst.Call) -> List[Tuple[cst.BaseExpression, str, Optional[cst.BaseExpression],
                                                          Tuple[str, ...], str]]:
        """The saves and loads of a model that the project def ``call`` calls makes, unchanged, at a
        path an argument of ``call`` gives (``utils.save_weights(net, d + "g-{}.h5".format(n))`` where
        ``def save_weights(model, filepath): model.save_weights(filepath)``): per save, (the path
        argument, the method or the absolute dotted function the def calls, the argument that is its
        receiver or saved model (None for ``load_model``), the other keywords the def's call passes,
        the def as ``call`` names it). A def of this module or of another project module
        (``semantic.project.ProjectIndex.saves``), or a Keras callback class of the project whose
        methods save the callback's model at the path its constructor is given, where the
        arguments the save depends on hold (``ModelCheckpoint(path, save_weights_only=True)``): no
        receiver then, and ``CALLBACK_SAVE`` among the keywords; empty without a project."""
        project = self.resolver.project
        func = call.func
        known = None
        if isinstance(func, cst.Name):
            found = lookup(func.value, self.scope, func)
            if found is not None and found.kind in (DEF, CLASS) and found.scope.parent is None:
                own = self._own_summary()
                known = own.saves.get(func.value) if own is not None else None
            elif found is None or found.kind != IMPORT:
                return []
        if known is None and project is not None and isinstance(func, (cst.Name, cst.Attribute)):
            qualname = self.resolver.raw_qualname(func, self.scope)
            if qualname is not None and qualname.split(".", 1)[0] not in ("tensorflow", "keras", "tf_keras"):
                known = project.saves(qualname)
        if known is None:
            return []
        positional, saves = known
        given = arguments_by_name(call, positional)
        if given is None:
            return []
        written = cst.Module([]).code_for_node(func)
        found_saves = []
        seen = set()
        for path, what, receiver, keywords in saves:
            if path not in given or not all(_guard_holds(k, given) for k in keywords if k.startswith(GUARD)):
                continue
            keywords = tuple(k for k in keywords if not k.startswith(GUARD))
            if receiver == CALLBACK_MODEL:  # a callback class's save on its own model (``_class_saves``)
                receiver, keywords = "", keywords + (CALLBACK_SAVE,)
            elif receiver and receiver not in given:
                continue
            if (path, what) not in seen:
                seen.add((path, what))
                found_saves.append((given[path], what, given.get(receiver) if receiver else None, keywords, written))
        return found_saves

    def handed_path(self, expr: cst.BaseExpression) -> bool:
        """Is ``expr`` a parameter of a top-level def of this module that saves or loads a model at it
        unchanged (``path_handoffs`` tells that at each call of the def, where the path is given)?"""
        if not isinstance(expr, cst.Name):
            return False
        found = lookup(expr.value, self.scope, expr)
        value = found.single_value if found is not None else None
        function = found.scope if isinstance(value, tuple) and value and value[0] == PARAM else None
        if function is None or function.parent is None or function.parent.parent is not None \
                or not isinstance(function.node, cst.FunctionDef):
            return False
        own = self._own_summary()
        known = own.saves.get(function.node.name.value) if own is not None else None
        return known is not None and any(save[0] == expr.value for save in known[1])

    def _own_summary(self):
        """The project summary of this file (``semantic.project.Summary``: its defs' saves, its flags):
        the one the project index has of this text (made with the index, not again), else (a file
        checked alone, a notebook, stdin) made once here, when asked; None when it does not compile."""
        found = getattr(self, "_summary", False)
        if found is False:
            from tflint_gpu.semantic.project import summarize_source

            project = self.resolver.project
            summary = project.own_summary(self.model.source) if project is not None else None
            if summary is None and project is not None and project.module is not None and not project.own_notebook:
                summary = project.index.summary(project.module, project.deps)
            if summary is None and (project is None or project.module is None or project.own_notebook):
                try:
                    summary = summarize_source(self.model.source)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    summary = None
            found = self._summary = summary
        return found

    # -- mixed precision (semantic/precision.py) -----------------------------
    @property
    def precision(self):
        """Mixed precision facts of this file (the mixed global policy it sets,
        the last layers of the models it trains, loss scaling, optimizer kinds),
        built on first use: an ``semantic.precision.PrecisionFacts``."""
        facts = getattr(self, "_precision", None)
        if facts is None:
            from tflint_gpu.semantic.precision import PrecisionFacts

            facts = self._precision = PrecisionFacts(self.model, self.resolver, self.graphs)
        return facts

    # -- test code (semantic/testcode.py) ------------------------------------
    @property
    def in_test_module(self) -> bool:
        """Is this file a test suite (test functions and a test framework):
        ``semantic.testcode.is_test_module``."""
        found = getattr(self, "_test_module", None)
        if found is None:
            from tflint_gpu.semantic.testcode import is_test_module

            found = self._test_module = is_test_module(self.model, self.resolver)
        return found

    # -- Keras model outputs and losses (semantic/model_outputs.py) ------------
    @property
    def model_outputs(self):
        """How a Keras model the file builds makes its output (softmax, sigmoid, linear) and
        which losses take probabilities: an ``semantic.model_outputs.ModelOutputs``."""
        facts = getattr(self, "_model_outputs", None)
        if facts is None:
            from tflint_gpu.semantic.model_outputs import ModelOutputs

            facts = self._model_outputs = ModelOutputs(self.resolver, self.graphs)
        return facts

    # -- where a file path comes from (semantic/origins.py) ---------------------
    @property
    def origins(self):
        """The download a path comes from: an ``semantic.origins.Origins``."""
        facts = getattr(self, "_origins", None)
        if facts is None:
            from tflint_gpu.semantic.origins import Origins

            facts = self._origins = Origins(self.model, self.resolver)
        return facts

    # -- per-element work a batched op does (semantic/per_element.py) ------------
    @property
    def per_element(self):
        """``tf.map_fn`` over, and stacks and loops of, batchable ops: an
        ``semantic.per_element.PerElement``."""
        facts = getattr(self, "_per_element", None)
        if facts is None:
            from tflint_gpu.semantic.per_element import PerElement

            facts = self._per_element = PerElement(self.resolver, self.tensors, self.values)
        return facts

    # -- Keras model inference calls (semantic/model_calls.py) ----------------
    @property
    def model_calls(self):
        """Keras models and their inference calls (``predict``/``evaluate``, wrappers
        passing a parameter on, one-sample data), built on first use: an
        ``semantic.model_calls.ModelCalls``."""
        facts = getattr(self, "_model_calls", None)
        if facts is None:
            from tflint_gpu.semantic.model_calls import ModelCalls

            facts = self._model_calls = ModelCalls(self.resolver, self.graphs, self.values, self.migration)
        return facts

    # -- layers that compute differently in training (semantic/training_layers.py) ----
    @property
    def training_layers(self):
        """Which Keras models and layers hold BatchNormalization/dropout layers, how a call passes
        ``training``, and which functions are training steps: a
        ``semantic.training_layers.TrainingLayers``, built on first use."""
        facts = getattr(self, "_training_layers", None)
        if facts is None:
            from tflint_gpu.semantic.training_layers import TrainingLayers

            facts = self._training_layers = TrainingLayers(self.graphs, self.resolver, self.eager)
        return facts
