"""The files known not to mention TF_USE_LEGACY_KERAS (``engine.cache.Mentions``): a warm run does not read
them again for the target, and an edit that sets the variable still changes the target of the next run."""
from __future__ import annotations

import os
import textwrap

from tflint_gpu import cli, config

BREAKS = textwrap.dedent("""\
    import tensorflow as tf

    m = tf.keras.metrics.Mean()
    m.reset_states()
""")
QUIET = 'import os\nos.environ["TF_USE_LEGACY_KERAX"] = "1"\n'
SETS = 'import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\n'  # the same size as QUIET


def write(path, text, mtime_ns):
    path.write_text(text)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_an_edit_that_sets_tf_use_legacy_keras_changes_the_next_warm_runs_target(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "README.md").write_text("# x\n")
    (tmp_path / "model.py").write_text(BREAKS)
    main = tmp_path / "main.py"
    assert len(QUIET) == len(SETS)
    write(main, QUIET, 1_600_000_000_000_000_000)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["."]) == 1  # Keras 3: the breakage is reported
    assert "TFG902" in capsys.readouterr().out
    assert (tmp_path / ".tflint_gpu_cache" / "project" / "mentions").is_file()

    read = []
    real = config.mentioning
    monkeypatch.setattr(config, "mentioning", lambda path: read.append(os.path.basename(path)) or real(path))
    assert cli.main(["."]) == 1
    assert read == []  # warm: neither file is read for the target
    capsys.readouterr()

    # Same size, another modification time: read again, and it now sets the variable.
    write(main, SETS, 1_600_000_001_000_000_000)
    assert cli.main(["."]) == 0
    out, err = capsys.readouterr()
    assert "TFG902" not in out and "target latest-keras2" in err and "main.py:2: os.environ" in err
    assert read == ["main.py"]
    assert cli.main(["."]) == 0  # a file that sets it is read every run (its evidence is not kept)
    assert read == ["main.py", "main.py"]
    capsys.readouterr()

    # And back: Keras 3 again.
    write(main, QUIET, 1_600_000_002_000_000_000)
    assert cli.main(["."]) == 1
    assert "TFG902" in capsys.readouterr().out


def test_no_cache_reads_every_file(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    read = []
    real = config.mentioning
    monkeypatch.setattr(config, "mentioning", lambda path: read.append(os.path.basename(path)) or real(path))
    for _ in range(2):
        assert cli.main(["--no-cache", "."]) == 0
    assert read == ["a.py", "a.py"] and not (tmp_path / ".tflint_gpu_cache").exists()


def test_a_broken_mentions_file_is_a_miss(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "README.md").write_text("# x\n")
    (tmp_path / "model.py").write_text(BREAKS)
    main = tmp_path / "main.py"
    write(main, QUIET, 1_600_000_000_000_000_000)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["."]) == 1
    mentions = tmp_path / ".tflint_gpu_cache" / "project" / "mentions"
    for broken in ("not json", '{"format": 3, "quiet": {"x": [1, true]}}', "[]"):
        mentions.write_text(broken)
        write(main, SETS, 1_600_000_000_000_000_000)  # the same stamp as the quiet file had
        assert cli.main(["."]) == 0  # read: the broken file knows nothing
        write(main, QUIET, 1_600_000_000_000_000_000)
        assert cli.main(["."]) == 1
    capsys.readouterr()
