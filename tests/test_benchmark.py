"""The benchmark script still runs (no timing is asserted: machines here are noisy)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_speed_benchmark_runs_on_a_few_files_and_prints_ratios():
    examples = ROOT / "examples"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "speed.py"), str(examples), "--limit", "4"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "x the parse" in done.stdout and "cached re-run" in done.stdout, done.stdout
    for row in ("with the project index", "each file alone (no index)", "the project index alone",
                "faster than cold", "one file inside the project"):
        assert row in done.stdout, done.stdout
