"""Mixed precision facts: the global dtype policy a module sets, the last
layers of the models it trains, and how a training step scales its loss.

``policies()``
    Every call in the module that sets a mixed global policy:
    ``keras.mixed_precision.set_global_policy(...)`` (any spelling: ``tf.keras``,
    ``tf_keras``, ``from ... import mixed_precision``), ``set_dtype_policy``,
    ``keras.config.set_dtype_policy``, the TF 2.1-2.3 ``experimental.set_policy``,
    with a literal ``"mixed_float16"``/``"mixed_bfloat16"``, a
    ``Policy("mixed_...")``/``DTypePolicy("mixed_...")`` made in the call, or a
    name bound once (where the call reads it) to either. A setter inside an
    ``if`` counts: the code is wrong in the configuration that sets it.

``sets(policy)``
    Does the module set that mixed policy (``"mixed_float16"``...)?

``trained_models()``
    The Keras models built in this module and trained or compiled in it, with
    their last layers: a name bound once to ``Sequential([..., last])`` (its
    last ``.add(layer)`` in the same scope for ``Sequential()``) or to a
    functional ``Model(inputs, outputs)`` (``outputs`` a name bound once to
    ``Layer(...)(x)``, a ``Layer(...)(x)`` call, or a list/tuple of those), or
    to a call of a same-module function returning such a model (``return
    model`` or ``return Model(...)``); and ``<name>.compile(...)`` or
    ``<name>.fit(...)`` called in the scope that binds it. A last layer is a
    constructor call of ``keras.layers.<Class>`` (not ``Lambda``, whose output
    dtype is its function's); anything else (a custom layer, a pretrained
    application, a subclassed model's ``call``) is not answered.

``loss_scaled(scope)``
    Does the own body of ``scope`` scale a loss: a ``.scale_loss(...)`` or
    ``.get_scaled_loss(...)`` call (any object; ``hasattr`` forms included)?

``optimizer_kind(expr, scope)``
    What an optimizer expression is, where exact, as (kind, Keras flavour):
    ``LOSS_SCALE`` for a ``LossScaleOptimizer``: a name bound once to
    ``keras.optimizers.LossScaleOptimizer(...)`` /
    ``keras.mixed_precision.LossScaleOptimizer(...)`` (any spelling), or,
    unless the module passes ``auto_scale_loss=`` to a ``compile``,
    ``self.optimizer`` in a Keras model class and ``model.optimizer`` of a
    model the module builds and compiles (``compile`` wraps the optimizer under
    ``mixed_float16``, in Keras 3 and tf_keras); ``PLAIN`` for a name bound
    once to another ``keras.optimizers.<Class>(...)``; None otherwise. The
    flavour is "keras3" or "tf_keras" (their ``LossScaleOptimizer``s differ:
    Keras 3's ``apply_gradients`` divides by the scale, tf_keras's does not),
    as ``GraphAnalysis.raw_keras_flavour`` answers for the project's target:
    ``tf.keras`` is "tf_keras" where the project targets Keras 2.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import KERAS_SEQUENTIAL, argument, keyword
from tflint_gpu.semantic.model import ModuleModel, ScopeInfo, lookup
from tflint_gpu.semantic.names import Resolver, normalize

MIXED_FLOAT16 = "mixed_float16"
MIXED_BFLOAT16 = "mixed_bfloat16"
MIXED = frozenset({MIXED_FLOAT16, MIXED_BFLOAT16})

_SETTERS = frozenset({
    "keras.mixed_precision.set_global_policy",
    "keras.mixed_precision.set_dtype_policy",
    "keras.mixed_precision.experimental.set_policy",
    "keras.mixed_precision.experimental.set_global_policy",
    "keras.config.set_dtype_policy",
    "keras.dtype_policies.set_dtype_policy",
})
_POLICIES = frozenset({
    "keras.mixed_precision.Policy",
    "keras.mixed_precision.DTypePolicy",
    "keras.mixed_precision.experimental.Policy",
    "keras.DTypePolicy",
    "keras.dtype_policies.DTypePolicy",
})
_FUNCTIONAL = frozenset({"keras.Model", "keras.models.Model"})
_LOSS_SCALE = frozenset({
    "keras.optimizers.LossScaleOptimizer",
    "keras.mixed_precision.LossScaleOptimizer",
    "keras.mixed_precision.experimental.LossScaleOptimizer",
})
_SCALE_METHODS = frozenset({"scale_loss", "get_scaled_loss"})
_TRAIN_METHODS = frozenset({"compile", "fit"})
# Layers whose output dtype is not the policy's compute dtype as such.
_NOT_ANSWERED_LAYERS = frozenset({"Lambda", "TFSMLayer", "InputLayer"})

LOSS_SCALE = "loss-scale"
PLAIN = "plain"


@dataclass
class PolicySite:
    call: cst.Call
    scope: ScopeInfo
    policy: str  # "mixed_float16" or "mixed_bfloat16"


@dataclass
class TrainedModel:
    construction: cst.Call  # Sequential(...) / Model(...)
    scope: ScopeInfo  # where the construction is
    name: str  # the name it is trained under
    last_layers: List[cst.Call]  # constructor calls of the output layers


class PrecisionFacts:
    def __init__(self, model: ModuleModel, resolver: Resolver, graphs) -> None:
        self.model = model
        self.resolver = resolver
        self.graphs = graphs
        self._policies: Optional[List[PolicySite]] = None
        self._trained: Optional[List[TrainedModel]] = None

    # -- global policy ------------------------------------------------------
    def policies(self) -> List[PolicySite]:
        if self._policies is None:
            self._policies = []
            for call, scope in self.model.index.get("Call", ()):
                if self._qualname(call.func, scope) not in _SETTERS:
                    continue
                value = argument(call, 0, "policy")
                if value is None:
                    value = argument(call, 0, "value")
                policy = self._policy_name(value, scope, call) if value is not None else None
                if policy in MIXED:
                    self._policies.append(PolicySite(call, scope, policy))
        return self._policies

    def sets(self, policy: str) -> bool:
        return any(site.policy == policy for site in self.policies())

    def _policy_name(self, value: cst.BaseExpression, scope: ScopeInfo, at: cst.CSTNode,
                     depth: int = 0) -> Optional[str]:
        if isinstance(value, cst.SimpleString):
            text = value.evaluated_value
            return text if isinstance(text, str) else None
        if isinstance(value, cst.Call) and self._qualname(value.func, scope) in _POLICIES:
            name = argument(value, 0, "name")
            return self._policy_name(name, scope, at, depth + 1) if name is not None and depth < 3 else None
        if isinstance(value, cst.Name) and depth < 3:
            found = lookup(value.value, scope, at)
            if found is not None and isinstance(found.single_value, cst.BaseExpression):
                return self._policy_name(found.single_value, found.scope, at, depth + 1)
        return None

    # -- models and their last layers ----------------------------------------
    def trained_models(self) -> List[TrainedModel]:
        if self._trained is None:
            self._trained = []
            seen = set()
            for call, scope in self.model.index.get("Call", ()):
                func = call.func
                if not (isinstance(func, cst.Attribute) and func.attr.value in _TRAIN_METHODS
                        and isinstance(func.value, cst.Name)):
                    continue
                found = lookup(func.value.value, scope, call)
                value = found.single_value if found is not None else None
                if not isinstance(value, cst.Call):
                    continue
                built = self._construction(value, found.scope, func.value.value)
                if built is None or id(built[0]) in seen:
                    continue
                seen.add(id(built[0]))
                construction, where, name = built
                layers = self.last_layers(construction, where, name)
                if layers:
                    self._trained.append(TrainedModel(construction, where, name, layers))
        return self._trained

    def _construction(self, value: cst.Call, scope: ScopeInfo, name: str
                      ) -> Optional[Tuple[cst.Call, ScopeInfo, str]]:
        """The model construction ``value`` (bound to ``name`` in ``scope``)
        stands for: itself, or what a same-module function it calls returns."""
        if self._qualname(value.func, scope) in KERAS_SEQUENTIAL | _FUNCTIONAL:
            return value, scope, name
        if not isinstance(value.func, cst.Name):
            return None
        function = scope.lookup_def(value.func.value)
        if function is None or not isinstance(function.node, cst.FunctionDef):
            return None
        returns = [n for n in _own_returns(function.node) if n.value is not None]
        if len(returns) != 1:
            return None
        returned = returns[0].value
        if isinstance(returned, cst.Call) and self._qualname(returned.func, function) in KERAS_SEQUENTIAL | _FUNCTIONAL:
            return returned, function, ""
        if isinstance(returned, cst.Name):
            found = lookup(returned.value, function, returns[0])
            inner = found.single_value if found is not None else None
            if isinstance(inner, cst.Call) and found.scope is function \
                    and self._qualname(inner.func, function) in KERAS_SEQUENTIAL | _FUNCTIONAL:
                return inner, function, returned.value
        return None

    def last_layers(self, construction: cst.Call, scope: ScopeInfo, name: str = "") -> List[cst.Call]:
        """The constructor calls of the output layers of a model construction
        (empty when any of them is not a known Keras layer)."""
        qualname = self._qualname(construction.func, scope)
        if qualname in KERAS_SEQUENTIAL:
            layers = argument(construction, 0, "layers")
            if isinstance(layers, (cst.List, cst.Tuple)):
                elements = [e for e in layers.elements if not isinstance(e, cst.StarredElement)]
                if len(elements) != len(layers.elements) or not elements:
                    return []
                last = elements[-1].value
            elif layers is None and name:
                adds = [c for c in scope.calls if isinstance(c.func, cst.Attribute) and c.func.attr.value == "add"
                        and isinstance(c.func.value, cst.Name) and c.func.value.value == name]
                if not adds or len(adds[-1].args) != 1:
                    return []
                last = adds[-1].args[0].value
            else:
                return []
            layer = self._layer_constructor(last, scope, construction)
            return [layer] if layer is not None else []
        if qualname in _FUNCTIONAL:
            outputs = argument(construction, 1, "outputs")
            if outputs is None:
                return []
            items = [e.value for e in outputs.elements] if isinstance(outputs, (cst.List, cst.Tuple)) else [outputs]
            found = [self._output_layer(item, scope, construction) for item in items]
            return [f for f in found if f is not None] if all(f is not None for f in found) else []
        return []

    def _output_layer(self, expr: cst.BaseExpression, scope: ScopeInfo, at: cst.CSTNode) -> Optional[cst.Call]:
        """The layer constructor whose call made the tensor ``expr``:
        ``Layer(...)(x)``, or a name bound once to that."""
        expr = _call_behind(expr, scope, at)
        return self._layer_constructor(expr.func, scope, at) if expr is not None else None

    def _layer_constructor(self, expr: cst.BaseExpression, scope: ScopeInfo, at: cst.CSTNode) -> Optional[cst.Call]:
        """``expr`` as a Keras layer constructor call (or a name bound once to one)."""
        expr = _call_behind(expr, scope, at)
        if expr is None:
            return None
        qualname = self._qualname(expr.func, scope)
        if qualname is None or not qualname.startswith("keras.layers."):
            return None
        last = qualname.rsplit(".", 1)[-1]
        if not last[:1].isupper() or last in _NOT_ANSWERED_LAYERS:
            return None
        return expr

    @staticmethod
    def sets_dtype(layer: cst.Call) -> bool:
        """Does a layer constructor call choose its own dtype (``dtype=``, or
        arguments it cannot see: ``**kwargs``)?"""
        return keyword(layer, "dtype") is not None or any(arg.star == "**" for arg in layer.args)

    # -- loss scaling ---------------------------------------------------------
    def loss_scaled(self, scope: ScopeInfo) -> bool:
        return any(isinstance(call.func, cst.Attribute) and call.func.attr.value in _SCALE_METHODS
                   for call in scope.calls)

    def optimizer_kind(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[Tuple[str, str]]:
        """(kind, flavour) of an optimizer expression, or None (see the module docs)."""
        if isinstance(expr, cst.Attribute) and expr.attr.value == "optimizer" and isinstance(expr.value, cst.Name) \
                and expr.value.value == "self":
            cls = scope.method_class()
            flavour = self.graphs.keras_flavour(cls) if cls is not None else None
            if flavour is not None and not self._auto_scale_off():
                return LOSS_SCALE, flavour
            return None
        if isinstance(expr, cst.Attribute) and expr.attr.value == "optimizer" and isinstance(expr.value, cst.Name):
            return self._compiled_optimizer(expr.value, scope)
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        # What made it, through names, parameters (a LossScaleOptimizer made in main() and passed to
        # train(model, optimizer)) and self attributes: one kind of optimizer call, and nothing else.
        found = self.graphs.flow.sources(expr, scope)
        made = found.values()
        if found.unknown or not made:
            return None
        kinds = {self._made_kind(value, where) for value, where in made}
        return kinds.pop() if len(kinds) == 1 else None

    def _made_kind(self, value: cst.BaseExpression, where: ScopeInfo) -> Optional[Tuple[str, str]]:
        if not isinstance(value, cst.Call):
            return None
        raw = self.resolver.raw_qualname(value.func, where)
        if raw is None:
            return None
        qualname = normalize(raw)
        flavour = self.graphs.raw_keras_flavour(raw) or "keras3"
        if qualname in _LOSS_SCALE:
            return LOSS_SCALE, flavour
        if qualname.startswith("keras.optimizers.") and qualname.count(".") == 2 \
                and qualname.rsplit(".", 1)[-1][:1].isupper():
            return PLAIN, flavour
        return None

    def _compiled_optimizer(self, name: cst.Name, scope: ScopeInfo) -> Optional[Tuple[str, str]]:
        """``model.optimizer`` of a model this module builds and compiles
        (``compile`` wraps its optimizer in a LossScaleOptimizer)."""
        found = lookup(name.value, scope)
        value = found.single_value if found is not None else None
        if not isinstance(value, cst.Call) or self._auto_scale_off():
            return None
        built = self._construction(value, found.scope, name.value)
        if built is None:
            return None
        compiled = any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "compile"
                       and isinstance(c.func.value, cst.Name) and c.func.value.value == name.value
                       for c in found.scope.calls)
        if not compiled:
            return None
        raw = self.resolver.raw_qualname(built[0].func, built[1])
        return LOSS_SCALE, self.graphs.raw_keras_flavour(raw) or "keras3"

    def _auto_scale_off(self) -> bool:
        return any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "compile"
                   and keyword(call, "auto_scale_loss") is not None
                   for call, _scope in self.model.index.get("Call", ()))

    def _qualname(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        return self.resolver.qualname(expr, scope)


def _own_returns(function: cst.FunctionDef) -> List[cst.Return]:
    from tflint_gpu.semantic.model import returns

    return list(returns(function.body))


def _call_behind(expr: cst.BaseExpression, scope: ScopeInfo, at: cst.CSTNode) -> Optional[cst.Call]:
    """``expr`` if it is a call, or the call a name of ``scope`` is bound to once where ``at`` reads it."""
    if isinstance(expr, cst.Name):
        found = lookup(expr.value, scope, at)
        value = found.single_value if found is not None else None
        if not isinstance(value, cst.Call) or found.scope is not scope:
            return None
        return value
    return expr if isinstance(expr, cst.Call) else None
