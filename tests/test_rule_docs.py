"""The rules' documentation pages: docs/rules/ is what scripts/gen_rule_docs.py makes of the rules,
`tflint-gpu rule CODE` prints the same page, each rule has a URL, and a docstring's measured effect
quotes no figure of its example's `tflint-gpu verify` run that examples/RESULTS.md does not record."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tflint_gpu import cli
from tflint_gpu.rules import docs
from tflint_gpu.rules.base import all_codes

ROOT = Path(__file__).resolve().parent.parent
RULES = list(all_codes())  # the rules and the engine's own codes (TFG001)
RESULTS = (ROOT / "examples" / "RESULTS.md").read_text(encoding="utf-8")


def test_committed_pages_are_what_the_generator_makes():
    """Fails after a change to a rule's docstring, its examples or RESULTS.md, or a new rule:
    run `python scripts/gen_rule_docs.py` and commit docs/rules/."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_rule_docs.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, "docs/rules/ is out of date: run python scripts/gen_rule_docs.py\n" + done.stderr


def test_every_code_has_a_page_and_a_row_in_the_index():
    files = docs.generated()
    assert set(files) == {f"{rule.code}.md" for rule in RULES} | {"README.md"}
    for rule in RULES:
        assert f"| `{rule.code}` | {rule.name} |" in files["README.md"]
        assert f"[{rule.code}.md]({rule.code}.md)" in files["README.md"]
    off = [line for line in files["README.md"].splitlines() if "| off |" in line]
    assert len(off) == sum(not rule.default_enabled for rule in RULES)


def test_generator_handles_a_rule_without_examples_or_results(tmp_path, monkeypatch):
    """A rule added (as TFG001 may be) before it has an example pair or a RESULTS.md row."""
    from tflint_gpu.rules.base import REGISTRY, Rule

    kept = REGISTRY.pop("TFG0001", None)  # a code no rule has: the real TFG001 may exist by now

    class Unused(Rule):
        """A ``# noqa`` comment that suppresses nothing.

        ## What it does
        Reports it.
        """

        code = "TFG0001"
        name = "unused-noqa"
        message = "unused noqa"

    try:
        out = tmp_path / "rules"
        script = ROOT / "scripts" / "gen_rule_docs.py"
        spec = __import__("importlib.util").util.spec_from_file_location("gen_rule_docs", script)
        module = __import__("importlib.util").util.module_from_spec(spec)
        spec.loader.exec_module(module)
        (out).mkdir()
        (out / "TFG000.md").write_text("a code no longer registered")
        assert module.main(["--out", str(out)]) == 0
        text = (out / "TFG0001.md").read_text()
        assert text.startswith("# unused-noqa (TFG0001)\n") and "## Example pair" not in text
        assert docs.MEASUREMENT_HEADING not in text and not (out / "TFG000.md").exists()
        assert "| `TFG0001` | unused-noqa | none | on |" in (out / "README.md").read_text()
        assert module.main(["--out", str(out), "--check"]) == 0
    finally:
        REGISTRY.pop("TFG0001", None)
        if kept is not None:
            REGISTRY["TFG0001"] = kept


def test_rule_command_prints_the_page(capsys):
    for code in ("TFG201", "TFG401"):
        assert cli.main(["rule", code.lower()]) == 0
        assert capsys.readouterr().out == docs.page(docs_rule(code))


def docs_rule(code):
    return next(rule for rule in RULES if rule.code == code)


def test_page_quotes_the_results_row_after_the_measured_effect():
    text = docs.page(docs_rule("TFG401"))
    row = docs.results_row("TFG401", RESULTS)
    assert row and row.replace("(TFG401/)", "(../../examples/TFG401/)") in text
    assert text.index("## Measured effect") < text.index(docs.MEASUREMENT_HEADING) < text.index("## Example pair")
    assert "- TensorFlow 2.21.0" in text  # the environment of the run that made the row


# -- URLs --------------------------------------------------------------------

def test_rule_url_is_the_local_page_or_the_configured_base(monkeypatch, tmp_path):
    monkeypatch.delenv(docs.URL_VARIABLE, raising=False)
    assert docs.rule_url("TFG201") == (ROOT / "docs" / "rules" / "TFG201.md").resolve().as_uri()
    assert docs.rule_url("TFG999") is None and docs.rule_url("invalid-syntax") is None
    monkeypatch.setenv(docs.URL_VARIABLE, "https://docs.example/tflint-gpu/rules/")
    assert docs.rule_url("TFG201") == "https://docs.example/tflint-gpu/rules/TFG201.md"
    monkeypatch.delenv(docs.URL_VARIABLE)
    docs._local_url.cache_clear()
    installed = tmp_path / "tflint_gpu" / "docs" / "rules"  # a wheel install: its package data
    installed.mkdir(parents=True)
    (installed / "TFG201.md").write_text("the page")
    monkeypatch.setattr(docs, "INSTALLED_DIR", installed)
    monkeypatch.setattr(docs, "DOCS_DIR", tmp_path / "docs" / "rules")  # no checkout beside it
    try:
        assert docs.rule_url("TFG201") == (installed / "TFG201.md").as_uri()
        assert docs.rule_url("TFG101") is None  # its page missing: no link rather than a dead one
    finally:
        docs._local_url.cache_clear()


SAMPLE = "import numpy as np\nimport tensorflow as tf\n\nfor i in range(3):\n    x = tf.constant(np.zeros((3,)))\n"


def test_json_and_sarif_carry_the_url(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(docs.URL_VARIABLE, raising=False)
    (tmp_path / "a.py").write_text(SAMPLE)
    cli.main(["--no-cache", "--select", "TFG201", "--format", "json", "a.py"])
    (finding,) = json.loads(capsys.readouterr().out)
    assert finding["url"] == docs.rule_url("TFG201") and finding["url"].startswith("file://")
    monkeypatch.setenv(docs.URL_VARIABLE, "https://docs.example/r/")
    cli.main(["--no-cache", "--select", "TFG201", "--format", "sarif", "a.py"])
    rules = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["rules"]
    by_id = {rule["id"]: rule for rule in rules}
    assert by_id["TFG201"]["helpUri"] == "https://docs.example/r/TFG201.md"
    monkeypatch.delenv(docs.URL_VARIABLE)
    monkeypatch.setattr(docs, "_local_url", lambda code: None)
    cli.main(["--no-cache", "--select", "TFG201", "--format", "sarif", "a.py"])
    rules = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["rules"]
    assert not any("helpUri" in rule for rule in rules)  # omitted, not null, without a page


# -- `tflint-gpu rules` --------------------------------------------------------

def test_rules_listing_says_off_by_default_once(capsys):
    assert cli.main(["rules"]) == 0
    out = capsys.readouterr().out
    assert out.count("off by default") == 1 and out.rstrip().splitlines()[-1] == cli.OFF_LEGEND
    marked = {line.split()[0] for line in out.splitlines() if line[6:11] == " off "}
    assert marked == {rule.code for rule in RULES if not rule.default_enabled}


# -- the measured effect agrees with examples/RESULTS.md ----------------------

# A figure: a number with a decimal point (plain or 1.5e-6), or one followed by x, %, s or ms.
FIGURE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:e-?\d+)?)(x|%| ?s\b| ?ms\b)?(?![\w.]*\d)")
VERSION = re.compile(r"(?:\bTF|TensorFlow|Keras|tf_keras|Python|tensorflow-addons|==) ?$")


def _sentences(text):
    text = re.sub(r"`[^`]*`", lambda m: "CODE" if "examples/" not in m.group(0) and "verify" not in m.group(0)
                  else m.group(0), text)  # code is no measurement (`Dropout(0.5)`), but names the example
    for paragraph in re.split(r"\n\s*\n|\n\* ", text):
        yield from re.split(r"(?<=[.!?])\s+(?=[A-Z`(]|examples/)", " ".join(paragraph.split()))


def _values(row):
    values = []
    for token in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", row):
        value = float(token)
        values += [value, value * 100, value * 1000]  # as a percentage, in milliseconds
    return values


def _recorded(figure, values):
    mantissa, _, exponent = figure.partition("e")
    places = len(mantissa.partition(".")[2])
    scale = 10.0 ** int(exponent) if exponent else 1.0
    return any(abs(round(v / scale, places) - float(mantissa)) < 1e-9 for v in values)


def unrecorded_figures(rule, results_text=RESULTS):
    """Figures in the sentences of the rule's Measured effect that name its example or `tflint-gpu
    verify` which its row of RESULTS.md does not hold (to the precision written)."""
    row = docs.results_row(rule.code, results_text) or ""
    values = _values(row.split("|", 2)[-1])
    names = re.compile(rf"examples/{rule.code}\b|tflint-gpu verify|RESULTS\.md|\bthe (?:small |large )?example\b")
    found = []
    for sentence in _sentences(docs.measured_effect(rule)):
        if not names.search(sentence):
            continue
        for match in FIGURE.finditer(sentence):
            figure, unit = match.groups()
            if not unit and "." not in figure:
                continue  # a count or a size: how the example is set up
            if VERSION.search(sentence[:match.start()]):
                continue
            if not _recorded(figure, values):
                found.append((figure + (unit or "").strip(), sentence))
    return found


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_measured_effect_quotes_only_what_results_md_records(rule):
    """The page shows the example's row of RESULTS.md: the docstring refers to it and repeats no
    figure of that run the row does not hold (a rerun's, a total over calls, another size's)."""
    assert unrecorded_figures(rule) == []


def test_the_check_catches_a_figure_results_md_does_not_hold():
    class Fake:
        code = "TFG401"

        @staticmethod
        def docs():
            return ("## Measured effect\nA benchmark: 1.8x. `examples/TFG401` under `tflint-gpu verify`: "
                    "{}, max abs diff 3.81e-06.\n")

    # TFG401's row as examples/RESULTS.md holds it now (a regeneration changes the figures)
    row = next(line for line in (Path(__file__).resolve().parent.parent / "examples" / "RESULTS.md")
               .read_text(encoding="utf-8").splitlines() if line.startswith("| [TFG401]"))
    cells = [cell.strip() for cell in row.split("|")]
    before, after, ratio = float(cells[3].split()[0]), float(cells[4].split()[0]), cells[5].split()[0]
    recorded = Fake.docs()
    Fake.docs = staticmethod(lambda: recorded.format(f"{ratio} ({before:.4f} s -> {after * 1000:.1f} ms)"))
    assert unrecorded_figures(Fake) == []
    unheld = ["9.99x", "97.531s", "86.421s"]  # figures no row can hold
    Fake.docs = staticmethod(lambda: recorded.format("9.99x (97.531 s -> 86.421 s)"))
    assert [figure for figure, _ in unrecorded_figures(Fake)] == unheld


def test_verify_without_tensorflow_names_the_extra(monkeypatch, capsys):
    import importlib.util

    from tflint_gpu.verify import command

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tensorflow" else real(name, *a))
    assert cli.main(["verify", "--rule", "TFG201"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'tflint-gpu[verify]'" in err and command.MISSING_TENSORFLOW in err


def test_the_verify_extra_is_the_test_extra_s_tensorflow():
    """One TensorFlow distribution in every extra: tf-keras requires `tensorflow`, so `tensorflow-cpu`
    beside it would be a second copy of the same files."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower().replace("_", "-")
             for reqs in extras.values() for req in reqs}
    assert "tensorflow-cpu" not in names and "tensorflow" in names
    assert set(extras["verify"]) <= set(extras["test"])
