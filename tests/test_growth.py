"""The check's work grows linearly with the size of a file.

No timing is asserted (machines here are noisy): the work is counted as the
lines of tflint-gpu's own code that run (``sys.settrace`` line events, which
also count every turn of a loop or comprehension), per function, while one
file of N copies of generated TF2 code and one of 4N copies are checked with
every rule. Linear code runs at most 4x the lines on the larger file; a fact
that rescans a scope or the module per call or per node runs about 16x. The
files are those of ``benchmarks/growth.py``: varied blocks with unique names
(many small scopes), and the same loop bodies in one huge function and in one
module-level loop (one big scope).
"""
from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, Tuple

import pytest

import tflint_gpu
from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.base import all_rules

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(tflint_gpu.__file__).resolve().parent
# The code whose lines are counted: the package, and this file (for the check
# of the measure itself).
COUNTED = (str(PACKAGE), __file__)
SMALL = 4
SCALE = 4
# Linear code: at most SCALE x the lines. A little slack for n log n (sorting)
# and for work per distinct name; a quadratic fact is ~SCALE x beyond this.
ALLOWED = SCALE * 1.5
# Functions running fewer lines than this on the larger file are not judged.
FLOOR = 300

_spec = importlib.util.spec_from_file_location("growth_benchmark", ROOT / "benchmarks" / "growth.py")
growth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(growth)  # type: ignore[union-attr]

Key = Tuple[str, int, str]  # file, first line, function


def executed_lines(source: str) -> Dict[Key, int]:
    """Line events in each function of tflint-gpu while ``source`` is checked."""
    counts: Counter = Counter()
    rules = list(all_rules())

    def local(frame, event, arg):
        if event == "line":
            code = frame.f_code
            counts[(code.co_filename, code.co_firstlineno, code.co_name)] += 1
        return local

    def calls(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(COUNTED) else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        lint_source(source, "generated.py", rules)
    finally:
        sys.settrace(previous)
    return dict(counts)


def superlinear(variant: str, small: int = SMALL, scale: int = SCALE):
    """The functions whose executed lines grow more than linearly from ``small``
    to ``small * scale`` copies: (growth, lines on the larger file, function)."""
    before = executed_lines(growth.generate(variant, copies=small))
    after = executed_lines(growth.generate(variant, copies=small * scale))
    found = []
    for key, count in after.items():
        ratio = count / before.get(key, 1)
        if count >= FLOOR and ratio > ALLOWED:
            file, line, name = key
            where = Path(file).name if file == __file__ else Path(file).relative_to(PACKAGE.parent)
            found.append((round(ratio, 1), count, f"{where}:{line} {name}"))
    return sorted(found, reverse=True)


@pytest.mark.parametrize("variant", ["blocks", "function", "module"])
def test_check_work_grows_linearly_with_the_file(variant):
    found = superlinear(variant)
    assert not found, f"lines run on {SCALE}x the copies, beyond {ALLOWED}x:\n" + "\n".join(
        f"  {ratio}x ({count} lines) {name}" for ratio, count, name in found)


def test_the_count_sees_a_quadratic_fact(monkeypatch):
    """The measure itself: a fact that scans every call of the module for each
    call it is asked about is reported."""
    from tflint_gpu.semantic.retracing import Retracing

    original = Retracing.called_tf_function

    def rescanning(self, call, scope):
        for other, _ in self.model.index.get("Call", ()):
            if other is call:
                break
        return original(self, call, scope)

    monkeypatch.setattr(Retracing, "called_tf_function", rescanning)
    found = superlinear("blocks")
    assert any(name.endswith(" rescanning") for _, _, name in found), found
