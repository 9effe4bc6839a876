"""The verify harness: verdict logic (no TensorFlow) and every rule's example run under TensorFlow."""
from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tflint_gpu.rules.base import REGISTRY, all_rules
from tflint_gpu.verify import command, harness
from tflint_gpu.verify import compare as compare_module
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
    before = Side(error="AttributeError: boom", error_type="AttributeError", phase="warm-up")
    verdict, evidence = decide(before, Side(result=np.ones(1)), expect="fixes-error", expect_error="AttributeError")
    assert (verdict, evidence) == ("fixes-error", "AttributeError: boom")


def test_verdict_fixes_error_needs_the_named_error_raised_by_main():
    after = Side(result=np.ones(1))
    raised = Side(error="AttributeError: boom", error_type="AttributeError", phase="timed call 1")
    verdict, evidence = decide(raised, after, expect="fixes-error")
    assert verdict == "failed" and "EXPECT_ERROR" in evidence
    verdict, evidence = decide(raised, after, expect="fixes-error", expect_error="TypeError")
    assert verdict == "failed" and "TypeError" in evidence and "AttributeError" in evidence
    at_import = Side(error="AttributeError: boom", error_type="AttributeError", phase="import")
    verdict, evidence = decide(at_import, after, expect="fixes-error", expect_error="AttributeError")
    assert verdict == "failed" and "import" in evidence
    missing = Side(error="ModuleNotFoundError: No module named 'x'", error_type="ModuleNotFoundError",
                   error_kinds=("ModuleNotFoundError", "ImportError"), phase="warm-up")
    assert decide(missing, after, expect="fixes-error", expect_error="ModuleNotFoundError")[0] == "failed"
    for empty in (Side(result=None), Side(result={}), Side(result=compare_module.Opaque("Box", "Box()"))):
        verdict, evidence = decide(raised, empty, expect="fixes-error", expect_error="AttributeError")
        assert verdict == "failed" and "after" in evidence, empty


def test_verdict_equivalent_needs_a_compared_array():
    for empty in (None, (), {"a": None}):
        verdict, evidence = decide(Side(result=empty), Side(result=empty), expect="equivalent")
        assert verdict == "failed" and "nothing" in evidence, empty
    opaque = Side(result=(np.ones(1), compare_module.Opaque("Box", "Box()")))
    verdict, evidence = decide(opaque, opaque, expect="equivalent")
    assert verdict == "failed" and "Box" in evidence


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
    assert harness.module_settings('EXPECT = "equivalent"\nTOLERANCE = 1e-5\n') == ("equivalent", 1e-5, None)
    settings = harness.module_settings('EXPECT = "fixes-error"\nEXPECT_ERROR = "ValueError"\n')
    assert settings.expect_error == "ValueError"


def test_traces_column_says_n_a_when_no_tf_function_ran():
    record = harness.Record("TFG201", "examples/TFG201", "equivalent", "ok", traces_before=None, traces_after=None)
    assert command._row(record)[5] == "n/a"
    record.traces_before, record.traces_after = 0, 3
    assert command._row(record)[5] == "0/3"
    record.traces_before = None  # before made no tf.function (it failed first), after did
    assert command._row(record)[5] == "-/3"


def test_times_and_ratio_come_with_their_spread_over_the_timed_calls():
    # Issue 38: a ratio alone hid that 0.95x was noise; the row gives each side's fastest and slowest
    # call and the ratio's bounds, in the text table and RESULTS.md alike.
    record = harness.Record("TFG201", "examples/TFG201", "equivalent", "ok")
    record.before_seconds, record.after_seconds = 0.30, 0.20
    harness.spread(record, [0.28, 0.30, 0.36], [0.18, 0.20, 0.24])
    row = command._row(record)
    assert row[2:5] == ["0.3000 (0.2800-0.3600)", "0.2000 (0.1800-0.2400)", "1.50x (1.17-2.00)"]
    assert (record.ratio_min, record.ratio_max) == (0.28 / 0.24, 0.36 / 0.18)
    failed = harness.Record("TFG603", "examples/TFG603", "fixes-error", "TypeError")
    failed.after_seconds = 0.05
    harness.spread(failed, [], [0.05, 0.06])
    assert command._row(failed)[2:5] == ["-", "0.0500 (0.0500-0.0600)", "-"]


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


def expected_verdicts():
    return {code: harness.module_settings((EXAMPLES / code / "before.py").read_text(encoding="utf-8")).expect
            for code in harness.example_codes(EXAMPLES)}


def test_fixes_error_examples_name_their_error():
    for code, expect in expected_verdicts().items():
        settings = harness.module_settings((EXAMPLES / code / "before.py").read_text(encoding="utf-8"))
        assert expect in ("equivalent", "fixes-error", "fixes-behaviour"), code
        assert (settings.expect_error is not None) == (expect == "fixes-error"), code


@pytest.mark.skipif(not HAS_TENSORFLOW, reason="tensorflow is not installed: the examples cannot run")
def test_each_example_verifies_on_cpu_with_its_expected_verdict(capsys):
    code = command.run(parse("--device", "cpu", "--size", "small", "--repeat", "1", "--format", "json",
                             "--jobs", "2"))
    records = {r["rule"]: r for r in json.loads(capsys.readouterr().out)}
    expected = expected_verdicts()
    assert set(records) == set(expected)
    wrong = [f"{rule}: EXPECT {expected[rule]}, got {r['verdict']}: {r['evidence']}"
             for rule, r in records.items() if r["verdict"] != expected[rule]]
    assert not wrong, "\n".join(wrong)
    assert code == 0
    # tf.functions made inside main (TFG103) and by Keras's fit/predict (TFG102's after) are counted
    assert records["TFG103"]["traces_before"] > 0 and records["TFG103"]["traces_after"] > 0
    assert records["TFG102"]["traces_after"] > 0
    assert records["TFG201"]["traces_before"] is None  # no tf.function at all: n/a


# -- synthetic examples: verify must not pass vacuously ----------------------

SYNTHETIC = {
    # name: (EXPECT, EXPECT_ERROR, body, timeout); BEFORE is true only in before.py (the two files are equal,
    # so after.py is trivially the golden fix)
    "none_result": ("equivalent", None, """
        def main(size):
            tf.constant(1.0)
            return None
    """, None),
    "opaque_result": ("equivalent", None, """
        class Box:
            def __repr__(self):
                return "Box()"

        def main(size):
            return Box()
    """, None),
    "no_expect_error": ("fixes-error", None, """
        def main(size):
            if BEFORE:
                raise ValueError("before fails")
            return tf.constant([1.0])
    """, None),
    "other_error": ("fixes-error", "TypeError", """
        def main(size):
            if BEFORE:
                raise ValueError("before fails, but not with the expected error")
            return tf.constant([1.0])
    """, None),
    "expected_error": ("fixes-error", "TypeError", """
        def main(size):
            if BEFORE:  # re-raised the way Keras does, with a header
                try:
                    raise TypeError("Using a symbolic tf.Tensor as a Python bool is not allowed.")
                except TypeError as error:
                    raise TypeError("Exception encountered when calling Gate.call().") from error
            return tf.constant([1.0])
    """, None),
    "after_returns_none": ("fixes-error", "ValueError", """
        def main(size):
            if BEFORE:
                raise ValueError("before fails")
            return None
    """, None),
    "import_time_error": ("fixes-error", "RuntimeError", """
        if BEFORE:
            raise RuntimeError("fails while the module is imported")

        def main(size):
            return tf.constant([1.0])
    """, None),
    "missing_module": ("fixes-error", "ModuleNotFoundError", """
        def main(size):
            if BEFORE:
                import tflint_gpu_no_such_module  # noqa: F401
            return tf.constant([1.0])
    """, None),
    "killed": ("fixes-error", "ChildProcessError", """
        import signal

        def main(size):
            if BEFORE:
                os.kill(os.getpid(), signal.SIGKILL)
            return tf.constant([1.0])
    """, None),
    "timeout": ("fixes-error", "TimeoutExpired", """
        import time

        def main(size):
            if BEFORE:
                time.sleep(600)
            return tf.constant([1.0])
    """, 30.0),
    "functions_inside_main": ("equivalent", None, """
        class Scaler:
            @tf.function
            def scale(self, x):
                return x * 3.0

        def main(size):
            double = tf.function(lambda x: x * 2.0)
            x = tf.constant([1.0, 2.0])
            return double(x) + Scaler().scale(x)
    """, None),
}


def write_example(directory, expect, expect_error, body):
    lines = [f'"""A synthetic example: {directory.name}."""', "import os", "", "import tensorflow as tf", "",
             f"EXPECT = {expect!r}"]
    if expect_error is not None:
        lines.append(f"EXPECT_ERROR = {expect_error!r}")
    lines.append('BEFORE = os.path.basename(__file__) == "before.py"')
    source = "\n".join(lines) + "\n" + textwrap.dedent(body)
    directory.mkdir(parents=True)
    (directory / "before.py").write_text(source, encoding="utf-8")
    (directory / "after.py").write_text(source, encoding="utf-8")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """Every SYNTHETIC example verified (two children each, a few at once): name -> Record."""
    if not HAS_TENSORFLOW:
        pytest.skip("tensorflow is not installed: the examples cannot run")
    list(all_rules())
    root = tmp_path_factory.mktemp("synthetic")
    for name, (expect, expect_error, body, _) in SYNTHETIC.items():
        write_example(root / name, expect, expect_error, body)

    def one(name):
        timeout = SYNTHETIC[name][3] or 300.0
        return harness.verify_example(name, REGISTRY["TFG201"], root, size="small", repeat=1, device="cpu",
                                      timeout=timeout)

    names = sorted(SYNTHETIC, key=lambda name: name != "timeout")  # the slow one first
    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip(names, pool.map(one, names)))


@pytest.mark.parametrize("name, verdict", [("expected_error", "fixes-error"), ("functions_inside_main", "equivalent")])
def test_synthetic_controls_pass(synthetic, name, verdict):
    assert synthetic[name].verdict == verdict, synthetic[name].evidence


def test_fixes_error_reads_the_error_through_a_keras_style_reraise(synthetic):
    assert synthetic["expected_error"].evidence.startswith("TypeError: Using a symbolic tf.Tensor")


@pytest.mark.parametrize("name, reason", [
    ("none_result", "None"),
    ("opaque_result", "Box"),
    ("no_expect_error", "EXPECT_ERROR"),
    ("other_error", "ValueError"),
    ("after_returns_none", "after"),
    ("import_time_error", "import"),
    ("missing_module", "ModuleNotFoundError"),
    ("killed", "killed by SIGKILL"),
    ("timeout", "TimeoutExpired"),
])
def test_vacuous_example_is_failed_with_a_reason(synthetic, name, reason):
    record = synthetic[name]
    assert record.verdict == "failed", f"{name}: {record.verdict}: {record.evidence}"
    assert reason in record.evidence, record.evidence


def test_traces_count_tf_functions_made_inside_main_and_methods(synthetic):
    record = synthetic["functions_inside_main"]
    # main runs twice (warm-up + 1 timed call); each makes a tf.function and a Scaler, each traced once
    assert (record.traces_before, record.traces_after) == (4, 4)


PLAIN = """
    def main(size):
        return tf.constant([1.0, 2.0])
"""


@pytest.fixture(scope="module")
def relative_run(tmp_path_factory):
    """`verify --examples ../project/examples` run from another directory: (exit code, records)."""
    if not HAS_TENSORFLOW:
        pytest.skip("tensorflow is not installed: the examples cannot run")
    tmp = tmp_path_factory.mktemp("relative")
    write_example(tmp / "project" / "examples" / "TFG201", "equivalent", None, PLAIN)
    (tmp / "elsewhere").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp / "elsewhere")
        done = subprocess.run([sys.executable, "-m", "tflint_gpu.verify", "--examples", "../project/examples",
                               "--rule", "TFG201", "--device", "cpu", "--repeat", "1", "--format", "json"],
                              capture_output=True, text=True, env=harness.child_env("cpu"), timeout=300)
    return done.returncode, json.loads(done.stdout or "[]")


def test_relative_examples_path_from_another_directory(relative_run):
    code, records = relative_run
    assert [(r["rule"], r["verdict"]) for r in records] == [("TFG201", "equivalent")], records
    assert code == 0


def test_traces_are_none_without_any_tf_function(relative_run):
    _, records = relative_run
    assert (records[0]["traces_before"], records[0]["traces_after"]) == (None, None)


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


def _no_fix_rule():
    """A rule without a fix (flags every `print(...)` call), kept out of the registry."""
    import libcst as cst

    from tflint_gpu.rules.base import Rule

    class PrintCall(Rule):
        name = "print-call"
        message = "print"
        needs = (("print",),)

        def visit_Call(self, node, ctx):
            if isinstance(node.func, cst.Name) and node.func.value == "print":
                ctx.report(node)

    PrintCall.code = "TFG999"  # set after creation: not registered
    return PrintCall


@pytest.mark.parametrize("before, after, problem", [
    ("import tensorflow as tf\nprint(1)\n", "import tensorflow as tf\ntf.print(1)\n", None),
    ("import tensorflow as tf\ntf.print(1)\n", "import tensorflow as tf\ntf.print(1)\n",
     "example: before.py has no TFG999 finding"),
    ("import tensorflow as tf\nprint(1)\n", "import tensorflow as tf\nprint(2)\n",
     "example: after.py still has 1 TFG999 finding(s) (line 2)"),
])
def test_a_rule_without_a_fix_has_a_hand_written_after_that_loses_the_finding(tmp_path, before, after, problem):
    (tmp_path / "before.py").write_text(before, encoding="utf-8")
    (tmp_path / "after.py").write_text(after, encoding="utf-8")
    assert harness.golden_check(_no_fix_rule(), tmp_path / "before.py", tmp_path / "after.py") == problem


def test_an_example_of_a_form_the_rule_s_fix_leaves_alone_is_held_to_the_no_fix_check(tmp_path):
    # TFG602 fixes a re-compile after unfreezing; its example (a GAN's two models) has no fix: after.py is a
    # hand rewrite that must lose the finding, not the fix's output
    from tflint_gpu.findings import Safety

    rule = _no_fix_rule()
    rule.fix_safety = Safety.UNSAFE  # a rule with a fix, whose fix this example's finding does not carry
    (tmp_path / "before.py").write_text("import tensorflow as tf\nprint(1)\n", encoding="utf-8")
    (tmp_path / "after.py").write_text("import tensorflow as tf\ntf.print(1)\n", encoding="utf-8")
    assert harness.golden_check(rule, tmp_path / "before.py", tmp_path / "after.py") is None
    (tmp_path / "after.py").write_text("import tensorflow as tf\nprint(2)\n", encoding="utf-8")
    assert harness.golden_check(rule, tmp_path / "before.py", tmp_path / "after.py") == \
        "example: after.py still has 1 TFG999 finding(s) (line 2)"


def test_an_example_asking_for_logical_cpus_runs_on_them(tmp_path):
    # LOGICAL_CPUS = 2 (TFG504's MirroredStrategy over two replicas): the runner splits the CPU before
    # TensorFlow's first op (its device probe); an example without it sees one CPU.
    if not HAS_TENSORFLOW:
        pytest.skip("tensorflow is not installed: the examples cannot run")
    body = ("import tensorflow as tf\n{}\n\ndef main(size):\n"
            "    return tf.constant(len(tf.config.list_logical_devices('CPU')))\n")
    counts = []
    for setting in ("LOGICAL_CPUS = 2", ""):
        example = tmp_path / f"example{len(counts)}.py"
        example.write_text(body.format(setting), encoding="utf-8")
        report = harness.run_child(example, tmp_path / f"out{len(counts)}.pkl", size="small", repeat=0,
                                   device="cpu", timeout=300)
        assert report["error"] is None, report["error"]
        counts.append(int(report["result"]))
    assert counts == [2, 1]
