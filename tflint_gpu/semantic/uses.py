"""Where the module's own functions are used, and which only a library traces.

A function is used wherever the name it is bound to is read: called
(``f(x)``), handed on (``ds.map(f)``, ``make(map_fn=f)``), tested (``if f:``,
``f is None``), an attribute of it read (``f.get_concrete_function(spec)``), or
anything else (``fns = [f]``, ``return f``, ``@f``). Every read of the name in
the scope that binds it (and the scopes nested there that see that binding)
is listed, so a question about all the uses of a function is answered from
all of them, or not at all.

* ``uses(function)``: the reads of a function's name (a def's name in the
  scope holding the def; a parameter's name in its function with
  ``uses_of``), each a ``Use``; None for a method (read as an attribute of
  objects the file may not show) or a lambda.
* ``traced_by_library(function)``: every use of the function is inside a
  trace that tf.data or Keras makes: handed to a ``Dataset`` transformation
  (``map``, ``filter``, ... on a value known to be a dataset, or one every
  same-module caller hands in as a dataset), to a ``tf.data.experimental``
  function that traces it, to ``keras.layers.Lambda``, or to
  ``model.compile`` as a loss or metric (``loss=f``, ``metrics=[f]``; not
  with ``run_eagerly=``); called only from
  functions and lambdas that are themselves traced only so (or handed to a
  TensorFlow call there, ``tf.map_fn(f, x)``); handed to a same-module
  function whose parameter is used only so (``make(map_fn=f)`` that does
  ``ds.map(map_fn)``), or to ``tf.function`` whose result is. A function with
  no use in its file, a method, a function used anywhere else (called from
  eager code, stored, returned) is not. For a ``tf.function`` made by a call
  (``g = tf.function(f)``), the uses of what the call makes are asked about.
* ``tracing_calls(function)``: the calls that trace a tf.function with
  arguments of their own, ``f(x)`` and ``f.get_concrete_function(spec)``.
* ``error_expected(function)``: a call of it stands where an error that
  TensorFlow raises while running is expected (``with
  pytest.raises(tf.errors.InvalidArgumentError):``, ``self.assertRaises...``,
  ``try: ... except tf.errors.OpError:``), or it is handed to
  ``self.assertRaises(E, f, ...)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import (
    DATASET_FUNCTION_ARGS,
    DATASET_METHODS,
    EAGER_WRAPPERS,
    TF_FUNCTION,
    KERAS_COMPILE_FUNCTIONS,
    TRACING_FUNCTIONS,
    argument,
    keyword,
)
from tflint_gpu.semantic.model import ASSIGNED, PARAM, ScopeInfo, children, lookup

# Calls whose arguments hand a function to Keras to trace: ``keras.layers.Lambda(f)``.
_KERAS_FUNCTION_ARGS = ((0, "function"),)
# Test helpers that expect an error: ``with pytest.raises(E):``, ``self.assertRaises(E, f, x)``.
_RAISES = frozenset({
    "raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "assertRaisesWithPredicateMatch",
})
_OP_ERROR_HELPERS = frozenset({"assertRaisesOpError"})  # tf.test.TestCase: any OpError
# TensorFlow's errors raised while a graph runs (tf.errors.*), by their last name.
_RUNTIME_ERRORS = frozenset({
    "OpError", "InvalidArgumentError", "FailedPreconditionError", "OutOfRangeError", "UnknownError",
    "AbortedError", "InternalError", "ResourceExhaustedError", "NotFoundError", "UnimplementedError",
})
_DEPTH = 4


@dataclass
class Use:
    """One read of a function's (or parameter's) name."""

    name: cst.Name
    scope: ScopeInfo  # the scope whose own code holds the read
    kind: str  # "call" | "argument" | "method" | "attribute" | "test" | "other"
    call: Optional[cst.Call] = None  # call: the call made; argument: the call it is handed to; method: N.attr(...)
    arg: Optional[cst.Arg] = None  # argument: the argument it is
    attribute: Optional[str] = None  # method/attribute: the attribute read (``get_concrete_function``)


class Uses:
    def __init__(self, graphs) -> None:
        self.graphs = graphs
        self.model = graphs.model
        self.resolver = graphs.resolver
        self._indexes: Dict[int, Dict[str, List[Use]]] = {}
        self._uses: Dict[Tuple[int, str], List[Use]] = {}
        self._traced: Dict[Any, bool] = {}
        self._handed: Optional[Dict[int, Tuple[cst.Call, cst.Arg, ScopeInfo]]] = None
        self._bound: Optional[Dict[int, Tuple[str, ScopeInfo]]] = None

    # -- the reads of a name ---------------------------------------------------
    def uses(self, function: ScopeInfo) -> Optional[List[Use]]:
        """Every read of the name a def is bound to, in the scope holding the def
        (None for a method or a lambda)."""
        if function.kind != "function" or function.parent is None or function.parent.kind == "class":
            return None
        return self.uses_of(function.name, function.parent)

    def uses_of(self, name: str, binder: ScopeInfo) -> List[Use]:
        """The reads of ``name`` that see ``binder``'s binding of it (in ``binder``
        and the scopes nested in it that do not bind it themselves): of a def, an
        assignment or parameter, or an import (``tfa`` of ``import tensorflow_addons as tfa``)."""
        key = (id(binder), name)
        found = self._uses.get(key)
        if found is None:
            found = []
            for use in self._index(binder).get(name, ()):
                binding = lookup(name, use.scope)
                if binding is not None and binding.scope is binder:
                    found.append(use)
            self._uses[key] = found
        return found

    def _index(self, binder: ScopeInfo) -> Dict[str, List[Use]]:
        """The reads, in ``binder``'s code and below, of the names ``binder`` binds
        (one walk of that code, on first need)."""
        cached = self._indexes.get(id(binder))
        if cached is not None:
            return cached
        wanted = set(binder.defs) | set(binder.assigned) | set(binder.imports)
        found: Dict[str, List[Use]] = {}
        self._indexes[id(binder)] = found
        node = binder.node
        if isinstance(node, cst.Module):
            root: cst.CSTNode = node
        elif isinstance(node, (cst.FunctionDef, cst.Lambda)):
            root = node.body
        else:
            return found
        stack: List[Tuple[cst.CSTNode, ScopeInfo, Any]] = [(root, binder, None)]
        tested: Dict[int, bool] = {}  # see _is_test
        while stack:
            current, scope, link = stack.pop()
            if isinstance(current, cst.Name):
                if current.value in wanted:
                    found.setdefault(current.value, []).append(_classify(current, scope, link, tested))
                continue
            here = (current, link)
            for child, child_scope, is_target in reversed(self._parts(current, scope)):
                if is_target:
                    _push_target(stack, child, child_scope, here)
                else:
                    stack.append((child, child_scope, here))
        return found

    def _parts(self, node: cst.CSTNode, scope: ScopeInfo) -> List[Tuple[cst.CSTNode, ScopeInfo, bool]]:
        """The parts of ``node`` that may read names, the scope each is read in,
        and whether it is an assignment target (whose names are bound, not read)."""
        if isinstance(node, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal)):
            return []
        if isinstance(node, cst.Attribute):
            return [(node.value, scope, False)]
        if isinstance(node, cst.Arg):
            return [(node.value, scope, False)]
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            inner = self.model.scope_of_node.get(node, scope)
            parts: List[Tuple[cst.CSTNode, ScopeInfo, bool]] = []
            if not isinstance(node, cst.Lambda):
                parts.extend((d.decorator, scope, False) for d in node.decorators)
            if isinstance(node, cst.ClassDef):
                parts.extend((arg, scope, False) for arg in list(node.bases) + list(node.keywords))
            else:
                for param in _params(node.params):
                    if param.default is not None:
                        parts.append((param.default, scope, False))
                    if param.annotation is not None:
                        parts.append((param.annotation, scope, False))
                if isinstance(node, cst.FunctionDef) and node.returns is not None:
                    parts.append((node.returns, scope, False))
            parts.append((node.body, inner, False))
            return parts
        if isinstance(node, cst.AssignTarget):
            return [(node.target, scope, True)]
        if isinstance(node, cst.AnnAssign):
            parts = [(node.target, scope, True), (node.annotation, scope, False)]
            return parts + ([(node.value, scope, False)] if node.value is not None else [])
        if isinstance(node, cst.For):
            parts = [(node.target, scope, True), (node.iter, scope, False), (node.body, scope, False)]
            return parts + ([(node.orelse, scope, False)] if node.orelse is not None else [])
        if isinstance(node, cst.CompFor):
            parts = [(node.target, scope, True), (node.iter, scope, False)]
            parts.extend((c, scope, False) for c in node.ifs)
            return parts + ([(node.inner_for_in, scope, False)] if node.inner_for_in is not None else [])
        if isinstance(node, cst.AsName):
            return [(node.name, scope, True)]
        if isinstance(node, cst.NamedExpr):
            return [(node.target, scope, True), (node.value, scope, False)]
        return [(child, scope, False) for child in children(node)]

    # -- traced only by a library ------------------------------------------------
    def traced_by_library(self, function: ScopeInfo) -> bool:
        """Is every use of ``function`` inside a trace tf.data or Keras makes? (See the module docs.)"""
        info = function.graph
        origin = info.origin if info is not None and info.kind == "tf.function" else None
        if isinstance(origin, cst.Call) and not _decorates(origin, function):
            return self._made_traced(origin)  # g = tf.function(f): what the call makes
        return self._body_traced(function)

    def _body_traced(self, function: ScopeInfo) -> bool:
        """Does every run of ``function``'s body happen inside such a trace?"""
        if function.kind == "lambda":
            key: Tuple[Any, ...] = ("lambda", id(function))
        elif function.kind == "function" and function.parent is not None and function.parent.kind != "class":
            key = ("name", id(function.parent), function.name)  # defs of one name share their uses
        else:
            return False  # a method: read as an attribute of objects the file may not show
        if key in self._traced:
            return self._traced[key]
        self._traced[key] = False  # a cycle is no evidence
        if function.kind == "lambda":
            place = self._handed_map().get(id(function.node))
            result = place is not None and self._handed_to_library(*place)
        else:
            uses = self.uses(function)
            result = bool(uses) and all(self._use_traced(use) for use in uses)
        self._traced[key] = result
        return result

    def _use_traced(self, use: Use, made: Optional[cst.Call] = None) -> bool:
        if use.kind == "test":
            return True
        if use.kind == "call":
            return use.scope.is_function and self._body_traced(use.scope)
        if use.kind == "argument" and use.call is not None and use.arg is not None:
            return use.call is made or self._handed_to_library(use.call, use.arg, use.scope)
        if use.kind == "element" and use.call is not None and use.arg is not None:
            return self._compiled(use.call, use.arg, use.scope)  # compile(metrics=[f])
        return False

    def _compiled(self, call: cst.Call, arg: cst.Arg, scope: ScopeInfo) -> bool:
        """Is ``arg`` a loss or metric handed to ``model.compile``, which Keras
        traces in its steps (and compiles with XLA where ``jit_compile="auto"``
        finds a GPU)? Not with ``run_eagerly=`` set."""
        func = call.func
        if arg.star or not isinstance(func, cst.Attribute) or func.attr.value != "compile" \
                or self.resolver.qualname(func, scope) is not None:
            return False
        eager = keyword(call, "run_eagerly")
        if eager is not None and not (isinstance(eager.value, cst.Name) and eager.value.value in ("False", "None")):
            return False
        if arg.keyword is not None:
            return arg.keyword.value in KERAS_COMPILE_FUNCTIONS
        return argument(call, 1, "loss") is arg.value

    def _handed_to_library(self, call: cst.Call, arg: cst.Arg, scope: ScopeInfo) -> bool:
        """Is the function handed as ``arg`` to ``call`` run only inside a library's trace?"""
        if arg.star:
            return False
        func = call.func
        qualname = self.resolver.qualname(func, scope)
        if qualname in TRACING_FUNCTIONS:
            return _passed_at(call, arg, TRACING_FUNCTIONS[qualname])
        if qualname is not None and qualname.startswith("keras.") and qualname.rsplit(".", 1)[1] == "Lambda":
            return _passed_at(call, arg, _KERAS_FUNCTION_ARGS)
        if qualname is None and self._compiled(call, arg, scope):
            return True
        if qualname == TF_FUNCTION:
            return _passed_at(call, arg, ((0, "func"),)) and self._made_traced(call)
        if qualname is None and isinstance(func, cst.Attribute) and func.attr.value in DATASET_FUNCTION_ARGS \
                and _passed_at(call, arg, DATASET_FUNCTION_ARGS[func.attr.value]) \
                and self._dataset(func.value, scope, 0):
            return True
        target = self.graphs.function_scope(func, scope)
        if target is not None:
            parameter = _parameter_for(target, call, arg)
            return parameter is not None and self._parameter_traced(target, parameter)
        if qualname is not None and qualname.startswith("tensorflow.") and qualname not in EAGER_WRAPPERS:
            return scope.is_function and self._body_traced(scope)  # tf.map_fn(f, x) inside such a trace
        return False

    def _parameter_traced(self, function: ScopeInfo, parameter: str) -> bool:
        key = ("parameter", id(function), parameter)
        if key in self._traced:
            return self._traced[key]
        self._traced[key] = False
        uses = self.uses_of(parameter, function)
        result = bool(uses) and all(self._use_traced(use) for use in uses)
        self._traced[key] = result
        return result

    def _made_traced(self, call: cst.Call) -> bool:
        """Is what ``call`` makes (``tf.function(f)``) used only inside a library's
        trace: handed on directly, or bound to a name whose every read is?"""
        key = ("made", id(call))
        if key in self._traced:
            return self._traced[key]
        self._traced[key] = False
        result = False
        place = self._handed_map().get(id(call))
        if place is not None:
            result = self._handed_to_library(*place)
        else:
            bound = self._bound_map().get(id(call))
            if bound is not None:
                name, scope = bound
                binding = lookup(name, scope)
                if binding is not None and binding.kind == ASSIGNED:
                    # Every read of the name (`f = tf.function(f)` reads the def in the call itself).
                    uses = self.uses_of(name, binding.scope)
                    result = bool(uses) and all(self._use_traced(use, made=call) for use in uses) \
                        and any(use.call is not call for use in uses)
        self._traced[key] = result
        return result

    # -- datasets handed in ------------------------------------------------------
    def _dataset(self, expr: cst.BaseExpression, scope: ScopeInfo, depth: int) -> bool:
        """Is ``expr`` a dataset: known to be one (``semantic.datasets``), or a
        parameter every same-module caller hands a dataset (maybe rebound by
        dataset methods: ``dataset = dataset.shuffle(n)``)?"""
        if self.graphs.is_dataset(expr, scope):
            return True
        if depth > _DEPTH or not isinstance(expr, cst.Name):
            return False
        name = expr.value
        binding = lookup(name, scope)
        if binding is None or binding.kind != ASSIGNED or binding.writers or not binding.scope.is_function:
            return False
        holder = binding.scope
        parameter = None
        for value in holder.assigned.get(name, ()):
            if isinstance(value, tuple) and value[0] == PARAM:
                parameter = value[1]
            elif _method_chain_on(value, name):
                continue  # dataset = dataset.shuffle(n).repeat()
            elif not (isinstance(value, cst.BaseExpression) and self.graphs.is_dataset(value, holder)):
                return False
        if parameter is None or parameter.star:
            return parameter is None
        sites = self.uses(holder)
        if not sites or any(use.kind != "call" for use in sites):
            return False  # handed on somewhere: its callers are not all here
        for use in sites:
            passed = _argument_for(holder, use.call, parameter.name.value)
            if passed is None or not self._dataset(passed, use.scope, depth + 1):
                return False
        return True

    # -- signatures and expected errors -------------------------------------------
    def tracing_calls(self, function: ScopeInfo) -> List[Tuple[cst.Call, ScopeInfo]]:
        """The calls that trace a tf.function with arguments of their own: its
        calls (``f(x)``) and ``f.get_concrete_function(spec)``, through the name
        it is bound to (the def's, or ``g`` of ``g = tf.function(f)``)."""
        return [(use.call, use.scope) for use in self._object_uses(function)
                if use.call is not None and (use.kind == "call" or (
                    use.kind == "method" and use.attribute == "get_concrete_function"))]

    def _object_uses(self, function: ScopeInfo) -> List[Use]:
        """The reads of the name the tf.function object of ``function`` is bound to."""
        info = function.graph
        origin = info.origin if info is not None and info.kind == "tf.function" else None
        if isinstance(origin, cst.Call) and not _decorates(origin, function):
            bound = self._bound_map().get(id(origin))
            if bound is None:
                return []
            binding = lookup(bound[0], bound[1])
            return self.uses_of(bound[0], binding.scope) if binding is not None and binding.kind == ASSIGNED else []
        return self.uses(function) or []

    def value_called(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is the object ``expr`` (code of ``scope``) evaluates to called: ``expr(...)`` itself, or
        ``expr`` is the value of an assignment to a name (or a branch of the conditional expression that
        is: ``cls = A if c else B``) and a call of that name in its scope is reached by this
        assignment (``cls(...)``)?"""
        child: cst.CSTNode = expr
        for parent in scope.ancestors(expr):
            if isinstance(parent, cst.Call):
                return parent.func is child
            if isinstance(parent, cst.IfExp) and child is not parent.test:
                child = parent
                continue
            if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is child:
                targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
                return any(isinstance(target, cst.Name) and self._name_calls_value(target.value, child, scope)
                           for target in targets)
            return False
        return False

    def _name_calls_value(self, name: str, value: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is ``name`` (bound in ``scope``) called somewhere ``value``, one of its assigned values, reaches?"""
        for use in self.uses_of(name, scope):
            if use.kind != "call":
                continue
            found = lookup(name, use.scope, use.name if use.scope is scope else None)
            if found is not None and any(v is value for v in found.values):
                return True
        return False

    def error_expected(self, function: ScopeInfo) -> bool:
        """Is a call of the function where a TensorFlow runtime error is expected?"""
        for use in self.uses(function) or ():
            if use.kind == "argument" and use.call is not None and self._expects_error(use.call, use.scope):
                return True  # self.assertRaises(tf.errors.InvalidArgumentError, f, x)
            if use.kind != "call" or use.call is None:
                continue
            child: cst.CSTNode = use.call
            for parent in use.scope.ancestors(use.call):
                if isinstance(parent, cst.With) and child is parent.body and any(
                        isinstance(item.item, cst.Call) and self._expects_error(item.item, use.scope)
                        for item in parent.items):
                    return True
                if isinstance(parent, cst.Try) and child is parent.body and any(
                        handler.type is not None and self._runtime_error(handler.type, use.scope)
                        for handler in parent.handlers):
                    return True
                child = parent
        return False

    def _expects_error(self, call: cst.Call, scope: ScopeInfo) -> bool:
        """``pytest.raises(E)``, ``self.assertRaises(E, ...)`` with E a TensorFlow
        runtime error, or ``self.assertRaisesOpError(...)``."""
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) \
            else None
        if method in _OP_ERROR_HELPERS:
            return True
        if method not in _RAISES:
            return False
        error = argument(call, 0, "expected_exception")
        return error is not None and self._runtime_error(error, scope)

    def _runtime_error(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        if isinstance(expr, (cst.Tuple, cst.List)):
            return any(self._runtime_error(e.value, scope) for e in expr.elements)
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return False
        last = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value
        qualname = self.resolver.qualname(expr, scope)
        if qualname is not None and not qualname.startswith("tensorflow."):
            return False
        return last in _RUNTIME_ERRORS

    # -- where values stand --------------------------------------------------------
    def _handed_map(self) -> Dict[int, Tuple[cst.Call, cst.Arg, ScopeInfo]]:
        """id(expression) -> (call, argument, scope) for every expression handed
        as an argument (built once)."""
        if self._handed is None:
            self._handed = {}
            for call, scope in self.model.index.get("Call", ()):
                for arg in call.args:
                    self._handed[id(arg.value)] = (call, arg, scope)
        return self._handed

    def _bound_map(self) -> Dict[int, Tuple[str, ScopeInfo]]:
        """id(value) -> (name, scope) for every ``name = value`` with one plain target (built once)."""
        if self._bound is None:
            self._bound = {}
            for node, scope in self.model.index.get("Assign", ()):
                if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                    self._bound[id(node.value)] = (node.targets[0].target.value, scope)
        return self._bound


def _classify(name: cst.Name, scope: ScopeInfo, link: Any, known: Optional[Dict[int, bool]] = None) -> Use:
    parent = link[0] if link is not None else None
    grand = link[1][0] if link is not None and link[1] is not None else None
    if isinstance(parent, cst.Call) and parent.func is name:
        return Use(name, scope, "call", call=parent)
    if isinstance(parent, cst.Arg) and isinstance(grand, cst.Call):
        return Use(name, scope, "argument", call=grand, arg=parent)
    handed = _element_of_argument(name, link)
    if handed is not None:
        return Use(name, scope, "element", call=handed[0], arg=handed[1])
    if isinstance(parent, cst.Attribute):
        if isinstance(grand, cst.Call) and grand.func is parent:
            return Use(name, scope, "method", call=grand, attribute=parent.attr.value)
        return Use(name, scope, "attribute", attribute=parent.attr.value)
    if _is_test(name, link, known):
        return Use(name, scope, "test")
    return Use(name, scope, "other")


def _element_of_argument(name: cst.Name, link: Any) -> Optional[Tuple[cst.Call, cst.Arg]]:
    """(call, argument) when the read is an element of a list, tuple or dict
    display handed as that argument (``compile(metrics=[f, "accuracy"])``,
    ``loss={"out": f}``)."""
    child: cst.CSTNode = name
    for _ in range(3):
        if link is None:
            return None
        element = link[0]
        if not (isinstance(element, (cst.Element, cst.DictElement)) and element.value is child):
            return None
        link = link[1]
        if link is None or not isinstance(link[0], (cst.List, cst.Tuple, cst.Dict)):
            return None
        child, link = link[0], link[1]
        if link is not None and isinstance(link[0], cst.Arg) and link[1] is not None \
                and isinstance(link[1][0], cst.Call):
            return link[1][0], link[0]
    return None


def _is_test(name: cst.Name, link: Any, known: Optional[Dict[int, bool]] = None) -> bool:
    """Is the read only tested for truth or None (``if f:``, ``f is None``, ``not f``,
    ``if a and f:``)? ``known``: the answers for ``and``/``or``/``not`` operations already
    climbed from (id -> answer, the same for every read below one), so a chain of n terms is
    climbed once, not once for each of its names."""
    child: cst.CSTNode = name
    climbed: List[int] = []
    answer = False
    while link is not None:
        parent = link[0]
        if isinstance(parent, cst.Comparison) and child is parent.left and parent.comparisons and all(
                isinstance(c.operator, (cst.Is, cst.IsNot)) and isinstance(c.comparator, cst.Name)
                and c.comparator.value == "None" for c in parent.comparisons):
            answer = True  # a bool, whatever stands around it
            break
        if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)) and child is parent.test:
            answer = True
            break
        if isinstance(parent, cst.BooleanOperation) or (
                isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)):
            if known is not None and id(parent) in known:
                answer = known[id(parent)]
                break
            climbed.append(id(parent))
            child, link = parent, link[1]
            continue
        break
    if known is not None:
        for operation in climbed:
            known[operation] = answer
    return answer


def _push_target(stack: List[Tuple[cst.CSTNode, ScopeInfo, Any]], target: cst.CSTNode, scope: ScopeInfo,
                 link: Any) -> None:
    """The reads in an assignment target: not its bound names, but what an
    attribute or subscript target reads (``self.x = ...`` reads ``self``)."""
    if isinstance(target, cst.Name):
        return
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _push_target(stack, element.value, scope, link)
        return
    if isinstance(target, cst.StarredElement):
        _push_target(stack, target.value, scope, link)
        return
    stack.append((target, scope, link))


def _method_chain_on(value: Any, name: str) -> bool:
    """``name.shuffle(n).repeat()``: dataset methods called on ``name`` itself."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
        return False
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in DATASET_METHODS:
        value = value.func.value
    return isinstance(value, cst.Name) and value.value == name


def _params(params: cst.Parameters) -> List[cst.Param]:
    found = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            found.append(star)
    return found


def _decorates(origin: cst.BaseExpression, function: ScopeInfo) -> bool:
    node = function.node
    return isinstance(node, cst.FunctionDef) and any(d.decorator is origin for d in node.decorators)


def _passed_at(call: cst.Call, arg: cst.Arg, places) -> bool:
    return any(argument(call, position, keyword) is arg.value for position, keyword in places)


def _positional(function: ScopeInfo) -> Tuple[List[cst.Param], List[cst.Param], int]:
    """(positional parameters, keyword-only ones, how many a bound-method call fills first)."""
    node = function.node
    params = node.params  # FunctionDef or Lambda
    positional = list(params.posonly_params) + list(params.params)
    return positional, list(params.kwonly_params), 1 if function.binds_instance else 0


def _parameter_for(function: ScopeInfo, call: cst.Call, arg: cst.Arg) -> Optional[str]:
    """The parameter of ``function`` that ``arg`` of ``call`` binds (None: a
    ``*args``/``**kwargs`` one, or unknown)."""
    if not isinstance(function.node, (cst.FunctionDef, cst.Lambda)):
        return None
    positional, keyword_only, shift = _positional(function)
    if arg.keyword is not None:
        name = arg.keyword.value
        allowed = positional[len(function.node.params.posonly_params):] + keyword_only
        return name if any(p.name.value == name for p in allowed) else None
    index = 0
    for other in call.args:
        if other is arg:
            break
        if other.star:
            return None
        if other.keyword is None:
            index += 1
    if shift and not isinstance(call.func, cst.Attribute):
        shift = 0  # Cls.method(obj, f) or a plain call
    index += shift
    return positional[index].name.value if index < len(positional) else None


def _argument_for(function: ScopeInfo, call: Optional[cst.Call], parameter: str) -> Optional[cst.BaseExpression]:
    """The expression ``call`` passes for ``function``'s ``parameter`` (None: a
    default, or passed through ``*args``/``**kwargs``)."""
    if call is None or not isinstance(function.node, (cst.FunctionDef, cst.Lambda)):
        return None
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
    positional, _keyword_only, shift = _positional(function)
    if shift and not isinstance(call.func, cst.Attribute):
        shift = 0
    names = [p.name.value for p in positional]
    if parameter not in names:
        return None
    index = names.index(parameter) - shift
    values = [a.value for a in call.args if a.keyword is None]
    return values[index] if 0 <= index < len(values) else None
