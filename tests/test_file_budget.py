"""One file never holds a run hostage (issue 34): a per-file time budget (command line, flake8 plugin,
language server's engine call), the largest files scheduled one a task, workers that die with an
interrupted run. The slow file is made slow by a rule patched to spin in Python (or to sleep in
native code, which the budget's exception cannot stop: the main process ends that worker)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLE, write
from tflint_gpu import config
from tflint_gpu.engine import run

SLOW_MARK = "# SLOW"


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


@pytest.fixture
def slow_rule(monkeypatch):
    """TFG101 spins (pure Python) on a file whose text holds ``# SLOW``; returns a setter of how long."""
    from tflint_gpu.rules.base import REGISTRY

    rule = REGISTRY["TFG101"]
    original = rule.visit_Call
    how = {"seconds": 1000.0, "native": False}

    def slow(self, node, ctx):
        if SLOW_MARK in ctx.module.code:
            if how["native"]:
                time.sleep(how["seconds"])  # in C: no asynchronous exception reaches it
            else:
                _spin(how["seconds"])
        return original(self, node, ctx)

    monkeypatch.setattr(rule, "visit_Call", slow)
    return how


def _project_with_slow_file(project: Path, good: int) -> None:
    for i in range(good):
        write(project, f"m{i:02d}.py", SAMPLE)
    write(project, "slow.py", SAMPLE + SLOW_MARK + "\n")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_over_budget_is_one_line_and_the_run_goes_on(project, run_cli, slow_rule, jobs):
    _project_with_slow_file(project, 9)
    started = time.monotonic()
    code, out, err = run_cli("--jobs", jobs, "--file-timeout", "1", "--format", "json", ".")
    assert time.monotonic() - started < 60  # does not hang (the slow file would spin 1000 s)
    assert code == 2  # a file the analysis failed on, as the README says
    assert err.strip() == "tflint-gpu: error: ./slow.py: analysis stopped after 1 s"
    found = json.loads(out)
    assert {os.path.basename(item["filename"]) for item in found} == {f"m{i:02d}.py" for i in range(9)}
    assert len(found) == 27


def test_the_budget_is_read_from_the_configuration(project, run_cli, slow_rule):
    (project / "pyproject.toml").write_text("[tool.tflint-gpu]\nfile-timeout = 1.5\n")
    _project_with_slow_file(project, 2)
    code, out, err = run_cli("--jobs", "1", ".")
    assert code == 2
    assert err.strip() == "tflint-gpu: error: ./slow.py: analysis stopped after 1.5 s"
    assert "m00.py:9:16: TFG101" in out and "m01.py:9:16: TFG101" in out


def test_zero_means_no_budget(project, run_cli, slow_rule):
    slow_rule["seconds"] = 2.0
    (project / "pyproject.toml").write_text("[tool.tflint-gpu]\nfile-timeout = 1\n")
    _project_with_slow_file(project, 1)
    code, out, err = run_cli("--jobs", "1", "--file-timeout", "0", ".")
    assert (code, err) == (1, "")
    assert "slow.py:9:16: TFG101" in out


@pytest.mark.parametrize("value", ['"fast"', "-1", "true", "nan", "[1]"])
def test_a_bad_budget_in_the_configuration_is_a_configuration_error(project, run_cli, value):
    (project / "pyproject.toml").write_text(f"[tool.tflint-gpu]\nfile-timeout = {value}\n")
    write(project, "a.py", SAMPLE)
    code, _, err = run_cli("a.py")
    assert code == 2
    assert "file-timeout: expected a number of seconds (0: no limit)" in err


@pytest.mark.parametrize("value", ["soon", "-3", "inf"])
def test_a_bad_budget_on_the_command_line_is_a_usage_error(project, run_cli, value):
    write(project, "a.py", SAMPLE)
    code, _, err = run_cli(f"--file-timeout={value}", "a.py")
    assert code == 2
    assert f"--file-timeout: expected a number of seconds (0: no limit), got \"{value}\"" in err


def test_the_default_budget(project):
    from tflint_gpu.engine import budget as budgets

    settings = config.Resolver().settings_for(str(project / "a.py"))
    assert settings.file_timeout == budgets.DEFAULT_SECONDS == 60


def test_stdin_has_the_budget_too(project, slow_rule, monkeypatch, capsys):
    import io

    from tflint_gpu import cli

    data = (SAMPLE + SLOW_MARK + "\n").encode()
    monkeypatch.setattr(sys, "stdin", type("In", (), {"buffer": io.BytesIO(data)})())
    code = cli.main(["--no-cache", "--file-timeout", "1", "--stdin-filename", "s.py", "-"])
    assert code == 2
    assert capsys.readouterr().err.strip() == "tflint-gpu: error: s.py: analysis stopped after 1 s"


def test_a_worker_stuck_in_native_code_is_ended_and_its_file_reported(project, run_cli, slow_rule):
    """time.sleep is C: the budget's exception waits for it; the main process ends the worker past
    ``hard_limit`` (2 x budget + 5 s) and reports that file alone."""
    slow_rule["native"] = True
    _project_with_slow_file(project, 9)
    started = time.monotonic()
    code, out, err = run_cli("--jobs", "2", "--file-timeout", "1", "--format", "json", ".")
    assert time.monotonic() - started < 60
    assert code == 2
    assert err.strip() == "tflint-gpu: error: ./slow.py: analysis stopped after 1 s"
    assert len(json.loads(out)) == 27


def test_lint_source_stops_at_its_budget_on_any_thread(slow_rule):
    """The language server's call: ``lint_source(..., budget=)`` raises AnalysisTimeout, also when
    called from a thread other than the main one; the next call on that thread is not disturbed."""
    from tflint_gpu.engine import budget as budgets
    from tflint_gpu.engine.lint import lint_source
    from tflint_gpu.rules.base import all_rules

    outcome = {}

    def work():
        try:
            lint_source(SAMPLE + SLOW_MARK + "\n", "slow.py", list(all_rules()), budget=1)
        except budgets.AnalysisTimeout as error:
            outcome["error"] = str(error)
        outcome["next"] = [f.code for f in lint_source(SAMPLE, "a.py", list(all_rules()), budget=1).findings]

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(60)
    assert not thread.is_alive()
    expected = [f.code for f in lint_source(SAMPLE, "a.py", list(all_rules())).findings]
    assert outcome == {"error": "analysis stopped after 1 s", "next": expected} and expected


def test_a_budget_stops_work_on_the_large_stack_thread():
    """A parse (or anything run by ``on_large_stack`` for the file) is stopped there too, and
    the large-stack thread serves the next call."""
    from tflint_gpu.engine import budget as budgets
    from tflint_gpu.engine.lint import on_large_stack

    started = time.monotonic()
    with pytest.raises(budgets.AnalysisTimeout):
        with budgets.time_budget(1):
            on_large_stack(_spin, 1000)
    assert time.monotonic() - started < 60
    assert on_large_stack(sum, [1, 2]) == 3
    with budgets.time_budget(5):  # work that ends in time is not disturbed afterwards
        assert on_large_stack(sum, [3]) == 3
    _spin(0.2)


def test_the_flake8_plugin_reports_a_file_over_budget_as_one_line(project, slow_rule):
    from tflint_gpu.flake8_plugin import Flake8Plugin

    (project / "pyproject.toml").write_text("[tool.tflint-gpu]\nfile-timeout = 1\n")
    slow = write(project, "slow.py", SAMPLE + SLOW_MARK + "\n")
    good = write(project, "good.py", SAMPLE)
    lines = list(Flake8Plugin(None, str(slow), slow.read_text().splitlines(True)).run())
    assert [(row, col, text) for row, col, text, _ in lines] == [
        (1, 0, "TFG000 analysis stopped after 1 s; file not checked (file-timeout in [tool.tflint-gpu])")]
    codes = [text.split()[0] for _, _, text, _ in Flake8Plugin(None, str(good), good.read_text().splitlines(True)).run()]
    assert "TFG101" in codes


def test_the_largest_files_are_one_a_task_largest_first():
    sizes = [10, 5000, 20, 4000, 30] + [1] * 60
    tasks = run.batches(sizes, 2)
    assert tasks[:4] == [[1], [3], [4], [2]]  # the two large files are never in one batch
    assert sorted(i for task in tasks for i in task) == list(range(len(sizes)))
    assert all(len(task) <= run.MAX_BATCH for task in tasks)
    # Half of all the bytes in files alone, whatever their number.
    sizes = [100] * 40 + [1] * 400
    tasks = run.batches(sizes, 2)
    alone = [task[0] for task in tasks if len(task) == 1 and sizes[task[0]] == 100]
    assert len(alone) >= 22


SCRIPT = """
import sys, time
sys.path.insert(0, {root!r})
from tflint_gpu.rules.base import REGISTRY

rule = REGISTRY["TFG101"]
original = rule.visit_Call

def slow(self, node, ctx):
    end = time.monotonic() + 1000
    while time.monotonic() < end:
        pass
    return original(self, node, ctx)

rule.visit_Call = slow
from tflint_gpu import cli
sys.exit(cli.main(sys.argv[1:]))
"""


def _children(pid: int):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_run_leaves_no_worker_running(tmp_path, how):
    for i in range(10):
        write(tmp_path, f"m{i}.py", SAMPLE)
    script = write(tmp_path, "slow_run.py", SCRIPT.format(root=str(Path(__file__).resolve().parents[1])))
    # The child takes Ctrl-C as a terminal's foreground job does, whatever this process inherited (a shell's
    # background job starts with SIGINT ignored, and so would the child: Python then installs no
    # KeyboardInterrupt handler, and the run rightly goes on).
    process = subprocess.Popen(
        [sys.executable, str(script), "--no-cache", "--jobs", "2", "--file-timeout", "0", str(tmp_path)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    workers = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.2)
            workers = _children(process.pid)
        assert len(workers) == 2, "the workers did not start"
        time.sleep(1.0)  # they are spinning on their files now
        process.send_signal(how)
        _, err = process.communicate(timeout=30)
        # One line for Ctrl-C (130); SIGTERM ends the run as it ends any process (128 + 15).
        assert (process.returncode, err.decode().strip().splitlines()[-1:]) == (
            (130, ["tflint-gpu: interrupted"]) if how == signal.SIGINT else (143, []))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.1)
        assert not [pid for pid in workers if _alive(pid)]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_file_whose_analysis_would_take_too_much_memory_is_one_line(project, run_cli):
    """Memory: about 1.2-3 KB a token; a file over ``MAX_FILE_TOKENS`` is reported as one that
    cannot be read (as one over 8 MiB is: exit 1), without analysing it (nor summarising it for
    the project index), and the others are checked."""
    write(project, "a.py", SAMPLE)
    write(project, "data.py", "import tensorflow as tf\nTABLE = [" + "1, " * 300_000 + "]\n")  # 600,000 tokens
    started = time.monotonic()
    code, out, err = run_cli("--jobs", "1", ".")
    assert time.monotonic() - started < 60  # analysed, it would take about a minute and 1 GB
    assert code == 1
    assert err.strip() == ("tflint-gpu: error: ./data.py: 600,008 tokens, more than the 500,000 one file may "
                           "have (its analysis would take about 1,800 MB); not analysed")
    assert "a.py:9:16: TFG101" in out


def test_no_file_of_keras_or_tf_keras_is_over_the_memory_limit():
    import importlib.util

    checked = 0
    for package in ("keras", "tf_keras"):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(list(spec.submodule_search_locations)[0]) / "src"
        for path in root.rglob("*.py"):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert run.over_token_limit(text, str(path)) is None
            assert len(run._TOKEN.findall(text)) < run.MAX_FILE_TOKENS / 3  # a wide margin
            checked += 1
    if not checked:
        pytest.skip("neither keras nor tf_keras is installed")


def test_a_stopped_budget_leaves_no_signal_behind_for_a_tracer():
    """After a budget stopped work, a later lint under sys.settrace (coverage, a debugger) runs: the
    pending stop was cleared with PyThreadState_SetAsyncExc(id, NULL), which left CPython 3.11's
    'asynchronous exception' signal set, and a traced function's first instruction was retried
    forever (the full test suite hung in test_growth after this file)."""
    script = textwrap.dedent("""
        import sys, time
        from tflint_gpu.engine import budget as budgets
        from tflint_gpu.engine.lint import on_large_stack, lint_source
        from tflint_gpu.rules.base import all_rules

        def spin(seconds):
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                pass

        for work in (lambda: on_large_stack(spin, 1000), lambda: spin(1000)):
            try:
                with budgets.time_budget(0.5):
                    work()
            except budgets.AnalysisTimeout:
                pass
        with budgets.time_budget(5):  # ends in time: nothing was sent
            spin(0.1)
        lines = [0]

        def local(frame, event, arg):
            lines[0] += 1
            return local

        sys.settrace(lambda frame, event, arg: local)
        lint_source("import tensorflow as tf\\nx = tf.constant(1)\\n", "a.py", list(all_rules()))
        sys.settrace(None)
        print("traced", lines[0] > 1000)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "traced True", done.stderr[-2000:]


def test_a_large_file_that_names_no_framework_is_not_refused(project, run_cli):
    """The token cap bounds an analysis; a text that names neither TensorFlow nor Keras is never
    analysed (the prefilter), so a vendored get-pip.py (a million tokens of base85) is not an
    error (it was: exit 1 on a repository that ships one)."""
    write(project, "a.py", SAMPLE)
    write(project, "get_pip.py", "DATA = [" + "1, " * 300_000 + "]\n")  # 600,000 tokens, no framework
    code, out, err = run_cli("--jobs", "1", ".")
    assert "tokens" not in err
    assert code == 1 and "a.py:9:16: TFG101" in out  # a.py's finding
