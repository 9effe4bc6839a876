"""`--fix` never harms a file: an edit saved meanwhile, read-only files, links,
owners, concurrent runs, workers that die, and an honest summary."""
from __future__ import annotations

import faulthandler
import os
import signal
import stat
import sys

import pytest

from tflint_gpu.engine import run
from tflint_gpu.files import write_fixed
from tflint_gpu.rules.base import REGISTRY

from conftest import write

# One TFG904 finding with a safe fix.
OLD = "import tensorflow as tf\n\ndevices = tf.config.experimental.list_physical_devices('CPU')\n"
NEW = "import tensorflow as tf\n\ndevices = tf.config.list_physical_devices('CPU')\n"
RULES = (REGISTRY["TFG904"],)


def fix_files(paths, rules=RULES, jobs=1):
    return run.run_files([str(p) for p in paths], lambda _: rules, run.FIX, jobs=jobs)


def test_an_edit_saved_while_the_fix_runs_is_kept(tmp_path, monkeypatch):
    path = write(tmp_path, "a.py", OLD)
    saved = OLD + "print('saved by the user meanwhile')\n"
    real = run.process_text

    def slow(*args):  # the user saves after the file was read, before the fix is written
        result = real(*args)
        path.write_text(saved)
        return result

    monkeypatch.setattr(run, "process_text", slow)
    [result] = fix_files([path])
    assert path.read_text() == saved
    assert result.fixed == 0 and result.error == f"{path}: changed on disk while it was being fixed; not fixed"
    assert [f.code for f in result.findings] == ["TFG904"]  # the file as it stands now


def test_a_read_only_file_is_not_rewritten(tmp_path):
    path = write(tmp_path, "a.py", OLD)
    path.chmod(0o444)
    [result] = fix_files([path])
    assert path.read_text() == OLD and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert result.error == f"{path}: read-only; not fixed" and result.fixed == 0
    assert [f.code for f in result.findings] == ["TFG904"]


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    target = write(tmp_path, "real/a.py", OLD)
    target.chmod(0o640)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    [result] = fix_files([link])
    assert result.error is None and result.fixed == 1
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == NEW and stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_hard_linked_file_is_refused_and_both_names_keep_the_same_file(tmp_path):
    path = write(tmp_path, "a.py", OLD)
    other = tmp_path / "b.py"
    os.link(path, other)
    [result] = fix_files([path])
    assert "has 2 hard links, which a rewrite would break; not fixed" in result.error
    assert path.read_text() == OLD and os.path.samefile(path, other)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing an owner needs root")
def test_the_owner_is_kept(tmp_path):
    path = write(tmp_path, "a.py", OLD)
    os.chown(path, 12345, 23456)
    [result] = fix_files([path])
    assert result.fixed == 1 and path.read_text() == NEW
    assert (path.stat().st_uid, path.stat().st_gid) == (12345, 23456)


def test_the_temporary_file_is_unique_and_another_runs_is_left_alone(tmp_path):
    path = write(tmp_path, "a.py", OLD)
    # What another run (or tool) holds under the name every run used to take.
    (tmp_path / ".a.py.tflint-gpu.tmp").mkdir()
    [result] = fix_files([path])
    assert result.error is None and path.read_text() == NEW
    assert sorted(p.name for p in tmp_path.iterdir()) == [".a.py.tflint-gpu.tmp", "a.py"]


def test_write_fixed_checks_the_content_just_before_the_replace(tmp_path, monkeypatch):
    """Same size and mtime, other bytes, saved between the first look and the replace."""
    path = write(tmp_path, "a.py", OLD)
    digest = run.digest(path.read_bytes())
    real_chmod = os.chmod

    def edit_meanwhile(target, mode, *a, **k):
        real_chmod(target, mode, *a, **k)
        info = path.stat()
        path.write_text(OLD.upper())
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))

    monkeypatch.setattr(os, "chmod", edit_meanwhile)
    with pytest.raises(Exception, match="changed on disk"):
        write_fixed(str(path), digest, NEW.encode())
    assert path.read_text() == OLD.upper()
    assert [p.name for p in tmp_path.iterdir()] == ["a.py"]  # no temporary file left behind


class DiesOnCrash:
    """A rule that kills its process on a file saying CRASH, as a native crash would."""

    code, name, message, needs, node_types = "XDIE", "dies", "m", (), ("Name",)

    def visit_Name(self, node, ctx):
        if node.value == "CRASH":
            # pytest's faulthandler, inherited by the forked worker, would print a "Fatal Python error:
            # Segmentation fault" block with thread dumps for this intended crash: alarming in a test run
            faulthandler.disable()
            os.kill(os.getpid(), signal.SIGSEGV)


def test_the_intended_worker_crash_prints_no_fatal_error_dump(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__,
                           "-k", "a_worker_that_dies_costs_its_file_only"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert "1 passed" in done.stdout, done.stdout[-2000:]
    assert "Fatal Python error" not in done.stdout + done.stderr


def test_a_worker_that_dies_costs_its_file_only(tmp_path):
    paths = [write(tmp_path, f"f{i}.py", OLD) for i in range(12)]
    write(tmp_path, "f5.py", OLD + "CRASH\n")
    results = fix_files(paths, rules=(DiesOnCrash, REGISTRY["TFG904"]), jobs=2)
    assert [r.path for r in results] == [str(p) for p in paths]
    crashed = [r for r in results if r.error]
    assert [r.path for r in crashed] == [str(tmp_path / "f5.py")]
    assert crashed[0].error.endswith("the analysis crashed (its worker process died); file skipped (please report)")
    assert (tmp_path / "f5.py").read_text() == OLD + "CRASH\n"
    for result, path in zip(results, paths):
        if path.name != "f5.py":
            assert result.fixed == 1 and path.read_text() == NEW, path


def test_the_command_line_reports_a_crashed_file_and_exits_2(tmp_path, monkeypatch, capsys):
    from tflint_gpu import cli

    paths = [write(tmp_path, f"f{i}.py", OLD) for i in range(9)]
    write(tmp_path, "f3.py", OLD + "CRASH\n")
    (tmp_path / "pyproject.toml").write_text("[tool.tflint-gpu]\n")
    monkeypatch.chdir(tmp_path)
    settings_rules = lambda self, path: (DiesOnCrash, REGISTRY["TFG904"])  # noqa: E731
    monkeypatch.setattr(cli.config.Settings, "rules_for", settings_rules)
    code = cli.main(["--fix", "--no-cache", "--jobs", "2", *[p.name for p in paths]])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.strip() == "tflint-gpu: error: f3.py: the analysis crashed (its worker process died); " \
                          "file skipped (please report)"
    assert "Found 8 errors (8 fixed, 0 remaining; 1 file could not be checked)." in out


def test_the_summary_counts_no_fix_that_could_not_be_written(tmp_path, monkeypatch, capsys):
    from tflint_gpu import cli

    path = write(tmp_path, "a.py", OLD)
    path.chmod(0o444)
    (tmp_path / "pyproject.toml").write_text("[tool.tflint-gpu]\n")
    monkeypatch.chdir(tmp_path)
    code = cli.main(["--fix", "--no-cache", "a.py"])
    out, err = capsys.readouterr()
    assert code == 2 and "fixed" not in out and "Found 1 error." in out
    assert "a.py: read-only; not fixed" in err


def test_code_deeper_than_the_recursion_limit_is_one_line_not_a_traceback():
    """A 1,000-term `@` chain in a tf.function: CPython and LibCST parse it, the
    code generation behind positions recurses past Python's limit, and the
    error it raises (a KeyError out of a context manager) holds a node whose
    ``str`` recurses again."""
    chain = " @ ".join(["x"] * 1000)
    source = f"import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print({chain})\n    return x\n"
    # Python's default limit: a module another test imported (IPython sets 3000) must not decide this.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        for mode in (run.CHECK, run.FIX):
            result = run.process_text(source, "deep.py", [REGISTRY["TFG105"]], mode, True)
            assert result.error == "deep.py: too deeply nested to analyse"
        # Beside the deep statement, a finding's own statement is all that is written for its position.
        beside = f"import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n    return {chain}\n"
        result = run.process_text(beside, "deep.py", [REGISTRY["TFG105"]], run.CHECK, True)
        assert result.error is None and [(f.code, f.row, f.col) for f in result.findings] == [("TFG105", 5, 4)]
    finally:
        sys.setrecursionlimit(limit)


def test_an_internal_error_whose_message_cannot_be_read_is_still_one_line():
    class Unprintable(Exception):
        def __str__(self):
            raise RecursionError("deep")

    line = run.failure("a.py", Unprintable())
    assert line == "a.py: internal error: Unprintable: (message unavailable) (please report)"
