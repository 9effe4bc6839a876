"""The tf.data reorders (TFG301, TFG302, TFG303): comments stay with their calls,
fixes compose, and no fix leaves a `shuffle` before a `cache`."""
from __future__ import annotations

import re
from typing import Dict, List, Set

import libcst as cst
import pytest

import fix_variants_datasets
from tflint_gpu.semantic.datasets import chains, shuffle_before_cache, upstream
from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import analyse, lint_source
from tflint_gpu.rules.base import REGISTRY, all_rules

RULES = list(all_rules())
DATASET_RULES = [REGISTRY[code] for code in ("TFG301", "TFG302", "TFG303")]
VARIANTS = list(fix_variants_datasets.variants())
SOURCES = [pytest.param(v.code, v.rules, id=v.id) for v in VARIANTS] + [
    pytest.param(case.code, (rule.code,), id=f"{rule.code}-case-{i}")
    for rule in DATASET_RULES for i, case in enumerate(rule.cases)
]
_COMMENT = re.compile(r"# \d+: \w+")


def _comments_by_call(source: str) -> Dict[str, Set[str]]:
    """For each call line of a one-call-per-line chain, the generated comments on it or just above it."""
    found: Dict[str, Set[str]] = {}
    pending: Set[str] = set()
    for line in source.splitlines():
        code, _, comment = line.partition("  #")
        stripped = code.strip()
        if stripped.startswith("#"):
            pending.add(stripped)
            continue
        if stripped.startswith("."):
            found[stripped] = pending | ({"#" + comment} if comment else set())
        pending = set()
    return found


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.id.endswith(("-trailing", "-leading"))],
                         ids=lambda v: v.id)
def test_each_call_keeps_its_comments(variant):
    outcome = fix_source(variant.code, "variant.py", [REGISTRY[c] for c in variant.rules], unsafe=True)
    before = _comments_by_call(variant.code)
    after = _comments_by_call(outcome.source)
    for call, comments in after.items():
        if call.startswith(".prefetch(tf.data.AUTOTUNE)") and call not in before:
            assert comments == set(), "an appended prefetch has no comment of its own"
            continue
        assert comments == before[call], f"{call}: {comments} (was {before[call]})\n{outcome.source}"
    kept = [c for c in _COMMENT.findall(outcome.source)]
    assert len(kept) == len(set(kept)), "a comment was duplicated"
    removed = set(_COMMENT.findall(variant.code)) - set(kept)
    assert not removed, f"comments lost: {removed}\n{outcome.source}"


def _shuffled_caches(source: str) -> List[str]:
    """The pipelines (their last expression's code) that have a `shuffle` before a `cache`."""
    module = cst.parse_module(source)
    ctx = analyse(module, DATASET_RULES)
    found = []
    for chain in chains(ctx):
        if chain.following is not None:
            continue
        names = upstream(chain, ctx) + [stage.func.attr.value for stage in chain.all_stages()]
        if shuffle_before_cache(names):
            found.append(module.code_for_node(chain.outermost))
    return found


@pytest.mark.parametrize("code,codes", SOURCES)
def test_all_fixes_together_reach_a_fixed_point_and_leave_no_shuffle_before_cache(code, codes):
    outcome = fix_source(code, "x.py", RULES, unsafe=True)
    cst.parse_module(outcome.source)
    assert not outcome.refused
    assert [f for f in outcome.findings if f.fix is not None] == []
    assert fix_source(outcome.source, "x.py", RULES, unsafe=True).source == outcome.source
    # Fixes never create a shuffle-before-cache pipeline, and never touch one.
    assert set(_shuffled_caches(outcome.source)) <= set(_shuffled_caches(code))


def test_the_variants_exercise_composition_and_refusals():
    """Several rules fix one pipeline; and some variants are refused on purpose."""
    combined = refused = 0
    for variant in VARIANTS:
        outcome = fix_source(variant.code, "v.py", [REGISTRY[c] for c in variant.rules], unsafe=True)
        combined += len(set(outcome.applied_codes)) >= 2
        refused += outcome.source == variant.code
    assert combined >= 10 and refused >= 10


@pytest.mark.parametrize("source,expected", [
    # (1) the random map; a shuffle in an earlier statement
    ("ds = tf.data.Dataset.range(8).shuffle(8)\nds = ds.map(lambda x: x + tf.random.uniform((), 0, 2, tf.int64))"
     ".cache()\n", None),
    # (2) the expensive map; a shuffle upstream through another name
    ("raw = tf.data.Dataset.from_tensor_slices([b'YWJj']).shuffle(4)\nds = raw.cache().map(tf.io.decode_base64)\n",
     None),
    # (2) with the shuffle after the cache: fixed
    ("raw = tf.data.Dataset.from_tensor_slices([b'YWJj'])\nds = raw.cache().map(tf.io.decode_base64).shuffle(4)\n",
     "raw = tf.data.Dataset.from_tensor_slices([b'YWJj'])\nds = raw.map(tf.io.decode_base64).cache().shuffle(4)\n"),
    # list_files shuffles by default
    ("ds = tf.data.Dataset.list_files('*.txt').cache().map(tf.io.read_file)\n", None),
    ("ds = tf.data.Dataset.list_files('*.txt', shuffle=False).cache().map(tf.io.read_file)\n",
     "ds = tf.data.Dataset.list_files('*.txt', shuffle=False).map(tf.io.read_file).cache()\n"),
])
def test_no_fix_keeps_a_shuffle_before_the_cache(source, expected):
    source = "import tensorflow as tf\n\n" + source
    findings = lint_source(source, "x.py", [REGISTRY["TFG301"]]).findings
    assert findings
    outcome = fix_source(source, "x.py", [REGISTRY["TFG301"]], unsafe=True)
    assert outcome.source == ("import tensorflow as tf\n\n" + expected if expected else source)


def test_tfg303_reports_a_pipeline_built_over_statements_once():
    source = (
        "import tensorflow as tf\n\n"
        "def make(flag):\n"
        "    ds = tf.data.Dataset.range(9)\n"
        "    with tf.device('/cpu:0'):\n"
        "        ds = ds.map(lambda v: v * 2)\n"
        "    for x in ds:\n"
        "        pass\n"
        "    ds = ds.filter(lambda v: v > 2)\n"
        "    if flag:\n"
        "        pass\n"
        "    ds = ds.batch(2)\n"
        "    return list(ds)\n"
    )
    findings = lint_source(source, "x.py", [REGISTRY["TFG303"]]).findings
    assert [(f.row, f.col + 1) for f in findings] == [(12, 13)]
    fixed = fix_source(source, "x.py", RULES, unsafe=True).source
    assert fixed == source.replace("ds.batch(2)", "ds.batch(2).prefetch(tf.data.AUTOTUNE)")


# -- TFG304-TFG307 (appended) ---------------------------------------------------
ORDER_RULES = [REGISTRY[code] for code in ("TFG301", "TFG302", "TFG303", "TFG304", "TFG305", "TFG306", "TFG307")]
ORDER_SOURCES = [pytest.param(v.code, id=v.id) for v in VARIANTS if v.id.startswith(("304-", "306-", "order-"))] + [
    pytest.param(case.code, id=f"{code}-case-{i}")
    for code in ("TFG304", "TFG306") for i, case in enumerate(REGISTRY[code].cases) if case.fixed is not None
]


@pytest.mark.parametrize("code", ORDER_SOURCES)
def test_after_all_fixes_no_tf_data_rule_flags_a_fixed_pipeline(code):
    """The family's fixes compose: once every rule's fixes (unsafe included) are
    applied, no tf.data rule (TFG301-TFG307, off-by-default ones too) flags the
    pipeline, unless nothing could be fixed in it."""
    outcome = fix_source(code, "x.py", RULES, unsafe=True)
    if outcome.source == code:
        return  # refused on purpose (a batch between the shuffle and the cache): reported only
    left = lint_source(outcome.source, "x.py", ORDER_RULES).findings
    assert left == [], f"{[(f.code, f.message) for f in left]}\n{outcome.source}"


def test_the_order_variants_are_fixed_and_some_refused():
    fixed = refused = 0
    for variant in VARIANTS:
        if variant.id.startswith(("304-", "306-", "order-")):
            outcome = fix_source(variant.code, "v.py", RULES, unsafe=True)
            fixed += outcome.source != variant.code
            refused += outcome.source == variant.code
    assert fixed >= 40 and refused >= 4


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.id.endswith(("-trailing-npc", "-leading-npc"))],
                         ids=lambda v: v.id)
def test_each_call_keeps_its_comments_with_parallel_calls(variant):
    """As test_each_call_keeps_its_comments, for the variants TFG306 also fixes: a call
    is known by its text without the `num_parallel_calls` the fix adds."""
    outcome = fix_source(variant.code, "variant.py", [REGISTRY[c] for c in variant.rules], unsafe=True)
    assert "num_parallel_calls=tf.data.AUTOTUNE" in outcome.source
    before = _comments_by_call(variant.code)
    after = _comments_by_call(outcome.source.replace(", num_parallel_calls=tf.data.AUTOTUNE", ""))
    for call, comments in after.items():
        if call.startswith(".prefetch(tf.data.AUTOTUNE)") and call not in before:
            continue
        assert comments == before[call], f"{call}: {comments} (was {before[call]})\n{outcome.source}"
    kept = _COMMENT.findall(outcome.source)
    assert len(kept) == len(set(kept)) and set(_COMMENT.findall(variant.code)) == set(kept), outcome.source
