"""Code in graph functions that runs once per object or program, not once per call.

The Python body of a graph function runs at every trace; some of it runs only
once even so, on purpose, and a rule about per-call effects leaves it alone.
Three facts, each computed on demand and memoised per function:

lazy blocks (``in_lazy_block(node, function)``, ``lazy_blocks(function)``)
    The body of an ``if`` (not its ``else``) whose test asks whether some
    state ``E`` is still unset: ``not E``, ``E is None``, ``E == <literal>``
    (``is``/``==`` an int, a string, ``None``, ``True``, ``False``) or
    ``not hasattr(obj, "a")`` (``E`` is ``obj.a``), where ``E`` outlives the
    call (an attribute of the method's first parameter; a name bound at
    module level or in an eager enclosing function, or declared ``global``;
    an attribute or constant-key item of such a name) and the body sets ``E``
    itself, fills it (``E.append(v)``, ``extend``, ``add``, ``update``,
    ``E[k] = v``: ``if not state: state.append(tf.Variable(...))``, the
    create-once idiom), or calls a same-module function that, or whose callees, set it
    (``self._build(x)`` setting ``self._built = True``; ``self.build(...)``
    sets ``self.built``, as Keras does when ``build`` returns). After the
    first run the test fails, so the block runs once per object or program.
    The same test in a conditional expression that assigns ``E`` and keeps it
    otherwise, ``E = make() if E is None else E``, makes the statement lazy
    too (after the first run it rebinds ``E`` to itself).

setup functions (``is_setup(function)``)
    Graph functions that run only while an object is set up: a ``build``
    method reached from graph code (the lazy-build pattern), a function
    nested in a setup function, and a function every graph call of which is
    made from a setup function or from a lazy block; the greatest such set,
    so helpers calling each other or themselves stay in it.

per-call scratch (``per_call_scratch(function, base, attr)``)
    ``base.attr`` (``self.endpoints``) is bound afresh at every call: a
    statement at the top level of the function's body (not nested in an
    ``if``, loop, ``with`` or ``try``) binds it to a fresh Python value (a
    container display or comprehension, ``list()``/``dict()``/``set()``, a
    ``collections`` container, a number, string, tuple or bool) before
    anything in the function mentions it. Every call, and every trace, starts
    again from that value.

``runs_once(node, function)`` is the first two together. State is named by
``state_key``: ``<self>.built``, ``cache``, ``mod[0]``.

Why a module of its own rather than part of ``repetition.py``: repetition
answers "does this run many times" from loops and the call graph; these facts
answer "does this run once although its function runs per call" from guards
and the def-use of state, with their own inputs (state keys, value kinds)
and tests. A rule may ask both.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import PARAM, ModuleModel, ScopeInfo, assigned
from tflint_gpu.semantic.names import Resolver

# How the first parameter of a method is spelt in state keys (``<self>.attr``).
SELF = "<self>"

# Python value kinds (``python_value_kind``).
CONTAINER = "container"
SCALAR = "scalar"
NONE = "none"
ARG = "argument"  # a constructor argument of unknown type, kept in an attribute
VARIABLE = "variable"  # a tf.Variable / Keras weight

_VARIABLES = frozenset({"tensorflow.Variable", "keras.Variable"})
_WEIGHT_METHODS = frozenset({"add_weight", "add_variable"})
_SCALAR_ANNOTATIONS = frozenset({"int", "float", "bool", "str"})

_CONTAINER_DISPLAYS = (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)
_CONTAINER_BUILTINS = frozenset({"list", "dict", "set"})
_CONTAINER_QUALNAMES = frozenset(
    {"collections.deque", "collections.defaultdict", "collections.OrderedDict", "collections.Counter"}
)
_SCALAR_BUILTINS = frozenset({"int", "float", "str", "bool", "tuple"})
_SCALARS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Tuple)
_NUMBER = (cst.Integer, cst.Float)
_UNSET_NAMES = frozenset({"None", "False", "True"})


class RunOnce:
    """Answers "does this run once, not once per call?" for nodes of one module.

    ``function`` is the innermost function or lambda around ``node`` (a
    ``ScopeInfo`` of the model); graph contexts must have been worked out
    (``GraphAnalysis.run``)."""

    def __init__(self, model: ModuleModel, graphs: GraphAnalysis) -> None:
        self.model = model
        self.graphs = graphs
        self.resolver: Resolver = graphs.resolver
        self._setup: Optional[Set[int]] = None
        self._attribute_kinds: Dict[Tuple[int, str], Optional[str]] = {}
        self._lazy: Dict[int, Tuple[List[cst.If], Set[int]]] = {}
        self._scratch: Dict[Tuple[int, str, str], bool] = {}

    # -- what state holds -------------------------------------------------
    def creates_variable(self, value, scope: Optional[ScopeInfo] = None) -> bool:
        """``tf.Variable(...)`` / ``keras.Variable(...)``."""
        return isinstance(value, cst.Call) \
            and self.resolver.qualname(value.func, scope or self.model.root) in _VARIABLES

    def state_kind(self, values, scope: ScopeInfo) -> Optional[str]:
        """One kind (CONTAINER, SCALAR, NONE) if every value bound is a fresh
        Python value of that kind (``python_value_kind``); None otherwise or
        for a parameter, loop target or other non-expression binding."""
        return combine_kinds([python_value_kind(v, scope, self.resolver) if isinstance(v, cst.BaseExpression)
                              else None for v in values])

    def attribute_kind(self, cls: ScopeInfo, attr: str) -> Optional[str]:
        """What a class binds ``self.attr`` to, over its class body and every
        ``self.attr = value`` in its methods (updates of the attribute from
        itself aside): SCALAR/CONTAINER/NONE if only Python values, ARG if a
        constructor argument of unknown type, VARIABLE if variables or
        weights (``self.add_weight``); None if mixed or unknown."""
        key = (id(cls), attr)
        if key not in self._attribute_kinds:
            kinds = [python_value_kind(v, cls, self.resolver) if isinstance(v, cst.BaseExpression) else None
                     for v in cls.assigned.get(attr, ())]
            for type_name in ("Assign", "AnnAssign"):
                for node, scope in self.model.index.get(type_name, ()):
                    method = scope.function()
                    if method is None or method.enclosing_class is not cls or node.value is None:
                        continue
                    first = bindings.first_parameter(method)
                    if first is None:
                        continue
                    targets = [t.target for t in node.targets] if type_name == "Assign" else [node.target]
                    if bindings.mentions_attribute(node.value, first, attr):
                        continue  # an update of the attribute from itself: not what it holds
                    for target in targets:
                        elements = bindings.target_elements(target)
                        if any(bindings.is_attribute(element, first, attr) for element in elements):
                            kinds.append(self._attribute_value_kind(node.value, method, first))
            self._attribute_kinds[key] = combine_kinds(kinds)
        return self._attribute_kinds[key]

    def _attribute_value_kind(self, value, method: ScopeInfo, first: str) -> Optional[str]:
        """The kind of a value a method binds to ``self.attr``: also VARIABLE for
        ``self.add_weight(...)``/``tf.Variable(...)``, and for a parameter of
        ``__init__`` (never rebound there) the kind its default or annotation
        gives, ARG when it has neither."""
        if isinstance(value, cst.Call):
            func = value.func
            if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == first
                    and func.attr.value in _WEIGHT_METHODS) or self.creates_variable(value, method):
                return VARIABLE
        if isinstance(value, cst.Name) and method.name == "__init__" and isinstance(method.node, cst.FunctionDef):
            found = assigned(value.value, method)
            param = found.single_value if found is not None and found.scope is method else None
            if isinstance(param, tuple) and param[0] == PARAM:
                node = param[1]
                params = method.node.params
                if node is params.star_arg or node is params.star_kwarg:
                    return None
                if node.default is not None:
                    return python_value_kind(node.default, method, self.resolver)
                if node.annotation is not None:
                    note = node.annotation.annotation
                    if isinstance(note, cst.Name) and note.value in _SCALAR_ANNOTATIONS:
                        return SCALAR
                    return None
                return ARG
        return python_value_kind(value, method, self.resolver)

    # -- the questions ------------------------------------------------------
    def runs_once(self, node: cst.CSTNode, function: ScopeInfo) -> bool:
        """``node`` runs once in the program's life, on purpose: in a setup
        function or in a lazy block of ``function``."""
        return self.is_setup(function) or self.in_lazy_block(node, function)

    def in_lazy_block(self, node: cst.CSTNode, function: ScopeInfo) -> bool:
        """``node`` lies in the body of a lazy block of ``function`` (its own
        body: a lazy block of a nested function does not count)."""
        return id(node) in self._lazy_blocks(function)[1]

    def lazy_blocks(self, function: ScopeInfo) -> List[cst.If]:
        """The lazy ``if`` statements of ``function``'s own body, in source order."""
        return list(self._lazy_blocks(function)[0])

    def is_setup(self, function: ScopeInfo) -> bool:
        """``function`` runs only while an object is set up (see the module docs)."""
        return id(function) in self._setup_functions()

    def per_call_scratch(self, function: ScopeInfo, base: str, attr: str) -> bool:
        """``base.attr`` is per-call scratch state in ``function`` (see the module docs)."""
        key = (id(function), base, attr)
        found = self._scratch.get(key)
        if found is None:
            found = self._scratch[key] = self._fresh_first(function, base, attr)
        return found

    # -- lazy blocks ----------------------------------------------------------
    def _lazy_blocks(self, function: ScopeInfo) -> Tuple[List[cst.If], Set[int]]:
        found = self._lazy.get(id(function))
        if found is None:
            blocks: List[cst.If] = []
            nodes: Set[int] = set()
            module = self.model.module
            for statement in bindings.if_statements(function.node):
                key = unset_state(statement.test, function, module)
                if key is not None and outlives_call(key, function) and self._block_sets(statement.body, key, function):
                    blocks.append(statement)
                    nodes |= bindings.own_nodes(statement.body)
            for assignment in bindings.assignments(function.node):
                value = assignment.value
                if isinstance(assignment, cst.Assign) and isinstance(value, cst.IfExp):
                    key = unset_state(value.test, function, module)
                    if key is not None and outlives_call(key, function) and sets_state(assignment, key, function, module) \
                            and state_key(value.orelse, function, module) == key:
                        # `E = make() if E is None else E`: after the first run it rebinds E to itself
                        nodes |= bindings.own_nodes(assignment)
            found = self._lazy[id(function)] = (blocks, nodes)
        return found

    def _block_sets(self, body: cst.CSTNode, key: str, function: ScopeInfo) -> bool:
        """The block sets the state ``key`` names, itself or through the
        same-module functions it calls (and theirs)."""
        module = self.model.module
        helpers: List[ScopeInfo] = []
        for node in bindings.assignments_and_calls(body):
            if not isinstance(node, cst.Call):
                if sets_state(node, key, function, module) or _fills_state(node, key, function, module):
                    return True
                continue
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in _FILLING \
                    and state_key(node.func.value, function, module) == key:
                return True  # `if not cache: cache.append(tf.Variable(...))`: no longer empty
            if key == SELF + ".built" and state_key(node.func, function, module) == SELF + ".build":
                return True  # Keras sets `built` when `build` returns
            helper = self.graphs.function_scope(node.func, function)
            if helper is not None:
                helpers.append(helper)
        return any(
            scope.is_function and any(sets_state(node, key, scope, module) for node in bindings.assignments(scope.node))
            for helper in helpers
            for scope in self.graphs.reachable(helper)
        )

    # -- setup functions ------------------------------------------------------
    def _setup_functions(self) -> Set[int]:
        if self._setup is None:
            candidates = [s for s in self.model.scopes
                          if s.is_function and s.graph is not None and s.graph.kind in ("called", "nested")]
            setup = {id(s) for s in candidates}
            changed = True
            while changed:
                changed = False
                for scope in candidates:
                    if id(scope) in setup and not self._only_from_setup(scope, setup):
                        setup.discard(id(scope))
                        changed = True
            self._setup = setup
        return self._setup

    def _only_from_setup(self, scope: ScopeInfo, setup: Set[int]) -> bool:
        graph = scope.graph
        if graph.kind == "nested":
            parent = scope.parent.function() if scope.parent is not None else None
            return parent is not None and id(parent) in setup
        if scope.name == "build" and scope.enclosing_class is not None:
            return True
        if not graph.call_sites:
            return False
        for call, caller in graph.call_sites:
            caller_function = caller.function()
            if caller_function is None:
                return False
            if id(caller_function) not in setup and not self.in_lazy_block(call, caller_function):
                return False
        return True

    # -- per-call scratch -----------------------------------------------------
    def _fresh_first(self, function: ScopeInfo, base: str, attr: str) -> bool:
        body = function.node.body if isinstance(function.node, cst.FunctionDef) else None
        for statement in bindings.block_statements(body) if body is not None else ():
            small = statement.body if isinstance(statement, cst.SimpleStatementLine) else (statement,)
            for part in small:
                if isinstance(part, cst.Assign) and not bindings.mentions_attribute(part.value, base, attr) \
                        and any(bindings.is_attribute(t.target, base, attr) for t in part.targets) \
                        and python_value_kind(part.value, function, self.resolver) in (SCALAR, CONTAINER):
                    return True
                if bindings.mentions_attribute(part, base, attr):
                    return False
        return False


# -- state ------------------------------------------------------------------------
def state_key(expr: cst.BaseExpression, function: ScopeInfo, module: cst.Module) -> Optional[str]:
    """A name for the state ``expr`` spells (``<self>.built``, ``cache``,
    ``mod[0]``), with a method's first parameter written ``<self>``; None for
    anything else (a call, an item with a computed key)."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = state_key(expr.value, function, module)
        if base is None:
            return None
        if isinstance(expr.value, cst.Name) and function.enclosing_class is not None \
                and expr.value.value == bindings.first_parameter(function):
            base = SELF
        return f"{base}.{expr.attr.value}"
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 \
            and isinstance(expr.slice[0].slice, cst.Index):
        base = state_key(expr.value, function, module)
        index = expr.slice[0].slice.value
        if base is not None and isinstance(index, (cst.Integer, cst.SimpleString, cst.Name)):
            return f"{base}[{module.code_for_node(index)}]"
    return None


def unset_state(test: cst.BaseExpression, function: ScopeInfo, module: cst.Module) -> Optional[str]:
    """The state a lazy-block test checks is unset: ``not E``, ``E is None``,
    ``E == 0`` (``is``/``==`` a literal), ``not hasattr(obj, "a")``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = test.expression
        if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "hasattr" \
                and len(inner.args) == 2 and isinstance(inner.args[1].value, cst.SimpleString):
            obj = inner.args[0].value
            base = state_key(obj, function, module)
            name = inner.args[1].value.evaluated_value
            if base is not None and isinstance(name, str):
                if isinstance(obj, cst.Name) and function.enclosing_class is not None \
                        and obj.value == bindings.first_parameter(function):
                    base = SELF
                return f"{base}.{name}"
            return None
        return state_key(inner, function, module)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        literal = comparison.comparator
        if isinstance(comparison.operator, (cst.Is, cst.Equal)) and (
                isinstance(literal, (cst.Integer, cst.SimpleString))
                or (isinstance(literal, cst.Name) and literal.value in _UNSET_NAMES)):
            return state_key(test.left, function, module)
    return None


def outlives_trace(scope: ScopeInfo) -> bool:
    """State bound in ``scope`` lives beyond one trace: module level or an eager function."""
    if scope.kind == "module":
        return True
    if scope.is_function:
        return scope.graph is None or scope.excluded
    return False


def outlives_call(key: str, function: ScopeInfo) -> bool:
    """The state a key names lives beyond one call of ``function``: an
    attribute of ``<self>``, or a name bound at module level or in an eager
    enclosing function (or declared global/nonlocal there)."""
    root = key.split(".", 1)[0].split("[", 1)[0]
    if root == SELF:
        return True
    scope = bindings.binding_scope(root, function)
    if scope is None:
        return root in function.globals
    return scope is not function and outlives_trace(scope)


# Methods that put something into a container (a test `not E` then fails).
_FILLING = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft", "extendleft"})


def _fills_state(node: cst.CSTNode, key: str, function: ScopeInfo, module: cst.Module) -> bool:
    """``node`` is ``E[k] = v`` for the state ``key`` names (a dict or list no longer empty)."""
    if not isinstance(node, cst.Assign):
        return False
    return any(isinstance(t.target, cst.Subscript) and state_key(t.target.value, function, module) == key
               for t in node.targets)


def sets_state(node: cst.CSTNode, key: str, function: ScopeInfo, module: cst.Module) -> bool:
    """``node`` is an assignment (``=``, annotated, augmented) to the state ``key`` names."""
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
        targets = [node.target]
    else:
        return False
    return any(state_key(element, function, module) == key
               for target in targets for element in bindings.target_elements(target))


# -- values -----------------------------------------------------------------------
def python_value_kind(value: cst.BaseExpression, scope: ScopeInfo, resolver: Resolver) -> Optional[str]:
    """CONTAINER, SCALAR or NONE when ``value`` (evaluated in ``scope``) makes
    a fresh Python value of that kind; None when unknown. Containers: a list,
    dict or set display or comprehension, ``list()``/``dict()``/``set()``,
    ``collections.deque``/``defaultdict``/``OrderedDict``/``Counter``;
    scalars: number, string and tuple literals (``-1`` too), ``True``/``False``,
    ``int()``/``float()``/``str()``/``bool()``/``tuple()``."""
    if isinstance(value, _CONTAINER_DISPLAYS):
        return CONTAINER
    if isinstance(value, _SCALARS):
        return SCALAR
    if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, _NUMBER):
        return SCALAR
    if isinstance(value, cst.Name):
        if value.value == "None":
            return NONE
        if value.value in ("True", "False"):
            return SCALAR
        return None
    if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)):
        if isinstance(value.func, cst.Name) and bindings.is_builtin(value.func.value, scope):
            if value.func.value in _CONTAINER_BUILTINS:
                return CONTAINER
            if value.func.value in _SCALAR_BUILTINS:
                return SCALAR
        if resolver.qualname(value.func, scope) in _CONTAINER_QUALNAMES:
            return CONTAINER
    return None


def combine_kinds(kinds: List[Optional[str]]) -> Optional[str]:
    """One kind if every binding is a value of that kind (None aside; a
    constructor argument takes the kind of the other bindings)."""
    if not kinds or any(k is None for k in kinds):
        return None
    found = {k for k in kinds if k != NONE}
    if len(found) > 1:
        found.discard(ARG)
    return found.pop() if len(found) == 1 else None
