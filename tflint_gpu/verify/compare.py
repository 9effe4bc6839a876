"""Compare two example results and decide a verdict. NumPy only, no TensorFlow.

Results arrive as NumPy data: arrays (or NumPy scalars, or ``None``) nested in
tuples, lists and dicts; anything else the runner met is an ``Opaque`` leaf.
Two results are *equivalent* when they have the same structure and, leaf by
leaf, the same dtype, the same shape, and equal values (NaN equal to NaN), or
values within ``tolerance`` (absolute and relative) when the example sets
``TOLERANCE``, and at least one array was compared: a ``main`` that returns
``None``, an empty container or an opaque object proves nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import numpy as np

VERDICTS = ("equivalent", "fixes-error", "fixes-behaviour", "failed")


@dataclass(frozen=True)
class Opaque:
    """A result leaf that is not a tensor or array (sent as its type name and repr): never compared."""

    type_name: str
    text: str


@dataclass
class Comparison:
    equal: bool
    detail: str  # why not, or what was compared
    count: int = 0  # arrays compared


def compare(before: Any, after: Any, tolerance: Optional[float] = None) -> Comparison:
    """Whether ``after`` is the same result as ``before`` (see the module docstring)."""
    leaves: List[float] = []  # largest absolute difference of each compared float leaf
    problem = _compare(before, after, "result", tolerance, leaves)
    if problem is not None:
        return Comparison(False, problem)
    count = len(leaves)
    noun = "array" if count == 1 else "arrays"
    if tolerance is not None and any(leaves):
        return Comparison(True, f"same dtypes and shapes ({count} {noun}); values within "
                                f"TOLERANCE={tolerance:g} (max abs diff {max(leaves):.3g})", count)
    return Comparison(True, f"same dtypes, shapes and values ({count} {noun})", count)


def result_problem(result: Any) -> Optional[str]:
    """None when ``result`` holds at least one array and no opaque object; else what ``main`` returned."""
    arrays = 0
    stack = [result]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, Opaque):
            return f"returned an opaque {value.type_name} object ({_short(value.text)}), not tensors or arrays"
        elif value is not None:
            arrays += 1
    if arrays:
        return None
    if result is None:
        return "returned None"
    return f"returned no tensor or array ({summary(result, 40)})"


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _compare(a: Any, b: Any, where: str, tolerance: Optional[float], leaves: List[float]) -> Optional[str]:
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)):
            return f"{where}: {type(a).__name__} vs {type(b).__name__}"
        if set(a) != set(b):
            return f"{where}: keys {sorted(map(str, a))} vs {sorted(map(str, b))}"
        for key in sorted(a, key=str):
            problem = _compare(a[key], b[key], f"{where}[{key!r}]", tolerance, leaves)
            if problem:
                return problem
        return None
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))):
            return f"{where}: {type(a).__name__} vs {type(b).__name__}"
        if len(a) != len(b):
            return f"{where}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            problem = _compare(x, y, f"{where}[{i}]", tolerance, leaves)
            if problem:
                return problem
        return None
    for value in (a, b):
        if isinstance(value, Opaque):
            return f"{where}: an opaque {value.type_name} object ({_short(value.text)}) cannot be compared"
    if a is None or b is None:
        return None if a is None and b is None else f"{where}: {a!r} vs {b!r}"
    x, y = np.asarray(a), np.asarray(b)
    if x.dtype != y.dtype:
        return f"{where}: dtype {x.dtype} vs {y.dtype}"
    if x.shape != y.shape:
        return f"{where}: shape {x.shape} vs {y.shape}"
    inexact = np.issubdtype(x.dtype, np.inexact)
    if tolerance is not None and inexact:
        if not np.allclose(x, y, rtol=tolerance, atol=tolerance, equal_nan=True):
            return f"{where}: values differ beyond TOLERANCE={tolerance:g} (max abs diff {_max_diff(x, y):.3g})"
    elif not np.array_equal(x, y, equal_nan=inexact):
        if inexact or np.issubdtype(x.dtype, np.number):
            return f"{where}: values differ (max abs diff {_max_diff(x, y):.3g})"
        return f"{where}: values differ"
    leaves.append(_max_diff(x, y) if inexact else 0.0)
    return None


def _max_diff(x: np.ndarray, y: np.ndarray) -> float:
    """Largest absolute difference; NaN against NaN counts as 0, NaN against a number as inf."""
    if x.size == 0:
        return 0.0
    kind = np.complex128 if np.iscomplexobj(x) or np.iscomplexobj(y) else np.float64
    xa, ya = x.astype(kind), y.astype(kind)
    with np.errstate(all="ignore"):
        diff = np.abs(xa - ya)
    diff = np.where(np.isnan(xa) & np.isnan(ya), 0.0, np.where(np.isnan(diff), np.inf, diff))
    return float(diff.max())


def summary(result: Any, limit: int = 60) -> str:
    """A short text for a result: values when small, dtype and shape otherwise."""
    def text(value: Any) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k!r}: {text(v)}" for k, v in value.items()) + "}"
        if isinstance(value, (list, tuple)):
            inner = ", ".join(text(v) for v in value)
            return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
        if value is None:
            return "None"
        if isinstance(value, Opaque):
            return f"<{value.type_name}>"
        array = np.asarray(value)
        if array.size <= 4:
            return np.array2string(array, precision=4, separator=", ") if array.ndim else repr(array.item())
        return f"{array.dtype}{list(array.shape)}"
    out = text(result)
    return out if len(out) <= limit else out[:limit - 3] + "..."


@dataclass
class Side:
    """What one file's run produced: an error (``"Type: first line"``) or a result.

    ``error_type`` is the class name of the error (read through Keras's re-raise
    of the same type), ``error_kinds`` the names of its classes (MRO), and
    ``phase`` where it happened: ``"warm-up"`` or ``"timed call N"`` while
    ``main`` ran; ``"import"``, ``"import tensorflow"``, ``"device"`` or
    ``"child process"`` (a timeout, a killed or crashed child) otherwise.
    """

    error: Optional[str] = None
    result: Any = None
    error_type: Optional[str] = None
    phase: Optional[str] = None
    error_kinds: Tuple[str, ...] = ()

    def raised_in_main(self) -> bool:
        return self.phase is not None and (self.phase == "warm-up" or self.phase.startswith("timed call"))


def decide(before: Side, after: Side, *, expect: Optional[str], tolerance: Optional[float] = None,
           changed: Any = None, expect_error: Optional[str] = None) -> Tuple[str, str]:
    """The verdict and its evidence.

    ``changed`` is what ``behaviour_changed(before, after)`` returned (None when
    the module has none or it was not called; a string when it raised).
    ``expect_error`` is the example's ``EXPECT_ERROR``: the class name of the
    error ``before`` must raise for a ``fixes-error`` verdict.
    """
    verdict, evidence = _observed(before, after, tolerance, changed)
    if verdict != "failed" and expect != verdict:
        return "failed", f"EXPECT={expect!r} but observed {verdict}: {evidence}"
    if verdict == "fixes-error":
        if not expect_error:
            return "failed", (f"EXPECT='fixes-error' needs EXPECT_ERROR naming the error before.py raises "
                              f"(it raised {before.error})")
        if before.error_type != expect_error:
            return "failed", f"before.py raised {before.error}, not EXPECT_ERROR={expect_error!r}"
        problem = result_problem(after.result)
        if problem is not None:
            return "failed", f"before raises {before.error}, but after.py's main {problem}"
    return verdict, evidence


_MISSING_KERAS_INTERNAL = "No module named 'keras.src."


def _observed(before: Side, after: Side, tolerance: Optional[float], changed: Any) -> Tuple[str, str]:
    if after.error is not None:
        prefix = f"before: {before.error}; " if before.error is not None else ""
        return "failed", f"{prefix}after raises {after.error}"
    if before.error is not None:
        if not before.raised_in_main():
            where = f" (during {before.phase or 'an unknown phase'})"
            return "failed", f"before.py did not get to run main: {before.error.replace(where, '')}{where}"
        if "ImportError" in before.error_kinds and _MISSING_KERAS_INTERNAL not in before.error:
            # (a Keras 2 internal that Keras 3 lacks, imported by a Keras 2-only package, is the breakage itself)
            return "failed", f"before.py's main raised {before.error}: a missing module is not an error a fix fixes"
        return "fixes-error", before.error
    if isinstance(changed, str):
        return "failed", f"behaviour_changed raised {changed}"
    if changed is True:
        return "fixes-behaviour", (f"behaviour_changed(before, after) is True: "
                                   f"{summary(before.result, 40)} -> {summary(after.result, 40)}")
    comparison = compare(before.result, after.result, tolerance)
    if not comparison.equal:
        return "failed", f"results differ: {comparison.detail}"
    if comparison.count == 0:
        problem = result_problem(after.result) or "returned no tensor or array"
        return "failed", f"nothing compared: main {problem} (equivalent needs at least one tensor or array)"
    return "equivalent", comparison.detail
