"""Verify examples/<CODE>/ pairs: golden fix check, two child runs, a verdict.

This module runs in the linter's process and never imports TensorFlow; the
children (``tflint_gpu.verify.runner``) do. NumPy (for comparing results) is
imported only when examples are verified, so the linter's CLI, which builds
its ``verify`` options from here, runs without it.
"""
from __future__ import annotations

import ast
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Type


PACKAGE_DIR = Path(__file__).resolve().parents[1]
PACKAGE_PARENT = PACKAGE_DIR.parent
CODE_PATTERN = re.compile(r"^[A-Z]+[0-9]+$")
DEFAULT_TIMEOUT = {"small": 300.0, "large": 1800.0}


@dataclass
class Record:
    rule: str
    example: str
    verdict: str
    evidence: str
    device: Optional[str] = None
    tf_version: Optional[str] = None
    before_seconds: Optional[float] = None
    after_seconds: Optional[float] = None
    ratio: Optional[float] = None
    # The spread of the timed calls: each side's fastest and slowest call, and the ratio's bounds
    # (before's fastest over after's slowest, before's slowest over after's fastest).
    before_min: Optional[float] = None
    before_max: Optional[float] = None
    after_min: Optional[float] = None
    after_max: Optional[float] = None
    ratio_min: Optional[float] = None
    ratio_max: Optional[float] = None
    traces_before: Optional[int] = None
    traces_after: Optional[int] = None
    size: str = "small"

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


def default_examples_dir() -> Path:
    """The examples: ``tflint_gpu/examples/`` in an installed wheel (package data), else
    ``examples/`` of the source checkout the package runs from (editable installs too)."""
    installed = PACKAGE_DIR / "examples"
    return installed if installed.is_dir() else PACKAGE_PARENT / "examples"


def example_codes(root: Path) -> List[str]:
    """Codes that have a directory under ``root``."""
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and CODE_PATTERN.match(p.name))


def registry() -> Dict[str, Type]:
    from tflint_gpu.rules.base import REGISTRY, all_rules

    list(all_rules())  # imports every rule module
    return REGISTRY


class Settings(NamedTuple):
    """An example's literal top-level settings."""

    expect: Optional[str]
    tolerance: Optional[float]
    expect_error: Optional[str]


def module_settings(source: str) -> Settings:
    """``EXPECT``, ``TOLERANCE`` and ``EXPECT_ERROR`` as literal top-level assignments of an example."""
    expect: Optional[str] = None
    tolerance: Optional[float] = None
    expect_error: Optional[str] = None
    for stmt in ast.parse(source).body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name) and stmt.value is not None:
                    try:
                        value = ast.literal_eval(stmt.value)
                    except ValueError:
                        continue
                    if target.id == "EXPECT":
                        expect = value
                    elif target.id == "TOLERANCE":
                        tolerance = float(value)
                    elif target.id == "EXPECT_ERROR":
                        expect_error = value
    return Settings(expect, tolerance, expect_error)


def golden_check(rule: Type, before_path: Path, after_path: Path) -> Optional[str]:
    """None when after.py is exactly the fixer's output and lints clean; else the problem.

    A rule that offers no fix, or whose fix leaves before.py as it is (an example of a form it does
    not fix), has a hand-written after.py (the rewrite its docs recommend): before.py must then have a
    finding of the rule and after.py none."""
    from tflint_gpu.engine.fix import fix_source
    from tflint_gpu.engine.lint import lint_source

    before = before_path.read_text(encoding="utf-8")
    after = after_path.read_text(encoding="utf-8")
    outcome = None
    if rule.fix_safety is not None:
        try:
            outcome = fix_source(before, str(before_path), [rule], unsafe=True)
        except Exception as error:  # a ParseError or a rule crash
            return f"golden fix: {type(error).__name__}: {error}"
    if outcome is None or (not outcome.refused and outcome.source == before and after != before):
        # a rule without a fix, or an example of a form its fix leaves alone (TFG602's two models), rewritten
        # by hand
        try:
            found = lint_source(before, str(before_path), [rule]).findings
            remaining = lint_source(after, str(after_path), [rule]).findings
        except Exception as error:  # a ParseError or a rule crash
            return f"example: {type(error).__name__}: {error}"
        if not found:
            return f"example: before.py has no {rule.code} finding"
        if remaining:
            rows = ", ".join(str(f.row) for f in remaining)
            return f"example: after.py still has {len(remaining)} {rule.code} finding(s) (line {rows})"
        return None
    try:
        remaining = lint_source(after, str(after_path), [rule]).findings
    except Exception as error:  # a ParseError or a rule crash
        return f"golden fix: {type(error).__name__}: {error}"
    if outcome.refused:
        return f"golden fix: the {rule.code} fix of before.py does not parse"
    if outcome.source != after:
        expected, actual = outcome.source.splitlines(), after.splitlines()
        for line, (want, have) in enumerate(zip(expected, actual), 1):
            if want != have:
                return (f"golden fix: after.py line {line} is {have.strip()!r}, "
                        f"the {rule.code} fix gives {want.strip()!r}")
        return (f"golden fix: after.py has {len(actual)} lines, the {rule.code} fix gives {len(expected)}"
                if len(expected) != len(actual) else "golden fix: after.py differs from the fix (line endings)")
    if remaining:
        rows = ", ".join(str(f.row) for f in remaining)
        return f"golden fix: after.py still has {len(remaining)} {rule.code} finding(s) (line {rows})"
    return None


# The child's first lines, run with ``python -I`` (no current folder, script folder, PYTHON*
# variables nor user site on its import path): the parent's import path without the current
# folder, then this very tflint_gpu package by its path (an editable install or a source
# checkout included, whatever the path holds), then the runner.
_BOOTSTRAP = """\
import importlib.util, json, os, sys
package, path = sys.argv[1], json.loads(sys.argv[2])
sys.path[:] = path + [entry for entry in sys.path if entry not in path]
spec = importlib.util.spec_from_file_location(
    "tflint_gpu", os.path.join(package, "__init__.py"), submodule_search_locations=[package])
module = importlib.util.module_from_spec(spec)
sys.modules["tflint_gpu"] = module
spec.loader.exec_module(module)
from tflint_gpu.verify.runner import main
sys.exit(main(sys.argv[3:]))
"""


def child_path() -> List[str]:
    """This process's import path for a child, less the current folder under any spelling
    (``''``, ``.``, its full path): each entry made absolute, those that do not exist left out.
    So TensorFlow installed in the user site or on ``PYTHONPATH`` is found as here, and a
    ``tensorflow.py`` or ``tflint_gpu/`` in the folder ``verify`` was started from is not."""
    try:
        here: Optional[str] = os.path.realpath(os.getcwd())
    except OSError:  # the current folder was removed: relative entries name nothing
        here = None
    path: List[str] = []
    for entry in sys.path:
        if not entry or not isinstance(entry, str) or (here is None and not os.path.isabs(entry)):
            continue
        full = os.path.abspath(entry)
        if os.path.realpath(full) == here or not os.path.exists(full) or full in path:
            continue
        path.append(full)
    return path


def child_command(arguments: Sequence[str]) -> List[str]:
    """The command that starts the runner with ``arguments``, isolated from the current folder."""
    return [sys.executable, "-I", "-c", _BOOTSTRAP, str(PACKAGE_DIR), json.dumps(child_path()), *arguments]


def child_env(device: str) -> Dict[str, str]:
    env = dict(os.environ)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_PARENT), env.get("PYTHONPATH", "")]))
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = "-1"
    return env


def run_child(file: Optional[Path], out: Path, *, size: str, repeat: int, device: str, timeout: float,
              before: Optional[Tuple[Path, Path]] = None, probe: bool = False) -> Dict[str, Any]:
    """Start the runner on ``file``; return its report (an ``error`` entry, phase ``child process``,
    when it timed out or died). Paths are made absolute: the child runs isolated (``child_command``)
    in an empty temporary folder of its own, never in the current folder or the example's."""
    file = file.resolve() if file is not None else None
    command = child_command([str(file or ""), "--size", size, "--repeat", str(repeat),
                             "--out", str(Path(out).resolve())])
    if before is not None:
        command += ["--before-file", str(before[0].resolve()), "--before-result", str(before[1].resolve())]
    if device == "gpu":
        command.append("--require-gpu")
    if probe:
        command.append("--probe")
    cwd = tempfile.mkdtemp(prefix="tflint-verify-run-")
    try:
        done = subprocess.run(command, env=child_env(device), cwd=cwd, timeout=timeout,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except subprocess.TimeoutExpired:
        return {"error": f"TimeoutExpired: no result within {timeout:g} s", "phase": "child process"}
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    if out.exists():
        with out.open("rb") as handle:
            return pickle.load(handle)
    return {"error": f"ChildProcessError: {_exit_status(done.returncode)}: {_last_line(done.stderr)}",
            "phase": "child process"}


def _exit_status(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"runner killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"runner killed by signal {-returncode}"
    return f"runner exited with code {returncode}"


_LOG_LINE = re.compile(r"^([IWEF]\d{4} |WARNING: All log messages before absl)")


def _last_line(stderr: Optional[str]) -> str:
    """The child's last stderr line that is not a TensorFlow/absl log line."""
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    useful = [line for line in lines if not _LOG_LINE.match(line)]
    return useful[-1] if useful else "no output"


def probe(device: str, timeout: float = 300.0) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tflint-verify-") as tmp:
        return run_child(None, Path(tmp) / "probe.pkl", size="small", repeat=0, device=device,
                         timeout=timeout, probe=True)


def verify_example(code: str, rule: Optional[Type], root: Path, *, size: str, repeat: int, device: str,
                   timeout: float) -> Record:
    root = Path(root).resolve()
    directory = root / code
    example = f"{root.name}/{code}"
    record = Record(code, example, "failed", "", size=size)
    before_path, after_path = directory / "before.py", directory / "after.py"
    if rule is None:
        record.evidence = f"no registered rule {code}"
        return record
    if not (before_path.is_file() and after_path.is_file()):
        record.evidence = f"no example: {example}/before.py and after.py are needed"
        return record
    golden = golden_check(rule, before_path, after_path)
    try:
        settings = module_settings(before_path.read_text(encoding="utf-8"))
    except SyntaxError as error:
        record.evidence = f"before.py: SyntaxError: {error.msg}"
        return record
    with tempfile.TemporaryDirectory(prefix=f"tflint-verify-{code}-") as tmp:
        before_out, after_out = Path(tmp) / "before.pkl", Path(tmp) / "after.pkl"
        options = dict(size=size, repeat=repeat, device=device, timeout=timeout)
        before = run_child(before_path, before_out, **options)
        after = run_child(after_path, after_out,
                          before=(before_path, before_out) if before_out.exists() else None, **options)
    from tflint_gpu.verify.compare import decide

    verdict, evidence = decide(_side(before), _side(after), expect=settings.expect, tolerance=settings.tolerance,
                               changed=after.get("changed"), expect_error=settings.expect_error)
    if golden is not None:
        verdict, evidence = "failed", f"{golden} (run: {verdict}: {evidence})"
    record.verdict, record.evidence = verdict, evidence
    record.device = after.get("device") or before.get("device")
    record.tf_version = after.get("tf_version") or before.get("tf_version")
    record.before_seconds, record.after_seconds = before.get("median"), after.get("median")
    spread(record, before.get("seconds") or (), after.get("seconds") or ())
    record.traces_before, record.traces_after = before.get("traces"), after.get("traces")
    return record


def spread(record: Record, before: Sequence[float], after: Sequence[float]) -> None:
    """Set ``record``'s ratio of the medians and the spread of the timed calls (each side's
    fastest and slowest, the ratio's bounds) from each side's timed calls' seconds."""
    if before:
        record.before_min, record.before_max = min(before), max(before)
    if after:
        record.after_min, record.after_max = min(after), max(after)
    if record.before_seconds is not None and record.after_seconds:
        record.ratio = record.before_seconds / record.after_seconds
        if before and after and min(after) > 0:
            record.ratio_min, record.ratio_max = min(before) / max(after), max(before) / min(after)


def _side(report: Dict[str, Any]):
    from tflint_gpu.verify.compare import Side

    error = report.get("error")
    if error is not None and report.get("phase") not in (None, "warm-up"):
        error = f"{error} (during {report['phase']})"
    return Side(error=error, result=report.get("result"), error_type=report.get("error_type"),
                phase=report.get("phase"), error_kinds=tuple(report.get("error_kinds") or ()))


def verify(codes: Sequence[str], root: Path, *, size: str = "small", repeat: int = 5, device: str = "auto",
           timeout: Optional[float] = None, jobs: int = 1,
           progress: Optional[Callable[[int], None]] = None) -> List[Record]:
    """Verify each code's example; one Record a code, in the order given. ``progress(done)``:
    told how many examples are done as each finishes."""
    rules = registry()
    root = Path(root).resolve()
    limit = timeout if timeout is not None else DEFAULT_TIMEOUT[size]
    done = [0]
    lock = threading.Lock()

    def one(code: str) -> Record:
        record = verify_example(code, rules.get(code), root, size=size, repeat=repeat, device=device, timeout=limit)
        if progress is not None:
            with lock:
                done[0] += 1
                progress(done[0])
        return record

    if jobs <= 1:
        return [one(code) for code in codes]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, codes))
