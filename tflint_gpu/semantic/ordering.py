"""Datasets whose elements come in a grouped order and are never shuffled.

``grouped(expr, scope)`` answers "is this dataset, wherever it may come from,
a pipeline that starts from a source listing its elements class by class and
never shuffles them?". It walks the pipeline backwards through the engine's
flow (``semantic.flow``: names, rebindings, parameters filled by the module's
calls, returns of the module's functions) and through the ``Dataset`` stages
that keep the order (``map``, ``filter``, ``batch``, ``prefetch``, ``cache``,
``repeat``, ``take``, ``interleave``...). The answer is the source call when
every way the value can be made ends at one of these sources with no
``shuffle`` stage on the way:

* ``image_dataset_from_directory`` / ``text_`` / ``audio_dataset_from_directory``
  (any Keras path) given ``shuffle=False`` (a literal, a name bound to it, or
  a parameter every call of the module fills with it) and labels (``labels=None``
  yields no classes to group); the files are listed directory by directory,
  in class order;
* ``tf.data.Dataset.list_files(pattern, shuffle=False)`` with a literal
  pattern that has a wildcard directory level (``"data/*/*.png"``): the files
  come sorted, so those of one directory (one class, in the usual layout)
  come together.

A ``shuffle`` of whole batches does not mix the classes: the Keras utilities
batch (``batch_size=32`` unless ``None``), and ``ds.batch(n).shuffle(k)``
reorders batches of one class. The answer says when such a shuffle is on
the way (``batch_shuffle``). A stage the walk does not know (``apply``,
``zip``, ``concatenate``, ``sample_from_datasets``...), a value it cannot
follow, or a ``shuffle`` of single elements on any path: no answer.
"""
from __future__ import annotations

from typing import Callable, List, NamedTuple, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import keyword
from tflint_gpu.semantic.literals import literal_value
from tflint_gpu.semantic.model import ScopeInfo

Qualname = Callable[[cst.BaseExpression, ScopeInfo], Optional[str]]

# Stages that keep the order of the elements they are given (interleave keeps runs of consecutive
# files together: cycle_length of them at a time).
_KEEP_ORDER = frozenset({"map", "filter", "batch", "padded_batch", "unbatch", "rebatch", "ragged_batch", "prefetch",
                         "cache", "repeat", "take", "skip", "interleave", "flat_map", "with_options", "shard",
                         "map_with_legacy_function", "parallel_interleave", "ignore_errors", "enumerate"})
_FROM_DIRECTORY = frozenset({"image_dataset_from_directory", "text_dataset_from_directory",
                             "audio_dataset_from_directory"})
_LIST_FILES = frozenset({"tensorflow.data.Dataset.list_files"})
_BATCHING = frozenset({"batch", "padded_batch", "ragged_batch"})


class Grouped(NamedTuple):
    source: cst.Call  # the grouped source
    batch_shuffle: Optional[cst.Call]  # a shuffle of whole batches on the way, if any
_DEPTH = 24


class Ordering:
    def __init__(self, flow, qualname: Qualname) -> None:
        self._flow = flow
        self._qualname = qualname

    def grouped(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[Grouped]:
        """The grouped source every way ``expr`` is made starts from (the first found), or None."""
        found: List[Grouped] = []
        if not self._walk(expr, scope, found, (), 0) or not found:
            return None
        return next((g for g in found if g.batch_shuffle is not None), found[0])

    def _walk(self, expr: cst.BaseExpression, scope: ScopeInfo, found: List[Grouped], outer: Tuple[cst.Call, ...],
              depth: int) -> bool:
        """False when some way ``expr`` is made is not a grouped source through order-keeping stages (``outer``:
        the stages met so far, outermost first)."""
        if depth > _DEPTH:
            return False
        sources = self._flow.sources(expr, scope)
        if sources.unknown or not sources.found:
            return False
        for value, where in sources.found:
            if not isinstance(value, cst.Call):
                return False
            if self.grouped_source(value, where):
                shuffled = self._shuffles(value, where, outer)
                if shuffled is False:
                    return False
                found.append(Grouped(value, shuffled))
                continue
            func = value.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in _KEEP_ORDER | {"shuffle"}:
                return False
            name = self._qualname(func, where)
            if name is not None and not name.startswith("tensorflow.data."):
                return False
            if not self._walk(func.value, where, found, outer + (value,), depth + 1):
                return False
        return True

    def _shuffles(self, source: cst.Call, scope: ScopeInfo, outer: Tuple[cst.Call, ...]):
        """Over the stages from the source out: False when a shuffle reorders single elements; the first
        shuffle of whole batches (a batched source or a ``batch`` before it, no ``unbatch`` between); None
        when nothing shuffles."""
        batch_size = keyword(source, "batch_size")
        batched = not (batch_size is not None and literal_value(batch_size.value, scope) == (None,)) \
            and self._qualname(source.func, scope) not in _LIST_FILES
        first_batch_shuffle = None
        for stage in reversed(outer):
            method = stage.func.attr.value
            if method in _BATCHING:
                batched = True
            elif method == "unbatch":
                batched = False
            elif method == "shuffle":
                if not batched:
                    return False
                first_batch_shuffle = first_batch_shuffle or stage
        return first_batch_shuffle

    def _false(self, expr: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Is ``expr`` False however it is reached (a literal, a name or a parameter every call of the
        module fills with False)?"""
        if literal_value(expr, scope) == (False,):
            return True
        sources = self._flow.sources(expr, scope)
        return bool(sources.found) and not sources.unknown and all(
            literal_value(value, where) == (False,) for value, where in sources.found)

    def grouped_source(self, call: cst.Call, scope: ScopeInfo) -> bool:
        """Is ``call`` a source listing its elements class by class, unshuffled?"""
        name = self._qualname(call.func, scope) or ""
        shuffle = keyword(call, "shuffle")
        if shuffle is None or not self._false(shuffle.value, scope):
            return False
        if name.startswith("keras.") and name.rsplit(".", 1)[-1] in _FROM_DIRECTORY:  # tf.keras, tf_keras too
            labels = keyword(call, "labels")
            return labels is None or literal_value(labels.value, scope) not in ((None,),)
        if name in _LIST_FILES:
            pattern = keyword(call, "file_pattern")
            if pattern is None and (not call.args or call.args[0].keyword is not None or call.args[0].star):
                return False
            read = literal_value(pattern.value if pattern is not None else call.args[0].value, scope)
            if read is None or not isinstance(read[0], str):
                return False
            text = read[0].replace("\\", "/")
            return "*" in text[:text.rfind("/") + 1] if "/" in text else False
        return False
