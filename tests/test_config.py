"""Configuration errors are loud, as in Ruff: one line naming the file and the key, exit 2."""
from __future__ import annotations

import pytest

from tests.conftest import SAMPLE, write


def _one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_invalid_toml_in_the_discovered_pyproject_is_an_error_naming_the_file(project, run_cli):
    (project / "pyproject.toml").write_text("[tool.tflint-gpu\nselect = ['TFG']\n")
    write(project, "a.py", SAMPLE)
    code, out, err = run_cli("a.py")
    assert (code, out) == (2, "")
    line = _one_error_line(err)
    assert str(project / "pyproject.toml") in line and "invalid TOML" in line


def test_invalid_toml_without_our_section_is_not_skipped_on_the_way_up(project, run_cli):
    """A pyproject.toml that cannot be read might hold [tool.tflint-gpu]: it is an error, never passed over."""
    write(project, "pkg/pyproject.toml", "[project\nname = 'x'\n")
    write(project, "pkg/a.py", SAMPLE)
    code, out, err = run_cli("pkg")
    assert (code, out) == (2, "")
    assert str(project / "pkg" / "pyproject.toml") in _one_error_line(err)


@pytest.mark.parametrize(
    "toml,key,expected",
    [
        ('unsafe-fixes = "false"', "unsafe-fixes", "expected a boolean"),
        ("fix = 1", "fix", "expected a boolean"),
        ('ignore = "TFG201"', "ignore", "expected a list of strings"),
        ('select = "TFG"', "select", "expected a list of strings"),
        ("extend-select = [401]", "extend-select", "expected a list of strings"),
        ('extend-ignore = "TFG1"', "extend-ignore", "expected a list of strings"),
        ('exclude = "generated"', "exclude", "expected a list of strings"),
        ("extend-exclude = 3", "extend-exclude", "expected a list of strings"),
        ("cache-dir = 3", "cache-dir", "expected a string"),
        ("per-file-ignores = 3", "per-file-ignores", "expected a table of glob = [codes]"),
        ('per-file-ignores = { "tests/*" = "TFG2" }', 'per-file-ignores."tests/*"', "expected a list of strings"),
        ('per-file-ignores = { "tests/*" = [2] }', 'per-file-ignores."tests/*"', "expected a list of strings"),
    ],
)
def test_each_config_key_is_type_checked(project, run_cli, toml, key, expected):
    (project / "pyproject.toml").write_text(f"[tool.tflint-gpu]\n{toml}\n")
    write(project, "a.py", SAMPLE)
    code, out, err = run_cli("a.py")
    assert (code, out) == (2, "")
    line = _one_error_line(err)
    assert line.startswith(f"tflint-gpu: error: {project / 'pyproject.toml'}: {key}: {expected}, got ")


def test_the_section_itself_must_be_a_table(project, run_cli):
    (project / "pyproject.toml").write_text('[tool]\ntflint-gpu = "TFG"\n')
    write(project, "a.py", SAMPLE)
    code, _, err = run_cli("a.py")
    assert code == 2
    assert f"{project / 'pyproject.toml'}: tool.tflint-gpu: expected a table, got " in _one_error_line(err)


def test_a_type_error_is_reported_even_when_the_command_line_overrides_the_key(project, run_cli):
    (project / "pyproject.toml").write_text('[tool.tflint-gpu]\nunsafe-fixes = "yes"\n')
    write(project, "a.py", SAMPLE)
    code, _, err = run_cli("--unsafe-fixes", "a.py")
    assert code == 2 and "unsafe-fixes: expected a boolean" in err


@pytest.mark.parametrize(
    "toml,where",
    [
        ('select = ["XYZ"]', "select"),
        ('ignore = ["TFG7"]', "ignore"),
        ('extend-select = ["TFG999"]', "extend-select"),
        ('extend-ignore = ["E501"]', "extend-ignore"),
        ('select = ["TFG", ""]', "select"),
        ('per-file-ignores = { "tests/*" = ["F401"] }', 'per-file-ignores."tests/*"'),
    ],
)
def test_unknown_rule_codes_in_the_config_name_the_file_and_key(project, run_cli, toml, where):
    (project / "pyproject.toml").write_text(f"[tool.tflint-gpu]\n{toml}\n")
    write(project, "a.py", SAMPLE)
    code, _, err = run_cli("a.py")
    assert code == 2
    line = _one_error_line(err)
    assert f"{project / 'pyproject.toml'}: {where}: " in line
    assert "unknown rule selector" in line or "empty rule selector" in line


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
@pytest.mark.parametrize("value", ["", " ", "TFG1,,TFG2"])
def test_an_empty_rule_selector_on_the_command_line_is_a_usage_error(project, run_cli, option, value):
    write(project, "a.py", SAMPLE)
    code, out, err = run_cli(option, value, "a.py")
    assert (code, out) == (2, "")
    assert f"{option}: empty rule selector" in _one_error_line(err)


@pytest.mark.parametrize("value", ["legacy/*", "legacy/*:", ":TFG2", "legacy/*: , "])
def test_per_file_ignores_option_without_a_pattern_or_codes_is_a_usage_error(project, run_cli, value):
    write(project, "a.py", SAMPLE)
    code, out, err = run_cli("--per-file-ignores", value, "a.py")
    assert (code, out) == (2, "")
    assert "--per-file-ignores: expected GLOB:CODES" in _one_error_line(err)


def test_per_file_ignores_option_applies(project, run_cli):
    write(project, "legacy/old.py", SAMPLE)
    code, out, _ = run_cli("--per-file-ignores", "legacy/*:TFG2,TFG1", "legacy/old.py")
    assert (code, out) == (0, "All checks passed!\n")


def test_an_empty_select_list_in_the_config_selects_nothing(project, run_cli):
    """`select = []` is a valid (if odd) choice, as in Ruff; only a missing value on the command line is an error."""
    (project / "pyproject.toml").write_text("[tool.tflint-gpu]\nselect = []\n")
    write(project, "a.py", SAMPLE)
    assert run_cli("a.py") == (0, "All checks passed!\n", "")
