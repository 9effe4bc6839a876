"""The project index: what the project's own modules import, export and define.

A file whose TensorFlow comes through a module of its project
(``from mypkg import tf`` where ``mypkg/__init__.py`` does ``import
tensorflow as tf``; ``from utils import *``; ``from .common import keras``;
``class Net(BaseModel)`` where ``BaseModel(tf.keras.Model)`` is defined in
another module) needs to know what those modules bind. The index answers
from a small summary of each module, made from CPython's ``ast`` (no LibCST
parse, no code run):

* its top-level bindings (top-level statements, and the bodies of top-level
  ``if``/``try``/``with``/loops): imports (absolute and relative), defs,
  classes with their base expressions, names assigned once a dotted name
  (``layers = tf.keras.layers``), other names;
* its star imports and ``__all__``;
* every module it imports anywhere, and whether one of them is TensorFlow or
  Keras (for the text prefilter);
* the calls made in a loop body anywhere in it (a ``for``/``while`` body, a
  ``while`` test, a comprehension's element and conditions; not inside a def
  or lambda written in the loop) whose callee is a name its top-level imports
  bind, or an attribute of one (``from trainer import step`` ... ``for b in ds:
  step(b)``; ``import trainer`` ... ``trainer.step(b)``), not shadowed by a
  name the enclosing function binds, nor in code that may be a graph (see
  ``_loop_calls``): as (level, dotted import target), so
  that the index finds the project def they call (``ProjectIndex.loop_callers``);
* what each top-level def returns, when every ``return`` of it is a chain of
  method calls on a call of a dotted name or on one of its positional
  parameters (``return tf.data.Dataset.from_tensor_slices(x).map(f).batch(32)``,
  ``ds = ds.map(f); return ds``; see ``_returns``): the root and the methods
  applied, so that the importer's facts can judge the value
  (``ProjectFile.returns``: a dataset built in ``data.py`` and consumed in ``train.py``).

* which positional parameters of each top-level def feed a model it builds
  (``def block(x): return Conv2D(8, 3)(x)``: a value derived from ``x``
  reaches a call of a constructed callable, ``Class(...)(value)``, the
  class named through an import or defined in the module, directly or
  through another such def of the module), and which reach its returns
  (see ``_builds``): ``ProjectFile.builds``, so that an importer reads
  ``common.conv_block(inputs)`` as a step of a functional model.

* which top-level classes and defs make a Keras layer that computes differently
  in training (``TRAINING_LAYER_NAMES``, through an import: ``tf.keras.layers.Dropout(0.1)``
  anywhere in a class's body or among its bases, or in a def that returns a value), also
  through a same-module one they call by name (``Summary.holders``); and the objects the
  module hands to another module's defs: an argument of a call of an imported name that is
  a call of an imported or own top-level name, or a name every assignment of which in the
  module is one (``model = DS2(...)`` ... ``train(model=model)``), as (callee, the argument's
  position or ``=keyword``, the maker) (``Summary.hands``), so that the callee's module reads
  ``ProjectIndex.handed_holders``: whether what its def's parameter receives holds such a layer.

A summary depends on the module's text only (relative imports are kept
relative), so it is cached by content hash. Module names come from paths
under the project root (also under ``root/src``); absolute imports are looked
up there and, as Python does for a script, in the importing file's own folder.
Modules are found on disk as resolution asks for them, and summarised once.

``ProjectFile`` is one file's view: what an imported name stands for
(``mypkg.tf`` -> ``tensorflow``), the names a star import brings, a project
class's bases across modules, and the modules its answers read (``deps``:
module name -> its state), which the findings cache keys on.
"""
from __future__ import annotations

import ast
from collections import Counter
import contextlib
import gc
import hashlib
import json
import os
import sys
import warnings
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from tflint_gpu.semantic.path_text import format_tail, percent_tail

FRAMEWORKS = frozenset({"tensorflow", "keras", "tf_keras"})
# How many re-exports or aliases a resolution follows.
MAX_DEPTH = 24
SUMMARY_FORMAT = 9
# Keras layers that compute differently in training (``semantic.training_layers`` reads the same set):
# a module's ``holders`` are the classes and defs that make one.
TRAINING_LAYER_NAMES = frozenset({
    "BatchNormalization", "SyncBatchNormalization", "Dropout", "SpatialDropout1D", "SpatialDropout2D",
    "SpatialDropout3D", "GaussianDropout", "AlphaDropout", "GaussianNoise",
})

# Kinds of top-level bindings in a summary.
IMPORT, DEF, CLASS, ALIAS, OTHER = "i", "d", "c", "a", "o"
# What a def returns: (CALLED, dotted callee as written, methods) | (PARAMETER, position, methods);
# methods innermost first, "?" before one applied only on some path (under an ``if``).
CALLED, PARAMETER = "call", "param"
Returned = Tuple[str, Any, Tuple[str, ...]]
Hand = Tuple[str, int, int]  # (dotted callee as written, argument position, parameter position)
MAYBE = "?"
# What a top-level constant of a module is known to end with, as a path: (TEXT, its last characters)
# | (REFERENCE, a dotted name as written whose head the module imports: another module's constant).
TEXT, REFERENCE = "text", "ref"
Constant = Tuple[str, str]
# A call of a def that saves or loads a model at a path its parameter gives unchanged:
# (path parameter, method name or dotted function called, receiver parameter or "", keywords passed).
Save = Tuple[str, str, str, Tuple[str, ...]]


class Summary:
    """What one module binds at top level, from its ``ast``. Plain data (JSON
    and pickle), compared by ``digest``."""

    __slots__ = ("bound", "stars", "all", "imported", "framework", "loop_calls", "returns", "builds", "constants",
                 "writes", "saves", "flags", "graph_calls", "holders", "hands", "names", "path_reads",
                 "metric_calls", "metric_names", "flag_reads", "members", "_digest")

    def __init__(self, bound: Dict[str, tuple], stars: Sequence[Tuple[int, str]], all_: Optional[Sequence[str]],
                 imported: Sequence[Tuple[int, str]], framework: bool,
                 loop_calls: Sequence[Tuple[int, str]] = (),
                 returns: Optional[Dict[str, Sequence["Returned"]]] = None,
                 builds: Optional[Dict[str, Tuple[Sequence[int], Sequence[int], Sequence[Hand]]]] = None,
                 constants: Optional[Dict[str, Constant]] = None, writes: Iterable[str] = (),
                 saves: Optional[Dict[str, Tuple[Sequence[str], Sequence[Save]]]] = None,
                 flags: Optional[Dict[str, Constant]] = None,
                 graph_calls: Sequence[Tuple[int, str, Sequence[int]]] = (),
                 holders: Iterable[str] = (), hands: Sequence[Sequence[Any]] = (),
                 names: Iterable[str] = (), path_reads: Sequence[Sequence[Any]] = (),
                 metric_calls: Sequence[Tuple[int, str]] = (), metric_names: Sequence[Tuple[int, str]] = (),
                 flag_reads: Optional[Dict[str, Sequence[str]]] = None,
                 members: Optional[Dict[str, Iterable[str]]] = None) -> None:
        # name -> (IMPORT, level, target) | (DEF,) | (CLASS, (base, ...)) | (ALIAS, dotted) | (OTHER,)
        self.bound = bound
        self.stars = tuple(stars)  # (level, module) of each `from module import *`, in order
        self.all = tuple(all_) if all_ is not None else None
        self.imported = tuple(imported)  # (level, dotted) of every module an import anywhere may name
        self.framework = framework  # an import anywhere of tensorflow, keras or tf_keras
        self.loop_calls = tuple(loop_calls)  # (level, dotted import target) of each callee called in a loop
        # top-level def -> what each of its returns is (see ``_returns``)
        self.returns: Dict[str, Tuple[Returned, ...]] = {k: tuple(v) for k, v in (returns or {}).items()}
        # top-level def -> (positions feeding a model it builds, positions reaching its returns,
        # (dotted callee as written, argument position, parameter position) of the calls it hands a
        # parameter to)
        self.builds: Dict[str, Tuple[Tuple[int, ...], Tuple[int, ...], Tuple[Hand, ...]]] = {
            k: (tuple(v[0]), tuple(v[1]), tuple(tuple(h) for h in v[2])) for k, v in (builds or {}).items()}
        # top-level name bound once (not rebound through ``global``) -> what it ends with as a path
        self.constants: Dict[str, Constant] = {k: (v[0], v[1]) for k, v in (constants or {}).items()}
        # names of the attributes assigned on a plain name anywhere (``cfg.MODEL_PATH = ...``), sorted
        self.writes: Tuple[str, ...] = tuple(sorted(set(writes)))
        # top-level def -> (its positional parameters, the saves and loads it makes at a parameter's path)
        self.saves: Dict[str, Tuple[Tuple[str, ...], Tuple[Save, ...]]] = {
            k: (tuple(v[0]), tuple((c[0], c[1], c[2], tuple(c[3])) for c in v[1])) for k, v in (saves or {}).items()}
        # command-line flag (ARGPARSE + dest, ABSL + name) -> what its default ends with as a path
        self.flags: Dict[str, Constant] = {k: (v[0], v[1]) for k, v in (flags or {}).items()}
        # (level, dotted import target, positions given a parameter of the graph def) of each callee
        # called from graph code (see ``_graph_calls``)
        self.graph_calls = tuple((c[0], c[1], tuple(c[2])) for c in graph_calls)
        # top-level classes and defs that make a layer of ``TRAINING_LAYER_NAMES``, sorted
        self.holders: Tuple[str, ...] = tuple(sorted(set(holders)))
        # (callee's level, callee's dotted import target, "position" or "=keyword", maker's level (-1: this
        # module's own top-level name), maker's dotted target) of each object handed to another module's def
        self.hands: Tuple[Tuple[int, str, str, int, str], ...] = tuple(
            (h[0], h[1], h[2], h[3], h[4]) for h in hands)
        # the last path part of every string the module writes that may name a file (``mentioned_files``), sorted
        self.names: Tuple[str, ...] = tuple(sorted(set(names)))
        # (level, dotted import target, how it is read) of each name of another module read as the path
        # of a save or load (``_path_reads``: ``model.save_weights(config.save_model_dir)``)
        self.path_reads: Tuple[Tuple[int, str, str], ...] = tuple((r[0], r[1], r[2]) for r in path_reads)
        # (level, dotted import target) of each callee called in a `compile(metrics=[...])` (a metric
        # factory: ``metrics=[f_score()]``), and of each name given there uncalled (``metrics=[f_score]``)
        # (see ``_metric_references``)
        self.metric_calls: Tuple[Tuple[int, str], ...] = tuple((c[0], c[1]) for c in metric_calls)
        self.metric_names: Tuple[Tuple[int, str], ...] = tuple((c[0], c[1]) for c in metric_names)
        # absl flag (ABSL + name) -> how the module reads ``FLAGS.name`` (``_flag_reads``: the path of a
        # weights save or load, ``FLAG_OTHER`` for any other read; ``FLAG_NAMED`` when the module defines it
        # and another of its strings names the file its default names), sorted
        self.flag_reads: Dict[str, Tuple[str, ...]] = {k: tuple(sorted(set(v))) for k, v in (flag_reads or {}).items()}
        # top-level class -> the names its body binds (defs, assignments; of every class statement of that
        # name), sorted (``_members``): ``ProjectIndex.class_members``
        self.members: Dict[str, Tuple[str, ...]] = {k: tuple(sorted(set(v))) for k, v in (members or {}).items()}
        self._digest: Optional[str] = None

    @property
    def digest(self) -> str:
        """A hash of the summary's data (made when first asked: only a file that reads this module
        records it, as a dependency of its results)."""
        if self._digest is None:
            self._digest = hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()[:20]
        return self._digest

    def to_json(self) -> Dict[str, Any]:
        return {"bound": {k: list(v) if v[0] != CLASS else [CLASS, list(v[1])] for k, v in self.bound.items()},
                "stars": [list(s) for s in self.stars], "all": list(self.all) if self.all is not None else None,
                "imported": [list(i) for i in self.imported], "framework": self.framework,
                "loop_calls": [list(c) for c in self.loop_calls],
                "returns": {k: [[r[0], r[1], list(r[2])] for r in v] for k, v in self.returns.items()},
                "builds": {k: [list(v[0]), list(v[1]), [list(h) for h in v[2]]] for k, v in self.builds.items()},
                "constants": {k: list(v) for k, v in self.constants.items()}, "writes": list(self.writes),
                "saves": {k: [list(v[0]), [[c[0], c[1], c[2], list(c[3])] for c in v[1]]]
                          for k, v in self.saves.items()},
                "flags": {k: list(v) for k, v in self.flags.items()},
                "graph_calls": [[c[0], c[1], list(c[2])] for c in self.graph_calls],
                "holders": list(self.holders), "hands": [list(h) for h in self.hands],
                "names": list(self.names), "path_reads": [list(r) for r in self.path_reads],
                "metric_calls": [list(c) for c in self.metric_calls],
                "metric_names": [list(c) for c in self.metric_names],
                "flag_reads": {k: list(v) for k, v in self.flag_reads.items()},
                "members": {k: list(v) for k, v in self.members.items()}}

    @classmethod
    def from_json(cls, data: Any) -> "Summary":
        """The summary ``to_json`` gave; ValueError for anything else (a cache is data, checked field by field)."""
        if not isinstance(data, dict) or set(data) != {"bound", "stars", "all", "imported", "framework",
                                                        "loop_calls", "returns", "builds", "constants", "writes",
                                                        "saves", "flags", "graph_calls", "holders", "hands",
                                                        "names", "path_reads", "metric_calls", "metric_names",
                                                        "flag_reads", "members"}:
            raise ValueError("summary")
        bound: Dict[str, tuple] = {}
        if not isinstance(data["bound"], dict):
            raise ValueError("summary")
        for name, value in data["bound"].items():
            if not isinstance(value, list) or not value:
                raise ValueError("summary")
            kind = value[0]
            if kind == IMPORT and len(value) == 3 and _is_int(value[1]) and isinstance(value[2], str):
                bound[name] = (IMPORT, value[1], value[2])
            elif kind in (DEF, OTHER) and len(value) == 1:
                bound[name] = (kind,)
            elif kind == CLASS and len(value) == 2 and isinstance(value[1], list) \
                    and all(isinstance(b, str) for b in value[1]):
                bound[name] = (CLASS, tuple(value[1]))
            elif kind == ALIAS and len(value) == 2 and isinstance(value[1], str):
                bound[name] = (ALIAS, value[1])
            else:
                raise ValueError("summary")
        pairs = []
        graph_calls = data["graph_calls"]
        if not isinstance(graph_calls, list) or not all(
                isinstance(c, list) and len(c) == 3 and _is_int(c[0]) and isinstance(c[1], str)
                and isinstance(c[2], list) and all(_is_int(i) for i in c[2]) for c in graph_calls):
            raise ValueError("summary")
        for key in ("stars", "imported", "loop_calls", "metric_calls", "metric_names"):
            items = data[key]
            if not isinstance(items, list) or not all(
                    isinstance(i, list) and len(i) == 2 and _is_int(i[0]) and isinstance(i[1], str) for i in items):
                raise ValueError("summary")
            pairs.append([(i[0], i[1]) for i in items])
        all_ = data["all"]
        if all_ is not None and not (isinstance(all_, list) and all(isinstance(n, str) for n in all_)):
            raise ValueError("summary")
        if not isinstance(data["framework"], bool):
            raise ValueError("summary")
        returns: Dict[str, List[Returned]] = {}
        if not isinstance(data["returns"], dict):
            raise ValueError("summary")
        for name, items in data["returns"].items():
            if not isinstance(items, list) or not items:
                raise ValueError("summary")
            for item in items:
                if not (isinstance(item, list) and len(item) == 3 and isinstance(item[2], list)
                        and all(isinstance(m, str) for m in item[2])
                        and ((item[0] == CALLED and isinstance(item[1], str))
                             or (item[0] == PARAMETER and _is_int(item[1])))):
                    raise ValueError("summary")
                returns.setdefault(name, []).append((item[0], item[1], tuple(item[2])))
        builds = data["builds"]
        if not isinstance(builds, dict) or not all(
                isinstance(v, list) and len(v) == 3 and all(
                    isinstance(part, list) and all(_is_int(i) for i in part) for part in v[:2])
                and isinstance(v[2], list) and all(
                    isinstance(h, list) and len(h) == 3 and isinstance(h[0], str) and _is_int(h[1])
                    and _is_int(h[2]) for h in v[2])
                for v in builds.values()):
            raise ValueError("summary")
        constants, writes, saves, flags = data["constants"], data["writes"], data["saves"], data["flags"]
        for table, kinds in ((constants, (TEXT, REFERENCE)), (flags, (TEXT, REFERENCE, ""))):
            if not isinstance(table, dict) or not all(
                    isinstance(v, list) and len(v) == 2 and v[0] in kinds and isinstance(v[1], str)
                    for v in table.values()):
                raise ValueError("summary")
        if not isinstance(writes, list) or not all(isinstance(w, str) for w in writes):
            raise ValueError("summary")
        if not isinstance(saves, dict) or not all(
                isinstance(v, list) and len(v) == 2 and isinstance(v[0], list) and isinstance(v[1], list)
                and all(isinstance(p, str) for p in v[0]) and all(
                    isinstance(c, list) and len(c) == 4 and all(isinstance(f, str) for f in c[:3])
                    and isinstance(c[3], list) and all(isinstance(k, str) for k in c[3]) for c in v[1])
                for v in saves.values()):
            raise ValueError("summary")
        holders, hands = data["holders"], data["hands"]
        if not isinstance(holders, list) or not all(isinstance(h, str) for h in holders):
            raise ValueError("summary")
        if not isinstance(hands, list) or not all(
                isinstance(h, list) and len(h) == 5 and _is_int(h[0]) and isinstance(h[1], str)
                and isinstance(h[2], str) and isinstance(h[3], int) and not isinstance(h[3], bool)
                and -1 <= h[3] < 100 and isinstance(h[4], str) for h in hands):
            raise ValueError("summary")
        names, path_reads = data["names"], data["path_reads"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError("summary")
        if not isinstance(path_reads, list) or not all(
                isinstance(r, list) and len(r) == 3 and _is_int(r[0]) and isinstance(r[1], str)
                and isinstance(r[2], str) for r in path_reads):
            raise ValueError("summary")
        flag_reads, members = data["flag_reads"], data["members"]
        if not isinstance(members, dict) or not all(
                isinstance(v, list) and all(isinstance(m, str) for m in v) for v in members.values()):
            raise ValueError("summary")
        if not isinstance(flag_reads, dict) or not all(
                isinstance(v, list) and all(isinstance(h, str) for h in v) for v in flag_reads.values()):
            raise ValueError("summary")
        return cls(bound, pairs[0], all_, pairs[1], data["framework"], pairs[2], returns,
                   {k: (v[0], v[1], [(h[0], h[1], h[2]) for h in v[2]]) for k, v in builds.items()},
                   {k: (v[0], v[1]) for k, v in constants.items()}, writes,
                   {k: (v[0], v[1]) for k, v in saves.items()}, {k: (v[0], v[1]) for k, v in flags.items()},
                   graph_calls, holders, hands, names, path_reads, pairs[3], pairs[4], flag_reads, members)

    def public(self) -> List[str]:
        """The names ``from module import *`` brings (``__all__``, else every public top-level name)."""
        return list(self.all) if self.all is not None else [n for n in self.bound if not n.startswith("_")]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 100


def _dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _strings(node: ast.AST) -> Optional[List[str]]:
    if isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]
    return None


_COMPOUND = tuple(getattr(ast, name) for name in ("If", "Try", "TryStar", "With", "AsyncWith", "For", "AsyncFor",
                                                  "While", "Match") if hasattr(ast, name))
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def summarize(tree: ast.Module, imports_only: bool = False) -> Summary:
    """The summary of a module from its ``ast`` (top-level statements, and the
    imports of every statement list below them; expressions are not entered).
    ``imports_only``: without what its defs return, build and call in loops (a
    third of the cost), for a file's own question of what it imports
    (``ProjectFile.imports``), never for the index."""
    bound: Dict[str, tuple] = {}
    assigned: Dict[str, int] = {}
    stars: List[Tuple[int, str]] = []
    imported: Dict[Tuple[int, str], None] = {}
    returns: Dict[str, List[Returned]] = {}
    state = {"all": None, "framework": False}
    walked: Dict[int, List[List[ast.AST]]] = {}
    candidates: Dict[str, ast.AST] = {}  # top-level name -> the value of its (last) plain assignment
    writes: Set[str] = set()  # attributes assigned on a plain name (``cfg.X = ...``)
    declared: Set[str] = set()  # names a def declares ``global``
    flag_calls: List[ast.Call] = []  # calls made as statements: parser.add_argument(...), flags.DEFINE_string(...)

    def own_nodes(function: ast.FunctionDef) -> List[List[ast.AST]]:
        """``_own_nodes``, once per def (``_returns`` and ``_builds`` both read them)."""
        if id(function) not in walked:
            walked[id(function)] = _own_nodes(function)
        return walked[id(function)]

    def bind(name: str, value: tuple) -> None:
        old = bound.get(name)
        if value[0] in (ALIAS, OTHER):
            assigned[name] = assigned.get(name, 0) + 1
            if value[0] == ALIAS and assigned[name] > 1:
                value = (OTHER,)
            if old is not None and old[0] == IMPORT:
                return  # as the model's lookup: an import of the name is what it reads
        if value[0] != DEF:
            returns.pop(name, None)  # the last binding of the name is not that def
        bound[name] = value

    def note_import(node: ast.AST, top: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported[(0, alias.name)] = None
                if alias.name.split(".", 1)[0] in FRAMEWORKS:
                    state["framework"] = True
                if top:
                    if alias.asname:
                        bind(alias.asname, (IMPORT, 0, alias.name))
                    else:
                        first = alias.name.split(".", 1)[0]
                        bind(first, (IMPORT, 0, first))
            return
        module = node.module or ""
        level = node.level or 0
        if level == 0 and module.split(".", 1)[0] in FRAMEWORKS:
            state["framework"] = True
        imported[(level, module)] = None
        for alias in node.names:
            if alias.name == "*":
                if top:
                    stars.append((level, module))
                continue
            full = f"{module}.{alias.name}" if module else alias.name
            imported[(level, full)] = None
            if top:
                bind(alias.asname or alias.name, (IMPORT, level, full))

    def bind_targets(target: ast.AST, value: Optional[ast.AST]) -> None:
        if isinstance(target, ast.Name):
            dotted = _dotted(value) if value is not None else None
            bind(target.id, (ALIAS, dotted) if dotted is not None else (OTHER,))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                bind_targets(element.value if isinstance(element, ast.Starred) else element, None)

    def note_writes(statement: ast.AST) -> None:
        """The attributes ``statement`` assigns on a plain name, the names it declares global."""
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
            targets = [statement.target]
        else:
            if isinstance(statement, ast.Global):
                declared.update(statement.names)
            return
        for target in targets:
            for node in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                node = node.value if isinstance(node, ast.Starred) else node
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id not in ("self", "cls"):
                    writes.add(node.attr)

    def nested(statements: Iterable[ast.stmt]) -> None:
        """Imports inside defs, classes and their blocks: named, not bound at top level (and the
        attributes assigned there, ``note_writes``)."""
        for statement in statements:
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                note_import(statement, False)
            elif not imports_only:
                note_writes(statement)
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
                    flag_calls.append(statement.value)
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                block = getattr(statement, field, None)
                if isinstance(block, list):
                    nested(b for b in block if isinstance(b, (ast.stmt, ast.excepthandler, ast.AST)))

    def top(statements: Iterable[ast.AST]) -> None:
        for statement in statements:
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                note_import(statement, True)
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                bind(statement.name, (DEF,))
                returned = _returns(statement, own_nodes) \
                    if isinstance(statement, ast.FunctionDef) and not imports_only else None
                if returned:
                    returns[statement.name] = returned
                else:
                    returns.pop(statement.name, None)
                nested(statement.body)
            elif isinstance(statement, ast.ClassDef):
                bases = tuple(_dotted(b) or "" for b in statement.bases)
                bind(statement.name, (CLASS, bases))
                nested(statement.body)
            elif isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if isinstance(target, ast.Name) and target.id == "__all__":
                        state["all"] = _strings(statement.value)
                    bind_targets(target, statement.value)
                if len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                    candidates[statement.targets[0].id] = statement.value
                note_writes(statement)
            elif isinstance(statement, ast.AnnAssign):
                if statement.value is not None:
                    bind_targets(statement.target, statement.value)
                    if isinstance(statement.target, ast.Name):
                        candidates[statement.target.id] = statement.value
                note_writes(statement)
            elif isinstance(statement, ast.AugAssign):
                note_writes(statement)
                if isinstance(statement.target, ast.Name):
                    if statement.target.id == "__all__" and state["all"] is not None:
                        more = _strings(statement.value)
                        state["all"] = state["all"] + more if more is not None else None
                    bind(statement.target.id, (OTHER,))
            elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
                call = statement.value  # __all__.extend([...]) / __all__.append("x")
                flag_calls.append(call)
                func = call.func
                if isinstance(func, ast.Attribute) and _dotted(func.value) == "__all__" and state["all"] is not None:
                    more = _strings(call.args[0]) if func.attr == "extend" and len(call.args) == 1 else None
                    if func.attr == "append" and len(call.args) == 1 and isinstance(call.args[0], ast.Constant) \
                            and isinstance(call.args[0].value, str):
                        more = [call.args[0].value]
                    state["all"] = state["all"] + more if more is not None else None
            elif isinstance(statement, _COMPOUND):
                if isinstance(statement, (ast.For, ast.AsyncFor)):
                    bind_targets(statement.target, None)
                for item in getattr(statement, "items", ()):  # with ... as name
                    if getattr(item, "optional_vars", None) is not None:
                        bind_targets(item.optional_vars, None)
                for field in ("body", "orelse", "finalbody"):
                    top(getattr(statement, field, None) or ())
                for handler in getattr(statement, "handlers", ()):
                    if handler.name:
                        bind(handler.name, (OTHER,))
                    top(handler.body)
                for case in getattr(statement, "cases", ()):
                    top(case.body)

    top(tree.body)
    if imports_only:
        return Summary(bound, stars, state["all"], list(imported), state["framework"])
    returns = {name: value for name, value in returns.items() if bound.get(name) == (DEF,)}
    single = {name: value for name, value in candidates.items()
              if assigned.get(name) == 1 and bound.get(name, (IMPORT,))[0] in (ALIAS, OTHER) and name not in declared}
    constants = {}
    for name, value in single.items():
        found = _path_value(value, bound, single)
        if found is not None:
            constants[name] = found
    nodes = list(ast.walk(tree))  # the readers below that need every node share one walk
    mentioned = mentioned_files(tree, nodes)
    return Summary(bound, stars, state["all"], list(imported), state["framework"], _loop_calls(tree, bound),
                   returns, _builds(tree, bound, own_nodes), constants, writes,
                   {**_class_saves(tree, bound), **_saves(tree, bound, own_nodes)},
                   _flags(flag_calls, bound, single), _graph_calls(tree, bound), _holders(tree, bound),
                   _hands(nodes, bound), sorted(mentioned), _path_reads(nodes, bound),
                   *_metric_references(nodes, bound), flag_reads=_flag_reads(nodes, bound, flag_calls, mentioned),
                   members=_members(tree, bound))


# How ``_path_reads`` tells a save or load: the method, or what a function or class call is.
WEIGHTS_SAVE, WEIGHTS_LOAD, MODEL_SAVE, MODEL_LOAD = "save_weights", "load_weights", "save", "load_model"
# ... and a project callable given ``save_weights_only=True`` and a path of known ending: this, then the ending.
WEIGHTS_GIVEN = "save_weights_only:"


def _save_or_load(node: ast.Call) -> Optional[Tuple[str, Optional[ast.AST], bool]]:
    """For a call that saves or loads a model or its weights (``m.save_weights(p)``, ``load_model(p)``, a
    callback given ``save_weights_only=True``): how (``WEIGHTS_SAVE``...), the path expression (None when
    not given) and whether it was given ``save_weights_only=True``; None for any other call."""
    func = node.func
    weights_only = any(k.arg == "save_weights_only" and isinstance(k.value, ast.Constant)
                       and k.value.value is True for k in node.keywords)
    if isinstance(func, ast.Attribute) and func.attr in (WEIGHTS_SAVE, WEIGHTS_LOAD, MODEL_SAVE):
        how = func.attr
    elif weights_only:
        how = WEIGHTS_SAVE
    elif (_dotted(func) or "").rpartition(".")[2] == MODEL_LOAD:
        how = MODEL_LOAD
    else:
        return None
    path = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "filepath"), None)
    return how, path, weights_only


def _path_reads(nodes: Sequence[ast.AST], bound: Dict[str, tuple]) -> List[Tuple[int, str, str]]:
    """The names of other modules the module reads as the path of a save or a load (``Summary.path_reads``):
    the first argument (or ``filepath=``) of ``x.save_weights(...)``, ``x.load_weights(...)``,
    ``x.save(...)``, of ``load_model(...)`` and of a call given ``save_weights_only=True`` (a weights
    save), when it is (or ends with, as ``_path_value`` reads it) a name the module imports or an
    attribute of one (``config.save_model_dir``), as (level, dotted import target, how it is read); and
    each imported callable of no framework given ``save_weights_only=True`` and a path whose end is
    text (``ModelCheckpoint(os.path.join(d, "ep{epoch:03d}.h5"), save_weights_only=True)`` with the
    project's own callback), as (level, its import target, ``WEIGHTS_GIVEN`` + that end). ``nodes``:
    every node of the module (``ast.walk``)."""
    found = set()
    for node in nodes:
        if node.__class__ is not ast.Call:
            continue
        read = _save_or_load(node)
        if read is None:
            continue
        how, path, weights_only = read
        func = node.func
        if path is None or isinstance(path, ast.Starred):
            continue
        value = _path_value(path, bound, {})
        callee = _dotted(func) if weights_only else None
        head = bound.get(callee.partition(".")[0]) if callee is not None else None
        if value is not None and value[0] == TEXT and head is not None and head[0] == IMPORT \
                and head[2].split(".", 1)[0] not in FRAMEWORKS:
            rest = callee.partition(".")[1] + callee.partition(".")[2]
            found.add((head[1], head[2] + rest, WEIGHTS_GIVEN + value[1]))
        if value is None or value[0] != REFERENCE:
            continue
        head, dot, rest = value[1].partition(".")
        imported = bound.get(head)
        if imported is not None and imported[0] == IMPORT:
            found.add((imported[1], imported[2] + dot + rest, how))
    return sorted(found)


# How ``_flag_reads`` tells a read of an absl flag that is not the path of a weights save or load, a read
# as a truth value (``if FLAGS.weights:``, ``FLAGS.weights is None``), and a flag whose default names a
# file another string of its defining module names too.
FLAG_OTHER, FLAG_TEST, FLAG_NAMED = "other", "test", "named"


def _absl_flags_object(node: ast.AST, bound: Dict[str, tuple]) -> bool:
    """Is ``node`` absl's ``FLAGS`` (``from absl.flags import FLAGS``, ``flags.FLAGS``, ``FLAGS =
    flags.FLAGS``; TensorFlow's ``tf.compat.v1.flags.FLAGS`` too)?"""
    dotted = _dotted(node)
    if dotted is None:
        return False
    head, dot, rest = dotted.partition(".")
    value = bound.get(head)
    if value is not None and value[0] == ALIAS:  # FLAGS = flags.FLAGS
        dotted = value[1] + dot + rest
    target = _imported(dotted, bound)
    return target is not None and target.endswith(".FLAGS") and (
        target.startswith("absl.flags.") or (target.startswith("tensorflow.") and ".flags." in target))


def _flag_reads(nodes: Sequence[ast.AST], bound: Dict[str, tuple], calls: Sequence[ast.Call],
                mentioned: "Counter[str]") -> Dict[str, List[str]]:
    """``Summary.flag_reads``: for each ``FLAGS.name`` the module reads (absl's ``FLAGS``, written as
    ``_absl_flags_object`` tells), how: ``WEIGHTS_SAVE``/``WEIGHTS_LOAD``/``MODEL_SAVE``/``MODEL_LOAD``
    where it is the very path (first argument or ``filepath=``) of ``x.save_weights(...)`` (or a call
    given ``save_weights_only=True``), ``x.load_weights(...)``, ``x.save(...)``, ``load_model(...)``;
    ``FLAG_TEST`` as the test of an ``if``/``while``/conditional expression, under ``not``, or
    compared ``is None``/``is not None``; ``FLAG_OTHER`` for any other read
    (``load_darknet_weights(yolo, FLAGS.weights)``,
    ``os.path.join(FLAGS.weights, "x")``); an assignment ``FLAGS.name = ...`` is no read. And
    ``FLAG_NAMED`` for a flag the module defines (absl ``DEFINE_*`` among ``calls``, its statements'
    calls) with a string default whose file another string of the module names too (``mentioned``:
    ``mentioned_files``)."""
    if not any(v[0] == IMPORT and (v[2].startswith("absl") or v[2].startswith("tensorflow"))
               for v in bound.values()):
        return {}
    paths: Dict[int, str] = {}
    for node in nodes:
        if node.__class__ is not ast.Call:
            continue
        read = _save_or_load(node)
        if read is None:
            continue
        how, path, _ = read
        if isinstance(path, ast.Attribute):
            paths[id(path)] = how
    for node in nodes:  # truth values: any non-empty path is true
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            paths[id(node.test)] = FLAG_TEST
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            paths[id(node.operand)] = FLAG_TEST
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None:
            paths[id(node.left)] = FLAG_TEST
    found: Dict[str, List[str]] = {}
    names = {name for name in bound if _absl_flags_object(ast.Name(id=name), bound)}  # FLAGS, FLAGS = flags.FLAGS
    for node in nodes:
        if node.__class__ is ast.Attribute and isinstance(node.ctx, ast.Load) and (
                (isinstance(node.value, ast.Name) and node.value.id in names)
                or (isinstance(node.value, ast.Attribute) and node.value.attr == "FLAGS"
                    and _absl_flags_object(node.value, bound))):
            found.setdefault(ABSL + node.attr, []).append(paths.get(id(node), FLAG_OTHER))
    defaults: Counter = Counter()
    named: List[Tuple[str, str]] = []
    for call in calls:
        func = call.func
        if not isinstance(func, ast.Attribute) or not func.attr.startswith("DEFINE_"):
            continue
        dotted = _dotted(func)
        target = _imported(dotted, bound) if dotted is not None else None
        if target is None or not (target.startswith("absl.flags.") or target.startswith("tensorflow.")):
            continue
        first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "name"), None)
        default = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords
                                                                if k.arg == "default"), None)
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and isinstance(default, ast.Constant) \
                and isinstance(default.value, str):
            name = file_name(default.value)
            if name is not None:
                defaults[name] += 1
                named.append((ABSL + first.value, name))
    for key, name in named:
        if mentioned[name] > defaults[name]:
            found.setdefault(key, []).append(FLAG_NAMED)
    return found


def file_name(text: str) -> Optional[str]:
    """The last path part of ``text`` when it may name a file (1 to 120 characters, no blank): the key
    ``Summary.names`` and ``ProjectIndex.naming`` compare."""
    last = text.replace("\\", "/").rsplit("/", 1)[-1]
    return last if 0 < len(last) <= 120 and not any(c.isspace() for c in last) else None


def file_names(text: str) -> List[str]:
    """``file_name`` of each blank-separated word of ``text`` (quotes, brackets and the punctuation
    that ends a sentence taken off): the files a string names, in a message or a docstring too; in a
    string of several words, only those with a dot or a slash (a plain word is not taken for a file)."""
    found = []
    words = text.split()
    for word in words:
        word = word.strip("\"'`()[]<>,;:").rstrip(".")
        if len(words) > 1 and "." not in word and "/" not in word:
            continue  # a word of a sentence names no file ("the last weights"), a path or a file name may
        name = file_name(word)
        if name is not None:
            found.append(name)
    return found


def mentioned_files(tree: ast.Module, nodes: Optional[Sequence[ast.AST]] = None) -> "Counter[str]":
    """How many times the string constants of the module name each file (``file_names``: f-strings'
    text parts too), leaving out the strings that write the path of a weights save: the first
    argument (or ``filepath=``) of ``x.save_weights(...)`` and of a call given ``save_weights_only=True``
    (``ModelCheckpoint``, a project's own callback), every argument of a helper named ``save_weights(...)``:
    saves that a rename to `.weights.h5` renames
    alike, where every other mention (a load, a message, a docstring) may read the old name; and the
    first argument of ``x.load_weights(...)`` written exactly as such a save's path (the module's own
    rename rewrites that load with its save: four tutorial scripts each saving and loading
    ``"./models/<name>/model.ckpt"`` do not stop each other's rename); and a plain word (no dot or
    slash) written as a dict literal's key or a subscript's index (``{"last": ...}``, ``d["last"]``):
    an entry's key, not a file. ``nodes``: ``ast.walk(tree)``'s
    nodes where the caller has them (``summarize``'s ``Summary.names``: the files named, each once)."""
    saves: Set[int] = set()
    written: Set[str] = set()  # the weights saves' path expressions
    keys: Set[int] = set()  # a dict literal's keys and a subscript's index: ``{"last": ...}``, ``d["last"]``
    nodes = list(ast.walk(tree)) if nodes is None else nodes
    for node in nodes:
        if node.__class__ is ast.Dict:
            keys.update(id(key) for key in node.keys if key is not None)
            continue
        if node.__class__ is ast.Subscript:
            keys.add(id(node.slice))
            continue
        if node.__class__ is not ast.Call:
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "save_weights":  # a project's helper: any argument
            saves.update(id(part) for argument in node.args + [k.value for k in node.keywords]
                         for part in ast.walk(argument))
            continue
        weights = (isinstance(func, ast.Attribute) and func.attr == "save_weights") or any(
            k.arg == "save_weights_only" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords)
        if not weights:
            continue
        path = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "filepath"), None)
        if path is not None and not isinstance(path, ast.Starred):
            saves.update(id(part) for part in ast.walk(path))
            written.add(ast.dump(path))
    for node in nodes:  # a load of the very path a weights save of the module writes: renamed with it
        if node.__class__ is ast.Call and isinstance(node.func, ast.Attribute) and node.func.attr == "load_weights":
            path = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "filepath"), None)
            if path is not None and ast.dump(path) in written:
                saves.update(id(part) for part in ast.walk(path))
    counted: Counter = Counter()
    for node in nodes:
        if node.__class__ is ast.Constant and isinstance(node.value, str) and len(node.value) < 10000 \
                and id(node) not in saves:
            if id(node) in keys and "." not in node.value and "/" not in node.value:
                continue  # a plain word as a key names an entry, not a file
            counted.update(file_names(node.value))
    return counted


ARGPARSE, ABSL = "argparse:", "absl:"  # the namespaces of ``Summary.flags``
UNKNOWN_VALUE: Constant = ("", "")  # a flag whose default is not a known path, or defined twice otherwise


def _flags(calls: Sequence[ast.Call], bound: Dict[str, tuple],
           constants: Dict[str, ast.AST]) -> Dict[str, Constant]:
    """The command-line flags the module defines in statements, each with what its default ends with
    as a path (``_path_value``; ``UNKNOWN_VALUE`` when not known): ``ARGPARSE + dest`` for
    ``<parser>.add_argument("--weights-path", default="w.h5")`` (``dest=``, else the first long
    option, dashes read as underscores, else the first option), ``ABSL + name`` for
    ``flags.DEFINE_string("weights_path", "w.h5", "help")`` (absl's ``flags``, or TensorFlow's)."""
    found: Dict[str, Constant] = {}
    for call in calls:
        func = call.func
        if not isinstance(func, ast.Attribute) or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        named = {k.arg: k.value for k in call.keywords if k.arg is not None}
        if func.attr == "add_argument":
            options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if len(options) != len(call.args) or not options or any(k.arg is None for k in call.keywords):
                continue
            dest = named.get("dest")
            if dest is not None:
                name = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else None
            else:
                long = [o for o in options if o.startswith("--")]
                name = (long or options)[0].lstrip("-").replace("-", "_")
            key = ARGPARSE + name if name else None
            default = named.get("default")
        elif func.attr.startswith("DEFINE_"):
            dotted = _dotted(func)
            target = _imported(dotted, bound) if dotted is not None else None
            if target is None or not (target.startswith("absl.flags.") or target.startswith("tensorflow.")):
                continue
            first = call.args[0] if call.args else named.get("name")
            name = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
            key = ABSL + name if name else None
            default = call.args[1] if len(call.args) > 1 else named.get("default")
        else:
            continue
        if key is None:
            continue
        value = _path_value(default, bound, constants) if default is not None else None
        value = value if value is not None else UNKNOWN_VALUE
        found[key] = value if found.get(key, value) == value else UNKNOWN_VALUE
    return found


_PATH_JOINS = frozenset({"os.path.join", "posixpath.join", "ntpath.join", "pathlib.Path", "pathlib.PurePath"})
_PATH_TEXT = 100  # how many last characters of a constant's text a summary keeps


def _imported(dotted: str, bound: Dict[str, tuple]) -> Optional[str]:
    """``dotted`` with its head read as the absolute import that binds it (``tf.keras.models.load_model``
    -> ``tensorflow.keras.models.load_model``), or None when no absolute import binds its head."""
    head, dot, rest = dotted.partition(".")
    value = bound.get(head)
    if value is None or value[0] != IMPORT or value[1]:
        return None
    return value[2] + dot + rest


def _path_value(node: ast.AST, bound: Dict[str, tuple], constants: Dict[str, ast.AST],
                depth: int = 0) -> Optional[Constant]:
    """What a module's constant ``node`` ends with as a path: (TEXT, its last characters) for a
    string, the last part of ``os.path.join(...)``/``pathlib.Path(...)``, of ``a + "x"``, ``a / "x"``,
    an f-string ending in text, ``"...%d.h5" % x``, ``"...{}.h5".format(x)``, through ``str(...)`` and
    the module's other ``constants``; (REFERENCE, dotted) for a name the module imports, or an
    attribute of one; None otherwise (as ``semantic.migration.path_ending`` reads a file's own)."""
    if depth > 8:
        return None
    text: Optional[str] = None
    if isinstance(node, ast.Constant):
        text = node.value if isinstance(node.value, str) else None
    elif isinstance(node, ast.JoinedStr):
        last = node.values[-1] if node.values else None
        text = last.value if isinstance(last, ast.Constant) and isinstance(last.value, str) else None
    elif isinstance(node, ast.BinOp):
        if isinstance(node.op, (ast.Add, ast.Div)):
            return _path_value(node.right, bound, constants, depth + 1)
        if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            text = percent_tail(node.left.value)
    elif isinstance(node, ast.Call):
        func = node.func
        if node.keywords or not node.args or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        if isinstance(func, ast.Attribute) and func.attr == "format":
            template = func.value
            text = format_tail(template.value) if isinstance(template, ast.Constant) \
                and isinstance(template.value, str) else None
        else:
            dotted = _dotted(func)
            target = _imported(dotted, bound) if dotted is not None else None
            if target in _PATH_JOINS:
                return _path_value(node.args[-1], bound, constants, depth + 1)
            if len(node.args) == 1 and (target == "os.fspath" or (dotted == "str" and "str" not in bound)):
                return _path_value(node.args[0], bound, constants, depth + 1)
    elif isinstance(node, ast.Name):
        if node.id in constants:
            return _path_value(constants[node.id], bound, constants, depth + 1)
        return (REFERENCE, node.id) if bound.get(node.id, (OTHER,))[0] == IMPORT else None
    elif isinstance(node, ast.Attribute):
        dotted = _dotted(node)
        if dotted is not None and bound.get(dotted.partition(".")[0], (OTHER,))[0] == IMPORT:
            return (REFERENCE, dotted)
    if not text or "\n" in text:
        return None
    return (TEXT, text[-_PATH_TEXT:])


_SAVE_METHODS = frozenset({"save", "save_weights", "load_weights"})
_SAVE_FUNCTIONS = ("models.load_model", "saving.load_model", "models.save_model", "saving.save_model")


def _saves(tree: ast.Module, bound: Dict[str, tuple],
           own_nodes: Callable[[ast.FunctionDef], List[List[ast.AST]]]) -> Dict[str, Tuple[List[str], List[Save]]]:
    """For each top-level def (the last binding of its name), the calls in its own code that save or
    load a model at the path one of its parameters gives, unchanged: ``model.save_weights(filepath)``,
    ``model.save(path)``, ``model.load_weights(path)`` on a parameter, ``keras.models.load_model(path)``,
    ``keras.models.save_model(model, path)`` (the function named through the module's absolute
    imports). A parameter the def assigns, or whose suffix an ``if``/``while`` test reads
    (``path.endswith(...)``, ``os.path.splitext(path)``, ``path.suffix``), gives none."""
    found: Dict[str, Tuple[List[str], List[Save]]] = {}
    for statement in tree.body:
        if not isinstance(statement, ast.FunctionDef) or bound.get(statement.name) != (DEF,):
            continue
        arguments = statement.args
        positional = [a.arg for a in arguments.posonlyargs + arguments.args]
        params = set(positional) | {a.arg for a in arguments.kwonlyargs}
        if not params:
            continue
        nodes = [node for nodes in own_nodes(statement) for node in nodes]
        calls = [node for node in nodes if node.__class__ is ast.Call and (
            (isinstance(node.func, ast.Attribute) and (node.func.attr in _SAVE_METHODS
                                                       or node.func.attr in ("load_model", "save_model")))
            or (isinstance(node.func, ast.Name) and node.func.id in ("load_model", "save_model")))]
        if not calls:
            continue
        unchanged = set(params)
        for node in nodes:
            if node.__class__ is ast.Name and not isinstance(node.ctx, ast.Load):
                unchanged.discard(node.id)
            elif isinstance(node, (ast.If, ast.IfExp, ast.While)):
                for part in _nodes(node.test):
                    if isinstance(part, ast.Attribute) and part.attr in ("endswith", "suffix", "suffixes") \
                            and isinstance(part.value, ast.Name):
                        unchanged.discard(part.value.id)
                    elif isinstance(part, ast.Call) and isinstance(part.func, (ast.Attribute, ast.Name)) \
                            and (_dotted(part.func) or "").endswith("splitext"):
                        unchanged.difference_update(a.id for a in part.args if isinstance(a, ast.Name))
        made: List[Save] = []
        for call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                continue
            named = {k.arg: k.value for k in call.keywords}
            func = call.func
            receiver: Optional[ast.AST] = None
            if isinstance(func, ast.Attribute) and func.attr in _SAVE_METHODS and isinstance(func.value, ast.Name):
                what, receiver = func.attr, func.value
                path = call.args[0] if call.args else named.get("filepath")
            else:
                dotted = _dotted(func)
                what = _imported(dotted, bound) if dotted is not None else None
                if what is None or what.split(".", 1)[0] not in FRAMEWORKS or not what.endswith(_SAVE_FUNCTIONS):
                    continue
                if what.endswith("save_model"):
                    receiver = call.args[0] if call.args else named.get("model")
                    path = call.args[1] if len(call.args) > 1 else named.get("filepath")
                else:
                    path = call.args[0] if call.args else named.get("filepath")
            if receiver is not None and not (isinstance(receiver, ast.Name) and receiver.id in unchanged):
                continue
            if isinstance(path, ast.Name) and path.id in unchanged and (receiver is None or path.id != receiver.id):
                made.append((path.id, what, receiver.id if receiver is not None else "",
                             tuple(k for k in named if k not in ("filepath", "model"))))
        if made:
            found[statement.name] = (positional, made)
    return found


# A Save's receiver when the save is made on the model a Keras callback is given (``self.model``), and the
# mark of a parameter the class's saves are made under (``if self.<attribute>:``, the attribute set from
# that parameter): ``"?save_weights_only=0"``, made when the call gives it ``True`` (its default: ``=1``
# True, ``=0`` False, ``=?`` none or another); ``"?!save_best_only=0"``, made when it is false (the
# ``else`` of the test).
CALLBACK_MODEL = "self.model"
GUARD = "?"


def _class_saves(tree: ast.Module, bound: Dict[str, tuple]) -> Dict[str, Tuple[List[str], List[Save]]]:
    """For each top-level class deriving from a Keras callback (``keras.callbacks.Callback``,
    ``ModelCheckpoint``; not tf_keras's), the saves its methods make on the callback's model at the
    path a parameter of its ``__init__`` gives: ``self.model.save_weights(filepath)`` where
    ``filepath`` is ``self.filepath`` or a local name bound once from it or from
    ``self.filepath.format(...)`` (a template's text after its last field stays the path's end), and
    ``__init__`` sets ``self.filepath = filepath`` from its parameter, the class setting that
    attribute nowhere else. A save in the body (or the ``else``) of ``if self.flag:``, ``self.flag`` set
    from a parameter alike, is made when that parameter is true (false) (``GUARD`` marks). Keyed by the
    class name, with ``__init__``'s positional parameters after ``self``, as ``_saves`` keys a def."""
    found: Dict[str, Tuple[List[str], List[Save]]] = {}
    for statement in tree.body:
        if not isinstance(statement, ast.ClassDef) or bound.get(statement.name, (OTHER,))[0] != CLASS:
            continue
        bases = [_imported(d, bound) for d in (_dotted(b) for b in statement.bases) if d is not None]
        if not any(b is not None and b.split(".", 1)[0] in ("tensorflow", "keras")
                   and b.endswith(("callbacks.Callback", "callbacks.ModelCheckpoint")) for b in bases):
            continue
        methods = [m for m in statement.body if isinstance(m, ast.FunctionDef)]
        init = next((m for m in methods if m.name == "__init__"), None)
        if init is None or not init.args.args:
            continue
        positional = [a.arg for a in init.args.posonlyargs + init.args.args][1:]
        params = set(positional) | {a.arg for a in init.args.kwonlyargs}
        set_count: Counter = Counter()
        for method in methods:
            for node in ast.walk(method):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                        and isinstance(node.value, ast.Name) and node.value.id == "self":
                    set_count[node.attr] += 1
        rebound = {n.id for n in ast.walk(init) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        defaults = dict(zip(reversed(positional), reversed(init.args.defaults)))
        defaults.update({a.arg: d for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults) if d is not None})
        from_param: Dict[str, str] = {}  # attribute -> the parameter it is set from, once
        for node in ast.walk(init):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Name) \
                    and node.value.id in params and node.value.id not in rebound:
                target = node.targets[0]
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == "self" and set_count[target.attr] == 1:
                    from_param[target.attr] = node.value.id
        if not from_param:
            continue
        made: List[Save] = []
        for method in methods:
            if method is init:
                continue
            local: Dict[str, Optional[str]] = {}  # name bound in the method -> the attribute it is made from
            for node in ast.walk(method):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    name = node.targets[0].id
                    local[name] = None if name in local else _attribute_path(node.value)
                elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    local.setdefault(node.id, None)
            flags = {attribute: GUARD + "%s" + param + "=" + _truth(defaults.get(param))
                     for attribute, param in from_param.items()}
            _callback_saves(method.body, local, from_param, flags, (), made)
        if made:
            found[statement.name] = (positional, made)
    return found


def _truth(default: Optional[ast.AST]) -> str:
    """``1``/``0`` for a default ``True``/``False``, else ``?``."""
    if isinstance(default, ast.Constant) and isinstance(default.value, bool):
        return "1" if default.value else "0"
    return "?"


def _attribute_path(value: ast.AST) -> Optional[str]:
    """``A`` of ``self.A`` or ``self.A.format(...)``; None for anything else."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "format":
        value = value.func.value
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
        return value.attr
    return None


def _callback_saves(statements: Sequence[ast.stmt], local: Dict[str, Optional[str]], from_param: Dict[str, str],
                    flags: Dict[str, str], guards: Tuple[str, ...], made: List[Save]) -> None:
    """``_class_saves`` of one method's statements, under ``guards`` (the ``GUARD`` marks of the
    enclosing ``if self.flag:`` tests; ``flags``: attribute -> its mark, ``%s`` where ``!`` goes)."""
    for statement in statements:
        if isinstance(statement, ast.If):
            test = statement.test
            flag = test.attr if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) \
                and test.value.id == "self" else None
            if flag is not None and flag in flags:
                _callback_saves(statement.body, local, from_param, flags, guards + (flags[flag] % "",), made)
                _callback_saves(statement.orelse, local, from_param, flags, guards + (flags[flag] % "!",), made)
            else:
                _callback_saves(statement.body, local, from_param, flags, guards, made)
                _callback_saves(statement.orelse, local, from_param, flags, guards, made)
            continue
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                _callback_saves(inner, local, from_param, flags, guards, made)
        for handler in getattr(statement, "handlers", ()):
            _callback_saves(handler.body, local, from_param, flags, guards, made)
        if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
            continue
        call = statement.value
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in ("save_weights", "save")
                and isinstance(func.value, ast.Attribute) and func.value.attr == "model"
                and isinstance(func.value.value, ast.Name) and func.value.value.id == "self"):
            continue
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue
        path = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "filepath"), None)
        attribute = local.get(path.id) if isinstance(path, ast.Name) else _attribute_path(path) if path else None
        if attribute is None or attribute not in from_param:
            continue
        keywords = tuple(k.arg for k in call.keywords if k.arg != "filepath")
        made.append((from_param[attribute], func.attr, CALLBACK_MODEL, keywords + guards))


def _builds(tree: ast.Module, bound: Dict[str, tuple],
            own_nodes: Optional[Callable[[ast.FunctionDef], List[List[ast.AST]]]] = None,
            ) -> Dict[str, Tuple[List[int], List[int], List[Hand]]]:
    """For each top-level def (the last binding of its name), the positions of its positional
    parameters whose value, through the names the def binds from it (flow-insensitive), reaches an
    argument of ``Class(...)(value)`` (the class's root name an import or a class of the module) or
    of a call of another such def of the module at such a position; the positions whose value
    reaches a ``return``; and the calls of an imported name (``common.conv_block(x, 64)``) it hands
    a parameter's value to, for the index to follow (``ProjectIndex.builds``). Defs that feed no
    model and hand nothing on are left out."""
    own_nodes = own_nodes or _own_nodes
    defs = {statement.name: statement for statement in tree.body
            if isinstance(statement, ast.FunctionDef) and bound.get(statement.name) == (DEF,)}
    names = frozenset(defs)
    # Per def: each call's kind and the parameter positions each positional argument derives from.
    calls: Dict[str, List[Tuple[str, str, List[Set[int]]]]] = {}
    returned: Dict[str, Set[int]] = {}
    for name, function in defs.items():
        params = [a.arg for a in function.args.posonlyargs + function.args.args]
        if not params:
            continue
        nodes = [node for nodes in own_nodes(function) for node in nodes]
        interesting = []
        for node in nodes:
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            if isinstance(func, ast.Call):
                root = _dotted(func.func)
                head = root.split(".", 1)[0] if root else None
                last = root.rsplit(".", 1)[-1] if root else ""
                if head is not None and last[:1].isupper() and bound.get(head, (OTHER,))[0] in (IMPORT, CLASS):
                    interesting.append(("layer", "", node))
                continue
            dotted = _dotted(func)
            if dotted is None:
                continue
            if dotted in defs:
                interesting.append(("def", dotted, node))
            elif bound.get(dotted.split(".", 1)[0], (OTHER,))[0] == IMPORT:
                interesting.append(("hand", dotted, node))
        if not interesting:
            continue
        taint: Dict[str, Set[int]] = {p: {i} for i, p in enumerate(params)}
        assigns = []
        for node in nodes:
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)):
                value = node.iter if isinstance(node, ast.For) else node.value
                if value is None:
                    continue
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bound_here = {n.id for t in targets for n in _nodes(t) if isinstance(n, ast.Name)}
                assigns.append((bound_here, _reached_names(value, names)))
        changed = True
        while changed:  # names bound from names bound from a parameter...
            changed = False
            for bound_here, read in assigns:
                if not read & taint.keys():
                    continue
                reached = _reached(read, taint)
                for target in bound_here:
                    known = taint.setdefault(target, set())
                    if not reached <= known:
                        known |= reached
                        changed = True
        calls[name] = []
        for kind, dotted, node in interesting:
            reach: List[Set[int]] = []
            for arg in node.args:
                if isinstance(arg, ast.Starred):
                    break  # positions after a starred argument are unknown
                reach.append(_reached(_reached_names(arg, names), taint))
            calls[name].append((kind, dotted, reach))
        returned[name] = set()
        for node in nodes:
            if isinstance(node, ast.Return) and node.value is not None:
                returned[name] |= _reached(_reached_names(node.value, names), taint)

    feeding: Dict[str, Set[int]] = {name: set() for name in calls}
    changed = True
    while changed:  # defs that hand their parameter to another builder of the module
        changed = False
        for name, made in calls.items():
            for kind, dotted, reach in made:
                if kind == "layer":
                    more = set().union(*reach) if reach else set()
                elif kind == "def":
                    more = set().union(*[r for i, r in enumerate(reach) if i in feeding.get(dotted, ())] or [set()])
                else:
                    continue
                if not more <= feeding[name]:
                    feeding[name] |= more
                    changed = True
    found: Dict[str, Tuple[List[int], List[int], List[Hand]]] = {}
    for name, made in calls.items():
        hands = {(dotted, index, position) for kind, dotted, reach in made if kind == "hand"
                 for index, positions in enumerate(reach) for position in positions}
        if feeding[name] or hands:
            found[name] = (sorted(feeding[name]), sorted(returned[name]), sorted(hands))
    return found


def _reached(read: Set[str], taint: Dict[str, Set[int]]) -> Set[int]:
    """The parameter positions whose value the names ``read`` (``_reached_names``) derive from."""
    found: Set[int] = set()
    for name in read & taint.keys():
        found |= taint[name]
    return found


def _reached_names(expr: ast.AST, defs: FrozenSet[str] = frozenset()) -> Set[str]:
    """The names whose value ``expr`` derives from: those it reads, except the arguments of a
    constructor called at once (``Conv2D(filters)(x)`` derives from ``x`` only) and the keyword
    arguments of a call of one of ``defs`` (``block(x, filters=n)``: from ``x``)."""
    found: Set[str] = set()
    todo = [expr]
    while todo:
        expr = todo.pop()
        if isinstance(expr, ast.Name):
            found.add(expr.id)
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Call):
            todo.extend(expr.args)
            todo.extend(k.value for k in expr.keywords)
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in defs:
            todo.extend(expr.args)
        elif not isinstance(expr, (ast.Lambda, ast.FunctionDef)):
            _push_children(expr, todo.append)
    return found


def _own_nodes(function: ast.FunctionDef) -> List[List[ast.AST]]:
    """Per statement of ``function``'s body, its nodes (last child first), not entering the defs,
    lambdas and classes written in it (listed themselves, as what they bind)."""
    return [_nodes(statement, _SKIPPED) for statement in function.body]


# Fields that hold no node a summary reads: names and flags, and the contexts and operators
# (``Load()``, ``Add()``) whose only reader looks them up on their node.
_LEAVES = frozenset({"ctx", "op", "ops", "id", "attr", "name", "arg", "asname", "module", "level",
                     "type_comment", "kind", "conversion", "is_async", "simple"})
_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _child_fields(cls: type) -> Tuple[str, ...]:
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = () if cls is ast.Constant else tuple(f for f in cls._fields if f not in _LEAVES)
        _CHILD_FIELDS[cls] = fields
    return fields


def _nodes(root: ast.AST, skip: Tuple[type, ...] = ()) -> List[ast.AST]:
    """``root`` and the nodes below it (as ``ast.walk``, less ``_LEAVES``), last child first,
    not entering a node of a ``skip`` type (listed itself)."""
    found = []
    todo: List[ast.AST] = [root]
    pop, push = todo.pop, todo.append
    while todo:
        node = pop()
        found.append(node)
        if not (skip and isinstance(node, skip)):
            _push_children(node, push)
    return found


def _push_children(node: ast.AST, push: Callable[[ast.AST], None]) -> None:
    """``push`` each child node of ``node`` (its ``_child_fields``), first field first."""
    fields = _CHILD_FIELDS.get(node.__class__)
    for name in fields if fields is not None else _child_fields(node.__class__):
        value = getattr(node, name, None)
        if value.__class__ is list:
            for item in value:
                if isinstance(item, ast.AST):
                    push(item)
        elif isinstance(value, ast.AST):
            push(value)


_RETURNS_DEPTH = 8  # how many names a return is followed through inside its def


def _returns(function: ast.FunctionDef,
             own_nodes: Callable[[ast.FunctionDef], List[List[ast.AST]]]) -> Optional[List[Returned]]:
    """What each ``return`` of a top-level def returns, when each is a chain of method calls on a
    call of a dotted name that is not the def's own (``tf.data.Dataset.range(8).map(f)``), or on
    one of its positional parameters, possibly through names the def binds at its top level
    before the return (``ds = ds.batch(2)``; a name rebound to a chain on itself under an ``if``
    or ``else`` before it adds its methods as ``"?"method``); None when one is not (any other
    binding of such a name, a ``yield``, a path that does not return, a nested def's name).
    ``own_nodes``: gives its nodes (``_own_nodes``), asked only of a def that always returns."""
    if function.decorator_list or not _always_returns(function.body):
        return None
    own = own_nodes(function)
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    body = function.body
    bound: Set[str] = set()  # names bound in the def other than by its parameters
    returns: List[Tuple[ast.Return, int]] = []  # each return, with the index of its top-level statement
    for index, nodes in enumerate(own):
        for node in nodes:
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
                return None
            if isinstance(node, ast.Return):
                if node.value is None:
                    return None
                returns.append((node, index))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bound.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)):
                return None
    local = bound | set(params) | {a.arg for a in function.args.kwonlyargs} | {
        a.arg for a in (function.args.vararg, function.args.kwarg) if a is not None}

    def describe(expr: ast.AST, index: int, inside: Optional[ast.stmt], depth: int) -> Optional[Returned]:
        methods: List[str] = []
        while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
                and _dotted(expr.func) is None:  # `<call>.map(f)`: a method of a computed value
            methods.append(expr.func.attr)
            expr = expr.func.value
        if isinstance(expr, ast.Call):
            dotted = _dotted(expr.func)
            if dotted is None:
                return None
            head, _, tail = dotted.partition(".")
            if head not in local:
                return (CALLED, dotted, tuple(reversed(methods)))
            if "." in tail or not tail:
                return None
            methods.append(tail)  # `ds.map(f)`
            expr = ast.Name(id=head, ctx=ast.Load())
        if not isinstance(expr, ast.Name) or depth > _RETURNS_DEPTH:
            return None
        name = expr.id
        found = _binding_before(name, index, inside, depth)
        if found is None:
            return None
        kind, value, added = found
        if kind == PARAMETER:
            return (PARAMETER, value, tuple(added) + tuple(reversed(methods)))
        inner = describe(value[0], value[1], None, depth + 1)
        if inner is None:
            return None
        return (inner[0], inner[1], inner[2] + tuple(added) + tuple(reversed(methods)))

    def _binding_before(name: str, index: int, inside: Optional[ast.stmt], depth: int):
        """The value ``name`` holds at top-level statement ``index`` (or inside it, when the return is
        there: then the statement must not bind the name): ("param", position, maybe-methods) or
        ("value", (expression, its statement index), maybe-methods)."""
        if inside is not None and _binds(inside, name):
            return None
        added: List[str] = []
        for position in range(index - 1, -1, -1):
            statement = body[position]
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == name:
                return ("value", (statement.value, position), list(reversed(added)))
            if not _binds(statement, name):
                continue
            maybe = _self_extension(statement, name)
            if maybe is None:
                return None
            added.extend(reversed(maybe))
        if name in params:
            return (PARAMETER, params.index(name), list(reversed(added)))
        return None

    results = []
    for node, index in returns:
        inside = body[index] if body[index] is not node else None
        described = describe(node.value, index, inside, 0)
        if described is None:
            return None
        results.append(described)
    return results


def _binds(statement: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
               for n in _nodes(statement))


def _self_extension(statement: ast.stmt, name: str) -> Optional[List[str]]:
    """The methods (``"?"``-marked) an ``if`` applies to ``name`` when each of its branches only
    rebinds ``name`` to a chain of method calls on itself (``if augment: ds = ds.map(f)``); else None."""
    if not isinstance(statement, ast.If):
        return None
    found: List[str] = []
    for branch in (statement.body, statement.orelse):
        for inner in branch:
            if isinstance(inner, ast.If):
                more = _self_extension(inner, name) if _binds(inner, name) else []
                if more is None:
                    return None
                found.extend(more)
                continue
            if not _binds(inner, name):
                continue
            if not (isinstance(inner, ast.Assign) and len(inner.targets) == 1
                    and isinstance(inner.targets[0], ast.Name) and inner.targets[0].id == name):
                return None
            methods: List[str] = []
            expr = inner.value
            while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
                methods.append(expr.func.attr)
                expr = expr.func.value
            if not (isinstance(expr, ast.Name) and expr.id == name and methods):
                return None
            found.extend(MAYBE + m for m in reversed(methods))
    return found


def _always_returns(body: Sequence[ast.stmt]) -> bool:
    """Does every path through ``body`` end in a ``return`` (or a ``raise``)?"""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _local_names(function: ast.AST) -> Set[str]:
    """Every name ``function`` (a def or lambda, nested scopes included: more names, fewer
    records) binds: parameters, assignment and loop targets, imports, defs and classes.
    Asked only for a function holding a loop call."""
    found: Set[str] = set()
    for node in _nodes(function):
        if isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".", 1)[0] for a in node.names)
    return found


def _graph_decorator(decorator: ast.AST, bound: Dict[str, tuple]) -> bool:
    """``@tf.function``, ``@function``, ``@tf.function(...)``, or any decorator from TensorFlow or Keras."""
    dotted = _dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
    if dotted is None:
        return True  # not known: as a graph (no loop call recorded)
    head = bound.get(dotted.split(".", 1)[0])
    return dotted.rpartition(".")[2] in ("function", "tf_function") or (
        head is not None and head[0] == IMPORT and head[1] == 0 and head[2].split(".", 1)[0] in FRAMEWORKS)


# Absolute imports taken to be outside the project in a loop call (a project module of
# the same name is missed): the frameworks, the standard library, the large array libraries.
_NOT_PROJECT = FRAMEWORKS | frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(
    {"numpy", "scipy", "pandas", "torch", "jax", "jaxlib", "sklearn", "matplotlib", "absl", "PIL", "cv2", "tqdm"})
_SKIPPED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _loop_calls(tree: ast.Module, bound: Dict[str, tuple]) -> List[Tuple[int, str]]:
    """(level, target) of the calls in a loop body whose callee is a top-level import (see the module doc).

    Cost: statements are walked, not expressions, except the whole of each ``for``/``while``
    (so a comprehension is seen only inside a loop statement); a function's own names, and
    the names handed to calls in the module, are found only when a loop call is.

    Graph code's loops run at trace time (its callees once a trace), so none is recorded in
    a lambda, a def decorated by TensorFlow or a ``function`` decorator, a method of a class
    with bases (a Keras ``train_step``/``call``), or a def whose name is handed to a call
    anywhere in the module (``tf.function(epoch)``, ``ds.map(fn)``, ``strategy.run(f)``)."""
    imports = {name: value for name, value in bound.items()
               if value[0] == IMPORT and not (value[1] == 0 and value[2].split(".", 1)[0] in _NOT_PROJECT)}
    if not imports:
        return []
    found: Dict[Tuple[int, str], List[Tuple[str, ...]]] = {}
    names_of: Dict[int, Set[str]] = {}
    functions: List[ast.AST] = []  # the enclosing defs, innermost last

    def calls_in(loop: ast.AST, chain: Tuple[str, ...]) -> None:
        hits = []
        # Not entering a def, class or lambda written in the loop: its body runs when it is called.
        for node in _nodes(loop, _SKIPPED):
            if node.__class__ is ast.Call:
                dotted = _dotted(node.func)
                if dotted is not None and dotted.partition(".")[0] in imports:
                    hits.append(dotted)
        if not hits:
            return
        local: Set[str] = set()
        for function in functions:
            if id(function) not in names_of:
                names_of[id(function)] = _local_names(function)
            local |= names_of[id(function)]
        for dotted in hits:
            head, _, tail = dotted.partition(".")
            if head not in local:
                value = imports[head]
                found.setdefault((value[1], value[2] + ("." + tail if tail else "")), []).append(chain)

    def statements(body: Iterable[ast.stmt], chain: Tuple[str, ...], graph: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = graph or any(_graph_decorator(d, bound) for d in node.decorator_list)
                functions.append(node)
                statements(node.body, chain + (node.name,), inner)
                functions.pop()
            elif isinstance(node, ast.ClassDef):
                plain = all(_dotted(b) == "object" for b in node.bases) and not node.keywords
                statements(node.body, chain, graph or not plain)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                if not graph:
                    calls_in(node, chain)
                statements(node.orelse, chain, graph)
            else:
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(node, field, None)
                    if isinstance(block, list):
                        statements(block, chain, graph)
                for handler in getattr(node, "handlers", ()):
                    statements(handler.body, chain, graph)
                for case in getattr(node, "cases", ()):
                    statements(case.body, chain, graph)

    statements(tree.body, (), False)
    if not found or all(not any(chains) for chains in found.values()):
        return list(found)
    passed: Set[str] = set()  # names handed to a call anywhere in the module
    for node in _nodes(tree):
        if node.__class__ is ast.Call:
            passed.update(v.id for v in node.args + [k.value for k in node.keywords] if isinstance(v, ast.Name))
    return [call for call, chains in found.items() if any(passed.isdisjoint(c) for c in chains)]


# Methods Keras runs as graph code in a class with bases (a Keras layer, model, metric or loss).
_KERAS_GRAPH_METHODS = frozenset({"call", "train_step", "test_step", "predict_step", "update_state"})


def _sure_graph_decorator(decorator: ast.AST, bound: Dict[str, tuple]) -> bool:
    """``@tf.function`` or ``@tf.function(...)`` through a TensorFlow import (``from tensorflow import
    function`` too): not a decorator the summary cannot tell."""
    dotted = _dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
    if dotted is None or dotted.rpartition(".")[2] != "function":
        return False
    head = bound.get(dotted.split(".", 1)[0])
    return head is not None and head[0] == IMPORT and head[1] == 0 and head[2].split(".", 1)[0] == "tensorflow"


def _graph_calls(tree: ast.Module, bound: Dict[str, tuple]) -> List[Tuple[int, str, Tuple[int, ...]]]:
    """(level, target) of the calls made in graph code whose callee is a top-level import of the project
    (not the frameworks, the standard library or the array libraries), not shadowed by a name the def
    binds: in the body of a def decorated ``@tf.function`` (its nested defs included), or of a
    ``call``/``train_step``/``test_step``/``predict_step``/``update_state`` method of a class with bases
    (Keras runs them as graphs). ``ProjectIndex.graph_callers`` finds the project defs they call: those
    run in the caller's graph. With each: the positions of the call's positional arguments that are a
    parameter of the graph def (its data: ``y_pred``, ``inputs``; not ``self``), in every such call."""
    imports = {name: value for name, value in bound.items()
               if value[0] == IMPORT and not (value[1] == 0 and value[2].split(".", 1)[0] in _NOT_PROJECT)}
    if not imports:
        return []
    found: Dict[Tuple[int, str], Set[int]] = {}

    def calls_in(function: ast.FunctionDef, method: bool) -> None:
        hits = []
        for node in _nodes(function):
            if node.__class__ is ast.Call:
                dotted = _dotted(node.func)
                if dotted is not None and dotted.partition(".")[0] in imports:
                    hits.append((dotted, node))
        if not hits:
            return
        local = _local_names(function)
        params = [a.arg for a in function.args.posonlyargs + function.args.args]
        data = set(params[1:] if method else params)
        for dotted, call in hits:
            head, _, tail = dotted.partition(".")
            if head in local:
                continue
            value = imports[head]
            positions = set()
            for index, arg in enumerate(call.args):
                if isinstance(arg, ast.Starred):
                    break
                if isinstance(arg, ast.Name) and arg.id in data:
                    positions.add(index)
            key = (value[1], value[2] + ("." + tail if tail else ""))
            found[key] = found[key] & positions if key in found else positions

    def statements(body: Iterable[ast.stmt], keras_class: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                method = keras_class and node.name in _KERAS_GRAPH_METHODS
                if method or any(_sure_graph_decorator(d, bound) for d in node.decorator_list):
                    calls_in(node, method or keras_class)
                else:
                    statements(node.body, False)
            elif isinstance(node, ast.ClassDef):
                plain = all(_dotted(b) == "object" for b in node.bases) and not node.keywords
                statements(node.body, not plain)
            else:
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(node, field, None)
                    if isinstance(block, list):
                        statements(block, False)
                for handler in getattr(node, "handlers", ()):
                    statements(handler.body, False)

    statements(tree.body, False)
    return [(key[0], key[1], tuple(sorted(positions))) for key, positions in found.items()]


def _holders(tree: ast.Module, bound: Dict[str, tuple]) -> List[str]:
    """The top-level classes and defs (``Summary.holders``) that make a layer of ``TRAINING_LAYER_NAMES``
    spelled through an import (anywhere in a class's body, or a class's base; in a def that returns a
    value), or call by name a same-module one that does."""
    def imported(dotted: str) -> bool:
        value = bound.get(dotted.partition(".")[0])
        return value is not None and value[0] == IMPORT

    direct: Set[str] = set()
    called: Dict[str, Set[str]] = {}
    for statement in tree.body:
        if not isinstance(statement, (ast.ClassDef, ast.FunctionDef)):
            continue
        names: Set[str] = set()
        makes = False
        gives = isinstance(statement, ast.ClassDef)
        for base in getattr(statement, "bases", ()):
            dotted = _dotted(base)
            if dotted is not None and dotted.rsplit(".", 1)[-1] in TRAINING_LAYER_NAMES and imported(dotted):
                makes = True
            elif dotted is not None and "." not in dotted:
                names.add(dotted)
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                dotted = _dotted(node.func)
                if dotted is None:
                    continue
                if dotted.rsplit(".", 1)[-1] in TRAINING_LAYER_NAMES and imported(dotted):
                    makes = True
                elif "." not in dotted:
                    names.add(dotted)
            elif isinstance(node, ast.Return) and node.value is not None:
                gives = True
        if not gives:
            continue
        if makes:
            direct.add(statement.name)
        called[statement.name] = names
    found = set(direct)
    changed = True
    while changed:
        changed = False
        for name, names in called.items():
            if name not in found and names & found and bound.get(name, (OTHER,))[0] in (DEF, CLASS):
                found.add(name)
                changed = True
    return sorted(n for n in found if bound.get(n, (OTHER,))[0] in (DEF, CLASS))


def _hands(nodes: Sequence[ast.AST], bound: Dict[str, tuple]) -> List[Tuple[int, str, str, int, str]]:
    """The objects the module hands to defs of other project modules (``Summary.hands``); ``nodes``: every
    node of the module (``ast.walk``)."""
    imports = {name: value for name, value in bound.items()
               if value[0] == IMPORT and not (value[1] == 0 and value[2].split(".", 1)[0] in _NOT_PROJECT)}
    if not imports:
        return []
    own = {name for name, value in bound.items() if value[0] in (DEF, CLASS)}

    def maker(value: ast.AST) -> Optional[Tuple[int, str]]:
        if not isinstance(value, ast.Call):
            return None
        dotted = _dotted(value.func)
        if dotted is None:
            return None
        head, _, tail = dotted.partition(".")
        if head in imports:
            return imports[head][1], imports[head][2] + ("." + tail if tail else "")
        if head in own and not tail:
            return -1, head
        return None

    makers: Dict[str, List[Optional[Tuple[int, str]]]] = {}
    calls: List[ast.Call] = []
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    makers.setdefault(target.id, []).append(maker(node.value))
                else:
                    for inner in ast.walk(target):
                        if isinstance(inner, ast.Name):
                            makers.setdefault(inner.id, []).append(None)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
            target = node.target
            for inner in ast.walk(target):
                if isinstance(inner, ast.Name):
                    makers.setdefault(inner.id, []).append(None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            for arg in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
                makers.setdefault(arg.arg, []).append(None)
        elif isinstance(node, ast.Call):
            dotted = _dotted(node.func)
            if dotted is not None and dotted.partition(".")[0] in imports:
                calls.append(node)
    found: Dict[Tuple[int, str, str, int, str], None] = {}
    for call in calls:
        dotted = _dotted(call.func) or ""
        head, _, tail = dotted.partition(".")
        level, target = imports[head][1], imports[head][2] + ("." + tail if tail else "")
        slots = [(str(i), a) for i, a in enumerate(call.args)] + [("=" + k.arg, k.value) for k in call.keywords
                                                                   if k.arg is not None]
        for slot, value in slots:
            if isinstance(value, ast.Starred):
                break
            if isinstance(value, ast.Name):
                made = makers.get(value.id, [None])
                if all(m is not None for m in made):
                    for m in made:
                        found[(level, target, slot, m[0], m[1])] = None
            else:
                m = maker(value)
                if m is not None:
                    found[(level, target, slot, m[0], m[1])] = None
    return list(found)


def compile_tree(source: str, path: str = "<module>") -> ast.Module:
    """CPython's ``ast`` of ``source`` (raises SyntaxError, ValueError, RecursionError, MemoryError)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(source, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)


@contextlib.contextmanager
def collector_paused():
    """The cyclic garbage collector paused inside the block (and enabled again after, if it was).

    A syntax tree is many small objects that all stay alive while it is read, so
    the collections their allocation starts find nothing to free: paused, CPython's
    ``ast`` of keras/src costs 0.08x a LibCST parse instead of 0.19x, and a file's
    lint a fifth of a parse less (measured here)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def summarize_source(source: str, path: str = "<module>") -> "Summary":
    """The summary of ``source``: its ``ast`` compiled and read with the collector paused
    (raises what ``compile_tree`` raises)."""
    with collector_paused():
        return summarize(compile_tree(source, path))


def content_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:24]


def _members(tree: ast.Module, bound: Dict[str, tuple]) -> Dict[str, List[str]]:
    """``Summary.members``: for each name whose last top-level binding is a class, the names the bodies
    of its class statements bind at class level (defs, assignments, imports; also inside their
    ``if``/``try``/``with`` blocks), so that an importer can tell whether a project class defines a
    method (``build``) without reading the module."""
    found: Dict[str, List[str]] = {}

    def body_names(statements: Iterable[ast.AST], names: List[str]) -> None:
        for statement in statements:
            if isinstance(statement, _SCOPES):
                names.append(statement.name)
                continue
            if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom)):
                for node in ast.walk(statement):
                    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                        names.append(node.id)
                    elif isinstance(node, ast.alias):
                        names.append((node.asname or node.name).split(".", 1)[0])
            for field in ("body", "orelse", "finalbody"):
                block = getattr(statement, field, None)
                if isinstance(block, list):
                    body_names(block, names)
            for handler in getattr(statement, "handlers", ()):
                body_names(handler.body, names)

    def classes(statements: Iterable[ast.AST]) -> None:
        for statement in statements:
            if isinstance(statement, ast.ClassDef):
                body_names(statement.body, found.setdefault(statement.name, []))
            elif isinstance(statement, _COMPOUND):
                for field in ("body", "orelse", "finalbody"):
                    classes(getattr(statement, field, None) or ())
                for handler in getattr(statement, "handlers", ()):
                    classes(handler.body)

    classes(tree.body)
    return {name: names for name, names in found.items() if bound.get(name, ("",))[0] == CLASS}


def _metric_references(nodes: Sequence[ast.AST], bound: Dict[str, tuple]
                       ) -> Tuple[List[Tuple[int, str]], List[Tuple[int, str]]]:
    """(``Summary.metric_calls``, ``Summary.metric_names``): the names imported from other project modules
    that a ``.compile(...)`` call's ``metrics=``/``weighted_metrics=`` list, tuple or dict calls
    (``metrics=[f_score()]``: a factory whose return Keras wraps as a metric) or gives uncalled
    (``metrics=[f_score]``); ``nodes``: every node of the module."""
    imports = {name: value for name, value in bound.items()
               if value[0] == IMPORT and not (value[1] == 0 and value[2].split(".", 1)[0] in _NOT_PROJECT)}
    if not imports:
        return [], []
    called: Dict[Tuple[int, str], None] = {}
    named: Dict[Tuple[int, str], None] = {}
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile"):
            continue
        for keyword in node.keywords:
            if keyword.arg not in ("metrics", "weighted_metrics"):
                continue
            value = keyword.value
            items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else \
                value.values if isinstance(value, ast.Dict) else [value]
            for item in items:
                table, expr = (called, item.func) if isinstance(item, ast.Call) else (named, item)
                dotted = _dotted(expr)
                head, _, tail = (dotted or "").partition(".")
                if head in imports:
                    table[(imports[head][1], imports[head][2] + ("." + tail if tail else ""))] = None
    return list(called), list(named)


# -- the index --------------------------------------------------------------

FILE, PACKAGE, NAMESPACE = "f", "p", "n"
# The ``deps`` entry of a file that asked which of its defs other modules call in a loop.
LOOP_CALLERS = "~loop-callers:"
# The same for the defs of a module that another calls from graph code (``graph_callers``).
GRAPH_CALLERS = "~graph-callers:"
# The same for the defs of a module that another gives ``compile(metrics=...)``, called or not (``metric_users``).
METRIC_USERS = "~metric-users:"
# The ``deps`` entry of a file that asked whether a checked module assigns an attribute of this name.
WRITES = "~writes:"
# The ``deps`` entry of a file that asked which checked modules define a command-line flag, and its defaults.
FLAGS = "~flags:"
# The same for the objects other modules hand to a module's defs (``handed``).
HANDS = "~hands:"
# A dependency on what the checked modules read of a module's names as paths (``ProjectIndex.path_readers``).
PATH_READERS = "~path-readers:"
# A dependency on the checked modules that write a file name (``ProjectIndex.naming``).
NAMES = "~names:"
# A dependency on how the checked modules read an absl flag (``ProjectIndex.flag_readers``), and on the absl
# flags whose default names a file (``ProjectIndex.flag_files``).
FLAG_READS = "~flag-reads:"
FLAG_FILES = "~flag-files:"
_Loader = Callable[[str], Optional[Summary]]


def _digest_of(answer: Any) -> str:
    """The ``deps`` digest of a JSON-able answer ("-" for none)."""
    return hashlib.sha256(json.dumps(answer).encode()).hexdigest()[:20] if answer else "-"


def _listing(folder: str):
    """The entries of ``folder``: name -> 1 (a file), 2 (a folder), 0 (else), following symbolic links
    as ``os.path.isfile``/``isdir`` do; {} for a folder that is not there; False where a listing would
    answer otherwise than ``os.stat`` (a folder that cannot be listed, a file system that ignores case)."""
    kinds: Dict[str, int] = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    kinds[entry.name] = 1 if entry.is_file() else 2 if entry.is_dir() else 0
                except OSError:
                    kinds[entry.name] = 0
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError:
        return False
    for name in kinds:
        other = name.swapcase()
        if other != name:  # one name with letters tells whether case counts here
            return False if other not in kinds and os.path.lexists(os.path.join(folder, other)) else kinds
    return kinds


def _identifier_path(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


def project_root(paths: Sequence[str], configured: Optional[str] = None) -> Optional[str]:
    """The root the project's modules are named from: ``configured`` (the
    configuration's folder), else the common folder of ``paths``, raised out
    of any package it is in (a folder with ``__init__.py``), so that
    ``pkg.mod`` names the module it names for Python."""
    if configured is not None:
        return os.path.abspath(configured)
    folders = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) or ".")
               for p in paths if p not in ("-", "")]
    if not folders:
        return None
    try:
        root = os.path.commonpath(folders)
    except ValueError:  # paths on different drives
        return None
    while os.path.isfile(os.path.join(root, "__init__.py")) and os.path.dirname(root) != root:
        root = os.path.dirname(root)
    return root


class ProjectIndex:
    """The modules under ``root`` (and ``root/src``), found on disk as asked and
    summarised once. ``summaries``: path -> Summary known beforehand (built in
    parallel, or from the cache); ``loader(path)``: the summary of a file not
    known yet (reads and compiles it; ``load_summary`` by default); ``by_text(text)``:
    the summary already made of this very text, if any (a cache by content)."""

    def __init__(self, root: str, summaries: Optional[Dict[str, Optional[Summary]]] = None,
                 loader: Optional[_Loader] = None,
                 by_text: Optional[_Loader] = None) -> None:
        self.root = os.path.abspath(root)
        src = os.path.join(self.root, "src")
        self.bases = [self.root] + ([src] if os.path.isdir(src) else [])
        self.summaries: Dict[str, Optional[Summary]] = dict(summaries or {})
        # The files the index was built with (the run's checked files): ``loop_callers`` answers over
        # these only, so that its answer does not depend on which modules resolution happened to load.
        self.checked: Tuple[str, ...] = tuple(sorted(self.summaries))
        # (summary field, module) -> its ``loop_callers`` / ``graph_callers``
        self._callers_memo: Dict[Tuple[str, str], Dict[str, Tuple[str, ...]]] = {}
        self._positions: Dict[Tuple[str, str], Dict[str, Tuple[int, ...]]] = {}
        # summary field -> callee's last name -> ((importer, package), level, target)
        self._by_name: Dict[str, Dict[str, List[Tuple[Tuple[str, bool], int, str]]]] = {}
        self._writes: Optional[Set[str]] = None  # the attributes the checked modules assign on a name
        self._names: Optional[Dict[str, List[str]]] = None  # file name -> the checked files that write it
        # module -> its ``path_readers``, for every module some checked module reads names of
        self._readers: Optional[Dict[str, Dict[str, Tuple[Tuple[str, str], ...]]]] = None
        self._flags: Optional[Dict[str, List[Tuple[str, Constant]]]] = None  # flag -> (module, default)
        # absl flag -> (module, how it reads it, whether it defines it) per read; file -> its absl flag definitions
        self._flag_read_table: Optional[Dict[str, List[Tuple[str, str, bool]]]] = None
        self._flag_file_table: Optional[Dict[str, List[Tuple[str, str, str]]]] = None
        # module -> its ``handed`` (def -> slot -> makers)
        self._handed_memo: Dict[str, Dict[str, Dict[str, Tuple[str, ...]]]] = {}
        self.digests: Dict[str, str] = {}  # path -> content digest of the bytes ``summaries`` has for it
        self.loader = loader or load_summary
        self.by_text = by_text
        self._located: Dict[str, Optional[Tuple[str, str]]] = {}
        self._listings: Optional[Dict[str, Any]] = None  # folder -> its entries' kinds (``list_folders``)
        self._reach: Dict[str, Tuple[bool, FrozenSet[Tuple[str, str]]]] = {}
        self._resolved: Dict[Tuple[str, str, int, str], Tuple[Any, FrozenSet[Tuple[str, str]]]] = {}

    def __getstate__(self):  # the memo tables stay behind; the loader is the default one
        return {"root": self.root, "summaries": self.summaries, "digests": self.digests,
                "loader": None if self.loader is load_summary else self.loader, "checked": self.checked}

    def __setstate__(self, state) -> None:
        self.__init__(state["root"], state["summaries"], state["loader"])
        self.digests = state["digests"]
        self.checked = state["checked"]

    # -- modules on disk ------------------------------------------------
    def locate(self, name: str) -> Optional[Tuple[str, str]]:
        """(FILE | PACKAGE | NAMESPACE, path) of module ``name``, if it is the project's."""
        if name in self._located:
            return self._located[name]
        found = None
        if _identifier_path(name):
            parts = name.split(".")
            parent = self.locate(".".join(parts[:-1])) if len(parts) > 1 else None
            if len(parts) == 1 or (parent is not None and parent[0] != FILE):
                for base in self.bases:
                    stem = os.path.join(base, *parts)
                    folder, last = os.path.split(stem)
                    isdir = self._kind(folder, last) == 2
                    if isdir and self._kind(stem, "__init__.py") == 1:  # a package before a module, as Python
                        found = (PACKAGE, os.path.join(stem, "__init__.py"))
                    elif self._kind(folder, last + ".py") == 1:
                        found = (FILE, stem + ".py")
                    elif isdir and base == self.root and len(parts) == 1 and parts[0] == "src":
                        found = None  # the src/ folder of a src layout is not a module
                    elif isdir:
                        found = (NAMESPACE, stem)
                    if found is not None:
                        break
        self._located[name] = found
        return found

    def list_folders(self) -> None:
        """Answer ``locate`` from each folder's listing, read once (``_kind``), rather than from a
        ``stat`` per candidate: for an index that lives one run (a warm run asks after thousands of
        names, most of them not the project's: ``numpy``, ``os``...). A file created later in a folder
        already listed is not seen: not for an index kept between edits."""
        self._listings = {}

    def _kind(self, folder: str, name: str) -> int:
        """1: ``folder/name`` is a file, 2: a folder, 0: neither (as ``os.path.isfile``/``isdir`` say);
        with ``list_folders``, from the folder's listing where it gives the same answers (it can be
        listed, and its file system tells case apart)."""
        if self._listings is not None:
            kinds = self._listings.get(folder)
            if kinds is None:
                kinds = self._listings[folder] = _listing(folder)
            if kinds is not False:
                return kinds.get(name, 0)
        path = os.path.join(folder, name)
        return 1 if os.path.isfile(path) else 2 if os.path.isdir(path) else 0

    def module_name(self, path: str) -> Optional[Tuple[str, bool]]:
        """(dotted name, is a package) of a file under the root, else None."""
        full = os.path.abspath(path)
        for base in reversed(self.bases):  # src/ first: root/src/pkg/mod.py is pkg.mod
            try:
                relative = os.path.relpath(full, base)
            except ValueError:
                continue
            if relative.startswith(os.pardir) or os.path.isabs(relative):
                continue
            parts = relative[:-3].split(os.sep) if relative.endswith(".py") else relative.split(os.sep)
            package = parts[-1] == "__init__"
            if package:
                parts = parts[:-1]
            if parts and parts[-1].endswith(".ipynb"):
                parts = parts[:-1] + [parts[-1][:-6]]
            return ".".join(parts), package
        return None

    def summary(self, name: str, deps: Set[Tuple[str, str]]) -> Optional[Summary]:
        """The summary of module ``name`` (None for a namespace package, a file that
        does not compile, or a module that is not the project's); its state goes to ``deps``."""
        found = self.locate(name)
        if found is None:
            deps.add((name, ""))
            return None
        kind, path = found
        if kind == NAMESPACE:
            deps.add((name, NAMESPACE))
            return None
        if path not in self.summaries:
            self.summaries[path] = self.loader(path)
        summary = self.summaries[path]
        deps.add((name, f"{kind}:{summary.digest if summary is not None else '-'}"))
        return summary

    def state(self, name: str) -> str:
        """What ``deps`` records of module ``name`` now (of ``LOOP_CALLERS + module``: the
        digest of ``loop_callers(module)``)."""
        if name.startswith(LOOP_CALLERS):
            return self.callers_digest(name[len(LOOP_CALLERS):])
        if name.startswith(GRAPH_CALLERS):
            return self.callers_digest(name[len(GRAPH_CALLERS):], "graph_calls")
        if name.startswith(METRIC_USERS):
            module = name[len(METRIC_USERS):]
            return self.callers_digest(module, "metric_calls") + self.callers_digest(module, "metric_names")
        if name.startswith(WRITES):
            return self._written(name[len(WRITES):])
        if name.startswith(FLAGS):
            return self._flag_digest(name[len(FLAGS):])
        if name.startswith(FLAG_READS):
            return _digest_of(self._flag_reads().get(name[len(FLAG_READS):]))
        if name.startswith(FLAG_FILES):
            return _digest_of(self._flag_files().get(name[len(FLAG_FILES):]))
        if name.startswith(HANDS):
            return self._hands_digest(name[len(HANDS):])
        if name.startswith(NAMES):
            return ",".join(self._naming(name[len(NAMES):]))
        if name.startswith(PATH_READERS):
            return self._readers_digest(name[len(PATH_READERS):])
        deps: Set[Tuple[str, str]] = set()
        self.summary(name, deps)
        return next(iter(deps))[1]

    # -- callers in other modules -----------------------------------------
    def loop_callers(self, module: str) -> Dict[str, Tuple[str, ...]]:
        """The top-level defs of project module ``module`` that another module among
        the checked files calls in a loop (``Summary.loop_calls``, resolved through
        imports and re-exports to the def's own module): def name -> the calling
        modules, sorted. Only calls whose target ends in the def's own name are
        resolved (a re-export under another name is not followed: it is missed)."""
        return self._callers(module, "loop_calls")

    def graph_callers(self, module: str) -> Dict[str, Tuple[str, ...]]:
        """``loop_callers`` for the calls another module makes from graph code (``Summary.graph_calls``:
        a ``@tf.function`` body, a Keras ``call``/``train_step``...): those defs run in its graph."""
        return self._callers(module, "graph_calls")

    def _callers(self, module: str, field: str) -> Dict[str, Tuple[str, ...]]:
        memo = self._callers_memo.get((field, module))
        if memo is not None:
            return memo
        by_name = self._by_name.get(field)
        if by_name is None:
            by_name = self._by_name[field] = {}
            for path in self.checked:
                summary = self.summaries.get(path)
                named = self.module_name(path) if summary is not None and getattr(summary, field) else None
                if named is None:
                    continue
                for entry in getattr(summary, field):
                    level, target = entry[0], entry[1]
                    by_name.setdefault(target.rpartition(".")[2], []).append(
                        (named, level, target, entry[2] if len(entry) > 2 else ()))
        scratch: Set[Tuple[str, str]] = set()  # the answer's digest is its dependency, not these
        defined = self.summary(module, scratch) if self.locate(module) is not None else None
        callers: Dict[str, Set[str]] = {}
        positions: Dict[str, Set[int]] = {}
        if defined is not None:
            for name, bound in defined.bound.items():
                if bound[0] != DEF:
                    continue
                for (importer, package), level, target, given in by_name.get(name, ()):
                    if importer == module:
                        continue
                    result = self.resolve(level, target, importer, package, scratch)
                    if result is not None and result[0] == "project" and result[1] == f"{module}.{name}":
                        callers.setdefault(name, set()).add(importer)
                        positions[name] = positions[name] & set(given) if name in positions else set(given)
        memo = self._callers_memo[(field, module)] = {name: tuple(sorted(users)) for name, users in callers.items()}
        self._positions[(field, module)] = {name: tuple(sorted(p)) for name, p in positions.items()}
        return memo

    def handed(self, module: str) -> Dict[str, Dict[str, Tuple[str, ...]]]:
        """What the checked modules other than ``module`` hand to its top-level defs (``Summary.hands``,
        the callee resolved through imports and re-exports to the def's own module, the maker to the
        absolute name of the class or def that made the object): def name -> "position"/"=keyword" ->
        the makers, sorted."""
        memo = self._handed_memo.get(module)
        if memo is not None:
            return memo
        scratch: Set[Tuple[str, str]] = set()
        found: Dict[str, Dict[str, Set[str]]] = {}
        prefix = module + "."
        for path in self.checked:
            summary = self.summaries.get(path)
            named = self.module_name(path) if summary is not None and summary.hands else None
            if named is None or named[0] == module:
                continue
            importer, package = named
            for level, target, slot, maker_level, maker in summary.hands:
                callee = self.resolve(level, target, importer, package, scratch)
                if callee is None or callee[0] != "project" or not callee[1].startswith(prefix) \
                        or "." in callee[1][len(prefix):]:
                    continue
                if maker_level < 0:
                    made = f"{importer}.{maker}"
                else:
                    resolved = self.resolve(maker_level, maker, importer, package, scratch)
                    if resolved is None or resolved[0] != "project":
                        continue
                    made = resolved[1]
                found.setdefault(callee[1][len(prefix):], {}).setdefault(slot, set()).add(made)
        memo = self._handed_memo[module] = {
            name: {slot: tuple(sorted(makers)) for slot, makers in slots.items()} for name, slots in found.items()}
        return memo

    def path_readers(self, module: str, deps: Set[Tuple[str, str]]) -> Dict[str, Tuple[Tuple[str, str], ...]]:
        """How the checked modules other than ``module`` read its top-level names as paths of saves and
        loads (``Summary.path_reads``, resolved through imports and re-exports to the name's own
        module): name -> ((how, reading module), ...), sorted; what it read goes to ``deps``."""
        found = self._path_readers(module)
        deps.add((PATH_READERS + module, self._readers_digest(module)))
        return found

    def _readers_digest(self, module: str) -> str:
        answer = self._path_readers(module)
        return hashlib.sha256(json.dumps(sorted(answer.items())).encode()).hexdigest()[:20] if answer else "-"

    def _path_readers(self, module: str) -> Dict[str, Tuple[Tuple[str, str], ...]]:
        if self._readers is None:  # every checked module's reads, resolved once for all the modules asked
            scratch: Set[Tuple[str, str]] = set()
            found: Dict[str, Dict[str, Set[Tuple[str, str]]]] = {}
            for path in self.checked:
                summary = self.summaries.get(path)
                named = self.module_name(path) if summary is not None and summary.path_reads else None
                if named is None or any(t.split(".", 1)[0] == "tf_keras" for _, t in summary.imported):
                    continue  # (a tf_keras module writes and reads TF checkpoints)
                for level, target, how in summary.path_reads:
                    result = self.resolve(level, target, named[0], named[1], scratch)
                    if result is None or result[0] != "project":
                        continue
                    owner, _, name = result[1].rpartition(".")
                    if owner != named[0]:  # a module's reads of its own names are not another's
                        found.setdefault(owner, {}).setdefault(name, set()).add((how, named[0]))
            self._readers = {owner: {name: tuple(sorted(by)) for name, by in names.items()}
                             for owner, names in found.items()}
        return self._readers.get(module, {})

    def naming(self, name: str, deps: Set[Tuple[str, str]]) -> Tuple[str, ...]:
        """The checked files whose strings name the file ``name`` (a last path part, ``Summary.names``),
        sorted; what it read goes to ``deps``."""
        found = self._naming(name)
        deps.add((NAMES + name, ",".join(found)))
        return found

    def _naming(self, name: str) -> Tuple[str, ...]:
        if self._names is None:
            self._names = {}
            for path in self.checked:
                summary = self.summaries.get(path)
                for written in summary.names if summary is not None else ():
                    self._names.setdefault(written, []).append(path)
        return tuple(sorted(self._names.get(name, ())))

    def _hands_digest(self, module: str) -> str:
        answer = self.handed(module)
        return hashlib.sha256(json.dumps(sorted(answer.items())).encode()).hexdigest()[:20] if answer else "-"

    def holder(self, absolute: str, deps: Set[Tuple[str, str]]) -> bool:
        """Is the project class or def ``absolute`` (``pkg.model.DS2``) one of its module's
        ``Summary.holders``?"""
        module, _, name = absolute.rpartition(".")
        summary = self.summary(module, deps) if module else None
        return summary is not None and name in summary.holders

    def graph_data_positions(self, module: str, name: str) -> Tuple[int, ...]:
        """The positions at which every call from graph code in other modules (``graph_callers``) gives
        the def ``module.name`` a parameter of the graph def (its data: a tensor when it runs)."""
        self._callers(module, "graph_calls")
        return self._positions.get(("graph_calls", module), {}).get(name, ())

    def _written(self, name: str) -> str:
        """"1" when a checked module assigns an attribute ``name`` on a plain name (``cfg.name = x``,
        ``Summary.writes``), else "-"."""
        if self._writes is None:
            self._writes = set()
            for path in self.checked:
                summary = self.summaries.get(path)
                if summary is not None:
                    self._writes.update(summary.writes)
        return "1" if name in self._writes else "-"

    def constant(self, absolute: str, deps: Set[Tuple[str, str]], depth: int = 0) -> Optional[str]:
        """What the top-level constant ``absolute`` of a project module (``pkg.config.EXPORT_DIR``,
        bound once, ``Summary.constants``) ends with as a path, followed through the modules it
        imports it from; None when that is not known, or when a checked module assigns an
        attribute of its name on a name (``cfg.EXPORT_DIR = args.out``: the value may be another)."""
        if depth > MAX_DEPTH:
            return None
        module, _, name = absolute.rpartition(".")
        located = self.locate(module) if module else None
        if located is None or located[0] == NAMESPACE:
            return None
        summary = self.summary(module, deps)
        value = summary.constants.get(name) if summary is not None else None
        if value is None:
            return None
        written = self._written(name)
        deps.add((WRITES + name, written))
        if written != "-":
            return None
        if value[0] == TEXT:
            return value[1]
        meant = self.qualify(module, value[1], deps)
        return self.constant(meant[1], deps, depth + 1) if meant is not None and meant[0] == "project" else None

    def _flag_definitions(self, key: str) -> List[Tuple[str, Constant]]:
        """(module, default) of each checked module that defines the flag ``key`` (``Summary.flags``)."""
        if self._flags is None:
            self._flags = {}
            for path in self.checked:
                summary = self.summaries.get(path)
                named = self.module_name(path) if summary is not None and summary.flags else None
                if named is not None:
                    for flag, value in summary.flags.items():
                        self._flags.setdefault(flag, []).append((named[0], value))
        return self._flags.get(key, [])

    def _flag_reads(self) -> Dict[str, List[Tuple[str, str, bool]]]:
        if self._flag_read_table is None:
            table: Dict[str, List[Tuple[str, str, bool]]] = {}
            for path in self.checked:
                summary = self.summaries.get(path)
                named = self.module_name(path) if summary is not None and summary.flag_reads else None
                if named is not None:
                    for key, hows in summary.flag_reads.items():
                        table.setdefault(key, []).extend((named[0], how, key in summary.flags) for how in hows)
            self._flag_read_table = {key: sorted(reads) for key, reads in table.items()}
        return self._flag_read_table

    def flag_readers(self, module: str, key: str, deps: Set[Tuple[str, str]]) -> Tuple[Tuple[str, str], ...]:
        """(how, reading module) of each way the value of the absl flag ``key`` that module ``module``
        defines is read (``Summary.flag_reads``): by ``module`` itself, and by each checked module that
        reads ``FLAGS.<name>`` without defining the flag (a module the program may import; a module that
        defines it is a program of its own: absl refuses a flag defined twice in one), sorted; with
        ``FLAG_NAMED`` when ``module``'s other strings name its default's file too."""
        deps.add((FLAG_READS + key, _digest_of(self._flag_reads().get(key))))
        return tuple(sorted({(how, reader) for reader, how, defines in self._flag_reads().get(key, ())
                             if reader == module or not defines}))

    def _flag_files(self) -> Dict[str, List[Tuple[str, str, str]]]:
        if self._flag_file_table is None:
            table: Dict[str, List[Tuple[str, str, str]]] = {}
            for path in self.checked:
                summary = self.summaries.get(path)
                named = self.module_name(path) if summary is not None and summary.flags else None
                for key, value in summary.flags.items() if named is not None else ():
                    name = file_name(value[1]) if key.startswith(ABSL) and value[0] == TEXT else None
                    if name is not None:
                        table.setdefault(name, []).append((named[0], key, value[1]))
            self._flag_file_table = {name: sorted(found) for name, found in table.items()}
        return self._flag_file_table

    def flag_files(self, name: str, deps: Set[Tuple[str, str]]) -> Tuple[Tuple[str, str, str], ...]:
        """(module, flag, the default's last characters) of each absl flag a checked module defines whose
        default (text, ``Summary.flags``) names the file ``name`` (a last path part, as ``file_name``
        reads it), sorted: the flags a rename of the file must rename together."""
        found = tuple(self._flag_files().get(name, ()))
        deps.add((FLAG_FILES + name, _digest_of(found)))
        return found

    def _flag_digest(self, key: str) -> str:
        found = self._flag_definitions(key)
        return hashlib.sha256(json.dumps(sorted(found)).encode()).hexdigest()[:20] if found else "-"

    def flag_default(self, key: str, deps: Set[Tuple[str, str]]) -> Optional[str]:
        """What the default of the command-line flag ``key`` (``ARGPARSE + dest``, ``ABSL + name``)
        ends with as a path, when every checked module that defines it gives one such ending
        (``Summary.flags``, a reference followed with ``constant``); None otherwise."""
        deps.add((FLAGS + key, self._flag_digest(key)))
        endings = {self.default_ending(module, value, deps) for module, value in self._flag_definitions(key)}
        return endings.pop() if len(endings) == 1 else None

    def default_ending(self, module: str, value: Constant, deps: Set[Tuple[str, str]]) -> Optional[str]:
        """The path ending of a flag's default ``value`` as module ``module`` gives it."""
        if value[0] == TEXT:
            return value[1]
        if value[0] != REFERENCE:
            return None
        meant = self.qualify(module, value[1], deps)
        return self.constant(meant[1], deps) if meant is not None and meant[0] == "project" else None

    def saves(self, absolute: str, deps: Set[Tuple[str, str]]
              ) -> Optional[Tuple[Tuple[str, ...], Tuple[Save, ...]]]:
        """The positional parameters of the project def ``absolute`` and the saves and loads it makes
        at a path one of its parameters gives (``Summary.saves``); None when it makes none."""
        module, name, summary = self._def_summary(absolute, deps)
        if summary is None and module and self.locate(module) is not None:  # a class (``_class_saves``)
            summary = self.summary(module, deps)
            if summary is None or summary.bound.get(name, (OTHER,))[0] != CLASS:
                return None
        return summary.saves.get(name) if summary is not None else None

    def callers_digest(self, module: str, field: str = "loop_calls") -> str:
        """A digest of ``loop_callers(module)`` (``graph_callers`` and their data positions for
        ``"graph_calls"``: what the findings cache keys on)."""
        answer = self._callers(module, field)
        if not answer:
            return "-"
        positions = sorted(self._positions.get((field, module), {}).items()) if field == "graph_calls" else []
        return hashlib.sha256(json.dumps([sorted(answer.items()), positions]).encode()).hexdigest()[:20]

    # -- resolution -----------------------------------------------------
    @staticmethod
    def package_of(module: str, is_package: bool) -> str:
        return module if is_package else module.rpartition(".")[0]

    def _absolute(self, level: int, target: str, importer: str, importer_package: bool) -> Optional[str]:
        """The absolute name of a relative import's target in ``importer``."""
        package = self.package_of(importer, importer_package)
        parts = package.split(".") if package else []
        if level - 1 > len(parts):
            return None
        base = parts[:len(parts) - (level - 1)]
        return ".".join(base + ([target] if target else [])) or None

    def _candidates(self, target: str, importer: Optional[str], importer_package: bool) -> List[Tuple[str, List[str]]]:
        """Where an absolute import of ``target`` in ``importer`` may be the project's, as
        (top module, the names after it): as named from the root, and (script
        semantics) from the importer's own folder."""
        first, *rest = target.split(".")
        folder = self.package_of(importer, importer_package) if importer else ""
        if not folder:
            return [(first, rest)]
        sibling = (f"{folder}.{first}", rest)
        located = self.locate(folder)
        return [(first, rest), sibling] if located is not None and located[0] == PACKAGE else [sibling, (first, rest)]

    def resolve(self, level: int, target: str, importer: Optional[str], importer_package: bool,
                deps: Set[Tuple[str, str]]) -> Optional[Tuple[str, str]]:
        """What an import of ``target`` (``level`` dots) in module ``importer`` stands for:
        ("external", name) where project modules re-export an outside name, ("project",
        absolute name) for a project module, def, class or unknown name; None when
        the name is not the project's."""
        key = (importer or "", "p" if importer_package else "m", level, target)
        memo = self._resolved.get(key)
        if memo is not None:
            deps.update(memo[1])
            return memo[0]
        found: Set[Tuple[str, str]] = set()
        result = self._resolve(level, target, importer, importer_package, found, 0, set())
        self._resolved[key] = (result, frozenset(found))
        deps.update(found)
        return result

    def _resolve(self, level, target, importer, importer_package, deps, depth, seen):
        if level:
            if importer is None:
                return None
            absolute = self._absolute(level, target, importer, importer_package)
            if absolute is None:
                return None
            parts = absolute.split(".")
            candidates = [(parts[0], parts[1:])]
        else:
            candidates = self._candidates(target, importer, importer_package)
        for top, rest in candidates:
            if self.locate(top) is None:
                deps.add((top, ""))
                continue
            return self._walk(top, rest, deps, depth, seen)
        return None

    def _walk(self, module: str, rest: List[str], deps, depth, seen):
        while rest:
            member = self._member(module, rest[0], deps, depth, seen)
            if member is None:
                return ("project", ".".join([module] + rest))
            kind, name = member
            if kind == "module":
                module, rest = name, rest[1:]
                continue
            return (kind if kind == "external" else "project", ".".join([name] + rest[1:]))
        return ("project", module)

    def _member(self, module: str, name: str, deps, depth, seen) -> Optional[Tuple[str, str]]:
        """What ``module.name`` stands for: ("external", name), ("module", name),
        ("object", absolute name of a def, class or other value), or None (unknown)."""
        if depth > MAX_DEPTH or (module, name) in seen:
            return None
        seen = seen | {(module, name)}
        summary = self.summary(module, deps)
        located = self.locate(module)
        is_package = located is not None and located[0] != FILE
        bound = summary.bound.get(name) if summary is not None else None
        if bound is not None:
            kind = bound[0]
            if kind == IMPORT:
                result = self._resolve(bound[1], bound[2], module, is_package, deps, depth + 1, seen)
                if result is None:
                    return ("external", bound[2]) if bound[1] == 0 else None
                if result[0] == "external":
                    return result
                return self._as_member(result[1], deps)
            if kind == ALIAS:
                head, _, tail = bound[1].partition(".")
                if head == name:
                    return ("object", f"{module}.{name}")
                first = self._member(module, head, deps, depth + 1, seen)
                if first is None:
                    return ("object", f"{module}.{name}")
                if first[0] == "module":
                    result = self._walk(first[1], tail.split(".") if tail else [], deps, depth + 1, seen)
                    return ("external", result[1]) if result[0] == "external" else self._as_member(result[1], deps)
                return (first[0], ".".join([first[1]] + ([tail] if tail else [])))
            return ("object", f"{module}.{name}")
        if is_package and self.locate(f"{module}.{name}") is not None:
            return ("module", f"{module}.{name}")
        if is_package:
            deps.add((f"{module}.{name}", ""))  # a submodule created later changes the answer
        if summary is not None:
            for level, star in reversed(summary.stars):  # the last star import of a name wins
                source = self._star_module(level, star, module, is_package, deps, depth, seen)
                if source is None:
                    continue
                star_summary = self.summary(source, deps)
                if star_summary is not None and name in self._star_names(source, star_summary, deps, depth, seen):
                    return self._member(source, name, deps, depth + 1, seen)
        return None

    def _as_member(self, name: str, deps) -> Tuple[str, str]:
        return ("module", name) if self.locate(name) is not None else ("object", name)

    def _star_module(self, level, star, importer, importer_package, deps, depth, seen) -> Optional[str]:
        result = self._resolve(level, star, importer, importer_package, deps, depth + 1, seen)
        if result is None or result[0] != "project" or self.locate(result[1]) is None:
            return None
        return result[1]

    def _star_names(self, module: str, summary: Summary, deps, depth: int, seen) -> List[str]:
        """The names ``from module import *`` brings."""
        if summary.all is not None or depth > MAX_DEPTH:
            return summary.public()
        names = summary.public()
        located = self.locate(module)
        is_package = located is not None and located[0] != FILE
        for level, star in summary.stars:
            if ("*", module + ":" + star) in seen:
                continue
            inner_seen = seen | {("*", module + ":" + star)}
            source = self._star_module(level, star, module, is_package, deps, depth + 1, inner_seen)
            inner = self.summary(source, deps) if source is not None else None
            if inner is not None:
                names.extend(n for n in self._star_names(source, inner, deps, depth + 1, inner_seen)
                             if not n.startswith("_"))
        return list(dict.fromkeys(names))

    def class_bases(self, qualified: str, deps: Set[Tuple[str, str]], depth: int = 0,
                    seen: Optional[Set[str]] = None, importer: Optional[str] = None,
                    importer_package: bool = False) -> List[str]:
        """The bases of the project class ``qualified`` (``models.base.BaseModel``),
        depth first: outside names as imported (``tensorflow.keras.Model``), and
        through the project's own classes; [] when it is not a project class."""
        seen = set() if seen is None else seen
        if qualified in seen or depth > MAX_DEPTH:
            return []
        seen.add(qualified)
        defined = self._resolve(0, qualified, importer, importer_package, deps, depth, set())  # through re-exports
        if defined is None or defined[0] != "project":
            return []
        module, _, name = defined[1].rpartition(".")
        if not module:
            return []
        summary = self.summary(module, deps)
        bound = summary.bound.get(name) if summary is not None else None
        if bound is None or bound[0] != CLASS:
            return []
        found: List[str] = []
        for base in bound[1]:
            if not base:
                continue
            head, _, tail = base.partition(".")
            member = self._member(module, head, deps, depth + 1, set())
            if member is None:
                continue
            kind, target = member
            if kind == "module":
                result = self._walk(target, tail.split(".") if tail else [], deps, depth + 1, set())
                kind, target = ("external" if result[0] == "external" else "object"), result[1]
            elif tail:
                target = f"{target}.{tail}"
            if kind == "external":
                found.append(target)
            else:
                found.append(target)
                found.extend(self.class_bases(target, deps, depth + 1, seen))
        return found

    def qualify(self, module: str, dotted: str, deps: Set[Tuple[str, str]]) -> Optional[Tuple[str, str]]:
        """What ``dotted`` as written in project module ``module`` stands for: ("external",
        name) (``tf.data.Dataset.range`` where the module imports TensorFlow as ``tf``), ("project",
        absolute name), or None (a builtin, a name the module does not bind)."""
        head, *rest = dotted.split(".")
        member = self._member(module, head, deps, 0, set())
        if member is None:
            return None
        kind, name = member
        if kind == "module":
            return self._walk(name, rest, deps, 0, set())
        return ("external" if kind == "external" else "project", ".".join([name] + rest))

    def _def_summary(self, absolute: str, deps: Set[Tuple[str, str]]) -> Tuple[str, str, Optional[Summary]]:
        """(module, name, the module's summary) for ``absolute`` when its last binding in a
        located (non-namespace) project module is a top-level def; the summary None otherwise."""
        module, _, name = absolute.rpartition(".")
        located = self.locate(module) if module else None
        if located is None or located[0] == NAMESPACE:
            return module, name, None
        summary = self.summary(module, deps)
        if summary is None or summary.bound.get(name) != (DEF,):
            return module, name, None
        return module, name, summary

    def returned(self, absolute: str, deps: Set[Tuple[str, str]]) -> Optional[List[Tuple[str, Any, Tuple[str, ...]]]]:
        """What the project def ``absolute`` (``pkg.data.make_dataset``) returns, each ``return``
        as (CALLED, ``qualify``'s answer for its callee, methods) or (PARAMETER, position,
        methods); None when its returns are not so summarised (see ``_returns``)."""
        module, name, summary = self._def_summary(absolute, deps)
        if summary is None or name not in summary.returns:
            return None
        found: List[Tuple[str, Any, Tuple[str, ...]]] = []
        for kind, value, methods in summary.returns[name]:
            if kind == CALLED:
                value = self.qualify(module, value, deps)
                if value is None:
                    return None
            found.append((kind, value, methods))
        return found

    def class_members(self, absolute: str, deps: Set[Tuple[str, str]]) -> Optional[Tuple[str, ...]]:
        """The names the body of the project class ``absolute`` (``models.resnet.ResNet``, through
        re-exports) binds (``Summary.members``); None when it is not a project class."""
        defined = self._resolve(0, absolute, None, False, deps, 0, set())
        if defined is None or defined[0] != "project":
            return None
        module, _, name = defined[1].rpartition(".")
        summary = self.summary(module, deps) if module else None
        if summary is None or summary.bound.get(name, ("",))[0] != CLASS:
            return None
        return summary.members.get(name, ())

    def made_classes(self, absolute: str, deps: Set[Tuple[str, str]], depth: int = 0) -> Optional[Tuple[str, ...]]:
        """The project classes (absolute names) of which a call of the project object ``absolute``
        returns an instance: the class itself; for a project def, the classes each of its ``return``s
        makes, a call of a project class or def with no method applied (``def resnet_50(): return
        ResNet([3, 4, 6, 3])``), through such defs. None when one return is anything else (a library
        call, a parameter, a method's result) or ``absolute`` is neither."""
        if depth > 6:
            return None
        if self.class_members(absolute, deps) is not None:
            defined = self._resolve(0, absolute, None, False, deps, 0, set())
            return (defined[1],) if defined is not None else None
        returned = self.returned(absolute, deps)
        if not returned:
            return None
        found: List[str] = []
        for kind, value, methods in returned:
            if kind != CALLED or methods or value[0] != "project":
                return None
            made = self.made_classes(value[1], deps, depth + 1)
            if made is None:
                return None
            found.extend(c for c in made if c not in found)
        return tuple(found)

    def builds(self, absolute: str, deps: Set[Tuple[str, str]], depth: int = 0
               ) -> Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]]:
        """The positions of the project def ``absolute`` that feed a model it builds (itself, or
        through the project defs of other modules it hands them to), and those that reach its
        returns (``Summary.builds``); None when it feeds none or is no project def."""
        if depth > 6:
            return None
        module, name, summary = self._def_summary(absolute, deps)
        if summary is None or name not in summary.builds:
            return None
        feeding, returned, hands = summary.builds[name]
        more = set(feeding)
        for dotted, index, position in hands:
            if position in more:
                continue
            meant = self.qualify(module, dotted, deps)
            inner = self.builds(meant[1], deps, depth + 1) if meant is not None and meant[0] == "project" else None
            if inner is not None and index in inner[0]:
                more.add(position)
        return (tuple(sorted(more)), returned) if more else None

    def reaches_framework(self, module: str, deps: Set[Tuple[str, str]]) -> bool:
        """Does project module ``module``, or a project module it imports (transitively), import TensorFlow or Keras?"""
        memo = self._reach.get(module)
        if memo is None:
            found: Set[Tuple[str, str]] = set()
            reached, todo, seen = False, [module], {module}
            while todo and not reached:
                current = todo.pop()
                summary = self.summary(current, found)
                if summary is None:
                    continue
                if summary.framework:
                    reached = True
                    break
                located = self.locate(current)
                is_package = located is not None and located[0] != FILE
                for name in self.imported_modules(summary, current, is_package, found):
                    if name not in seen:
                        seen.add(name)
                        todo.append(name)
            memo = self._reach[module] = (reached, frozenset(found))
        deps.update(memo[1])
        return memo[0]

    def imported_modules(self, summary: Summary, importer: Optional[str], is_package: bool,
                         deps: Set[Tuple[str, str]]) -> List[str]:
        """The project modules ``summary``'s imports name (the longest importable prefix of each)."""
        out = []
        for level, dotted in summary.imported:
            if level:
                if importer is None:
                    continue
                absolute = self._absolute(level, dotted, importer, is_package)
                candidates = [(absolute.split(".")[0], absolute.split(".")[1:])] if absolute else []
            else:
                candidates = self._candidates(dotted, importer, is_package)
            for top, rest in candidates:
                longest = None
                prefix = top
                for part in [None] + rest:
                    prefix = prefix if part is None else f"{prefix}.{part}"
                    if self.locate(prefix) is None:
                        deps.add((prefix, ""))
                        break
                    longest = prefix
                if longest is not None:
                    out.append(longest)
                    break
        return out


def load_summary(path: str) -> Optional[Summary]:
    """Read, compile and summarise one file (None when it cannot be read or compiled)."""
    try:
        from tflint_gpu.files import decode  # the project's reader: encodings and BOM as CPython has them

        with open(path, "rb") as handle:
            data = handle.read(8 * 1024 * 1024 + 1)
        if len(data) > 8 * 1024 * 1024:
            return None
        return summarize_source(decode(data).text, path)
    except (OSError, UnicodeDecodeError, LookupError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class ProjectFile:
    """One file's view of the project: the index, the file's module name (None for a
    notebook or stdin without a name under the root) and the modules its answers read."""

    def __init__(self, index: ProjectIndex, path: str) -> None:
        self.index = index
        self.path = os.path.abspath(path)
        named = index.module_name(path)
        self.module: Optional[str] = None
        self.is_package = False
        self.folder = ""
        if named is not None:
            self.module, self.is_package = named
            if path.endswith(".ipynb"):  # not importable: its folder is what its imports see
                self.module, self.is_package = (self.module.rpartition(".")[0] or None), True
        self.own_notebook = path.endswith(".ipynb")  # ``module`` is its folder: no module imports its defs
        self.deps: Set[Tuple[str, str]] = set()
        # (text, its summary) when the driver already compiled this very text (the index's
        # summary of the file): the syntax verdict and the imports, without compiling again.
        self.own: Optional[Tuple[str, Summary]] = None

    def own_summary(self, source: str) -> Optional[Summary]:
        """The summary of ``source``, this file's text, when it was made already (by the
        driver, or earlier and cached by content): it compiled, and it says what the file imports."""
        if self.own is not None and self.own[0] is source:
            return self.own[1]
        return self.index.by_text(source) if self.index.by_text is not None else None

    def _importer(self) -> Tuple[Optional[str], bool]:
        if self.module is None:
            return None, False
        return self.module, self.is_package

    @staticmethod
    def split_target(target: str) -> Tuple[int, str]:
        """(level, dotted) of a model import target (``..pkg.name`` is level 2)."""
        level = len(target) - len(target.lstrip("."))
        return level, target[level:]

    def meaning(self, target: str) -> Optional[str]:
        """The name an import target stands for, when it is the project's: the outside name it
        re-exports (``mypkg.tf`` -> ``tensorflow``), else its absolute name as imported
        (``.layers.MyLayer`` -> ``pkg.layers.MyLayer``: a project module, def or class keeps
        the name it is imported by, so ``keras.src.ops.x`` in Keras's own code stays itself);
        None when it is not the project's, or is as written."""
        level, dotted = self.split_target(target)
        importer, package = self._importer()
        if importer is None and level:
            return None
        result = self.index.resolve(level, dotted, importer, package, self.deps)
        if result is None:
            return None
        if result[0] == "external":
            return result[1]
        if level:
            return self.index._absolute(level, dotted, importer, package)
        return None

    def star_names(self, level: int, module: str) -> Dict[str, str]:
        """The names ``from module import *`` brings here, each with its target
        (the project module's name for it, resolved later by ``meaning``)."""
        importer, package = self._importer()
        if importer is None and level:
            return {}
        source = self.index._star_module(level, module, importer, package, self.deps, 0, set())
        if source is None:
            return {}
        summary = self.index.summary(source, self.deps)
        if summary is None:
            return {}
        return {name: f"{source}.{name}" for name in self.index._star_names(source, summary, self.deps, 0, set())}

    def class_bases(self, qualified: str) -> List[str]:
        """The bases of a project class across modules (see ``ProjectIndex.class_bases``)."""
        importer, package = self._importer()
        return self.index.class_bases(qualified, self.deps, importer=importer, importer_package=package)

    def imports(self, summary: Summary, reach: bool = True) -> Tuple[bool, bool]:
        """What this file (``summary``: its own) takes from the project: does it bind an
        outside name through a project module (``from utils import np``, or a star import
        of a project module), and (with ``reach``: the file names neither) does a project
        module it imports reach TensorFlow or Keras (so that it is still checked)? The
        modules that second answer reads are many: it is asked only when needed."""
        importer, package = self._importer()
        outside = False
        for value in summary.bound.values():
            if value[0] == IMPORT:
                result = self.index.resolve(value[1], value[2], importer, package, self.deps)
                if result is not None and result[0] == "external":
                    outside = True
                    break
        if not outside:
            outside = any(self.index._star_module(level, star, importer, package, self.deps, 0, set()) is not None
                          for level, star in summary.stars)
        if not reach:
            return outside, False
        modules = self.index.imported_modules(summary, importer, package, self.deps)
        if any(self.index.reaches_framework(name, self.deps) for name in modules):
            return outside, True
        # A module naming no framework whose defs another module calls from graph code runs in graphs
        # (a NumPy helper a metric's `update_state` calls): it is checked too.
        if self.module is not None and not self.own_notebook:
            self.deps.add((GRAPH_CALLERS + self.module, self.index.callers_digest(self.module, "graph_calls")))
            return outside, bool(self.index.graph_callers(self.module))
        return outside, False

    def returns(self, qualname: str) -> Optional[List[Tuple[str, Any, Tuple[str, ...]]]]:
        """What the project def a call names returns (``ProjectIndex.returned``), for the name as
        this file's resolver gives it (``data.make_dataset``, ``pkg.data.make_dataset``); None when
        it is not a project def so summarised. The modules read go to ``deps``."""
        absolute = self._project_def(qualname)
        return self.index.returned(absolute, self.deps) if absolute is not None else None

    def made_classes(self, qualname: str) -> Optional[Tuple[str, ...]]:
        """``ProjectIndex.made_classes`` for the project class or def a call names in this file (as
        ``returns``): the project classes of which the call's result is an instance."""
        absolute = self._project_def(qualname)
        return self.index.made_classes(absolute, self.deps) if absolute is not None else None

    def class_members(self, qualname: str) -> Optional[Tuple[str, ...]]:
        """``ProjectIndex.class_members`` for a project class as this file's resolver names it (a base
        ``class_bases`` gives, or a class ``made_classes`` gives)."""
        absolute = self._project_def(qualname)
        return self.index.class_members(absolute, self.deps) if absolute is not None else None

    def builds(self, qualname: str) -> Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]]:
        """``ProjectIndex.builds`` for the project def a call names in this file (as ``returns``)."""
        absolute = self._project_def(qualname)
        return self.index.builds(absolute, self.deps) if absolute is not None else None

    def constant(self, qualname: str) -> Optional[str]:
        """``ProjectIndex.constant`` for the project name ``qualname`` (as this file's resolver gives
        it: ``cfg.PB_MODEL`` read as ``pkg.config.PB_MODEL``)."""
        absolute = self._project_def(qualname)
        return self.index.constant(absolute, self.deps) if absolute is not None else None

    def flag_default(self, key: str, own: Optional[Summary]) -> Optional[str]:
        """What the default of the command-line flag ``key`` ends with as a path: this module's own
        definition (``own``: its summary) when it has one, else ``ProjectIndex.flag_default``."""
        if own is not None and key in own.flags:
            if self.module is None or self.own_notebook:
                value = own.flags[key]
                return value[1] if value[0] == TEXT else None
            return self.index.default_ending(self.module, own.flags[key], self.deps)
        return self.index.flag_default(key, self.deps)

    def is_def(self, qualname: str) -> bool:
        """Is the project name ``qualname`` (as this file's resolver gives it) a top-level def of a project module?"""
        absolute = self._project_def(qualname)
        return absolute is not None and self.index._def_summary(absolute, self.deps)[2] is not None

    def flag_readers(self, key: str) -> Tuple[Tuple[str, str], ...]:
        """``ProjectIndex.flag_readers`` of this file's definition of the absl flag ``key`` (a notebook's
        too: its name is its module's); empty for a file outside the project."""
        named = self.index.module_name(self.path)
        return self.index.flag_readers(named[0], key, self.deps) if named is not None else ()

    def flag_files(self, name: str) -> Tuple[Tuple[str, str, str], ...]:
        """``ProjectIndex.flag_files``: the absl flags of the project whose default names the file ``name``."""
        return self.index.flag_files(name, self.deps)

    def own_name(self) -> Optional[str]:
        """This file's module name as the index names it (a notebook's own, not its folder's)."""
        named = self.index.module_name(self.path)
        return named[0] if named is not None else None

    def path_readers(self) -> Dict[str, Tuple[Tuple[str, str], ...]]:
        """``ProjectIndex.path_readers`` of this file's module (empty for a notebook or a file outside)."""
        if self.module is None or self.own_notebook:
            return {}
        return self.index.path_readers(self.module, self.deps)

    def naming(self, name: str) -> Tuple[str, ...]:
        """The checked files other than this one whose strings name the file ``name``
        (``ProjectIndex.naming``)."""
        return tuple(p for p in self.index.naming(name, self.deps) if os.path.abspath(p) != self.path)

    def saves(self, qualname: str) -> Optional[Tuple[Tuple[str, ...], Tuple[Save, ...]]]:
        """``ProjectIndex.saves`` for the project def a call names in this file (as ``returns``)."""
        absolute = self._project_def(qualname)
        return self.index.saves(absolute, self.deps) if absolute is not None else None

    def _project_def(self, qualname: str) -> Optional[str]:
        """The absolute name of the project object ``qualname`` (as this file's resolver gives it)
        stands for, or None (outside the project; a bare name in a notebook is its own)."""
        if self.own_notebook and "." not in qualname:
            return None
        importer, package = self._importer()
        result = self.index.resolve(0, qualname, importer, package, self.deps)
        return result[1] if result is not None and result[0] == "project" else None

    def loop_caller(self, name: str) -> Optional[str]:
        """The file (relative to the root) of the module (the first by name) that calls this
        file's top-level def ``name`` in a loop (see ``ProjectIndex.loop_callers``), or None. Asking records the
        answer's digest in ``deps``: another module adding or dropping such a loop call
        invalidates a cached result that asked."""
        if self.module is None or self.own_notebook:
            return None
        self.deps.add((LOOP_CALLERS + self.module, self.index.callers_digest(self.module)))
        return self._first_file(self.index.loop_callers(self.module).get(name))

    def _first_file(self, users: Optional[Tuple[str, ...]]) -> Optional[str]:
        """The file (relative to the root) of the first of these modules, or None for none."""
        if not users:
            return None
        located = self.index.locate(users[0])
        if located is None:
            return users[0]
        return os.path.relpath(located[1], self.index.root).replace(os.sep, "/")

    def graph_data_positions(self, name: str) -> Tuple[int, ...]:
        """``ProjectIndex.graph_data_positions`` for this file's top-level def ``name`` (asked after
        ``graph_caller``, whose dependency covers it)."""
        if self.module is None or self.own_notebook:
            return ()
        return self.index.graph_data_positions(self.module, name)

    def handed_holder(self, name: str, position: int, parameter: str) -> Optional[str]:
        """The first project class or def (absolute name) that made an object another module hands
        this file's top-level def ``name``, at ``position`` or by the keyword ``parameter``, and that
        makes a layer computing differently in training (``ProjectIndex.handed``, ``holder``); None
        for none. Asking records the answer's digest and the makers' modules in ``deps``."""
        if self.module is None or self.own_notebook:
            return None
        self.deps.add((HANDS + self.module, self.index._hands_digest(self.module)))
        slots = self.index.handed(self.module).get(name, {})
        makers = slots.get(str(position), ()) + slots.get("=" + parameter, ())
        return next((made for made in makers if self.index.holder(made, self.deps)), None)

    def graph_caller(self, name: str) -> Optional[str]:
        """``loop_caller`` for a call from graph code in another module (``ProjectIndex.graph_callers``)."""
        if self.module is None or self.own_notebook:
            return None
        self.deps.add((GRAPH_CALLERS + self.module, self.index.callers_digest(self.module, "graph_calls")))
        return self._first_file(self.index.graph_callers(self.module).get(name))

    def metric_user(self, name: str) -> Optional[Tuple[str, bool]]:
        """(the file of the first other module whose ``compile(metrics=...)`` calls this file's top-level def
        ``name``, True) — ``name`` is a factory, its return is the metric function — or (the file that gives
        the def itself as a metric, False); None for none (``Summary.metric_calls``/``metric_names``,
        resolved through imports and re-exports). Asking records the answer's digests in ``deps``."""
        if self.module is None or self.own_notebook:
            return None
        self.deps.add((METRIC_USERS + self.module, self.index.callers_digest(self.module, "metric_calls")
                       + self.index.callers_digest(self.module, "metric_names")))
        for field, factory in (("metric_calls", True), ("metric_names", False)):
            found = self._first_file(self.index._callers(self.module, field).get(name))
            if found is not None:
                return found, factory
        return None

    def dependency_key(self) -> str:
        """One string for ``deps`` (what the findings cache keys on)."""
        return json.dumps(sorted(self.deps), separators=(",", ":")) if self.deps else ""


def dependencies_valid(index: ProjectIndex, key: str, states: Optional[Dict[str, str]] = None) -> bool:
    """Do the modules a cached result read still stand as they stood? ``states``: what ``index.state``
    said of each module so far (filled here), for checks while the index does not change (a run's
    cached results, checked before any file is linted: most read the same modules)."""
    if not key:
        return True
    try:
        deps = json.loads(key)
    except ValueError:
        return False
    if not isinstance(deps, list):
        return False
    for item in deps:
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(v, str) for v in item)):
            return False
        if states is None:
            state = index.state(item[0])
        else:
            state = states.get(item[0])
            if state is None:
                state = states[item[0]] = index.state(item[0])
        if state != item[1]:
            return False
    return True
