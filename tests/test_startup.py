"""Issue 38, fast to start: `--version`, `rules`, `rule CODE` and a check answered from the cache import
neither LibCST nor the rule modules (the catalogue comes from tflint_gpu/semantic/data/rule_catalogue.json,
written by scripts/gen_catalogue.py); the table says what the rule classes say.

What is asserted is which modules a command imports, in a fresh interpreter; what they cost is measured by
benchmarks/startup.py (no timing here).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Runs the command line in this interpreter and prints its exit code, its output and the modules it
# imported that a start must not need: LibCST, a rule module (tflint_gpu.rules.<rule>), the linter, and
# the process pool's multiprocessing (13 ms of CPU: what a run with no file to lint need not start),
# and what only some runs need: ctypes (a file's time budget), tomllib and configparser (a TOML file, a
# setup.cfg read; these projects have none), tflint_gpu.notebook (reading and linting a notebook: its
# cached findings are tflint_gpu.findings') and difflib (--diff).
# tflint_gpu.rules.docs (a rule page, a rule's link: the standard library only) is no rule.
PROBE = """
import contextlib, io, json, sys
from tflint_gpu.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
heavy = sorted(m for m in sys.modules if m != "tflint_gpu.rules.docs" and (
    m == "libcst" or m.startswith(("libcst.", "tflint_gpu.rules."))
    or m in ("tflint_gpu.engine.lint", "tflint_gpu.engine.fix", "multiprocessing", "ctypes", "tomllib",
             "configparser", "tflint_gpu.notebook", "difflib")))
print(json.dumps({"code": code, "out": out.getvalue(), "heavy": heavy}))
"""


def probe(cwd, *args):
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_version_imports_neither_libcst_nor_a_rule(tmp_path):
    result = probe(tmp_path, "--version")
    assert (result["code"], result["out"].split()[0], result["heavy"]) == (0, "tflint-gpu", [])


@pytest.mark.parametrize("args", [["rules"], ["rules", "--format", "json"]])
def test_the_catalogue_imports_neither_libcst_nor_a_rule(tmp_path, args):
    result = probe(tmp_path, *args)
    assert result["code"] == 0 and result["heavy"] == []
    assert "TFG103" in result["out"] and "TFG001" in result["out"]


def test_a_rule_page_imports_neither_libcst_nor_a_rule(tmp_path):
    result = probe(tmp_path, "rule", "TFG103")
    assert result["code"] == 0 and result["heavy"] == []
    assert result["out"].startswith("# ") and "(TFG103)" in result["out"].splitlines()[0]


@pytest.fixture
def project(tmp_path):
    """A folder with a finding in a Python file and in a notebook (the cache holds both kinds)."""
    (tmp_path / "train.py").write_text("import numpy as np\nimport tensorflow as tf\n\n"
                                       "v = tf.Variable(np.zeros(3))\n", encoding="utf-8")
    shutil.copy(ROOT / "tests" / "fixtures" / "notebooks" / "pitfalls.ipynb", tmp_path / "pitfalls.ipynb")
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "full", "json", "sarif"])
def test_a_check_answered_from_the_cache_imports_neither_libcst_nor_a_rule(project, fmt):
    cold = probe(project, "--format", fmt, ".")
    assert cold["code"] == 1
    assert "libcst" in cold["heavy"] and "tflint_gpu.rules.numpy_created_then_converted" in cold["heavy"]  # linted
    warm = probe(project, "--format", fmt, ".")
    # the full format shows the lines (a notebook's read from its cells) and each fix as a diff
    shown = ["difflib", "tflint_gpu.notebook"] if fmt == "full" else []
    assert (warm["code"], warm["out"], warm["heavy"]) == (1, cold["out"], shown)
    assert "TFG201" in warm["out"] and "TFG302" in warm["out"]


def test_a_changed_file_is_linted_again_after_a_start_from_the_cache(project):
    probe(project, ".")
    (project / "train.py").write_text("import numpy as np\nimport tensorflow as tf\n\nx = 1\n", encoding="utf-8")
    again = probe(project, ".")
    assert "libcst" in again["heavy"] and "train.py" not in again["out"] and "TFG302" in again["out"]


def test_the_catalogue_table_is_what_the_rule_classes_say():
    """The table the command line reads (instead of the rules) is the one scripts/gen_catalogue.py writes
    from the classes now: a rule added, renamed, documented anew or turned on/off needs the script run."""
    from tflint_gpu import catalogue
    from tflint_gpu.rules.base import all_codes

    committed = json.loads(Path(catalogue.PATH).read_text(encoding="utf-8"))
    wanted = catalogue.table_of(all_codes())
    assert committed["modules"] == wanted["modules"], "run: python scripts/gen_catalogue.py"
    differ = [entry["code"] for entry, now in zip(committed["codes"], wanted["codes"]) if entry != now]
    assert [e["code"] for e in committed["codes"]] == [e["code"] for e in wanted["codes"]] and differ == [], \
        f"{differ}: the table differs from the rules; run: python scripts/gen_catalogue.py"


def test_each_entry_answers_as_its_rule_class_does():
    from tflint_gpu import catalogue
    from tflint_gpu.rules.base import all_codes

    for rule in all_codes():
        info = catalogue.describe(rule.code)
        assert (info.code, info.name, info.default_enabled, info.fix_safety, info.fix_label(), info.summary(),
                info.docs(), info.migration) == \
            (rule.code, rule.name, rule.default_enabled, rule.fix_safety, rule.fix_label(), rule.summary(),
             rule.docs(), getattr(rule, "migration", False)), rule.code
    assert catalogue.describe("TFG999") is None


def test_a_rule_module_the_table_does_not_know_makes_the_classes_answer(monkeypatch):
    """A rule added without running the script is still selected and listed (from the classes)."""
    from tflint_gpu import catalogue

    monkeypatch.setattr(catalogue, "rule_modules", lambda: ["a_new_rule"])
    catalogue._table.cache_clear()
    try:
        assert catalogue.codes() == sorted(r.code for r in __import__("tflint_gpu.rules.base", fromlist=["x"])
                                           .all_codes())
    finally:
        catalogue._table.cache_clear()


def test_the_selection_is_the_rule_classes_once_read(tmp_path):
    from tflint_gpu import config
    from tflint_gpu.rules.base import REGISTRY

    settings = config.build_settings(config.Overrides(select=["TFG2"], ignore=["TFG201"]), None, tmp_path)
    assert isinstance(settings.rules, config.Selection)
    assert all(code.startswith("TFG2") and code != "TFG201" for code in settings.codes)
    assert settings.rules_for(str(tmp_path / "a.py")) == tuple(REGISTRY[code] for code in settings.rules.codes)
    assert settings.rules == tuple(REGISTRY[code] for code in settings.rules.codes)
    assert [r.code for r in settings.rules] == list(settings.rules.codes) and len(settings.rules) >= 2


def test_the_startup_benchmark_runs_and_prints_its_rows():
    """benchmarks/startup.py on one example folder, each row once (its figures are not asserted)."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "startup.py"), "--repeat", "1",
                           "--corpus", str(ROOT / "examples" / "TFG103")], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    for row in ("python -c pass", "tflint-gpu --version", "tflint-gpu rules", "tflint-gpu rule TFG103",
                "flake8 --version", "cold run", "warm run", "reading the cache", "twice --version"):
        assert row in done.stdout, done.stdout


def test_a_warm_run_checks_the_dependencies_of_its_results_without_hashing_a_summary(
        tmp_path, monkeypatch, capsys):
    """The project cache keeps each summary's digest (what a result's dependencies record) beside it."""
    from tflint_gpu import cli
    from tflint_gpu.semantic import project

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "layers.py").write_text("import tensorflow as tf\n\n\ndef make():\n"
                                                "    return tf.keras.layers.Dense(1)\n", encoding="utf-8")
    (tmp_path / "train.py").write_text("import numpy as np\nimport tensorflow as tf\nfrom pkg.layers import make\n\n"
                                       "v = tf.Variable(np.zeros(3))\nlayer = make()\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["-q", "."]) == 1
    cold = capsys.readouterr().out
    hashed = []
    real = project.Summary.to_json
    monkeypatch.setattr(project.Summary, "to_json", lambda self: hashed.append(self) or real(self))
    assert cli.main(["-q", "."]) == 1
    assert capsys.readouterr().out == cold and "TFG201" in cold
    assert hashed == []
    # the dependencies were checked: a changed module makes the file that read it linted again
    from tflint_gpu.engine import run

    linted = []
    process = run.process_file
    monkeypatch.setattr(run, "process_file", lambda path, *rest: linted.append(Path(path).name) or process(path, *rest))
    with open(tmp_path / "pkg" / "layers.py", "a", encoding="utf-8") as handle:  # another summary: a new def
        handle.write("\n\ndef other():\n    return 1\n")
    assert cli.main(["-q", "."]) == 1 and capsys.readouterr().out == cold
    assert sorted(linted) == ["layers.py", "train.py"]
