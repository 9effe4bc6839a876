"""Migration facts: which Keras a file, an API or an object belongs to.

Rules about APIs that Keras 3 (and TensorFlow 2.16+, where ``tf.keras`` is
Keras 3) removed need to know, for a call, whether the code runs under
Keras 3 or under Keras 2 (``tf_keras``), which still accepts much of it:

* ``api_flavour(expr, scope)``: the Keras an API spelling names
  (``tf_keras.*`` and ``tensorflow.python.keras.*`` are Keras 2;
  ``keras.*`` and ``tensorflow.keras.*`` Keras 3; ``tf.keras`` is Keras 2
  again in a file that mentions ``TF_USE_LEGACY_KERAS``, so not decided).
* ``module_flavour()``: the one Keras a file uses, from its imports, the
  Keras APIs it calls and the Keras classes it derives from; None when it
  uses none or both.
* ``object_flavour(expr, scope)``: the Keras of the object ``expr`` is: of
  the call that made it (following a name bound once, a ``self.x`` bound
  once in its class, and same-module classes by their bases), else the
  file's.
* ``object_class(expr, scope)``: the Keras class (normalized, such as
  ``keras.Sequential`` or ``keras.metrics.Mean``) an object was made from,
  through names bound once and same-module subclasses (their nearest Keras
  base), when it can be told.
* ``hasattr_guards(node, scope)``: the ``if hasattr(obj, "name")`` tests
  around a node, and ``unreached_under_keras3``: is the node in the branch
  taken only when Keras lacks something Keras 3 has (the ``else:`` of
  ``if hasattr(tf.keras.optimizers, "legacy")``: code for TF 2.10 and older).
* ``version_guarded(node, scope)``: is the node in a branch of a TensorFlow
  or Keras version comparison (``tf.__version__``, ``LooseVersion``,
  ``packaging.version``, tuples of parsed versions, ``tf_version``...) that
  does not run under TF 2.16+ / Keras 3, or of one whose bound cannot be
  read (``semantic.versions``), in its function or around the ``def``/class
  that holds it.
* ``except_fallback(node, scope)``: is the node in an ``except
  AttributeError:`` (``ImportError``, ``ModuleNotFoundError``,
  ``TypeError``, ``ValueError``: what a removed API raises) handler, the path
  a ``try`` takes when the current API failed (on older releases).
* ``expects_error(node, scope)``: is the node inside ``with
  self.assertRaises(...)`` / ``pytest.raises(...)`` (a test that the error
  is raised, on purpose).
"""
from __future__ import annotations


from typing import Any, Callable, Iterator, List, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.semantic.bindings import annotation_of
from tflint_gpu.semantic.api import arguments_by_name
from tflint_gpu.semantic.model import ASSIGNED, IMPORT, ITERATED, PARAM, ScopeInfo, lookup
from tflint_gpu.semantic.names import normalize
from tflint_gpu.semantic.path_text import format_tail, percent_tail

KERAS3 = "keras3"
TF_KERAS = "tf_keras"
_KERAS2_PREFIXES = ("tf_keras.", "tensorflow.python.keras.")
_KERAS2_EXACT = ("tf_keras", "tensorflow.python.keras")
_TF_KERAS_PREFIXES = ("tensorflow.keras", "tensorflow.compat.v2.keras", "tensorflow.compat.v1.keras")
# Factories that return a Keras model.
_MODEL_FACTORIES = frozenset({
    "keras.models.load_model", "keras.saving.load_model", "keras.models.clone_model",
    "keras.models.model_from_json", "keras.models.model_from_config",
})
_DEPTH = 8
_NOT_KERAS_API = "not-keras-api"  # a call that names no Keras API (the file's Keras then decides)
# (normalized module, attribute) that Keras 3 has: `hasattr` is True there, so
# the branch taken when it is missing is code for older Keras only.
_KERAS3_HAS = frozenset({("keras.optimizers", "legacy")})
# Context managers that expect the code inside them to raise.
_EXPECT_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})
_EXPECT_FUNCTIONS = frozenset({"pytest.raises"})
# What a removed API raises: a handler of one of these is a deliberate fallback.
_FALLBACK_ERRORS = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError", "TypeError", "ValueError"})


def raw_flavour(raw: Optional[str], legacy_env: bool = False) -> Optional[str]:
    """The Keras a raw (not normalized) qualified name belongs to; None when
    it names no Keras API, or ``tf.keras`` where the file may switch it to
    Keras 2 (``legacy_env``)."""
    if raw is None:
        return None
    if raw in _KERAS2_EXACT or raw.startswith(_KERAS2_PREFIXES):
        return TF_KERAS
    qualname = normalize(raw)
    if qualname != "keras" and not qualname.startswith("keras."):
        return None
    if legacy_env and raw.startswith(_TF_KERAS_PREFIXES):
        return None
    return KERAS3


class Migration:
    def __init__(self, model, resolver, graphs) -> None:
        self.model = model
        self.resolver = resolver
        self.graphs = graphs
        self._legacy_env: Optional[bool] = None
        self._module_flavour: Optional[Set[str]] = None
        self._versions = None

    @property
    def legacy_env(self) -> bool:
        """Is ``tf.keras`` Keras 2 here: the file mentions TF_USE_LEGACY_KERAS, or the project
        targets Keras 2 (``GraphAnalysis.tf_keras_is_keras2``)?"""
        if self._legacy_env is None:
            self._legacy_env = ("TF_USE_LEGACY_KERAS" in self.model.source
                                and getattr(self.graphs, "file_settings", True)) or getattr(
                self.graphs, "tf_keras_is_keras2", False)
        return self._legacy_env

    def api_flavour(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        return raw_flavour(self.resolver.raw_qualname(expr, scope), self.legacy_env)

    def module_flavours(self) -> Set[str]:
        """Every Keras the file uses (imports, calls, class bases)."""
        if self._module_flavour is None:
            found: Set[str] = set()
            for scope in self.model.scopes:
                for target in scope.imports.values():
                    flavour = raw_flavour(target, self.legacy_env)
                    if flavour is not None:
                        found.add(flavour)
                if scope.kind == "class":
                    flavour = self.graphs.keras_flavour(scope)
                    if flavour == KERAS3 and self.legacy_env:
                        flavour = None
                    if flavour is not None:
                        found.add(flavour)
            for call, scope in self.model.index.get("Call", ()):
                flavour = self.api_flavour(call.func, scope)
                if flavour is not None:
                    found.add(flavour)
            self._module_flavour = found
        return self._module_flavour

    def module_flavour(self) -> Optional[str]:
        flavours = self.module_flavours()
        return next(iter(flavours)) if len(flavours) == 1 else None

    # -- objects ------------------------------------------------------------
    def object_origin(self, expr: cst.BaseExpression, scope: ScopeInfo):
        """(node, scope) where the object ``expr`` names comes from, as ``_origin`` follows it: the
        call that made it, or the parameter it was handed in as (``def compile(self, optimizer):
        self.d_opt = optimizer; self.g_opt = optimizer``: both attributes come from one
        ``cst.Param``); None when the file does not tell. Two expressions with the same origin
        node name the same object (each time that code runs)."""
        return self._origin(expr, scope, params=True)

    def made_by(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[Tuple[cst.Call, ScopeInfo]]:
        """(call, scope) of the call that made the object ``expr`` names, through names, ``self.x``
        attributes and the module's defs (``semantic.flow``), or None when the file does not tell."""
        found = self._origin(expr, scope)
        return found if found is not None and isinstance(found[0], cst.Call) else None

    def is_functional_model(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Was ``expr`` made by ``keras.Model(inputs, outputs)`` (a functional model, also as
        ``inputs=``/``outputs=``)?"""
        made = self.made_by(expr, scope)
        if made is None:
            return False
        call, where = made
        if self._call_class(call, where) != "keras.Model" or self.resolver.qualname(call.func, where) \
                not in ("keras.Model", "keras.models.Model"):
            return False
        positional = [a for a in call.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        return len(positional) >= 2 or (len(positional) == 1 and "outputs" in keywords) \
            or {"inputs", "outputs"} <= keywords

    def _origin(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int = 0, params: bool = False):
        """(call, scope) that made the object ``expr`` names, following names bound
        once and ``self.x`` attributes bound once in the class's family (a
        ``None`` binding aside, nothing appended or augmented); with ``params``, a
        parameter it was bound from stops the walk too (``(cst.Param, scope)``)."""
        found = self._single_origin(expr, scope, depth, params)
        if depth == 0 and not params:
            if found is None:
                found = self._flow_origin(expr, scope)
            elif isinstance(found[0], cst.Call) and self.graphs.flow.functions(*found):
                # made by a def of the module (`self.build_model()`): what its returns make
                found = self._flow_origin(*found) or found
        return found

    def _flow_origin(self, expr: cst.BaseExpression, scope: ScopeInfo):
        """The first call of the sources ``semantic.flow`` gives ``expr`` when every one is a call of the
        same class or function (``self.model = self.build_model()`` where each override returns
        ``tf.keras.Model(...)``), and nothing else may reach it (``None`` aside)."""
        if not isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
            return None
        found = self.graphs.flow.sources(expr, scope)
        values = found.values()
        if found.unknown or not values or not all(isinstance(v, cst.Call) for v, _ in values):
            return None
        makers = set()
        for call, where in values:
            qualname = self.resolver.qualname(call.func, where)
            if qualname is None and isinstance(call.func, cst.Name):
                cls = where.lookup_class(call.func.value)
                qualname = ("class", id(cls)) if cls is not None else None
            if qualname is None:
                return None
            makers.add((qualname, self._call_flavour(call, where)))
        return values[0] if len(makers) == 1 else None

    def _single_origin(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int, params: bool):
        if depth > _DEPTH:
            return None
        if isinstance(expr, cst.Call):
            return expr, scope
        if isinstance(expr, cst.Attribute):
            objects = self.graphs.objects
            cls = objects.self_class(expr.value, scope)
            if cls is None or any(expr.attr.value in c.defs for c in objects.mro(cls)):
                return None
            found = [b for b in objects.attribute_bindings(cls, expr.attr.value, family=True)
                     if not (isinstance(b.value, cst.Name) and b.value.value == "None")]
            if len(found) != 1 or found[0].how != "bind" or not isinstance(found[0].value, cst.BaseExpression):
                return None
            return self._origin(found[0].value, found[0].method, depth + 1, params)
        if isinstance(expr, cst.Name):
            found = lookup(expr.value, scope, None)
            if found is None or found.kind != ASSIGNED or found.rebound or expr.value in found.scope.globals:
                return None
            value = found.single_value
            if isinstance(value, cst.BaseExpression):
                return self._origin(value, found.scope, depth + 1, params)
            if params and isinstance(value, tuple) and value[0] == PARAM and isinstance(value[1], cst.Param):
                return value[1], found.scope
        return None

    def keras_attribute(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int = 0
                        ) -> Optional[Tuple[str, Optional[str]]]:
        """(class, flavour) of an object Keras itself hands out through an attribute: a model's
        ``optimizer`` (``keras.optimizers.Optimizer``), and ``self.model`` in a callback subclass
        that does not bind ``model`` itself (``keras.Model``: Keras sets it before training); a layer
        of a Keras model (``keras.layers.Layer``): ``model.get_layer(...)``, ``model.layers[i]``, ``l``
        of ``for l in model.layers`` (or of ``model.layers[1:]``). None for any other expression."""
        if depth > 3:
            return None
        if isinstance(expr, (cst.Call, cst.Subscript, cst.Name)):
            return self._model_layer(expr, scope, depth)
        if not isinstance(expr, cst.Attribute):
            return None
        name = expr.attr.value
        objects = self.graphs.objects
        if name == "model":
            cls = objects.self_class(expr.value, scope)
            if cls is None or objects.attribute_bindings(cls, "model", family=True) or objects.defines(cls, "model"):
                return None
            base = self.class_base(cls)
            if base is None or not base.startswith("keras.callbacks."):
                return None
            flavour = self.graphs.keras_flavour(cls)
            return "keras.Model", (None if flavour == KERAS3 and self.legacy_env else flavour)
        if name == "optimizer":
            inner = self.keras_attribute(expr.value, scope, depth + 1)
            if inner is not None:
                return ("keras.optimizers.Optimizer", inner[1]) if is_model_class(inner[0]) else None
            cls = objects.self_class(expr.value, scope)
            if cls is not None:
                if objects.attribute_bindings(cls, "optimizer", family=True):
                    return None
                base = self.class_base(cls)
                flavour = self.graphs.keras_flavour(cls)
            else:
                base = self.object_class(expr.value, scope)
                flavour = self.object_flavour(expr.value, scope) if base is not None else None
            if base is not None and is_model_class(base):
                return "keras.optimizers.Optimizer", flavour
        return None

    def _model_layer(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int
                     ) -> Optional[Tuple[str, Optional[str]]]:
        """("keras.layers.Layer", the model's flavour) when ``expr`` is a layer a Keras model hands out:
        ``model.get_layer(...)``, ``model.layers[i]``, or a name a ``for`` loop binds from
        ``model.layers`` (or a slice of it)."""
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value == "get_layer":
                return self._model_of(func.value, scope, depth)
            return None
        if isinstance(expr, cst.Subscript):
            if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
                return None  # model.layers[1:] is a list
            return self._layers_of(expr.value, scope, depth)
        if isinstance(expr, cst.Name):
            found = lookup(expr.value, scope, None)
            if found is None or found.kind != ASSIGNED or found.rebound or expr.value in found.scope.globals:
                return None
            value = found.single_value
            if isinstance(value, (cst.Call, cst.Subscript)):  # layer = model.get_layer("conv")
                return self._model_layer(value, found.scope, depth + 1)
            if not (isinstance(value, tuple) and value[0] == ITERATED and isinstance(value[1], cst.BaseExpression)):
                return None
            loop = next((n for n in found.scope.flow_order().ancestors(value[1]) if isinstance(n, cst.For)), None)
            if loop is None or loop.iter is not value[1] or not isinstance(loop.target, cst.Name):
                return None
            container = value[1]
            if isinstance(container, cst.Subscript) and len(container.slice) == 1 \
                    and isinstance(container.slice[0].slice, cst.Slice):
                container = container.value  # model.layers[1:]
            return self._layers_of(container, found.scope, depth)
        return None

    def build_input_shape(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is ``expr`` the shape parameter of ``build(self, input_shape)`` in a Keras 3 layer subclass,
        never rebound in the method? Keras 3 passes it a tuple (a list of them for several inputs),
        Keras 2 a ``TensorShape``."""
        if not isinstance(expr, cst.Name) or self.legacy_env:
            return False
        found = lookup(expr.value, scope, None)
        if found is None or found.kind != ASSIGNED or found.rebound or expr.value in found.scope.globals:
            return False
        value = found.single_value
        if not (isinstance(value, tuple) and value[0] == PARAM and isinstance(value[1], cst.Param)):
            return False
        method = found.scope
        cls = method.enclosing_class
        if cls is None or method.name != "build" or not method.binds_instance \
                or not isinstance(method.node, cst.FunctionDef):
            return False
        params = method.node.params.params
        return len(params) >= 2 and params[1] is value[1] and self.graphs.keras_flavour(cls) == KERAS3

    def _layers_of(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int
                   ) -> Optional[Tuple[str, Optional[str]]]:
        """``_model_layer`` for ``expr`` = ``model.layers``."""
        if not isinstance(expr, cst.Attribute) or expr.attr.value != "layers":
            return None
        return self._model_of(expr.value, scope, depth)

    def _model_of(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int
                  ) -> Optional[Tuple[str, Optional[str]]]:
        known = self.keras_attribute(expr, scope, depth + 1)
        if known is not None:
            cls, flavour = known
        else:  # object_class/object_flavour, without asking keras_attribute again (a loop over itself)
            origin = self._origin(expr, scope)
            if origin is None:
                return None
            cls = self._call_class(*origin)
            flavour = self._call_flavour(*origin)
            if flavour is _NOT_KERAS_API:
                flavour = self._annotated_flavour(*origin)
            if flavour is _NOT_KERAS_API:
                flavour = self.module_flavour()
        return ("keras.layers.Layer", flavour) if is_model_class(cls) else None

    def object_flavour(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        """The Keras of the object ``expr``: of the call that made it (for an
        element of a container, ``for m in ms`` or ``ms[k]``: the one Keras of
        the calls that made every element), else the file's."""
        known = self.keras_attribute(expr, scope)
        if known is not None:
            return known[1]
        origin = self._origin(expr, scope)
        if origin is not None:
            found = self._call_flavour(*origin)
            if found is _NOT_KERAS_API:
                found = self._annotated_flavour(*origin)
            if found is not _NOT_KERAS_API:
                return found
        else:
            made = self._element_origins(expr, scope)
            if made:
                flavours = {self._call_flavour(call, where) for call, where in made}
                if len(flavours) == 1 and None not in flavours and _NOT_KERAS_API not in flavours:
                    return flavours.pop()
        return self.module_flavour()

    def _annotated_flavour(self, value: cst.BaseExpression, where: ScopeInfo):
        """The Keras of the annotation of the assignment binding ``value`` (``model: tf.keras.Model =
        REGISTRY.build_model(...)``), when it names a Keras class; else ``_NOT_KERAS_API``."""
        annotation = annotation_of(value, where)
        flavour = self.api_flavour(annotation, where) if annotation is not None else None
        return flavour if flavour is not None else _NOT_KERAS_API

    def _call_flavour(self, call: cst.Call, where: ScopeInfo):
        flavour = self.api_flavour(call.func, where)
        if flavour is not None:
            return flavour
        if isinstance(call.func, cst.Name):
            cls = where.lookup_class(call.func.value)
            if cls is not None:
                flavour = self.graphs.keras_flavour(cls)
                return None if flavour == KERAS3 and self.legacy_env else flavour  # None: not Keras
        return _NOT_KERAS_API

    def element_calls(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[List[Tuple[cst.Call, ScopeInfo]]]:
        """The calls that made every element of the container ``expr`` is taken from (``layer`` of
        ``for layer in self.blocks`` where ``self.blocks = [Block() for _ in range(n)]``), or None."""
        return self._element_origins(expr, scope)

    def element_class(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        """The one Keras class (as ``object_class`` names it) that made every element of the container
        ``expr`` is taken from (``fl`` of ``for fl, bl in zip(self.fs, self.bs)`` where ``self.fs =
        [LSTM(n) for _ in range(k)]``), or None."""
        made = self._element_origins(expr, scope)
        classes = {self._call_class(call, where) for call, where in made} if made else set()
        return classes.pop() if len(classes) == 1 and None not in classes else None

    # -- containers -----------------------------------------------------------
    def _element_origins(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[List[Tuple[cst.Call, ScopeInfo]]]:
        """The calls that made every element of the container ``expr`` is taken
        from (``m`` of ``for m in ms``, ``ms[k]``), or None when one cannot be told."""
        if isinstance(expr, cst.Subscript):
            return self._container_origins(expr.value, scope, 0)
        if isinstance(expr, cst.Name):
            found = lookup(expr.value, scope, None)
            if found is None or found.kind != ASSIGNED or found.rebound or expr.value in found.scope.globals:
                return None
            value = found.single_value
            if isinstance(value, tuple) and value[0] == ITERATED and isinstance(value[1], cst.BaseExpression):
                loop = next((n for n in found.scope.flow_order().ancestors(value[1]) if isinstance(n, cst.For)), None)
                if loop is None:
                    return None
                if isinstance(loop.target, cst.Name):
                    return self._container_origins(value[1], found.scope, 0)
                container = self._unpacked_container(loop, expr.value, found.scope)
                return None if container is None else self._container_origins(container, found.scope, 0)
        return None

    @staticmethod
    def _unpacked_container(loop: cst.For, name: str, scope: ScopeInfo) -> Optional[cst.BaseExpression]:
        """The container whose elements ``name`` takes in ``for a, b in zip(xs, ys)`` (``ys`` for ``b``)
        or ``for i, x in enumerate(xs)`` (``xs`` for ``x``): builtins the file does not rebind, plain
        positional arguments; None otherwise."""
        target, iterable = loop.target, loop.iter
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(iterable, cst.Call) \
                or not isinstance(iterable.func, cst.Name) or iterable.func.value not in ("zip", "enumerate") \
                or lookup(iterable.func.value, scope, None) is not None \
                or any(a.keyword is not None or a.star for a in iterable.args):
            return None
        names = [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements]
        if names.count(name) != 1 or any(isinstance(e, cst.StarredElement) for e in target.elements):
            return None
        position = names.index(name)
        if iterable.func.value == "enumerate":
            return iterable.args[0].value if position == 1 and len(names) == 2 and iterable.args else None
        return iterable.args[position].value if len(names) == len(iterable.args) else None

    def _container_origins(self, expr: Any, scope: ScopeInfo, depth: int) -> Optional[List[Tuple[cst.Call, ScopeInfo]]]:
        if depth > _DEPTH or not isinstance(expr, cst.BaseExpression):
            return None
        found: List[Tuple[cst.Call, ScopeInfo]] = []

        def element(value: Any, where: ScopeInfo) -> bool:
            origin = self._origin(value, where) if isinstance(value, cst.BaseExpression) else None
            if origin is None:
                return False
            found.append(origin)
            return True

        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            if not all(not isinstance(e, cst.StarredElement) and element(e.value, scope) for e in expr.elements):
                return None
            return found
        if isinstance(expr, cst.Dict):
            if not all(isinstance(e, cst.DictElement) and element(e.value, scope) for e in expr.elements):
                return None
            return found
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):  # [Block(d) for _ in range(n)]
            return found if element(expr.elt, scope) else None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "values" \
                and not expr.args:
            return self._container_origins(expr.func.value, scope, depth + 1)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            left = self._container_origins(expr.left, scope, depth + 1)
            right = self._container_origins(expr.right, scope, depth + 1)
            return None if left is None or right is None else left + right
        if isinstance(expr, cst.Name):
            binding = lookup(expr.value, scope, None)
            if binding is None or binding.kind != ASSIGNED or binding.rebound or expr.value in binding.scope.globals:
                return None
            inner = self._container_origins(binding.single_value, binding.scope, depth + 1)
            if inner is None:
                return None
            for how, value, _node in self.graphs.objects.container_additions(binding.scope, expr.value):
                more = [value] if how == "add" else None
                if more is None:
                    extended = self._container_origins(value, binding.scope, depth + 1)
                    if extended is None:
                        return None
                    inner = inner + extended
                elif not element(value, binding.scope):
                    return None
            return inner + found
        if isinstance(expr, cst.Attribute):
            objects = self.graphs.objects
            cls = objects.self_class(expr.value, scope)
            if cls is None or any(expr.attr.value in c.defs for c in objects.mro(cls)):
                return None
            bindings = objects.attribute_bindings(cls, expr.attr.value, family=True)
            if not bindings:
                return None
            for binding in bindings:
                if binding.how == "bind":
                    if isinstance(binding.value, cst.Name) and binding.value.value == "None":
                        continue
                    inner = self._container_origins(binding.value, binding.method, depth + 1)
                elif binding.how == "add":
                    inner = [] if element(binding.value, binding.method) else None
                elif binding.how == "extend":
                    inner = self._container_origins(binding.value, binding.method, depth + 1)
                else:
                    inner = None
                if inner is None:
                    return None
                found.extend(inner)
            return found
        return None

    def member_class(self, expr: cst.BaseExpression, scope: ScopeInfo, member: str) -> Optional[str]:
        """The Keras class an object of unknown origin (a parameter, ``for l in model.layers``) is, told
        by a member only that Keras class has: Keras 2's layer-node API (``get_input_shape_at(node_index)``
        and the like, from the migration table). None where the object's origin is known
        (``object_class`` answers) or the member says nothing."""
        if self.legacy_env or TF_KERAS in self.module_flavours() or self.keras_attribute(expr, scope) is not None \
                or self._origin(expr, scope) is not None or self._element_origins(expr, scope):
            return None  # Keras 2 here, or an object the file made: its maker says what it is
        from tflint_gpu.semantic.migration_table import table

        return table().node_api_class(member)

    def object_class(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        """The normalized Keras class the object ``expr`` was made from
        (``keras.metrics.Mean``; for a same-module subclass, its nearest Keras
        base; ``keras.Model`` for ``load_model`` and the like; what ``keras_attribute``
        tells), or None."""
        known = self.keras_attribute(expr, scope)
        if known is not None:
            return known[0]
        origin = self._origin(expr, scope)
        if origin is None:
            return None
        return self._call_class(*origin)

    def _call_class(self, call: cst.Call, where: ScopeInfo) -> Optional[str]:
        qualname = self.resolver.qualname(call.func, where)
        if qualname is not None:
            if qualname in _MODEL_FACTORIES:
                return "keras.Model"
            return qualname if qualname.startswith("keras.") else None
        if isinstance(call.func, cst.Name):
            cls = where.lookup_class(call.func.value)
            if cls is not None:
                return self.class_base(cls)
        return None

    def possible_classes(self, expr: cst.BaseExpression, scope: ScopeInfo) -> List[str]:
        """The Keras 3 classes of the calls that may have made ``expr`` (``semantic.flow``: every
        binding of ``self.opt``, one of them ``LossScaleOptimizer(self.opt)`` and another a parameter),
        when others may have made it too: what ``object_class`` cannot tell, as possibilities."""
        if self.legacy_env:
            return []
        found = []
        for value, where in self.graphs.flow.sources(expr, scope).values():
            if isinstance(value, cst.Call) and self._call_flavour(value, where) == KERAS3:
                made = self._call_class(value, where)
                if made is not None and made not in found:
                    found.append(made)
        return found

    def class_base(self, cls: ScopeInfo) -> Optional[str]:
        """The nearest Keras base class (normalized) of a same-module class."""
        for raw in self.graphs.class_bases(cls):
            qualname = normalize(raw)
            if qualname.startswith("keras."):
                return qualname
        return None

    # -- guards ---------------------------------------------------------------
    def hasattr_guards(self, node: cst.CSTNode, scope: ScopeInfo) -> List[Tuple[cst.BaseExpression, str, bool]]:
        """``(obj, name, has)`` for each ``if``/conditional expression around
        ``node`` (innermost first, in its scope's own code) whose test is
        ``hasattr(obj, "name")`` or ``not hasattr(...)``: ``has`` tells whether
        the branch holding ``node`` runs when ``obj`` has ``name``."""
        guards: List[Tuple[cst.BaseExpression, str, bool]] = []
        child: cst.CSTNode = node
        for parent in scope.ancestors(node):
            if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
                test = self._hasattr_test(parent.test, scope)
                if test is not None:
                    obj, name, positive = test
                    guards.append((obj, name, positive == (child is parent.body)))
            child = parent
        return guards

    def _hasattr_test(self, test: cst.BaseExpression, scope: ScopeInfo):
        positive = True
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            positive = not positive
            test = test.expression
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr"
                and lookup("hasattr", scope) is None and len(test.args) == 2
                and all(a.keyword is None and not a.star for a in test.args)):
            return None
        name = test.args[1].value
        if not isinstance(name, cst.SimpleString) or not isinstance(name.evaluated_value, str):
            return None
        return test.args[0].value, name.evaluated_value, positive

    def unreached_under_keras3(self, node: cst.CSTNode, scope: ScopeInfo) -> bool:
        """Is ``node`` in a branch that runs only when Keras lacks an attribute
        Keras 3 has (``else:`` of ``if hasattr(tf.keras.optimizers, "legacy")``)?"""
        for obj, name, has in self.hasattr_guards(node, scope):
            if not has and (self.resolver.qualname(obj, scope), name) in _KERAS3_HAS:
                return True
        return False

    def branches(self, node: cst.CSTNode, scope: ScopeInfo) -> Iterator[Tuple[cst.BaseExpression, bool, ScopeInfo]]:
        """``(test, body, where)`` for each ``if``/conditional expression whose
        branch holds ``node``, innermost first: in its scope's own code, then
        around the ``def``, lambda or class holding that scope, and so on out
        to the module. ``body``: the branch is the body (not the ``else``);
        ``where``: the scope the test is read in."""
        current, where = node, scope
        while True:
            child = current
            for parent in where.ancestors(current):
                if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
                    yield parent.test, child is parent.body, where
                child = parent
            if where.parent is None:
                return
            current, where = where.node, where.parent

    def version_guarded(self, node: cst.CSTNode, scope: ScopeInfo) -> bool:
        """Is ``node`` in a branch of a TensorFlow/Keras version comparison that
        does not run under TF 2.16+ / Keras 3 (``else`` of ``if tf_version >=
        (2, 4)``), or that may not (the version is compared with something the
        linter cannot read): code for other releases, on purpose."""
        if self._versions is None:
            from tflint_gpu.semantic.versions import VersionTests

            self._versions = VersionTests(self.resolver, self.legacy_env)
        tests = self._versions
        return any(tests.is_version_test(test, where) and tests.runs(test, where, body) is not True
                   for test, body, where in self.branches(node, scope))

    def except_fallback(self, node: cst.CSTNode, scope: ScopeInfo) -> bool:
        """Is ``node`` in the body of an ``except`` handler that names an error a
        removed API raises (``except AttributeError:``, ``except (ImportError,
        TypeError):``; not a bare ``except`` or ``except Exception``), in its
        function or around the ``def`` holding it? That handler runs when the
        ``try`` body failed: code for releases where it fails, on purpose."""
        current, where = node, scope
        while True:
            child = current
            for parent in where.ancestors(current):
                if isinstance(parent, cst.ExceptHandler) and child is parent.body \
                        and self._fallback_errors(parent.type, where):
                    return True
                child = parent
            if where.parent is None:
                return False
            current, where = where.node, where.parent

    @staticmethod
    def _fallback_errors(caught: Optional[cst.BaseExpression], scope: ScopeInfo) -> bool:
        if caught is None:
            return False
        items = [e.value for e in caught.elements] if isinstance(caught, cst.Tuple) else [caught]
        return any(isinstance(item, cst.Name) and item.value in _FALLBACK_ERRORS and lookup(item.value, scope) is None
                   for item in items)

    def expects_error(self, node: cst.CSTNode, scope: ScopeInfo) -> bool:
        """Is ``node`` in the body of ``with self.assertRaises*(...)`` or
        ``with pytest.raises(...)`` (the test expects the error)?"""
        child: cst.CSTNode = node
        for parent in scope.ancestors(node):
            if isinstance(parent, cst.With) and child is parent.body:
                for item in parent.items:
                    call = item.item
                    if not isinstance(call, cst.Call):
                        continue
                    if isinstance(call.func, cst.Attribute) and call.func.attr.value in _EXPECT_METHODS:
                        return True
                    if self.resolver.qualname(call.func, scope) in _EXPECT_FUNCTIONS:
                        return True
            child = parent
        return False

    def guarded(self, node: cst.CSTNode, scope: ScopeInfo) -> bool:
        """Should a removed-API finding at ``node`` stay silent: the code there
        never runs under Keras 3 (a ``hasattr`` or version guard, an ``except
        AttributeError:`` fallback), or a test expects it to raise?"""
        return self.unreached_under_keras3(node, scope) or self.expects_error(node, scope) \
            or self.version_guarded(node, scope) or self.except_fallback(node, scope)


def is_model_class(qualname: Optional[str]) -> bool:
    """Is this normalized Keras class a model (``keras.Model``, ``keras.Sequential``...)?"""
    return qualname in ("keras.Model", "keras.Sequential", "keras.models.Model", "keras.models.Sequential",
                        "keras.engine.training.Model", "keras.engine.sequential.Sequential",
                        "keras.engine.functional.Functional")


def is_metric_class(qualname: Optional[str]) -> bool:
    """Is this normalized Keras class a metric (``keras.metrics.Mean``, ``keras.metrics.Metric``)?"""
    if qualname is None:
        return False
    parts = qualname.split(".")
    return (len(parts) == 3 and parts[:2] == ["keras", "metrics"] and parts[2][:1].isupper()
            and parts[2] not in ("MSE", "MAE", "MAPE", "MSLE", "KLD")) or qualname == "keras.Metric"


_PATH_JOINS = frozenset({"os.path.join", "posixpath.join", "ntpath.join", "pathlib.Path", "pathlib.PurePath"})


class PathWorld:
    """What ``path_ending`` may ask beyond the expression, for one file: ``flag(key, own_only)``, what
    the default of a command-line flag ends with (``ProjectFile.flag_default``; ``own_only``: as this
    module defines it, if it does); ``calls(function)``, the
    calls of a function in the module (``context.GraphAnalysis.call_sites``); and the endings of
    parameters found so far (each asked once a file)."""

    __slots__ = ("flag", "calls", "memo")

    def __init__(self, flag: Callable[[str, bool], Optional[str]],
                 calls: Callable[[ScopeInfo], List[Tuple[cst.Call, ScopeInfo]]]) -> None:
        self.flag = flag
        self.calls = calls
        self.memo: dict = {}


# How ``path_tail``'s part holds the path's end: it ends the same way, or it is the template of ``%`` or
# ``.format()`` (the text after its last conversion or replacement field).
SAME_END, PERCENT_END, FORMAT_END = "same", "percent", "format"


def path_tail(expr: cst.BaseExpression, scope: ScopeInfo, resolver) -> Optional[Tuple[str, cst.BaseExpression]]:
    """The part of the path expression ``expr`` its end is written in, and how (``SAME_END``,
    ``PERCENT_END``, ``FORMAT_END``): the right string of ``"a" "b"``, the last field of an f-string
    (no format spec or conversion), the right of ``+``/``/``, the template of ``"...%d.h5" % x`` and of
    ``"...{}.h5".format(x)``, the last part of ``os.path.join(...)``/``pathlib.Path(...)``, the argument of
    ``str(...)``/``os.fspath(...)``. None for anything else (a literal, a name: each reader's own).
    ``path_ending`` and ``file_renames.path_literal`` both follow it."""
    if isinstance(expr, cst.ConcatenatedString):
        return SAME_END, expr.right
    if isinstance(expr, cst.FormattedString):
        last = expr.parts[-1] if expr.parts else None
        if isinstance(last, cst.FormattedStringExpression) and last.format_spec is None and last.conversion is None:
            return SAME_END, last.expression  # f"{d}/{name}": name's
        return None
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.Add, cst.Divide)):
            return SAME_END, expr.right
        if isinstance(expr.operator, cst.Modulo) and isinstance(expr.left, cst.SimpleString):
            return PERCENT_END, expr.left
        return None
    if isinstance(expr, cst.Call) and expr.args:
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value == "format" \
                and isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString)):
            return FORMAT_END, func.value
        qualname = resolver.qualname(func, scope)
        if qualname in _PATH_JOINS:
            last = expr.args[-1]
            return None if last.star else (SAME_END, last.value)
        only = expr.args[0] if len(expr.args) == 1 and not expr.args[0].star and expr.args[0].keyword is None \
            else None
        if only is not None and (qualname == "os.fspath" or (
                isinstance(func, cst.Name) and func.value == "str" and lookup("str", scope) is None)):
            return SAME_END, only.value
    return None


def path_ending(expr: Optional[cst.BaseExpression], scope: ScopeInfo, resolver, depth: int = 0,
                world: Optional["PathWorld"] = None) -> Optional[str]:
    """Text a path expression is known to end with: a string literal; the last
    part of ``os.path.join(...)``, ``pathlib.Path(...)``, of ``a + "x"``,
    ``a / "x"`` (pathlib), of an f-string ending in text, of ``"...%d.h5" % x`` or of
    ``"...{}.h5".format(x)``; the argument of ``str(...)``/``os.fspath(...)``; through a
    name (the one binding that reaches the read, where the name is local; else a name
    bound once); a constant of another project module (``from settings import EXPORT_DIR``,
    ``cfg.PB_MODEL``: ``semantic.project.ProjectIndex.constant``); a name read in the body of
    ``if name.endswith(".ckpt"):`` (that text); with ``world`` (``PathWorld``), the default of a
    command-line flag read
    as ``FLAGS.name`` (absl) or ``args.name`` (``args`` a parameter or bound from
    ``parser.parse_args()``), and a parameter's, when every call of its function gives it
    (the argument in its place or of its name, else its default) endings of one suffix (the
    text they all end with: ``_common_ending``); a dict written out's value read by its key; a
    loop variable over a dict written out (keys, values, items) or a list of strings, the text
    all of them end with; an f-string's last field. None when it cannot be told."""
    if expr is None or depth > _DEPTH:
        return None
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    step = path_tail(expr, scope, resolver)
    if step is not None:
        how, part = step
        if how == SAME_END:
            return path_ending(part, scope, resolver, depth + 1, world)
        value = part.evaluated_value  # the template of ``%`` or ``.format()``
        if not isinstance(value, str):
            return None
        return percent_tail(value) if how == PERCENT_END else format_tail(value)
    if isinstance(expr, cst.FormattedString):
        last = expr.parts[-1] if expr.parts else None
        return last.value if isinstance(last, cst.FormattedStringText) and last.value else None
    if isinstance(expr, cst.Name):
        found = lookup(expr.value, scope, expr)
        if found is not None and found.kind == IMPORT:
            return _project_constant(expr, scope, resolver)
        if found is not None and found.kind == ASSIGNED and expr.value not in found.scope.globals:
            value = found.single_value
            if isinstance(value, cst.BaseExpression):
                return path_ending(value, found.scope, resolver, depth + 1, world)
        if found is None:
            return None
        tested = _tested_ending(expr, found, scope)
        value = found.single_value if found.kind == ASSIGNED else None
        if tested is None and isinstance(value, tuple) and value:
            if value[0] == PARAM and world is not None:
                return _passed_ending(value[1], value[2], found.scope, resolver, depth, world)
            if value[0] == ITERATED and isinstance(value[1], cst.BaseExpression) and found.scope is scope:
                return _iterated_ending(expr, value[1], scope, resolver, depth, world)
        return tested
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        # paths["model"] of a dict written out: the value of that key
        key = expr.slice[0].slice.value
        found = _literal_items(expr.value, scope, depth)
        if found is not None and found[0] and isinstance(key, cst.SimpleString) \
                and isinstance(key.evaluated_value, str) and all(k is not None for k, _, _ in found[1]):
            values = [(v, where) for k, v, where in found[1] if k == key.evaluated_value]
            if len(values) == 1:
                return path_ending(values[0][0], values[0][1], resolver, depth + 1, world)
    if isinstance(expr, cst.Attribute):
        found = _project_constant(expr, scope, resolver)
        if found is None and world is not None and isinstance(expr.value, cst.Name):
            reader = _flag_reader(expr.value, scope, resolver)
            if reader is not None:
                return world.flag(reader[0] + expr.attr.value, reader[1])
        return found
    return None


def _passed_ending(param: cst.Param, position: int, function: ScopeInfo, resolver, depth: int,
                   world: "PathWorld") -> Optional[str]:
    """The ending every call of ``function`` in this module gives its parameter ``param`` (see
    ``path_ending``); None when none is seen, one unpacks ``*args``/``**kwargs`` or passes more than
    it takes, or their suffixes differ (``_common_ending``)."""
    node = function.node
    if param.star or not isinstance(node, cst.FunctionDef):
        return None
    decorators = {d.decorator.value for d in node.decorators if isinstance(d.decorator, cst.Name)}
    shift = 1 if function.enclosing_class is not None and "staticmethod" not in decorators else 0
    if position < shift:
        return None  # self, cls
    key = (id(function), param.name.value)
    if key in world.memo:
        return world.memo[key]
    world.memo[key] = None  # a cycle of calls tells nothing
    sites = world.calls(function)
    if not sites:
        return None
    positional = [p.name.value for p in list(node.params.posonly_params) + list(node.params.params)]
    endings = set()
    for call, where in sites:
        passed = arguments_by_name(call, positional[shift:])
        if passed is None:
            return None
        given = passed.get(param.name.value)
        if given is None:
            given, where = param.default, function.parent or function
            if given is None:
                continue  # a call that fills it otherwise (a TypeError)
        ending = path_ending(given, where, resolver, depth + 1, world)
        if ending is None:
            return None
        endings.add(ending)
    found = world.memo[key] = _common_ending(endings)
    return found


def _common_ending(endings: Set[str]) -> Optional[str]:
    """The text all of ``endings`` end with, when their last parts have the same suffixes (from the
    first dot on, or none): ``w.ckpt`` of ``w.ckpt`` and ``dir/w.ckpt``, ``.h5`` of ``a.h5`` and
    ``b.h5``, ``ator`` of ``generator`` and ``discriminator`` (no suffix either); None when they
    differ there (``a.h5`` and ``b.weights.h5``, ``a.keras`` and ``b``) or share no text."""
    if not endings or len({e.rsplit("/", 1)[-1].partition(".")[1:] for e in endings}) != 1:
        return None
    first = min(endings, key=len)
    size = len(first)
    while size and not all(e.endswith(first[len(first) - size:]) for e in endings):
        size -= 1
    return first[len(first) - size:] or None


# Parameter names that stand for parsed command-line arguments in other modules too.
_ARGUMENT_NAMES = frozenset({"args", "opt", "opts", "options", "arguments", "parsed_args", "cli_args", "cmd_args"})


def _flag_reader(base: cst.Name, scope: ScopeInfo, resolver) -> Optional[Tuple[str, bool]]:
    """The flags ``base.x`` reads, and whether only this module's own definitions count: absl's
    ``FLAGS`` (TensorFlow's too; ``ABSL``), a name bound once from ``parser.parse_args()`` or
    ``parse_known_args()[0]`` (``ARGPARSE``), a parameter (``ARGPARSE``: one named as parsed arguments
    are, ``args``, ``opt``..., may read another module's, any other this module's only); else None."""
    from tflint_gpu.semantic.project import ABSL, ARGPARSE

    qualname = resolver.raw_qualname(base, scope)
    if qualname is not None:
        return (ABSL, False) if qualname.endswith("flags.FLAGS") else None
    found = lookup(base.value, scope, base)
    value = found.single_value if found is not None else None
    if isinstance(value, tuple) and value and value[0] == PARAM:
        return ARGPARSE, base.value not in _ARGUMENT_NAMES
    if isinstance(value, cst.Subscript):
        value = value.value
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in ("parse_args", "parse_known_args"):
        return ARGPARSE, False
    return None


def _literal_items(expr: cst.BaseExpression, scope: ScopeInfo, depth: int):
    """(is a dict, entries): (key text or None, value, scope) of each entry of a dict written out
    (``{"model": "out/m"}``, or a name bound once to one, not ``global``), or (its text, it, scope) of
    each string of a list, tuple or set of strings; None for anything else (``**other`` in the dict,
    another element)."""
    for _ in range(_DEPTH - depth):
        if not isinstance(expr, cst.Name):
            break
        found = lookup(expr.value, scope, expr)
        if found is None or found.kind != ASSIGNED or expr.value in found.scope.globals \
                or not isinstance(found.single_value, cst.BaseExpression):
            return None
        expr, scope = found.single_value, found.scope
    if isinstance(expr, cst.Dict):
        items = []
        for element in expr.elements:
            if not isinstance(element, cst.DictElement):
                return None
            key = element.key.evaluated_value if isinstance(element.key, cst.SimpleString) else None
            items.append((key if isinstance(key, str) else None, element.value, scope))
        return True, items
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        items = []
        for element in expr.elements:
            text = element.value.evaluated_value if isinstance(element, cst.Element) \
                and isinstance(element.value, cst.SimpleString) else None
            if not isinstance(text, str):
                return None
            items.append((text, element.value, scope))
        return False, items
    return None


def _iterated_ending(name: cst.Name, iterable: cst.BaseExpression, scope: ScopeInfo, resolver, depth: int,
                     world: Optional["PathWorld"]) -> Optional[str]:
    """The ending a loop variable has at every turn: ``for name in ("generator", "discriminator")``,
    ``for key in paths`` / ``paths.keys()``, ``for key, path in paths.items()`` / ``paths.values()``
    over a dict written out (``_literal_items``): the text its values all end with (``_common_ending``)."""
    loop = next((node for node in scope.ancestors(name) if isinstance(node, cst.For) and node.iter is iterable), None)
    if loop is None:
        return None
    part = None  # which element of an .items() pair the name is
    if isinstance(loop.target, cst.Tuple):
        names = [e.value for e in loop.target.elements]
        if len(names) != 2 or not all(isinstance(n, cst.Name) for n in names) or names[0].value == names[1].value:
            return None
        part = 0 if names[0].value == name.value else 1
    elif not (isinstance(loop.target, cst.Name) and loop.target.value == name.value):
        return None
    method = None
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args:
        method, iterable = iterable.func.attr.value, iterable.func.value
    found = _literal_items(iterable, scope, depth)
    if found is None or not found[1] or (part is not None and method != "items") \
            or (method is not None and (not found[0] or method not in ("items", "keys", "values"))):
        return None
    if method == "values" or part == 1:
        endings = {path_ending(v, where, resolver, depth + 1, world) for _, v, where in found[1]}
    else:
        endings = {k for k, _, _ in found[1]}
    return None if None in endings else _common_ending(endings)


def _project_constant(expr: cst.BaseExpression, scope: ScopeInfo, resolver) -> Optional[str]:
    """``ProjectFile.constant`` of the name ``expr`` reads (``settings.EXPORT_DIR``), when the file has a project."""
    project = resolver.project
    if project is None:
        return None
    qualname = resolver.raw_qualname(expr, scope)
    return project.constant(qualname) if qualname is not None and "." in qualname else None


def _tested_ending(name: cst.Name, found, scope: ScopeInfo) -> Optional[str]:
    """The text of ``if name.endswith("text"):`` (alone, or one operand of an ``and``) around the
    read ``name`` (in its body, in the same scope), the name bound there as it is at the read."""
    child: cst.CSTNode = name
    for parent in scope.ancestors(name):
        if isinstance(parent, cst.If) and child is parent.body:
            tests = [parent.test]
            while tests:
                test = tests.pop()
                if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
                    tests.extend((test.left, test.right))
                    continue
                if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute)
                        and test.func.attr.value == "endswith" and isinstance(test.func.value, cst.Name)
                        and test.func.value.value == name.value and len(test.args) == 1
                        and test.args[0].keyword is None and not test.args[0].star
                        and isinstance(test.args[0].value, cst.SimpleString)):
                    continue
                there = lookup(name.value, scope, test.func.value)
                if there is None or there.kind != found.kind or there.scope is not found.scope \
                        or [id(v) for v in there.own_values] != [id(v) for v in found.own_values]:
                    continue
                text = test.args[0].value.evaluated_value
                if isinstance(text, str) and text:
                    return text
        child = parent
    return None
