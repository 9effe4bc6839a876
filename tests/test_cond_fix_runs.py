"""TFG102's safe fix alone (`--fix`, without --unsafe-fixes) gives code that runs.

Every `tf.cond` form of ``fix_variants_cond`` (among them tests made of and/or/not of
comparisons) is fixed with the safe fixes only, and the fixed code is executed under
TensorFlow on inputs that take both branches: it must run and compute what the original
computes with every tf.function run eagerly. Without this, a fix could leave Python's `or`
inside tf.cond's predicate (OperatorNotAllowedInGraphError all the same) and only a second,
unsafe fix would make it run.
"""
from __future__ import annotations

import importlib.util

import pytest

import fix_execution
import fix_variants_cond
from tflint_gpu.engine.fix import fix_source
from tflint_gpu.rules.base import all_rules

np = pytest.importorskip("numpy")
if importlib.util.find_spec("tensorflow") is None:
    pytest.skip("TensorFlow is not installed", allow_module_level=True)

from tflint_gpu.verify.compare import compare  # noqa: E402

EAGER = "import tensorflow as _tf\n_tf.config.run_functions_eagerly(True)\n"
RULES = [rule for rule in all_rules() if rule.code == "TFG102"]


def _fixed_variants():
    found = []
    for variant in fix_variants_cond.variants():
        fixed = fix_source(variant.code, "variant.py", RULES, unsafe=False).source
        if fixed != variant.code:
            run = "\n" + variant.run + "\n"
            found.append((variant.id, variant.code + run, fixed + run))
    return found


def test_the_safe_cond_fix_alone_runs_and_computes_what_the_original_computes_eagerly():
    pairs = _fixed_variants()
    ids = [i for i, _, _ in pairs]
    assert any("test-and" in i for i in ids) and any("test-or" in i for i in ids), ids
    after = fix_execution.run_many([fixed for _, _, fixed in pairs])
    reference = fix_execution.run_many([EAGER + before for _, before, _ in pairs])
    wrong = []
    for (name, _, fixed), got, want in zip(pairs, after, reference):
        if got.error is not None:
            wrong.append(f"{name}: the fixed code raised {got.error}")
        elif want.error is None:
            values = lambda o: {k: d for k, (_, d) in o.values.items()}  # noqa: E731
            result = compare(values(want), values(got))
            if not result.equal:
                wrong.append(f"{name}: {result.detail}")
    assert not wrong, "\n".join(wrong)
