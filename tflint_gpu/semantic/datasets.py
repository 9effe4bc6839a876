"""tf.data pipelines as chains of transformations, and what their functions do.

A *chain* is a run of ``Dataset`` transformation calls on one receiver:
``raw.map(f).cache().shuffle(100)`` has the source ``raw`` and the stages
``map``, ``cache``, ``shuffle`` (innermost first). A chain continues across
straight-line statements of one block that reassign the same name::

    ds = tf.data.TFRecordDataset(files)
    ds = ds.cache()          # chain 1: source TFRecordDataset(...), stage cache
    ds = ds.map(parse)       # chain 2: previous = chain 1, stage map

Only ``name = <chain on name>`` (or ``return <chain on name>``) links two
statements; any other statement that may rebind the name (a compound statement
other than a ``def`` or ``class`` of another name, augmented assignment,
``del``) breaks the link, so a split chain is only ever what the code certainly
runs.
A chain counts only when ``ctx.is_dataset`` knows its receiver is a dataset.

Also here: which values are datasets (``DatasetInference``, behind
``ctx.is_dataset``); the calls a function given to ``map`` makes (following
functions of the same module), and which of those draw random numbers per call.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.api import (
    DATASET_FACTORIES_PREFIX,
    DATASET_KERAS_UTILITIES,
    DATASET_METHODS,
    DATASET_TFDS_BUILDER,
    DATASET_TFDS_LOAD,
    KERAS_SEQUENTIAL,
    argument,
    keyword,
)
from tflint_gpu.semantic.model import (ITERATED, PARAM, SCOPE_TYPES, UNPACKED, ModuleModel, ScopeInfo, assigned,
                                     walk)
from tflint_gpu.semantic.names import normalize, short_name
from tflint_gpu.semantic.project import MAYBE, PARAMETER

# -- which values are datasets -------------------------------------------------
# Methods of tf.data.Dataset no other common type (a list, a DataFrame, a Hugging Face dataset, a
# NumPy array) has: a value called with one is a dataset.
_DATASET_ONLY = frozenset({"prefetch", "padded_batch", "interleave", "with_options", "unbatch", "ragged_batch",
                           "bucket_by_sequence_length", "as_numpy_iterator", "parallel_interleave"})
# What inference knows of a value: DATASET, a container of such values (SEQ: a list
# or tuple of one kind, indexable, iterable and unpackable; MAPPING: a dict, only
# subscripted; PAIR: a fixed tuple, by position), or None (unknown).
DATASET = "dataset"
SEQ = "seq"
MAPPING = "mapping"
PAIR = "pair"
# ``tfds.load(name, split=split)`` with a split the code does not show (a parameter,
# an attribute): one dataset, or a list or dict of them. A transformation on it
# (``.batch(2)``) tells it is a dataset: lists and dicts have no such method.
SOME_SPLIT = "some-split"
Kind = Any
# Markers in ``seen``, beside the (name, scope, read) keys of names being looked up: objects of
# their own, so that no variable's name can pass for one.
_FOLLOWING = object()  # (_FOLLOWING, id(function)): a called function whose returns are being followed
_RETURN_DEPTH = 3  # how many calls deep returns are followed (load() returning augment(build()))
_ASSUMED = object()  # (_ASSUMED, id(function), position): that parameter holds a dataset


class DatasetInference:
    """Is this expression a ``tf.data.Dataset``? Errs toward "not known".

    A value is a dataset when it is

    * made by a ``tf.data`` constructor (``tf.data.Dataset.range``,
      ``tf.data.TFRecordDataset``, any ``tensorflow.data.*`` call), or by a
      Keras utility (``keras.utils.image_dataset_from_directory``,
      ``text_``/``audio_dataset_from_directory``, ``timeseries_dataset_from_array``,
      under any ``keras`` path; with ``subset="both"`` a pair of datasets, with
      another ``format`` than ``"tf"`` or an unknown ``subset``, not known);
    * ``tfds.load(name, split=...)`` or ``tfds.builder(name).as_dataset(split=...)``
      with one split (a string, ``tfds.Split.X``); a list of splits gives a list
      of datasets, no split a dict of them, ``with_info=True`` a pair
      ``(datasets, info)``: only their elements (subscripted, unpacked,
      iterated for a list) are datasets; ``batch_size=-1`` gives tensors;
    * a transformation of a dataset (``ds.map(f).batch(2)``);
    * a parameter annotated as a dataset (``ds: tf.data.Dataset`` in any
      spelling, also as a string; ``*args``/``**kwargs`` are containers);
    * the result of a same-module function (``f(...)``, ``self.f(...)``)
      annotated ``-> tf.data.Dataset`` or whose every ``return`` returns a
      dataset, where its parameters given datasets at this call hold datasets
      (``def augment(ds): return ds.map(f)``; followed three calls deep);
    * a parameter every call of the module gives a dataset (``semantic.flow``);
    * a value whose type nothing tells (an unannotated parameter, what a method
      of an object the module cannot type returns: ``loader.load(...)``) that
      the scope uses, as those same bindings, the way only a dataset is used:
      ``ds.prefetch(n)``, ``padded_batch``, ``interleave``, ``with_options``,
      ``unbatch``..., ``ds.apply(tf.data.experimental.X(...))`` (not ``map``,
      ``batch`` or ``shuffle``: lists, DataFrames and Hugging Face datasets
      have those);
    * a name some binding of which (in the innermost scope binding it) is one.

    ``method(stage)`` names ``apply(dense_to_ragged_batch(n))`` and the other
    batching transformations of ``tf.data.experimental`` by the batching they
    do; ``upstream``/``project_upstream`` follow a pipeline into the def of
    this module that returns it (``ds = make(files); ds.shuffle(n)``).
    """

    def __init__(self, graphs) -> None:
        self.graphs = graphs
        self.resolver = graphs.resolver
        self.model: ModuleModel = graphs.model
        self._cache: Dict[int, bool] = {}
        self._returns: Dict[int, bool] = {}
        self._targets: Optional[Dict[int, List[cst.BaseExpression]]] = None

    def is_dataset(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        key = id(expr)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self.kind(expr, scope, set()) == DATASET
        return found

    def kind(self, expr: cst.BaseExpression, scope: ScopeInfo, seen: Set) -> Kind:
        if isinstance(expr, cst.Call):
            return self._call_kind(expr, scope, seen)
        if isinstance(expr, cst.Name):
            return self._name_kind(expr.value, scope, seen, expr)
        if isinstance(expr, cst.Subscript):
            index = bindings.single_index(expr)
            return _element(self.kind(expr.value, scope, seen), index) if index is not None else None
        return None

    def _call_kind(self, call: cst.Call, scope: ScopeInfo, seen: Set) -> Kind:
        func = call.func
        qualname = self.resolver.qualname(func, scope)
        if qualname is not None:
            if qualname.startswith(DATASET_FACTORIES_PREFIX):
                return DATASET
            qualname = qualname.replace("tensorflow_datasets.public_api.", "tensorflow_datasets.", 1)
            if qualname == DATASET_TFDS_LOAD:
                return self._tfds_kind(call, scope, with_info=True)
            if qualname.startswith("keras.") and qualname.rsplit(".", 1)[1] in DATASET_KERAS_UTILITIES:
                return _keras_utility_kind(call)
            return self._project_kind(qualname, call, scope, seen)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in DATASET_METHODS and self.kind(func.value, scope, seen) in (DATASET, SOME_SPLIT):
                return DATASET
            if method == "as_dataset" and self._is_builder(func.value, scope):
                return self._tfds_kind(call, scope, with_info=False)
        target = self.graphs.function_scope(func, scope)
        if target is None:
            return None
        if self._returns_dataset(target, seen):
            return DATASET
        # A helper transforming the dataset it is given (`def augment(ds): return ds.map(f)`):
        # its returns are datasets when the arguments that are datasets are.
        offset = 1 if target.binds_instance and isinstance(func, cst.Attribute) else 0
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
        assumed = {(_ASSUMED, id(target), offset + i) for i, arg in enumerate(positional)
                   if self.kind(arg.value, scope, seen) == DATASET}
        if not assumed:
            return None
        seen.update(assumed)
        try:
            return DATASET if self._returns_dataset(target, seen) else None
        finally:
            seen.difference_update(assumed)

    def _project_kind(self, qualname: str, call: Optional[cst.Call], scope: ScopeInfo, seen: Set) -> Kind:
        """DATASET when ``qualname`` is a def of another project module (``ProjectFile.returns``)
        whose every return is a chain of ``Dataset`` methods on a ``tf.data`` constructor, on
        another such def's dataset, or on the positional parameter that ``call`` gives a
        dataset (``call`` None: no parameter is known). Followed ``_RETURN_DEPTH`` defs deep."""
        project = self.resolver.project
        marker = (_FOLLOWING, qualname)
        if project is None or marker in seen or sum(
                1 for item in seen if type(item) is tuple and item[0] is _FOLLOWING) >= _RETURN_DEPTH:
            return None
        returned = project.returns(qualname)
        if not returned:
            return None
        seen.add(marker)
        try:
            for kind, value, methods in returned:
                if any(m.lstrip(MAYBE) not in DATASET_METHODS for m in methods):
                    return None
                if kind == PARAMETER:
                    positional = [arg for arg in call.args if arg.keyword is None and not arg.star] \
                        if call is not None else []
                    if value >= len(positional) or any(arg.star for arg in call.args[:value + 1]) \
                            or self.kind(positional[value].value, scope, seen) != DATASET:
                        return None
                elif value[0] == "external":
                    if not normalize(value[1]).startswith(DATASET_FACTORIES_PREFIX):
                        return None
                elif self._project_kind(value[1], None, scope, seen) != DATASET:
                    return None
            return DATASET
        finally:
            seen.discard(marker)

    def _name_kind(self, name: str, scope: ScopeInfo, seen: Set, at: Optional[cst.CSTNode] = None) -> Kind:
        """DATASET if some binding of ``name`` (in the innermost scope binding it)
        is a dataset; a container kind if every binding gives that kind. Read in
        the scope binding it, only the bindings live at the read count (a
        notebook's ``ds`` rebound to a DataFrame in a later cell is not a dataset
        there)."""
        found = assigned(name, scope, at)
        current = found.scope if found is not None else None
        key = (name, id(current), id(at))
        if found is None or key in seen:
            return None
        seen.add(key)
        try:
            kinds = []
            for value in found.values:
                kind = self._binding_kind(value, name, current, seen)
                if kind == DATASET:
                    return DATASET
                kinds.append(kind)
        finally:
            seen.discard(key)
        if kinds and all(k is None for k in kinds) and self._used_as_dataset(name, found, current):
            return DATASET  # `ds = loader.load(...)` the module cannot type, then `ds.prefetch(2)`
        return kinds[0] if kinds and all(k == kinds[0] for k in kinds) else None

    def _binding_kind(self, value: Any, name: str, scope: ScopeInfo, seen: Set) -> Kind:
        if isinstance(value, cst.BaseExpression):
            return self.kind(value, scope, seen)
        marker = value[0]
        if marker == PARAM:
            if (_ASSUMED, id(scope), value[2]) in seen:
                return DATASET
            param = value[1]
            if param.star in ("*", "**"):
                return None
            if param.annotation is not None:
                return DATASET if self._annotated_dataset(param.annotation.annotation, scope.parent or scope) \
                    else None
            return self._parameter_kind(param, scope, seen)
        if marker in (UNPACKED, ITERATED) and isinstance(value[1], cst.BaseExpression):
            kind = self.kind(value[1], scope, seen)
            paths = [path for target in self._targets_of(value[1]) for path in bindings.target_paths(target, name)]
            if len(paths) != 1 or paths[0] is None:
                return None  # bound twice by one statement, or starred
            path = paths[0]
            if marker == ITERATED:
                kind = _element(kind, None)
            elif not path:
                return None  # `a = b = value`: not an unpacking of this name
            for index in path:
                if kind == SOME_SPLIT:
                    return None  # unpacked: a list's datasets, or a small dataset's elements
                kind = _element(kind, cst.Integer(str(index)))
            return kind
        return None

    def _parameter_kind(self, param: cst.Param, function: ScopeInfo, seen: Set) -> Kind:
        """DATASET for a parameter every call of the module gives a dataset (``semantic.flow``), or one the
        function itself uses as only a ``tf.data.Dataset`` is used: a method no other common type has
        (``ds.prefetch(n)``, ``padded_batch``, ``interleave``, ``with_options``, ``unbatch``...) or
        ``ds.apply(tf.data.experimental.X(...))``, called on the parameter as it was passed."""
        key = ("param-kind", id(param))
        if key in seen:
            return None
        seen.add(key)
        try:
            passed = self.graphs.flow.passed(function, param)
            if passed and all(self.kind(given, where, seen) == DATASET for given, where in passed):
                return DATASET
        finally:
            seen.discard(key)
        return None

    def _untyped(self, value: Any, scope: ScopeInfo) -> bool:
        """A binding whose value's type nothing tells: a parameter without annotation, or a call of a
        method of an object the module cannot type (``loader.load(...)``). Not an annotated parameter
        (a class of its own with ``prefetch``), nor a call of a named library function (a grain
        dataset from ``image_dataset_from_directory(format="grain")``, a ``tfds`` that is another
        module): those are what their library says."""
        if isinstance(value, tuple):
            return value[0] == PARAM and value[1].annotation is None and not value[1].star
        if isinstance(value, cst.Subscript):
            value = value.value
        return isinstance(value, cst.Call) and self.resolver.qualname(value.func, scope) is None \
            and self.graphs.function_scope(value.func, scope) is None

    def _used_as_dataset(self, name: str, found, function: ScopeInfo) -> bool:
        """Is the value ``name`` reads (the bindings ``found``, none of a known kind) used, in the scope
        binding it and as those same bindings, as only a ``tf.data.Dataset`` is: a method no other common
        type has (``ds.prefetch(n)``, ``padded_batch``, ``interleave``, ``with_options``, ``unbatch``...)
        or ``ds.apply(tf.data.experimental.X(...))``? From a loader the engine cannot type
        (``loader.load(...)``, a parameter) it is a dataset there."""
        if function is None or not function.is_function and function.kind != "module":
            return False
        bound = {id(v) for v in found.own_values}
        if not bound or not all(self._untyped(v, function) for v in found.own_values):
            return False
        for call in function.calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == name):
                continue
            method_name = func.attr.value
            distinctive = method_name in _DATASET_ONLY or (
                method_name == "apply" and call.args and isinstance(call.args[0].value, cst.Call)
                and (self.resolver.qualname(call.args[0].value.func, function) or "").startswith(
                    "tensorflow.data.experimental."))
            if not distinctive:
                continue
            there = assigned(name, function, func.value)
            if there is not None and there.scope is function and {id(v) for v in there.own_values} == bound:
                return True
        return False

    def _targets_of(self, value: cst.BaseExpression) -> List[cst.BaseExpression]:
        """The assignment targets (or loop target) ``value`` is unpacked into."""
        if self._targets is None:
            self._targets = {}
            for node, _ in self.model.index.get("Assign", ()):
                for target in node.targets:
                    self._targets.setdefault(id(node.value), []).append(target.target)
            for node, _ in self.model.index.get("For", ()):
                self._targets.setdefault(id(node.iter), []).append(node.target)
        return self._targets.get(id(value), [])

    # -- functions ----------------------------------------------------------
    def _returns_dataset(self, function: ScopeInfo, seen: Set) -> bool:
        """Is ``function`` annotated to return a dataset, or does its every ``return``
        return one? Followed ``_RETURN_DEPTH`` calls deep (a helper returning
        another helper's dataset), never round a cycle."""
        marker = (_FOLLOWING, id(function))
        if marker in seen or sum(1 for item in seen if type(item) is tuple and item[0] is _FOLLOWING) \
                >= _RETURN_DEPTH:
            return False
        # Under an assumption about its parameters the answer holds for that call only.
        assuming = any(type(item) is tuple and item[0] is _ASSUMED and item[1] == id(function) for item in seen)
        cached = self._returns.get(id(function)) if not assuming else None
        if cached is not None:
            return cached
        fresh = not seen
        node = function.node
        values: List[cst.BaseExpression] = []
        if isinstance(node, cst.Lambda):
            values = [node.body]
        elif isinstance(node, cst.FunctionDef) and node.asynchronous is None:
            outer = function.parent or function
            if node.returns is not None and self._annotated_dataset(node.returns.annotation, outer):
                return True
            for inner in walk(node.body, skip=SCOPE_TYPES):
                if isinstance(inner, (cst.Yield, cst.Await)):
                    values = []
                    break
                if isinstance(inner, cst.Return):
                    if inner.value is None:
                        values = []
                        break
                    values.append(inner.value)
            if not bindings.always_returns(node.body.body):
                values = []
        result = False
        if values:
            seen.add(marker)
            try:
                result = all(self.kind(value, function, seen) == DATASET for value in values)
            finally:
                seen.discard(marker)
        if not assuming and (fresh or result):  # a cycle cut short (`seen`) can only turn a True into False
            self._returns[id(function)] = result
        return result

    def _annotated_dataset(self, annotation: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Does this annotation name a ``tf.data`` dataset class (``tf.data.Dataset``,
        ``tf.data.TFRecordDataset``, also written as a string)?"""
        if isinstance(annotation, cst.SimpleString):
            try:
                annotation = cst.parse_expression(annotation.evaluated_value)
            except (cst.ParserSyntaxError, ValueError, TypeError):
                return False
        raw = self.resolver.raw_qualname(annotation, scope)  # not cached: the node may be a fresh parse
        if raw is None:
            return False
        qualname = normalize(raw)
        last = qualname.rsplit(".", 1)[1] if "." in qualname else qualname
        return qualname.startswith(("tensorflow.data.", "tensorflow.python.data.")) and (
            last.endswith("Dataset") or last in ("DatasetV1", "DatasetV2"))

    # -- tensorflow_datasets --------------------------------------------------
    def _tfds_kind(self, call: cst.Call, scope: ScopeInfo, with_info: bool) -> Kind:
        """What ``tfds.load(name, split=...)`` (``with_info``) or
        ``builder.as_dataset(split=...)`` returns, as far as its arguments tell."""
        if any(arg.star for arg in call.args):
            return None
        split_position = 1 if with_info else 0  # load(name, split), as_dataset(split)
        if len([arg for arg in call.args if arg.keyword is None]) > split_position + 1:
            return None
        batch_size = keyword(call, "batch_size")
        if batch_size is not None and isinstance(batch_size.value, cst.UnaryOperation):
            return None  # batch_size=-1: the whole split as tensors
        split = argument(call, split_position, "split")
        if isinstance(split, cst.Name):  # `splits = ["train", "test"]`: every binding live here a list
            found = assigned(split.value, scope, split)
            values = found.values if found is not None else []
            if values and all(isinstance(v, (cst.List, cst.Tuple)) and v.elements and not any(
                    isinstance(e, cst.StarredElement) for e in v.elements) for v in values):
                split = values[0]
        if split is None or _is_none(split):
            kind: Kind = (MAPPING, DATASET)
        elif isinstance(split, (cst.List, cst.Tuple)):
            if not split.elements or any(isinstance(e, cst.StarredElement) for e in split.elements):
                return None
            kind = (SEQ, DATASET)
        elif self._one_split(split, scope):
            kind = DATASET
        else:
            kind = SOME_SPLIT
        info = keyword(call, "with_info") if with_info else None
        if info is not None:
            if _is_true(info.value):
                kind = (PAIR, (kind, None))
            elif not _is_false(info.value):
                return None
        return kind

    def _one_split(self, split: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """A split naming one dataset: a string, ``tfds.Split.TRAIN``, a ReadInstruction."""
        if isinstance(split, cst.IfExp):
            return self._one_split(split.body, scope) and self._one_split(split.orelse, scope)
        if isinstance(split, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return True
        if isinstance(split, cst.Name):  # `split = "train"`: every binding live here names one split
            found = assigned(split.value, scope, split)
            values = found.values if found is not None else []
            return bool(values) and all(isinstance(v, cst.BaseExpression) and not isinstance(v, cst.Name)
                                        and self._one_split(v, found.scope) for v in values)
        target = split.func if isinstance(split, cst.Call) else split
        qualname = self.resolver.qualname(target, scope) or ""
        return qualname.startswith("tensorflow_datasets.") and (
            ".Split." in qualname or qualname.endswith(".ReadInstruction"))

    def _is_builder(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """``tfds.builder(...)``, or a name every binding of which is one."""
        if isinstance(expr, cst.Call):
            qualname = (self.resolver.qualname(expr.func, scope) or "").replace(
                "tensorflow_datasets.public_api.", "tensorflow_datasets.", 1)
            return qualname == DATASET_TFDS_BUILDER
        if isinstance(expr, cst.Name):
            found = assigned(expr.value, scope, expr)
            values = found.values if found is not None else []
            return bool(values) and all(
                isinstance(v, cst.Call) and self._is_builder(v, found.scope) for v in values)
        return False


def _keras_utility_kind(call: cst.Call) -> Kind:
    """``image_dataset_from_directory(...)`` and its siblings: a dataset, or with
    ``subset="both"`` a pair of datasets (training, validation)."""
    fmt = keyword(call, "format")
    if fmt is not None and _string(fmt.value) != "tf":
        return None  # format="grain": a grain dataset
    subset = keyword(call, "subset")
    if subset is None or _is_none(subset.value) or _string(subset.value) in ("training", "validation"):
        return DATASET
    if _string(subset.value) == "both":
        return (PAIR, (DATASET, DATASET))
    return None


def _element(kind: Kind, index: Optional[cst.BaseExpression]) -> Kind:
    """The kind of one element of a container kind (``index`` None: any element,
    as a loop gives them)."""
    if kind == SOME_SPLIT:
        # subscripted, a list or a dict of datasets (a dataset is not subscriptable);
        # iterated, a dataset's elements, a list's datasets or a dict's keys
        return DATASET if index is not None else None
    if not isinstance(kind, tuple):
        return None  # elements of a dataset are tensors; of the unknown, unknown
    container, inner = kind
    if container == SEQ:
        return inner
    if container == MAPPING:
        return inner if index is not None else None  # iterating a dict gives its keys
    if container == PAIR and isinstance(index, cst.Integer):
        try:
            position = int(index.value, 0)
        except ValueError:  # `01`
            return None
        return inner[position] if position < len(inner) else None
    return None


def _string(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


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
    # the chain the source name holds where it is read (``ds = ds.map(f)`` after
    # ``ds = ds.cache()``, or ``train = ds.map(f)``): the pipeline before this one
    previous: Optional["Chain"] = None
    # the one chain after it continuing the pipeline under the same name (or returning it)
    following: Optional["Chain"] = None
    target: Optional[str] = None  # the name a statement `target = <chain>` binds it to
    returned: bool = False  # `return <chain>`
    # when this chain's stages run, relative to the pipeline before it (its ``if``s)
    conditions: Tuple["Condition", ...] = ()
    # the values its source name holds where it is read (None: not a name this scope binds)
    inputs: Optional[List[Any]] = None
    anchor: Optional[cst.CSTNode] = None  # the previous chain's call, or the one value its source holds

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

    def owner(self, stage: cst.Call) -> Optional["Chain"]:
        """The chain of the linked pipeline (before or after this one) that owns ``stage``."""
        current: Optional[Chain] = self
        while current is not None:
            if current.owns(stage):
                return current
            current = current.previous
        current = self.following
        while current is not None:
            if current.owns(stage):
                return current
            current = current.following
        return None

    def conditional(self) -> bool:
        """Does some chain of the linked pipeline run only under an ``if``?"""
        current: Optional[Chain] = self
        while current is not None:
            if current.conditions:
                return True
            current = current.previous
        current = self.following
        while current is not None:
            if current.conditions:
                return True
            current = current.following
        return False

    def origin(self) -> cst.BaseExpression:
        """The expression the whole (linked) pipeline starts from."""
        return self.previous.origin() if self.previous is not None else self.source


# `ds.apply(tf.data.experimental.X(...))` transformations that batch, by the batching method each is.
_APPLIED_BATCHING = {"dense_to_ragged_batch": "ragged_batch", "dense_to_sparse_batch": "sparse_batch",
                     "bucket_by_sequence_length": "padded_batch", "map_and_batch": "batch"}


def method(stage: cst.Call) -> str:
    """The transformation a stage applies: its method's name, or for ``apply(...)`` of a batching
    transformation of ``tf.data.experimental`` (``dense_to_ragged_batch(8)``) the batching it is."""
    func = stage.func
    assert isinstance(func, cst.Attribute)
    name = func.attr.value
    if name == "apply" and stage.args and isinstance(stage.args[0].value, cst.Call):
        inner = stage.args[0].value.func
        last = inner.attr.value if isinstance(inner, cst.Attribute) else inner.value if isinstance(inner, cst.Name) \
            else None
        return _APPLIED_BATCHING.get(last, name) if last is not None else name
    return name


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
        _link(result, by_outermost)
    return result


# -- linking chains through the bindings live at their sources ----------------------
def _link(found: List[Chain], by_outermost: Dict[int, Chain]) -> None:
    """Link each chain to the chain its source name holds where it stands (the
    binding live there, ``model.lookup`` with the read): ``ds = ds.map(f)`` after
    ``ds = ds.cache()``, also across names (``train = ds.map(f)``), past
    compound statements, and in later notebook cells, each read seeing its own
    binding. A stage under an ``if`` joins the pipeline after it as a
    conditional stage (``Chain.conditions``): ``ds = ds.batch(b)``, ``if
    shuffle: ds = ds.shuffle(n)``, ``ds = ds.prefetch(1)`` is one pipeline
    whose shuffle runs when ``shuffle`` is true. Not linked: alternatives
    (an ``if``/``else`` binding the name in both branches, or a pipeline before
    and another inside a loop, a ``try``, a ``match``), and reads of a name
    another scope binds (a function reading a module's ``ds`` runs later)."""
    # Source order within each scope (the model's index is not: an `if`'s `else` comes first).
    # (A call in a decorator or a default lies outside its scope's order: never linked.)
    positions = {id(c): c.scope.flow_order().pre.get(id(c.outermost), -1) for c in found}
    ordered = sorted(found, key=lambda c: (id(c.scope), positions[id(c)]))
    for chain in found:
        _place(chain)
    for chain in ordered:
        if positions[id(chain)] < 0:
            continue
        source = chain.source
        if not isinstance(source, cst.Name):
            continue
        values = _live_values(source, chain.scope)
        if values is None:
            continue
        chain.inputs = values
        looped = _turns_back(chain, values)
        if looped:  # `for f in fns: ds = ds.map(f)`: the first turn reads the pipeline before the loop
            values = [v for v in values if v is not chain.outermost]
        linked = [by_outermost.get(id(v)) if isinstance(v, cst.BaseExpression) else None for v in values]
        earlier = [c for c in linked if c is not None and c.scope is chain.scope
                   and 0 <= positions[id(c)] < positions[id(chain)]]
        if len(values) == 1 and len(earlier) == 1:
            chain.previous = earlier[0]
        elif len(values) >= 2 and earlier:
            latest = max(earlier, key=lambda c: positions[id(c)])
            if _extends(latest, [v for v in values if v is not latest.outermost], chain):
                chain.previous = latest
        if chain.previous is None and len(values) == 1 and isinstance(values[0], cst.BaseExpression):
            chain.anchor = values[0]
        elif chain.previous is not None:
            chain.anchor = chain.previous.outermost
        chain.conditions = _conditions(chain, looped and chain.previous is not None)
    successors: Dict[int, List[Chain]] = {}
    for chain in found:
        if chain.previous is not None:
            successors.setdefault(id(chain.previous), []).append(chain)
    for chain in found:
        # The pipeline goes on as the one chain rebinding the same name (or returned).
        going_on = [c for c in successors.get(id(chain), ())
                    if c.returned or (c.target is not None and c.target == chain.target)]
        if len(going_on) == 1:
            chain.following = going_on[0]


def _turns_back(chain: Chain, values: List[Any]) -> bool:
    """Is ``chain`` (``ds = ds.map(f)``) in the body of a loop, rebinding its own source name, so
    that the binding it makes reaches its own read on the next turn (one of ``values``), and no other
    binding made in that loop does?"""
    if not any(v is chain.outermost for v in values) or chain.target is None \
            or not isinstance(chain.source, cst.Name) or chain.source.value != chain.target:
        return False
    order = chain.scope.flow_order()
    loop = next((node for node in chain.scope.ancestors(chain.outermost)
                 if isinstance(node, (cst.For, cst.While))), None)
    if not isinstance(loop, cst.For) or not order.contains(loop.body, chain.outermost):
        return False
    return all(v is chain.outermost or not (isinstance(v, cst.CSTNode) and id(v) in order.pre
                                            and order.contains(loop, v)) for v in values)


def _live_values(name: cst.Name, scope: ScopeInfo) -> Optional[List[Any]]:
    """The values bound to ``name`` that reach this read of it, when ``scope``
    itself binds it by assignment (None: another scope's name, an import, a def,
    or a name rebound through ``global``/``nonlocal``)."""
    found = assigned(name.value, scope, name)
    if found is None or found.scope is not scope or found.writers or not found.own_values:
        return None
    return list(found.own_values)


def _place(chain: Chain) -> None:
    """The name a statement binds the chain to (``target``), and whether it is returned."""
    parent = next(chain.scope.ancestors(chain.outermost), None)
    if isinstance(parent, cst.Assign) and parent.value is chain.outermost and len(parent.targets) == 1 \
            and isinstance(parent.targets[0].target, cst.Name):
        chain.target = parent.targets[0].target.value
    elif isinstance(parent, cst.AnnAssign) and parent.value is chain.outermost and isinstance(parent.target, cst.Name):
        chain.target = parent.target.value
    elif isinstance(parent, cst.Return):
        chain.returned = True


# What runs its inside at most once, unconditionally, each time it runs itself: any node
# but a loop, a ``try``, a ``match``, an ``if`` (a condition), a conditional expression,
# ``and``/``or`` and comprehensions.
_OPAQUE = (cst.For, cst.While, cst.Try, cst.TryStar, cst.Match, cst.ExceptHandler, cst.ExceptStarHandler,
           cst.Finally, cst.MatchCase, cst.IfExp, cst.BooleanOperation, cst.ListComp, cst.SetComp,
           cst.DictComp, cst.GeneratorExp, cst.CompFor)


def _transparent(node: cst.CSTNode) -> bool:
    return not isinstance(node, _OPAQUE) and not isinstance(node, cst.If)


def _extends(candidate: Chain, others: List[Any], chain: Chain) -> bool:
    """Several bindings reach ``chain``'s source: ``candidate``, the latest,
    bound under ``if``s (in ``with`` blocks, no loop or ``try``), and ``others``,
    each one a pipeline ``candidate``'s own pipeline goes through (``ds =
    ds.batch(b)``, ``if shuffle: ds = ds.shuffle(n)``, ``if augment: ds =
    ds.map(f)``, then ``ds.prefetch(1)`` reads all three). Then the stages of
    the ``if``s are optional on the way to ``chain``: one pipeline, with
    conditional stages. (A ``with`` block alone: its stages run on the way,
    unless the context manager swallows an exception.)"""
    remaining = {id(v) for v in others}
    current: Optional[Chain] = candidate
    while current is not None and remaining:
        if not _only_ifs_between(current, chain):
            return False
        if current.previous is None:
            if current.inputs is not None and len(current.inputs) == 1:
                remaining.discard(id(current.inputs[0]))
            break
        remaining.discard(id(current.previous.outermost))
        current = current.previous
    return not remaining


def _only_ifs_between(inner: Chain, outer: Chain) -> bool:
    """Between ``inner``'s statement and the block it shares with ``outer``, only
    ``if``/``else`` and ``with``: what runs there runs at most once on the way."""
    order = inner.scope.flow_order()
    if id(outer.outermost) not in order.pre:
        return False
    for node in inner.scope.ancestors(inner.outermost):
        if order.contains(node, outer.outermost):
            return True
        if isinstance(node, _OPAQUE):
            return False
    return False


def _conditions(chain: Chain, looped: bool = False) -> Tuple["Condition", ...]:
    """The ``if`` tests the chain runs under that do not also hold its anchor
    (the pipeline it continues, or the value its source is bound to): its
    stages run only when those tests say so. ``looped``: the chain continues the pipeline from the
    body of a loop (``_turns_back``): that loop running is one of them."""
    anchor = chain.anchor
    order = chain.scope.flow_order()
    if anchor is None or id(anchor) not in order.pre:
        return ()
    found: List[Condition] = []
    child: cst.CSTNode = chain.outermost
    for node in chain.scope.ancestors(chain.outermost):
        if order.contains(node, anchor):
            break
        if isinstance(node, cst.If):
            holds = order.contains(node.body, child)
            if not holds and isinstance(node.orelse, cst.If) and node.orelse is child:
                holds = False  # an `elif`: its own test comes next
            found.append(_condition(node.test, holds, chain.scope))
        elif looped and isinstance(node, cst.For) and order.contains(node.body, chain.outermost):
            found.append(Condition(_MODULE.code_for_node(node.iter), True, loop=True))
        elif not _transparent(node):
            return ()  # a loop, a try, a match...: not one condition
        child = node
    found.reverse()
    return tuple(found)


def _condition(test: cst.BaseExpression, holds: bool, scope: ScopeInfo) -> "Condition":
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, holds = test.expression, not holds
    return Condition(_MODULE.code_for_node(test), holds)


_MODULE = cst.Module(body=[])


@dataclass(frozen=True)
class Condition:
    """When a conditional stage runs: the test of the ``if`` it sits in, true or false."""

    test: str  # the test's source (``shuffle``, ``mode == "train"``), a ``not`` taken off
    holds: bool  # the stage runs when the test is true (the ``if`` body), or false (``else``)
    loop: bool = False  # the stage is in the body of a ``for`` loop over ``test`` (its iterable)

    def describe(self) -> str:
        if self.loop:
            return f"the loop over `{self.test}` runs"
        return f"`{self.test}` is {'true' if self.holds else 'false'}"


def conditions_of(chain: Chain, stage: cst.Call) -> Tuple[Condition, ...]:
    """When ``stage`` (of ``chain``'s linked pipeline) runs: the conditions of the chain owning it."""
    owner = chain.owner(stage)
    return owner.conditions if owner is not None else ()


def when(chain: Chain, *stages: cst.Call, some_of: Sequence[cst.Call] = ()) -> str:
    """`` (when `shuffle` is true)`` for a finding that needs all of ``stages``
    to run (and, with ``some_of``, at least one of those), when some of them are
    conditional stages of the pipeline; else ``""``. Of ``some_of``, only the
    conditions they all share are named (what "one of them runs" implies)."""
    found: List[Condition] = []
    for stage in stages:
        for condition in conditions_of(chain, stage):
            if condition not in found:
                found.append(condition)
    if some_of:
        shared = [c for c in conditions_of(chain, some_of[0])
                  if all(c in conditions_of(chain, other) for other in some_of[1:])]
        found += [c for c in shared if c not in found]
    return f" (when {' and '.join(c.describe() for c in found)})" if found else ""


def continued(chain: Chain, ctx) -> bool:
    """Does a later stage take this chain's dataset further (``ds = ds.batch(2)``
    after ``ds = ds.map(f)``, also past a loop or an ``if``, or ``other =
    ds.batch(2)``)? Then the chain is an intermediate stage, not a pipeline's end.
    A chain continues where the binding it made is live: a pipeline bound to
    ``ds`` in one notebook cell is not continued by a new ``ds`` built in a later
    one. A read from another scope (a function using the module's ``ds``) may
    see any of the name's bindings."""
    if chain.following is not None:
        return True
    if chain.target is None:
        return False
    taken = _TAKEN.get(ctx.model)
    if taken is None:  # once per file: the chains some chain's source may read
        taken = set()
        found = chains(ctx)
        for other in found:
            source = other.source
            if not isinstance(source, cst.Name):
                continue
            binding = assigned(source.value, other.scope, source)
            for value in binding.values if binding is not None else ():
                taken.add(id(value))
        _TAKEN[ctx.model] = taken
    return id(chain.outermost) in taken


_TAKEN: "weakref.WeakKeyDictionary[ModuleModel, Set[int]]" = weakref.WeakKeyDictionary()


def upstream(chain: Chain, ctx) -> List[str]:
    """The transformations a pipeline applies before its first (linked) stage, as
    far as the source shows them: the stages of the expressions its origin name is
    bound to, followed through names (all bindings of a name, in no particular
    order; where the name is read in the scope binding it, those live there). A
    ``Dataset.list_files`` that shuffles (the default) counts as ``shuffle``."""
    seen = {id(s) for s in chain.all_stages() + chain.later_stages()}
    return _upstream(chain.origin(), chain.scope, ctx, seen)


def _upstream(expr: cst.BaseExpression, scope: ScopeInfo, ctx, seen: set) -> List[str]:
    stages: List[cst.Call] = []
    while is_stage(expr):
        stages.append(expr)
        expr = expr.func.value  # type: ignore[attr-defined]
    names: List[str] = []
    if isinstance(expr, cst.Name):
        found = assigned(expr.value, scope, expr)
        for value in found.values if found is not None else ():
            if isinstance(value, cst.BaseExpression) and id(value) not in seen:
                seen.add(id(value))
                names += _upstream(value, found.scope, ctx, seen)
    elif isinstance(expr, cst.Call):
        qualname = ctx.qualname(expr.func, scope)
        if qualname == "tensorflow.data.Dataset.list_files":
            shuffle = argument(expr, 1, "shuffle")
            if not (isinstance(shuffle, cst.Name) and shuffle.value == "False"):
                names.append("shuffle")
        elif qualname is not None:
            names += _project_upstream(qualname, ctx, expr, scope, seen)
        else:
            names += _local_upstream(expr, scope, ctx, seen)[1]
    return names + [method(stage) for stage in reversed(stages)]


def _local_upstream(call: cst.Call, scope: ScopeInfo, ctx, seen: set) -> Tuple[str, List[str]]:
    """The def of this module ``call`` calls (``make(files, 32)``) and the transformations of the one
    dataset it returns (its only ``return``), as ``_upstream`` reads them there."""
    target = ctx.graphs.function_scope(call.func, scope)
    if target is None or not isinstance(target.node, cst.FunctionDef) or ("local", id(target)) in seen:
        return "", []
    ends = [r for r in walk(target.node.body, skip=SCOPE_TYPES) if isinstance(r, cst.Return)]
    if len(ends) != 1 or ends[0].value is None:
        return "", []
    seen.add(("local", id(target)))
    return target.name, _upstream(ends[0].value, target, ctx, seen)


def project_upstream(chain: Chain, ctx) -> Tuple[str, List[str]]:
    """The def of another project module the chain's origin calls, directly or through names bound
    once (``ds = load(n)`` where ``data.load`` returns ``ds.batch(32)``), as the file names it, and
    the transformations it applies (see ``_project_upstream``); ("", []) when not known."""
    expr: Optional[cst.BaseExpression] = chain.origin()
    scope = chain.scope
    for _ in range(_RETURN_DEPTH):
        while expr is not None and is_stage(expr):
            expr = expr.func.value  # type: ignore[attr-defined]
        if not isinstance(expr, cst.Name):
            break
        found = assigned(expr.value, scope, expr)
        if found is None or len(found.values) != 1 or not isinstance(found.values[0], cst.BaseExpression):
            return "", []
        expr, scope = found.values[0], found.scope
    if not isinstance(expr, cst.Call):
        return "", []
    qualname = ctx.qualname(expr.func, scope)
    if qualname is None:
        return _local_upstream(expr, scope, ctx, set())  # a def of this module (`make(files, 32)`)
    names = _project_upstream(qualname, ctx, expr, scope, set())
    return (qualname if names else ""), names


def _project_upstream(qualname: str, ctx, call: Optional[cst.Call], scope: ScopeInfo, seen: set,
                      depth: int = 0) -> List[str]:
    """The transformations a def of another project module applies on every path to the dataset it
    returns (``ProjectFile.returns``; one ``return``; a stage under an ``if`` there does not count),
    after those of where it starts: the project def it calls, or the argument ``call`` gives the
    parameter it transforms (``augment(ds.batch(2))``); ``_RETURN_DEPTH`` defs deep."""
    project = ctx.resolver.project
    returned = project.returns(qualname) if project is not None and depth < _RETURN_DEPTH else None
    if not returned or len(returned) != 1:
        return []
    kind, value, methods = returned[0]
    before: List[str] = []
    if kind == PARAMETER:
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star] if call is not None else []
        if value < len(positional) and not any(arg.star for arg in call.args[:value + 1]):
            before = _upstream(positional[value].value, scope, ctx, seen)
    elif value[0] == "project":
        before = _project_upstream(value[1], ctx, None, scope, seen, depth + 1)
    elif normalize(value[1]) == "tensorflow.data.Dataset.list_files":
        return []  # whether it shuffles depends on arguments the summary does not keep
    return before + [m for m in methods if not m.startswith(MAYBE)]


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


def flagged_calls(func: Optional[cst.BaseExpression], scope: ScopeInfo, ctx) -> Set[int]:
    """Of the calls ``function_calls`` gives for ``func``, the ids of those that
    run only when a Python flag says so: under ``under_python_flag`` in their
    function, or in a same-module function reached only through such calls."""
    target = ctx.graphs.function_scope(func, scope) if func is not None else None
    if target is None:
        return set()
    certain = {id(target)}
    queue = [target]
    for current in queue:  # functions reached through calls no flag guards (and nested in those)
        targets = list(current.nested) + [ctx.graphs.function_scope(call.func, current) for call in current.calls
                                          if not under_python_flag(call, current, ctx)]
        for callee in targets:
            if callee is not None and id(callee) not in certain:
                certain.add(id(callee))
                queue.append(callee)
    return {id(call) for current in ctx.graphs.reachable(target) for call in current.calls
            if id(current) not in certain or under_python_flag(call, current, ctx)}


def under_python_flag(call: cst.Call, scope: ScopeInfo, ctx) -> bool:
    """Does ``call`` run only when a Python flag of its function says so
    (``if self._train:``, ``if training:`` on a parameter, or their ``not``)?
    Whether it runs then depends on how the function was configured."""
    function = scope.function()
    if function is None or not isinstance(function.node, cst.FunctionDef):
        return False

    def flag(test: cst.BaseExpression) -> Optional[bool]:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = flag(test.expression)
            return None if inner is None else not inner
        if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and function.binds_instance \
                and test.value.value == bindings.first_parameter(function):
            return True
        if isinstance(test, cst.Name) and ctx.is_parameter(test.value, function) \
                and not ctx.is_tensor(test, function):
            return True
        return None

    return id(call) in bindings.guarded_nodes(function.node, flag)


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
        value = single_value(func.value, scope, func)
        if isinstance(value, cst.Call) and _random_layer(value, scope, ctx):
            return f"the random layer `{func.value}`"
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        value = single_value(func.value.value, scope, func.value)
        if isinstance(value, cst.Call):
            maker = ctx.qualname(value.func, scope) or ""
            if maker.startswith(("tensorflow.random.Generator", "tensorflow.random.get_global_generator")):
                return f"the `tf.random.Generator` `{func.value.value}`"
    return None


def _random_layer(call: cst.Call, scope: ScopeInfo, ctx) -> bool:
    qualname = ctx.qualname(call.func, scope) or ""
    if qualname.startswith("keras.layers.") and qualname.rsplit(".", 1)[1].startswith("Random"):
        return True
    if qualname in KERAS_SEQUENTIAL and call.args:
        layers = call.args[0].value
        if isinstance(layers, (cst.List, cst.Tuple)):
            return any(isinstance(e.value, cst.Call) and _random_layer(e.value, scope, ctx) for e in layers.elements)
    return False


def single_value(name: str, scope: ScopeInfo, at: Optional[cst.CSTNode] = None) -> Optional[cst.BaseExpression]:
    """The one expression ``name`` is bound to (``model.assigned``), if it is bound
    once; with ``at`` (the read), if one binding is live there."""
    found = assigned(name, scope, at)
    value = found.single_value if found is not None else None
    return value if isinstance(value, cst.BaseExpression) else None


