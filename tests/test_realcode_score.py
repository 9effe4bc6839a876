"""The real-code scorer pairs labels and findings as its docstring says."""
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "realcode" / "score.py"


@pytest.fixture(scope="module")
def score():
    spec = importlib.util.spec_from_file_location("realcode_score", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def finding(path, row, code, cell=None):
    return {"code": code, "location": {"row": row}, "_where": (path, cell or 0)}


def label(path, line, kind, cell=""):
    return {"path": path, "line": str(line), "kind": kind, "cell": cell}


NAMES = {"numpy-in-graph": "TFG101", "removed-keras-method": "TFG902"}


def test_a_label_is_found_by_a_finding_of_its_rule_near_its_line(score):
    labels = [label("a.py", 10, "numpy-in-graph"), label("a.py", 30, "numpy-in-graph")]
    findings = [finding("a.py", 12, "TFG101"), finding("a.py", 34, "TFG101"), finding("a.py", 30, "TFG902")]
    assert score.match(labels, findings, NAMES, slack=2) == [(0, 0)]


def test_each_label_and_each_finding_is_matched_once_nearest_first(score):
    labels = [label("a.py", 10, "numpy-in-graph"), label("a.py", 11, "numpy-in-graph")]
    findings = [finding("a.py", 11, "TFG101")]
    assert score.match(labels, findings, NAMES, slack=2) == [(1, 0)]


def test_notebook_cells_and_kinds_without_a_rule(score):
    labels = [label("n.ipynb", 3, "numpy-in-graph", cell="2"), label("n.ipynb", 3, "predict-in-loop", cell="1"),
              label("a.py", 5, "keras3-other-breakage")]
    findings = [finding("n.ipynb", 3, "TFG101", cell=1), finding("n.ipynb", 3, "TFG101", cell=2),
                finding("a.py", 5, "TFG901")]
    assert score.match(labels, findings, NAMES, slack=0) == [(0, 1), (2, 2)]
    assert score.codes_for("predict-in-loop", NAMES) == ()


def test_labels_of_kind_other_take_the_kind_their_note_names(score):
    labels = [dict(label("a.py", 10, "other"), repo="o/r"), dict(label("b.py", 3, "other", cell="2"), repo="o/r"),
              dict(label("a.py", 10, "numpy-in-graph"), repo="o/r")]
    kinds = [{"repo": "o/r", "path": "a.py", "cell": "", "line": "10", "kind": "removed-keras-method"}]
    named = score.with_kinds(labels, kinds)
    assert [row["kind"] for row in named] == ["removed-keras-method", "other", "numpy-in-graph"]
    assert labels[0]["kind"] == "other"  # the labels read are left as written


def test_every_kind_given_names_a_label_of_kind_other():
    import csv
    for folder in (SCRIPT.parent, SCRIPT.parent / "packages"):
        with (folder / "labels.csv").open(newline="", encoding="utf-8") as handle:
            others = {(r["repo"], r["path"], r["cell"], r["line"]) for r in csv.DictReader(handle) if r["kind"] == "other"}
        with (folder / "other_kinds.csv").open(newline="", encoding="utf-8") as handle:
            given = [(r["repo"], r["path"], r["cell"], r["line"]) for r in csv.DictReader(handle)]
        assert len(given) == len(set(given)) and set(given) == others
