"""A checked repository cannot choose where the tool writes (issue 34): a project's
``cache-dir`` stays in the project, a symlinked cache folder is no cache, and ``--fix``
writes through a symbolic link only to a file inside the tree it was asked to check."""
from __future__ import annotations

import os

import pytest

from tflint_gpu import cli
from tflint_gpu.engine import run
from tflint_gpu.engine.cache import Cache, ProjectCache
from tflint_gpu.files import WriteRefused, write_fixed
from tflint_gpu.rules.base import REGISTRY

from conftest import SAMPLE, write

# One TFG904 finding with a safe fix.
OLD = "import tensorflow as tf\n\ndevices = tf.config.experimental.list_physical_devices('CPU')\n"
NEW = "import tensorflow as tf\n\ndevices = tf.config.list_physical_devices('CPU')\n"


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """(repo: the checked project, the cwd; outside: a folder next to it that must stay untouched)."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    write(repo, "a.py", SAMPLE)
    monkeypatch.chdir(repo)
    return repo, outside


def check(capsys, *argv):
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def warnings(err):
    return [line for line in err.splitlines() if line.startswith("tflint-gpu: warning:")]


def everything_under(folder):
    return sorted(os.path.relpath(os.path.join(d, name), folder)
                  for d, subdirs, files in os.walk(folder) for name in subdirs + files)


# -- cache-dir from a project's configuration ----------------------------------------------------

@pytest.mark.parametrize("spelling", ["absolute", "relative"])
def test_a_projects_cache_dir_outside_it_is_refused_with_one_warning(layout, capsys, spelling):
    repo, outside = layout
    value = str(outside / "cache") if spelling == "absolute" else "../outside/cache"
    (repo / "pyproject.toml").write_text(f'[tool.tflint-gpu]\ncache-dir = "{value}"\n')
    code, out, err = check(capsys, "a.py")
    assert code == 1 and "TFG201" in out
    assert everything_under(outside) == []
    [line] = warnings(err)
    assert "pyproject.toml" in line and "cache-dir" in line and "outside the project" in line
    assert list((repo / ".tflint_gpu_cache").glob("*.json"))  # the default cache, in the project


def test_a_parent_folders_cache_dir_outside_it_is_refused(tmp_path, monkeypatch, capsys):
    parent, outside = tmp_path / "parent", tmp_path / "outside"
    outside.mkdir()
    write(parent, "pyproject.toml", f'[tool.tflint-gpu]\ncache-dir = "{outside}"\n')
    write(parent, "repo/a.py", SAMPLE)
    monkeypatch.chdir(parent / "repo")
    code, out, err = check(capsys, ".")
    assert code == 1 and everything_under(outside) == []
    assert len(warnings(err)) == 1


def test_a_cache_dir_through_a_symlinked_folder_to_outside_is_outside(layout, capsys):
    repo, outside = layout
    (repo / "build").symlink_to(outside, target_is_directory=True)
    (repo / "pyproject.toml").write_text('[tool.tflint-gpu]\ncache-dir = "build/cache"\n')
    code, out, err = check(capsys, "a.py")
    assert code == 1 and everything_under(outside) == []
    assert len(warnings(err)) == 1


def test_a_projects_cache_dir_inside_it_is_used_quietly(layout, capsys):
    repo, _ = layout
    (repo / "pyproject.toml").write_text('[tool.tflint-gpu]\ncache-dir = "build/lint-cache"\n')
    code, out, err = check(capsys, "a.py")
    assert code == 1 and warnings(err) == []
    assert list((repo / "build" / "lint-cache").glob("*.json"))


def test_the_command_line_and_a_named_config_may_put_the_cache_anywhere(layout, capsys, tmp_path):
    repo, outside = layout
    (repo / "pyproject.toml").write_text(f'[tool.tflint-gpu]\ncache-dir = "{outside / "project"}"\n')
    code, out, err = check(capsys, "--cache-dir", str(outside / "cli"), "a.py")
    assert code == 1 and warnings(err) == []
    assert list((outside / "cli").glob("*.json"))
    mine = write(tmp_path / "home", "tflint-gpu.toml", f'cache-dir = "{outside / "mine"}"\n')
    code, out, err = check(capsys, "--config", str(mine), "a.py")
    assert code == 1 and warnings(err) == []
    assert list((outside / "mine").glob("*.json"))
    assert not (outside / "project").exists()


def test_show_settings_shows_the_cache_folder_used(layout, capsys):
    repo, outside = layout
    (repo / "pyproject.toml").write_text(f'[tool.tflint-gpu]\ncache-dir = "{outside}"\n')
    code, out, err = check(capsys, "--show-settings", "a.py")
    assert str(repo / ".tflint_gpu_cache") in out and str(outside) not in out


# -- symlinked cache folders ------------------------------------------------------------------------

def test_a_committed_symlink_as_the_cache_folder_is_refused_and_the_run_goes_on(layout, capsys):
    repo, outside = layout
    (repo / ".tflint_gpu_cache").symlink_to(outside, target_is_directory=True)
    code, out, err = check(capsys, "a.py")
    assert code == 1 and "TFG201" in out
    assert everything_under(outside) == []
    [line] = warnings(err)
    assert ".tflint_gpu_cache" in line and "symbolic link" in line
    assert (repo / ".tflint_gpu_cache").is_symlink()


def test_a_symlinked_project_folder_in_the_cache_is_refused(layout, capsys):
    repo, outside = layout
    (repo / "pyproject.toml").write_text("[tool.tflint-gpu]\n")  # a project: the index's summaries are cached
    (repo / ".tflint_gpu_cache").mkdir()
    (repo / ".tflint_gpu_cache" / "project").symlink_to(outside, target_is_directory=True)
    code, out, err = check(capsys, "a.py")
    assert code == 1 and everything_under(outside) == []
    assert len(warnings(err)) == 1


def test_a_dangling_symlink_for_a_marker_file_is_not_written_through(layout, capsys):
    repo, outside = layout
    (repo / ".tflint_gpu_cache").mkdir()
    for name in (".gitignore", "CACHEDIR.TAG"):
        (repo / ".tflint_gpu_cache" / name).symlink_to(outside / name)
    code, out, err = check(capsys, "a.py")
    assert code == 1 and everything_under(outside) == []


def test_the_cache_classes_read_and_write_nothing_through_a_symlinked_folder(tmp_path):
    from tflint_gpu.engine.cache import refused_folder

    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "link").symlink_to(outside, target_is_directory=True)
    assert "symbolic link" in refused_folder(tmp_path / "link")
    assert refused_folder(tmp_path / "missing") is None
    cache, store = Cache(tmp_path / "link", "key"), ProjectCache(tmp_path / "link")
    assert cache.path is None and store.path is None
    source = write(tmp_path, "b.py", "x = 1\n")
    cache.put(str(source), [])
    cache.save()
    assert everything_under(outside) == []


# -- --fix through symbolic links -------------------------------------------------------------------

def test_fix_does_not_write_through_a_symlink_to_a_file_outside_the_checked_tree(layout, capsys):
    repo, outside = layout
    target = write(outside, "real.py", OLD)
    (repo / "link.py").symlink_to(target)
    code, out, err = check(capsys, "--no-cache", "--fix", "--select", "TFG904", ".")
    assert target.read_text() == OLD
    [line] = [line for line in err.splitlines() if "link.py" in line]
    assert "outside" in line and "not fixed" in line
    assert (repo / "link.py").is_symlink()


def test_fix_named_file_that_links_outside_its_folder_is_not_written(layout, capsys):
    repo, outside = layout
    target = write(outside, "real.py", OLD)
    (repo / "link.py").symlink_to(target)
    code, out, err = check(capsys, "--no-cache", "--fix", "--select", "TFG904", "link.py")
    assert target.read_text() == OLD and "not fixed" in err


def test_fix_writes_through_a_symlink_whose_target_is_inside_the_checked_tree(layout, capsys):
    repo, _ = layout
    target = write(repo, "pkg/real.py", OLD)
    (repo / "link.py").symlink_to(target)
    code, out, err = check(capsys, "--no-cache", "--fix", "--select", "TFG904", ".")
    assert target.read_text() == NEW and (repo / "link.py").is_symlink()
    assert "not fixed" not in err


def test_write_fixed_refuses_a_link_out_of_the_tree_it_is_given(tmp_path):
    import hashlib

    tree, outside = tmp_path / "tree", tmp_path / "outside"
    target = write(outside, "real.py", OLD)
    tree.mkdir()
    (tree / "link.py").symlink_to(target)
    digest = hashlib.sha256(OLD.encode()).hexdigest()
    with pytest.raises(WriteRefused, match="outside"):
        write_fixed(str(tree / "link.py"), digest, NEW.encode())  # default: the link's own folder
    with pytest.raises(WriteRefused, match="outside"):
        write_fixed(str(tree / "link.py"), digest, NEW.encode(), tree=str(tree))
    assert target.read_text() == OLD
    write_fixed(str(tree / "link.py"), digest, NEW.encode(), tree=str(tmp_path))
    assert target.read_text() == NEW


def test_run_files_fix_refuses_a_link_out_of_its_folder_by_default(tmp_path):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    target = write(outside, "real.py", OLD)
    tree.mkdir()
    (tree / "link.py").symlink_to(target)
    [result] = run.run_files([str(tree / "link.py")], lambda _: (REGISTRY["TFG904"],), run.FIX)
    assert target.read_text() == OLD
    assert result.error and "not fixed" in result.error and result.fixed == 0
