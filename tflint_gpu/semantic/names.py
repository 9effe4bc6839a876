"""Name resolution: what does this expression refer to?

One small interface for every rule: ``qualname(expr, scope)`` answers
``"tensorflow.function"`` for ``tf.function``, ``tfl.function``, ``function``
(after ``from tensorflow import function``) or ``tf.compat.v2.function``, and
``"numpy.zeros"`` for ``np.zeros``, ``numpy.zeros`` or ``z`` (after
``from numpy import zeros as z``). It is built from the import statements the
model walk recorded, scope by scope, and through names assigned once an
imported name (``tfd = tfp.distributions``); it follows no other assignment.

With the project index (``semantic.project.ProjectFile``), an import of a
project module's name stands for what that module binds: ``from mypkg import
tf`` is ``tensorflow`` when ``mypkg/__init__.py`` imports it so, ``from
.layers import MyLayer`` is ``pkg.layers.MyLayer``; ``bind_stars`` binds the
names a ``from m import *`` brings; ``class_bases`` follows a project class's
bases into the module defining it. Without it, a file is read as it stands.
"""
from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.model import ASSIGNED, IMPORT, ScopeInfo, lookup, split_attributes

if TYPE_CHECKING:
    from tflint_gpu.semantic.project import ProjectFile

_BUILTINS = frozenset(dir(builtins))
# Outside modules whose star import ``Resolver`` reads an unbound name through.
_STAR_MODULES = frozenset({"tensorflow", "keras", "tf_keras", "numpy"})

# Spellings that name the same API. Longest prefix first.
_ALIASES = (
    ("tensorflow.compat.v2.", "tensorflow."),
    ("tensorflow.compat.v1.", "tensorflow."),
    ("tensorflow.python.keras.", "keras."),
    ("tensorflow.keras.", "keras."),
    # TF 2.16+: tf.losses, tf.metrics, tf.optimizers, tf.initializers are Keras's modules.
    ("tensorflow.losses.", "keras.losses."),
    ("tensorflow.metrics.", "keras.metrics."),
    ("tensorflow.optimizers.", "keras.optimizers."),
    ("tensorflow.initializers.", "keras.initializers."),
    ("tf_keras.", "keras."),
    ("keras.src.", "keras."),
)
_COMPAT = frozenset({"tensorflow.compat.v2.", "tensorflow.compat.v1."})
_TF2_KERAS_MODULES = frozenset({
    "tensorflow.losses.", "tensorflow.metrics.", "tensorflow.optimizers.", "tensorflow.initializers.",
})
# How many assignments ``raw_qualname`` follows (``a = b``, ``b = tf.nn``).
_ALIAS_DEPTH = 3
_ALIAS_EXACT = {
    "tensorflow.compat.v2": "tensorflow",
    "tensorflow.compat.v1": "tensorflow",
    "tensorflow.keras": "keras",
    "tf_keras": "keras",
}


def short_name(qualname: str) -> str:
    """``tensorflow.image.resize`` -> ``tf.image.resize`` for messages (other names as they are)."""
    return "tf." + qualname[len("tensorflow."):] if qualname.startswith("tensorflow.") else qualname


def normalize(name: str) -> str:
    """One spelling per API. ``tf.compat.v1``/``v2`` compose with the other
    aliases (``tensorflow.compat.v2.keras.Model`` is ``keras.Model``), except
    that ``tf.compat.v1.losses``/``metrics``/``optimizers``/``initializers``
    are TensorFlow 1's modules, not Keras's."""
    if name in _ALIAS_EXACT:
        return _ALIAS_EXACT[name]
    v1 = name.startswith("tensorflow.compat.v1.")
    for prefix, replacement in _ALIASES:
        if name.startswith(prefix):
            name = replacement + name[len(prefix):]
            break
    else:
        return name
    if prefix in _COMPAT:
        if name in _ALIAS_EXACT:
            return _ALIAS_EXACT[name]
        for prefix, replacement in _ALIASES:
            if name.startswith(prefix) and not (v1 and prefix in _TF2_KERAS_MODULES):
                return replacement + name[len(prefix):]
    return name


_UNKNOWN = object()


class Resolver:
    """Resolves Name/Attribute chains to normalized qualified names."""

    def __init__(self, project: Optional["ProjectFile"] = None) -> None:
        self._cache: Dict[int, Optional[str]] = {}
        self.project = project
        self._targets: Dict[str, str] = {}
        # (id of a scope, name) -> what the name read there stands for (``raw_qualname``'s base):
        # a lookup without flow, the same for every read of the name in the scope.
        self._bases: Dict[Tuple[int, str], Optional[str]] = {}

    def target(self, target: str) -> str:
        """What an import target stands for: through the project's modules when it
        names one (``mypkg.tf`` -> ``tensorflow``), else itself."""
        found = self._targets.get(target)
        if found is None:
            found = None if self.project is None else self.project.meaning(target)
            found = self._targets[target] = found if found is not None else target
        return found

    def bind_stars(self, root: ScopeInfo) -> None:
        """Bind at module level the names the module's star imports bring, where the
        module binds them no other way: from a project module, those it exports
        (``__all__``, else its public names)."""
        if not root.stars or self.project is None:
            return
        taken = set(root.imports) | set(root.defs) | set(root.classes) | set(root.assigned) \
            | set(root.global_writes)
        for star in root.stars:
            level, module = self.project.split_target(star)
            for name, target in self.project.star_names(level, module).items():
                if name not in taken:
                    root.imports[name] = target

    def _star_target(self, name: str, scope: ScopeInfo) -> Optional[str]:
        """An unbound name read after the module's one star import, of TensorFlow, Keras or
        NumPy (``from tensorflow.keras.layers import *``): ``m.name``, unless it is a
        builtin (a name the star cannot bring would be a NameError). With several star
        imports, or one of the project's (``bind_stars``), unknown."""
        root = scope
        while root.parent is not None:
            root = root.parent
        if not root.stars or name in _BUILTINS:
            return None
        star = root.stars[0]
        if len(root.stars) != 1 or star.split(".", 1)[0] not in _STAR_MODULES \
                or (self.project is not None and self.project.meaning(star) is not None):
            return None
        return f"{star}.{name}"

    def class_bases(self, raw: str) -> List[str]:
        """A base class's names: ``raw`` itself, then, for a class of another
        module of the project, its bases there (depth first)."""
        if self.project is None:
            return [raw]
        return [raw] + self.project.class_bases(raw)

    def qualname(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        key = id(expr)
        if key in self._cache:
            return self._cache[key]
        result = self._resolve(expr, scope)
        self._cache[key] = result
        return result

    def _resolve(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        raw = self.raw_qualname(expr, scope)
        return normalize(raw) if raw is not None else None

    def raw_qualname(self, expr: cst.BaseExpression, scope: ScopeInfo, _depth: int = 0) -> Optional[str]:
        """The qualified name as imported, not normalized (``tf_keras.layers.Layer``
        stays apart from ``keras.layers.Layer``). A name assigned once an
        imported name or attribute chain stands for it (``tfd =
        tfp.distributions``, then ``tfd.Normal``)."""
        name, attrs = split_attributes(expr)
        if not isinstance(name, cst.Name):
            return None
        if _depth:
            base = self._base(name.value, scope, _depth)
        else:
            key = (id(scope), name.value)
            base = self._bases.get(key, _UNKNOWN)
            if base is _UNKNOWN:
                base = self._bases[key] = self._base(name.value, scope, 0)
        return ".".join([base] + attrs) if base is not None else None

    def _base(self, name: str, scope: ScopeInfo, depth: int) -> Optional[str]:
        """What the bare ``name`` read in ``scope`` stands for (see ``raw_qualname``)."""
        found = lookup(name, scope)
        if found is None:
            return self._star_target(name, scope)
        if found.kind == IMPORT:
            base = self.target(found.target)
            return None if base.startswith(".") else base  # a relative import the index does not resolve
        if found.kind == ASSIGNED and depth < _ALIAS_DEPTH \
                and isinstance(found.single_value, (cst.Name, cst.Attribute)):
            return self.raw_qualname(found.single_value, found.scope, depth + 1)
        return None

    @staticmethod
    def binding(name: str, scope: ScopeInfo) -> Optional[str]:
        """The imported module or object a bare name stands for, if any."""
        found = lookup(name, scope)
        return found.target if found is not None and found.kind == IMPORT else None

    def module_alias(self, module: str, scope: ScopeInfo, exact: bool = False) -> Optional[str]:
        """A name that refers to ``module`` itself at ``scope`` (``tf`` for
        tensorflow, also ``tf`` after ``from mypkg import tf`` re-exporting it),
        if any. ``exact``: the import names ``module`` itself, not a spelling
        that normalizes to it (``import tf_keras as keras`` is not ``keras``)."""
        for current in scope.chain():
            for local, target in current.imports.items():
                meant = self.target(target)
                if (meant == module if exact else normalize(meant) == module) \
                        and Resolver.binding(local, scope) == target:
                    return local
        return None

    @staticmethod
    def is_free(name: str, scope: ScopeInfo, declarations: bool = True) -> bool:
        """Is ``name`` unbound everywhere visible from ``scope`` (an import,
        assignment, parameter, def or class; with ``declarations``, also a
        ``global``/``nonlocal`` of it), so that a new module-level import of
        that name, or else the builtin, is what ``scope`` sees?"""
        if declarations and any(name in current.globals for current in scope.chain()
                                if current.kind != "class" or current is scope):
            return False
        return lookup(name, scope) is None


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def ordinal(position: int) -> str:
    """"first" for position 0, "second" for 1... ("17th" past ten): for messages about arguments."""
    if position < len(_ORDINALS):
        return _ORDINALS[position]
    suffix = "th" if 10 <= (position + 1) % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get((position + 1) % 10, "th")
    return f"{position + 1}{suffix}"
