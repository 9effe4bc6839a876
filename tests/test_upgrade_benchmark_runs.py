"""The upgrade set's scripts stop loudly when tflint-gpu cannot run: a tool that fails to start would
otherwise score every project 0 found / 0 fixed, which reads like a result."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "upgrade"))
import score  # noqa: E402


def test_findings_of_a_tool_that_cannot_start_stop_the_run(tmp_path):
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('ModuleNotFoundError: tflint_gpu'); sys.exit(1)"]
    with pytest.raises(SystemExit) as stopped:
        score.findings(failing, {}, tmp_path)
    assert "ModuleNotFoundError: tflint_gpu" in str(stopped.value) and str(tmp_path) in str(stopped.value)


def test_findings_of_a_tool_that_runs_are_read(tmp_path):
    printing = [sys.executable, "-c", "print('[{\"code\": \"TFG901\"}]')"]
    assert score.findings(printing, {}, tmp_path) == [{"code": "TFG901"}]


def test_a_label_counts_as_fixed_on_any_line_of_the_simple_statement_it_starts(tmp_path):
    import run

    source = tmp_path / "model.py"
    source.write_text("class M:\n    def build(self):\n        self.w = self.add_weight(\n            'w', shape=(1,)\n"
                      "        )\n        if True:\n            pass\n", encoding="utf-8")
    assert list(run.statement_lines(source, 3)) == [3, 4, 5]  # the assignment over three lines
    assert list(run.statement_lines(source, 6)) == [6]  # a compound statement's header: its line alone
    assert list(run.statement_lines(source, 1)) == [1]
    (tmp_path / "broken.py").write_text("def (:\n", encoding="utf-8")
    assert list(run.statement_lines(tmp_path / "broken.py", 1)) == [1]


def test_a_fix_offered_on_the_label_s_line_counts_with_the_run_s_safety():
    import run

    label = {"path": "utils/metrics.py", "cell": "", "line": "28"}
    unsafe = {"code": "TFG928", "filename": "/p/utils/metrics.py", "location": {"row": 28, "column": 9}, "cell": None,
              "fix": {"applicability": "unsafe", "edits": []}}
    safe = dict(unsafe, fix={"applicability": "safe", "edits": []})
    assert run.fix_offered(label, [unsafe], unsafe=True)
    assert not run.fix_offered(label, [unsafe], unsafe=False)
    assert run.fix_offered(label, [safe], unsafe=False)
    assert not run.fix_offered(label, [dict(safe, fix=None)], unsafe=True)
    assert not run.fix_offered(label, [dict(safe, code="TFG401")], unsafe=True)  # not a migration finding
    assert not run.fix_offered(label, [dict(safe, location={"row": 40, "column": 1})], unsafe=True)


def test_a_driver_run_older_than_the_drivers_is_run_again(tmp_path, monkeypatch):
    import os
    import run

    log = tmp_path / "log-keras2-0.txt"
    log.write_text("DRIVER: OK\n", encoding="utf-8")
    os.utime(log, (1, 1))  # written long before the drivers last changed
    ran = []

    def fake(command, **kwargs):
        ran.append(command)
        return type("Done", (), {"stdout": "DRIVER: OK\n", "stderr": ""})()

    monkeypatch.setattr(run.subprocess, "run", fake)
    monkeypatch.setitem(run.RUNS, "o/p", [["vit.py"]])
    outcome = run.drive("python", "o/p", tmp_path, tmp_path, True, "keras2", reuse=True)
    assert outcome["ok"] and len(ran) == 1  # the stale log was not read: the driver ran
    ran.clear()
    run.drive("python", "o/p", tmp_path, tmp_path, True, "keras2", reuse=True)
    assert ran == []  # the log just written is newer than the drivers: read again
