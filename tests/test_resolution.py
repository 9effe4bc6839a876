"""Configuration resolved as Ruff resolves it: the nearest configuration per file, `extend`,
globs relative to the file that states them, `respect-gitignore`, `--force-exclude`,
`--show-settings`, `--show-files`; the flake8 plugin and the editor's `Documents` alike."""
from __future__ import annotations

import io
import json
import os
import subprocess
import textwrap

import pytest

from tests.conftest import SAMPLE, write
from tflint_gpu import cli, config
from tflint_gpu.documents import Documents

# One TFG201 (line 2) and one TFG101 (line 6).
BOTH = textwrap.dedent("""\
    import numpy as np, tensorflow as tf
    x = tf.Variable(np.zeros((3, 3)))

    @tf.function
    def f(t):
        return t.numpy()
""")


def found(out: str, root) -> list:
    """(file from the root, code) of the JSON report's findings, sorted."""
    return sorted((os.path.relpath(d["filename"], root).replace(os.sep, "/"), d["code"]) for d in json.loads(out))


def _one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _subproject(project, sub_table: str, root_table: str = 'select = ["TFG2"]'):
    (project / "pyproject.toml").write_text(f"[tool.tflint-gpu]\n{root_table}\n")
    write(project, "sub/pyproject.toml", f"[tool.tflint-gpu]\n{sub_table}\n")
    write(project, "top.py", BOTH)
    write(project, "sub/a.py", BOTH)


# -- the nearest configuration, per file ---------------------------------------------------------

def test_each_file_uses_its_nearest_configuration_whatever_the_order_of_the_paths(project, run_cli):
    _subproject(project, 'select = ["TFG1"]')
    expected = [("sub/a.py", "TFG101"), ("top.py", "TFG201")]
    for order in (["top.py", "sub/a.py"], ["sub/a.py", "top.py"], ["."], ["sub", "top.py"]):
        code, out, err = run_cli("--format", "json", *order)
        assert (code, found(out, project)) == (1, expected), (order, err)


def test_the_command_line_overrides_every_configuration(project, run_cli):
    _subproject(project, 'select = ["TFG1"]\nignore = ["TFG201"]')
    _, out, _ = run_cli("--format", "json", "--select", "TFG201", ".")
    assert found(out, project) == [("top.py", "TFG201")]  # sub's ignore still holds; its select does not
    _, out, _ = run_cli("--format", "json", "--ignore", "TFG101", ".")
    assert found(out, project) == [("top.py", "TFG201")]  # sub selects TFG1 only, and the command line ignores it


def test_globs_are_relative_to_the_configuration_that_states_them(project, run_cli):
    _subproject(project, '[tool.tflint-gpu.per-file-ignores]\n"legacy/*" = ["TFG2"]', 'extend-exclude = ["sub/gen"]')
    write(project, "legacy/old.py", BOTH)
    write(project, "sub/legacy/old.py", BOTH)
    write(project, "sub/gen/g.py", BOTH)  # the root's glob: its own configuration says nothing of it
    _, out, _ = run_cli("--format", "json", "--select", "TFG201", ".")
    assert found(out, project) == [("legacy/old.py", "TFG201"), ("sub/a.py", "TFG201"),
                                   ("sub/gen/g.py", "TFG201"), ("top.py", "TFG201")]


def test_a_broken_configuration_met_on_the_walk_is_one_line_naming_it(project, run_cli):
    write(project, "a.py", SAMPLE)
    write(project, "pkg/b.py", SAMPLE)
    write(project, "pkg/pyproject.toml", "[tool.tflint-gpu]\nselekt = []\n")
    code, out, err = run_cli(".")
    assert (code, out) == (2, "")
    assert str(project / "pkg" / "pyproject.toml") in _one_error_line(err)


def test_settings_are_built_once_per_configuration_and_looked_up_once_per_folder(project, run_cli, monkeypatch):
    _subproject(project, 'select = ["TFG1"]')
    for folder in ("", "sub/", "sub/deep/", "other/"):
        for number in range(5):
            write(project, f"{folder}m{number}.py", "import tensorflow as tf\n")
    built, parsed = [], []
    build, read = config.build_settings, config._read_toml
    monkeypatch.setattr(config, "build_settings", lambda *a, **k: built.append(a[1]) or build(*a, **k))
    monkeypatch.setattr(config, "_read_toml", lambda path: parsed.append(str(path)) or read(path))
    assert run_cli(".")[0] == 1
    assert sorted(map(str, built)) == sorted([str(project / "pyproject.toml"), str(project / "sub/pyproject.toml")])
    assert len(parsed) == 4  # each file: once to find it, once to load it


def test_each_configuration_has_its_own_project_index(project, run_cli):
    """A module of a subproject is named from the subproject's folder, as its configuration says."""
    write(project, "sub/pyproject.toml", "[tool.tflint-gpu]\n")
    write(project, "sub/mypkg/__init__.py", "import tensorflow as tf\n")
    write(project, "sub/mypkg/train.py", "from mypkg import tf\n\n@tf.function\ndef step(x):\n    return x.numpy()\n")
    write(project, "other.py", "x = 1\n")
    _, out, _ = run_cli("--format", "json", "--select", "TFG101", "other.py", "sub/mypkg/train.py")
    assert found(out, project) == [("sub/mypkg/train.py", "TFG101")]


# -- extend --------------------------------------------------------------------------------------

def test_extend_inherits_the_base_and_the_extending_keys_win(project, run_cli):
    (project / "pyproject.toml").write_text(
        '[tool.tflint-gpu]\nselect = ["TFG1", "TFG2"]\nextend-exclude = ["gen"]\n'
        '[tool.tflint-gpu.per-file-ignores]\n"sub/tests/*" = ["TFG1"]\n')
    write(project, "sub/pyproject.toml",
          '[tool.tflint-gpu]\nextend = "../pyproject.toml"\nignore = ["TFG201"]\nextend-exclude = ["skip"]\n')
    for name in ("sub/a.py", "sub/tests/t.py", "sub/gen/g.py", "sub/skip/s.py"):
        write(project, name, BOTH)
    _, out, _ = run_cli("--format", "json", "sub")
    # select from the base, ignore from sub; both extend-exclude lists; the base's per-file glob, from its folder
    assert found(out, project) == [("sub/a.py", "TFG101")]


def test_extend_chains_and_show_settings_names_every_file(project, run_cli):
    write(project, "base.toml", 'select = ["TFG1"]\n')  # a standalone file: no [tool] table
    write(project, "mid/pyproject.toml", '[tool.tflint-gpu]\nextend = "../base.toml"\nextend-select = ["TFG201"]\n')
    write(project, "mid/leaf/pyproject.toml", '[tool.tflint-gpu]\nextend = "../pyproject.toml"\n')
    write(project, "mid/leaf/a.py", BOTH)
    _, out, _ = run_cli("--format", "json", "mid/leaf/a.py")
    assert found(out, project) == [("mid/leaf/a.py", "TFG101"), ("mid/leaf/a.py", "TFG201")]
    code, out, _ = run_cli("--show-settings", "--format", "json", "mid/leaf/a.py")
    (shown,) = json.loads(out)
    assert code == 0 and shown["config-file"] == str(project / "mid/leaf/pyproject.toml")
    assert shown["extends"] == [str(project / "mid/pyproject.toml"), str(project / "base.toml")]


@pytest.mark.parametrize("sub,message", [
    ('extend = "../pyproject.toml"', "extend: a cycle: "),
    ('extend = "../nowhere.toml"', "extend: no such file: "),
    ("extend = 3", "extend: expected a string"),
])
def test_a_bad_extend_is_one_line_naming_the_file_exit_2(project, run_cli, sub, message):
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend = "sub/pyproject.toml"\n')
    write(project, "sub/pyproject.toml", f"[tool.tflint-gpu]\n{sub}\n")
    write(project, "sub/a.py", SAMPLE)
    code, out, err = run_cli("sub/a.py")
    line = _one_error_line(err)
    assert (code, out) == (2, "") and message in line and str(project / "sub" / "pyproject.toml") in line


def test_invalid_toml_in_an_extended_file_names_that_file(project, run_cli):
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend = "base.toml"\n')
    write(project, "base.toml", "select = [\n")
    write(project, "a.py", SAMPLE)
    code, _, err = run_cli("a.py")
    assert code == 2 and str(project / "base.toml") in _one_error_line(err)


# -- globs ---------------------------------------------------------------------------------------

def test_double_star_matches_zero_or_more_folders_and_braces_expand(project, run_cli):
    (project / "pyproject.toml").write_text(
        '[tool.tflint-gpu]\nselect = ["TFG201"]\n[tool.tflint-gpu.per-file-ignores]\n'
        '"pkg/**/*.py" = ["TFG2"]\n"**/test_*.py" = ["TFG2"]\n"{docs,tools}/*" = ["TFG2"]\n')
    for name in ("pkg/x.py", "pkg/a/b/y.py", "test_top.py", "deep/er/test_t.py", "docs/d.py", "tools/t.py",
                 "kept.py", "other/pkg/z.py"):
        write(project, name, BOTH)
    _, out, _ = run_cli("--format", "json", ".")
    assert found(out, project) == [("kept.py", "TFG201"), ("other/pkg/z.py", "TFG201")]


def test_a_star_stays_in_one_folder_while_a_folder_glob_covers_what_is_under_it(project):
    from tflint_gpu.globs import Patterns

    patterns = Patterns([("tests/*.py", str(project)), ("tests/*", "/elsewhere"), ("gen/", str(project))])
    assert patterns.match(str(project / "tests/a.py"))
    assert not patterns.match(str(project / "tests/sub/a.py"))
    assert patterns.match("/elsewhere/tests/sub/a.py")
    assert patterns.match(str(project / "x/gen"), True) and not patterns.match(str(project / "x/gen"))


# -- respect-gitignore ---------------------------------------------------------------------------

@pytest.fixture
def repo(project):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    write(project, ".gitignore", "*_pb2.py\nbuild_out/\n/local.py\nsecret*\n!secret_ok.py\n")
    write(project, "pkg/.gitignore", "vendored/\n!keep_pb2.py\n")
    write(project, ".git/info/exclude", "scratch.py\n")
    for name in ("a.py", "msg_pb2.py", "build_out/b.py", "local.py", "pkg/local.py", "secret_x.py",
                 "secret_ok.py", "pkg/vendored/v.py", "pkg/keep_pb2.py", "pkg/m.py", "scratch.py"):
        write(project, name, SAMPLE)
    return project


CHECKED = ["a.py", "pkg/keep_pb2.py", "pkg/local.py", "pkg/m.py", "secret_ok.py"]


def test_gitignored_files_are_skipped_in_directories_as_git_skips_them(repo, run_cli):
    code, out, _ = run_cli("--show-files", ".")
    assert code == 0 and [p[2:] for p in out.splitlines()] == CHECKED
    proc = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=repo, capture_output=True,
                          text=True, check=True)
    assert sorted(p for p in proc.stdout.split() if p.endswith(".py")) == CHECKED  # git agrees


def test_a_gitignored_file_named_explicitly_is_checked_unless_force_exclude(repo, run_cli):
    assert run_cli("msg_pb2.py")[0] == 1
    assert run_cli("--force-exclude", "msg_pb2.py")[:2] == (0, "")  # nothing to check
    assert run_cli("--force-exclude", "pkg/vendored/v.py")[0] == 0
    assert run_cli("--force-exclude", "pkg/keep_pb2.py")[0] == 1


def test_a_folder_named_explicitly_inside_an_ignored_one_is_walked_with_its_own_ignore_files(repo, run_cli):
    write(repo, "build_out/.gitignore", "skip.py\n")
    write(repo, "build_out/skip.py", SAMPLE)
    assert run_cli("--show-files", "build_out")[1].splitlines() == ["build_out/b.py"]
    assert run_cli("--show-files", "--force-exclude", "build_out")[1] == ""


def test_respect_gitignore_can_be_turned_off(repo, run_cli):
    everything = sorted(os.path.relpath(os.path.join(d, n), repo).replace(os.sep, "/")
                        for d, _, files in os.walk(repo) if ".git" not in d.split(os.sep) for n in files
                        if n.endswith(".py"))
    _, out, _ = run_cli("--show-files", "--no-respect-gitignore", ".")
    assert [p[2:] for p in out.splitlines()] == everything
    (repo / "pyproject.toml").write_text("[tool.tflint-gpu]\nrespect-gitignore = false\n")
    _, out, _ = run_cli("--show-files", ".")
    assert [p[2:] for p in out.splitlines()] == everything
    assert run_cli("--show-files", "--respect-gitignore", ".")[1].splitlines() == [f"./{p}" for p in CHECKED]


def test_gitignore_outside_a_repository_is_not_read_but_dot_ignore_is(project, run_cli):
    write(project, ".gitignore", "a.py\n")
    write(project, ".ignore", "b.py\n")
    for name in ("a.py", "b.py", "c.py"):
        write(project, name, SAMPLE)
    assert run_cli("--show-files", ".")[1].splitlines() == ["./a.py", "./c.py"]


def test_respect_gitignore_is_type_checked(project, run_cli):
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nrespect-gitignore = "yes"\n')
    write(project, "a.py", SAMPLE)
    code, _, err = run_cli("a.py")
    assert code == 2 and "respect-gitignore: expected a boolean" in _one_error_line(err)


# -- --force-exclude, --stdin-filename -------------------------------------------------------------

def test_force_exclude_sees_an_excluded_folder_at_any_depth(project, run_cli):
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend-exclude = ["generated"]\n')
    write(project, "pkg/generated/g.py", SAMPLE)
    assert run_cli("pkg/generated/g.py")[0] == 1
    assert run_cli("--force-exclude", "pkg/generated/g.py")[0] == 0
    assert run_cli("--force-exclude", "pkg/generated")[0] == 0


def _stdin(monkeypatch, capsys, *argv):
    class Stdin:
        buffer = io.BytesIO(SAMPLE.encode())

    monkeypatch.setattr("sys.stdin", Stdin)
    code = cli.main(["--no-cache", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_force_exclude_applies_to_the_stdin_filename(project, monkeypatch, capsys):
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend-exclude = ["generated"]\n')
    code, out, _ = _stdin(monkeypatch, capsys, "--stdin-filename", "generated/g.py", "-")
    assert code == 1 and "generated/g.py:4:5: TFG201" in out  # not forced: checked
    code, out, _ = _stdin(monkeypatch, capsys, "--force-exclude", "--stdin-filename", "generated/g.py", "-")
    assert (code, out) == (0, "All checks passed!\n")
    code, out, _ = _stdin(monkeypatch, capsys, "--force-exclude", "--fix", "--stdin-filename", "generated/g.py", "-")
    assert code == 0 and out == SAMPLE  # passed through unchanged


def test_the_stdin_filename_takes_the_configuration_nearest_it(project, monkeypatch, capsys):
    write(project, "sub/pyproject.toml", '[tool.tflint-gpu]\nselect = ["TFG1"]\n')
    code, out, _ = _stdin(monkeypatch, capsys, "--stdin-filename", "sub/new.py", "-")
    assert code == 1 and "TFG101" in out and "TFG201" not in out


# -- --show-settings, --show-files ------------------------------------------------------------------

def test_show_settings_names_the_nearest_configuration_and_the_per_file_ignores_that_apply(project, run_cli):
    _subproject(project, 'select = ["TFG1", "TFG2"]\ntarget-version = "tf2.15"\n'
                         '[tool.tflint-gpu.per-file-ignores]\n"tests/*" = ["TFG201"]\n"other/*" = ["TFG1"]')
    write(project, "sub/tests/t.py", BOTH)
    code, out, _ = run_cli("--show-settings", "sub/tests/t.py")
    assert code == 0
    assert f"  config file     : {project / 'sub' / 'pyproject.toml'}\n" in out
    assert "  per-file ignored: TFG201\n" in out and "tests/* = TFG201" in out and "other/*" not in out
    assert "  target-version  : tf2.15 " in out
    code, out, _ = run_cli("--show-settings", "--format", "json", "top.py")
    (shown,) = json.loads(out)
    assert shown["config-file"] == str(project / "pyproject.toml") and shown["per-file-ignores"] == []


def test_show_files_lists_what_a_check_would_read(project, run_cli):
    _subproject(project, 'extend-exclude = ["skip.py"]')
    write(project, "sub/skip.py", SAMPLE)
    write(project, "skip.py", SAMPLE)
    write(project, "dist/d.py", SAMPLE)
    code, out, err = run_cli("--show-files", ".")
    assert (code, out.splitlines(), err) == (0, ["./skip.py", "./sub/a.py", "./top.py"], "")
    code, out, _ = run_cli("--show-files", "--format", "json", "sub", "top.py")
    assert (code, json.loads(out)) == (0, ["sub/a.py", "top.py"])


# -- the flake8 plugin and the editor's documents -------------------------------------------------

def test_documents_resolve_extend_and_see_excluded_files(project):
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nselect = ["TFG1"]\nextend-exclude = ["generated"]\n')
    write(project, "sub/pyproject.toml", '[tool.tflint-gpu]\nextend = "../pyproject.toml"\n')
    documents = Documents()
    nested = str(write(project, "sub/pkg/generated/g.py", SAMPLE))
    plain = str(write(project, "sub/pkg/m.py", SAMPLE))
    settings = documents.settings_for(plain)
    assert {r.code[:4] for r in settings.rules} == {"TFG1"}
    assert settings.is_excluded(nested) and not settings.is_excluded(plain)  # what the server asks
    assert documents.is_excluded(nested) and not documents.is_excluded(plain)


flake8_api = pytest.importorskip("flake8.api.legacy")


def test_flake8_gives_an_excluded_file_no_findings(project, capsys):
    (project / "pyproject.toml").write_text(
        '[tool.tflint-gpu]\nextend-exclude = ["generated", "one.py"]\n'
        '[tool.tflint-gpu.per-file-ignores]\n"legacy/*" = ["TFG"]\n')
    paths = [write(project, name, SAMPLE) for name in ("generated/g.py", "pkg/generated/h.py", "one.py",
                                                       "legacy/l.py", "kept.py")]
    report = flake8_api.get_style_guide(select=["TFG"]).check_files([str(p) for p in paths])
    out = capsys.readouterr().out
    assert report.total_errors == 3 and {line.split(":")[0] for line in out.splitlines()} == {str(paths[-1])}


def test_flake8_resolves_extend_per_folder(project, capsys):
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nselect = ["TFG1"]\n')
    write(project, "sub/pyproject.toml",
          '[tool.tflint-gpu]\nextend = "../pyproject.toml"\nextend-select = ["TFG201"]\n')
    top, sub = write(project, "top.py", BOTH), write(project, "sub/a.py", BOTH)
    flake8_api.get_style_guide(select=["TFG"]).check_files([str(top), str(sub)])
    out = sorted(line.split(" ")[1] + "@" + os.path.basename(line.split(":")[0])
                 for line in capsys.readouterr().out.splitlines())
    assert out == ["TFG101@a.py", "TFG101@top.py", "TFG201@a.py"]


# -- upgrade --------------------------------------------------------------------------------------

def test_upgrade_resolves_each_files_configuration(project, run_cli):
    write(project, "sub/pyproject.toml", '[tool.tflint-gpu]\nextend-exclude = ["old.py"]\n')
    breaks = "import tensorflow as tf\nm = tf.keras.metrics.Mean()\nm.reset_states()\n"
    write(project, "sub/old.py", breaks)
    write(project, "sub/new.py", breaks)
    code, out, _ = run_cli("upgrade", "--no-cache", "--format", "json", ".")
    files = [entry["path"] for entry in json.loads(out)["files"]]
    assert code == 1 and files == [os.path.join("sub", "new.py")], out


def test_pathspec_is_imported_only_when_a_glob_or_an_ignore_file_needs_it(project):
    """A check under default globs and no ignore file never loads pathspec (start-up stays light)."""
    write(project, "a.py", SAMPLE)
    probe = ("import sys; from tflint_gpu import cli; code = cli.main(['--no-cache', '-q', '{}']); "
             "print(code, 'pathspec' in sys.modules)")
    import sys

    run = lambda target: subprocess.run([sys.executable, "-c", probe.format(target)], cwd=project,  # noqa: E731
                                        capture_output=True, text=True).stdout.split()[-2:]
    assert run("a.py") == ["1", "False"] and run(".") == ["1", "False"]
    write(project, ".ignore", "*_pb2.py\n")
    assert run(".") == ["1", "True"]
