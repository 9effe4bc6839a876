"""The result cache holds data only: a planted file cannot run code or crash the run."""
from __future__ import annotations

import json
import pickle

import pytest

from tflint_gpu import cli
from tflint_gpu.engine.cache import Cache, finding_from_json, finding_to_json
from tflint_gpu.findings import Edit, Finding, FixInfo, Safety
from tflint_gpu.notebook import CellEdit, NotebookFinding

from conftest import SAMPLE, write


def _cache_file(project):
    [path] = list((project / ".tflint_gpu_cache").glob("*.json"))
    return path


class _Payload:
    def __reduce__(self):
        import os

        return (os.mkdir, (str(_Payload.marker),))


@pytest.mark.parametrize("planted", ["pickle", "wrong-type", "wrong-field", "not-json", "deep"])
def test_a_planted_cache_file_is_a_miss_and_runs_nothing(project, capsys, planted):
    write(project, "a.py", SAMPLE)
    assert cli.main(["a.py"]) == 1
    first = capsys.readouterr().out
    cache = _cache_file(project)
    _Payload.marker = project / "pwned"
    data = json.loads(cache.read_text())
    if planted == "pickle":
        raw = pickle.dumps({"x": _Payload()})
    elif planted == "wrong-type":
        raw = json.dumps([1, 2, 3]).encode()
    elif planted == "wrong-field":
        entry = next(iter(data["entries"].values()))
        entry["findings"][0]["row"] = "4"
        raw = json.dumps(data).encode()
    elif planted == "not-json":
        raw = b"\x80\x04\x95 not json"
    else:
        raw = b"[" * 100000
    cache.write_bytes(raw)
    assert cli.main(["a.py"]) == 1
    assert capsys.readouterr().out == first
    assert not _Payload.marker.exists()
    json.loads(_cache_file(project).read_text())  # rewritten as JSON


def test_the_cache_folder_tells_git_and_backup_tools_to_skip_it(project):
    write(project, "a.py", SAMPLE)
    cli.main(["a.py"])
    folder = project / ".tflint_gpu_cache"
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_findings_round_trip_through_json_with_their_class():
    fix = FixInfo("m", Safety.UNSAFE, [Edit("x", (1, 0), (1, 2))])
    plain = Finding("TFG201", "msg", "a.py", 3, 4, 3, 9, fix, "name")
    cell_fix = FixInfo("m", Safety.SAFE, [CellEdit("y", (2, 1), (2, 3), cell=4)])
    notebook = NotebookFinding("TFG101", "msg", "n.ipynb", 2, 1, 2, 5, cell_fix, "n", cell=4, source_row=9,
                               file_row=30)
    for finding in (plain, notebook, Finding("TFG101", "m", "a.py", 1, 0, 1, 1)):
        back = finding_from_json(json.loads(json.dumps(finding_to_json(finding))))
        assert back == finding and type(back) is type(finding)
        assert all(type(a) is type(b) for a, b in zip(back.fix.edits, finding.fix.edits)) if finding.fix else True


@pytest.mark.parametrize("change", [
    lambda d: d.update(row=True),
    lambda d: d.update(extra=1),
    lambda d: d.pop("code"),
    lambda d: d["fix"].update(safety="maybe"),
    lambda d: d["fix"]["edits"][0].update(start=[1, -1]),
    lambda d: d["fix"]["edits"][0].update(start=[1, 2, 3]),
])
def test_a_finding_read_back_is_checked_field_by_field(change):
    fix = FixInfo("m", Safety.SAFE, [Edit("x", (1, 0), (1, 2))])
    data = finding_to_json(Finding("TFG201", "msg", "a.py", 3, 4, 3, 9, fix, "name"))
    change(data)
    with pytest.raises(Exception) as caught:
        finding_from_json(data)
    assert type(caught.value).__name__ == "Invalid"


def test_a_cache_of_another_format_is_empty(tmp_path):
    cache = Cache(tmp_path, "key")
    cache.path.write_text(json.dumps({"format": 0, "entries": {}}))
    assert Cache(tmp_path, "key").entries == {}


@pytest.mark.parametrize("deps", [7, None, ["a"]])
def test_an_entry_whose_project_deps_are_not_a_string_is_a_miss(tmp_path, deps):
    cache = Cache(tmp_path, "key")
    (tmp_path / "a.py").write_text("x = 1\n")
    cache.put(str(tmp_path / "a.py"), [], '[["utils",""]]')
    cache.save()
    data = json.loads(cache.path.read_text())
    next(iter(data["entries"].values()))["deps"] = deps
    cache.path.write_text(json.dumps(data))
    assert Cache(tmp_path, "key").entries == {}


def test_an_entry_is_reused_only_while_its_project_deps_hold(tmp_path):
    from tflint_gpu.semantic.project import ProjectIndex, dependencies_valid

    (tmp_path / "a.py").write_text("from utils import *\n")
    cache = Cache(tmp_path, "key")
    cache.put(str(tmp_path / "a.py"), [], '[["utils",""]]')  # read: no module utils
    index = ProjectIndex(str(tmp_path))
    assert cache.get(str(tmp_path / "a.py"), lambda deps: dependencies_valid(index, deps)) == []
    (tmp_path / "utils.py").write_text("import tensorflow as tf\n")
    index = ProjectIndex(str(tmp_path))
    assert cache.get(str(tmp_path / "a.py"), lambda deps: dependencies_valid(index, deps)) is None
    assert not dependencies_valid(index, "not json") and not dependencies_valid(index, '[["utils", 3]]')


def test_the_project_summaries_are_reused_by_content(tmp_path):
    from tflint_gpu.engine.cache import ProjectCache

    (tmp_path / "a.py").write_text("import tensorflow as tf\n")
    store = ProjectCache(tmp_path / "cache")
    first = store.load(str(tmp_path / "a.py"))
    store.save()
    (tmp_path / "b.py").write_text("import tensorflow as tf\n")  # same text, another file
    again = ProjectCache(tmp_path / "cache")
    assert again.summaries and again.load(str(tmp_path / "b.py")).digest == first.digest
    assert again.load(str(tmp_path / "missing.py")) is None


def test_a_text_summarised_before_is_not_compiled_again(tmp_path, monkeypatch):
    # stdin and flake8: the file's own text, cached by content, gives its imports and syntax verdict.
    from tflint_gpu.engine import lint
    from tflint_gpu.engine.cache import ProjectCache
    from tflint_gpu.rules.base import all_rules
    from tflint_gpu.semantic.project import ProjectFile, ProjectIndex

    text = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    return x.numpy()\n"
    (tmp_path / "a.py").write_text(text)
    store = ProjectCache(tmp_path / "cache")
    store.load(str(tmp_path / "a.py"))
    view = ProjectFile(ProjectIndex(str(tmp_path), loader=store.load, by_text=store.of_text), str(tmp_path / "a.py"))
    assert view.own_summary(text) is store.of_text(text) is not None
    assert view.own_summary(text + "x = 1\n") is None  # an edited buffer is compiled
    compiled = []
    original = lint.check_syntax
    monkeypatch.setattr(lint, "check_syntax", lambda *args: compiled.append(args) or original(*args))
    clean = "import tensorflow as tf\n\n\ndef f(x):\n    return tf.add(x, 1)\n"
    (tmp_path / "b.py").write_text(clean)
    store.load(str(tmp_path / "b.py"))
    other = ProjectFile(view.index, str(tmp_path / "b.py"))
    assert lint.lint_source(clean, str(tmp_path / "b.py"), list(all_rules()), project=other).findings == []
    assert compiled == []
    codes = [f.code for f in lint.lint_source(text, str(tmp_path / "a.py"), list(all_rules()), project=view).findings]
    # Only a file with findings is compiled, once, for its statements' lines (the positions of its findings).
    assert "TFG101" in codes and len(compiled) == 1
    compiled.clear()
    lint.lint_source(text + "x = 1\n", str(tmp_path / "a.py"), list(all_rules()), project=view)
    assert len(compiled) == 1  # not known: CPython's verdict as for any file, its tree then serving the positions


def test_the_cache_belongs_to_one_python(monkeypatch):
    # Which texts are Python depends on the interpreter: a cache is not shared across versions.
    import types

    from tflint_gpu.engine import cache

    here = cache.code_version()
    monkeypatch.setattr(cache, "sys", types.SimpleNamespace(implementation=types.SimpleNamespace(name="cpython"),
                                                            version_info=(3, 99, 0)))
    assert cache.code_version() != here
