"""Which code runs repeatedly: in loops, in per-step callees, in dataset functions.

Two questions, because TensorFlow runs code in two ways:

``python_repeats(node, scope)``
    The *Python* statement itself executes many times: it is in a loop body
    (a ``for``/``while`` body, a ``while`` test, the element and conditions of
    a comprehension), in a function called from such a place (a top-level
    def also where another module of the project calls it in a loop:
    ``ProjectFile.loop_caller``; also as a method of an object of the module's own classes, where its class is told:
    ``self.actor.train(...)`` after ``self.actor = Actor()``), in a recursive
    function, in a function handed to something that calls it over and over
    (``map``/``sorted(key=)``/..., ``tf.data.Dataset.from_generator`` each
    epoch, ``tf.py_function`` from graph code at every call, ``tf.while_loop``
    or ``tf.map_fn`` run eagerly), in a Keras callback's ``on_*batch_*`` and
    ``on_epoch_*`` methods, or in a ``keras.utils.Sequence``/``PyDataset``'s
    ``__getitem__``, ``__iter__``, ``__next__``, ``__len__``, ``on_epoch_end``.
    Python code in a graph body runs at trace time only, so a ``tf.function``
    called from a loop does *not* make its body repeat here (its Python runs
    once per trace), nor does a Keras ``call`` or a ``Dataset.map`` function;
    but a loop *inside* graph code that Python unrolls (over ``range``, a
    list, or any loop AutoGraph does not convert) does, and a ``Dataset.map``
    or ``tf.function(f)`` call that itself repeats traces its function again
    each time.

``per_call(node, scope)``
    The TensorFlow operations the node creates run every call, step or element:
    everything ``python_repeats``, plus all graph code (a ``tf.function`` body
    executes at every call even if it is traced once; a Keras
    ``call``/``train_step`` at every step; a tf.data function for every
    element; a ``tf.while_loop`` body in graph code at every iteration), plus a
    ``for`` loop over ``tf.range`` or a dataset that AutoGraph converts (its
    body is traced once but runs per iteration).

Both return a short reason (a non-empty string, for messages) or ``None``.

Cost: loop membership is not recorded by the model walk; it is computed once
per scope actually asked about, by walking that scope's own body (not nested
functions) with ``semantic.model.walk``. Callers of functions are found from the
model's ``Call`` index once, the first time a function scope is asked about.
The call-graph search is demand-driven and memoised per function; meeting a
function already being examined means a call cycle, i.e. recursion, which
repeats.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import (
    DATASET_FUNCTION_ARGS,
    EAGER_WRAPPERS,
    TF_FUNCTION,
    TRACING_FUNCTIONS,
    argument,
    keyword,
)
from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import SCOPE_TYPES, ModuleModel, ScopeInfo, dotted_name, walk
from tflint_gpu.semantic.names import Resolver, normalize

# Graph kinds whose Python body runs once per trace whoever calls them.
_OWN_GRAPH = frozenset({"tf.function", "keras", "dataset"})
# TensorFlow functions that call their function arguments once per iteration:
# eagerly (a Python loop) outside graph code, traced once inside it.
_TF_LOOPS: Dict[str, Tuple[Tuple[int, str], ...]] = {
    "tensorflow.while_loop": ((0, "cond"), (1, "body")),
    "tensorflow.map_fn": ((0, "fn"),),
    "tensorflow.scan": ((0, "fn"),),
    "tensorflow.foldl": ((0, "fn"),),
    "tensorflow.foldr": ((0, "fn"),),
}
# Traced once (even eagerly), then run for every element.
_TF_VECTORIZED: Dict[str, Tuple[Tuple[int, str], ...]] = {
    "tensorflow.vectorized_map": ((0, "fn"),),
}
_FROM_GENERATOR = "tensorflow.data.Dataset.from_generator"
# Python callables that call their function argument once per element.
_BUILTIN_PER_ELEMENT: Dict[str, Tuple[Tuple[int, str], ...]] = {
    "map": ((0, "function"),),
    "filter": ((0, "function"),),
    "sorted": ((-1, "key"),),
    "min": ((-1, "key"),),
    "max": ((-1, "key"),),
}
_QUALIFIED_PER_ELEMENT: Dict[str, Tuple[Tuple[int, str], ...]] = {
    "functools.reduce": ((0, "function"),),
    "itertools.starmap": ((0, "function"),),
    "itertools.filterfalse": ((0, "predicate"),),
    "itertools.takewhile": ((0, "predicate"),),
    "itertools.dropwhile": ((0, "predicate"),),
    "itertools.accumulate": ((1, "func"),),
    "itertools.groupby": ((1, "key"),),
}
_CALLBACK_METHOD = re.compile(r"on_((train|test|predict)_)?batch_(begin|end)|on_epoch_(begin|end)")
_SEQUENCE_METHODS = frozenset({"__getitem__", "__iter__", "__next__", "__len__", "on_epoch_end"})

# Edge kinds into a function (see Repetition._edges).
_CALL = "call"  # its body runs each time the call runs
_TRACE = "trace"  # traced each time the call runs (Dataset.map, tf.function(f))
_TF_LOOP = "tf_loop"  # called per iteration by tf.while_loop & co
_EAGER = "eager"  # tf.py_function: run eagerly each time the wrapping op runs
_VECTORIZED = "vectorized"  # tf.vectorized_map: traced once, run for every element
_GENERATOR = "generator"  # Dataset.from_generator: called each time the dataset is iterated
_ELEMENT = "element"  # map/filter/sorted(key=)/...: called for every element
_MISSING = object()


class Repetition:
    """Answers "does this run repeatedly?" for nodes of one module.

    ``node`` and ``scope`` are a pair as the model's index gives them: the
    scope is the innermost module/class/function/lambda whose own body holds
    the node (a ``def``'s decorators and defaults belong to the enclosing
    scope, as in the walk).
    """

    def __init__(self, model: ModuleModel, graphs: GraphAnalysis) -> None:
        self.model = model
        self.graphs = graphs
        self.resolver: Resolver = graphs.resolver
        # id(scope) -> {id(node): (kind, label)} for nodes in that scope's loop bodies;
        # kind "python" (the Python code repeats) or "graph" (a loop AutoGraph converts).
        self._loops: Dict[int, Dict[int, Tuple[str, str]]] = {}
        self._incoming: Optional[Dict[int, List[Tuple[str, cst.Call, ScopeInfo]]]] = None
        self._python: Dict[int, Optional[str]] = {}
        self._per_call: Dict[int, Optional[str]] = {}
        self._active_python: set = set()
        self._active_per_call: set = set()

    # -- the two questions ----------------------------------------------
    def python_repeats(self, node: cst.CSTNode, scope: ScopeInfo) -> Optional[str]:
        """Why the Python code at ``node`` executes many times, or None.

        Graph code counts only where its Python repeats at trace time (a loop
        Python unrolls); use ``per_call`` to ask whether its ops run per step."""
        loop = self._loop_kinds(scope).get(id(node))
        if loop is not None and loop[0] == "python":
            return loop[1]
        return self.scope_python_repeats(scope)

    def per_call(self, node: cst.CSTNode, scope: ScopeInfo) -> Optional[str]:
        """Why the operations at ``node`` run every call, step or element, or None:
        true of everything ``python_repeats`` and of all graph code."""
        loop = self._loop_kinds(scope).get(id(node))
        if loop is not None:
            return loop[1]
        return self.scope_per_call(scope)

    def sometimes(self, node: cst.CSTNode, scope: ScopeInfo, _depth: int = 0) -> bool:
        """Does ``node`` run on only some of the runs of the code around it: under an ``if`` between it
        and the loop around it (``if step % 100 == 0:``), or, with no loop around it in its function,
        under an ``if`` of that function, or in a function every call of which in the module is itself
        run only sometimes (``on_train_batch_end`` calls ``self.preview()`` only ``if batch %
        self.every == 0``: the interval is in the caller)? Three callers deep."""
        from tflint_gpu.semantic.bindings import loop_around, under_condition

        loop = loop_around(node, scope)
        if loop is not None:
            return under_condition(node, loop, scope)
        if under_condition(node, scope.node, scope):
            return True
        function = scope.function()
        if function is None or function is not scope or _depth >= 3 or function.graph is not None:
            return False
        sites = self.graphs.call_sites(function)
        return bool(sites) and all(self.sometimes(call, caller, _depth + 1) for call, caller in sites)

    def scope_python_repeats(self, scope: ScopeInfo) -> Optional[str]:
        """Why the whole body of ``scope`` executes many times in Python, or None."""
        if scope.kind == "module":
            return None
        if scope.kind == "class":
            return self.python_repeats(scope.node, scope.parent) if scope.parent else None
        return self._search(scope, self._python, self._active_python, self._function_python)

    def scope_per_call(self, scope: ScopeInfo) -> Optional[str]:
        """Why the operations in the body of ``scope`` run every call/step/element, or None."""
        if scope.kind == "module":
            return None
        if scope.kind == "class":
            return self.per_call(scope.node, scope.parent) if scope.parent else None
        return self._search(scope, self._per_call, self._active_per_call, self._function_per_call)

    # -- functions --------------------------------------------------------
    @staticmethod
    def _search(function: ScopeInfo, memo: Dict[int, Optional[str]], active: set, compute) -> Optional[str]:
        key = id(function)
        found = memo.get(key, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[return-value]
        if key in active:
            # Reached again through its own callers: a call cycle. Every function on
            # the search path from here back to this one is on it, so each recurses.
            return f"`{GraphAnalysis.describe(function)}` is recursive"
        active.add(key)
        try:
            result = compute(function)
        finally:
            active.discard(key)
        memo[key] = result
        return result

    def _function_python(self, function: ScopeInfo) -> Optional[str]:
        reason = self._root_python(function)
        if reason is not None:
            return reason
        if function.kind == "lambda" and function.parent is not None:
            # A lambda is called where it is written: defined in a loop, called in it.
            inherited = self.python_repeats(function.node, function.parent)
            if inherited is not None:
                return inherited
        graph = function.graph if not function.excluded else None
        for kind, call, caller in self._edges(function):
            if kind == _CALL:
                if graph is not None and graph.kind in _OWN_GRAPH:
                    continue  # traced once; later calls run the graph, not this Python
                site = self.python_repeats(call, caller)
                if site is not None:
                    return _called(caller, self._loop_kinds(caller).get(id(call)))
            elif kind in (_TRACE, _TF_LOOP, _VECTORIZED):
                site = self.python_repeats(call, caller)
                if site is not None:
                    return f"traced again each time `{_func_text(call)}` runs {_where(caller)} ({site})"
                if kind == _TF_LOOP and not self._in_graph(caller):
                    return f"called eagerly by `{_func_text(call)}` at every iteration"
            elif kind == _EAGER:
                site = self.per_call(call, caller)
                if site is not None:
                    return f"run eagerly by `{_func_text(call)}` each time the op runs ({site})"
        return self._other_module(function)

    def _other_module(self, function: ScopeInfo) -> Optional[str]:
        """A top-level def (not a graph) that another module of the project calls in a loop
        (``ProjectFile.loop_caller``); asked last, so that only a function with no reason
        in its own module records the answer as a dependency of the file's results."""
        project = self.resolver.project
        if project is None or function.kind != "function" or function.parent is None \
                or function.parent.kind != "module" or not isinstance(function.node, cst.FunctionDef):
            return None
        if function.graph is not None and not function.excluded:
            return None
        caller = project.loop_caller(function.name)
        return f"called in a loop in `{caller}`" if caller is not None else None

    def _function_per_call(self, function: ScopeInfo) -> Optional[str]:
        if function.graph is not None and not function.excluded:
            return function.graph.reason
        reason = self.scope_python_repeats(function)
        if reason is not None:
            return reason
        for kind, call, caller in self._edges(function):
            if kind == _TF_LOOP and self._in_graph(caller):
                return f"run by `{_func_text(call)}` at every iteration of the graph loop"
            if kind == _VECTORIZED:
                return f"run by `{_func_text(call)}` for every element"
            if kind == _CALL:
                site = self.per_call(call, caller)
                if site is not None:
                    return _called(caller, self._loop_kinds(caller).get(id(call)))
        return None

    def _root_python(self, function: ScopeInfo) -> Optional[str]:
        """Reasons that need no caller: a Keras callback or Sequence method, or a
        function some API calls once per element/epoch (see ``_edges``)."""
        cls = function.enclosing_class
        if cls is not None and function.kind == "function":
            name = function.name
            if _CALLBACK_METHOD.fullmatch(name) and self._derives(cls, _is_callback_base):
                return f"Keras calls callback method `{cls.name}.{name}` at every batch or epoch"
            if name in _SEQUENCE_METHODS and self._derives(cls, _is_sequence_base):
                return f"Keras calls `{cls.name}.{name}` for every batch or epoch"
        for kind, call, caller in self._edges(function):
            if kind == _GENERATOR:
                return "tf.data calls the generator function each time the dataset is iterated"
            if kind == _ELEMENT:
                return f"called by `{_func_text(call)}` for every element"
        return None

    # -- call sites -------------------------------------------------------
    def _edges(self, function: ScopeInfo) -> List[Tuple[str, cst.Call, ScopeInfo]]:
        if self._incoming is None:
            self._incoming = self._collect_edges()
        return self._incoming.get(id(function), [])

    def _collect_edges(self) -> Dict[int, List[Tuple[str, cst.Call, ScopeInfo]]]:
        """Every place a same-module function is called or handed to a caller, once."""
        incoming: Dict[int, List[Tuple[str, cst.Call, ScopeInfo]]] = {}
        function_scope = self.graphs.function_scope

        def add(kind: str, target: Optional[ScopeInfo], call: cst.Call, scope: ScopeInfo) -> None:
            if target is not None:
                incoming.setdefault(id(target), []).append((kind, call, scope))

        def add_arguments(kind: str, parameters, call: cst.Call, scope: ScopeInfo) -> None:
            for position, name in parameters:
                named = keyword(call, name)  # position -1: keyword only
                expr = argument(call, position, name) if position >= 0 else (named.value if named else None)
                add(kind, function_scope(expr, scope), call, scope)

        for call, scope in self.model.index.get("Call", ()):
            target = function_scope(call.func, scope)
            if target is not None:
                add(_CALL, target, call, scope)
            else:
                for method in self.graphs.object_callees(call, scope):
                    add(_CALL, method, call, scope)
            qualname = self.resolver.qualname(call.func, scope)
            func = call.func
            if qualname == TF_FUNCTION:
                add_arguments(_TRACE, ((0, "func"),), call, scope)
            elif qualname in EAGER_WRAPPERS:
                add_arguments(_EAGER, ((0, "func"),), call, scope)
            elif qualname in _TF_LOOPS:
                add_arguments(_TF_LOOP, _TF_LOOPS[qualname], call, scope)
            elif qualname in _TF_VECTORIZED:
                add_arguments(_VECTORIZED, _TF_VECTORIZED[qualname], call, scope)
            elif qualname in TRACING_FUNCTIONS:
                add_arguments(_TRACE, TRACING_FUNCTIONS[qualname], call, scope)
            elif qualname == _FROM_GENERATOR:
                add_arguments(_GENERATOR, ((0, "generator"),), call, scope)
            elif qualname in _QUALIFIED_PER_ELEMENT:
                add_arguments(_ELEMENT, _QUALIFIED_PER_ELEMENT[qualname], call, scope)
            elif isinstance(func, cst.Name) and func.value in _BUILTIN_PER_ELEMENT \
                    and Resolver.is_free(func.value, scope):
                add_arguments(_ELEMENT, _BUILTIN_PER_ELEMENT[func.value], call, scope)
            elif isinstance(func, cst.Attribute) and func.attr.value in DATASET_FUNCTION_ARGS \
                    and self.graphs.is_dataset(func.value, scope):
                add_arguments(_TRACE, DATASET_FUNCTION_ARGS[func.attr.value], call, scope)
        return incoming

    def _in_graph(self, scope: ScopeInfo) -> bool:
        function = scope.function()
        return function is not None and function.graph is not None and not function.excluded

    # -- loops ------------------------------------------------------------
    def _loop_kinds(self, scope: ScopeInfo) -> Dict[int, Tuple[str, str]]:
        """The nodes of ``scope``'s own body that lie in a loop body, once per scope."""
        found = self._loops.get(id(scope))
        if found is not None:
            return found
        found = {}
        self._loops[id(scope)] = found
        body = _own_body(scope.node)
        if body is None:
            return found
        converts = self._autograph(scope)
        for node in walk(body, skip=SCOPE_TYPES):
            parts = _repeated_parts(node)
            if not parts:
                continue
            if isinstance(node, cst.For):
                if converts and self._converted_iteration(node.iter, scope):
                    kind, label = "graph", "inside a `for` loop AutoGraph converts (runs per iteration)"
                else:
                    kind, label = "python", "inside a `for` loop"
            elif isinstance(node, cst.While):
                kind, label = "python", "inside a `while` loop"
            else:
                kind, label = "python", "inside a comprehension"
            outer = found.get(id(node))
            if outer is not None and (outer[0] == "python" or outer[0] == kind):
                continue  # its parts were marked with the enclosing loop
            mark = (kind, label)  # one tuple per loop, not one per node
            for part in parts:
                for inner in walk(part, skip=SCOPE_TYPES):
                    previous = found.get(id(inner))
                    if previous is None or previous[0] != "python":
                        found[id(inner)] = mark
        return found

    def _autograph(self, scope: ScopeInfo) -> bool:
        function = scope.function()
        return function is not None and function.graph is not None and not function.excluded \
            and function.graph.autograph

    def _converted_iteration(self, iterable: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Iteration AutoGraph turns into a graph loop: ``tf.range(...)`` or a dataset."""
        if isinstance(iterable, cst.Call) and self.resolver.qualname(iterable.func, scope) == "tensorflow.range":
            return True
        return self.graphs.is_dataset(iterable, scope)

    # -- classes ----------------------------------------------------------
    def _derives(self, cls: ScopeInfo, is_base) -> bool:
        return any(is_base(normalize(raw)) for raw in self.graphs.class_bases(cls))


def _is_callback_base(qualname: str) -> bool:
    return qualname.startswith("keras.callbacks.")


def _is_sequence_base(qualname: str) -> bool:
    return qualname.startswith("keras.") and qualname.rsplit(".", 1)[-1] in ("Sequence", "PyDataset")


def _own_body(node: cst.CSTNode) -> Optional[cst.CSTNode]:
    if isinstance(node, cst.Module):
        return node
    body = getattr(node, "body", None)
    if body is None or isinstance(body, SCOPE_TYPES):
        return None  # ``lambda: lambda: x``: the inner lambda is its own scope
    return body


def _repeated_parts(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The parts of a loop evaluated once per iteration (not a ``for``'s
    iterable, evaluated once, nor a loop's ``else:``)."""
    if isinstance(node, cst.For):
        return [node.target, node.body]
    if isinstance(node, cst.While):
        return [node.test, node.body]
    if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        return [node.elt] + _comp_for_parts(node.for_in)
    if isinstance(node, cst.DictComp):
        return [node.key, node.value] + _comp_for_parts(node.for_in)
    return []


def _comp_for_parts(comp: cst.CompFor) -> List[cst.CSTNode]:
    # The first iterable is evaluated once; a nested ``for`` (its iterable too)
    # once per element of the outer one.
    parts: List[cst.CSTNode] = [comp.target, *comp.ifs]
    if comp.inner_for_in is not None:
        parts.append(comp.inner_for_in)
    return parts


def _where(scope: ScopeInfo) -> str:
    return "at module level" if scope.kind == "module" else f"in `{GraphAnalysis.describe(scope)}`"


def _func_text(call: cst.Call) -> str:
    """``tf.while_loop`` for a dotted callee, ``.map`` for a method of an expression."""
    func = call.func
    dotted = dotted_name(func)
    if dotted is not None:
        return dotted
    return "." + func.attr.value if isinstance(func, cst.Attribute) else "the call"


def _called(caller: ScopeInfo, loop: Optional[Tuple[str, str]]) -> str:
    if loop is not None:
        return f"called {loop[1]} {_where(caller)}"
    return f"called from `{GraphAnalysis.describe(caller)}`, which runs repeatedly"
