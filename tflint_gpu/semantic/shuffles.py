"""Random permutations of arrays in place, and arrays used together as rows and their labels.

Two facts TFG609 asks (and any rule about data pipelines fed from NumPy may):

* ``shuffle_of(statement, scope, ctx)``: is this small statement a random
  permutation of one array, and from which random stream? The statements
  read are ``np.random.shuffle(a)`` (and ``from numpy.random import shuffle``),
  ``random.shuffle(a)``, ``g.shuffle(a)`` on a generator bound once in the
  file to ``np.random.default_rng(...)``, ``np.random.RandomState(...)``,
  ``np.random.Generator(...)`` or ``random.Random(...)``, and
  ``a = np.random.permutation(a)`` / ``a = g.permutation(a)`` (the same array
  read and rebound: ``permutation(n)`` of a number makes indices, not a
  shuffled array). The stream is ``numpy.random`` or ``random`` (the
  module's global state) or the generator's binding.
* ``reseeds(statement, stream, ctx, scope)``: may this statement put the stream
  back in a known state (``np.random.seed``, ``set_state``, ``random.seed``,
  ``setstate``, ``keras.utils.set_random_seed``, ``g.seed``/``g.set_state``
  on the generator, any call whose name speaks of a seed or a state, the
  generator rebound)? Two shuffles of equal-length arrays from the same
  state apply the same permutation (measured, NumPy 2.4.6), which keeps the
  rows and labels aligned.
* ``used_together(a, b, nodes)``: the first node among ``nodes`` that uses
  the arrays written ``a`` and ``b`` as rows and their labels: ``zip(a, b)``,
  a training or splitting call given both (``fit(a, b)``, ``fit(x=a, y=b)``,
  ``train_on_batch``, ``evaluate``, ``partial_fit``, ``train_test_split``,
  ``ImageDataGenerator.flow``...), a tuple of both handed to
  ``from_tensor_slices``/``from_tensors`` or given as ``validation_data``,
  or both indexed with the same index in one block (``a[i:j]``, ``b[i:j]``).
  Two arrays merely returned together or listed together are not read as a
  pair (two splits shuffled each on its own are fine).
"""
from __future__ import annotations

from typing import Iterable, List, NamedTuple, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.model import ScopeInfo, walk

_CODE = cst.Module(body=[]).code_for_node

_MODULE_STREAMS = {
    "numpy.random.shuffle": ("numpy.random", "shuffle"),
    "numpy.random.permutation": ("numpy.random", "permutation"),
    "random.shuffle": ("random", "shuffle"),
}
_GENERATORS = frozenset({"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator",
                         "random.Random"})
_RESEEDS = frozenset({"numpy.random.seed", "numpy.random.set_state", "random.seed", "random.setstate",
                      "keras.utils.set_random_seed", "tensorflow.keras.utils.set_random_seed"})
_PAIR_CALLS = frozenset({"fit", "fit_generator", "train_on_batch", "evaluate", "test_on_batch", "partial_fit",
                         "train_test_split", "flow", "score"})
_TUPLE_CALLS = frozenset({"from_tensor_slices", "from_tensors"})


class Shuffle(NamedTuple):
    statement: cst.BaseSmallStatement  # the Expr or Assign
    call: cst.Call
    array: str  # the array's code (a name or a dotted attribute)
    stream: str  # "numpy.random", "random", or "generator:<id of its binding's value>"
    generator: Optional[str]  # the generator's name for a method call, else None


def _array_text(expr: cst.BaseExpression) -> Optional[str]:
    node = expr
    while isinstance(node, cst.Attribute):
        node = node.value
    return _CODE(expr) if isinstance(node, cst.Name) else None


def _stream(call: cst.Call, scope: ScopeInfo, ctx) -> Optional[tuple]:
    """(stream, method, generator name) of a shuffle/permutation call, or None."""
    qualname = ctx.qualname(call.func, scope)
    if qualname in _MODULE_STREAMS:
        stream, method = _MODULE_STREAMS[qualname]
        return stream, method, None
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in ("shuffle", "permutation")
            and isinstance(func.value, cst.Name)):
        return None
    binding = ctx.assigned(func.value.value, call, scope)
    if binding is None or binding.is_parameter or len(binding.values) != 1:
        return None
    value = binding.values[0]
    if not isinstance(value, cst.Call) or ctx.qualname(value.func, binding.scope) not in _GENERATORS:
        return None
    if func.attr.value == "permutation" and ctx.qualname(value.func, binding.scope) == "random.Random":
        return None
    return f"generator:{id(value)}", func.attr.value, func.value.value


def shuffle_of(statement: cst.CSTNode, scope: ScopeInfo, ctx) -> Optional[Shuffle]:
    """The random permutation of one array ``statement`` makes (see the module's docstring), or None."""
    if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
        call = statement.value
        found = _stream(call, scope, ctx)
        if found is None or found[1] != "shuffle":
            return None
    elif isinstance(statement, cst.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.value, cst.Call):
        call = statement.value
        found = _stream(call, scope, ctx)
        if found is None or found[1] != "permutation":
            return None
        target = _array_text(statement.targets[0].target)
        if target is None:
            return None
    else:
        return None
    args = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if len(args) != 1 or len(call.args) != 1:
        return None
    array = _array_text(args[0].value)
    if array is None:
        return None
    if isinstance(statement, cst.Assign) and array != target:
        return None
    return Shuffle(statement, call, array, found[0], found[2])


def reseeds(statement: cst.CSTNode, shuffle: Shuffle, ctx, scope: ScopeInfo) -> bool:
    """May ``statement`` set the random state ``shuffle`` draws from (so the next shuffle may repeat
    the permutation)? Also True when it rebinds the generator."""
    for node in ctx.descendants(statement):
        if isinstance(node, cst.Call):
            qualname = ctx.qualname(node.func, scope) or ""
            if qualname in _RESEEDS:
                return True
            func = node.func
            last = func.attr.value if isinstance(func, cst.Attribute) else \
                func.value if isinstance(func, cst.Name) else ""
            if "seed" in last.lower() or "state" in last.lower():
                return True
        if shuffle.generator is not None and isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)):
            target = node.target
            base = target
            while isinstance(base, (cst.Attribute, cst.Subscript)):
                base = base.value
            if isinstance(base, cst.Name) and base.value == shuffle.generator:
                return True
    return False


def rebinds(statement: cst.CSTNode, array: str, ctx) -> bool:
    """Does ``statement`` assign the array written ``array`` (so a shuffle before it is of another value)?"""
    for node in ctx.descendants(statement):
        targets: List[cst.BaseExpression] = []
        if isinstance(node, cst.AssignTarget):
            targets.append(node.target)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            targets.append(node.target)
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets.append(node.target)
        for target in targets:
            for part in ctx.descendants(target):
                if isinstance(part, (cst.Name, cst.Attribute)) and _CODE(part) == array:
                    return True
    return False


def _is(expr: cst.BaseExpression, text: str) -> bool:
    return _array_text(expr) == text


def _pair_in(elements: Iterable[cst.BaseExpression], a: str, b: str) -> bool:
    values = list(elements)
    return any(_is(v, a) for v in values) and any(_is(v, b) for v in values)


def _call_name(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def used_together(a: str, b: str, nodes: Iterable[cst.CSTNode], ctx, scope: ScopeInfo) -> Optional[cst.CSTNode]:
    """The first of ``nodes`` (a scope's nodes, in source order) that uses the arrays written ``a`` and
    ``b`` as rows and labels (see the module's docstring), or None."""
    indexed = {}  # id(statement) -> {index code: set of arrays}
    for node in nodes:
        if isinstance(node, cst.Call):
            name = _call_name(node)
            positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
            keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
            if name == "zip" and isinstance(node.func, cst.Name) and ctx.qualname(node.func, scope) is None \
                    and _pair_in(positional, a, b):
                return node
            if name in _PAIR_CALLS:
                given = positional[:2] + [keywords[k] for k in ("x", "y") if k in keywords]
                if _pair_in(given, a, b):
                    return node
                data = keywords.get("validation_data")
                if isinstance(data, (cst.Tuple, cst.List)) and _pair_in((e.value for e in data.elements), a, b):
                    return node
            if name in _TUPLE_CALLS and positional and isinstance(positional[0], (cst.Tuple, cst.List)) \
                    and _pair_in((e.value for e in positional[0].elements), a, b):
                return node
        elif isinstance(node, cst.Subscript):
            array = _array_text(node.value)
            if array in (a, b):
                key = _CODE(cst.Subscript(value=cst.Name("_"), slice=node.slice))
                block = _block_of(node, scope)
                seen = indexed.setdefault(id(block), {}).setdefault(key, set())
                seen.add(array)
                if seen == {a, b}:
                    return node
    return None


def _block_of(node: cst.CSTNode, scope: ScopeInfo) -> Optional[cst.CSTNode]:
    for above in scope.ancestors(node):
        if isinstance(above, (cst.IndentedBlock, cst.Module)):
            return above
    return None

# -- where a shuffle stands in its block ------------------------------------------------------------
_OWN_CODE = (cst.FunctionDef, cst.ClassDef)
# How many statements after the second shuffle, in its block and in each enclosing one, are read for a
# use of both arrays: the use is near, and the reading stays linear in the file.
_WINDOW = 64
# How many statements apart two shuffles of a block may be to count as one after the other.
NEAR = 16


def _position(block: cst.CSTNode, item: cst.CSTNode, scope: ScopeInfo) -> Optional[int]:
    """The index of ``item`` in ``block.body`` (each block's index made once, kept with the scope's
    other per-file answers and freed with them)."""
    key = ("~block-index", id(block))
    found = scope.lookups.get(key)
    if found is None or found[0] is not block:
        found = scope.lookups[key] = (block, {id(node): i for i, node in enumerate(block.body)})
    return found[1].get(id(item))


def place(call: cst.Call, scope: ScopeInfo) -> Optional[Tuple[cst.CSTNode, Tuple[int, int], cst.CSTNode]]:
    """(the block, (line, small statement) position, the small statement) of a call that is a whole
    statement's value, or None."""
    above = list(scope.ancestors(call))
    if len(above) < 3:
        return None
    statement, line, block = above[0], above[1], above[2]
    if not isinstance(statement, (cst.Expr, cst.Assign)) or statement.value is not call \
            or not isinstance(line, cst.SimpleStatementLine) or not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    row = _position(block, line, scope)
    column = next(i for i, item in enumerate(line.body) if item is statement)
    return block, (row, column), statement


def between(block: cst.CSTNode, start: Tuple[int, int], end: Tuple[int, int]) -> List[cst.CSTNode]:
    """The statements of ``block`` strictly between two positions."""
    found: List[cst.CSTNode] = []
    for row in range(start[0], end[0] + 1):
        item = block.body[row]
        if isinstance(item, cst.SimpleStatementLine):
            for column, small in enumerate(item.body):
                if start < (row, column) < end:
                    found.append(small)
        elif start[0] < row < end[0]:
            found.append(item)
    return found


def after(block: cst.CSTNode, at: Tuple[int, int], scope: ScopeInfo) -> List[cst.CSTNode]:
    """The scope's nodes after the statement at ``at`` of ``block``, in source order (comprehensions
    included): the rest of the block, then of each enclosing block (``_WINDOW`` statements of each)."""
    nodes: List[cst.CSTNode] = []
    line = block.body[at[0]]
    inner: cst.CSTNode = block
    for small in line.body[at[1] + 1:]:
        nodes.extend(walk(small, skip=_OWN_CODE))
    for item in block.body[at[0] + 1:at[0] + 1 + _WINDOW]:
        nodes.extend(walk(item, skip=_OWN_CODE))
    for above in scope.ancestors(block):
        if isinstance(above, (cst.IndentedBlock, cst.Module)):
            index = _position(above, inner, scope)
            if index is not None:
                for item in above.body[index + 1:index + 1 + _WINDOW]:
                    nodes.extend(walk(item, skip=_OWN_CODE))
        inner = above
    return nodes
