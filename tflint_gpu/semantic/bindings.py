"""Def-use in a function body: which names a statement reads or binds, and
whether a name is read after a point before being bound again.

Used by rules that must know how a name flows through straight-line code and
`if`/`while`/`with` blocks (TFG102: a name set in one branch of a tensor `if`
and read after it), and by fixes (is a name used anywhere else). Unless a
function says otherwise, everything is computed from the syntax of one
function; nested functions, classes, lambdas and comprehensions are their own
scopes and are not entered.

Three more groups of facts:

* what lies anywhere below a node, nested scopes included (``mentions_attribute``,
  ``mentions_expression``, ``name_uses``, ``global_statements``,
  ``comprehension_scoped``, ``comes_after``) and in a function's own body
  (``returned_names``, ``assignments``, ``calls``);
* which scope's binding a name in a scope sees, from the model's ``ScopeInfo``
  (``binding_scope``, ``is_builtin``, ``first_parameter``);
* nothing here resolves imports (``names.Resolver`` does) or knows about graphs.
"""
from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from tflint_gpu.semantic.model import ASSIGNED, PARAM, SCOPE_TYPES, ScopeInfo, children, lookup, returns, walk
from tflint_gpu.semantic.names import Resolver

NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda,
                 cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def block_statements(block: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    """The statements of an indented block (none for a one-line suite)."""
    return block.body if isinstance(block, cst.IndentedBlock) else ()


def block_path(statements: Sequence[cst.BaseStatement], target: cst.If) -> Optional[List[Tuple[Sequence, int]]]:
    """(statements, index) from the block holding ``target`` out to the function body,
    through `with` blocks only."""
    for index, statement in enumerate(statements):
        if statement is target:
            return [(statements, index)]
        if isinstance(statement, cst.With):
            inner = block_path(block_statements(statement.body), target)
            if inner is not None:
                return inner + [(statements, index)]
    return None


def statements_before(path) -> Iterator[cst.CSTNode]:
    """What runs before the statement ``path`` leads to: earlier statements of
    each enclosing block, and the items of each enclosing ``with``."""
    for level, (statements, index) in enumerate(path):
        yield from statements[:index]
        if level + 1 < len(path):
            outer_statements, outer_index = path[level + 1]
            yield from outer_statements[outer_index].items  # with ... as name


def read_after(name: str, path) -> bool:
    """Is ``name`` read after the `if` before it is set again? (False when unsure.)"""
    for statements, index in path:
        use = first_use(name, statements[index + 1:])
        if use is not None:
            return use == "read"
    return False


def first_use(name: str, statements: Sequence[cst.BaseStatement]) -> Optional[str]:
    """How ``statements`` first use ``name``: "read", "write", "unsure", or None (not at all)."""
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            if len(statement.body) == 1 and isinstance(statement.body[0], cst.Assign):
                assign = statement.body[0]
                if name not in mentions(assign.value) and any(
                    name in target_names(t.target) for t in assign.targets
                ):
                    return "write"
            if name in mentions(statement):
                return "read"
            continue
        if isinstance(statement, cst.If):
            if name in mentions(statement.test):
                return "read"
            orelse = statement.orelse
            other = [orelse] if isinstance(orelse, cst.If) else (block_statements(orelse.body) if orelse else ())
            uses = {first_use(name, block_statements(statement.body)), first_use(name, other)}
        elif isinstance(statement, cst.While):
            if name in mentions(statement.test):
                return "read"
            uses = {first_use(name, block_statements(statement.body)), None}
        elif isinstance(statement, cst.With):
            if any(name in mentions(item) for item in statement.items):
                return "unsure"
            uses = {first_use(name, block_statements(statement.body))}
        else:
            uses = {"unsure" if name in mentions(statement) else None}
        if "read" in uses:
            return "read"
        if uses == {None}:
            continue
        return uses.pop() if len(uses) == 1 else "unsure"
    return None


def ends_in_return(block: cst.BaseSuite) -> bool:
    statements = block_statements(block)
    if not statements:
        return isinstance(block, cst.SimpleStatementSuite) and isinstance(block.body[-1], cst.Return)
    last = statements[-1]
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)


def _walk(node: cst.CSTNode, skip_scopes: bool = False) -> Iterator[cst.CSTNode]:
    return walk(node, skip=NESTED_SCOPES if skip_scopes else ())


def descendants(node: cst.CSTNode) -> Set[int]:
    """The ids of ``node`` and every node below it (nested scopes included)."""
    return {id(n) for n in walk(node)}


def count_name(node: cst.CSTNode, name: str) -> int:
    """How many ``Name`` nodes spelled ``name`` lie below ``node``: bindings,
    reads, nested scopes, attribute and keyword names all count (an upper
    bound of its uses, for "used only here" questions). One walk of ``node``;
    a caller asking about many names below one node uses ``name_counts``."""
    return sum(1 for n in walk(node) if isinstance(n, cst.Name) and n.value == name)


def name_counts(node: cst.CSTNode) -> Dict[str, int]:
    """``count_name(node, name)`` for every name at once (absent: 0), from one walk."""
    found: Dict[str, int] = {}
    for n in walk(node):
        if isinstance(n, cst.Name):
            found[n.value] = found.get(n.value, 0) + 1
    return found


def guarded_nodes(function: cst.CSTNode, classify) -> Set[int]:
    """Ids of the nodes an ``if`` guards by its test: ``classify(test)`` says
    True (the body is guarded), False (the ``else`` is) or None (neither)."""
    found: Set[int] = set()
    for statement in walk(function):
        if isinstance(statement, cst.If):
            verdict = classify(statement.test)
            block = statement.body if verdict else statement.orelse if verdict is False else None
            if block is not None:
                found |= descendants(block)
    return found


def condition_operands(function: cst.CSTNode) -> Set[int]:
    """Ids of the nodes inside the test of an ``if``/``while``/conditional
    expression or an operand of ``and``/``or``/``not``: Python calls ``bool()``
    on these through the enclosing construct."""
    found: Set[int] = set()
    for node in walk(function):
        if isinstance(node, (cst.If, cst.While, cst.IfExp)):
            roots: Sequence[cst.CSTNode] = (node.test,)
        elif isinstance(node, cst.BooleanOperation):
            roots = (node.left, node.right)
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            roots = (node.expression,)
        else:
            continue
        for root in roots:
            found |= descendants(root)
    return found


def contains(block: Optional[cst.CSTNode], types) -> bool:
    return block is not None and any(isinstance(n, types) for n in _walk(block, skip_scopes=True))


def mentions(node: Optional[cst.CSTNode]) -> Set[str]:
    """Names used or bound in ``node`` (not attribute or keyword names, not inside nested scopes)."""
    found: Set[str] = set()
    if node is None:
        return found
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        elif isinstance(current, cst.Attribute):
            stack.append(current.value)
        elif isinstance(current, cst.Arg):
            stack.append(current.value)
        elif isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            found.add(current.name.value)
        elif not isinstance(current, NESTED_SCOPES):
            stack.extend(children(current))
    return found


def bound_names(block: Optional[cst.CSTNode]) -> Set[str]:
    """Names a block binds (assignment, for, with, import, def), outside nested scopes."""
    found: Set[str] = set()
    if block is None:
        return found
    for node in _walk(block, skip_scopes=True):
        if isinstance(node, cst.AssignTarget):
            found |= target_names(node.target)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            found |= target_names(node.target)
        elif isinstance(node, cst.For):
            found |= target_names(node.target)
        elif isinstance(node, cst.AsName):
            found |= target_names(node.name)
        elif isinstance(node, cst.NamedExpr):
            found |= target_names(node.target)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            found.add(node.name.value)
    return found


def target_elements(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The expressions an assignment target stores into, tuples and lists
    unpacked (``a, (b.c, *d[0])`` -> ``a``, ``b.c``, ``d[0]``)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            value = element.value
            if isinstance(value, cst.StarredElement):
                value = value.value
            yield from target_elements(value)
    else:
        yield target


def target_names(target: cst.CSTNode) -> Set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        names: Set[str] = set()
        for element in target.elements:
            value = element.value.value if isinstance(element.value, cst.StarredElement) else element.value
            names |= target_names(value)
        return names
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return set()


# -- anywhere below a node (nested scopes included) ---------------------------
def is_attribute(expr: Optional[cst.CSTNode], base: str, attr: str) -> bool:
    """``expr`` is ``base.attr``: attribute ``attr`` of the plain name ``base`` (``self.steps``)."""
    return isinstance(expr, cst.Attribute) and expr.attr.value == attr \
        and isinstance(expr.value, cst.Name) and expr.value.value == base


def mentions_attribute(node: Optional[cst.CSTNode], base: str, attr: str) -> bool:
    """Does ``base.attr`` occur at or below ``node``, read or written, nested
    scopes included?"""
    return node is not None and any(is_attribute(n, base, attr) for n in walk(node))


def mentions_expression(node: cst.CSTNode, expr: cst.CSTNode) -> bool:
    """Is ``expr`` spelt again at or below ``node`` (some node there
    ``deep_equals`` it), nested scopes included?"""
    return any(n.deep_equals(expr) for n in walk(node))


def name_uses(node: cst.CSTNode, name: str) -> List[cst.Name]:
    """Every ``Name`` spelling ``name`` as a name at or below ``node``, in
    source order, nested scopes included: reads, bindings, parameters,
    def/class/import names, ``global``/``nonlocal`` statements; not an
    attribute name (``x.name``) nor an argument keyword (``f(name=1)``)."""
    not_names: Set[int] = set()
    found: List[cst.Name] = []
    for current in walk(node):
        if isinstance(current, cst.Attribute):
            not_names.add(id(current.attr))
        elif isinstance(current, cst.Arg):
            if current.keyword is not None:
                not_names.add(id(current.keyword))
        elif isinstance(current, cst.Name) and current.value == name and id(current) not in not_names:
            found.append(current)
    return found


def global_statements(node: cst.CSTNode) -> List[cst.Global]:
    """The ``global`` statements at or below ``node``, nested functions included."""
    return [n for n in walk(node) if isinstance(n, cst.Global)]


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def comprehension_scoped(node: cst.CSTNode) -> Set[int]:
    """Ids of the nodes at or below ``node`` that a comprehension evaluates in
    its own scope: its element (key and value), targets, conditions and inner
    ``for`` clauses; not its first iterable, evaluated where the comprehension
    stands."""
    found: Set[int] = set()
    for current in walk(node):
        if isinstance(current, _COMPREHENSIONS) and id(current) not in found:
            for_in = current.for_in
            parts: List[cst.CSTNode] = [for_in.target, *for_in.ifs]
            if for_in.inner_for_in is not None:
                parts.append(for_in.inner_for_in)
            parts.extend([current.key, current.value] if isinstance(current, cst.DictComp) else [current.elt])
            for part in parts:
                found |= descendants(part)
    return found


def comes_after(root: cst.CSTNode, first: cst.CSTNode, later: cst.CSTNode) -> bool:
    """Does ``later`` start after the whole of ``first`` ends, in source order
    below ``root``? (False if either is not below ``root``.)"""
    order = {id(n): i for i, n in enumerate(walk(root))}
    if id(first) not in order or id(later) not in order:
        return False
    end = max(order[id(n)] for n in walk(first))
    return order[id(later)] > end


# -- a function's own body (not nested functions, classes or lambdas) ---------
def returned_names(function: cst.CSTNode, name: str) -> List[cst.Name]:
    """The ``name`` of each ``return name`` in ``function``'s own body."""
    return [n.value for n in returns(function) if isinstance(n.value, cst.Name) and n.value.value == name]


def assignments(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The ``=``, annotated and augmented assignments at or below ``node``,
    not inside nested functions, classes or lambdas."""
    return (n for n in walk(node, skip=SCOPE_TYPES) if isinstance(n, (cst.Assign, cst.AnnAssign, cst.AugAssign)))


def assignments_and_calls(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The assignments (as ``assignments``) and calls at or below ``node``, in
    source order, not inside nested functions, classes or lambdas."""
    return (n for n in walk(node, skip=SCOPE_TYPES)
            if isinstance(n, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Call)))


def if_statements(node: cst.CSTNode) -> Iterator[cst.If]:
    """The ``if`` statements at or below ``node``, in source order, not inside
    nested functions, classes or lambdas."""
    return (n for n in walk(node, skip=SCOPE_TYPES) if isinstance(n, cst.If))


def expression_nodes(expr: cst.CSTNode) -> List[cst.CSTNode]:
    """``expr`` and the nodes below it, in source order, not entering nested
    functions, classes or lambdas (for a small expression such as a decorator)."""
    return list(walk(expr, skip=SCOPE_TYPES))


def own_nodes(node: cst.CSTNode) -> Set[int]:
    """The ids of ``node`` and the nodes below it, not entering nested
    functions, classes or lambdas (their ``def``/``class``/``lambda`` node is in)."""
    return {id(n) for n in walk(node, skip=SCOPE_TYPES)}


# -- bindings across scopes (the model's ScopeInfo) ---------------------------
def binding_scope(name: str, scope: ScopeInfo) -> Optional[ScopeInfo]:
    """The scope whose binding of ``name`` code in ``scope`` sees (``model.lookup``)."""
    found = lookup(name, scope)
    return found.scope if found is not None else None


def under_condition(node: cst.CSTNode, outer: cst.CSTNode, scope: ScopeInfo, kinds: Tuple[type, ...] = (cst.If,)) -> bool:
    """Is ``node`` (of ``scope``'s own code) under a node of ``kinds`` (an ``if``...) between it and
    ``outer`` (a loop around it): not run whenever ``outer``'s body is?"""
    for parent in scope.ancestors(node):
        if parent is outer:
            return False
        if isinstance(parent, kinds):
            return True
    return False


def target_paths(target: cst.BaseExpression, name: str, prefix: Tuple[int, ...] = ()) -> List[Optional[Tuple[int, ...]]]:
    """Where ``name`` stands in an assignment target, as element positions
    (``(a, b), c``: ``b`` at ``(0, 1)``); None for a position a starred element hides."""
    if isinstance(target, cst.Name):
        return [prefix] if target.value == name else []
    if isinstance(target, (cst.Tuple, cst.List)):
        found: List[Optional[Tuple[int, ...]]] = []
        starred = False
        for position, element in enumerate(target.elements):
            value = element.value
            if isinstance(element, cst.StarredElement):
                starred = True
                found.extend(None for _ in target_paths(value, name))
                continue
            inner = target_paths(value, name, prefix + (position,))
            found.extend(None if starred else p for p in inner)
        return found
    return []


def loop_around(node: cst.CSTNode, scope: ScopeInfo, comprehensions: bool = False) -> Optional[cst.CSTNode]:
    """The innermost ``for``/``while`` of ``scope``'s own body whose body (or a ``while`` test)
    holds ``node`` (``comprehensions``: or the innermost comprehension holding it, if nearer)."""
    child = node
    for parent in scope.ancestors(node):
        if isinstance(parent, cst.For) and child is parent.body:
            return parent
        if isinstance(parent, cst.While) and child in (parent.body, parent.test):
            return parent
        if comprehensions and isinstance(parent, _COMPREHENSIONS):
            return parent
        child = parent
    return None


def annotation_of(value: cst.BaseExpression, scope: ScopeInfo) -> Optional[cst.BaseExpression]:
    """The annotation of the assignment ``value`` is the value of (``model: tf.keras.Model =
    REGISTRY.build_model(...)``), or None."""
    parent = next(iter(scope.ancestors(value)), None)
    if isinstance(parent, cst.AnnAssign) and parent.value is value:
        return parent.annotation.annotation
    return None


def redefined_outside(name: str, scope: ScopeInfo) -> bool:
    """Does ``scope`` read ``name`` from an enclosing scope that defines it more than once (a
    notebook redefining a helper in a later cell)? Which def runs then depends on when ``scope``
    runs, which the lookup cannot tell."""
    found = lookup(name, scope)
    return found is not None and found.scope is not scope \
        and len(found.scope.definitions.get(name, ())) + len(found.scope.assigned.get(name, ())) > 1


def is_constant(expr: cst.BaseExpression, scope: ScopeInfo, resolver: Resolver, depth: int = 0) -> bool:
    """Does ``expr`` have the same value wherever and whenever ``scope`` evaluates it: literals,
    names bound once at module level to such values, imported names, attributes of those, and
    library calls, tuples, lists and operators of such values (``os.path.join(ROOT, "m.keras")``)?
    A local, a parameter or a global that is rebound is not."""
    if depth > 4:
        return False
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.Name):
        if expr.value in ("None", "True", "False"):
            return True
        found = lookup(expr.value, scope)
        if found is None or found.kind != ASSIGNED:
            return resolver.qualname(expr, scope) is not None  # an import
        if found.scope.parent is not None or found.rebound or found.writers:
            return False
        value = found.single_value
        return isinstance(value, cst.BaseExpression) and is_constant(value, found.scope, resolver, depth + 1)
    if isinstance(expr, cst.Attribute):
        return resolver.qualname(expr, scope) is not None or is_constant(expr.value, scope, resolver, depth + 1)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(not isinstance(e, cst.StarredElement) and is_constant(e.value, scope, resolver, depth + 1)
                   for e in expr.elements)
    if isinstance(expr, cst.Call):
        return resolver.qualname(expr.func, scope) is not None and \
            all(not arg.star and is_constant(arg.value, scope, resolver, depth + 1) for arg in expr.args)
    if isinstance(expr, cst.BinaryOperation):
        return is_constant(expr.left, scope, resolver, depth + 1) and is_constant(expr.right, scope, resolver,
                                                                                   depth + 1)
    return False


def is_builtin(name: str, scope: ScopeInfo) -> bool:
    """Nothing visible from ``scope`` binds ``name`` (an assignment, parameter,
    def, class or import): it is the builtin of that name."""
    return Resolver.is_free(name, scope, declarations=False)


def first_parameter(function: ScopeInfo) -> Optional[str]:
    """The name of a function's first parameter (``self`` in a method), if any."""
    return parameter_name(function, 0)


def parameter_name(function: ScopeInfo, position: int) -> Optional[str]:
    """The name of a function's parameter at ``position`` (0-based, in the
    order of the signature), if any."""
    for name, values in function.assigned.items():
        if any(isinstance(v, tuple) and v[0] == PARAM and v[2] == position for v in values):
            return name
    return None


def local_values(name: str, function: ScopeInfo) -> Sequence:
    """Everything ``function`` itself binds to ``name`` (parameters, assignments,
    loop targets...), or nothing when ``name`` is not local to it (``model.lookup``)."""
    found = lookup(name, function)
    return found.own_values if found is not None and found.scope is function else ()


def always_returns(body) -> bool:
    """Does this statement list end in a ``return`` (or ``raise``) on every path?"""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (cst.Return, cst.Raise)):  # in a one-line suite
        return True
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, (cst.Return, cst.Raise)) for s in last.body)
    if isinstance(last, cst.If):
        if last.orelse is None:
            return False
        orelse = last.orelse
        rest = [orelse] if isinstance(orelse, cst.If) else list(orelse.body.body)
        return always_returns(last.body.body) and always_returns(rest)
    if isinstance(last, cst.With):
        return always_returns(last.body.body)
    return False


def single_index(expr: cst.Subscript) -> Optional[cst.BaseExpression]:
    """The index of ``a[i]`` (one plain index, not a slice), else None."""
    if len(expr.slice) != 1:
        return None
    inner = expr.slice[0].slice
    if isinstance(inner, cst.Index) and inner.star is None:
        return inner.value
    return None
