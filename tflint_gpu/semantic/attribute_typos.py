"""Attribute names that differ only in case from a public settable Keras attribute.

``keras_attribute_meant(name)`` answers "which Keras attribute did an assignment to
``name`` on a model or layer mean?": the public settable attribute of Keras models and
layers (``keras_attributes.SETTABLE``, derived from the installed Keras 3 and tf_keras by
``scripts/derive_keras_attributes.py``) whose name equals ``name`` but for case
(``Trainable`` -> ``trainable``), when ``name`` is not itself a name those classes have
(``keras_attributes.KNOWN``). None otherwise.

``module_uses_attribute(source, name)`` answers "does the module treat ``name`` as an
attribute of its own?": it reads ``.name`` somewhere (anything but a plain assignment
to it: ``if self.Trainable:``, ``x.Trainable += 1``), names it in a string
(``getattr(layer, "Trainable")``, ``__slots__``), or defines it in a class body
(``def Trainable(self)``, ``Trainable = ...``). Read from the module's text: a
subclass of the project's own that keeps ``self.Trainable`` on purpose reads it.
"""
from __future__ import annotations

import re
from typing import Dict, Optional

from tflint_gpu.semantic.keras_attributes import KNOWN, SETTABLE

_BY_FOLDED: Dict[str, str] = {}
for _name in sorted(SETTABLE):
    _BY_FOLDED.setdefault(_name.lower(), _name)


def keras_attribute_meant(name: str) -> Optional[str]:
    if name.startswith("_") or name in KNOWN:
        return None
    meant = _BY_FOLDED.get(name.lower())
    return meant if meant is not None and meant != name else None


def module_uses_attribute(source: str, name: str) -> bool:
    key = re.escape(name)
    if re.search(r"\.\s*" + key + r"\b(?!\s*=(?!=))", source):
        return True  # a read (or an augmented assignment, which reads first)
    if re.search(r"[\"']" + key + r"[\"']", source):
        return True
    return re.search(r"(?m)^[ \t]+(?:def[ \t]+" + key + r"\b|" + key + r"[ \t]*(?::[^=\n]*)?=(?!=))",
                     source) is not None


__all__ = ["keras_attribute_meant", "module_uses_attribute"]
