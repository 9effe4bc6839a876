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
