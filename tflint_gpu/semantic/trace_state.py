"""Python state graph code reads at trace time, and whether it changes later.

A traced function reads module-level and closure names once, while it is
traced; later calls replay the graph with the values of that moment. These
facts tell which outer names a graph function reads, and whether a binding of
such a name can run after the function may have been traced.

``outer_reads(function)``
    The names ``function``'s own code reads (not nested functions, which are
    asked about themselves) that are bound by assignment at module level or in
    an eager enclosing function: the first read of each name, with its
    ``model.Binding`` and how it is used (``VALUE``; ``CALLED``: ``name(...)``;
    ``METHOD``: ``name.attr(...)``). Not reads: attribute names, argument
    keywords, ``global``/``nonlocal`` names, names bound by a comprehension
    in the function (the walk keeps no scope for comprehensions).

``late_rebinding(binding, function)``
    A binding of ``binding.name`` that can run after ``function`` (graph code
    reading the name) has been traced, as ``(node, scope, why, text)`` (the
    node, the scope whose code holds it, why it is late, the binding's short
    source text), or None.
    In the scope owning the name (module or eager function): an assignment,
    augmented assignment or ``for`` target that comes after a call of that
    scope's own code which runs the function (a call of it, also through a name
    bound to ``tf.function(f)``, of a same-module function reaching it, or a
    call handing such a function as an argument,
    such as ``ds.map(fn)``, which traces it), or that sits in a loop whose body
    makes such a call; a call of a function writing the name through
    ``global``/``nonlocal`` counts as a binding where it stands. In a function
    writing the name through ``global``/``nonlocal`` (not graph code: that
    write is reported as a trace-time side effect): a write after, or in a loop
    with, such a call in the writer, or in a writer whose body itself runs
    repeatedly (called in a loop, a Keras callback's per-epoch method...). A
    function (or a class holding it) created inside a loop of the owning scope
    is a new function every turn, traced afresh: nothing is late for it.
    Bindings that run before any trace (``x = 1; x = 2`` at module top, a
    setup function run once) are not late. Nor is a rebinding after
    ``ds = base.map(fn)`` when ``ds = <...>.map(fn)`` is made again after it
    (in the same block or loop body, before anything reads ``ds`` or calls a
    same-module function): ``Dataset.map`` and friends trace a plain Python
    function afresh at each call, so the new pipeline reads the new value
    and the old one is no longer used (not when ``fn`` is, or reaches the
    name through, a ``tf.function``: its traces are cached).

``attribute_reads(function)``
    The instance attributes ``function``'s own code reads through its
    method's ``self`` (``self.steps``; also from a function nested in a
    method), the first read of each, with how it is used (``VALUE``;
    ``CALLED``: ``self.dense(x)``; ``METHOD``: ``self.steps.assign_add(1)``).
    Not reads: assignment targets (``self.x = ...``, ``self.x += 1``: the
    write is the function's own side effect).

``eager_change(attribute, function)``
    A binding of the attribute (``values.InstanceAttribute``) that changes it,
    in eager code, after ``function`` (graph code reading it) may have been
    traced, as ``(binding, why)``: an augmented assignment or rebinding
    outside ``__init__``/``build`` in a method that is not graph code, when
    that method is a Keras callback's per-batch or per-epoch method (also
    ``self.model.x += 1`` there, for a Keras model's ``train_step``...), or
    (augmented) calls a method running ``function``
    (the change then comes before or after a trace; from the second call on
    the graph keeps the old value; not for a Keras ``call``, whose Python runs
    again when the layer is called eagerly). None otherwise: a counter only
    bumped during set-up, or only in graph code.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.semantic.api import DATASET_FUNCTION_ARGS, TF_FUNCTION, TRACING_FUNCTIONS, argument
from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import (
    ASSIGNED, AUGMENTED, ITERATED, PARAM, SCOPE_TYPES, Binding, ModuleModel, ScopeInfo, _Order, lookup, walk,
)
from tflint_gpu.semantic.objects import AUGMENT
from tflint_gpu.semantic.run_once import outlives_trace
from tflint_gpu.semantic.repetition import Repetition
from tflint_gpu.semantic.retracing import Retracing

VALUE = "value"
CALLED = "called"
METHOD = "method"

_LOOPS = (cst.For, cst.While)
TF_FUNCTION_KIND = "tf.function"


class OuterRead:
    __slots__ = ("node", "binding", "use")

    def __init__(self, node: cst.Name, binding: Binding, use: str) -> None:
        self.node = node
        self.binding = binding
        self.use = use


class AttributeRead:
    __slots__ = ("node", "use")

    def __init__(self, node: cst.Attribute, use: str) -> None:
        self.node = node
        self.use = use


class TraceState:
    def __init__(self, model: ModuleModel, graphs: GraphAnalysis, repetition: Repetition,
                 retracing: Retracing) -> None:
        self.model = model
        self.graphs = graphs
        self.repetition = repetition
        self.retracing = retracing
        self._reachable: Dict[int, Set[int]] = {}
        self._callback_changes: Optional[Dict[str, List[Tuple[cst.CSTNode, ScopeInfo]]]] = None

    # -- what graph code reads -------------------------------------------
    def outer_reads(self, function: ScopeInfo) -> List[OuterRead]:
        body = function.node.body
        not_reads: Set[int] = set()
        uses: Dict[int, str] = {}
        comprehension_names: Set[str] = set()
        nodes = list(walk(body, skip=SCOPE_TYPES))
        for node in nodes:
            cls = node.__class__  # exact classes: LibCST's concrete node classes have no subclasses
            if cls is cst.Attribute:
                not_reads.add(id(node.attr))
            elif cls is cst.Arg and node.keyword is not None:
                not_reads.add(id(node.keyword))
            elif cls is cst.Global or cls is cst.Nonlocal:
                not_reads.update(id(item.name) for item in node.names)
            elif cls is cst.CompFor:
                comprehension_names.update(n.value for n in walk(node.target) if isinstance(n, cst.Name))
            elif cls is cst.NamedExpr and node.target.__class__ is cst.Name:
                comprehension_names.add(node.target.value)
            elif cls is cst.Call:
                func = node.func
                if func.__class__ is cst.Name:
                    uses[id(func)] = CALLED
                elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
                    uses[id(func.value)] = METHOD
        found: List[OuterRead] = []
        seen: Set[str] = set()
        for node in nodes:
            if node.__class__ is not cst.Name or id(node) in not_reads or node.value in seen:
                continue
            name = node.value
            if name in comprehension_names or name in function.globals:
                continue
            binding = lookup(name, function)
            if binding is None or binding.kind != ASSIGNED or not outlives_trace(binding.scope):
                continue
            seen.add(name)
            found.append(OuterRead(node, binding, uses.get(id(node), VALUE)))
        return found

    def attribute_reads(self, function: ScopeInfo) -> List[AttributeRead]:
        body = function.node.body
        objects = self.graphs.objects
        not_reads: Set[int] = set()
        uses: Dict[int, str] = {}
        nodes = list(walk(body, skip=SCOPE_TYPES))
        for node in nodes:
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    not_reads.add(id(target.target))
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                not_reads.add(id(node.target))
            elif isinstance(node, cst.Call):
                uses.setdefault(id(node.func), CALLED)
            elif isinstance(node, cst.Attribute):
                uses[id(node.value)] = METHOD  # self.steps.assign_add, self.steps.numpy...
        found: List[AttributeRead] = []
        seen: Set[str] = set()
        for node in nodes:
            if not isinstance(node, cst.Attribute) or id(node) in not_reads or node.attr.value in seen:
                continue
            if objects.self_class(node.value, function) is None:
                continue
            seen.add(node.attr.value)
            found.append(AttributeRead(node, uses.get(id(node), VALUE)))
        return found

    def attributes_may_change(self, function: ScopeInfo) -> bool:
        """A cheap first test for ``eager_change``: may any attribute ``function``
        reads through ``self`` change after set-up (an augmented assignment or a
        rebinding outside ``__init__``/``build`` in its class or bases; for a
        Keras method, a callback's ``self.model.x = ...``)?"""
        cls = function.method_class()
        if cls is None:
            return False
        objects = self.graphs.objects
        for current in objects.mro(cls):
            for bindings in objects.own_attributes(current).values():
                if any(b.how == AUGMENT or (b.how == "bind" and b.method.kind == "function"
                                            and b.method.name not in ("__init__", "build")) for b in bindings):
                    return True
        return function.graph is not None and function.graph.kind == "keras" and bool(self._callback_index())

    def eager_change(self, attribute, function: ScopeInfo):
        found = None
        for binding in attribute.changed_after_setup:
            method = binding.method
            if method.kind != "function" or (method.graph is not None and not method.excluded):
                continue  # graph code changing it: a trace-time side effect (TFG103)
            if not _keras_call(function) and binding.how == AUGMENT:
                # A Keras `call` runs its Python again when called eagerly: only its traces freeze.
                calls = self._calls_running(method, function)
                if calls:
                    return binding, f"in `{method.name}`, which calls `{calls[0][1]}`"
            if found is None and _keras_repeats(self.repetition.scope_python_repeats(method)):
                found = binding, f"in `{method.name}`, which Keras runs repeatedly"
        if found is None and function.graph is not None and function.graph.kind == "keras":
            found = self._callback_change(attribute.name)
        return found

    def _callback_change(self, name: str):
        """``self.model.<name> += ...`` (or ``= ...``) in a Keras callback method Keras runs repeatedly:
        it changes the attribute of the model being fit, between the steps of one traced function."""
        for node, scope in self._callback_index().get(name, ()):
            method = scope.function()
            if method is None or method.graph is not None:
                continue
            if _keras_repeats(self.repetition.scope_python_repeats(method)):
                return _Foreign(node, method), f"in `{method.name}`, which Keras runs repeatedly"
        return None

    def _callback_index(self) -> Dict[str, List[Tuple[cst.CSTNode, ScopeInfo]]]:
        """attribute -> the ``self.model.<attribute> = / += ...`` statements of the module."""
        if self._callback_changes is None:
            found: Dict[str, List[Tuple[cst.CSTNode, ScopeInfo]]] = {}
            for type_name in ("AugAssign", "Assign"):
                for node, scope in self.model.index.get(type_name, ()):
                    targets = [node.target] if type_name == "AugAssign" else [t.target for t in node.targets]
                    for target in targets:
                        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Attribute) \
                                and target.value.attr.value == "model" \
                                and self.graphs.objects.self_class(target.value.value, scope) is not None:
                            found.setdefault(target.attr.value, []).append((node, scope))
            self._callback_changes = found
        return self._callback_changes

    # -- when the name changes -------------------------------------------
    def late_rebinding(self, binding: Binding,
                       function: ScopeInfo) -> Optional[Tuple[cst.CSTNode, ScopeInfo, str, str]]:
        owner = binding.scope
        top = _top_in(function, owner)
        if top is None:
            return None
        order = owner.flow_order()
        if any(isinstance(a, _LOOPS) for a in order.ancestors(top)):
            return None  # a new function every turn of the loop, traced afresh
        direct: Set[int] = set()
        runs = self._calls_running(owner, function, direct)
        sites: List[Tuple[cst.CSTNode, str]] = []
        for value, scope in binding.all_bindings():
            node = _site(value)
            if scope is owner and node is not None and id(node) in order.pre:
                sites.append((node, _describe(binding.name, value)))
        writers = [w for w in binding.writers if w.graph is None or w.excluded]
        writer_ids = {id(w) for w in writers}
        for call in owner.calls:
            target = self.graphs.function_scope(call.func, owner)
            if target is not None and id(target) in writer_ids:
                sites.append((call, _text(call)))
        for node, text in sites:
            why = _late(node, [r for r in runs if not self._rebuilt_after(r[0], node, owner, order, function)], order,
                        direct)
            if why is not None:
                return node, owner, why, text
        for writer in writers:
            writer_order = writer.flow_order()
            writer_runs = self._calls_running(writer, function)
            repeats = self.repetition.scope_python_repeats(writer)
            for value in (v for v, scope in binding.all_bindings() if scope is writer):
                node = _site(value)
                if node is None or id(node) not in writer_order.pre:
                    continue
                why = _late(node, writer_runs, writer_order)
                if why is None and repeats is not None:
                    why = f"in `{writer.name}`, which runs repeatedly"
                if why is not None:
                    return node, writer, why, _describe(binding.name, value)
        return None

    def _calls_running(self, scope: ScopeInfo, function: ScopeInfo,
                       direct: Optional[Set[int]] = None) -> List[Tuple[cst.Call, str]]:
        """The calls of ``scope``'s own code that can run (and so trace) ``function``. ``direct``, when
        given, receives the ids of those that run it themselves (a call of it, or of a same-module
        function reaching it), not by handing it on (``ds.map(fn)``, whose pipeline may run later)."""
        found = []
        for call in scope.calls:
            if self.graphs.resolver.qualname(call.func, scope) == TF_FUNCTION:
                continue  # wrapping traces nothing yet
            called = self.retracing.called_tf_function(call, scope)
            targets = [called.function if called is not None else self.graphs.function_scope(call.func, scope)]
            targets += [self.graphs.function_scope(arg.value, scope) for arg in call.args
                        if isinstance(arg.value, (cst.Name, cst.Attribute, cst.Lambda))]
            if any(t is not None and id(function) in self._reaches(t) for t in targets):
                found.append((call, _call_text(call)))
                if direct is not None and targets[0] is not None and id(function) in self._reaches(targets[0]) \
                        and all(t is None for t in targets[1:]):
                    direct.add(id(call))
        return found

    def _traces_afresh(self, call: cst.Call, scope: ScopeInfo, function: ScopeInfo) -> bool:
        """``call`` is ``ds.map(fn)`` (a Dataset method or tf.data.experimental function tracing its
        function arguments) handing a plain function that reaches ``function`` through no ``tf.function``:
        each such call traces it afresh."""
        func = call.func
        qualname = self.graphs.resolver.qualname(func, scope)
        if qualname in TRACING_FUNCTIONS:
            parameters = TRACING_FUNCTIONS[qualname]
        elif isinstance(func, cst.Attribute) and func.attr.value in DATASET_FUNCTION_ARGS \
                and self.graphs.is_dataset(func.value, scope):
            parameters = DATASET_FUNCTION_ARGS[func.attr.value]
        else:
            return False
        targets = [self.graphs.function_scope(argument(call, position, name), scope) for position, name in parameters]
        reaching = [t for t in targets if t is not None and id(function) in self._reaches(t)]
        return bool(reaching) and not any(
            s.graph is not None and s.graph.kind == TF_FUNCTION_KIND for t in reaching for s in self.graphs.reachable(t)
        )

    def _rebuilt_after(self, call: cst.Call, site: cst.CSTNode, owner: ScopeInfo, order: _Order,
                       function: ScopeInfo) -> bool:
        """``name = <...>.map(fn)`` (``call``, tracing ``function`` afresh) is made again after ``site`` by a
        statement that runs whenever ``site`` does, before anything reads ``name`` or calls a same-module
        function: the rebinding at ``site`` reaches the new pipeline and the old one is not used again."""
        name = _assigned_name(call, order)
        if name is None or not self._traces_afresh(call, owner, function):
            return False
        start = order.post[id(site)]
        for later in owner.calls:
            if id(later) not in order.pre or order.pre[id(later)] <= start:
                continue
            statement = _assigning_statement(later, order)
            if statement is None or _assigned_name(later, order) != name \
                    or not self._traces_afresh(later, owner, function):
                continue
            if any(isinstance(a, cst.BaseCompoundStatement) and not order.contains(a, site)
                   for a in order.ancestors(statement)):
                continue  # may not run when the rebinding does
            end = order.pre[id(statement)]
            root = owner.node if isinstance(owner.node, cst.Module) else owner.node.body
            if not any(start < order.pre.get(id(node), -1) < end and self._may_use(node, name, owner)
                       for node in walk(root, skip=SCOPE_TYPES)):
                return True
        return False

    def _may_use(self, node: cst.CSTNode, name: str, scope: ScopeInfo) -> bool:
        """``node`` reads ``name``, or calls a same-module function (which may read it)."""
        if isinstance(node, cst.Name):
            return node.value == name
        return isinstance(node, cst.Call) and self.graphs.function_scope(node.func, scope) is not None

    def _reaches(self, start: ScopeInfo) -> Set[int]:
        key = id(start)
        if key not in self._reachable:
            self._reachable[key] = {id(s) for s in self.graphs.reachable(start)}
        return self._reachable[key]


class _Foreign:
    """A change of a model's attribute made from another object (a callback's ``self.model.x += 1``)."""

    __slots__ = ("node", "method", "how")

    def __init__(self, node: cst.CSTNode, method: ScopeInfo) -> None:
        self.node = node
        self.method = method
        self.how = AUGMENT if isinstance(node, cst.AugAssign) else "bind"

    @property
    def where(self) -> str:
        return self.method.name


def _keras_repeats(why: Optional[str]) -> bool:
    """Does the repetition reason say Keras runs the function per batch or epoch (a callback method)?
    A method called in a loop of set-up code (``Sequential.__init__`` calling ``add``) is not a change
    after a trace."""
    return why is not None and why.startswith("Keras calls callback")


def _keras_call(function: ScopeInfo) -> bool:
    """A Keras layer's ``call`` (traced under fit/predict and in tf.functions, eager when called eagerly)."""
    graph = function.graph
    return graph is not None and graph.kind == "keras" and function.name == "call"


def _top_in(function: ScopeInfo, owner: ScopeInfo) -> Optional[cst.CSTNode]:
    """The def, class or lambda of ``owner``'s own code that holds ``function``."""
    for scope in function.chain():
        if scope.parent is owner:
            return scope.node
    return None


def _assigning_statement(call: cst.Call, order: _Order) -> Optional[cst.Assign]:
    """The ``name = ...`` statement whose value holds ``call``."""
    for ancestor in order.ancestors(call):
        if isinstance(ancestor, cst.Assign):
            return ancestor
        if isinstance(ancestor, cst.BaseStatement):
            return None
    return None


def _assigned_name(call: cst.Call, order: _Order) -> Optional[str]:
    statement = _assigning_statement(call, order)
    if statement is None or len(statement.targets) != 1 or not isinstance(statement.targets[0].target, cst.Name):
        return None
    return statement.targets[0].target.value


def _site(value) -> Optional[cst.CSTNode]:
    if isinstance(value, tuple):
        return None if value[0] == PARAM else value[1]
    return value


def _late(node: cst.CSTNode, runs: List[Tuple[cst.Call, str]], order: _Order,
          direct: Set[int] = frozenset()) -> Optional[str]:
    """Why a binding at ``node`` comes after a trace: after a call in ``runs``, or in a loop making one.
    After calls that only run the function (``direct``), a binding no later call sees is not late: the
    graph is never run again (a notebook rebinding a value after the last call)."""
    start, end = order.pre[id(node)], order.post[id(node)]
    before = [(call, text) for call, text in runs if id(call) in order.post and order.post[id(call)] < start]
    if before:
        later = any(id(call) in order.pre and order.pre[id(call)] > end for call, _text in runs)
        if later or any(id(call) not in direct for call, _text in before):
            return f"after a call of `{before[0][1]}`"
    for loop in order.ancestors(node):
        if isinstance(loop, _LOOPS):
            for call, text in runs:
                if id(call) in order.pre and order.contains(loop, call):
                    return f"in a loop that calls `{text}`"
    return None


def _call_text(call: cst.Call) -> str:
    """``f`` for ``f(...)``; ``map(fn)`` for ``<anything>.map(fn)``."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return _text(cst.Call(func.attr, call.args))
    return _text(func)


def _describe(name: str, value) -> str:
    """How a binding reads in the source, short: ``x = 0.1``, ``for x in ...``, ``x += 1``."""
    if isinstance(value, tuple):
        if value[0] == ITERATED:
            return f"for {name} in {_text(value[1])}"
        if value[0] == AUGMENTED:
            return _text(value[1], 40)
        return f"{name} = ..."
    return f"{name} = {_text(value)}"


def _text(expr: cst.BaseExpression, limit: int = 30) -> str:
    text = " ".join(cst.Module([]).code_for_node(expr).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."
