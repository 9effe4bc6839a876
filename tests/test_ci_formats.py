"""Issue 38: the GitLab Code Quality and JUnit XML formats CI users ask for, as Ruff's
`--output-format gitlab` and `--output-format junit`."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import write

# Two safe TFG902 findings on identical lines, and a TFG902 on another line.
SOURCE = ("import tensorflow as tf\n"
          "m = tf.keras.metrics.Mean()\n"
          "m.reset_states()\n"
          "m.reset_states()\n"
          "n = tf.keras.metrics.Mean()\n"
          "n.reset_states()\n")
SELECT = ("--select", "TFG902", "--target-version", "latest")
BROKEN = "import tensorflow as tf\nx = foo(1 2)\n"

# GitLab's documented Code Quality report format (docs.gitlab.com, "Code Quality report format"): a JSON
# array of objects, each with these required keys; the location by `lines.begin` (or `positions.begin`).
CODE_QUALITY_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "minLength": 1},
                    "lines": {"type": "object", "required": ["begin"],
                              "properties": {"begin": {"type": "integer", "minimum": 1},
                                             "end": {"type": "integer", "minimum": 1}}},
                },
            },
        },
    },
}


def _gitlab(run_cli, *paths):
    code, out, err = run_cli(*SELECT, "--format", "gitlab", *paths)
    return code, json.loads(out)


def test_gitlab_is_a_code_quality_report_gitlab_reads(project, run_cli):
    jsonschema = pytest.importorskip("jsonschema")
    write(project, "pkg/a.py", SOURCE)
    write(project, "pkg/broken.py", BROKEN)
    code, report = _gitlab(run_cli, "pkg")
    assert code == 1
    jsonschema.validate(report, CODE_QUALITY_SCHEMA)
    found = [(i["check_name"], i["location"]["path"], i["location"]["lines"]["begin"]) for i in report]
    assert found == [("TFG902", "pkg/a.py", 3), ("TFG902", "pkg/a.py", 4), ("TFG902", "pkg/a.py", 6),
                     ("invalid-syntax", "pkg/broken.py", 2)]  # relative to the project, not absolute
    assert report[0]["description"].startswith("TFG902: Keras 3 metrics have no `reset_states()`")
    assert len({i["fingerprint"] for i in report}) == len(report)  # identical lines told apart


def test_gitlab_fingerprints_are_stable_across_runs_and_lines_added_above(project, run_cli):
    write(project, "a.py", SOURCE)
    first = [i["fingerprint"] for i in _gitlab(run_cli, "a.py")[1]]
    assert [i["fingerprint"] for i in _gitlab(run_cli, "a.py")[1]] == first
    write(project, "a.py", "# a comment\n\n" + SOURCE)  # every finding moves two lines down
    moved = _gitlab(run_cli, "a.py")[1]
    assert [i["location"]["lines"]["begin"] for i in moved] == [5, 6, 8]
    assert [i["fingerprint"] for i in moved] == first
    write(project, "b.py", SOURCE)  # the same findings in another file are other issues
    assert not set(first) & {i["fingerprint"] for i in _gitlab(run_cli, "b.py")[1]}


def test_gitlab_paths_are_relative_to_ci_project_dir_when_set(project, run_cli, monkeypatch):
    write(project, "src/a.py", SOURCE)
    monkeypatch.setenv("CI_PROJECT_DIR", str(project / "src"))
    assert {i["location"]["path"] for i in _gitlab(run_cli, "src")[1]} == {"a.py"}


def test_gitlab_of_a_clean_run_is_an_empty_list(project, run_cli):
    write(project, "ok.py", "import tensorflow as tf\n")
    assert _gitlab(run_cli, "ok.py") == (0, [])


def test_junit_has_a_failing_testcase_per_finding_with_its_file_and_line(project, run_cli):
    write(project, "pkg/a.py", SOURCE)
    write(project, "pkg/broken.py", BROKEN)
    code, out, _ = run_cli(*SELECT, "--format", "junit", "pkg")
    assert code == 1
    root = ET.fromstring(out)
    assert root.tag == "testsuites" and (root.get("tests"), root.get("failures")) == ("4", "4")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"pkg/a.py", "pkg/broken.py"} and suites["pkg/a.py"].get("tests") == "3"
    cases = root.findall("testsuite/testcase")
    assert [(c.get("name"), c.get("file"), c.get("line"), c.get("classname")) for c in cases] == [
        ("tflint-gpu.TFG902", "pkg/a.py", "3", "pkg/a"), ("tflint-gpu.TFG902", "pkg/a.py", "4", "pkg/a"),
        ("tflint-gpu.TFG902", "pkg/a.py", "6", "pkg/a"),
        ("tflint-gpu.invalid-syntax", "pkg/broken.py", "2", "pkg/broken")]
    failure = cases[0].find("failure")
    assert failure.get("type") == "TFG902" and failure.get("message").startswith("Keras 3 metrics have no")
    assert failure.text.startswith("line 3, col 3, Keras 3 metrics")


def test_junit_of_a_clean_run_is_a_valid_report_with_one_passing_case(project, run_cli):
    write(project, "ok.py", "import tensorflow as tf\n")
    code, out, _ = run_cli(*SELECT, "--format", "junit", "ok.py")
    assert code == 0
    root = ET.fromstring(out)
    cases = root.findall("testsuite/testcase")
    assert root.get("failures") == "0" and [c.get("name") for c in cases] == ["No errors found"]
    assert not root.findall(".//failure")


def test_junit_escapes_markup_in_messages():
    from tflint_gpu.findings import Finding
    from tflint_gpu.report import render

    finding = Finding("TFG101", 'a <b> & "c"', "x.py", 1, 0, 1, 1)
    root = ET.fromstring(render("junit", [finding], []))
    assert root.find("testsuite/testcase/failure").get("message") == 'a <b> & "c"'


def test_a_notebook_finding_is_on_the_ipynb_line_github_annotates(project, run_cli):
    import shutil
    from pathlib import Path

    shutil.copy(Path(__file__).parent / "fixtures" / "notebooks" / "pitfalls.ipynb", project / "nb.ipynb")
    github = run_cli("--select", "TFG201", "--format", "github", "nb.ipynb")[1]
    line = int(github.split(",line=")[1].split(":")[0])
    [issue] = json.loads(run_cli("--select", "TFG201", "--format", "gitlab", "nb.ipynb")[1])
    assert issue["location"] == {"path": "nb.ipynb", "lines": {"begin": line, "end": line}}
    assert "(cell 3, line 1, column 5)" in issue["description"]
    [case] = ET.fromstring(run_cli("--select", "TFG201", "--format", "junit", "nb.ipynb")[1]).iter("testcase")
    assert case.get("line") == str(line) and case.find("failure").text.startswith("cell 3, line 1, col 5, ")
