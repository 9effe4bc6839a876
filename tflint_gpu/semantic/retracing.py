"""Facts for the retracing rules: which calls call a ``tf.function``, which
arguments change per loop iteration, where ``tf.function`` objects are made,
and which ``tf.function`` bodies call themselves.

``called_tf_function(call, scope)``
    The ``tf.function`` of this module a call calls, as a ``TfFunctionRef``:
    ``f(...)`` where ``f`` is a ``def`` decorated with ``tf.function`` (any
    spelling) or rebound to itself wrapped (``f = tf.function(f)``); ``g(...)``
    where ``g`` is bound once to ``tf.function(...)``; ``self.m(...)`` where
    ``m`` is a method of the class decorated with ``tf.function``, or an
    attribute the class's methods bind only to ``tf.function(...)``. A plain
    ``f(...)`` of a function wrapped under another name (``g = tf.function(f)``)
    is not a call of a ``tf.function``.

``per_iteration(expr, scope, at)``
    Why ``expr`` (an argument of the call ``at`` in ``scope``'s own body) is a
    Python value that changes from one iteration to the next of a loop around
    ``at``; ``None`` when it is not, or when that cannot be told. Varying
    values: the target of a ``for`` around ``at`` over ``range(...)`` (also
    through ``reversed``, ``tqdm``/``trange``), the index of
    ``enumerate(...)``; a local counter every binding of which is a Python
    number and which a loop around ``at`` rebinds (``step += 1``, ``i = i +
    1``); a local bound in a loop around ``at`` to arithmetic on varying
    values and Python constants (``0.1 * 0.5 ** epoch``), ``int()``/
    ``float()``/``str()``/``round()``/``abs()`` of one, an f-string
    mentioning one; a tuple, list, set or dict display holding one. Not
    varying: comparisons and ``not`` (a bool takes two values, so two traces
    at most), loops over a list of constants (as many traces as elements),
    anything whose kind is unknown (a parameter, an attribute, a call of an
    unknown function: it may be a tensor).

``created_tf_function(node, scope)`` / ``calls_of_created(node, scope)``
    A ``def`` decorated with ``tf.function`` or a ``tf.function(...)`` call
    (not a decorator) that makes a new ``tf.function`` object each time it
    runs; and the calls of that object in the same scope: called at once
    (``tf.function(f)(x)``), or by the name it is bound to (the only binding
    of that name in the scope).

``recursive_call(function)``
    A call in a ``tf.function``'s body (or in what it calls in this module,
    nested functions included) that calls that ``tf.function`` again (as
    ``called_tf_function`` sees it: ``g = tf.function(f)`` with ``f`` calling
    ``f`` is plain Python recursion inside one trace, not this).

``loops_around(node, scope)``
    The ``for``/``while`` statements and comprehensions of ``scope``'s own body
    whose repeated part holds ``node``, innermost first.

Names are looked up flow-aware (``model.lookup(name, scope, at)``): only
the bindings that can reach the read count. A name bound outside the scope
counts as a Python constant only when ``ValueKinds`` says it is one.

Cost: linear in the file. Loops are found by one walk of a scope's own body,
the first time it is asked about (each node -> the innermost loop holding it);
the class wrappers and the names ``tf.function(...)`` calls are bound to come
from one pass over the module's assignments; calls are grouped once per scope
by callee (``tests/test_growth.py`` counts the lines run on N and 4N copies).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.api import TF_FUNCTION, argument, keyword
from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import (
    ASSIGNED, AUGMENTED, DEF, ITERATED, SCOPE_TYPES, ModuleModel, ScopeInfo, children, lookup, walk,
)
from tflint_gpu.semantic.values import KERAS, METRIC, PY_SCALAR, VARIABLE, ValueKinds

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
_LOOPS = (cst.For, cst.While) + _COMPREHENSIONS
# Builtins whose result is a Python scalar whatever the argument (eagerly).
_PYTHON_RESULT = frozenset({"int", "float", "str", "round", "abs", "len"})
# Builtins that pass a varying argument through as a varying Python value.
_PASS_THROUGH = frozenset({"int", "float", "str", "round", "abs"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)
_PROGRESS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm"})
_PROGRESS_RANGE = frozenset({"tqdm.trange", "tqdm.auto.trange", "tqdm.notebook.trange", "tqdm.std.trange"})


@dataclass
class TfFunctionRef:
    """A ``tf.function`` of this module, as a call site reaches it."""

    name: str  # how the call spells it: "step", "self.step"
    function: Optional[ScopeInfo]  # the Python function it wraps, if known
    options: Optional[cst.Call]  # the ``tf.function(...)`` call giving its options, if any

    def option(self, name: str, position: int = -1) -> Optional[cst.BaseExpression]:
        """The value given for a ``tf.function`` option (``None`` literal counts as not given)."""
        if self.options is None:
            return None
        value = argument(self.options, position, name) if position >= 0 else None
        if value is None:
            found = keyword(self.options, name)
            value = found.value if found is not None else None
        if isinstance(value, cst.Name) and value.value == "None":
            return None
        return value

    @property
    def open_options(self) -> bool:
        """``tf.function(f, **options)``: options this module cannot read."""
        return self.options is not None and any(arg.star for arg in self.options.args)

    @property
    def input_signature(self) -> bool:
        wraps = self.options is not None and bool(self.options.args) and self.options.args[0].keyword is None
        return self.option("input_signature", 1 if wraps else -1) is not None

    @property
    def converts_python_arguments(self) -> bool:
        """Are Python arguments turned into tensors before tracing? With an
        ``input_signature`` (measured: a Python int becomes an int32 tensor,
        one trace), or maybe with ``experimental_follow_type_hints``."""
        hints = self.option("experimental_follow_type_hints")
        return self.input_signature or self.open_options or (
            hints is not None and not (isinstance(hints, cst.Name) and hints.value == "False"))


class Retracing:
    def __init__(self, model: ModuleModel, graphs: GraphAnalysis, values: ValueKinds) -> None:
        self.model = model
        self.graphs = graphs
        self.values = values
        self.resolver = graphs.resolver
        # id(scope) -> {id(node): the innermost loop of that scope whose repeated
        # part holds the node (or an _Only)}; see ``_scope_loops``.
        self._loops: Dict[int, Dict[int, Any]] = {}
        self._for_of_iter: Dict[int, cst.For] = {}
        self._decorators: Optional[Set[int]] = None
        self._attribute_wrappers: Optional[Dict[int, Dict[str, Optional[cst.Call]]]] = None
        self._assign_of_value: Optional[Dict[int, Tuple[cst.Assign, ScopeInfo]]] = None
        # id(scope) -> (id(func) -> calls, callee name -> calls), for that scope's calls
        self._calls: Dict[int, Tuple[Dict[int, List[cst.Call]], Dict[str, List[cst.Call]]]] = {}
        # (id(scope), name) -> id(what the name is bound to) -> the calls reaching it
        self._made: Dict[Tuple[int, str], Dict[int, List[cst.Call]]] = {}

    # -- what a call calls --------------------------------------------------
    def called_tf_function(self, call: cst.Call, scope: ScopeInfo) -> Optional[TfFunctionRef]:
        func = call.func
        if isinstance(func, cst.Name):
            return self._named(func.value, scope, call)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            method = self.graphs.function_scope(func, scope)
            text = f"{func.value.value}.{func.attr.value}"
            if method is not None:
                return self._decorated(method, text)
            cls = scope.method_class()
            if cls is not None and func.value.value == bindings.first_parameter(scope.function() or scope):
                wrapper = self._class_wrappers(cls).get(func.attr.value)
                if wrapper is not None:
                    return TfFunctionRef(text, self._wrapped_function(wrapper, scope), _options(wrapper))
        return None

    def _named(self, name: str, scope: ScopeInfo, at: cst.CSTNode) -> Optional[TfFunctionRef]:
        found = lookup(name, scope, at)
        if found is None:
            return None
        if found.kind == DEF:
            return self._decorated(found.target, name)
        value = found.single_value
        if value is not None and self._is_tf_function_call(value, found.scope):
            return TfFunctionRef(name, self._wrapped_function(value, found.scope), _options(value))
        return None

    def _decorated(self, function: ScopeInfo, text: str) -> Optional[TfFunctionRef]:
        info = function.graph
        if info is None or info.kind != "tf.function" or not isinstance(function.node, cst.FunctionDef):
            return None
        if not any(d.decorator is info.origin for d in function.node.decorators):
            return None
        return TfFunctionRef(text, function, info.origin if isinstance(info.origin, cst.Call) else None)

    def _is_tf_function_call(self, value, scope: ScopeInfo) -> bool:
        if not isinstance(value, cst.Call):
            return False
        func = value.func
        if isinstance(func, cst.Call):  # tf.function(jit_compile=True)(f), not tf.function(f)(x)
            return self.resolver.qualname(func.func, scope) == TF_FUNCTION and argument(func, 0, "func") is None
        return self.resolver.qualname(func, scope) == TF_FUNCTION and argument(value, 0, "func") is not None

    def _wrapped_function(self, call: cst.Call, scope: ScopeInfo) -> Optional[ScopeInfo]:
        return self.graphs.function_scope(argument(call, 0, "func"), scope)

    def _class_wrappers(self, cls: ScopeInfo) -> Dict[str, Optional[cst.Call]]:
        """``self.attr`` -> the ``tf.function(...)`` call the class's methods bind
        it to (None if some binding is anything else)."""
        if self._attribute_wrappers is None:
            self._attribute_wrappers = self._all_class_wrappers()
        return self._attribute_wrappers.get(id(cls), {})

    def _all_class_wrappers(self) -> Dict[int, Dict[str, Optional[cst.Call]]]:
        """``_class_wrappers`` of every class, from one pass over the assignments."""
        wrappers: Dict[int, Dict[str, Optional[cst.Call]]] = {}
        for node, scope in self.model.index.get("Assign", ()):
            function = scope.function()
            cls = function.enclosing_class if function is not None else None
            if cls is None:
                continue
            found = wrappers.setdefault(id(cls), {})
            first = bindings.first_parameter(function)
            for target in node.targets:
                for element in bindings.target_elements(target.target):
                    if isinstance(element, cst.Attribute) and isinstance(element.value, cst.Name) \
                            and element.value.value == first:
                        attr = element.attr.value
                        good = element is target.target and self._is_tf_function_call(node.value, scope)
                        if attr in found and found[attr] is not None and good:
                            found[attr] = None  # bound twice: which one is unknown
                        elif attr not in found:
                            found[attr] = node.value if good else None
                        elif not good:
                            found[attr] = None
        return wrappers

    # -- loops ----------------------------------------------------------------
    def loops_around(self, node: cst.CSTNode, scope: ScopeInfo) -> List[cst.CSTNode]:
        innermost = self._scope_loops(scope)
        found = []
        loop = innermost.get(id(node))
        if isinstance(loop, _Only):
            return [loop.loop]
        while loop is not None:
            found.append(loop)
            loop = innermost.get(id(loop))
        return found

    def _holds(self, loop: cst.CSTNode, node: cst.CSTNode, scope: ScopeInfo) -> bool:
        """Does a repeated part of ``loop`` (a loop of ``scope``'s own body) hold ``node``?"""
        return any(candidate is loop for candidate in self.loops_around(node, scope))

    def _scope_loops(self, scope: ScopeInfo) -> Dict[int, Any]:
        """id(node) -> the innermost loop of ``scope``'s own body whose repeated
        part holds it (its next loop out is the entry of the loop itself), from
        one walk of that body."""
        found = self._loops.get(id(scope))
        if found is not None:
            return found
        found = self._loops[id(scope)] = {}
        body = getattr(scope.node, "body", None) if not isinstance(scope.node, cst.Module) else scope.node
        if body is None or isinstance(body, SCOPE_TYPES):
            return found
        part_of: Dict[int, cst.CSTNode] = {}  # id(a repeated part) -> its loop
        stack: List[Tuple[cst.CSTNode, Optional[cst.CSTNode]]] = [(body, None)]
        while stack:
            node, loop = stack.pop()
            owner = part_of.pop(id(node), None)
            if owner is not None:
                loop = owner
            if loop is not None:
                found[id(node)] = loop
            if node is not body and isinstance(node, SCOPE_TYPES):
                if owner is not None:
                    # A lambda as a loop's part (``[lambda: i for i in x]``): what
                    # it holds is in that loop's part, and in no loop around it.
                    only = _Only(owner)
                    for inner in walk(node, skip=SCOPE_TYPES):
                        if inner is not node:
                            found[id(inner)] = only
                continue
            if isinstance(node, _LOOPS):
                for part in _repeated_parts(node):
                    part_of[id(part)] = node
                if isinstance(node, cst.For):
                    self._for_of_iter[id(node.iter)] = node
            stack.extend((child, loop) for child in reversed(children(node)))
        return found

    # -- per-iteration Python values ----------------------------------------
    def per_iteration(self, expr: cst.BaseExpression, scope: ScopeInfo, at: cst.CSTNode) -> Optional[str]:
        loops = self.loops_around(at, scope)
        if not loops:
            return None
        return _Values(self, scope, loops).analyse(expr, at)[1]

    def iteration_index(self, loop: cst.CSTNode, name: str, scope: ScopeInfo) -> Optional[str]:
        """If ``name`` is a target ``loop`` binds to a new Python int each
        iteration, the loop's header text for messages."""
        clauses: List[Tuple[cst.BaseExpression, cst.BaseExpression]] = []
        if isinstance(loop, cst.For):
            clauses.append((loop.target, loop.iter))
        elif isinstance(loop, _COMPREHENSIONS):
            comp: Optional[cst.CompFor] = loop.for_in
            while comp is not None:
                clauses.append((comp.target, comp.iter))
                comp = comp.inner_for_in
        for target, iterable in clauses:
            if name not in bindings.target_names(target):
                continue
            kind = self._iterable_kind(iterable, scope)
            if kind == "range" and isinstance(target, cst.Name):
                return f"for {name} in {kind}(...)"
            if kind == "enumerate" and isinstance(target, (cst.Tuple, cst.List)) and target.elements \
                    and isinstance(target.elements[0].value, cst.Name) and target.elements[0].value.value == name:
                return f"for {name}, ... in enumerate(...)"
            return None
        return None

    def _iterable_kind(self, iterable: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        for _ in range(3):
            if not isinstance(iterable, cst.Call):
                return None
            func = iterable.func
            if isinstance(func, cst.Name) and bindings.is_builtin(func.value, scope):
                if func.value in ("range", "enumerate"):
                    return func.value
                if func.value == "reversed" and iterable.args:
                    iterable = iterable.args[0].value
                    continue
                return None
            qualname = self.resolver.qualname(func, scope)
            if qualname in _PROGRESS_RANGE:
                return "range"
            if qualname in _PROGRESS and iterable.args:
                iterable = iterable.args[0].value
                continue
            return None
        return None

    def for_of_iter(self, iterable: cst.BaseExpression, scope: ScopeInfo) -> Optional[cst.For]:
        self._scope_loops(scope)
        return self._for_of_iter.get(id(iterable))

    # -- tf.function objects made repeatedly -------------------------------
    def created_tf_function(self, node: cst.CSTNode, scope: ScopeInfo) -> Optional[str]:
        """The name a new ``tf.function`` made at ``node`` is bound to
        ("" when it is called at once or not bound to a plain name), or None
        if ``node`` makes no ``tf.function``."""
        if isinstance(node, cst.FunctionDef):
            inner = self.model.scope_of_node.get(node)
            if inner is not None and self._decorated(inner, node.name.value) is not None:
                return node.name.value
            return None
        if isinstance(node, cst.Call) and id(node) not in self._decorator_ids() \
                and self._is_tf_function_call(node, scope):
            if self._assign_of_value is None:
                self._assign_of_value = {id(a.value): (a, owner) for a, owner in self.model.index.get("Assign", ())}
            assign, owner = self._assign_of_value.get(id(node), (None, None))
            if assign is not None and owner is scope and len(assign.targets) == 1 \
                    and isinstance(assign.targets[0].target, cst.Name):
                return assign.targets[0].target.value
            return ""
        return None

    def calls_of_created(self, node: cst.CSTNode, scope: ScopeInfo) -> List[cst.Call]:
        name = self.created_tf_function(node, scope)
        if name is None:
            return []
        by_func, by_name = self._scope_calls(scope)
        if name == "":
            return list(by_func.get(id(node), ()))
        made = self.model.scope_of_node.get(node) if isinstance(node, cst.FunctionDef) else node
        return list(self._calls_by_made(scope, name, by_name).get(id(made), ()))

    def _calls_by_made(self, scope: ScopeInfo, name: str,
                       by_name: Dict[str, List[cst.Call]]) -> Dict[int, List[cst.Call]]:
        """The calls ``name(...)`` of ``scope`` grouped by what the name reaching
        each is bound to in ``scope``: id of the def's ScopeInfo, or of the one
        value assigned; once per scope and name."""
        key = (id(scope), name)
        groups = self._made.get(key)
        if groups is None:
            groups = self._made[key] = {}
            for call in by_name.get(name, ()):
                binding = lookup(name, scope, call)
                if binding is None or binding.scope is not scope:
                    continue
                if binding.kind == DEF:
                    made = binding.target
                elif binding.kind == ASSIGNED:
                    made = binding.single_value
                else:
                    continue
                if isinstance(made, (cst.CSTNode, ScopeInfo)):  # never a binding marker
                    groups.setdefault(id(made), []).append(call)
        return groups

    def _scope_calls(self, scope: ScopeInfo) -> Tuple[Dict[int, List[cst.Call]], Dict[str, List[cst.Call]]]:
        """The calls of ``scope``'s own code by id of their callee expression and
        by the name they call (``f(...)``), in source order, once per scope."""
        found = self._calls.get(id(scope))
        if found is None:
            by_func: Dict[int, List[cst.Call]] = {}
            by_name: Dict[str, List[cst.Call]] = {}
            for call in scope.calls:
                by_func.setdefault(id(call.func), []).append(call)
                if isinstance(call.func, cst.Name):
                    by_name.setdefault(call.func.value, []).append(call)
            found = self._calls[id(scope)] = (by_func, by_name)
        return found

    def captured_from_loop(self, node: cst.CSTNode, scope: ScopeInfo, loop: cst.CSTNode) -> Optional[str]:
        """A name the ``tf.function`` made at ``node`` reads from ``scope`` whose
        value, where the function is made, was bound inside ``loop`` (its target
        or its body): each iteration then makes a genuinely different function
        (``layer = aug(); @tf.function def apply(x): return layer(x)``), which
        cannot be made once before the loop."""
        if isinstance(node, cst.FunctionDef):
            made = self.model.scope_of_node.get(node)
        else:  # tf.function(f) or tf.function(jit_compile=True)(f)
            made = self.graphs.function_scope(argument(node, 0, "func"), scope) if isinstance(node, cst.Call) else None
        if made is None:
            return None
        target_iter = loop.iter if isinstance(loop, cst.For) else None
        for current in self.graphs.reachable(made):
            if not any(outer is made for outer in current.chain()):
                continue  # a same-module callee: its reads are its own
            body = current.node.body if not isinstance(current.node, cst.Module) else None
            if body is None:
                continue
            for name in sorted(bindings.mentions(body)):
                found = lookup(name, current)
                if found is None or found.scope is not scope or found.kind != ASSIGNED:
                    continue
                reaching = lookup(name, scope, at=node)
                for value in reaching.own_values if reaching is not None else ():
                    site = value[1] if isinstance(value, tuple) else value
                    if site is target_iter or (isinstance(site, cst.CSTNode) and self._holds(loop, site, scope)):
                        return name
        return None

    def captured_per_call(self, node: cst.CSTNode, scope: ScopeInfo) -> Optional[str]:
        """A name the ``tf.function`` made at ``node`` reads from ``scope`` (in
        its body, in functions nested in it, or in functions ``scope`` defines
        that it names) that ``scope`` binds to a stateful object it creates:
        a Keras model or layer, a metric, a ``tf.Variable``. Each call of
        ``scope`` then makes a function over new objects (``model = Net();
        @tf.function def step(x): ... model(x) ...``): made once, it could not
        see them, and given them as arguments it traces again for each new
        object (TF 2.21: 3 traces for 3 new models and metrics)."""
        if isinstance(node, cst.FunctionDef):
            made = self.model.scope_of_node.get(node)
        else:
            made = self.graphs.function_scope(argument(node, 0, "func"), scope) if isinstance(node, cst.Call) else None
        if made is None:
            return None
        todo = [made]
        seen: Set[int] = set()
        while todo:
            root = todo.pop()
            if id(root) in seen:
                continue
            seen.add(id(root))
            nested = [root]
            while nested:
                current = nested.pop()
                nested.extend(current.nested)  # functions defined in it, called or handed on
                body = current.node.body if not isinstance(current.node, cst.Module) else None
                if body is None:
                    continue
                for name in sorted(bindings.mentions(body)):
                    found = lookup(name, current)
                    if found is None or found.scope is not scope:
                        continue
                    if found.kind == DEF and isinstance(found.target, ScopeInfo) and found.target.parent is scope:
                        todo.append(found.target)  # a local function it calls or hands on
                    elif found.kind == ASSIGNED and any(self._stateful(value, scope) for value in found.own_values):
                        return name
        return None

    def _stateful(self, value, scope: ScopeInfo) -> bool:
        """Is ``value`` a new Keras model, layer, metric or optimizer, or a variable?"""
        if not isinstance(value, cst.BaseExpression):
            return False
        if self.values.kind(value, scope) in (KERAS, METRIC, VARIABLE):
            return True
        if not isinstance(value, cst.Call):
            return False
        if isinstance(value.func, cst.Name):
            cls = scope.lookup_class(value.func.value)
            if cls is not None:
                return self.graphs.is_keras_class(cls)  # a Keras subclass of this module
        qualname = self.values.resolver.qualname(value.func, scope) or ""
        return qualname.startswith("keras.optimizers.") and qualname.rsplit(".", 1)[1][:1].isupper() \
            and ".schedules." not in qualname

    def _decorator_ids(self) -> Set[int]:
        if self._decorators is None:
            self._decorators = {
                id(n) for node, _ in self.model.index.get("FunctionDef", ())
                for d in node.decorators for n in walk(d.decorator)
            }
        return self._decorators

    # -- recursion ------------------------------------------------------------
    def recursive_call(self, function: ScopeInfo) -> Optional[Tuple[cst.Call, ScopeInfo]]:
        """A call, in ``function`` or what it reaches in this module, of ``function`` itself."""
        for current in self.graphs.reachable(function):
            for call in current.calls:
                if self.graphs.function_scope(call.func, current) is function:
                    ref = self.called_tf_function(call, current)
                    if ref is not None and ref.function is function:
                        return call, current
        return None


class _Values:
    """Per-iteration analysis of expressions at one call site."""

    def __init__(self, facts: Retracing, scope: ScopeInfo, loops: List[cst.CSTNode]) -> None:
        self.facts = facts
        self.scope = scope
        self.loops = loops
        self.loop_ids = {id(loop) for loop in loops}
        self.active: Set[str] = set()

    def analyse(self, expr: cst.BaseExpression, at: cst.CSTNode) -> Tuple[bool, Optional[str]]:
        """(is a Python number or string, why it changes per iteration), read at ``at``."""
        if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
            return True, None
        if isinstance(expr, cst.FormattedString):
            for part in expr.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    reason = self.analyse(part.expression, at)[1]
                    if reason is not None:
                        return True, reason
            return True, None
        if isinstance(expr, cst.Name):
            return self._name(expr.value, at)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self.analyse(expr.expression, at)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
            left, right = self.analyse(expr.left, at), self.analyse(expr.right, at)
            if left[0] and right[0]:
                return True, left[1] or right[1]
            return False, None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) \
                and bindings.is_builtin(expr.func.value, self.scope) and expr.func.value in _PYTHON_RESULT:
            reason = None
            if expr.func.value in _PASS_THROUGH and expr.args and not expr.args[0].star:
                reason = self.analyse(expr.args[0].value, at)[1]
            return True, reason
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            for element in expr.elements:
                if not isinstance(element, cst.StarredElement):
                    reason = self.analyse(element.value, at)[1]
                    if reason is not None:
                        return False, reason
            return False, None
        if isinstance(expr, cst.Dict):
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    reason = self.analyse(element.value, at)[1] or self.analyse(element.key, at)[1]
                    if reason is not None:
                        return False, reason
            return False, None
        return False, None

    def _in_loop(self, node: cst.CSTNode) -> bool:
        """Is ``node`` in a repeated part of one of the loops around the call?"""
        return any(id(loop) in self.loop_ids for loop in self.facts.loops_around(node, self.scope))

    def _name(self, name: str, at: cst.CSTNode) -> Tuple[bool, Optional[str]]:
        scope = self.scope
        for loop in self.loops:
            if isinstance(loop, _COMPREHENSIONS):
                header = self.facts.iteration_index(loop, name, scope)
                if header is not None:
                    return True, f"`{name}` changes each iteration of `{header}`"
                if any(name in bindings.target_names(c.target) for c in _comp_fors(loop)):
                    return False, None
        found = lookup(name, scope, at)
        if found is None or found.kind != ASSIGNED or found.writers:
            return False, None
        if found.scope is not scope:
            return self.facts.values.kind(cst.Name(name), scope) == PY_SCALAR, None
        if name in self.active:
            return True, None  # i = i + 1: known Python if every other binding is
        self.active.add(name)
        try:
            return self._bindings(name, found.own_values)
        finally:
            self.active.discard(name)

    def _bindings(self, name: str, values) -> Tuple[bool, Optional[str]]:
        reason = None
        for value in values:
            if isinstance(value, tuple) and value[0] == ITERATED:
                loop = self.facts.for_of_iter(value[1], self.scope)
                header = self.facts.iteration_index(loop, name, self.scope) if loop is not None else None
                if header is None:
                    return False, None
                if any(loop is x for x in self.loops):
                    reason = reason or f"`{name}` changes each iteration of `{header}`"
                continue
            if isinstance(value, tuple) and value[0] == AUGMENTED:
                node = value[1]
                if not isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign,
                                                  cst.DivideAssign, cst.FloorDivideAssign, cst.PowerAssign)):
                    return False, None
                python, _ = self.analyse(node.value, node.value)
                if not python:
                    return False, None
                if self._in_loop(node):
                    reason = reason or f"`{name}` is updated each iteration (`{_code(node)}`)"
                continue
            if not isinstance(value, cst.BaseExpression):
                return False, None
            python, inner = self.analyse(value, value)
            if not python:
                return False, None
            if self._in_loop(value):
                if inner is not None:
                    reason = reason or f"`{name}` is computed from it: {inner}"
                elif name in bindings.mentions(value):
                    reason = reason or f"`{name}` is updated each iteration (`{name} = {_code(value)}`)"
        return True, reason


class _Only:
    """In ``Retracing._scope_loops``: a node inside a lambda that is a loop's
    repeated part, held by that loop only."""

    __slots__ = ("loop",)

    def __init__(self, loop: cst.CSTNode) -> None:
        self.loop = loop


def _options(call: cst.Call) -> cst.Call:
    """The call holding a wrapper's options: ``tf.function(f, jit_compile=True)``
    itself, or the inner call of ``tf.function(jit_compile=True)(f)``."""
    return call.func if isinstance(call.func, cst.Call) else call


def _comp_fors(loop: cst.CSTNode) -> List[cst.CompFor]:
    found = []
    comp = loop.for_in
    while comp is not None:
        found.append(comp)
        comp = comp.inner_for_in
    return found


def _repeated_parts(node: cst.CSTNode) -> List[cst.CSTNode]:
    if isinstance(node, cst.For):
        return [node.target, node.body]
    if isinstance(node, cst.While):
        return [node.test, node.body]
    parts: List[cst.CSTNode] = [node.key, node.value] if isinstance(node, cst.DictComp) else [node.elt]
    comp = node.for_in
    parts.extend([comp.target, *comp.ifs])
    if comp.inner_for_in is not None:
        parts.append(comp.inner_for_in)
    return parts


def _code(node: cst.CSTNode) -> str:
    text = cst.Module([]).code_for_node(node).strip()
    return text if len(text) <= 30 else text[:27] + "..."
