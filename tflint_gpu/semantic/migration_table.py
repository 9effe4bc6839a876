"""The derived Keras 3 / TensorFlow 2 migration table (``data/keras3_migration.json``).

``scripts/derive_migration.py`` compares Keras 2 (``tf_keras`` 2.21) with Keras 3
as TensorFlow 2.21 ships it, and ``tf.compat.v1`` with ``tf``, then executes
every entry under Keras 3 and records what it raised. This module reads that
file on first use only (a rule asks; start-up stays light) and answers by
normalized qualified name:

* ``removed_module("keras.layers.experimental", spelling)``;
* ``removed_name("keras.backend", "eval", spelling)``;
* ``removed_member("keras.metrics.Mean", "reset_states")`` (through the bases
  the table records: a member removed from ``keras.layers.Layer`` is removed
  from ``keras.layers.Dense``);
* ``removed_keyword("keras.Model.fit", "workers")``;
* ``removed_tf_name("tensorflow.Session")``;
* ``deprecated_tf_keyword("tensorflow.map_fn", "dtype")``.

Each answers a ``Removal`` (the error class and message executing it raised,
and the replacement when there is one, with whether it is exact) or None:
None also for an entry whose execution raised nothing (not a breakage) or
that was not executed. ``spelling`` is how the code reaches Keras:
``"keras"`` (standalone Keras 3) or ``"tensorflow.keras"`` (``tf.keras`` under
TF 2.16+, which keeps some of Keras 2's modules, ``preprocessing.text`` for
one); ``spelling_of(raw)`` tells it from a raw qualified name.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

DATA_FILE = os.path.join(os.path.dirname(__file__), "data", "keras3_migration.json")
KERAS = "keras"
TF_KERAS_SPELLING = "tensorflow.keras"
_TF_KERAS_PREFIXES = ("tensorflow.keras", "tensorflow.compat.v2.keras", "tensorflow.compat.v1.keras")


@dataclass(frozen=True)
class Removal:
    kind: str  # module, name, member, keyword, tf_name, tf_keyword
    qualname: str  # what the entry is about (normalized; the callable for a keyword, the class for a member)
    error: Optional[str]  # ImportError, AttributeError, TypeError, ValueError...; None for a deprecation
    message: str
    replacement: Optional[str] = None  # a qualified name, a member or a keyword, by kind
    exact: bool = False  # the replacement is a safe rewrite (same object / verified identical outputs)
    why: str = ""  # how the replacement was found
    stub: bool = False  # the name exists but making one raises (hasattr() is True: no guard)


# Removed classes whose replacement is another class made with an added keyword (the class's other
# parameters in the same order). Measured by scripts/measure_sync_batchnorm.py (TF 2.21, one fit step
# under a MirroredStrategy of one and of two logical CPUs): tf_keras 2.21's
# layers.experimental.SyncBatchNormalization, tf_keras's BatchNormalization(synchronized=True) and Keras
# 3.15's BatchNormalization(synchronized=True) leave identical weights and moving statistics (max abs
# diff 0 at either replica count; an unsynchronized BatchNormalization differs by 5.5 at two).
CALL_REPLACEMENTS = {
    "keras.layers.experimental.SyncBatchNormalization":
        ("keras.layers.BatchNormalization", (("synchronized", "True"),)),
}


def spelling_of(raw: Optional[str]) -> Optional[str]:
    """``"keras"`` or ``"tensorflow.keras"`` for a raw Keras 3 qualified name, else None."""
    if raw is None:
        return None
    if raw == "keras" or (raw.startswith("keras.") and not raw.startswith("keras.src.")):
        return KERAS
    for prefix in _TF_KERAS_PREFIXES:
        if raw == prefix or raw.startswith(prefix + "."):
            return TF_KERAS_SPELLING
    return None


class MigrationTable:
    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data
        self.versions: Dict[str, str] = data.get("versions", {})
        self.classes: Dict[str, list] = data.get("classes", {})
        self._modules: Dict[str, dict] = {}
        self._names: Dict[str, dict] = {}
        self._members: Dict[Tuple[str, str], dict] = {}
        self._keywords: Dict[Tuple[str, str], dict] = {}
        self._tf_names: Dict[str, dict] = {}
        self._tf_keywords: Dict[Tuple[str, str], dict] = {}
        self._tf_callables: Set[str] = set()  # callables with a deprecated argument
        self._node_api: Dict[str, str] = {}  # Keras 2 layer-node member -> its class
        self._positionals: Dict[str, dict] = {}  # callable -> its first positional parameter that moved
        self._positional_members: Optional[FrozenSet[str]] = None
        self._tf_positionals: Dict[str, List[dict]] = {}  # TF function -> its `name`/`keepdims` traps
        self._raising: Dict[Tuple[str, str], dict] = {}  # (class, method) -> the outcome of any call of it
        self._safe_modes: Dict[Tuple[str, str], dict] = {}  # (callable, Keras flavour) -> its executed safe_mode
        for entry in data.get("entries", ()):
            kind = entry["kind"]
            if kind == "module":
                self._modules[entry["qualname"]] = entry
            elif kind == "name":
                self._names[entry["qualname"]] = entry
            elif kind == "member":
                self._members[(entry["qualname"], entry["member"])] = entry
                if entry.get("node_api"):
                    self._node_api[entry["member"]] = entry["qualname"]
            elif kind == "keyword":
                self._keywords[(entry["qualname"], entry["keyword"])] = entry
                outcome = entry.get("outcome") or {}
                if outcome.get("breaks") and outcome.get("with_or_without") \
                        and outcome.get("error") == "NotImplementedError":
                    # a method Keras 3 keeps only to raise, whatever it is given (`add_metric`)
                    owner, _, member = entry["qualname"].rpartition(".")
                    self._raising[(owner, member)] = outcome
            elif kind == "tf_name":
                self._tf_names[entry["qualname"]] = entry
            elif kind == "positional":
                self._positionals[entry["qualname"]] = entry
            elif kind == "tf_positional":
                self._tf_positionals.setdefault(entry["qualname"], []).append(entry)
            elif kind == "tf_keyword":
                self._tf_keywords[(entry["qualname"], entry["keyword"])] = entry
                self._tf_callables.add(entry["qualname"])
            elif kind == "safe_mode":
                self._safe_modes[(entry["qualname"], entry["flavour"])] = entry

    # -- counts ---------------------------------------------------------------
    def entries(self):
        return list(self.data.get("entries", ()))

    # -- Keras modules and names ---------------------------------------------
    def removed_module(self, qualname: str, spelling: str, how: str = "import") -> Optional[Removal]:
        """``how``: ``"import"`` (an import statement) or ``"attribute"`` (``tf.keras.x.y``)."""
        entry = self._modules.get(qualname)
        if entry is None:
            return None
        outcome = entry["spellings"].get(spelling, {}).get(how)
        if not outcome or not outcome.get("breaks"):
            return None
        return Removal("module", qualname, outcome["error"], outcome["message"])

    def removed_name(self, module: str, name: str, spelling: str, how: str = "attribute") -> Optional[Removal]:
        """A public Keras 2 name ``module.name`` that Keras 3 lacks under ``spelling``; ``how``:
        ``"attribute"`` (``keras.backend.eval``) or ``"import"`` (``from keras.backend import eval``).
        Also answers names of removed modules (``via_module``), with their replacement, and names
        Keras 3 keeps as stubs that raise when called (``optimizers.legacy.Adam``: ``stub`` is set)."""
        qualname = f"{module}.{name}"
        entry = self._names.get(qualname)
        if entry is None:
            return None
        outcomes = entry["spellings"].get(spelling)
        if not outcomes:
            return None
        outcome = outcomes.get(how)
        if not outcome or not outcome.get("breaks"):
            outcome = outcomes.get("call")  # kept by name, raises when made (a stub)
            if not outcome or not outcome.get("breaks"):
                return None
        replacement = entry.get("replacement", {}).get(spelling)
        return Removal("name", qualname, outcome["error"], outcome["message"],
                       replacement["qualname"] if replacement else None,
                       bool(replacement and replacement.get("exact")),
                       replacement.get("why", "") if replacement else "", stub=outcome is outcomes.get("call"))

    def is_module_name(self, qualname: str) -> bool:
        return qualname in self._modules

    # -- class members ----------------------------------------------------------
    def known_class(self, qualname: str) -> bool:
        return qualname in self.classes

    def bases_of(self, cls: str):
        """The Keras bases the table records for class ``cls`` (nearest first)."""
        return tuple(self.classes.get(cls, ()))

    def removed_member(self, cls: str, member: str) -> Optional[Removal]:
        """A member Keras 2's class ``cls`` (or a base the table records) had and executing
        it on a Keras 3 instance raised for."""
        for owner in [cls] + list(self.classes.get(cls, ())):
            entry = self._members.get((owner, member))
            if entry is None:
                raising = self._raising.get((owner, member))
                if raising is not None:
                    return Removal("member", owner, raising["error"], raising["message"], None, False, "")
                continue
            outcome = entry.get("outcome") or {}
            if not outcome.get("breaks"):
                return None
            replacement = entry.get("replacement") or {}
            return Removal("member", owner, outcome["error"], outcome["message"], replacement.get("member"),
                           bool(replacement.get("exact")), replacement.get("why", ""))
        return None

    def raising_members(self) -> FrozenSet[str]:
        """Names of the methods Keras 3 keeps only to raise NotImplementedError (``add_metric``)."""
        return frozenset(member for _, member in self._raising)

    def node_api_class(self, member: str) -> Optional[str]:
        """The Keras 2 class whose layer-node API ``member`` is (a member taking ``node_index``, such as
        ``get_input_shape_at``, that Keras 3 removed): no other library has these names."""
        return self._node_api.get(member)

    # -- keywords -----------------------------------------------------------------
    def removed_keyword(self, callable_qualname: str, keyword: str) -> Optional[Removal]:
        """A keyword Keras 2's callable took that Keras 3's rejects by name (executed: TypeError/ValueError
        saying the keyword is unknown, unsupported or removed)."""
        entry = self._keywords.get((callable_qualname, keyword))
        if entry is None:
            return None
        outcome = entry.get("outcome") or {}
        if not outcome.get("breaks") or not entry.get("rejects_name"):
            return None  # ran, or failed on the value passed rather than the keyword (by_name= with a .h5 path)
        replacement = entry.get("replacement") or {}
        return Removal("keyword", callable_qualname, outcome["error"], outcome["message"],
                       replacement.get("keyword"), bool(replacement.get("exact")), replacement.get("why", ""))

    def keyword_entry(self, callable_qualname: str, keyword: str) -> Optional[dict]:
        """The raw entry (also for keywords that only warn or were not executed)."""
        return self._keywords.get((callable_qualname, keyword))

    # -- TensorFlow --------------------------------------------------------------
    def positional_members(self) -> FrozenSet[str]:
        """The last names of the callables ``moved_positional`` knows (``compile``, ``Dense``...)."""
        if self._positional_members is None:
            self._positional_members = frozenset(name.rsplit(".", 1)[-1] for name in self._positionals)
        return self._positional_members

    def moved_positional(self, callable_qualname: str) -> Optional[dict]:
        """The first positional parameter of a Keras callable that a positional argument no longer fills
        under Keras 3 (``keras.Model.compile``: position 2, Keras 2's ``metrics``, Keras 3's
        ``loss_weights``; ``keras3`` None: no parameter, a TypeError), as the table records it."""
        return self._positionals.get(callable_qualname)

    def safe_mode(self, qualname: str, flavour: str) -> Optional[dict]:
        """The executed ``safe_mode`` facts of a Keras callable under a flavour ("keras3"/"tf_keras"):
        ``position``, ``default`` and per format (``.keras``, ``.h5``, ``config``) whether a saved
        Python ``lambda`` ``ran`` or was ``refused`` by default and with ``safe_mode=False``; for
        ``keras.config.enable_unsafe_deserialization`` (``switch``), by default after calling it."""
        return self._safe_modes.get((qualname, flavour))

    def tf_positional_traps(self, qualname: str) -> List[dict]:
        """The executed ``name``/``keepdims`` parameters of a TF function that a positional argument reaches
        (``tensorflow.sqrt``: ``name`` at position 1, a TypeError once traced with a dtype there)."""
        return self._tf_positionals.get(qualname, [])

    def removed_tf_name(self, qualname: str, how: str = "attribute") -> Optional[Removal]:
        """``tensorflow.M.N`` that ``tf.compat.v1`` keeps and TF 2 removed (``how``: attribute/import)."""
        entry = self._tf_names.get(qualname)
        if entry is None:
            return None
        outcome = entry["outcome"].get(how) or {}
        if not outcome.get("breaks"):
            return None
        replacement = entry.get("replacement") or {}
        return Removal("tf_name", qualname, outcome["error"], outcome["message"], replacement.get("qualname"),
                       bool(replacement.get("exact")), replacement.get("why", ""))

    def is_tf_module(self, qualname: str) -> bool:
        entry = self._tf_names.get(qualname)
        return bool(entry and entry.get("is_module"))

    def deprecated_tf_keyword(self, callable_qualname: str, keyword: str) -> Optional["Deprecation"]:
        """An argument TF 2 marks deprecated on ``callable_qualname`` (``tensorflow.map_fn``), as executed."""
        entry = self._tf_keywords.get((callable_qualname, keyword))
        if entry is None or entry.get("in_signature") is False:  # a marker naming no parameter
            return None
        replacement = entry.get("replacement") or {}
        return Deprecation(callable_qualname, keyword, entry.get("value"), entry.get("instructions", ""),
                           replacement.get("keyword"), replacement.get("arguments"), bool(replacement.get("exact")),
                           bool(replacement.get("rename")),
                           entry.get("dropped_exact"),
                           entry.get("position"), (entry.get("results") or {}).get("deprecated"),
                           (entry.get("results") or {}).get("current"))

    def deprecates_tf_keywords(self, callable_qualname: str) -> bool:
        """Whether some argument of ``callable_qualname`` is marked deprecated (a quick test first)."""
        return callable_qualname in self._tf_callables


@dataclass(frozen=True)
class Deprecation:
    """A TF 2 argument (or argument value) marked deprecated, and what executing it showed."""
    qualname: str  # the callable
    keyword: str
    value: Optional[str]  # only this value is deprecated (``False`` of ``back_prop=``); None: any value
    instructions: str  # TensorFlow's own
    replacement: Optional[str]  # the current keyword TensorFlow names, if any
    arguments: Optional[str]  # the current spelling as executed (``output_signature=tf.TensorSpec(...)``)
    exact: bool  # executed both ways: identical outputs
    rename: bool  # the current spelling is the same value under the new keyword (``dim=1`` -> ``axis=1``)
    dropped_exact: Optional[bool]  # no replacement: executed without it, identical (None: not executed)
    position: Optional[int] = None  # its place among the positional arguments of a call, if it has one
    deprecated_result: Optional[str] = None  # the executed outputs, with the deprecated argument...
    current_result: Optional[str] = None  # ... and with the current spelling or without it


_TABLE: Optional[MigrationTable] = None


def table() -> MigrationTable:
    """The committed table, read on first use."""
    global _TABLE
    if _TABLE is None:
        with open(DATA_FILE, encoding="utf-8") as handle:
            _TABLE = MigrationTable(json.load(handle))
    return _TABLE
