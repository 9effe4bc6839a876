"""Issue 38, "Ruff users' expectations": configuration files found as Ruff finds them
(``.tflint-gpu.toml`` over ``tflint-gpu.toml`` over ``pyproject.toml`` in each folder, the nearest
folder winning), and one answer to "is this file checked" for the command line, the flake8 plugin
and the language server (``files.force_excluded``): a git-ignored or excluded file that a walk
skips is skipped by all three."""
from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest

from tests.conftest import SAMPLE, write
from tflint_gpu.documents import Documents

# One TFG201 (line 2) and one TFG101 (line 6).
BOTH = textwrap.dedent("""\
    import numpy as np, tensorflow as tf
    x = tf.Variable(np.zeros((3, 3)))

    @tf.function
    def f(t):
        return t.numpy()
""")


def _codes(out: str) -> list:
    return sorted({d["code"] for d in json.loads(out)})


def _config_file(run_cli, path: str) -> str:
    code, out, err = run_cli("--show-settings", "--format", "json", path)
    assert code == 0, err
    return json.loads(out)[0]["config-file"]


# -- tflint-gpu.toml and .tflint-gpu.toml, found as Ruff finds ruff.toml and .ruff.toml -------------

def test_a_standalone_tflint_gpu_toml_is_found_with_its_settings_at_the_top_level(project, run_cli):
    write(project, "sub/tflint-gpu.toml", 'select = ["TFG1"]\n')
    write(project, "sub/a.py", BOTH)
    write(project, "top.py", BOTH)
    code, out, err = run_cli("--format", "json", "sub/a.py")
    assert (code, _codes(out)) == (1, ["TFG101"]), err
    assert _codes(run_cli("--format", "json", "top.py")[1]) == ["TFG101", "TFG201"]  # the root's pyproject
    assert _config_file(run_cli, "sub/a.py") == str(project / "sub" / "tflint-gpu.toml")
    _, text, _ = run_cli("--show-settings", "sub/a.py")
    assert f"  config file     : {project / 'sub' / 'tflint-gpu.toml'}\n" in text


def test_in_one_folder_dot_tflint_gpu_toml_beats_tflint_gpu_toml_beats_pyproject_toml(project, run_cli):
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nselect = ["TFG2"]\n')
    write(project, "tflint-gpu.toml", 'select = ["TFG1"]\n')
    write(project, ".tflint-gpu.toml", 'select = ["TFG201"]\n')
    write(project, "a.py", BOTH)
    assert _config_file(run_cli, "a.py") == str(project / ".tflint-gpu.toml")
    assert _codes(run_cli("--format", "json", "a.py")[1]) == ["TFG201"]
    (project / ".tflint-gpu.toml").unlink()
    assert _config_file(run_cli, "a.py") == str(project / "tflint-gpu.toml")
    assert _codes(run_cli("--format", "json", "a.py")[1]) == ["TFG101"]
    (project / "tflint-gpu.toml").unlink()
    assert _config_file(run_cli, "a.py") == str(project / "pyproject.toml")
    assert _codes(run_cli("--format", "json", "a.py")[1]) == ["TFG201"]


def test_the_nearest_folder_wins_whatever_the_kind_of_file_and_an_empty_standalone_file_counts(project, run_cli):
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no [tool.tflint-gpu]: passed over
    write(project, "tflint-gpu.toml", 'select = ["TFG1"]\n')
    write(project, "pkg/pyproject.toml", '[tool.tflint-gpu]\nselect = ["TFG2"]\n')
    write(project, "pkg/deeper/tflint-gpu.toml", "")  # empty: the defaults, and it stops the search (as Ruff)
    write(project, "pkg/other/pyproject.toml", '[project]\nname = "y"\n')
    for name in ("a.py", "pkg/b.py", "pkg/deeper/c.py", "pkg/other/d.py"):
        write(project, name, BOTH)
    assert _config_file(run_cli, "a.py") == str(project / "tflint-gpu.toml")
    assert _config_file(run_cli, "pkg/b.py") == str(project / "pkg" / "pyproject.toml")
    assert _config_file(run_cli, "pkg/deeper/c.py") == str(project / "pkg" / "deeper" / "tflint-gpu.toml")
    assert _config_file(run_cli, "pkg/other/d.py") == str(project / "pkg" / "pyproject.toml")
    code, out, _ = run_cli("--format", "json", ".")
    found = sorted((os.path.relpath(d["filename"], project).replace(os.sep, "/"), d["code"]) for d in json.loads(out))
    assert found == [("a.py", "TFG101"), ("pkg/b.py", "TFG201"), ("pkg/deeper/c.py", "TFG101"),
                     ("pkg/deeper/c.py", "TFG201"), ("pkg/other/d.py", "TFG201")]


def test_a_tool_table_in_a_standalone_file_is_an_error_saying_where_the_settings_go(project, run_cli):
    write(project, "tflint-gpu.toml", '[tool.tflint-gpu]\nselect = ["TFG1"]\n')
    write(project, "a.py", BOTH)
    for argv in (["a.py"], ["--config", "tflint-gpu.toml", "a.py"]):
        code, out, err = run_cli(*argv)
        assert (code, out) == (2, ""), argv
        (line,) = err.splitlines()
        assert str(project / "tflint-gpu.toml") in line and "top level" in line and "[tool.tflint-gpu]" in line


def test_an_unknown_key_in_a_standalone_file_names_the_file_not_a_tool_table(project, run_cli):
    write(project, "tflint-gpu.toml", 'selekt = ["TFG1"]\n')
    write(project, "a.py", BOTH)
    code, _, err = run_cli("a.py")
    (line,) = err.splitlines()
    assert code == 2 and "selekt" in line and "[tool." not in line and str(project / "tflint-gpu.toml") in line


def test_extend_works_between_standalone_files_and_pyproject(project, run_cli):
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nselect = ["TFG1"]\n')
    write(project, "sub/tflint-gpu.toml", 'extend = "../pyproject.toml"\nextend-select = ["TFG201"]\n')
    write(project, "sub/deeper/.tflint-gpu.toml", 'extend = "../tflint-gpu.toml"\nextend-ignore = ["TFG101"]\n')
    write(project, "sub/a.py", BOTH)
    write(project, "sub/deeper/b.py", BOTH)
    assert _codes(run_cli("--format", "json", "sub/a.py")[1]) == ["TFG101", "TFG201"]
    assert _codes(run_cli("--format", "json", "sub/deeper/b.py")[1]) == ["TFG201"]
    _, out, _ = run_cli("--show-settings", "--format", "json", "sub/deeper/b.py")
    (shown,) = json.loads(out)
    assert shown["config-file"] == str(project / "sub" / "deeper" / ".tflint-gpu.toml")
    assert shown["extends"] == [str(project / "sub" / "tflint-gpu.toml"), str(project / "pyproject.toml")]


def test_the_flake8_plugin_and_the_editors_documents_find_tflint_gpu_toml(project):
    write(project, "sub/.tflint-gpu.toml", 'select = ["TFG1"]\n')
    path = str(write(project, "sub/a.py", BOTH))
    settings = Documents().settings_for(path)
    assert settings.config_file == project / "sub" / ".tflint-gpu.toml"
    assert {r.code[:4] for r in settings.rules} == {"TFG1"}


def test_the_help_and_the_server_name_every_configuration_file(capsys):
    from tflint_gpu import cli

    assert cli.main(["check", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert ".tflint-gpu.toml, tflint-gpu.toml or pyproject.toml with [tool.tflint-gpu]" in help_text
    server = pytest.importorskip("tflint_gpu.server")
    for name in ("pyproject.toml", "tflint-gpu.toml", ".tflint-gpu.toml", ".gitignore", ".ignore"):
        assert server.rereads(f"/p/{name}"), name
    assert not server.rereads("/p/not-tflint-gpu.toml") and not server.rereads("/p/a.py")


# -- one discovery: the command line's walk, the flake8 plugin and the language server agree ------------

@pytest.fixture
def repo(project):
    """A git work tree: ``ignored.py``, ``build_out/`` and ``.git/info/exclude``d ``scratch.py``
    are git-ignored, ``generated/`` excluded by the configuration; ``kept.py`` is checked."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend-exclude = ["generated"]\n')
    write(project, ".gitignore", "ignored.py\nbuild_out/\n")
    write(project, ".git/info/exclude", "scratch.py\n")
    for name in SKIPPED + ["kept.py"]:
        write(project, name, SAMPLE)
    return project


SKIPPED = ["ignored.py", "build_out/b.py", "scratch.py", "generated/g.py"]


def test_the_command_line_walk_skips_them(repo, run_cli):
    code, out, _ = run_cli("--show-files", ".")
    assert (code, out.splitlines()) == (0, ["./kept.py"])
    for name in SKIPPED:  # named, with --force-exclude (pre-commit): skipped as the walk skips them
        assert run_cli("--force-exclude", name)[:2] == (0, ""), name
        assert run_cli(name)[0] == 1, name  # named, without it: checked, as Ruff
        (shown,) = json.loads(run_cli("--show-settings", "--format", "json", name)[1])
        assert shown["excluded"] is True and shown["force-exclude"] is False, name
    (shown,) = json.loads(run_cli("--show-settings", "--format", "json", "kept.py")[1])
    assert shown["excluded"] is False


def test_force_exclude_in_the_configuration_is_read_as_the_option(repo, run_cli):
    (repo / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend-exclude = ["generated"]\nforce-exclude = true\n')
    for name in SKIPPED:
        assert run_cli(name)[:2] == (0, ""), name
        assert run_cli("--no-force-exclude", name)[0] == 1, name
    assert run_cli("kept.py")[0] == 1
    (repo / "pyproject.toml").write_text('[tool.tflint-gpu]\nforce-exclude = "yes"\n')
    code, _, err = run_cli("kept.py")
    assert code == 2 and "force-exclude: expected a boolean" in err


def test_the_editors_documents_skip_what_the_walk_skips(repo):
    documents = Documents()
    for name in SKIPPED:
        assert documents.is_excluded(str(repo / name)), name
    assert not documents.is_excluded(str(repo / "kept.py"))
    (repo / "pyproject.toml").write_text('[tool.tflint-gpu]\nrespect-gitignore = false\n')
    documents = Documents()
    assert [n for n in SKIPPED if documents.is_excluded(str(repo / n))] == []


def test_flake8_skips_what_the_walk_skips(repo, capsys):
    flake8_api = pytest.importorskip("flake8.api.legacy")
    paths = [str(repo / name) for name in SKIPPED + ["kept.py"]]
    report = flake8_api.get_style_guide(select=["TFG"]).check_files(paths)
    out = capsys.readouterr().out
    assert {line.split(":")[0] for line in out.splitlines()} == {str(repo / "kept.py")}
    assert report.total_errors == 3
