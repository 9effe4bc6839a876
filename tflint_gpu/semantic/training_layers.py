"""Keras models and layers that compute differently in training, and the training steps that call them.

Some Keras layers behave one way when called with ``training=True`` and
another otherwise: ``BatchNormalization`` (batch statistics and moving-average
updates, or the moving averages), the dropout family (``Dropout``,
``SpatialDropout1D/2D/3D``, ``GaussianDropout``, ``AlphaDropout``) and
``GaussianNoise`` (active, or the identity). Measured under TF 2.21 with Keras
3.15 and tf_keras 2.21: each of them called without ``training`` computes what
``training=False`` computes. A model or layer that holds one of them does the
same, unless its ``call`` declares ``training=True`` as the default.

``TrainingLayers(graphs, resolver, eager)``:

``holds(expr, scope)``
    The class name (``"BatchNormalization"``, ``"Dropout"``...) of such a layer
    that the model or layer ``expr`` holds, as far as the module shows; None
    when it holds none the engine can see. It follows ``expr`` through
    ``semantic.flow`` (names, parameters with their same-module call sites,
    ``self.x`` attributes, same-module defs' returns) to the calls that made it,
    and ``self`` to the class of the method. A call made it that is

    * such a layer's constructor (``keras.layers.Dropout(0.5)``, spelled
      through ``keras``, ``tf.keras`` or ``tf_keras``), or of a same-module
      subclass of one;
    * ``keras.Sequential([...])``: the layers of its list (each read again),
      and every ``m.add(layer)`` on an object the same call made
      (``self.forward = Sequential([...])`` then ``self.forward.add(BatchNormalization())``);
    * ``keras.Model(inputs, outputs)`` (functional): the layers called on the
      way from ``outputs`` back to the inputs (``Dense(1)(Dropout(0.5)(h))``,
      a layer held in a name, a ``tf`` op's tensor arguments), at most 200
      steps back; not a layer called with its own ``training=`` (a frozen
      ``base(x, training=False)``: the author chose its mode. Measured: under
      tf_keras 2.21 the outer ``training=True`` does not reach it; under
      Keras 3.15 it does, a functional model passing its own mode to every
      layer, so adding ``training=True`` would unfreeze it);
    * a same-module Keras class (``Discriminator()``): what ``class_holds``
      says of it.

    A parameter is followed to what the module's calls pass in its place (a
    chain of them: ``train(model)`` handing ``model`` to ``_train_step(model,
    ...)``); a top-level def's parameter no call of the module fills, to what
    other project modules among the checked files hand it
    (``ProjectFile.handed_holder``: ``model = DS2(...)`` then
    ``train(model=model)`` in a script, ``DS2`` a class of a third module that
    makes a BatchNormalization); then the answer names the maker:
    ``"BatchNormalization/dropout layers (made by `pkg.model.DS2`)"``.

``class_holds(cls)``
    For a same-module Keras class (a ``keras.layers.Layer``/``keras.Model``
    subclass through its bases): one of those layers among its bases, or
    made anywhere in its methods, its same-module bases' methods and the
    functions nested in them (``self.bn = BatchNormalization()`` in
    ``__init__`` or ``build``, a list of them, a helper method, an inline
    ``Dropout(0.1)(x)`` in ``call``), directly or as a Sequential, functional
    model or same-module Keras class made there (transitively), or returned by
    a same-module def called there.

``call_signature(expr, scope)``
    The ``call`` of the same-module Keras classes ``expr`` may be an instance
    of (``CallSignature``: its positional parameters, whether it takes
    ``*args``/``**kwargs``, and its mode parameters with their defaults:
    ``training`` and any other parameter its body passes as ``training=``,
    as ``def call(self, x, is_training=False): ... self.bn(x,
    training=is_training)``), or None for a Keras built-in (``Sequential``,
    functional ``Model``: ``call(inputs, training=None, mask=None)``) or when
    not told.

``training_given(call, scope)``
    Does a call of a model or layer pass its mode: a mode parameter by
    keyword (``training=``, ``is_training=`` where the callee's ``call`` takes
    that), ``*args``/``**kwargs`` (which may hold it), or positionally where
    the callee's ``call`` takes a mode parameter (``self.D(x, y)`` is not one
    when ``call(self, x, y)``); for a built-in or an untold callee, any second
    positional argument?

``step(function)``
    Is ``function`` a training step: a ``train_step`` method of a Keras class
    (``fit`` runs it), or a function whose own body holds a GradientTape
    training step (``semantic.eager.training_step``: the gradients reach an
    update)? Not a Keras class's ``call``, nor a function whose name says it
    evaluates (``test``, ``val``/``valid``, ``eval``, ``predict``, ``infer``
    as a word of the name).

``evaluates(function)``
    Does ``function`` evaluate a model: a def whose name says so (the words
    ``step`` reads to exclude a function: ``test_step``, ``_one_step_evaluate``,
    ``validate_epoch``) whose own body holds no GradientTape training step, and
    not a Keras class's ``call`` (its ``training`` is its caller's)?

``training_on_purpose(call, scope)``
    Is a training-mode call in such a function likely deliberate: the function's
    name speaks of prediction, inference or sampling (Monte Carlo dropout keeps
    dropout on to estimate an uncertainty), or the callee is itself a dropout or
    noise layer (every way the flow finds it made: that layer's constructor),
    which says what it wants?

``trained(function)``
    The objects whose variables the function's own body reads for
    differentiation or updates: the dotted receivers ``X`` of every
    ``X.trainable_variables``/``trainable_weights`` (``"self.D"``, ``"model"``,
    ``"self"``; not ``X.variables``/``X.weights``, which a target network's
    soft update reads: ``t.assign(tau * s + (1 - tau) * t)`` over
    ``zip(target.variables, model.variables)``).

``helper_trained(function)``
    ``trained`` for a same-module def, no step itself, that every call in the
    module makes under the tape of a training step (``loss =
    self._loss(states)`` in the ``with``): the names the steps train that
    mean the same object in the def (``self.x`` when it is called as
    ``self._loss(...)``, a module-level name neither binds); None otherwise.

``inline_trained(node, scope)``
    ``trained`` for a call in module code (a script's or a notebook's loop)
    inside the ``with tf.GradientTape()`` block of a training step in a
    loop that also takes the tape's gradient: the receivers whose trainable
    variables the loop reads; None when no such block holds the call.

``learning_phase_set()``
    Does the module call tf_keras's ``backend.set_learning_phase`` (measured
    under tf_keras 2.21: ``set_learning_phase(1)`` makes a call without
    ``training`` train; Keras 3 has no such function)?
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.semantic.api import KERAS_SEQUENTIAL, TRAINABLE_LISTS, argument
from tflint_gpu.semantic.model import ASSIGNED, PARAM, SCOPE_TYPES, ScopeInfo, lookup, walk
from tflint_gpu.semantic.project import TRAINING_LAYER_NAMES

# Layers whose output (or state) depends on ``training``: measured, see the module's docs.
TRAINING_LAYERS = TRAINING_LAYER_NAMES
_FUNCTIONAL = frozenset({"keras.Model", "keras.models.Model"})
# Only the trainable ones (api.TRAINABLE_LISTS): ``variables``/``weights`` are what a target network's soft
# update reads.
EVALUATING = re.compile(r"(?:^|_)(?:test|val|valid|validate|validation|eval|evaluate|evaluation|predict|"
                         r"prediction|infer|inference)(?:_|$|\d)", re.IGNORECASE)
_LEARNING_PHASE = frozenset({"keras.backend.set_learning_phase"})
# Words of a name for prediction: Monte Carlo dropout (``model(x, training=True)`` at prediction, for an
# uncertainty) is a known technique, and inference code may keep a layer noisy on purpose.
_PREDICTING = re.compile(r"(?:^|_)(?:predict|prediction|infer|inference|sample|sampling|mc)(?:_|$|\d)", re.IGNORECASE)
_NORMALISATION = frozenset({"BatchNormalization", "SyncBatchNormalization"})
_BACK = 200  # how many steps back from a functional model's outputs are read
_PENDING = ""  # a class or call being read: a cycle adds nothing
_PARAMETER_DEPTH = 6  # how many parameters are followed to their callers, one after the other


@dataclass
class CallSignature:
    positional: List[str]  # the positional parameters of ``call`` (no self)
    star_args: bool
    star_kwargs: bool
    # the parameters that say the mode: ``training`` and any other its body passes as ``training=``
    # (``def call(self, x, is_training=False): ... self.bn(x, training=is_training)``), with their defaults
    modes: Dict[str, Optional[cst.BaseExpression]]

    @property
    def trains_by_default(self) -> bool:
        return any(isinstance(value, cst.Name) and value.value == "True" for value in self.modes.values())


def dotted(expr: cst.BaseExpression) -> Optional[str]:
    """``self.model.encoder`` for a chain of attributes on a name, else None."""
    parts: List[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


class TrainingLayers:
    def __init__(self, graphs, resolver, eager) -> None:
        self.graphs = graphs
        self.model = graphs.model
        self.resolver = resolver
        self.eager = eager
        self._classes: Dict[int, Optional[str]] = {}
        self._made: Dict[int, Optional[str]] = {}
        self._nested: Optional[Dict[int, List[ScopeInfo]]] = None
        # id of a call that made an object -> the ``.add(layer)`` calls on it (argument, scope)
        self._adds: Optional[Dict[int, List[Tuple[cst.BaseExpression, ScopeInfo]]]] = None
        self._signatures: Dict[int, Optional[CallSignature]] = {}
        self._steps: Dict[int, bool] = {}
        self._evaluations: Dict[int, bool] = {}
        self._helpers: Dict[int, Optional[Set[str]]] = {}
        self._trained: Dict[int, Set[str]] = {}
        self._phase: Optional[bool] = None

    def _qualname(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        return self.resolver.qualname(expr, scope)

    @staticmethod
    def _layer_name(qualname: Optional[str]) -> Optional[str]:
        if qualname is None or not qualname.startswith("keras."):
            return None
        last = qualname.rsplit(".", 1)[-1]
        return last if last in TRAINING_LAYERS else None

    # -- what a model holds -----------------------------------------------------
    def holds(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int = 0) -> Optional[str]:
        cls = self.graphs.objects.self_class(expr, scope)
        if cls is not None:
            return self.class_holds(cls)
        if isinstance(expr, cst.Call):
            return self._made_holds(expr, scope)
        if isinstance(expr, cst.Name) and depth < _PARAMETER_DEPTH:
            handed = self._parameter_holds(expr, scope, depth)
            if handed is not None:
                return handed or None
        for value, where in self.graphs.flow.sources(expr, scope).values():
            found = self._made_holds(value, where) if isinstance(value, cst.Call) else None
            if found is None and value is not expr and isinstance(value, cst.Name):
                cls = self.graphs.objects.self_class(value, where)
                found = self.class_holds(cls) if cls is not None else None
            if found:
                return found
        return None

    def _parameter_holds(self, expr: cst.Name, scope: ScopeInfo, depth: int) -> Optional[str]:
        """For a name bound only to a parameter of a def: what the module's calls pass in its place
        (each read again), or, when the module has no such call and the def is a top-level one, what
        other project modules hand it (``ProjectFile.handed_holder``); "" when that holds nothing
        seen, None when the name is no such parameter."""
        found = lookup(expr.value, scope, None)
        if found is None or found.kind != ASSIGNED or found.writers or len(found.own_values) != 1:
            return None
        value = found.own_values[0]
        function = found.scope
        if not (isinstance(value, tuple) and value[0] == PARAM and isinstance(value[1], cst.Param)) \
                or not isinstance(function.node, cst.FunctionDef):
            return None
        param = value[1]
        passed = self.graphs.flow.passed(function, param)
        if passed is not None:
            for given, where in passed:
                held = self.holds(given, where, depth + 1)
                if held:
                    return held
            return ""
        project = self.resolver.project
        if project is None or function.parent is not self.model.root or param.star:
            return ""
        params = list(function.node.params.posonly_params) + list(function.node.params.params)
        position = next((i for i, p in enumerate(params) if p is param), -1)
        maker = project.handed_holder(function.name, position, param.name.value)
        return f"BatchNormalization/dropout layers (made by `{maker}`)" if maker else ""

    def _made_holds(self, call: cst.Call, scope: ScopeInfo) -> Optional[str]:
        key = id(call)
        if key in self._made:
            return self._made[key] or None
        self._made[key] = _PENDING
        found = self._read_made(call, scope)
        self._made[key] = found or _PENDING
        return found

    def _read_made(self, call: cst.Call, scope: ScopeInfo) -> Optional[str]:
        func = call.func
        qualname = self._qualname(func, scope)
        if qualname is not None:
            name = self._layer_name(qualname)
            if name is not None:
                return name
            if qualname in KERAS_SEQUENTIAL:
                layers = argument(call, 0, "layers")
                if isinstance(layers, (cst.List, cst.Tuple)):
                    for element in layers.elements:
                        found = self.holds(element.value, scope)
                        if found:
                            return found
                elif layers is not None:
                    found = self._element_holds(layers, scope)
                    if found:
                        return found
                return self._added_holds(call)
            if qualname in _FUNCTIONAL:
                outputs = argument(call, 1, "outputs")
                return self._tensor_holds(outputs, scope) if outputs is not None else None
            return None
        if isinstance(func, cst.Name):
            cls = scope.lookup_class(func.value)
            if cls is not None:
                return self.class_holds(cls)
        return None

    def _element_holds(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        """A list of layers given as a name: the displays it comes from, and what is appended to it."""
        for value, where in self.graphs.flow.sources(expr, scope).values():
            if isinstance(value, (cst.List, cst.Tuple)):
                for element in value.elements:
                    found = self.holds(element.value, where)
                    if found:
                        return found
        if isinstance(expr, cst.Name):
            for _how, value, _node in self.graphs.objects.container_additions(scope, expr.value):
                if isinstance(value, cst.BaseExpression):
                    found = self.holds(value, scope)
                    if found:
                        return found
        return None

    def _added_holds(self, made: cst.Call) -> Optional[str]:
        """``m.add(layer)`` calls on an object ``made`` made."""
        if self._adds is None:
            self._adds = {}
            flow = self.graphs.flow
            for scope in self.model.scopes:
                for call in scope.calls:
                    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "add" \
                            and len(call.args) == 1 and not call.args[0].star:
                        for value, _ in flow.sources(call.func.value, scope).values():
                            if isinstance(value, cst.Call):
                                self._adds.setdefault(id(value), []).append((call.args[0].value, scope))
        for layer, scope in self._adds.get(id(made), ()):
            found = self.holds(layer, scope)
            if found:
                return found
        return None

    def _tensor_holds(self, tensor: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        """The layers called on the way back from a functional model's outputs."""
        stack: List[Tuple[cst.BaseExpression, ScopeInfo]] = [(tensor, scope)]
        seen: Set[int] = set()
        flow = self.graphs.flow
        steps = 0
        while stack and steps < _BACK:
            expr, where = stack.pop()
            if id(expr) in seen:
                continue
            seen.add(id(expr))
            steps += 1
            if isinstance(expr, (cst.List, cst.Tuple)):
                stack.extend((e.value, where) for e in expr.elements)
                continue
            if not isinstance(expr, cst.Call):
                for value, at in flow.sources(expr, where).values():
                    if value is not expr:
                        stack.append((value, at))
                continue
            func = expr.func
            qualname = self._qualname(func, where)
            if qualname is None:  # a layer called on tensors: the layer, then its inputs
                fixed = any(arg.keyword is not None and arg.keyword.value == "training" for arg in expr.args)
                found = None if fixed else self.holds(func, where)  # base(x, training=False): the author's mode
                if found:
                    return found
            elif self._layer_name(qualname) is not None or qualname in KERAS_SEQUENTIAL or qualname in _FUNCTIONAL:
                continue  # a layer made, not called
            elif not (qualname.startswith("tensorflow.") or qualname.startswith("keras.ops.")):
                continue  # keras.Input(...), another library
            stack.extend((arg.value, where) for arg in expr.args if not arg.star)
        return None

    def class_holds(self, cls: ScopeInfo) -> Optional[str]:
        key = id(cls)
        if key in self._classes:
            return self._classes[key] or None
        self._classes[key] = _PENDING
        found = None
        if self.graphs.is_keras_class(cls):
            found = self._read_class(cls)
        self._classes[key] = found or _PENDING
        return found

    def _read_class(self, cls: ScopeInfo) -> Optional[str]:
        for raw in self.graphs.class_bases(cls):
            found = self._layer_name(self._normal(raw))
            if found:
                return found
        for current in self.graphs.objects.mro(cls):
            for inner in self._scopes_in(current):
                for call in inner.calls:
                    found = self._call_holds(call, inner)
                    if found:
                        return found
        return None

    def _call_holds(self, call: cst.Call, scope: ScopeInfo) -> Optional[str]:
        qualname = self._qualname(call.func, scope)
        if qualname is not None:
            if self._layer_name(qualname) or qualname in KERAS_SEQUENTIAL or qualname in _FUNCTIONAL:
                return self._made_holds(call, scope)
            return None
        if isinstance(call.func, cst.Name):
            if scope.lookup_class(call.func.value) is not None:
                return self._made_holds(call, scope)
            if self.graphs.flow.functions(call, scope):  # a same-module def returning a layer
                for value, where in self.graphs.flow.sources(call, scope).values():
                    if isinstance(value, cst.Call) and value is not call:
                        found = self._made_holds(value, where)
                        if found:
                            return found
        return None

    def _normal(self, raw: str) -> str:
        from tflint_gpu.semantic.names import normalize

        return normalize(raw)

    def _scopes_in(self, cls: ScopeInfo) -> List[ScopeInfo]:
        """The functions (and lambdas) defined in ``cls``'s body, at any depth."""
        if self._nested is None:
            self._nested = {}
            for scope in self.model.scopes:
                if scope.kind == "class":
                    continue
                for outer in scope.chain():
                    if outer.kind == "class":
                        self._nested.setdefault(id(outer), []).append(scope)
                        break
        return self._nested.get(id(cls), [])

    # -- how a call passes ``training`` -----------------------------------------
    def call_signature(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[CallSignature]:
        for cls in self._classes_of(expr, scope):
            found = self._memoised(cls)
            if found is not None:
                return found
        return None

    def class_signature(self, cls: ScopeInfo) -> Optional[CallSignature]:
        """The ``call`` signature of the same-module Keras class ``cls``, or None."""
        return self._memoised(cls) if self.graphs.is_keras_class(cls) else None

    def _memoised(self, cls: ScopeInfo) -> Optional[CallSignature]:
        key = id(cls)
        if key not in self._signatures:
            self._signatures[key] = self._signature(cls)
        return self._signatures[key]

    def _signature(self, cls: ScopeInfo) -> Optional[CallSignature]:
        methods = self.graphs.objects.methods(cls, "call")[:1]  # the one found first through the bases
        if not methods or not isinstance(methods[0].node, cst.FunctionDef):
            return None
        method = methods[0]
        node = method.node
        params = list(node.params.posonly_params) + list(node.params.params)
        if method.binds_instance:
            params = params[1:]
        every = params + list(node.params.kwonly_params)
        inner = [s for s in self._scopes_in(method.parent) if any(o is method for o in s.chain())]
        forwarded = {arg.value.value for scope in inner for call in scope.calls for arg in call.args
                     if arg.keyword is not None and arg.keyword.value == "training" and isinstance(arg.value, cst.Name)}
        modes = {p.name.value: p.default for p in every if p.name.value == "training" or p.name.value in forwarded}
        return CallSignature([p.name.value for p in params], isinstance(node.params.star_arg, cst.Param),
                             node.params.star_kwarg is not None, modes)

    def _classes_of(self, expr: cst.BaseExpression, scope: ScopeInfo) -> List[ScopeInfo]:
        objects = self.graphs.objects
        cls = objects.self_class(expr, scope)
        if cls is not None:
            return [cls]
        return [c for c in objects.kind(expr, scope).instances if self.graphs.is_keras_class(c)]

    def training_given(self, call: cst.Call, scope: ScopeInfo) -> bool:
        signature = self.call_signature(call.func, scope)
        modes = signature.modes if signature is not None else {"training": None}
        positional = 0
        for arg in call.args:
            if arg.keyword is not None:
                if arg.keyword.value == "training" or arg.keyword.value in modes:
                    return True  # Keras takes ``training`` whatever ``call`` declares
                continue
            if arg.star:
                return True  # ``*args``/``**kwargs`` may hold it
            positional += 1
        if signature is None:
            return positional >= 2  # Sequential/functional call(inputs, training=None, mask=None)
        if any(name in modes for name in signature.positional[:positional]):
            return True
        return signature.star_args and positional > len(signature.positional)

    # -- training steps ------------------------------------------------------
    def step(self, function: ScopeInfo) -> bool:
        key = id(function)
        found = self._steps.get(key)
        if found is None:
            found = self._steps[key] = self._is_step(function)
        return found

    def _is_step(self, function: ScopeInfo) -> bool:
        if not function.is_function or not isinstance(function.node, cst.FunctionDef) or function.excluded:
            return False
        if EVALUATING.search(function.name):
            return False
        cls = function.enclosing_class
        keras_method = cls is not None and (self.graphs.is_keras_class(cls) or self.graphs.objects.outside_bases(cls))
        if keras_method and function.name == "call":
            return False
        if keras_method and function.name == "train_step":
            return True
        return self.eager.step_function(function, depth=0) is not None

    def evaluates(self, function: ScopeInfo) -> bool:
        key = id(function)
        found = self._evaluations.get(key)
        if found is None:
            found = self._evaluations[key] = self._evaluates(function)
        return found

    def _evaluates(self, function: ScopeInfo) -> bool:
        if not function.is_function or not isinstance(function.node, cst.FunctionDef) or function.name == "call":
            return False
        if not EVALUATING.search(function.name):
            return False
        return self.eager.step_function(function, depth=0) is None

    def training_on_purpose(self, call: cst.Call, scope: ScopeInfo) -> bool:
        if _PREDICTING.search(scope.name):
            return True
        sources = self.graphs.flow.sources(call.func, scope)
        if sources.unknown or not sources.found:
            return False
        for value, where in sources.found:
            if not isinstance(value, cst.Call):
                return False
            name = self._layer_name(self.resolver.qualname(value.func, where))
            if name is None or name in _NORMALISATION:
                return False
        return True

    def trained(self, function: ScopeInfo) -> Set[str]:
        return self._trained_in(function.node.body if not isinstance(function.node, cst.Module) else function.node)

    def _trained_in(self, region: cst.CSTNode) -> Set[str]:
        key = id(region)
        found = self._trained.get(key)
        if found is None:
            found = self._trained[key] = set()
            for node in walk(region, skip=SCOPE_TYPES):
                if isinstance(node, cst.Attribute) and node.attr.value in TRAINABLE_LISTS:
                    name = dotted(node.value)
                    if name is not None:
                        found.add(name)
        return found

    def helper_trained(self, function: ScopeInfo) -> Optional[Set[str]]:
        """For a same-module def that is no step itself, every call of which in the module is made
        under the tape of a training step (``loss = self._loss(x)`` inside the ``with``): what those
        steps train, as the def can name it (``self.x`` when called as ``self.f(...)``, a module-level
        name neither binds); None when it is no such helper."""
        key = id(function)
        if key in self._helpers:
            return self._helpers[key]
        self._helpers[key] = None
        found: Optional[Set[str]] = None
        if function.is_function and isinstance(function.node, cst.FunctionDef) and not self.step(function) \
                and not EVALUATING.search(function.name) and not (
                    function.name == "call" and function.enclosing_class is not None):
            sites = self.graphs.call_sites(function)
            if sites and all(caller.is_function and self.step(caller)
                             and self.eager.under_tape(call, caller, callers=0) for call, caller in sites):
                found = set()
                for call, caller in sites:
                    by_self = isinstance(call.func, cst.Attribute)
                    for name in self.trained(caller):
                        root = name.partition(".")[0]
                        if (root == "self" and by_self) or (
                                root != "self" and root not in function.assigned and root not in caller.assigned):
                            found.add(name)
        self._helpers[key] = found
        return found

    def inline_trained(self, node: cst.CSTNode, scope: ScopeInfo) -> Optional[Set[str]]:
        """For ``node`` in module code (a script's or notebook's training loop): when a ``with
        tf.GradientTape()`` block around it is a training step (``semantic.eager.training_step``),
        the receivers whose trainable variables the loop around it reads (the loop must also take the
        tape's gradient: a module may hold several tapes of one name); else None."""
        if scope.kind != "module":
            return None
        for parent in scope.ancestors(node):
            if isinstance(parent, cst.With):
                step = self.eager.training_step(parent, scope)
                # module code may hold several tapes of one name: the gradient must be taken in the
                # loop around this one
                if step is not None and step.loop is not None and step.gradient is not None \
                        and any(up is step.loop for up in scope.ancestors(step.gradient)):
                    return self._trained_in(step.loop)
        return None

    def learning_phase_set(self) -> bool:
        if self._phase is None:
            self._phase = any(self._qualname(call.func, scope) in _LEARNING_PHASE
                              for scope in self.model.scopes for call in scope.calls)
        return self._phase
