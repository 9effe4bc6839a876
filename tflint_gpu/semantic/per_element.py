"""Work done one element at a time that one call on the whole batch does: which per-element
forms compute what a batched op computes.

``PerElement`` answers, for the rule about per-element maps and loops (TFG408):

* ``call(call, scope)``: either of the two below, with which (``"map_fn"``,
  ``"vectorized_map"``, ``"stack"``);
* ``mapped(call, scope)``: for ``tf.map_fn(fn, elems)`` (or ``tf.vectorized_map``) whose
  ``fn`` is batchable, the batched form and ``elems``;
* ``stacked(call, scope)``: for ``tf.stack([body for e in X])`` (``X`` a tensor or NumPy
  array, ``tf.unstack(B)``, or ``range(len(B))`` / ``range(B.shape[0])`` /
  ``range(tf.shape(B)[0])`` with ``body`` reading ``B[i]``), the batched form and the batch;
* ``drawn(call, scope)``: for ``tf.stack([tf.random.normal(shape) for _ in range(n)])``, the
  draw and ``n`` (one draw of shape ``(n, ...)`` has the same distribution);
* ``appended(loop, scope)``: the same for a ``for`` loop whose only statement appends the
  body to a list made empty just before it and stacked just after it.

A function or body is batchable when it is the element itself, or a call of an op of
``semantic.batchable_ops.BATCHABLE`` on a batchable body with extra positional
arguments of a recorded kind (``float``, ``int``, ``size``, ``int, int``, ``dtype``) and
keywords only for those parameters (and ``name``); an extra argument whose value is not known
here only where the table says the op takes nothing but a scalar (a size) there (for ``tf.gather``, ``tf.gather_nd`` and ``tf.nn.embedding_lookup``,
the element is the indices and the table does not depend on it), or arithmetic (``+ - * / // % **``) or a comparison (``< <= > >=``) of a batchable body and a
number. Those tables are derived by ``scripts/derive_batchable_ops.py``, which runs each
op per element and on the batch under TensorFlow. A name (not a literal) as an extra
argument keeps the form batchable but not ``literal``: its kind is not known here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.semantic.api import argument, is_dtype, keyword
from tflint_gpu.semantic.batchable_ops import BATCHABLE
from tflint_gpu.semantic.bindings import mentions
from tflint_gpu.semantic.model import ScopeInfo

# Keywords of tf.map_fn that change nothing a batched call computes (its output dtype must match anyway).
MAP_FN_KEYWORDS = frozenset({"fn", "elems", "dtype", "fn_output_signature", "parallel_iterations", "back_prop",
                             "swap_memory", "infer_shape", "name"})
VECTORIZED_MAP_KEYWORDS = frozenset({"fn", "elems", "fallback_to_while_loop", "warn"})
# Random ops whose draws are independent and identically distributed per element.
IID_DRAWS = frozenset({"tensorflow.random.normal", "tensorflow.random.uniform", "tensorflow.random.truncated_normal"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)
_COMPARE = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)
# How many extra positional arguments each numeric kind of the table stands for.
EXTRA_ARITY = {"float": 1, "int": 1, "size": 1, "int, int": 2}
_ELEMENTS = ("tensor", "variable", "numpy-array")


@dataclass
class Batched:
    """A body computing one element's result, and what calling it on the whole batch means."""

    body: cst.BaseExpression  # the per-element expression
    element: cst.BaseExpression  # the node of ``body`` that stands for the element
    ops: List[str] = field(default_factory=list)  # the ops applied, innermost first (qualnames, `/`)
    exact: bool = True  # bit-identical (else floats within a few units in the last place)
    raises_on: Set[str] = field(default_factory=set)  # batch kinds where the batched call raises
    literal: bool = True  # every extra argument is a literal or a dtype
    keeps_dtype: bool = True  # the result has the element's dtype (tf.map_fn needs no output signature)
    raises_dtype: bool = False  # a tf.map_fn that may change the dtype with no output dtype given

    def on(self, batch: cst.BaseExpression) -> cst.BaseExpression:
        """``body`` with the element replaced by ``batch``."""
        if self.body is self.element:
            return batch
        new = self.body.deep_replace(self.element, batch)
        if isinstance(new, cst.BinaryOperation):
            new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return new


class PerElement:
    def __init__(self, resolver, tensors, values) -> None:
        self.resolver = resolver
        self.tensors = tensors
        self.values = values

    def call(self, call: cst.Call, scope: ScopeInfo) -> Optional[Tuple[str, Batched, cst.BaseExpression]]:
        """``("map_fn", "vectorized_map" or "stack", batched form, batch)`` for any of those calls (one
        name lookup)."""
        qualname = self.resolver.qualname(call.func, scope)
        if qualname in ("tensorflow.map_fn", "tensorflow.vectorized_map"):
            found = self.mapped(call, scope, qualname)
        elif qualname == "tensorflow.stack":
            values = _stacked_comprehension(call)
            if values is None:
                return None
            found = self._stacked(values, scope)
            if found is None:
                drawn = self._drawn(values, scope)
                return ("draw",) + drawn if drawn is not None else None
        else:
            return None
        return (qualname.rsplit(".", 1)[1],) + found if found is not None else None

    # -- tf.map_fn(fn, elems) ----------------------------------------------------
    def mapped(self, call: cst.Call, scope: ScopeInfo,
               qualname: Optional[str] = None) -> Optional[Tuple[Batched, cst.BaseExpression]]:
        """``(batched form, elems)``; the form's ``raises_dtype`` is set when the function may change the
        dtype and the call gives no output dtype: ``tf.map_fn`` raises there (the output dtype defaults
        to the input's)."""
        qualname = qualname or self.resolver.qualname(call.func, scope)
        allowed = MAP_FN_KEYWORDS if qualname == "tensorflow.map_fn" else \
            VECTORIZED_MAP_KEYWORDS if qualname == "tensorflow.vectorized_map" else None
        if allowed is None or any(arg.star or (arg.keyword is not None and arg.keyword.value not in allowed)
                                  for arg in call.args):
            return None
        fn, elems = argument(call, 0, "fn"), argument(call, 1, "elems")
        if fn is None or elems is None or isinstance(elems, (cst.List, cst.Tuple, cst.Dict)):
            return None
        if self.values.kind(elems, scope) in ("python-container",):
            return None  # a list or tuple of tensors is a nested structure: fn gets one slice of each
        found = self.function(fn, scope)
        if found is None:
            return None
        found.raises_dtype = qualname == "tensorflow.map_fn" and not found.keeps_dtype \
            and keyword(call, "dtype") is None and keyword(call, "fn_output_signature") is None
        return found, elems

    def function(self, fn: cst.BaseExpression, scope: ScopeInfo) -> Optional[Batched]:
        """A batchable function: a table op's name (no extra argument), or a one-parameter lambda."""
        if isinstance(fn, cst.Lambda):
            params = fn.params
            if len(params.params) != 1 or params.params[0].default is not None or params.posonly_params \
                    or not isinstance(params.star_arg, cst.MaybeSentinel) or params.kwonly_params or params.star_kwarg:
                return None
            name = params.params[0].name.value
            found = self.body(fn.body, lambda node: isinstance(node, cst.Name) and node.value == name, scope,
                              forbidden=name)
            return found if found is not None and found.ops else None  # `lambda x: x`: no work
        qualname = self.resolver.qualname(fn, scope)
        entry = BATCHABLE.get(qualname or "")
        if entry is None or "" not in entry["extras"] or entry.get("element", 0):
            return None
        element = cst.Name("_element")
        body = cst.Call(fn, [cst.Arg(element)])
        return Batched(body, element, [qualname], entry["exact"], set(entry["raises_on"]),
                       keeps_dtype=entry["keeps_dtype"])

    # -- tf.stack([body for e in X]) -----------------------------------------------
    def stacked(self, call: cst.Call, scope: ScopeInfo,
                qualname: Optional[str] = None) -> Optional[Tuple[Batched, cst.BaseExpression]]:
        if (qualname or self.resolver.qualname(call.func, scope)) != "tensorflow.stack":
            return None
        values = _stacked_comprehension(call)
        return self._stacked(values, scope) if values is not None else None

    def _stacked(self, values: cst.ListComp, scope: ScopeInfo) -> Optional[Tuple[Batched, cst.BaseExpression]]:
        return self._over(values.elt, values.for_in.target.value, values.for_in.iter, scope)

    # -- tf.stack([tf.random.normal(shape) for _ in range(n)]) ---------------------------------
    def drawn(self, call: cst.Call, scope: ScopeInfo) -> Optional[Tuple[Batched, cst.BaseExpression]]:
        """A random op drawn once per iteration of ``range(n)`` and stacked: ``(its form, n)``. The
        batched form is no rewrite: one draw of shape ``(n, ...)`` has the same distribution, not the
        same values (no fix)."""
        values = _stacked_comprehension(call)
        return self._drawn(values, scope) if values is not None else None

    def _drawn(self, values: cst.ListComp, scope: ScopeInfo) -> Optional[Tuple[Batched, cst.BaseExpression]]:
        count, draw = self._range_count(values.for_in.iter, scope), values.elt
        if count is None or not isinstance(draw, cst.Call):
            return None
        qualname = self.resolver.qualname(draw.func, scope)
        if qualname not in IID_DRAWS or mentions(draw) & mentions(values.for_in.target):
            return None
        return Batched(draw, draw, [qualname], exact=False, literal=False), count

    # -- out = []; for e in X: out.append(body); tf.stack(out) ----------------------------
    def appended(self, loop: cst.For, scope: ScopeInfo) -> Optional[Tuple[Batched, cst.BaseExpression, str]]:
        """The loop's batched form, its batch and the list's name, when the statement before the loop
        binds the list to ``[]`` and the one after it stacks it."""
        if not isinstance(loop.target, cst.Name) or loop.orelse is not None or loop.asynchronous is not None:
            return None
        body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
        if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
            return None
        statement = body[0].body[0]
        if not isinstance(statement, cst.Expr) or not isinstance(statement.value, cst.Call):
            return None
        append = statement.value
        if not (isinstance(append.func, cst.Attribute) and append.func.attr.value == "append"
                and isinstance(append.func.value, cst.Name) and len(append.args) == 1 and append.args[0].keyword is None
                and not append.args[0].star):
            return None
        name = append.func.value.value
        previous, following = _neighbours(loop, scope)
        if not (_binds_empty_list(previous, name) and self._stacks_name(following, name, scope)):
            return None
        found = self._over(append.args[0].value, loop.target.value, loop.iter, scope)
        return (found[0], found[1], name) if found is not None else None

    # -- the pieces --------------------------------------------------------------------
    def _over(self, body: cst.BaseExpression, target: str, iterable: cst.BaseExpression,
              scope: ScopeInfo) -> Optional[Tuple[Batched, cst.BaseExpression]]:
        found = self._over_any(body, target, iterable, scope)
        return found if found is not None and found[0].ops else None  # the element itself: no work

    def _over_any(self, body: cst.BaseExpression, target: str, iterable: cst.BaseExpression,
                  scope: ScopeInfo) -> Optional[Tuple[Batched, cst.BaseExpression]]:
        batch = self._unstacked(iterable, scope)
        if batch is not None:
            found = self.body(body, lambda node: isinstance(node, cst.Name) and node.value == target, scope,
                              forbidden=target)
            return (found, batch) if found is not None else None
        batch = self._range_over(iterable, scope)
        if batch is None:
            return None
        batch_code = cst.Module([]).code_for_node(batch)

        def is_element(node: cst.BaseExpression) -> bool:
            return (isinstance(node, cst.Subscript) and len(node.slice) == 1
                    and isinstance(node.slice[0].slice, cst.Index)
                    and isinstance(node.slice[0].slice.value, cst.Name) and node.slice[0].slice.value.value == target
                    and cst.Module([]).code_for_node(node.value) == batch_code)

        found = self.body(body, is_element, scope, forbidden=target)
        return (found, batch) if found is not None else None

    def _unstacked(self, iterable: cst.BaseExpression, scope: ScopeInfo) -> Optional[cst.BaseExpression]:
        """The batch a loop over ``iterable`` takes the rows of: a tensor or array, or ``tf.unstack(B)``."""
        if isinstance(iterable, cst.Call):
            if self.resolver.qualname(iterable.func, scope) == "tensorflow.unstack" and len(iterable.args) == 1 \
                    and iterable.args[0].keyword is None and not iterable.args[0].star:
                return iterable.args[0].value
            return None
        if isinstance(iterable, (cst.Name, cst.Attribute)) and self.is_batch(iterable, scope):
            return iterable
        return None

    def _range_over(self, iterable: cst.BaseExpression, scope: ScopeInfo) -> Optional[cst.BaseExpression]:
        """``B`` for ``range(len(B))``, ``range(B.shape[0])``, ``range(tf.shape(B)[0])``, B a tensor or array."""
        count = self._range_count(iterable, scope)
        batch = None
        if isinstance(count, cst.Call) and isinstance(count.func, cst.Name) and count.func.value == "len" \
                and len(count.args) == 1:
            batch = count.args[0].value
        elif isinstance(count, cst.Subscript) and len(count.slice) == 1 and isinstance(count.slice[0].slice, cst.Index) \
                and isinstance(count.slice[0].slice.value, cst.Integer) and count.slice[0].slice.value.value == "0":
            shape = count.value
            if isinstance(shape, cst.Attribute) and shape.attr.value == "shape":
                batch = shape.value
            elif isinstance(shape, cst.Call) and self.resolver.qualname(shape.func, scope) == "tensorflow.shape" \
                    and len(shape.args) == 1:
                batch = shape.args[0].value
        return batch if batch is not None and self.is_batch(batch, scope) else None

    def _range_count(self, iterable: cst.BaseExpression, scope: ScopeInfo) -> Optional[cst.BaseExpression]:
        """``n`` for the builtin ``range(n)``."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range" \
                and len(iterable.args) == 1 and iterable.args[0].keyword is None and not iterable.args[0].star \
                and self.resolver.is_free("range", scope):
            return iterable.args[0].value
        return None

    def is_batch(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is ``expr`` known to be a tensor, a variable or a NumPy array (whose rows a loop takes)."""
        return self.tensors.is_tensor(expr, scope) or self.values.kind(expr, scope) in _ELEMENTS

    def body(self, expr: cst.BaseExpression, is_element: Callable[[cst.BaseExpression], bool], scope: ScopeInfo,
             forbidden: str) -> Optional[Batched]:
        """``expr`` as a batchable function of the one node ``is_element`` accepts, or None."""
        if is_element(expr):
            return Batched(expr, expr)
        operands = _with_a_number(expr)
        if operands is not None:
            operator, sides = operands
            for inner in sides:
                found = self.body(inner, is_element, scope, forbidden)
                if found is not None:
                    found.body = expr
                    found.ops.append(cst.Module([]).code_for_node(operator).strip())
                    # + - * / and the floor ops round correctly wherever they run; pow need not
                    found.exact = found.exact and not isinstance(operator, cst.Power)
                    # `/` of ints is a float, a comparison a bool; the others keep the dtype
                    found.keeps_dtype = found.keeps_dtype and not isinstance(operator, (cst.Divide,) + _COMPARE)
                    return found
            return None
        if not isinstance(expr, cst.Call) or expr.lpar:
            return None
        qualname = self.resolver.qualname(expr.func, scope)
        entry = BATCHABLE.get(qualname or "")
        if entry is None or forbidden in mentions(expr.func):
            return None
        positional = _positional(expr, entry.get("parameters", ()))
        if positional is None:
            return None
        place = entry.get("element", 0)
        if len(positional) <= place:
            return None
        if place:  # tf.gather(params, e): the table every element reads, then the element
            if len(positional) != place + 1 or any(forbidden in mentions(arg) for arg in positional[:place]):
                return None
        found = self.body(positional[place], is_element, scope, forbidden)
        if found is None:
            return None
        extras = positional[place + 1:]
        if any(forbidden in mentions(extra) for extra in extras):
            return None
        kind, literal = self._extras_kind(extras, scope)
        if kind is None and extras and entry.get("scalar_extras") and any(
                EXTRA_ARITY.get(recorded) == len(extras) for recorded in entry["extras"]):
            kind, literal = "scalar", False  # whatever it is, the op takes only a scalar (a size) there
        elif kind == "scalar" and not {"float", "int"} & set(entry["extras"]):
            return None
        elif kind is None or kind != "scalar" and kind not in entry["extras"]:
            return None
        found.body = expr
        found.ops.append(qualname)
        found.exact = found.exact and entry["exact"]
        found.raises_on |= set(entry["raises_on"])
        found.literal = found.literal and literal
        found.keeps_dtype = found.keeps_dtype and entry["keeps_dtype"]
        return found

    def _extras_kind(self, extras: List[cst.BaseExpression], scope: ScopeInfo) -> Tuple[Optional[str], bool]:
        """The kind of the extra positional arguments (one of the table's), and whether all are literals."""
        if not extras:
            return "", True
        if len(extras) == 1:
            value = extras[0]
            number = _number(value)
            if number is not None:
                return number, True
            if isinstance(value, (cst.List, cst.Tuple)) and len(value.elements) == 2 \
                    and all(_number(element.value) == "int" or isinstance(element.value, (cst.Name, cst.Attribute))
                            for element in value.elements):
                return "size", all(_number(element.value) == "int" for element in value.elements)
            qualname = self.resolver.qualname(value, scope)
            if qualname is not None and is_dtype(qualname):
                return "dtype", True
            if isinstance(value, cst.SimpleString):
                return None, False
            if isinstance(value, (cst.Name, cst.Attribute)):
                if self.values.kind(value, scope) == "python-scalar":
                    return "scalar", False  # an int or a float: the op must take both
            return None, False
        if len(extras) == 2 and all(_number(extra) == "int" for extra in extras):
            return "int, int", True
        return None, False

    def _stacks_name(self, statement: Optional[cst.CSTNode], name: str, scope: ScopeInfo) -> bool:
        """Does ``statement`` (the one after the loop) call ``tf.stack(name)``."""
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return False
        small = statement.body[0]
        value = getattr(small, "value", None)
        if not isinstance(value, cst.Call) or self.resolver.qualname(value.func, scope) != "tensorflow.stack":
            return False
        values = argument(value, 0, "values")
        return isinstance(values, cst.Name) and values.value == name and _stacks_on_axis_0(value)


def _stacks_on_axis_0(call: cst.Call) -> bool:
    axis = argument(call, 1, "axis")
    if axis is not None and not (isinstance(axis, cst.Integer) and axis.value == "0"):
        return False
    return all(not arg.star and (arg.keyword is None or arg.keyword.value in ("values", "axis", "name"))
               for arg in call.args) and sum(arg.keyword is None for arg in call.args) <= 2


def _stacked_comprehension(call: cst.Call) -> Optional[cst.ListComp]:
    """What ``tf.stack`` stacks on axis 0 when it is a list comprehension of one ``for`` (a plain name
    as its target) and no ``if``."""
    if not _stacks_on_axis_0(call):
        return None
    values = argument(call, 0, "values")
    if not isinstance(values, cst.ListComp) or values.for_in.inner_for_in is not None or values.for_in.ifs \
            or not isinstance(values.for_in.target, cst.Name) or values.for_in.asynchronous is not None:
        return None
    return values


def _neighbours(statement: cst.CSTNode, scope: ScopeInfo) -> Tuple[Optional[cst.CSTNode], Optional[cst.CSTNode]]:
    """The statements just before and just after ``statement`` in its block."""
    block = next(iter(scope.ancestors(statement)), None)
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)):
        return None, None
    for place, node in enumerate(body):
        if node is statement:
            return (body[place - 1] if place else None), (body[place + 1] if place + 1 < len(body) else None)
    return None, None


def _positional(call: cst.Call, parameters) -> Optional[List[cst.BaseExpression]]:
    """The call's arguments by position, keywords put at their parameter's place (``depth=`` of
    ``tf.one_hot``); ``name=`` dropped. None for ``*args``, an unknown keyword, or a gap."""
    positional: List[cst.BaseExpression] = []
    keywords: Dict[int, cst.BaseExpression] = {}
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            positional.append(arg.value)
        elif arg.keyword.value != "name":
            if arg.keyword.value not in parameters:
                return None
            keywords[list(parameters).index(arg.keyword.value) + 1] = arg.value
    for place in sorted(keywords):
        if place != len(positional) or not positional:
            return None
        positional.append(keywords[place])
    return positional


def _binds_empty_list(statement: Optional[cst.CSTNode], name: str) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    return (isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name
            and isinstance(small.value, cst.List) and not small.value.elements)


def _with_a_number(expr: cst.BaseExpression):
    """``(operator, [the operands a number meets])`` for arithmetic or a comparison of one operand
    with a number literal (``x / 255.0``, ``x > 0.``), else None."""
    if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1 \
            and isinstance(expr.comparisons[0].operator, _COMPARE) and not expr.lpar:
        operator, left, right = expr.comparisons[0].operator, expr.left, expr.comparisons[0].comparator
    elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
        operator, left, right = expr.operator, expr.left, expr.right
    else:
        return None
    return operator, [inner for inner, other in ((left, right), (right, left)) if _number(other) is not None]


def _number(expr: cst.BaseExpression) -> Optional[str]:
    """'int' or 'float' for a number literal (a negative one too), else None."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    if isinstance(expr, cst.Integer):
        return "int"
    if isinstance(expr, cst.Float):
        return "float"
    return None
