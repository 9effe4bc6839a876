"""`# noqa` as Ruff users expect it: comments only, its spellings, file-level codes,
unused directives (TFG001) and `check --add-noqa`."""
from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from tests.conftest import SAMPLE, write
from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import lint_source
from tflint_gpu.engine.noqa import NoqaIndex, lex_inline
from tflint_gpu.rules.base import REGISTRY, all_codes, all_rules

list(all_rules())
HEADER = "import numpy as np\nimport tensorflow as tf\n"
VARIABLE = "x = tf.Variable(np.zeros((3, 3)))"  # TFG201 at column 4
RULES = [REGISTRY["TFG201"], REGISTRY["TFG101"]]


def rows(source, rules=RULES):
    return [(f.code, f.row) for f in lint_source(HEADER + source, "a.py", rules).findings]


# -- 1. a comment, never text in a string -------------------------------------------------------

@pytest.mark.parametrize("source", [
    'x, s = tf.Variable(np.zeros((3, 3))), "# noqa"\n',
    "x, s = tf.Variable(np.zeros((3, 3))), '# noqa: TFG201'\n",
    'x, s = tf.Variable(np.zeros((3, 3))), f"{1} # noqa"\n',
    'x = tf.Variable(np.zeros((3, 3))), """\n# noqa\n"""\n',
])
def test_noqa_text_inside_a_string_suppresses_nothing(source):
    assert rows(source) == [("TFG201", 3)]


@pytest.mark.parametrize("source", [
    'x = tf.Variable(np.zeros((3, 3))), """\n"""  # noqa\n',  # a multi-line string: its last line
    'x = tf.Variable(np.zeros((3, 3))), f"""{1}\n"""  # noqa: TFG201\n',
    "x = tf.Variable(np.zeros((3, 3))) + \\\n    1  # noqa: TFG201\n",  # a continuation: its last line
    "x = tf.Variable(np.zeros((3, 3))) + \\\n    1 + \\\n    2  # noqa: TFG201\n",
])
def test_the_comment_is_read_where_python_reads_it_for_the_line(source):
    assert rows(source) == []


def test_a_parenthesised_statement_keeps_each_line_s_own_comment():
    assert rows("x = (\n    tf.Variable(np.zeros((3, 3)))\n)  # noqa\n") == [("TFG201", 4)]
    assert rows("x = (\n    tf.Variable(np.zeros((3, 3)))  # noqa\n)\n") == []


def test_noqa_text_elsewhere_in_the_file_costs_no_tokenizing_when_no_finding_can_reach_it(monkeypatch):
    import tokenize

    calls = []
    real = tokenize.generate_tokens
    monkeypatch.setattr(tokenize, "generate_tokens", lambda *a: calls.append(1) or real(*a))
    assert rows(VARIABLE + "\n\n\ndef f():\n    return 1  # noqa: E501\n") == [("TFG201", 3)]
    assert calls == []
    assert rows(VARIABLE + "  # noqa: E501\n") == [("TFG201", 3)]
    assert calls == [1]



def test_noqa_letters_outside_a_comment_s_directive_cost_no_tokenizing(monkeypatch):
    # A base85 blob (get-pip.py) holds "NoqA" by chance, even after a "#": no directive can be there.
    import tokenize

    calls = []
    real = tokenize.generate_tokens
    monkeypatch.setattr(tokenize, "generate_tokens", lambda *a: calls.append(1) or real(*a))
    blob = 'DATA = b"""\nb$%$j_o>qv_#r3E>XcsdC(q`xTnK3z4\nlRBNxt^CNoqAg>|NSyhs"""\n'
    unused_noqa = next(r for r in all_codes() if r.code == "TFG001")
    for rules in ([unused_noqa], [unused_noqa, *RULES]):
        assert lint_source(blob, "a.py", rules).findings == []
        codes = [f.code for f in lint_source(HEADER + blob + VARIABLE + "\n", "a.py", rules).findings]
        assert codes == [r.code for r in rules if r.code == "TFG201"]
    assert calls == []
    assert rows(VARIABLE + "  #\tNoQA\n") == [] and calls == [1]  # a directive is still read


@pytest.mark.parametrize("comment", ["# noqa", "#NOQA: TFG1", "# x  #  noqa", "# tflint-gpu: noqa",
                                     "#TFLINT-GPU :noqa: TFG201", "# tflint-gpu\t:\tnoqa"])
def test_every_directive_the_lexers_read_passes_the_text_search_before_them(comment):
    from tflint_gpu.engine.noqa import _TEXT, lex_file

    assert lex_inline(comment) is not None or lex_file(comment) is not None
    assert _TEXT.search(comment)


# -- 2. spellings ---------------------------------------------------------------------------------

@pytest.mark.parametrize("comment,suppressed", [
    ("# noqa", True),
    ("# NOQA", True),
    ("#noqa", True),
    ("# noqa this line is fine", True),  # text after a bare noqa: still blanket (as Ruff)
    ("# noqa: TFG201", True),
    ("#noqa:TFG201", True),
    ("# noqa:  TFG201", True),
    ("# noqa : TFG201", True),
    ("# NOQA: TFG101, TFG201", True),
    ("# noqa: TFG101,TFG201", True),
    ("# noqa: TFG101 TFG201", True),
    ("# noqa: TFG2", True),  # a prefix, as flake8 reads it
    ("# noqa: E501, TFG201  explained here", True),
    ("# type: ignore  # noqa: TFG201", True),
    ("# noqa:  TFG101", False),  # two spaces: still codes, never a blanket noqa
    ("# noqa : TFG101", False),
    ("# NOQA: TFG101, TFG999", False),
    ("#noqa:TFG101", False),
    ("# noqa: E501", False),
    ("# noqa:", False),  # no codes: suppresses nothing (as Ruff)
    ("# noqa: because", False),
    ("# noqa: tfg201", False),  # codes are upper case
    ("# noqaTFG201", False),
    ("# noqa; TFG201", False),
])
def test_noqa_spellings(comment, suppressed):
    assert rows(f"{VARIABLE}  {comment}\n") == ([] if suppressed else [("TFG201", 3)])


def test_the_lexer_keeps_the_codes_and_where_they_end():
    directive = lex_inline("# NOQA: TFG101, E501 see #12")
    assert [c.text for c in directive.codes] == ["TFG101", "E501"] and directive.end == len("# NOQA: TFG101, E501")
    assert lex_inline("# noqa").codes is None and lex_inline("# noqa: x") is None


# -- 3. file level ---------------------------------------------------------------------------------

def test_a_file_level_noqa_with_codes_exempts_the_file_from_those_codes_only():
    source = f"# tflint-gpu: noqa: TFG201\n{SAMPLE}"
    assert [f.code for f in lint_source(source, "a.py", RULES).findings] == ["TFG101"]
    source = f"  # tflint-gpu: NOQA : TFG101, TFG201  (generated)\n{SAMPLE}"
    assert lint_source(source, "a.py", RULES).findings == []


def test_file_level_codes_are_exact_and_the_directive_must_be_a_comment_of_its_own_line():
    assert len(lint_source(f"# tflint-gpu: noqa: TFG2\n{SAMPLE}", "a.py", RULES).findings) == 3
    assert len(lint_source(f"x = 1  # tflint-gpu: noqa\n{SAMPLE}", "a.py", RULES).findings) == 3
    assert len(lint_source(f's = """\n# tflint-gpu: noqa\n"""\n{SAMPLE}', "a.py", RULES).findings) == 3
    assert len(lint_source(f"# tflint-gpu: noqa:\n{SAMPLE}", "a.py", RULES).findings) == 3


def test_the_flake8_plugin_honours_file_level_codes(project):
    from tflint_gpu.flake8_plugin import Flake8Plugin

    lines = (f"# tflint-gpu: noqa: TFG201\n{SAMPLE}").splitlines(keepends=True)
    assert [m.split()[0] for _, _, m, _ in Flake8Plugin(None, str(project / "a.py"), lines).run()] == ["TFG101"]


# -- 4. TFG001 unused-noqa ------------------------------------------------------------------------

def unused(source, codes=("TFG001", "TFG201", "TFG101")):
    rules = [next(r for r in all_codes() if r.code == code) for code in codes]
    return [(f.code, f.row, f.col, f.message) for f in lint_source(source, "a.py", rules).findings
            if f.code == "TFG001"]


def test_tfg001_is_in_the_catalogue_off_by_default_and_selectable(project, run_cli):
    code, out, _ = run_cli("rules", "--format", "json")
    listed = {r["code"]: r for r in json.loads(out)}
    assert listed["TFG001"]["name"] == "unused-noqa" and listed["TFG001"]["default"] is False
    assert listed["TFG001"]["fix"] == "safe"
    code, out, _ = run_cli("rule", "TFG001")
    assert code == 0 and "## Why is this bad?" in out
    write(project, "a.py", HEADER + "x = tf.zeros(3)  # noqa: TFG999\n")  # unknown: whatever ran
    assert run_cli("a.py")[0] == 0  # off by default
    for selection in (["--select", "TFG001"], ["--select", "ALL"], ["--select", "TFG0"],
                      ["--extend-select", "TFG001"]):
        _, out, _ = run_cli("--format", "json", *selection, "a.py")
        assert [d["code"] for d in json.loads(out)] == ["TFG001"], selection
    _, out, _ = run_cli("--format", "json", "--select", "ALL", "--ignore", "TFG001", "a.py")
    assert json.loads(out) == []
    _, out, _ = run_cli("--format", "sarif", "--select", "TFG001", "a.py")
    assert json.loads(out)["runs"][0]["results"][0]["ruleId"] == "TFG001"


def test_tfg001_reports_unused_unknown_and_duplicated_codes_of_ours():
    source = HEADER + f"{VARIABLE}  # noqa: TFG201, TFG101, E501, TFG999, TFG201\n"
    [(code, row, col, message)] = unused(source)
    assert (code, row, col) == ("TFG001", 3, len(VARIABLE) + 2)
    assert message == "Unused `noqa` directive (unused: `TFG101`; unknown: `TFG999`; duplicated: `TFG201`)"


@pytest.mark.parametrize("comment", [
    "# noqa",  # blanket: never reported
    "# noqa: E501, F401",  # other tools' codes
    "# noqa: TFG201",  # used
    "# noqa: TFG2",  # used, as a prefix
    "# noqa: TFG101, TFG001",  # names TFG001 itself
])
def test_tfg001_leaves_these_alone(comment):
    assert unused(HEADER + f"{VARIABLE}  {comment}\n") == []


def test_tfg001_is_silent_on_a_code_whose_rule_did_not_run():
    source = HEADER + "y = tf.zeros(3)  # noqa: TFG101, TFG902\n"
    assert [m for *_, m in unused(source, ("TFG001", "TFG101"))] == ["Unused `noqa` directive (unused: `TFG101`)"]
    assert unused(source, ("TFG001",)) == []
    assert unused(source, ("TFG101",)) == []  # TFG001 itself not selected
    # A prefix is unused only when every rule it names ran.
    assert unused(HEADER + "y = 1  # noqa: TFG1\n", ("TFG001", "TFG101")) == []


def test_tfg001_in_a_file_no_rule_can_fire_in():
    assert [m for *_, m in unused("import os  # noqa: TFG201\n")] == ["Unused `noqa` directive (unused: `TFG201`)"]


def test_tfg001_respects_file_level_noqa():
    assert unused("# tflint-gpu: noqa\nimport os  # noqa: TFG201\n") == []
    assert unused("# tflint-gpu: noqa: TFG001\nimport os  # noqa: TFG201\n") == []


@pytest.mark.parametrize("line,fixed", [
    (f"{VARIABLE}  # noqa: TFG201, TFG101", f"{VARIABLE}  # noqa: TFG201"),
    ("y = 1  # noqa: TFG101, E501 (long)", "y = 1  # noqa: E501 (long)"),
    ("y = 1  # noqa: TFG201", "y = 1"),
    ("y = 1  # noqa: TFG201 reason", "y = 1"),
    ("y = 1  # type: ignore  # noqa: TFG201", "y = 1  # type: ignore"),
    ("y = 1  # noqa: TFG201  # keep me", "y = 1  # keep me"),
])
def test_tfg001_fix_removes_the_unused_codes_or_the_directive(line, fixed):
    rules = [r for r in all_codes() if r.code in ("TFG001", "TFG201", "TFG101")]
    source = HEADER + line + "\nz = 2\n"
    outcome = fix_source(source, "a.py", rules)
    assert outcome.source == HEADER + fixed + "\nz = 2\n"
    assert outcome.applied_codes == ["TFG001"]


def test_tfg001_fix_drops_a_comment_line_of_its_own():
    rules = [r for r in all_codes() if r.code in ("TFG001", "TFG201")]
    outcome = fix_source(HEADER + "# noqa: TFG201\nz = 2\n", "a.py", rules)
    assert outcome.source == HEADER + "z = 2\n"


def test_tfg001_fix_through_the_command_line(project, run_cli):
    write(project, "a.py", HEADER + "y = 1  # noqa: TFG201\n")
    code, _, _ = run_cli("--fix", "--select", "TFG001,TFG201", "a.py")
    assert code == 0 and (project / "a.py").read_text() == HEADER + "y = 1\n"


# -- 5. --add-noqa ---------------------------------------------------------------------------------

def test_add_noqa_adds_a_comment_to_every_line_with_a_finding(project, run_cli):
    write(project, "a.py", SAMPLE)
    code, out, err = run_cli("--add-noqa", "a.py")
    assert code == 0 and "Added 3 noqa directives." in err
    lines = (project / "a.py").read_text().splitlines()
    assert lines[3].endswith("np.zeros((3, 3)))  # noqa: TFG201")
    assert lines[4].endswith("np.random.randn(2, 3))  # noqa: TFG201")
    assert lines[8].endswith(".numpy()  # noqa: TFG101")
    assert run_cli("a.py") == (0, "All checks passed!\n", "")
    code, _, err = run_cli("--add-noqa", "a.py")
    assert code == 0 and "Added 0 noqa directives." in err


def test_add_noqa_extends_a_list_leaves_a_blanket_and_puts_the_comment_where_python_reads_it(project, run_cli):
    source = (HEADER + f"{VARIABLE}  # noqa: E501 keep this\n"
              + "y = tf.Variable(np.zeros((3, 3)))  # noqa\n"
              + 'z = tf.Variable(np.zeros((3, 3))), """\n# noqa: TFG999\n"""   \n'
              + "w = tf.Variable(np.zeros((3, 3))) + \\\n    1\n"
              + "v = (\n    tf.Variable(np.zeros((3, 3))),\n)\n")
    write(project, "a.py", source)
    code, _, err = run_cli("--add-noqa", "--select", "TFG201", "a.py")
    assert code == 0 and "Added 4 noqa directives." in err
    assert (project / "a.py").read_text() == (
        HEADER + f"{VARIABLE}  # noqa: E501, TFG201 keep this\n"
        + "y = tf.Variable(np.zeros((3, 3)))  # noqa\n"
        + 'z = tf.Variable(np.zeros((3, 3))), """\n# noqa: TFG999\n"""  # noqa: TFG201\n'
        + "w = tf.Variable(np.zeros((3, 3))) + \\\n    1  # noqa: TFG201\n"
        + "v = (\n    tf.Variable(np.zeros((3, 3))),  # noqa: TFG201\n)\n")
    assert run_cli("--select", "TFG201", "a.py")[0] == 0


def test_add_noqa_keeps_line_endings_and_writes_through_the_fix_write_path(project, run_cli):
    path = project / "a.py"
    path.write_bytes(SAMPLE.replace("\n", "\r\n").encode())
    assert run_cli("--add-noqa", "a.py")[0] == 0
    data = path.read_bytes()
    assert b"np.zeros((3, 3)))  # noqa: TFG201\r\n" in data and data.count(b"\r\n") == SAMPLE.count("\n")
    write(project, "b.py", SAMPLE)
    os.chmod(project / "b.py", stat.S_IRUSR)
    try:
        code, _, err = run_cli("--add-noqa", "b.py")
        if os.access(project / "b.py", os.W_OK):  # root writes anyway: nothing to check
            return
        assert code == 2 and "b.py" in err and (project / "b.py").read_text() == SAMPLE
    finally:
        os.chmod(project / "b.py", stat.S_IRUSR | stat.S_IWUSR)


def test_add_noqa_is_refused_with_fix_diff_or_stdin(project, run_cli):
    write(project, "a.py", SAMPLE)
    for extra in (["--fix"], ["--diff"]):
        code, _, err = run_cli("--add-noqa", *extra, "a.py")
        assert code == 2 and "--add-noqa" in err
    assert run_cli("--add-noqa", "-")[0] == 2
    assert (project / "a.py").read_text() == SAMPLE


def test_add_noqa_in_a_notebook(project, run_cli):
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": ["import numpy as np\n", "import tensorflow as tf"]},
             {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": ["x = tf.Variable(np.zeros((3, 3)))"]}]
    notebook = {"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4,
                "nbformat_minor": 5}
    (project / "n.ipynb").write_text(json.dumps(notebook, indent=1))
    code, _, err = run_cli("--add-noqa", "n.ipynb")
    assert code == 0 and "Added 1 noqa directive." in err
    data = json.loads((project / "n.ipynb").read_text())
    assert data["cells"][1]["source"] == ["x = tf.Variable(np.zeros((3, 3)))  # noqa: TFG201"]
    assert run_cli("n.ipynb")[0] == 0


def test_the_index_places_comments_after_strings_and_continuations():
    source = 'a = f("""\n""")\nb = 1 + \\\n  2\nc = 3\n'
    index = NoqaIndex(source)
    assert [index.resolve(row) for row in range(1, 6)] == [2, 2, 4, 4, 5]
    assert index.add_edit(3, ["TFG201"]).start == (4, 3)


def test_the_cli_lists_add_noqa_in_its_help(project, run_cli, capsys):
    from tflint_gpu import cli

    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["check", "--help"])
    assert "--add-noqa" in capsys.readouterr().out
    assert sys.modules["tflint_gpu.engine.noqa"]


def test_tfg001_is_described_by_the_catalogue_not_registered_as_a_rule():
    from tflint_gpu.engine.noqa import UNUSED_NOQA
    from tflint_gpu.rules.base import describe

    assert describe(UNUSED_NOQA).code == UNUSED_NOQA and UNUSED_NOQA not in REGISTRY
    assert UNUSED_NOQA not in [r.code for r in all_rules()] and UNUSED_NOQA in [r.code for r in all_codes()]


def test_tfg001_fix_in_a_file_that_is_not_parsed():
    rules = [r for r in all_codes() if r.code in ("TFG001", "TFG201")]
    outcome = fix_source("import os  # noqa: TFG201, E501\n", "a.py", rules)
    assert outcome.source == "import os  # noqa: E501\n" and outcome.findings == []
