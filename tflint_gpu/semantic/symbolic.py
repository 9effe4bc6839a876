"""Keras 3 symbolic tensors: the ``KerasTensor`` a functional model is built from.

``SymbolicTensors.is_symbolic(expr, scope)`` answers "is this a Keras 3
``KerasTensor``?" (a placeholder for a shape and a dtype, not a tensor):

* a call of ``keras.Input(...)`` / ``keras.layers.Input(...)`` in Keras 3
  spelling (``keras``, ``tf.keras`` under TF 2.16+; not ``tf_keras``, and
  not ``tf.keras`` in a file that mentions ``TF_USE_LEGACY_KERAS``);
* the ``.output``/``.outputs``/``.input``/``.inputs`` of a Keras 3 model or
  layer object (``base = keras.applications.ResNet50(...); base.output``),
  read outside the class's own methods;
* a call of a Keras layer or model (``Dense(4)(x)``, ``encoder(x)``, a
  same-module Layer subclass) or of a Keras functional helper
  (``keras.layers.concatenate``, ``keras.ops.*``) with a symbolic argument
  (in a list too: ``Concatenate()([a, b])``); also a TensorFlow op given
  one (``tf.split(inputs, 2)``: it raises under Keras 3, and what replaces
  it, a ``keras.ops`` call or a layer, gives a KerasTensor, so the code after
  it is read as the model it builds);
* ``+``, ``-``, ``*``... and subscripts of one (``x[:, 0]``, ``outputs[0]``);
* a name whose every binding reaching the read is one of these (flow-aware:
  ``x = Dense(4)(x)`` rebinds it), including an element unpacked from one
  (``h, state = GRU(4, return_state=True)(x)``) or taken by iteration from a
  list display of them; a parameter of a same-module function whose every
  call in the module passes a symbolic tensor there (``def block(x): ...``
  called as ``block(inputs)``);
* a call of a def of another project module that builds a model from the
  argument (``common.conv_block(x, 64)``: ``ProjectFile.builds``) with a
  symbolic argument where its returns come from;
* a parameter of a module-level def that nothing in its module calls (its
  callers are elsewhere) and that the def hands straight to a Keras 3
  layer (``Conv2D(8, 3)(x)``) or to a position of another project
  module's builder (``common.conv_block(x, 64)``), when the def runs in no
  graph and is handed to no call (``ds.map(augment)``): a functional
  building block.

Code inside a ``Lambda`` function or a layer's ``call`` never sees a
KerasTensor by this fact: its parameters are real tensors when it runs.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.semantic import tensors
from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.semantic.project import FRAMEWORKS
from tflint_gpu.semantic.symbolic_ops import RAISES
from tflint_gpu.semantic.model import ASSIGNED, ITERATED, PARAM, UNPACKED, ScopeInfo, lookup, returns

_INPUTS = frozenset({"keras.Input", "keras.layers.Input"})
_SYMBOLIC_ATTRIBUTES = frozenset({"output", "outputs", "input", "inputs"})
# keras.layers functions that build a merge layer and call it.
_FUNCTIONAL_HELPERS = frozenset({
    "add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate", "dot",
})
# `.output`, `.inputs`...: the attributes read as a model's or layer's symbolic tensors, in any
# spelling Python reads as an attribute: whitespace or a line continuation after the dot, or
# (inside brackets) a comment after it and the name at the start of a later line. Each pattern
# reads a run of spaces once from its start (no part can take what another takes), so the search
# is linear in the text; the comment case is over-approximated (a `.` before a `#` anywhere, a line
# starting with the name anywhere), which only lets the reading be made.
_ATTRIBUTE_TEXT = re.compile(r"\.[\s\\]*(?:in|out)puts?\b")
_DOT_COMMENT = re.compile(r"\.[ \t\f\\]*#")
_LINE_ATTRIBUTE = re.compile(r"^[ \t\f\\]*(?:in|out)puts?\b", re.MULTILINE)


def names_symbolic_attribute(source: str) -> bool:
    """Can ``source`` read an ``.input``/``.inputs``/``.output``/``.outputs`` attribute?"""
    return bool(_ATTRIBUTE_TEXT.search(source)) or bool(
        _DOT_COMMENT.search(source) and _LINE_ATTRIBUTE.search(source))
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
               cst.MatrixMultiply)
_DEPTH = 12
# How many reads cut at _DEPTH one question resumes (each reads about four more bindings of a chain
# `x = Dense(8)(x)`, a functional model's usual shape): a 200-layer model is read to its Input.
_RESUMES = 400


class SymbolicTensors:
    def __init__(self, resolver, graphs, tensor_inference, migration) -> None:
        self.resolver = resolver
        self.graphs = graphs
        self.tensors = tensor_inference
        self.migration = migration
        self._cache: Dict[Tuple[int, int], bool] = {}
        self._calls: Optional[Dict[int, List[Tuple[cst.Call, ScopeInfo]]]] = None
        # name -> the plain names given to calls as arguments, with their scopes
        self._handed_names: Optional[Dict[str, List[Tuple[cst.Name, ScopeInfo]]]] = None
        self._blocks: Dict[int, bool] = {}  # id(param) -> the answer of ``_building_block``
        # (id(expr), id(scope)) -> the answer of ``_symbolic`` where no cycle or depth cut decided it
        # (such an answer is the same in every context): a chain `x = f(x)` is read once, not per read.
        self._memo: Dict[Tuple[int, int], bool] = {}
        self._cuts = 0  # how many times a cycle or the depth bound cut the reading short
        self._frontier: List[Tuple[cst.BaseExpression, ScopeInfo]] = []  # reads cut at the depth bound
        self._sources: Optional[bool] = None  # ``may_hold_symbolic``
        self._unresolved: Set[Tuple[int, int]] = set()  # read afresh and still cut by a cycle

    def may_hold_symbolic(self) -> bool:
        """Can any expression of this module be a KerasTensor? Every reading that answers yes ends
        at a source: a call of ``keras.Input``, a ``.output``/``.outputs``/``.input``/``.inputs``
        attribute, or a parameter of a building block, which hands it to a called call
        (``Conv2D(8, 3)(x)``) or to another project module's builder. A module with none of these
        (no such attribute in its text, no call of an ``Input``, no call of a call, no call of a
        builder) holds no KerasTensor: the readings, which can go round the module's defs many
        times before they answer no, are not made."""
        if self._sources is None:
            self._sources = names_symbolic_attribute(self.graphs.model.source) or any(
                call.func.__class__ is cst.Call or self._source_call(call, scope)
                for call, scope in self.graphs.model.index.get("Call", ()))
        return self._sources

    def _source_call(self, call: cst.Call, scope: ScopeInfo) -> bool:
        qualname = self.resolver.qualname(call.func, scope)
        return qualname is not None and (qualname in _INPUTS or self._project_builds(qualname) is not None)

    def is_symbolic(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        if not self.may_hold_symbolic():
            return False
        key = (id(expr), id(scope))
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._resumed(lambda: self._symbolic(expr, scope, set(), 0))
        return found

    def symbolic_argument(self, call: cst.Call, scope: ScopeInfo,
                          direct: bool = False) -> Optional[cst.BaseExpression]:
        """The first argument of ``call`` that is (or is a list/tuple display
        holding) a symbolic tensor, or None. ``direct``: not counting an
        argument that is itself a TensorFlow op call given one
        (``tf.random.uniform(tf.shape(inputs))``: the inner call is the one
        that fails)."""
        if not self.may_hold_symbolic():
            return None
        for arg in call.args:
            if arg.star == "**":
                continue
            if self._resumed(lambda: self._holds(arg.value, scope, set(), 0, direct)):
                return arg.value
        return None

    def _resumed(self, question) -> bool:
        """``question()``, its reads cut at the depth bound resumed from where they were cut: each
        is read afresh (deepest first), its answer kept (``_memo``), then the question asked again.
        The bound keeps the recursion shallow; this keeps a long chain of bindings readable, in
        time linear in its length."""
        budget = _RESUMES
        while True:
            self._frontier = []
            found = question()
            pending = [r for r in self._frontier if (id(r[0]), id(r[1])) not in self._unresolved]
            if not pending or budget <= 0:
                return found
            while pending and budget > 0:
                expr, scope = pending.pop()
                key = (id(expr), id(scope))
                if key in self._memo or key in self._unresolved:
                    continue
                budget -= 1
                self._frontier = []
                self._symbolic(expr, scope, set(), 0)
                deeper = [r for r in self._frontier if (id(r[0]), id(r[1])) not in self._unresolved]
                if deeper:
                    pending.append((expr, scope))  # read again once what it was cut at is known
                    pending.extend(deeper)
                elif key not in self._memo:
                    self._unresolved.add(key)  # a cycle decides it: its answer depends on the reader

    # -- the fact ------------------------------------------------------------
    def _holds(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: Set, depth: int,
               direct: bool = False) -> bool:
        if isinstance(expr, (cst.List, cst.Tuple)):
            return any(self._holds(e.value, scope, seen, depth + 1, direct) for e in expr.elements)
        if direct and isinstance(expr, cst.Call) and self.resolver.qualname(expr.func, scope) in RAISES:
            return False
        if isinstance(expr, cst.Name) and self._filled_with_symbolic(expr, scope, seen, depth):
            return True
        return self._symbolic(expr, scope, seen, depth)

    def _filled_with_symbolic(self, expr: cst.Name, scope: ScopeInfo, seen: Set, depth: int) -> bool:
        """A list bound once to a display and filled by ``append``/``extend`` where one element put in
        is symbolic: ``images = []; images.append(tf.expand_dims(x, 4)); tf.concat(images, 4)``."""
        found = lookup(expr.value, scope, expr if id(expr) in scope.flow_order().pre else None)
        if found is None or found.kind != ASSIGNED or found.writers or len(found.own_values) != 1 \
                or not isinstance(found.own_values[0], cst.List):
            return False
        added = self.graphs.objects.container_additions(found.scope, expr.value)
        return any(how == "add" and isinstance(value, cst.BaseExpression)
                   and self._holds(value, found.scope, seen, depth + 1) for how, value, _ in added)

    def _symbolic(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: Set, depth: int) -> bool:
        key = (id(expr), id(scope))
        found = self._memo.get(key)
        if found is not None:
            return found
        cuts = self._cuts
        found = self._read(expr, scope, seen, depth)
        if self._cuts == cuts:
            self._memo[key] = found
        return found

    def _read(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: Set, depth: int) -> bool:
        if depth > _DEPTH:
            self._cuts += 1
            self._frontier.append((expr, scope))
            return False
        if isinstance(expr, cst.Call):
            return self._call(expr, scope, seen, depth)
        if isinstance(expr, cst.BinaryOperation):
            return isinstance(expr.operator, _ARITHMETIC) and (
                self._symbolic(expr.left, scope, seen, depth + 1) or self._symbolic(expr.right, scope, seen, depth + 1))
        if isinstance(expr, cst.UnaryOperation):
            return not isinstance(expr.operator, cst.Not) and self._symbolic(expr.expression, scope, seen, depth + 1)
        if isinstance(expr, cst.Subscript):
            return self._symbolic(expr.value, scope, seen, depth + 1) or self._list_of_symbolic(
                expr.value, scope, seen, depth + 1) or self._item(expr, scope, seen, depth)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, scope)
        if isinstance(expr, cst.Name):
            return self._name(expr, scope, seen, depth)
        return False

    def _call(self, call: cst.Call, scope: ScopeInfo, seen: Set, depth: int) -> bool:
        func = call.func
        qualname = self.resolver.qualname(func, scope)
        if qualname in _INPUTS:
            return self.migration.api_flavour(func, scope) == KERAS3 and not any(
                a.keyword is not None and a.keyword.value == "tensor" for a in call.args)
        if qualname is not None:
            built = self._project_builds(qualname)
            if built is not None:
                positional = [a for a in call.args if a.keyword is None]
                return any(index in built[1] and not arg.star and self._holds(arg.value, scope, seen, depth + 1)
                           for index, arg in enumerate(positional))
            parts = qualname.split(".")
            # A TensorFlow op on one raises in Keras 3; what it stands for (its keras.ops twin, a
            # layer wrapping it) is symbolic, so the code after it is read as the model it builds.
            helper = (qualname.startswith("keras.ops.") or qualname in RAISES
                      or (len(parts) == 3 and parts[:2] == ["keras", "layers"] and parts[2] in _FUNCTIONAL_HELPERS))
            return helper and self._any_argument(call, scope, seen, depth)
        # A Keras layer or model called: Dense(4)(x), encoder(x), self.block(x) outside `call`.
        kind = self.tensors.object_kind(func, scope)
        if kind is None and isinstance(func, cst.Call):
            # keras.layers.GRU(4, return_state=True)(x): a layer, whose call gives a list of them.
            kind = tensors.base_kind(self.resolver.qualname(func.func, scope))
        if kind in (tensors.KERAS, tensors.KERAS_SEQUENCE):
            return self._any_argument(call, scope, seen, depth)
        target = self.graphs.function_scope(func, scope)
        if target is not None and isinstance(target.node, cst.FunctionDef) and target.enclosing_class is None:
            return self._returns_symbolic(target, seen, depth)
        return False

    def _any_argument(self, call: cst.Call, scope: ScopeInfo, seen: Set, depth: int) -> bool:
        return any(arg.star != "**" and self._holds(arg.value, scope, seen, depth + 1) for arg in call.args)

    def _attribute(self, expr: cst.Attribute, scope: ScopeInfo) -> bool:
        if expr.attr.value not in _SYMBOLIC_ATTRIBUTES:
            return False
        owner = expr.value
        if isinstance(owner, cst.Name) and owner.value == "self":
            return False
        if self.tensors.object_kind(owner, scope) not in (tensors.KERAS, tensors.KERAS_SEQUENCE):
            return False
        return self.migration.object_flavour(owner, scope) == KERAS3

    def _name(self, expr: cst.Name, scope: ScopeInfo, seen: Set, depth: int) -> bool:
        found = lookup(expr.value, scope, expr if id(expr) in scope.flow_order().pre else None)
        if found is None or found.kind != ASSIGNED or expr.value in found.scope.globals or found.writers:
            return False
        values = found.own_values
        if not values:
            return False
        key = (expr.value, id(found.scope), tuple(id(v) for v in values))
        if key in seen:
            self._cuts += 1
            return False
        seen.add(key)
        try:
            return all(self._value(value, found.scope, seen, depth + 1) for value in values)
        finally:
            seen.discard(key)

    def _value(self, value, scope: ScopeInfo, seen: Set, depth: int) -> bool:
        if isinstance(value, cst.BaseExpression):
            return self._symbolic(value, scope, seen, depth)
        if isinstance(value, tuple):
            if value[0] == UNPACKED and isinstance(value[1], cst.BaseExpression):
                return self._symbolic(value[1], scope, seen, depth) or self._list_of_symbolic(
                    value[1], scope, seen, depth)
            if value[0] == ITERATED and isinstance(value[1], cst.BaseExpression):
                return self._list_of_symbolic(value[1], scope, seen, depth) or self._symbolic(
                    value[1], scope, seen, depth)
            if value[0] == PARAM:
                return self._parameter(value[1], value[2], scope, seen, depth)
        return False

    def _item(self, expr: cst.Subscript, scope: ScopeInfo, seen: Set, depth: int) -> bool:
        """``inputs["image"]`` of a dict (or list) every source of which holds a symbolic tensor
        there: ``self._inputs = self.build_inputs()`` where ``build_inputs`` returns
        ``dict(image=keras.Input(...), ...)`` (``semantic.flow``)."""
        if not (isinstance(expr.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))):
            return False
        found = self.graphs.flow.sources(expr, scope)
        values = found.values()
        if found.unknown or not values or any(value is expr for value, _ in values):
            return False
        return all(self._symbolic(value, where, seen, depth + 1) for value, where in values)

    def _list_of_symbolic(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: Set, depth: int) -> bool:
        """Is ``expr`` a list/tuple display (or a name bound once to one) of symbolic tensors?"""
        if isinstance(expr, (cst.List, cst.Tuple)):
            return bool(expr.elements) and all(
                not isinstance(e, cst.StarredElement) and self._symbolic(e.value, scope, seen, depth + 1)
                for e in expr.elements)
        if isinstance(expr, cst.Name):
            found = lookup(expr.value, scope, None)
            if found is None or found.kind != ASSIGNED or found.rebound:
                return False
            value = found.single_value
            return isinstance(value, (cst.List, cst.Tuple)) and self._list_of_symbolic(value, found.scope, seen,
                                                                                         depth + 1)
        return False

    # -- same-module functions -------------------------------------------------
    def _returns_symbolic(self, function: ScopeInfo, seen: Set, depth: int) -> bool:
        node = function.node
        if not isinstance(node.body, cst.IndentedBlock):
            return False
        key = ("returns", id(function))
        if key in seen:
            self._cuts += 1
            return False
        values = []
        for stmt in returns(node.body):
            if stmt.value is None:
                return False
            values.append(stmt.value)
        if not values:
            return False
        seen.add(key)
        try:
            return all(self._symbolic(v, function, seen, depth + 1) for v in values)
        finally:
            seen.discard(key)

    def _parameter(self, param: cst.Param, position: int, function: ScopeInfo, seen: Set, depth: int) -> bool:
        """Does every call of this same-module function pass a symbolic tensor for ``param`` (one
        call is enough for a building block's input: its other calls may feed it its own output)?
        For a method, one call of the module that passes one is enough (``self.log_stats(inputs["x"])``
        while building the model): what the method does to it runs on a KerasTensor there, unless
        the method tells tensors apart (``is_keras_tensor``, ``isinstance``)."""
        if not isinstance(function.node, cst.FunctionDef):
            return False
        if function.enclosing_class is not None:
            return self._method_parameter(param, function, seen, depth)
        calls = self._calls_of(function)
        if not calls:
            return self._building_block(param, function)
        given = self._once(("param", id(param)), seen, lambda: [
            arg is not None and self._symbolic(arg, where, seen, depth + 1)
            for call, where in calls for arg in [_argument_for(call, param, position)]])
        return bool(given) and (all(given) or (any(given) and self._building_block(param, function)))

    def _method_parameter(self, param: cst.Param, function: ScopeInfo, seen: Set, depth: int) -> bool:
        passed = self.graphs.flow.passed(function, param)
        if not passed or _tells_tensors_apart(function):
            return False
        return self._once(("param", id(param)), seen, lambda: any(
            self._holds(given, where, seen, depth + 1) for given, where in passed))

    def _once(self, key, seen: Set, ask):
        """``ask()``, unless ``key`` is being read already (a cycle: False, and the reading is cut)."""
        if key in seen:
            self._cuts += 1
            return False
        seen.add(key)
        try:
            return ask()
        finally:
            seen.discard(key)

    def _keras3_file(self) -> bool:
        """Is the Keras this file uses (if it names one) Keras 3: a module that builds through
        another module's blocks may name no Keras at all."""
        flavours = self.migration.module_flavours()
        return not self.migration.legacy_env and flavours <= {KERAS3}

    def _project_builds(self, qualname: str) -> Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]]:
        project = self.resolver.project
        if project is None or qualname.split(".", 1)[0] in FRAMEWORKS:
            return None
        return project.builds(qualname)

    def _building_block(self, param: cst.Param, function: ScopeInfo) -> bool:
        """Does ``function`` (a module-level def run in no graph) hand ``param`` as it is to a Keras 3
        layer call, to a feeding position of another project module's builder, or to such a position
        of a def of its module?"""
        if function.graph is not None or function.parent is None or function.parent.kind != "module":
            return False
        key = id(param)
        found = self._blocks.get(key)
        if found is None:
            # Handed to a call (`ds.map(augment)`): whoever runs it may pass real tensors.
            found = self._blocks[key] = self._feeds(param, function, 0) and not self._handed(function)
        return found

    def _handed(self, function: ScopeInfo) -> bool:
        if self._handed_names is None:
            self._handed_names = {}
            for call, where in self.graphs.model.index.get("Call", ()):
                for arg in call.args:
                    if isinstance(arg.value, cst.Name):
                        self._handed_names.setdefault(arg.value.value, []).append((arg.value, where))
        return any(self.graphs.function_scope(name, where) is function
                   for name, where in self._handed_names.get(function.name, ()))

    def _feeds(self, param: cst.Param, function: ScopeInfo, depth: int) -> bool:
        if depth > 3 or not isinstance(function.node, cst.FunctionDef):
            return False
        for call in function.calls:
            func = call.func
            positions: Tuple[int, ...] = ()
            target = None
            if isinstance(func, cst.Call):
                qualname = self.resolver.qualname(func.func, function)
                if tensors.base_kind(qualname) in (tensors.KERAS, tensors.KERAS_SEQUENCE) \
                        and self.migration.api_flavour(func.func, function) == KERAS3:
                    positions = tuple(range(len(call.args)))
            else:
                qualname = self.resolver.qualname(func, function)
                built = self._project_builds(qualname) if qualname is not None else None
                if built is not None and self._keras3_file():
                    positions = built[0]
                elif isinstance(func, cst.Name):
                    target = self.graphs.function_scope(func, function)
                    if target is None or target.enclosing_class is not None or target is function \
                            or not isinstance(target.node, cst.FunctionDef):
                        target = None
            if not positions and target is None:
                continue
            positional = [a for a in call.args if a.keyword is None]
            for index, arg in enumerate(positional):
                if arg.star:
                    break  # positions after a starred argument are unknown
                if not isinstance(arg.value, cst.Name) or arg.value.value != param.name.value:
                    continue
                found = lookup(arg.value.value, function, arg.value)
                if found is None or found.kind != ASSIGNED or not any(
                        isinstance(v, tuple) and v[0] == PARAM and v[1] is param for v in found.own_values):
                    continue
                if index in positions:
                    return True
                if target is not None:
                    params = target.node.params.params
                    if index < len(params) and self._feeds(params[index], target, depth + 1):
                        return True
        return False

    def _calls_of(self, function: ScopeInfo) -> List[Tuple[cst.Call, ScopeInfo]]:
        if self._calls is None:
            self._calls = {}
            for call, where in self.graphs.model.index.get("Call", ()):
                if isinstance(call.func, cst.Name):
                    target = self.graphs.function_scope(call.func, where)
                    if target is not None:
                        self._calls.setdefault(id(target), []).append((call, where))
        return self._calls.get(id(function), [])


_TELLING_APART = ("is_keras_tensor", "KerasTensor", "isinstance", "is_tensor", "is_symbolic")


def _tells_tensors_apart(function: ScopeInfo) -> bool:
    """Does the def's text name a check that tells a KerasTensor from a tensor?"""
    text = cst.Module(body=[]).code_for_node(function.node)
    return any(name in text for name in _TELLING_APART)


def _argument_for(call: cst.Call, param: cst.Param, position: int) -> Optional[cst.BaseExpression]:
    name = param.name.value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[:position + 1]):
        return None
    if position < len(positional):
        return positional[position].value
    return None
