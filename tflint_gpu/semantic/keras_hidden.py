"""Method names a Keras 3 model or layer subclass cannot define: Keras 3's constructor assigns an
instance attribute of that name, which hides the method (``self.loss = None`` in ``Model.__init__``).

``hidden_names()``: kind (``"model"``, ``"layer"``) -> the names, from ``data/keras_shadowed_methods.json``
(derived by ``scripts/derive_shadowed_methods.py``, which defines each method in a subclass of both
flavours and reads it back from an instance: hidden under Keras 3, not under tf_keras).
"""
from __future__ import annotations

import json
import os
from typing import Dict, FrozenSet, Optional

_TABLE = os.path.join(os.path.dirname(__file__), "data", "keras_shadowed_methods.json")
_hidden: Optional[Dict[str, FrozenSet[str]]] = None


def hidden_names() -> Dict[str, FrozenSet[str]]:
    global _hidden
    if _hidden is None:
        with open(_TABLE, encoding="utf-8") as handle:
            data = json.load(handle)
        _hidden = {kind: frozenset(data[kind]) for kind in ("model", "layer")}
    return _hidden
