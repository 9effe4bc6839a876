"""Method names a Keras 3 model or layer subclass cannot define: Keras 3's constructor assigns an
instance attribute of that name, which hides the method (``self.loss = None`` in ``Model.__init__``).

``hidden_names()``: kind (``"model"``, ``"layer"``) -> the names, from ``data/keras_shadowed_methods.json``
(derived by ``scripts/derive_shadowed_methods.py``, which defines each method in a subclass of both
flavours and reads it back from an instance: hidden under Keras 3, not under tf_keras).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, FrozenSet

from tflint_gpu.semantic.tables import data_table


@lru_cache(maxsize=1)
def hidden_names() -> Dict[str, FrozenSet[str]]:
    data = data_table("keras_shadowed_methods.json")
    return {kind: frozenset(data[kind]) for kind in ("model", "layer")}
