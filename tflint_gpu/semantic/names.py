"""Name resolution: what does this expression refer to?

One small interface for every rule: ``qualname(expr, scope)`` answers
``"tensorflow.function"`` for ``tf.function``, ``tfl.function``, ``function``
(after ``from tensorflow import function``) or ``tf.compat.v2.function``, and
``"numpy.zeros"`` for ``np.zeros``, ``numpy.zeros`` or ``z`` (after
``from numpy import zeros as z``). It is built from the import statements the
model walk recorded, scope by scope, and through names assigned once an
imported name (``tfd = tfp.distributions``); it follows no other assignment.
"""
from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from tflint_gpu.semantic.model import ASSIGNED, IMPORT, ScopeInfo, lookup, split_attributes

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


class Resolver:
    """Resolves Name/Attribute chains to normalized qualified names."""

    def __init__(self) -> None:
        self._cache: Dict[int, Optional[str]] = {}

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
        found = lookup(name.value, scope)
        if found is None:
            return None
        if found.kind == IMPORT:
            base = found.target
        elif found.kind == ASSIGNED and _depth < _ALIAS_DEPTH \
                and isinstance(found.single_value, (cst.Name, cst.Attribute)):
            base = self.raw_qualname(found.single_value, found.scope, _depth + 1)
        else:
            return None
        return ".".join([base] + attrs) if base is not None else None

    @staticmethod
    def binding(name: str, scope: ScopeInfo) -> Optional[str]:
        """The imported module or object a bare name stands for, if any."""
        found = lookup(name, scope)
        return found.target if found is not None and found.kind == IMPORT else None

    @staticmethod
    def module_alias(module: str, scope: ScopeInfo, exact: bool = False) -> Optional[str]:
        """A name that refers to ``module`` itself at ``scope`` (``tf`` for
        tensorflow), if any. ``exact``: the import names ``module`` itself, not
        a spelling that normalizes to it (``import tf_keras as keras`` is not
        ``keras``)."""
        for current in scope.chain():
            for local, target in current.imports.items():
                if (target == module if exact else normalize(target) == module) \
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
