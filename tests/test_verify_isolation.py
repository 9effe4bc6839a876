"""`tflint-gpu verify` run inside a repository never imports that repository's code: every
child process starts isolated from the current folder (issue 34). The planted modules write
a marker file when imported, so the test sees an import even when the child swallows errors."""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import textwrap

import pytest

from tflint_gpu.verify import command, harness

HAS_TENSORFLOW = importlib.util.find_spec("tensorflow") is not None
needs_tensorflow = pytest.mark.skipif(not HAS_TENSORFLOW, reason="tensorflow is not installed")

PLAIN = '''"""A plain example."""
import tensorflow as tf

EXPECT = "equivalent"


def main(size):
    return tf.constant([1.0, 2.0]) * 2.0
'''


def plant(folder, marker):
    """A repository whose tensorflow, numpy and tflint_gpu write ``marker`` and raise when imported."""
    body = textwrap.dedent(f"""
        with open({str(marker)!r}, "a") as handle:
            handle.write(__name__ + " from " + __file__ + "\\n")
        raise ImportError("planted module imported")
    """)
    for name in ("tensorflow.py", "numpy.py", "keras.py", "tflint_gpu/__init__.py", "tflint_gpu/verify/__init__.py"):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    (folder / "tflint_gpu" / "verify" / "runner.py").write_text(body, encoding="utf-8")
    return folder


@pytest.fixture
def repository(tmp_path, monkeypatch):
    """(planted repository, which is the current folder; the marker file)."""
    marker = tmp_path / "imported.txt"
    repo = plant(tmp_path / "repo", marker)
    monkeypatch.chdir(repo)
    return repo, marker


def parse(*argv):
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(list(argv))


def examples(folder, code="TFG201"):
    """An examples folder with one plain example pair (after.py is before.py: the golden fix holds)."""
    pair = folder / code
    pair.mkdir(parents=True)
    (pair / "before.py").write_text(PLAIN, encoding="utf-8")
    (pair / "after.py").write_text(PLAIN, encoding="utf-8")
    return folder


def test_the_child_import_path_leaves_out_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(harness.sys, "path", ["", ".", str(tmp_path), str(tmp_path / "src"), "/nowhere/at/all",
                                              os.path.dirname(os.__file__)])
    (tmp_path / "src").mkdir()
    # the current folder, under any spelling, is left out; a folder inside it that the user put on
    # the path (PYTHONPATH=src, a virtual environment in the project) is kept, in order
    assert harness.child_path() == [str(tmp_path / "src"), os.path.dirname(os.__file__)]


def test_the_child_command_is_isolated_and_runs_in_a_folder_of_its_own(tmp_path, monkeypatch):
    seen = {}

    def fake_run(command, **options):
        seen.update(command=command, **options)
        raise harness.subprocess.TimeoutExpired(command, 1)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(harness.subprocess, "run", fake_run)
    harness.probe("gpu", timeout=1)
    assert seen["command"][:2] == [harness.sys.executable, "-I"]
    assert "-m" not in seen["command"]
    assert seen["cwd"] is not None and os.path.realpath(seen["cwd"]) != os.path.realpath(tmp_path)
    assert not os.path.exists(seen["cwd"])  # a temporary folder, removed after the run


@needs_tensorflow
def test_the_device_probe_imports_neither_the_repositorys_tensorflow_nor_its_tflint_gpu(repository):
    repo, marker = repository
    found = harness.probe("cpu")
    assert not marker.exists(), marker.read_text()
    assert found.get("error") is None, found
    assert found["tf_version"] and found["package"] == str(harness.PACKAGE_DIR)


@needs_tensorflow
def test_verify_device_gpu_inside_a_repository_imports_none_of_its_modules(repository, tmp_path, capsys):
    repo, marker = repository
    root = examples(tmp_path / "examples")
    code = command.run(parse("--device", "gpu", "--examples", str(root), "--rule", "TFG201", "--repeat", "1",
                             "--format", "json"))
    assert not marker.exists(), marker.read_text()
    captured = capsys.readouterr()
    if code == 2:  # no GPU here: the real TensorFlow said so
        assert "no GPU visible to TensorFlow" in captured.err, captured.err
    else:
        assert [r["verdict"] for r in json.loads(captured.out)] == ["equivalent"], captured.out


@needs_tensorflow
def test_verify_device_cpu_imports_nothing_from_the_current_folder_nor_the_examples_folder(repository, capsys):
    repo, marker = repository
    root = examples(repo / "examples")  # the repository's own examples, --examples examples
    plant(root / "TFG201", marker)  # beside before.py and after.py too
    code = command.run(parse("--device", "cpu", "--examples", "examples", "--rule", "TFG201", "--repeat", "1",
                             "--format", "json"))
    assert not marker.exists(), marker.read_text()
    records = json.loads(capsys.readouterr().out)
    assert [r["verdict"] for r in records] == ["equivalent"], records
    assert code == 0
