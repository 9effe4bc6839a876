"""Issue 38: `--fix-only` (and `fix-only = true`) and per-rule `fixable` / `unfixable` /
`extend-fixable`, as Ruff's: an unfixable rule is reported without `[*]` and never fixed, by
`--fix`, `--diff`, stdin, the language server's quick fixes and fix-all alike."""
from __future__ import annotations

import io
import json

import pytest

from tflint_gpu import cli, config
from tests.conftest import SAMPLE, write

# SAMPLE: TFG201 on line 4 with a safe fix, TFG201 on line 5 and TFG101 on line 9 with unsafe fixes.
FIXED_LINE = "x = tf.Variable(np.zeros((3, 3)))"


def _findings(out: str):
    return [(f["code"], f["location"]["row"], f["fix"] is not None) for f in json.loads(out)]


# --- --fix-only ----------------------------------------------------------------------------------------


def test_fix_only_writes_the_fixes_reports_nothing_left_and_exits_0(project, run_cli):
    write(project, "a.py", SAMPLE)
    assert run_cli("--fix", "a.py")[0] == 1  # --fix: findings remain, exit 1
    write(project, "a.py", SAMPLE)
    code, out, err = run_cli("--fix-only", "a.py")
    assert code == 0
    assert out == "Fixed 1 error (2 additional fixes available with `--unsafe-fixes`).\n"
    assert "TFG" not in out + err
    assert FIXED_LINE not in (project / "a.py").read_text() and "np.random.randn" in (project / "a.py").read_text()
    # nothing left to fix: Ruff's line, still exit 0
    assert run_cli("--fix-only", "a.py") == (0, "No errors fixed (2 fixes available with `--unsafe-fixes`).\n", "")


def test_fix_only_prints_nothing_in_the_other_formats_and_honours_exit_non_zero_on_fix(project, run_cli):
    write(project, "a.py", SAMPLE)
    assert run_cli("--fix-only", "--format", "json", "--exit-non-zero-on-fix", "a.py") == (1, "", "")
    assert FIXED_LINE not in (project / "a.py").read_text()
    assert run_cli("--fix-only", "--format", "json", "--exit-non-zero-on-fix", "a.py") == (0, "", "")
    write(project, "a.py", SAMPLE)
    assert run_cli("--fix-only", "--exit-non-zero-on-fix", "--exit-zero", "a.py")[0] == 0


def test_fix_only_in_the_configuration_and_no_fix_only(project, run_cli):
    write(project, "pyproject.toml", "[tool.tflint-gpu]\nfix-only = true\n")
    write(project, "a.py", SAMPLE)
    assert run_cli("--no-fix-only", "a.py")[0] == 1 and FIXED_LINE in (project / "a.py").read_text()
    assert run_cli("--no-fix", "a.py")[:2] == (0, "Fixed 1 error (2 additional fixes available with "
                                                  "`--unsafe-fixes`).\n")  # as Ruff: --no-fix keeps fix-only
    write(project, "pyproject.toml", "[tool.tflint-gpu]\nfix-only = \"yes\"\n")
    code, _, err = run_cli("a.py")
    assert code == 2 and "fix-only: expected a boolean" in err


def test_fix_only_with_diff_shows_the_diff_and_writes_nothing(project, run_cli):
    write(project, "a.py", SAMPLE)
    code, out, _ = run_cli("--fix-only", "--diff", "a.py")
    assert code == 1 and out.startswith("--- a.py") and (project / "a.py").read_text() == SAMPLE


def test_add_noqa_refuses_fix_only(project, run_cli):
    write(project, "a.py", SAMPLE)
    code, _, err = run_cli("--add-noqa", "--fix-only", "a.py")
    assert code == 2 and "--add-noqa cannot be combined with --fix, --fix-only or --diff" in err


# --- fixable / unfixable / extend-fixable --------------------------------------------------------------


def test_an_unfixable_rule_is_reported_without_a_fix_and_never_fixed(project, run_cli):
    write(project, "a.py", SAMPLE)
    code, out, _ = run_cli("--unfixable", "TFG2", "a.py")
    assert code == 1 and "TFG201 [*]" not in out and "a.py:4:5: TFG201 `tf.Variable" in out
    assert "fixable with the `--fix` option" not in out
    assert _findings(run_cli("--unfixable", "TFG2", "--format", "json", "--unsafe-fixes", "a.py")[1]) == [
        ("TFG201", 4, False), ("TFG201", 5, False), ("TFG101", 9, True)]
    code, out, err = run_cli("--unfixable", "TFG201", "--diff", "a.py")
    assert (code, out) == (0, "") and "No errors would be fixed (1 fix available with `--unsafe-fixes`)" in err
    assert run_cli("--unfixable", "TFG201", "--fix", "a.py")[0] == 1
    assert run_cli("--unfixable", "TFG201", "--fix-only", "--unsafe-fixes", "a.py")[1] == "Fixed 1 error.\n"
    text = (project / "a.py").read_text()
    assert FIXED_LINE in text and "np.random.randn" in text and ".numpy()" not in text  # TFG101 fixed alone


@pytest.mark.parametrize("table, fixed", [
    ('unfixable = ["TFG201"]', False),
    ('fixable = ["TFG1"]', False),  # only TFG1xx may be fixed
    ('fixable = ["TFG1"]\nextend-fixable = ["TFG201"]', True),
    ('unfixable = ["TFG2"]\nextend-fixable = ["TFG201"]', True),  # the longer prefix wins
    ('unfixable = ["TFG201"]\nextend-fixable = ["TFG201"]', False),  # unfixable wins a tie
    ('unfixable = ["ALL"]', False),
    ('fixable = ["ALL"]', True),
])
def test_fixable_settings_in_the_configuration(project, run_cli, table, fixed):
    write(project, "pyproject.toml", f"[tool.tflint-gpu]\n{table}\n")
    write(project, "a.py", SAMPLE)
    assert ("TFG201", 4, fixed) in _findings(run_cli("--format", "json", "a.py")[1])
    run_cli("--fix", "a.py")
    assert (FIXED_LINE in (project / "a.py").read_text()) is not fixed


def test_a_standalone_configuration_and_the_command_line(project, run_cli):
    write(project, "tflint-gpu.toml", 'unfixable = ["TFG201"]\n')
    write(project, "a.py", SAMPLE)
    assert ("TFG201", 4, False) in _findings(run_cli("--config", "tflint-gpu.toml", "--format", "json", "a.py")[1])
    # --fixable replaces `fixable`; `unfixable` still holds unless a longer prefix makes it fixable
    out = run_cli("--config", "tflint-gpu.toml", "--extend-fixable", "TFG201", "--format", "json", "a.py")[1]
    assert ("TFG201", 4, False) in _findings(out)
    write(project, "tflint-gpu.toml", 'unfixable = ["TFG2"]\n')
    out = run_cli("--config", "tflint-gpu.toml", "--extend-fixable", "TFG201", "--format", "json", "a.py")[1]
    assert ("TFG201", 4, True) in _findings(out)
    out = run_cli("--fixable", "TFG1", "--format", "json", "a.py")[1]
    assert ("TFG201", 4, False) in _findings(out)


@pytest.mark.parametrize("key", ["fixable", "unfixable", "extend-fixable"])
def test_an_unknown_code_in_a_fixable_setting_is_a_configuration_error(project, run_cli, key):
    write(project, "pyproject.toml", f'[tool.tflint-gpu]\n{key} = ["TFG999"]\n')
    write(project, "a.py", SAMPLE)
    code, out, err = run_cli("a.py")
    assert code == 2 and out == "" and f"{key}: unknown rule selector `TFG999`" in err
    write(project, "pyproject.toml", f'[tool.tflint-gpu]\n{key} = "TFG2"\n')
    code, _, err = run_cli("a.py")
    assert code == 2 and f"{key}: expected a list of strings" in err
    write(project, "pyproject.toml", "[tool.tflint-gpu]\n")
    code, _, err = run_cli(f"--{key}", "TFG2,XYZ", "a.py")
    assert code == 2 and f"--{key}: unknown rule selector `XYZ`" in err


def test_unfixable_codes_resolve_as_selection_does():
    everything = {r.code for r in config.all_codes()}
    assert config.unfixable_codes(None) == frozenset()
    assert config.unfixable_codes(["ALL"], ["TFG2"]) == {c for c in everything if c.startswith("TFG2")}
    assert config.unfixable_codes(["TFG101"]) == everything - {"TFG101"}
    assert config.unfixable_codes(["tfg1"], [], ["TFG201"]) == everything - {c for c in everything
                                                                              if c.startswith("TFG1")} - {"TFG201"}


def test_the_cache_tells_unfixable_settings_apart(project, capsys):
    write(project, "a.py", SAMPLE)
    assert cli.main(["a.py"]) == 1
    assert "TFG201 [*]" in capsys.readouterr().out
    assert cli.main(["--unfixable", "TFG201", "a.py"]) == 1
    assert "TFG201 [*]" not in capsys.readouterr().out
    assert cli.main(["a.py"]) == 1
    assert "TFG201 [*]" in capsys.readouterr().out


def test_stdin_fix_leaves_an_unfixable_rule_alone(project, run_cli, monkeypatch):
    class Stdin:
        buffer = io.BytesIO(SAMPLE.encode())

    monkeypatch.setattr("sys.stdin", Stdin)
    code, out, _ = run_cli("--fix", "--unfixable", "TFG201", "--stdin-filename", "a.py", "-")
    assert code == 1 and out == SAMPLE


def test_show_settings_shows_fix_only_and_the_fixable_rules(project, run_cli):
    write(project, "pyproject.toml", '[tool.tflint-gpu]\nunfixable = ["TFG2"]\nfix-only = true\n')
    write(project, "a.py", SAMPLE)
    code, out, _ = run_cli("--show-settings", "--format", "json", "a.py")
    [shown] = json.loads(out)
    assert code == 0 and shown["fix-only"] is True
    assert "TFG201" in shown["unfixable"] and "TFG201" not in shown["fixable"] and "TFG101" in shown["fixable"]
    out = run_cli("--show-settings", "a.py")[1]
    assert "  fix-only        : true" in out and "  unfixable       : TFG201" in out


def test_the_language_server_offers_no_fix_for_an_unfixable_rule(project):
    pytest.importorskip("pygls")
    from tflint_gpu import server
    from tflint_gpu.documents import Documents

    path = str(write(project, "a.py", SAMPLE))
    findings, _ = server.lint_document(Documents(), SAMPLE, path)
    assert any(f.code == "TFG201" and f.fix is not None for f in findings)
    assert server.fix_document(Documents(), SAMPLE, path) != SAMPLE
    write(project, "pyproject.toml", '[tool.tflint-gpu]\nunfixable = ["TFG201"]\n')
    findings, _ = server.lint_document(Documents(), SAMPLE, path)
    assert [f.fix for f in findings if f.code == "TFG201"] == [None, None]  # no quick fix, no [*]
    assert server.fix_document(Documents(), SAMPLE, path) == SAMPLE  # fix-all leaves it alone
