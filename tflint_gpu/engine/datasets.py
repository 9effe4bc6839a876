"""tf.data pipelines as chains of transformations, and what their functions do.

A *chain* is a run of ``Dataset`` transformation calls on one receiver:
``raw.map(f).cache().shuffle(100)`` has the source ``raw`` and the stages
``map``, ``cache``, ``shuffle`` (innermost first). A chain continues across
straight-line statements of one block that reassign the same name::

    ds = tf.data.TFRecordDataset(files)
    ds = ds.cache()          # chain 1: source TFRecordDataset(...), stage cache
    ds = ds.map(parse)       # chain 2: previous = chain 1, stage map

Only ``name = <chain on name>`` links two statements; any other statement that
may rebind the name (a compound statement, augmented assignment, ``del``)
breaks the link, so a split chain is only ever what the code certainly runs.
A chain counts only when ``ctx.is_dataset`` knows its receiver is a dataset.

Also here: the calls a function given to ``map`` makes (following functions of
the same module), and which of those draw random numbers per call.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Tuple

import libcst as cst

from tflint_gpu.engine.context import argument
from tflint_gpu.engine.model import ModuleModel, ScopeInfo

# Instance methods of tf.data.Dataset that return a dataset derived from `self`
# (static constructors such as `zip`, `range`, `from_tensor_slices` are not stages).
TRANSFORMATIONS = frozenset(
    {
        "apply", "batch", "bucket_by_sequence_length", "cache", "concatenate", "enumerate", "filter",
        "flat_map", "group_by_window", "ignore_errors", "interleave", "map", "padded_batch", "prefetch",
        "ragged_batch", "rebatch", "rejection_resample", "repeat", "scan", "shard", "shuffle", "skip",
        "snapshot", "sparse_batch", "take", "take_while", "unbatch", "unique", "window", "with_options",
    }
)


@dataclass(eq=False)
class Chain:
    """One expression's run of transformations, linked to the statement before."""

    stages: List[cst.Call]  # innermost first; each call's func is Attribute(value=receiver)
    source: cst.BaseExpression  # the receiver of the first stage
    scope: ScopeInfo
    previous: Optional["Chain"] = None  # same name assigned by the preceding statement
    following: Optional["Chain"] = None  # the statement after it continuing the same name
    target: Optional[str] = None  # the name a statement `target = <chain>` binds it to

    def index(self, stage: cst.Call) -> int:
        """Position of one of this chain's own stages in ``all_stages()``."""
        before = len(self.previous.all_stages()) if self.previous is not None else 0
        return before + self.position(stage)

    @property
    def outermost(self) -> cst.Call:
        return self.stages[-1]

    def all_stages(self) -> List[cst.Call]:
        """Every stage from the start of the pipeline, across linked statements."""
        earlier = self.previous.all_stages() if self.previous is not None else []
        return earlier + self.stages

    def owns(self, stage: cst.Call) -> bool:
        return any(s is stage for s in self.stages)

    def position(self, stage: cst.Call) -> int:
        """Position of one of this chain's own stages in ``stages``."""
        return next(i for i, s in enumerate(self.stages) if s is stage)

    def later_stages(self) -> List[cst.Call]:
        """Stages of the linked statements after this one."""
        return self.following.stages + self.following.later_stages() if self.following is not None else []

    def origin(self) -> cst.BaseExpression:
        """The expression the whole (linked) pipeline starts from."""
        return self.previous.origin() if self.previous is not None else self.source


def method(stage: cst.Call) -> str:
    func = stage.func
    assert isinstance(func, cst.Attribute)
    return func.attr.value


def is_stage(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in TRANSFORMATIONS
    )


_CHAINS: "weakref.WeakKeyDictionary[ModuleModel, List[Chain]]" = weakref.WeakKeyDictionary()


def chains(ctx) -> List[Chain]:
    """Every maximal dataset chain of the module (computed once per file)."""
    found = _CHAINS.get(ctx.model)
    if found is None:
        found = _build(ctx)
        _CHAINS[ctx.model] = found
    return found


def _build(ctx) -> List[Chain]:
    model: ModuleModel = ctx.model
    calls = model.index.get("Call", ())
    inner = {id(call.func.value) for call, _ in calls if is_stage(call) and is_stage(call.func.value)}
    by_outermost: Dict[int, Chain] = {}
    result: List[Chain] = []
    for call, scope in calls:
        if not is_stage(call) or id(call) in inner:
            continue
        stages = [call]
        while is_stage(stages[-1].func.value):
            stages.append(stages[-1].func.value)
        stages.reverse()
        if not ctx.is_dataset(call, scope):
            continue
        chain = Chain(stages, stages[0].func.value, scope)
        by_outermost[id(call)] = chain
        result.append(chain)
    if result:
        for scope in model.scopes:
            if scope.kind in ("module", "function"):
                body = scope.node.body
                if isinstance(body, cst.IndentedBlock):
                    _link_block(body.body, by_outermost)
                elif isinstance(body, (list, tuple)):
                    _link_block(body, by_outermost)
    return result


def _link_block(statements, by_outermost: Dict[int, Chain]) -> None:
    """Link ``name = name.stage(...)`` to the chain the previous statement bound to ``name``."""
    last: Dict[str, Chain] = {}
    for stmt in statements:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                target = _single_name_target(small)
                if target is not None:
                    chain = by_outermost.get(id(small.value))
                    if chain is not None and isinstance(chain.source, cst.Name) \
                            and chain.source.value == target and target in last:
                        chain.previous = last[target]
                        last[target].following = chain
                    if chain is not None:
                        chain.target = target
                        last[target] = chain
                    else:
                        last.pop(target, None)
                elif isinstance(small, cst.Assign):
                    for target in small.targets:
                        _forget(target.target, last)
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    _forget(small.target, last)
                elif isinstance(small, cst.Del):
                    last.clear()
        else:
            # Compound statements: their own blocks are separate, and they may rebind names.
            last.clear()
            for block in _blocks(stmt):
                _link_block(block, by_outermost)


def _forget(target: cst.BaseExpression, last: Dict[str, Chain]) -> None:
    """Drop the names an assignment target rebinds (attributes and subscripts rebind none)."""
    if isinstance(target, cst.Name):
        last.pop(target.value, None)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            value = element.value
            _forget(value.value if isinstance(value, cst.StarredElement) else value, last)


def _single_name_target(small: cst.BaseSmallStatement) -> Optional[str]:
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value
    return None


def _blocks(stmt: cst.BaseCompoundStatement) -> Iterator[List[cst.BaseStatement]]:
    """Statement lists directly inside a compound statement (not nested function or class bodies)."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return
    parts: List[cst.CSTNode] = [stmt]
    while parts:
        part = parts.pop()
        body = getattr(part, "body", None)
        if isinstance(body, cst.IndentedBlock):
            yield list(body.body)
        for name in ("orelse", "finalbody"):
            extra = getattr(part, name, None)
            if extra is not None:
                parts.append(extra)
        for handler in getattr(part, "handlers", ()) or ():
            parts.append(handler)
        for case in getattr(part, "cases", ()) or ():
            parts.append(case)


def continued(chain: Chain, ctx) -> bool:
    """Does a later stage take this chain's dataset further (``ds = ds.batch(2)``
    after ``ds = ds.map(f)``, also past a loop or an ``if``, or ``other =
    ds.batch(2)``)? Then the chain is an intermediate stage, not a pipeline's end."""
    if chain.following is not None:
        return True
    name = chain.target
    if name is None:
        return False
    binding = chain.scope.binding_scope(name)
    index = _ORDER.get(ctx.model)
    if index is None:  # once per file: chains in source order, and by the name they start from
        found = chains(ctx)
        starting: Dict[str, List[Chain]] = {}
        for c in found:
            if isinstance(c.source, cst.Name) and c.previous is None:
                starting.setdefault(c.source.value, []).append(c)
        index = _ORDER[ctx.model] = ({id(c): i for i, c in enumerate(found)}, starting)
    positions, by_source = index
    here = positions[id(chain)]
    return any(
        other is not chain and other.scope.binding_scope(name) is binding
        and (positions[id(other)] > here or other.scope is not chain.scope)
        for other in by_source.get(name, ())
    )


_ORDER: "weakref.WeakKeyDictionary[ModuleModel, Tuple[Dict[int, int], Dict[str, List[Chain]]]]" = \
    weakref.WeakKeyDictionary()


def upstream(chain: Chain, ctx) -> List[str]:
    """The transformations a pipeline applies before its first (linked) stage, as
    far as the source shows them: the stages of the expressions its origin name is
    bound to, followed through names (all bindings of a name, in no particular
    order). A ``Dataset.list_files`` that shuffles (the default) counts as ``shuffle``."""
    seen = {id(s) for s in chain.all_stages() + chain.later_stages()}
    return _upstream(chain.origin(), chain.scope, ctx, seen)


def _upstream(expr: cst.BaseExpression, scope: ScopeInfo, ctx, seen: set) -> List[str]:
    stages: List[cst.Call] = []
    while is_stage(expr):
        stages.append(expr)
        expr = expr.func.value  # type: ignore[attr-defined]
    names: List[str] = []
    if isinstance(expr, cst.Name):
        found = scope.binding_scope(expr.value)
        for value in found.assigned[expr.value] if found is not None else ():
            if isinstance(value, cst.BaseExpression) and id(value) not in seen:
                seen.add(id(value))
                names += _upstream(value, found, ctx, seen)
    elif isinstance(expr, cst.Call) and ctx.qualname(expr.func, scope) == "tensorflow.data.Dataset.list_files":
        shuffle = argument(expr, 1, "shuffle")
        if not (isinstance(shuffle, cst.Name) and shuffle.value == "False"):
            names.append("shuffle")
    return names + [method(stage) for stage in reversed(stages)]


def shuffle_before_cache(names: List[str]) -> bool:
    """Is some ``cache`` preceded by a ``shuffle`` (the cache then replays one shuffled order)?"""
    shuffled = False
    for name in names:
        if name == "shuffle":
            shuffled = True
        elif name == "cache" and shuffled:
            return True
    return False


# -- functions given to map ------------------------------------------------
def map_function(stage: cst.Call) -> Optional[cst.BaseExpression]:
    return argument(stage, 0, "map_func")


def function_calls(
    func: Optional[cst.BaseExpression], scope: ScopeInfo, ctx
) -> Optional[List[Tuple[cst.Call, ScopeInfo]]]:
    """The calls a function (lambda, local def, ``functools.partial``) makes, following
    functions of this module it calls. None when the function cannot be resolved."""
    if func is None:
        return None
    target = ctx.graphs.function_scope(func, scope)
    if target is None:
        if ctx.qualname(func, scope) is not None:
            return [(cst.Call(func=func), scope)]  # the op itself: `ds.map(tf.io.read_file)`
        return None
    return [(call, current) for current in ctx.graphs.reachable(target) for call in current.calls]


_RANDOM_PREFIXES = ("tensorflow.random.", "tensorflow.image.random_")
_RANDOM_EXACT = frozenset(
    {
        "tensorflow.nn.dropout",
        "tensorflow.image.sample_distorted_bounding_box",
        "tensorflow.random_uniform",
        "tensorflow.random_normal",
        "tensorflow.random_crop",
        "tensorflow.random_shuffle",
        "tensorflow.truncated_normal",
        "tensorflow.multinomial",
    }
)
_KERAS_CONTAINERS = frozenset({"keras.Sequential", "keras.models.Sequential"})


def random_call(call: cst.Call, scope: ScopeInfo, ctx) -> Optional[str]:
    """How ``call`` draws new random numbers each time it runs, or None.

    Stateful ops (`tf.random.uniform`, `tf.image.random_flip_left_right`, ...),
    `tf.random.Generator` methods, and Keras random preprocessing layers
    (`RandomFlip`, ... directly or in a `Sequential`). Stateless ops
    (`tf.random.stateless_*`, `tf.image.stateless_random_*`) give the same
    values for the same seed and are not random per call.
    """
    qualname = ctx.qualname(call.func, scope)
    if qualname is not None:
        if "stateless" in qualname or qualname.startswith("tensorflow.random.experimental."):
            return None  # seeded by their arguments: the same values for the same seed
        if qualname in _RANDOM_EXACT or (
            qualname.startswith(_RANDOM_PREFIXES) and not qualname.startswith("tensorflow.random.Generator")
            and qualname not in ("tensorflow.random.set_seed", "tensorflow.random.get_global_generator")
        ):
            return f"`{short_name(qualname)}`"
        return None
    func = call.func
    if isinstance(func, cst.Call) and _random_layer(func, scope, ctx):
        return f"`{short_name(ctx.qualname(func.func, scope))}`"
    if isinstance(func, cst.Name):
        value = single_value(func.value, scope)
        if isinstance(value, cst.Call) and _random_layer(value, scope, ctx):
            return f"the random layer `{func.value}`"
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        value = single_value(func.value.value, scope)
        if isinstance(value, cst.Call):
            maker = ctx.qualname(value.func, scope) or ""
            if maker.startswith(("tensorflow.random.Generator", "tensorflow.random.get_global_generator")):
                return f"the `tf.random.Generator` `{func.value.value}`"
    return None


def _random_layer(call: cst.Call, scope: ScopeInfo, ctx) -> bool:
    qualname = ctx.qualname(call.func, scope) or ""
    if qualname.startswith("keras.layers.") and qualname.rsplit(".", 1)[1].startswith("Random"):
        return True
    if qualname in _KERAS_CONTAINERS and call.args:
        layers = call.args[0].value
        if isinstance(layers, (cst.List, cst.Tuple)):
            return any(isinstance(e.value, cst.Call) and _random_layer(e.value, scope, ctx) for e in layers.elements)
    return False


def single_value(name: str, scope: ScopeInfo) -> Optional[cst.BaseExpression]:
    """The one expression ``name`` is bound to in the nearest scope binding it."""
    for current in scope.chain():
        if current.kind == "class" and current is not scope:
            continue
        values = current.assigned.get(name)
        if values is None:
            if name in current.defs or name in current.imports:
                return None
            continue
        return values[0] if len(values) == 1 and isinstance(values[0], cst.BaseExpression) else None
    return None


def short_name(qualname: str) -> str:
    """``tensorflow.image.resize`` -> ``tf.image.resize`` for messages."""
    return "tf." + qualname[len("tensorflow."):] if qualname.startswith("tensorflow.") else qualname
