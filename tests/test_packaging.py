"""The pre-commit manifest, the entry points, and the README's promises."""
from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_pre_commit_manifest_is_valid():
    clientlib = pytest.importorskip("pre_commit.clientlib")
    hooks = clientlib.load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert {h["id"] for h in hooks} == {"tflint-gpu", "tflint-gpu-fix"}
    by_id = {h["id"]: h for h in hooks}
    assert by_id["tflint-gpu-fix"]["entry"].split()[:3] == ["tflint-gpu", "check", "--fix"]
    assert all(h["language"] == "python" for h in hooks)


def test_entry_points_are_registered():
    eps = metadata.entry_points()
    scripts = eps.select(group="console_scripts") if hasattr(eps, "select") else eps["console_scripts"]
    assert any(ep.name == "tflint-gpu" and ep.value == "tflint_gpu.cli:main" for ep in scripts)
    plugins = eps.select(group="flake8.extension") if hasattr(eps, "select") else eps["flake8.extension"]
    assert any(ep.name == "TFG" and ep.value == "tflint_gpu.flake8_plugin:Flake8Plugin" for ep in plugins)


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    commands = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", readme, re.S)
    test_command = [c.strip() for c in commands if "pytest" in c]
    assert test_command, "the README gives no test command"
    assert test_command[0] in ci


def test_readme_lists_every_rule():
    from tflint_gpu.rules.base import all_rules

    readme = (ROOT / "README.md").read_text()
    for rule in all_rules():
        assert f"`{rule.code}`" in readme, f"{rule.code} missing from the README's rules table"
