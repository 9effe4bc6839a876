"""Eager training facts: GradientTape training steps, what tracing them would
change, and the switches that make every ``tf.function`` run eagerly.

``training_step(with_node, scope)``
    A ``with tf.GradientTape() as tape:`` statement is the heart of a training
    step when the same scope's own body (not a nested function) also takes
    ``tape.gradient(...)`` and hands the gradients, directly or through names
    bound from them (``grads = [tf.clip_by_norm(g, 1.0) for g in grads]``), to
    ``<optimizer>.apply_gradients(...)`` or ``.minimize(...)`` (or calls
    ``.minimize(..., tape=tape)``). The answer says whether the ``with`` lies
    in a ``for``/``while`` body of that scope (an inline step in a loop: no
    function to decorate).

    The update may also be written by hand or come from another library: a
    ``.assign_sub(...)``/``.assign_add(...)``/``.assign(...)`` of a value
    carrying the gradients (``for v, g in zip(variables, grads):
    v.assign_sub(lr * g)``), or ``.apply(grads, variables)`` (Keras 3 and
    Sonnet optimizers). And a function whose block takes the gradients and
    returns them (``return tape.gradient(loss, variables)``, or names bound
    from it) is a step when a same-module caller hands its result to an
    update, directly or through one same-module function it passes them to
    (``grads = compute_gradients(x); apply(grads)``): the answer's
    ``update_scope`` is where the update is written.

``graph_hazards(function)``
    What in a function (its own body, the functions nested in it and the
    same-module functions it calls, also through the module's own objects:
    ``self.opt.apply_gradients(...)`` on an attribute of a class the file
    defines, and on an object the file cannot tell, a parameter such as
    ``optimizer``, every method of that name the module defines;
    ``GraphAnalysis.reach(through_objects=True)``) would fail or behave
    differently once the function is traced by a plain ``tf.function``
    (AutoGraph on). A call to a method the engine cannot find on an object
    of the module's own classes is a hazard too. Deliberately broad: a rule
    offering ``@tf.function`` offers it only where this is empty.

``retracing_arguments(function)``
    Arguments at the same-module call sites of ``function`` that are Python
    numbers changing from call to call (a ``range``/``enumerate`` counter, a
    name augmented in place, a number bound more than once): a
    ``tf.function`` traces again for every new Python value.

``guards(node, scope)``, ``debug_guarded(node, scope)``
    The tests of the ``if``/``while`` statements and conditional expressions
    around ``node`` in its scope's own body, innermost first; and whether one
    of them, or the name of a function around ``node``, mentions "debug" or
    "eager" (a debugging switch).

``eager_switches()``
    Every call of ``tf.config.run_functions_eagerly`` (and its
    ``experimental_`` alias) in the module, with its argument.

``step_function(function)``
    The training step ``function`` runs when called: one in its own body, or
    in a same-module function its own body calls by name or hands on by name
    (``strategy.run(train_step, args=...)`` in a ``distributed_train_step``),
    one level down. None: calling it trains nothing the engine can see.

``under_tape(node, scope)``
    Does ``node`` run while a ``tf.GradientTape`` records: inside a ``with
    tf.GradientTape() ...:`` block of its scope or of an enclosing function,
    or in a same-module function called from inside such a block (one level
    of callers)? A forward pass there is a training step's, not inference.

``statement_of(node, scope)``
    The simple statement line holding ``node`` when ``node`` is the whole
    expression of a statement of its own, and the block (or module) holding
    that line: what a fix removing the statement replaces.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.api import argument
from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import AUGMENTED, ITERATED, SCOPE_TYPES, UNPACKED, ModuleModel, ScopeInfo, assigned, walk

TAPES = frozenset({"tensorflow.GradientTape", "tensorflow.autodiff.GradientTape"})
UPDATE_METHODS = frozenset({"apply_gradients", "minimize"})
# Updates that count only when their arguments carry the gradients: by hand, or another library's optimizer.
_HAND_UPDATES = frozenset({"assign_sub", "assign_add", "assign"})
_OTHER_UPDATES = frozenset({"apply"}) | _HAND_UPDATES
EAGER_SWITCHES = frozenset({
    "tensorflow.config.run_functions_eagerly",
    "tensorflow.config.experimental_run_functions_eagerly",
})
# Builtins a traced body may call with the same effect as eagerly.
_GRAPH_SAFE_BUILTINS = frozenset({
    "len", "range", "zip", "enumerate", "isinstance", "list", "tuple", "dict", "super", "getattr", "hasattr",
    "sorted", "reversed", "sum",
})
# Modules whose functions a traced body may call (TensorFlow traces them).
_GRAPH_MODULES = ("tensorflow", "keras", "tensorflow_probability", "tensorflow_addons")
# Classes of those modules a traced body may construct at every call (no variables, no state).
_GRAPH_SAFE_CLASSES = frozenset({"GradientTape", "TensorArray", "TensorSpec", "TensorShape", "IndexedSlices"})
# Methods that leave TensorFlow for the host.
_HOST_METHODS = frozenset({"numpy", "item", "tolist"})
# Keras model methods that cannot run inside a traced function.
_KERAS_EAGER_METHODS = frozenset({
    "fit", "evaluate", "predict", "train_on_batch", "test_on_batch", "predict_on_batch", "save", "save_weights",
    "summary",
})
# In-place methods of Python containers (list, dict, set, deque).
_MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse", "update", "setdefault", "popitem",
    "add", "discard", "appendleft", "extendleft", "popleft",
})
# Words that mark a condition or function as a debugging switch.
DEBUG_WORDS = re.compile(r"debug|eager", re.IGNORECASE)


@dataclass
class TrainingStep:
    """A GradientTape training step in the own body of ``scope``."""

    scope: ScopeInfo
    tape: cst.With
    gradient: Optional[cst.Call]  # tape.gradient(...), or None for minimize(..., tape=tape)
    update: cst.Call  # optimizer.apply_gradients(...) / .minimize(...) / v.assign_sub(...)
    loop: Optional[cst.CSTNode]  # the For/While of the scope's own body around the tape
    update_scope: Optional[ScopeInfo] = None  # where ``update`` is written, when not ``scope``

    @property
    def where(self) -> ScopeInfo:
        """The scope whose body holds the update."""
        return self.update_scope or self.scope

    @property
    def optimizer(self) -> Optional[cst.BaseExpression]:
        """The object whose method applies the gradients; None for a hand-written update."""
        func = self.update.func
        if not isinstance(func, cst.Attribute) or func.attr.value in _HAND_UPDATES:
            return None
        return func.value


class EagerFacts:
    def __init__(self, model: ModuleModel, graphs: GraphAnalysis, tensors, values, retracing) -> None:
        self.model = model
        self.retracing = retracing  # engine.retracing.Retracing
        self.graphs = graphs
        self.resolver = graphs.resolver
        self.tensors = tensors
        self.values = values
        self._hazards: Dict[int, List[Tuple[cst.CSTNode, str]]] = {}
        self._steps: Dict[int, Optional[TrainingStep]] = {}
        self._switches: Optional[List[Tuple[cst.Call, ScopeInfo, Optional[cst.BaseExpression]]]] = None

    # -- training steps ---------------------------------------------------
    def training_step(self, node: cst.With, scope: ScopeInfo) -> Optional[TrainingStep]:
        tapes = self._tape_names(node, scope)
        if not tapes:
            return None
        gradient = None
        for call in scope.calls:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "gradient" \
                    and isinstance(func.value, cst.Name) and func.value.value in tapes:
                gradient = call
                break
            if isinstance(func, cst.Attribute) and func.attr.value == "compute_gradients":
                # Keras 2's optimizer.compute_gradients(loss, var_list, tape=tape): (grad, var) pairs
                given = argument(call, 99, "tape")
                if isinstance(given, cst.Name) and given.value in tapes:
                    gradient = call
                    break
        found = self._update(scope, gradient, tapes)
        if found is not None:
            return TrainingStep(scope, node, gradient, found[0], self.loop_around(node, scope), found[1])
        if gradient is None or not scope.is_function:
            return None
        carried = self._carried(gradient, scope)
        if not any(isinstance(ret.value, cst.BaseExpression) and _holds(ret.value, carried)
                   for ret in walk(scope.node.body, skip=SCOPE_TYPES) if isinstance(ret, cst.Return)):
            return None
        for call, caller in self.call_sites(scope):  # the gradients returned: applied by a caller?
            found = self._update(caller, call, ())
            if found is not None:
                return TrainingStep(scope, node, gradient, found[0], self.loop_around(node, scope), found[1])
        return None

    def _update_method(self, call: cst.Call, scope: ScopeInfo) -> Optional[str]:
        """The method name when ``call`` is shaped as an update (``x.apply_gradients(...)``,
        ``x.minimize(...)``, ``x.apply(...)``, ``v.assign_sub(...)``...) on an object, not a module
        function (``tf.compat.v1.assign``)."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if method not in UPDATE_METHODS and method not in _OTHER_UPDATES:
            return None
        return method if self._qualname(func, scope) is None else None

    def _update(self, scope: ScopeInfo, gradient: Optional[cst.CSTNode], tapes: Set[str]
                ) -> Optional[Tuple[cst.Call, Optional[ScopeInfo]]]:
        """The call of ``scope``'s own body that applies ``gradient``'s value (or minimizes with one
        of ``tapes``), and the scope it is written in when another (a same-module function ``scope``
        hands the gradients to); an optimizer's update before a hand-written one."""
        carried = self._carried(gradient, scope) if gradient is not None else None
        other = None
        for call in scope.calls:
            method = self._update_method(call, scope)
            if method is None:
                continue
            tape_arg = argument(call, 99, "tape")
            if method == "minimize" and isinstance(tape_arg, cst.Name) and tape_arg.value in tapes:
                return call, None
            if carried is not None and _carries(call, carried):
                if method in UPDATE_METHODS:
                    return call, None
                other = other or call
        if other is not None:
            return other, None
        if carried is None:
            return None
        for call in scope.calls:
            callee = self.graphs.function_scope(call.func, scope)
            if callee is None or callee is scope or not callee.is_function or isinstance(callee.node, cst.Lambda):
                continue
            passed = {parameter for index, arg in enumerate(call.args)
                      if arg.keyword is None and arg.star == "" and _holds(arg.value, carried)
                      for parameter in [bindings.parameter_name(callee, index + _bound_offset(call, callee))]
                      if parameter is not None}
            passed |= {arg.keyword.value for arg in call.args
                       if arg.keyword is not None and _holds(arg.value, carried)}
            if passed:
                found = self._update_of_names(callee, passed)
                if found is not None:
                    return found, callee
        return None

    def _update_of_names(self, scope: ScopeInfo, names: Set[str]) -> Optional[cst.Call]:
        """An update call of ``scope`` whose arguments carry one of ``names`` (its parameters)."""
        carried = self._carried(None, scope, names)
        return next((call for call in scope.calls
                     if self._update_method(call, scope) is not None and _carries(call, carried)), None)

    def step_function(self, function: ScopeInfo, depth: int = 1) -> Optional[TrainingStep]:
        """The training step calling ``function`` runs (see the module's docs)."""
        key = id(function)
        if key in self._steps and depth == 1:
            return self._steps[key]
        found = self._own_step(function)
        if found is None and depth > 0:
            for call in function.calls:
                names = [call.func] + [arg.value for arg in call.args]
                for expr in names:
                    if not isinstance(expr, cst.Name):
                        continue
                    inner = function.lookup_def(expr.value)
                    if inner is not None and inner is not function:
                        found = self.step_function(inner, depth - 1)
                        if found is not None:
                            break
                if found is not None:
                    break
        if depth == 1:
            self._steps[key] = found
        return found

    def _own_step(self, function: ScopeInfo) -> Optional[TrainingStep]:
        if not function.is_function or isinstance(function.node, cst.Lambda):
            return None
        for node in walk(function.node.body, skip=SCOPE_TYPES):
            if node.__class__ is cst.With:
                step = self.training_step(node, function)
                if step is not None:
                    return step
        return None

    def _tape_names(self, node: cst.With, scope: ScopeInfo) -> Set[str]:
        names: Set[str] = set()
        for item in node.items:
            value = item.item
            if isinstance(value, cst.Call) and self._qualname(value.func, scope) in TAPES \
                    and item.asname is not None and isinstance(item.asname.name, cst.Name):
                names.add(item.asname.name.value)
        return names

    @staticmethod
    def _carried(gradient: Optional[cst.CSTNode], scope: ScopeInfo,
                 names: Set[str] = frozenset()) -> Tuple[Set[int], Set[str]]:
        """What carries the gradient call's result in ``scope``: the ids of the call's nodes, and
        the local names bound from it (or from one of ``names``), directly or through each other."""
        gradient_ids = bindings.descendants(gradient) if gradient is not None else set()
        tainted: Set[str] = set(names)
        changed = True
        while changed:
            changed = False
            for name, values in scope.assigned.items():
                if name in tainted:
                    continue
                for value in values:
                    bound = _bound_expression(value)
                    if bound is None:
                        continue
                    if any(id(n) in gradient_ids for n in walk(bound)) or bindings.mentions(bound) & tainted \
                            or (_comprehension_reads(bound) & tainted):
                        tainted.add(name)
                        changed = True
                        break
        return gradient_ids, tainted

    def loop_around(self, node: cst.CSTNode, scope: ScopeInfo) -> Optional[cst.CSTNode]:
        """The innermost ``for``/``while`` of ``scope``'s own body whose body
        (or a ``while`` test) holds ``node`` (``bindings.loop_around``)."""
        return bindings.loop_around(node, scope)

    # -- would tracing change it? -----------------------------------------
    def graph_hazards(self, function: ScopeInfo) -> List[Tuple[cst.CSTNode, str]]:
        key = id(function)
        found = self._hazards.get(key)
        if found is None:
            found = []
            reached, unresolved = self.graphs.reach(function, through_objects=True)
            for scope in reached:
                found.extend(self._own_hazards(scope))
            for call, _scope in unresolved:
                found.append((call, "calls a method of the module's own object that the engine cannot find"))
            self._hazards[key] = found
        return found

    def _own_hazards(self, scope: ScopeInfo) -> List[Tuple[cst.CSTNode, str]]:
        found: List[Tuple[cst.CSTNode, str]] = []
        body = scope.node.body if not isinstance(scope.node, cst.Module) else None
        if body is None:
            return found
        local = set(scope.assigned) - scope.globals
        for node in walk(body, skip=SCOPE_TYPES):
            why = None
            if isinstance(node, (cst.Global, cst.Nonlocal)):
                why = "rebinds outer state once per trace"
            elif isinstance(node, (cst.Yield, cst.Await)):
                why = "is not a plain function"
            elif isinstance(node, cst.Call):
                why = self._call_hazard(node, scope, local)
            elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    for element in bindings.target_elements(target):
                        if isinstance(element, cst.Attribute):
                            why = "stores on an object once per trace (a symbolic tensor afterwards)"
                        elif isinstance(element, cst.Subscript) and not (
                                isinstance(element.value, cst.Name) and element.value.value in local):
                            why = "changes an outer container once per trace"
            elif isinstance(node, (cst.If, cst.While)) and self.tensors.is_tensor(node.test, scope):
                why = "branches on a tensor in Python"
            elif isinstance(node, cst.Return) and node.value is not None and self._python_result(node.value, scope):
                why = "returns a Python value"
            if why is not None:
                found.append((node, why))
        found.extend(self._frozen_reads(scope, body, local))
        return found

    def _call_hazard(self, call: cst.Call, scope: ScopeInfo, local: Set[str]) -> Optional[str]:
        func = call.func
        qualname = self._qualname(func, scope)
        if qualname is not None:
            top = qualname.split(".", 1)[0]
            if top not in _GRAPH_MODULES:
                return f"calls `{qualname}`, which runs in Python at trace time only"
            last = qualname.rsplit(".", 1)[-1]
            if last[:1].isupper() and last not in _GRAPH_SAFE_CLASSES:
                return f"builds a `{last}` at every call"
            return None
        if isinstance(func, cst.Name):
            if bindings.is_builtin(func.value, scope) and func.value not in _GRAPH_SAFE_BUILTINS:
                return f"calls `{func.value}`, which runs in Python at trace time only"
            return None
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _HOST_METHODS:
                return f"calls `.{method}()`, which fails on a traced tensor"
            if method in _KERAS_EAGER_METHODS:
                return f"calls `.{method}()`, which cannot run inside a traced function"
            if method in _MUTATING_METHODS and not (isinstance(func.value, cst.Name) and func.value.value in local):
                return f"calls `.{method}()` on outer state once per trace"
        return None

    def _python_result(self, value: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """A returned value that is a Python number/string/None or NumPy array
        (a tensor after tracing); tuple, list and dict displays are looked into."""
        if isinstance(value, (cst.Tuple, cst.List)):
            return any(self._python_result(e.value, scope) for e in value.elements
                       if not isinstance(e, cst.StarredElement))
        if isinstance(value, cst.Dict):
            return any(self._python_result(e.value, scope) for e in value.elements if isinstance(e, cst.DictElement))
        kind = self.values.kind(value, scope)
        return kind in ("python-scalar", "python-none", "numpy-array")

    def _frozen_reads(self, scope: ScopeInfo, body: cst.CSTNode, local: Set[str]) -> List[Tuple[cst.CSTNode, str]]:
        """Names read from an enclosing scope that rebinds them: tracing keeps the value seen at trace."""
        found = []
        for name in sorted(bindings.mentions(body) - local):
            binding = assigned(name, scope)
            if binding is None or binding.scope is scope:
                continue
            if binding.rebound or any(isinstance(v, tuple) and v[0] == ITERATED for v in binding.own_values):
                found.append((body, f"reads `{name}`, rebound in `{binding.scope.name}`: the value at trace is kept"))
        return found

    # -- under a tape -----------------------------------------------------
    def under_tape(self, node: cst.CSTNode, scope: ScopeInfo, callers: int = 1) -> bool:
        current: Optional[ScopeInfo] = scope
        at: cst.CSTNode = node
        while current is not None:
            for parent in current.ancestors(at):
                if isinstance(parent, cst.With) and any(
                        isinstance(item.item, cst.Call) and self._qualname(item.item.func, current) in TAPES
                        for item in parent.items):
                    return True
            if not current.is_function:
                return False
            if callers > 0 and any(self.under_tape(call, where, callers - 1)
                                   for call, where in self.call_sites(current)):
                return True
            at = current.node
            current = current.parent
        return False

    # -- call sites -------------------------------------------------------
    def call_sites(self, function: ScopeInfo) -> List[Tuple[cst.Call, ScopeInfo]]:
        return [(call, scope) for call, scope in self.model.index.get("Call", ())
                if self.graphs.function_scope(call.func, scope) is function]

    def retracing_arguments(self, function: ScopeInfo) -> List[Tuple[cst.CSTNode, str]]:
        """Arguments of the calls of ``function`` that are Python values changing
        per loop iteration (``semantic.retracing``): one trace per value once traced."""
        found = []
        for call, scope in self.call_sites(function):
            for arg in call.args:
                why = self.retracing.per_iteration(arg.value, scope, call)
                if why is not None:
                    found.append((arg.value, f"{why}: one trace per value"))
        return found

    # -- eager switches and guards ----------------------------------------
    def eager_switches(self) -> List[Tuple[cst.Call, ScopeInfo, Optional[cst.BaseExpression]]]:
        """The ``run_functions_eagerly(...)`` calls of the file and their argument (found once)."""
        if self._switches is None:
            self._switches = [(call, scope, argument(call, 0, "run_eagerly"))
                              for call, scope in self.model.index.get("Call", ())
                              if self._qualname(call.func, scope) in EAGER_SWITCHES]
        return self._switches

    def guards(self, node: cst.CSTNode, scope: ScopeInfo) -> List[cst.BaseExpression]:
        tests = []
        child = node
        for parent in scope.ancestors(node):
            if isinstance(parent, (cst.If, cst.While)) and child is not parent.test:
                tests.append(parent.test)
            elif isinstance(parent, cst.IfExp) and child is not parent.test:
                tests.append(parent.test)
            child = parent
        return tests

    def debug_guarded(self, node: cst.CSTNode, scope: ScopeInfo) -> bool:
        """Is ``node`` behind a debugging switch: an ``if``/``while``/conditional
        expression around it whose test mentions "debug" or "eager"
        (``if FLAGS.debug:``, ``if mode == "eager_tf":``), or a function around
        it whose name does (``def enable_eager_debugging():``)?"""
        module = self.model.module
        if any(DEBUG_WORDS.search(module.code_for_node(test)) for test in self.guards(node, scope)):
            return True
        return any(s.is_function and DEBUG_WORDS.search(s.name) for s in scope.chain())

    def statement_of(self, node: cst.CSTNode, scope: ScopeInfo
                     ) -> Optional[Tuple[cst.SimpleStatementLine, cst.CSTNode]]:
        """(line, holder): ``node`` is the expression of an ``Expr`` that is the
        only statement of ``line``; ``holder`` is the IndentedBlock or Module
        whose body lists ``line``."""
        ancestors = list(scope.ancestors(node))
        if len(ancestors) < 3:
            return None
        expr, line, holder = ancestors[0], ancestors[1], ancestors[2]
        if not (isinstance(expr, cst.Expr) and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
            return None
        if not isinstance(holder, (cst.IndentedBlock, cst.Module)):
            return None
        return line, holder

    # -- helpers ----------------------------------------------------------
    def _qualname(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        return self.resolver.qualname(expr, scope)


def _holds(expr: cst.BaseExpression, carried: Tuple[Set[int], Set[str]]) -> bool:
    """Does ``expr`` hold the gradients (``EagerFacts._carried``'s answer)?"""
    gradient_ids, tainted = carried
    if any(id(n) in gradient_ids for n in walk(expr)):
        return True
    return bool((bindings.mentions(expr) | _comprehension_reads(expr)) & tainted)


def _carries(update: cst.Call, carried: Tuple[Set[int], Set[str]]) -> bool:
    """Do the update's arguments hold the gradients?"""
    return any(_holds(arg.value, carried) for arg in update.args)


def _bound_offset(call: cst.Call, callee: ScopeInfo) -> int:
    """1 for ``self.apply(...)`` on a method (its first parameter is the object), else 0."""
    parent = callee.parent
    return 1 if isinstance(call.func, cst.Attribute) and parent is not None and parent.kind == "class" else 0


def _bound_expression(value) -> Optional[cst.CSTNode]:
    """The expression a binding takes its value from (None for parameters, with-targets...)."""
    if isinstance(value, cst.CSTNode):
        return value
    if isinstance(value, tuple) and value and value[0] in (UNPACKED, ITERATED):
        return value[1]
    if isinstance(value, tuple) and value and value[0] == AUGMENTED:
        return value[1].value
    return None


def _comprehension_reads(expr: cst.CSTNode) -> Set[str]:
    """Names read inside comprehensions at or below ``expr`` (``mentions`` skips them)."""
    found: Set[str] = set()
    for node in walk(expr):
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            for inner in walk(node):
                if isinstance(inner, cst.Name):
                    found.add(inner.value)
    return found
