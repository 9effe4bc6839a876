"""Every fix, executed: the original and the fixed code run under TensorFlow (CPU).

For each rule case that has an expected fix, and for generated variants
(``fix_variants_*.py``: NumPy creators x shapes x dtypes, each ``tf.cond``
form, each pipeline reorder), the original and the fixed source run in fresh
processes and the values they computed are compared (``fix_execution.py``):

* a safe fix: identical values, dtypes, shapes and kinds (tensor, variable...);
  or, for a safe fix of code that raises, identical values to the original's
  run with every ``tf.function`` run eagerly;
* an unsafe fix: both run, and differ only as the case's ``effect`` says:
  ``random`` same dtypes and shapes; ``close`` values within 1e-4;
  ``changes`` something differs, on purpose; ``fixes-error`` the original
  raises while the fixed code runs and computes what the original computes
  when every ``tf.function`` runs eagerly (where it can run eagerly at all).
* Code that raised before a fix must raise the same error after it.

Every pair must compare at least one value: a case whose code computes
nothing at module level gives the names to call in its ``run``.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Tuple

import pytest

import fix_execution
from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.base import CHANGES, CLOSE, FIXES_ERROR, IDENTICAL, RANDOM, Safety, all_rules
from tflint_gpu.semantic.target import own_settings

np = pytest.importorskip("numpy")
if importlib.util.find_spec("tensorflow") is None:  # the children import it; this process never does
    pytest.skip("TensorFlow is not installed", allow_module_level=True)

from tflint_gpu.verify.compare import compare  # noqa: E402  (NumPy)

EAGER_PRELUDE = "import tensorflow as _tf\n_tf.config.run_functions_eagerly(True)\n"


@dataclass
class Pair:
    id: str
    before: str
    after: str
    safety: Safety
    effect: str
    legacy_keras: bool = False  # run where tf.keras is Keras 2 (a fix that must run under both)
    before_keras2: bool = False  # the original runs where tf.keras is Keras 2, the fix where it is Keras 3

    @property
    def before_legacy(self) -> bool:
        return self.legacy_keras or self.before_keras2


def _safety(code: str, rules) -> Safety:
    """The weakest safety among the fixes applied to ``code``."""
    fixes = [f.fix for f in lint_source(code, "case.py", rules).findings if f.fix is not None]
    return Safety.UNSAFE if any(f.safety is Safety.UNSAFE for f in fixes) else Safety.SAFE


def case_pairs() -> List[Pair]:
    pairs = []
    for rule in all_rules():
        for i, case in enumerate(rule.cases):
            if case.fixed is None:
                continue
            run = "\n" + case.run + "\n" if case.run else ""
            fixed = fix_source(case.code, "case.py", [rule], unsafe=True).source  # what --fix writes today
            # A case that sets TF_USE_LEGACY_KERAS before importing tensorflow runs where tf.keras is tf_keras
            # (the variable is read at import: the child imports tensorflow before any case).
            pairs.append(Pair(f"{rule.code}-case-{i}", case.code + run, fixed + run,
                              _safety(case.code, [rule]), case.effect,
                              legacy_keras=bool(own_settings(case.code, "case.py"))))
            if case.keras2:  # the same pair where tf.keras is Keras 2: the original runs, the fix must too
                pairs.append(Pair(f"{rule.code}-case-{i}-keras2", case.code + run, fixed + run, Safety.SAFE,
                                  IDENTICAL, legacy_keras=True))
            if case.keras2_before:  # what the original computed under Keras 2, the fix computes under Keras 3
                close = case.keras2_before == CLOSE  # (within 1e-4: the same arithmetic in another order)
                pairs.append(Pair(f"{rule.code}-case-{i}-keras2-to-keras3", case.code + run, fixed + run,
                                  Safety.UNSAFE if close else Safety.SAFE, CLOSE if close else IDENTICAL,
                                  before_keras2=True))
    return pairs


def variant_pairs() -> Tuple[List[Pair], Dict[str, Tuple[int, int]]]:
    """Generated variants that some rule fixes; and per generator (variants, fixed)."""
    pairs: List[Pair] = []
    counts: Dict[str, Tuple[int, int]] = {}
    rules = {rule.code: rule for rule in all_rules()}
    here = os.path.dirname(__file__)
    for info in pkgutil.iter_modules([here]):
        if not info.name.startswith("fix_variants_"):
            continue
        module = importlib.import_module(info.name)
        total = fixed = 0
        for variant in module.variants():
            total += 1
            selected = [rules[code] for code in variant.rules]
            outcome = fix_source(variant.code, "variant.py", selected, unsafe=True)
            if outcome.source == variant.code:
                continue
            fixed += 1
            safety = _safety(variant.code, selected)
            effect = variant.effect if safety is Safety.UNSAFE or variant.effect == FIXES_ERROR else IDENTICAL
            run = "\n" + variant.run + "\n" if variant.run else ""
            pairs.append(Pair(f"{info.name[len('fix_variants_'):]}-{variant.id}", variant.code + run,
                              outcome.source + run, safety, effect))
        counts[info.name] = (total, fixed)
    return pairs, counts


CASE_PAIRS = case_pairs()
VARIANT_PAIRS, VARIANT_COUNTS = variant_pairs()
PAIRS = CASE_PAIRS + VARIANT_PAIRS


@pytest.fixture(scope="module")
def outcomes():
    """Run every original, every fixed source, and the eager references, in fresh processes: three
    where ``tf.keras`` is Keras 3, and three more for the code that asks for Keras 2 (``TF_USE_LEGACY_KERAS``)."""
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for legacy in (False, True):
            befores = [p for p in PAIRS if p.before_legacy is legacy]
            afters = [p for p in PAIRS if p.legacy_keras is legacy]
            if not befores and not afters:
                continue
            eager = [p for p in befores if p.effect == FIXES_ERROR]
            groups = [[p.before for p in befores], [p.after for p in afters], [EAGER_PRELUDE + p.before for p in eager]]
            outs = [os.path.join(tmp, f"{legacy:d}-{i}.pickle") for i in range(len(groups))]
            runs.append((befores, afters, eager, outs,
                         [fix_execution.start(group, out, legacy) for group, out in zip(groups, outs)]))
        before_of, after_of, references = {}, {}, {}
        for befores, afters, eager, outs, processes in runs:
            before, after, reference = (fix_execution.finish(p, out, 1200) for p, out in zip(processes, outs))
            before_of.update(zip((p.id for p in befores), before))
            after_of.update(zip((p.id for p in afters), after))
            references.update(zip((p.id for p in eager), reference))
        found.update({p.id: (before_of[p.id], after_of[p.id], references.get(p.id)) for p in PAIRS})
    return found


def _structure_only(values):
    """Values with every leaf's data reduced to its dtype and shape (for ``random``)."""
    return {name: (kind, _shape_dtype(data)) for name, (kind, data) in values.items()}


def _shape_dtype(data):
    if isinstance(data, dict):
        return {k: _shape_dtype(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_shape_dtype(v) for v in data]
    array = np.asarray(data)
    return (str(array.dtype), array.shape)


def _values_only(values):
    return {name: data for name, (kind, data) in values.items()}


@pytest.mark.parametrize("pair", PAIRS, ids=[p.id for p in PAIRS])
def test_fix_keeps_what_the_code_computes(pair, outcomes):
    before, after, reference = outcomes[pair.id]
    if pair.before_legacy:
        assert before.error is None, f"where tf.keras is Keras 2 the original raised {before.error}"
    if pair.safety is Safety.SAFE:
        # Held to identical results: with the original's own, or, where the
        # original raises, with the original's run with tf.functions run eagerly.
        assert pair.effect in (IDENTICAL, FIXES_ERROR), "a safe fix is held to identical results"
    if pair.effect != FIXES_ERROR:  # (a module Keras 3 removed is what a migration fix repairs: after must run)
        assert not (before.error or "").startswith(("ModuleNotFoundError", "ImportError")), before.error
    if before.error is not None and pair.effect != FIXES_ERROR:
        assert after.error is not None and after.error.split(":")[0] == before.error.split(":")[0], (
            f"the original raised {before.error!r}; after the fix: {after.error or after.values!r}")
        return
    assert after.error is None, f"the fixed code raised {after.error}\n--- fixed:\n{pair.after}"
    assert after.values, "nothing was compared: the case computes no value (give it a `run`)"
    if pair.effect == FIXES_ERROR:
        assert before.error is not None, "the original was expected to raise"
        if pair.safety is Safety.SAFE:
            # A safe fix of an error needs the original to run eagerly, so that
            # the values can be compared; or, for an API Keras 3 / TF 2.16+
            # removed, the original raising the same error eagerly too: the fix
            # (a rename to the current API) must then run.
            migrated = reference is not None and reference.error is not None \
                and reference.error.split(":")[0] == before.error.split(":")[0]
            assert reference is not None and (reference.error is None or migrated), (
                f"a safe fix of an error needs the original to run eagerly: {reference and reference.error}")
        if reference is not None and reference.error is None:
            result = compare(_values_only(reference.values), _values_only(after.values))
            assert result.equal, f"the fixed code computes other values than the eager original: {result.detail}"
        return
    if pair.effect == IDENTICAL:
        assert {k: v[0] for k, v in after.values.items()} == {k: v[0] for k, v in before.values.items()}
        result = compare(_values_only(before.values), _values_only(after.values))
    elif pair.effect == RANDOM:
        result = compare(_structure_only(before.values), _structure_only(after.values))
    elif pair.effect == CLOSE:
        result = compare(_values_only(before.values), _values_only(after.values), tolerance=1e-4)
    else:
        assert pair.effect == CHANGES
        assert set(before.values) == set(after.values)
        result = compare(_values_only(before.values), _values_only(after.values))
        assert not result.equal, "the fix was documented to change a value, and changed none"
        return
    assert result.equal, f"{result.detail}\n--- original:\n{pair.before}\n--- fixed:\n{pair.after}"


def test_every_variant_generator_has_fixes_to_execute():
    """A generator whose variants no rule fixes would test nothing."""
    assert VARIANT_COUNTS, "no fix_variants_* module found"
    for name, (total, fixed) in VARIANT_COUNTS.items():
        assert fixed >= max(3, total // 10), f"{name}: {fixed} of {total} variants fixed"


def test_code_that_asks_for_keras2_runs_under_keras2():
    # The cases written for a Keras 2 project (TF_USE_LEGACY_KERAS) run where tf.keras is tf_keras.
    assert any(p.legacy_keras for p in PAIRS) and not all(p.legacy_keras for p in PAIRS)
    source = 'import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\nimport tensorflow as tf\n' \
             'major = 2 if type(tf.keras.layers.Dense(1)).__module__.startswith("tf_keras") else 3\n'
    legacy, = fix_execution.run_many([source], legacy_keras=True)
    current, = fix_execution.run_many([source.replace('os.environ["TF_USE_LEGACY_KERAS"] = "1"\n', "")])
    assert legacy.values["major"][1] == 2 and current.values["major"][1] == 3


def test_a_case_writes_its_relative_paths_outside_the_callers_folder(tmp_path, monkeypatch):
    # TFG908's cases save weights under a relative name: they must not leave it in the repository.
    monkeypatch.chdir(tmp_path)
    source = 'with open("leftover.weights.h5", "w") as f:\n    f.write("x")\nsize = len(open("leftover.weights.h5").read())\n'
    outcome, = fix_execution.run_many([source])
    assert outcome.error is None and outcome.values["size"][1] == 1
    assert os.listdir(tmp_path) == []
