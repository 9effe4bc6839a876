"""Issue 38: what a new user meets in the first hour."""
from __future__ import annotations

from tflint_gpu import cli


def test_an_unknown_command_is_a_usage_error_naming_the_commands(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["explain"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'explain'" in err and "check, rule, rules, verify, upgrade, server" in err


def test_a_word_that_names_an_existing_folder_is_checked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "explain").mkdir()
    (tmp_path / "explain" / "ok.py").write_text("x = 1\n", encoding="utf-8")
    assert cli.main(["explain", "--no-cache"]) == 0
    assert "unknown command" not in capsys.readouterr().err


def test_a_missing_path_that_does_not_read_as_a_command_is_still_a_file_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["src/missing.py", "--no-cache"]) == 1
    assert "unknown command" not in capsys.readouterr().err


def test_diff_with_only_unsafe_fixes_says_how_many_unsafe_ones_it_left_out(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # TFG923: the `"lr"` key of a History, whose only fix ("learning_rate") is unsafe
    (tmp_path / "train.py").write_text(
        "import numpy as np\nimport tensorflow as tf\n\n"
        "model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])\n"
        "model.compile('sgd', 'mse')\n"
        "history = model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0,\n"
        "                    callbacks=[tf.keras.callbacks.ReduceLROnPlateau()])\n"
        "rates = history.history['lr']\n", encoding="utf-8")
    assert cli.main(["--diff", "--select", "TFG923", "--target-version", "latest", "--no-cache", "train.py"]) == 0
    assert "No errors would be fixed (1 fix available with `--unsafe-fixes`)." in capsys.readouterr().err
    assert cli.main(["--diff", "--select", "TFG923", "--target-version", "latest", "--no-cache", "--unsafe-fixes",
                     "train.py"]) == 1
    assert "Would fix 1 error." in capsys.readouterr().err


def test_a_lower_case_code_in_a_noqa_is_reported_by_tfg001_with_an_upper_case_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("y = 1  # noqa: E501, tfg101\n", encoding="utf-8")
    assert cli.main(["--select", "TFG001", "--no-cache", "a.py"]) == 1
    out = capsys.readouterr().out
    assert "a.py:1:22: TFG001 [*] Invalid `noqa` directive: `tfg101` is not a code (codes are upper case, " \
           "`TFG101`): it suppresses nothing" in out
    assert cli.main(["--select", "TFG001", "--no-cache", "--fix", "a.py"]) == 0
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == "y = 1  # noqa: E501, TFG101\n"
    # without TFG001 (off by default) nothing is said, as before
    (tmp_path / "a.py").write_text("y = 1  # noqa: tfg101\n", encoding="utf-8")
    assert cli.main(["--no-cache", "a.py"]) == 0


def test_an_invalid_glob_in_the_configuration_is_one_line_naming_the_key_and_the_pattern(tmp_path, monkeypatch,
                                                                                        capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend-exclude = ["[abc"]\n', encoding="utf-8")
    assert cli.main(["--no-cache", "a.py"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "extend-exclude: invalid glob `[abc`" in err
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-gpu.per-file-ignores]\n"tests/[abc" = ["TFG2"]\n',
                                             encoding="utf-8")
    assert cli.main(["--no-cache", "a.py"]) == 2
    assert "per-file-ignores: invalid glob `tests/[abc`" in capsys.readouterr().err
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend-exclude = ["[ab]c", "[!x]y", "[]]"]\n',
                                             encoding="utf-8")
    assert cli.main(["--no-cache", "a.py"]) == 0  # closed classes are globs
    assert cli.main(["--no-cache", "--extend-exclude", "[abc", "a.py"]) == 2
    assert "--extend-exclude: invalid glob `[abc`" in capsys.readouterr().err


def test_exit_non_zero_on_fix_exits_1_when_a_fix_was_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    source = "import tensorflow as tf\nm = tf.keras.metrics.Mean()\nm.reset_states()\n"  # TFG902, safe fix
    (tmp_path / "a.py").write_text(source, encoding="utf-8")
    args = ["--select", "TFG902", "--target-version", "latest", "--no-cache", "--fix", "a.py"]
    assert cli.main(args) == 0  # fixed, nothing left: 0 as before
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == source.replace("reset_states", "reset_state")
    (tmp_path / "a.py").write_text(source, encoding="utf-8")
    assert cli.main(args + ["--exit-non-zero-on-fix"]) == 1
    assert cli.main(args + ["--exit-non-zero-on-fix"]) == 0  # nothing left to fix
    (tmp_path / "a.py").write_text(source, encoding="utf-8")
    assert cli.main(args + ["--exit-non-zero-on-fix", "--exit-zero"]) == 0  # --exit-zero wins, as in Ruff
    capsys.readouterr()
