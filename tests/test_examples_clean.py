"""Issue 38: the README's first command, `tflint-gpu examples/`, flags each example's before.py and
leaves its after.py clean, under the repository's own configuration and under the defaults."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tflint_gpu import cli

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent

# An after.py may keep a finding of another rule only where its own rule's fix leads to it, said here:
# TFG601's fix calls the model directly, `model(x, training=False)`, in the loop `predict` was in, and
# TFG407 then says the next step (no fix of its own): call it through a `tf.function` made once.
NEXT_STEP = {("TFG601", "TFG407")}


def _findings(args, capsys):
    assert cli.main(args + ["--format", "json", "--no-cache", "--exit-zero"]) == 0
    return json.loads(capsys.readouterr().out)


def _in_after_files(findings):
    found = set()
    for finding in findings:
        path = Path(finding["filename"])
        if path.name == "after.py":
            found.add((path.parent.name, finding["code"], finding["location"]["row"]))
    return {item for item in found if item[:2] not in NEXT_STEP}


def test_the_readme_first_command_flags_no_after_file(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    findings = _findings(["examples/"], capsys)
    assert _in_after_files(findings) == set()
    # ...and every example's before.py has a finding of its rule, hints off by default included.
    flagged = {(Path(f["filename"]).parent.name, f["code"]) for f in findings if f["filename"].endswith("before.py")}
    examples = sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "before.py").is_file())
    migration = {r["code"] for r in _catalogue(capsys) if r["migration"]}
    missing = [code for code in examples if (code, code) not in flagged and code not in migration]
    assert missing == []


def test_after_files_are_clean_under_the_defaults(tmp_path, monkeypatch, capsys):
    # A wheel install's examples (tflint_gpu/examples/) are checked without the repository's configuration.
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    assert _in_after_files(_findings(["examples"], capsys)) == set()


def test_the_repository_leaves_out_of_after_files_exactly_the_rules_off_by_default(capsys):
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["tflint-gpu"]
    assert settings["select"] == ["ALL"]
    ignored = settings["per-file-ignores"]
    assert list(ignored) == ["examples/*/after.py"]
    assert sorted(ignored["examples/*/after.py"]) == sorted(r["code"] for r in _catalogue(capsys) if not r["default"])


def _catalogue(capsys):
    capsys.readouterr()
    assert cli.main(["rules", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)
