"""The verify harness: verdict logic (no TensorFlow) and every rule's example run under TensorFlow."""
from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest

from tflint_gpu.rules.base import REGISTRY, all_rules
from tflint_gpu.verify import command, harness
from tflint_gpu.verify.compare import Side, compare, decide, summary

HAS_TENSORFLOW = importlib.util.find_spec("tensorflow") is not None
EXAMPLES = harness.default_examples_dir()


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(list(argv))


# -- comparison -------------------------------------------------------------

def test_equal_arrays_are_equal():
    result = compare((np.arange(3), {"a": np.float32(1.5)}), (np.arange(3), {"a": np.float32(1.5)}))
    assert result.equal, result.detail


def test_dtype_difference_is_not_equal():
    result = compare(np.zeros(3, np.float64), np.zeros(3, np.float32))
    assert not result.equal and "dtype float64 vs float32" in result.detail


def test_shape_difference_is_not_equal():
    result = compare([np.zeros((2, 3))], [np.zeros((3, 2))])
    assert not result.equal and "result[0]: shape (2, 3) vs (3, 2)" in result.detail


def test_values_need_tolerance_to_differ():
    a, b = np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-7])
    assert not compare(a, b).equal
    assert compare(a, b, tolerance=1e-6).equal
    assert not compare(a, b + 1e-3, tolerance=1e-6).equal


def test_tolerance_does_not_excuse_integers_or_dtypes():
    assert not compare(np.array([1, 2]), np.array([1, 3]), tolerance=10.0).equal
    assert not compare(np.float32(1.0), np.float64(1.0), tolerance=1.0).equal


def test_nan_equals_nan_but_not_a_number():
    assert compare(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])).equal
    assert not compare(np.array([np.nan]), np.array([1.0]), tolerance=1.0).equal


def test_structure_differences():
    assert not compare({"a": np.ones(1)}, {"b": np.ones(1)}).equal
    assert not compare((np.ones(1),), (np.ones(1), np.ones(1))).equal
    assert not compare(np.ones(1), (np.ones(1),)).equal
    assert compare(None, None).equal and not compare(None, np.ones(1)).equal


def test_summary_is_short():
    assert summary(np.int32(3)) == "3"
    assert summary(np.zeros((10, 2), np.float32)) == "float32[10, 2]"


# -- verdicts ---------------------------------------------------------------

def test_verdict_equivalent():
    same = Side(result=np.ones(2))
    assert decide(same, same, expect="equivalent")[0] == "equivalent"


def test_verdict_fixes_error_carries_the_error():
    verdict, evidence = decide(Side(error="AttributeError: boom"), Side(result=np.ones(1)), expect="fixes-error")
    assert (verdict, evidence) == ("fixes-error", "AttributeError: boom")


def test_verdict_fixes_behaviour():
    verdict, _ = decide(Side(result=np.int64(1)), Side(result=np.int64(3)), expect="fixes-behaviour", changed=True)
    assert verdict == "fixes-behaviour"


def test_verdict_failed_cases():
    ok = Side(result=np.ones(1))
    assert decide(ok, Side(error="ValueError: x"), expect="equivalent")[0] == "failed"
    assert decide(ok, Side(result=np.zeros(1)), expect="equivalent")[0] == "failed"
    assert decide(ok, Side(result=np.zeros(1)), expect="fixes-behaviour", changed=False)[0] == "failed"
    assert decide(ok, ok, expect="fixes-behaviour", changed="TypeError: bad")[0] == "failed"
    verdict, evidence = decide(ok, ok, expect="fixes-error")
    assert verdict == "failed" and "EXPECT='fixes-error'" in evidence
    assert decide(ok, ok, expect=None)[0] == "failed"


def test_module_settings_reads_literals():
    assert harness.module_settings('EXPECT = "equivalent"\nTOLERANCE = 1e-5\n') == ("equivalent", 1e-5)


def test_usage_errors_do_not_start_tensorflow(capsys):
    assert command.run(parse("--rule", "TFG000")) == 2
    assert command.run(parse("--repeat", "0")) == 2
    assert "error" in capsys.readouterr().err


# -- the examples -------------------------------------------------------------

def test_every_rule_has_an_example_pair():
    list(all_rules())
    missing = [code for code in sorted(REGISTRY)
               if not ((EXAMPLES / code / "before.py").is_file() and (EXAMPLES / code / "after.py").is_file())]
    assert not missing, f"rules without examples/<CODE>/before.py and after.py: {missing}"


@pytest.mark.parametrize("code", harness.example_codes(EXAMPLES))
def test_example_after_is_the_golden_fix(code):
    list(all_rules())
    assert code in REGISTRY, f"examples/{code} has no registered rule"
    problem = harness.golden_check(REGISTRY[code], EXAMPLES / code / "before.py", EXAMPLES / code / "after.py")
    assert problem is None, problem


@pytest.mark.skipif(not HAS_TENSORFLOW, reason="tensorflow is not installed: the examples cannot run")
def test_all_examples_verify_on_cpu(capsys):
    code = command.run(parse("--device", "cpu", "--size", "small", "--repeat", "1", "--format", "json",
                             "--jobs", "2"))
    records = json.loads(capsys.readouterr().out)
    failed = [f"{r['rule']}: {r['evidence']}" for r in records if r["verdict"] == "failed"]
    assert not failed, "\n".join(failed)
    assert code == 0
    assert {r["rule"] for r in records} == set(harness.example_codes(EXAMPLES))


def test_module_entry_point_without_tensorflow():
    done = subprocess.run([sys.executable, "-m", "tflint_gpu.verify", "--rule", "TFG000"],
                          capture_output=True, text=True, env=harness.child_env("cpu"), timeout=120)
    assert done.returncode == 2
    assert "unknown rule TFG000" in done.stderr


def test_parent_side_never_imports_tensorflow():
    script = (
        "import sys\n"
        "from tflint_gpu.verify import command, compare, harness\n"
        "REGISTRY = harness.registry()\n"
        "assert REGISTRY\n"
        "root = harness.default_examples_dir()\n"
        "for code in harness.example_codes(root):\n"
        "    if code in REGISTRY:\n"
        "        harness.golden_check(REGISTRY[code], root / code / 'before.py', root / code / 'after.py')\n"
        "assert 'tensorflow' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=harness.child_env("cpu"), timeout=120)
    assert done.returncode == 0, done.stderr


def test_error_evidence_reads_through_keras_and_tf_data_wrappers():
    from tflint_gpu.verify.runner import describe_error

    keras_error = ValueError(
        "Exception encountered when calling SoftClip.call().\n\n"
        "\x1b[1mUsing a symbolic `tf.Tensor` as a Python `bool` is not allowed.\x1b[0m\n\nArguments received by ..."
    )
    assert describe_error(keras_error) == (
        "ValueError: Exception encountered when calling SoftClip.call(). "
        "Using a symbolic `tf.Tensor` as a Python `bool` is not allowed."
    )
    wrapped = AttributeError(
        "in user code:\n\n  File x.py, line 3\n\nAttributeError: 'SymbolicTensor' object has no attribute 'numpy'"
    )
    assert describe_error(wrapped) == "AttributeError: 'SymbolicTensor' object has no attribute 'numpy'"


def test_error_evidence_prefers_the_original_of_a_reraised_error():
    from tflint_gpu.verify.runner import describe_error

    try:
        try:
            raise TypeError("Using a symbolic tf.Tensor as a Python bool is not allowed.")
        except TypeError:
            raise TypeError("Exception encountered when calling Gate.call().\n\nCould not infer ...")
    except TypeError as error:
        assert describe_error(error) == "TypeError: Using a symbolic tf.Tensor as a Python bool is not allowed."
