"""Rewrite a Python ``if`` / conditional expression on a tensor as ``tf.cond``.

``tf.cond(pred, lambda: a, lambda: b)`` (``keras.ops.cond`` in Keras code)
computes what the Python ``if`` would have computed, in graph code too. The
rewrite is offered only when it is exact:

* a conditional expression ``a if c else b`` whose branches are pure;
* an ``if``/``else`` whose branches are both plain assignments of the same
  names (one assignment per name, no branch reading a name it assigned
  earlier), or both a single ``return value``;
* an ``if`` without ``else`` that assigns names which already hold a value
  (parameters, or names the new value reads, as in ``x = x * 2``): the false
  branch keeps them.

No branch may read a parameter that is None unless the caller passes it
(``teacher=None``): the ``if`` may have taken that branch only with a value.

"Pure" means built from names, attribute reads, literals, operators,
subscripts and calls of TensorFlow / ``keras.ops`` functions: in a graph
``tf.cond`` traces both branches, so Python side effects in either would run.

The condition is passed as the caller gives it (``test=``): Python's ``and``,
``or``, ``not``, a conditional expression or a chained comparison (``0 < t <
5``) in it would still call ``bool()`` on a tensor inside ``tf.cond``'s first
argument, so the caller rewrites them as ``tf.logical_*`` or offers no fix
(``calls_bool``).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from tflint_gpu.semantic.model import children
from tflint_gpu.semantic.tensors import is_tf_op

_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)
_STATEFUL = frozenset({"tensorflow.Variable"})


def is_pure(expr: cst.BaseExpression, ctx) -> bool:
    """Is evaluating ``expr`` free of Python side effects (so tracing it twice is harmless)?"""
    if isinstance(expr, (cst.Name, *_LITERALS)):
        return True
    if isinstance(expr, cst.Attribute):
        return is_pure(expr.value, ctx)
    if isinstance(expr, cst.Lambda):
        return is_pure(expr.body, ctx)  # making it runs nothing; a pure body is safe to call
    if isinstance(expr, cst.BinaryOperation):
        return is_pure(expr.left, ctx) and is_pure(expr.right, ctx)
    if isinstance(expr, cst.UnaryOperation):
        return is_pure(expr.expression, ctx)
    if isinstance(expr, cst.Comparison):
        return is_pure(expr.left, ctx) and all(is_pure(t.comparator, ctx) for t in expr.comparisons)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(
            not isinstance(e, cst.StarredElement) and is_pure(e.value, ctx) for e in expr.elements
        )
    if isinstance(expr, cst.Subscript):
        if not is_pure(expr.value, ctx):
            return False
        for element in expr.slice:
            inner = element.slice
            if isinstance(inner, cst.Index):
                if inner.star is not None or not is_pure(inner.value, ctx):
                    return False
            else:
                parts = (inner.lower, inner.upper, inner.step)
                if not all(p is None or is_pure(p, ctx) for p in parts):
                    return False
        return True
    if isinstance(expr, cst.Call):
        qualname = ctx.qualname(expr.func)
        if not is_tf_op(qualname) or qualname in _STATEFUL:
            return False
        return all(not arg.star and is_pure(arg.value, ctx) for arg in expr.args)
    return False


def calls_bool(expr: cst.CSTNode) -> bool:
    """Does evaluating ``expr`` call ``bool()`` on a value itself: ``and``/``or``/``not``, a
    conditional expression, a chained comparison (``0 < t < 5`` is ``0 < t and t < 5``)?
    A lambda's body is not evaluated where it stands."""
    if isinstance(expr, (cst.BooleanOperation, cst.IfExp)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return True
    if isinstance(expr, cst.Comparison) and len(expr.comparisons) > 1:
        return True
    if isinstance(expr, cst.Lambda):
        return False
    return any(calls_bool(child) for child in children(expr))


def _code(ctx, expr: cst.BaseExpression) -> str:
    text = ctx.module.code_for_node(expr).strip()
    if isinstance(expr, cst.Tuple) and not expr.lpar:
        text = f"({text})"
    return text


def _pack(ctx, values: Sequence[cst.BaseExpression]) -> str:
    if len(values) == 1:
        return _code(ctx, values[0])
    return "(" + ", ".join(_code(ctx, v) for v in values) + ")"


def cond_function(ctx, keras: bool) -> Optional[Tuple[cst.BaseExpression, Tuple[str, ...]]]:
    """``tf.cond`` (or ``keras.ops.cond``, for an ``import keras`` of Keras 3
    itself) in the file's own spelling; None if no name can spell it here."""
    if keras:
        return ctx.module_expr("keras", "ops.cond", exact=True)
    return ctx.module_expr("tensorflow", "cond")


Test = Tuple[cst.BaseExpression, Tuple[str, ...]]  # the predicate as tf.cond takes it, and its imports


def cond_text(ctx, keras: bool, test: Test, true_values: Sequence[cst.BaseExpression],
              false_values: Sequence[cst.BaseExpression]) -> Optional[Tuple[str, Tuple[str, ...]]]:
    spelled = cond_function(ctx, keras)
    if spelled is None or calls_bool(test[0]):
        return None
    func, imports = spelled
    text = (f"{ctx.module.code_for_node(func)}({ctx.module.code_for_node(test[0]).strip()}, "
            f"lambda: {_pack(ctx, true_values)}, lambda: {_pack(ctx, false_values)})")
    return text, tuple(dict.fromkeys(test[1] + imports))


def _reads_none_default(expr: cst.CSTNode, ctx) -> bool:
    """Does ``expr`` read a parameter that is None unless the caller passes it (``teacher=None``)?
    ``tf.cond`` traces both branches, so a branch the Python ``if`` took only with a value
    (``teacher[:, t]``) would run on None too."""
    if isinstance(expr, cst.Name):
        return ctx.none_by_default(expr.value)
    if isinstance(expr, cst.Attribute):
        return _reads_none_default(expr.value, ctx)
    return any(_reads_none_default(child, ctx) for child in children(expr))


def if_expression(node: cst.IfExp, ctx, keras: bool,
                  test: Test) -> Optional[Tuple[cst.BaseExpression, Tuple[str, ...]]]:
    """``a if c else b`` -> ``tf.cond(c, lambda: a, lambda: b)``, if both branches are pure;
    ``test``: ``c`` as tf.cond takes it."""
    if not (is_pure(node.body, ctx) and is_pure(node.orelse, ctx)):
        return None
    if _reads_none_default(node.body, ctx) or _reads_none_default(node.orelse, ctx):
        return None
    made = cond_text(ctx, keras, test, [node.body], [node.orelse])
    if made is None:
        return None
    return cst.parse_expression(made[0]), made[1]


def if_statement(node: cst.If, ctx, keras: bool, test: Test) -> Optional[Tuple[cst.BaseStatement, Tuple[str, ...]]]:
    """The ``if`` statement as one assignment or return of ``tf.cond``, if exact; ``test``: its
    condition as tf.cond takes it."""
    if isinstance(node.orelse, cst.If):
        return None  # elif chains: left alone
    if "#" in ctx.module.code_for_node(node.body) or (
        node.orelse is not None and "#" in ctx.module.code_for_node(node.orelse)
    ):
        return None  # a fix must not drop comments
    body = _simple_statements(node.body)
    orelse = _simple_statements(node.orelse.body) if node.orelse is not None else []
    if body is None or orelse is None:
        return None
    returns = _single_return(body), _single_return(orelse)
    if returns[0] is not None and returns[1] is not None:
        if not all(is_pure(v, ctx) for v in returns) or any(_reads_none_default(v, ctx) for v in returns):
            return None
        made = cond_text(ctx, keras, test, [returns[0]], [returns[1]])
        return None if made is None else (_statement(f"return {made[0]}", node), made[1])
    true_assigned = _assignments(body, ctx)
    if true_assigned is None:
        return None
    names = list(true_assigned)
    if node.orelse is None:
        if not all(_keeps_value(name, value, ctx) for name, value in true_assigned.items()):
            return None
        false_values: List[cst.BaseExpression] = [cst.Name(name) for name in names]
    else:
        false_assigned = _assignments(orelse, ctx)
        if false_assigned is None or set(false_assigned) != set(true_assigned):
            return None
        false_values = [false_assigned[name] for name in names]
    if any(_reads_none_default(value, ctx) for value in [*true_assigned.values(), *false_values]):
        return None
    made = cond_text(ctx, keras, test, [true_assigned[n] for n in names], false_values)
    return None if made is None else (_statement(f"{', '.join(names)} = {made[0]}", node), made[1])


def _statement(text: str, node: cst.If) -> cst.BaseStatement:
    return cst.parse_statement(text + "\n").with_changes(leading_lines=node.leading_lines)


def _simple_statements(block: cst.BaseSuite) -> Optional[List[cst.BaseSmallStatement]]:
    """The small statements of a block made only of simple statement lines."""
    lines = block.body if isinstance(block, cst.IndentedBlock) else [block]
    result: List[cst.BaseSmallStatement] = []
    for line in lines:
        if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return None
        result.extend(line.body)
    return result or None


def _single_return(statements: Sequence[cst.BaseSmallStatement]) -> Optional[cst.BaseExpression]:
    if len(statements) == 1 and isinstance(statements[0], cst.Return):
        return statements[0].value
    return None


def _assignments(statements: Sequence[cst.BaseSmallStatement], ctx) -> Optional[Dict[str, cst.BaseExpression]]:
    """name -> value for a branch of plain ``name = pure_value`` lines, else None."""
    assigned: Dict[str, cst.BaseExpression] = {}
    for statement in statements:
        if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1):
            return None
        target = statement.targets[0].target
        if not isinstance(target, cst.Name) or target.value in assigned:
            return None
        if not is_pure(statement.value, ctx) or _reads_any(statement.value, assigned):
            return None  # a later line reading an earlier one needs their order
        assigned[target.value] = statement.value
    return assigned


def _reads_any(expr: cst.CSTNode, names) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value in names
    if isinstance(expr, cst.Attribute):
        return _reads_any(expr.value, names)
    if isinstance(expr, cst.Arg):
        return _reads_any(expr.value, names)
    return any(_reads_any(child, names) for child in children(expr))


def _keeps_value(name: str, value: cst.BaseExpression, ctx) -> bool:
    """Without ``else`` the name must already be bound: a parameter, or read by its new value."""
    if _reads_any(value, {name}):
        return True
    return ctx.is_parameter(name)
