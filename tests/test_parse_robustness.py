"""No input brings the run down: CPython's parser decides what is Python, LibCST parses on a large stack.

Inputs that could crash the process (LibCST's native parser overflowing its stack) run in a
subprocess, so a crash fails the test instead of killing pytest.
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Optional

import pytest

from tests.conftest import SAMPLE, write
from tflint_gpu.engine.lint import ParseError, UnreadableSource, lint_source
from tflint_gpu.files import SourceEncodingError, decode

ROOT = Path(__file__).resolve().parents[1]
HEADER = "import tensorflow as tf\n"
# 8,000 terms: CPython refuses it (RecursionError); LibCST's native parser overflowed its stack on it.
LONG_CHAIN = "x = " + " + ".join(["x"] * 8000) + "\n"
# CPython accepts these, LibCST cannot parse them.
JOINED_STRINGS = "x = (" + " ".join(['"a"'] * 5000) + ")\n"
FORM_FEED_INDENT = "if x:\n\f if y:\n    pass\n"
CANNOT_ANALYSE = ": cannot analyse: valid Python that the parser (LibCST) cannot read: "
# CPython refuses these, LibCST accepts them (the last three: CPython's literal checks LibCST lacks).
REFUSED_BY_CPYTHON = {
    "parens": "x = " + "(" * 1000 + "1" + ")" * 1000 + "\n",
    "bytes": "x = b'\u00e9'\n",
    "escape": "x = '\\N{foo}'\n",
    "fstring": "x = f'{x:{y:{z}}}'\n",
}


def cpython_verdict(text: str, lines_above: int = 0) -> str:
    """``line:col: cannot parse: message``, as CPython's parser refuses ``text``."""
    with pytest.raises(SyntaxError) as caught:
        ast.parse(text)
    return f"{caught.value.lineno + lines_above}:{caught.value.offset}: cannot parse: {caught.value.msg}"


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))


def cli(cwd: Path, *args: str, stdin: Optional[str] = None):
    """``python -m tflint_gpu --no-cache ARGS`` in ``cwd``: (exit code, stdout, stderr)."""
    done = subprocess.run([sys.executable, "-m", "tflint_gpu", "--no-cache", *args], cwd=cwd, env=_env(),
                          input=stdin, capture_output=True, text=True, timeout=900)
    return done.returncode, done.stdout, done.stderr


def python(code: str, cwd: Path):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=900)
    return done.returncode, done.stdout, done.stderr


def errors(err: str):
    """The error lines of stderr (one line each, without the prefix and a leading ``./``), sorted."""
    lines = [line[len("tflint-gpu: error: "):] for line in err.splitlines() if line.startswith("tflint-gpu: error: ")]
    return sorted(line[2:] if line.startswith("./") else line for line in lines)


def _rules():
    import tflint_gpu.rules  # noqa: F401  (registers the catalogue)
    from tflint_gpu.rules.base import all_rules

    return list(all_rules())


# --- 1. what CPython refuses never reaches LibCST; what it accepts cannot crash it ------------------------


@pytest.mark.parametrize("mode", ["check", "fix", "diff"])
def test_a_chain_too_long_for_cpython_is_its_syntax_error_and_not_a_crash(project, mode):
    write(project, "chain.py", HEADER + LONG_CHAIN)
    write(project, "good.py", SAMPLE)
    code, out, err = cli(project, *([] if mode == "check" else [f"--{mode}"]), "chain.py", "good.py")
    assert code == 1, (code, err[-2000:])  # invalid-syntax: a diagnostic, as in Ruff
    assert errors(err) == ["chain.py: cannot parse: maximum recursion depth exceeded during ast construction"]
    assert (project / "chain.py").read_text() == HEADER + LONG_CHAIN
    # The other file was checked, fixed or diffed.
    if mode == "check":
        assert "good.py:4:5: TFG201" in out
    elif mode == "fix":
        assert (project / "good.py").read_text() != SAMPLE
    else:
        assert "--- good.py" in out


@pytest.mark.parametrize("body", [
    "not " * 2900 + "1",  # about 3 MB of LibCST's stack
    "lambda: " * 1400 + "1",  # about 3.4 MB
    " + ".join(["x"] * 2900),  # about 3.5 MB
], ids=["not", "lambda", "chain"])
def test_the_deepest_code_cpython_accepts_is_parsed_even_from_a_thread_with_a_small_stack(tmp_path, body):
    """Editors and servers lint in threads (512 KB of stack on macOS): the parse must not depend on it."""
    (tmp_path / "deep.py").write_text(HEADER + "x = " + body + "\n")
    code, out, err = python("""
        import ast, threading
        import tflint_gpu.rules
        from tflint_gpu.engine.lint import lint_source
        from tflint_gpu.rules.base import all_rules
        source = open("deep.py").read()
        ast.parse(source)  # valid Python (pytest's own stack is too deep to tell)
        outcome = []
        threading.stack_size(1024 * 1024)
        thread = threading.Thread(target=lambda: outcome.append(lint_source(source, "deep.py", list(all_rules()))))
        thread.start()
        thread.join()
        print("parsed" if outcome and outcome[0].module is not None else "no result")
    """, tmp_path)
    assert (code, out) == (0, "parsed\n"), (code, err[-2000:])


@pytest.fixture
def default_recursion_limit():
    """Python's own limit: importing TensorFlow (another test) raises it to 3,000,
    and CPython's parser accepts deeper code under a higher limit."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(before)


def test_cpythons_verdict_does_not_depend_on_the_callers_stack_depth(default_recursion_limit):
    source = "# tensorflow\nx = " + " + ".join(["x"] * 1500) + "\n"  # no rule applies: only CPython parses it

    def at_depth(depth: int, text: str):
        if depth:
            return at_depth(depth - 1, text)
        try:
            return lint_source(text, "f.py", []).findings
        except ParseError as error:
            return str(error)

    assert at_depth(0, source) == at_depth(700, source) == []
    refused = "# tensorflow\n" + LONG_CHAIN
    assert at_depth(0, refused) == at_depth(700, refused) == (
        "f.py: cannot parse: maximum recursion depth exceeded during ast construction")


def test_the_stack_size_for_new_threads_is_left_as_it_was():
    before = threading.stack_size()
    lint_source(SAMPLE, "a.py", _rules())
    with pytest.raises(ParseError):
        lint_source(HEADER + REFUSED_BY_CPYTHON["parens"], "a.py", _rules())
    assert threading.stack_size() == before


# --- 2. where LibCST and CPython disagree, CPython decides ------------------------------------------------


def test_code_cpython_refuses_is_a_syntax_error_in_every_file_with_its_message_and_position(project):
    assert cpython_verdict(REFUSED_BY_CPYTHON["parens"]) == "1:205: cannot parse: too many nested parentheses"
    expected = []
    for name, text in REFUSED_BY_CPYTHON.items():
        write(project, f"{name}.py", text)  # mentions neither tensorflow nor keras
        write(project, f"{name}_tf.py", HEADER + text)
        expected += [f"{name}.py:{cpython_verdict(text)}", f"{name}_tf.py:{cpython_verdict(text, 1)}"]
    write(project, "good.py", SAMPLE)
    for jobs in ("1", "2"):  # one process, and a pool of workers
        code, out, err = cli(project, "--jobs", jobs, ".")
        assert code == 1, err
        assert errors(err) == sorted(expected)
        assert "All checks passed!" not in out and "good.py:4:5: TFG201" in out


def test_nul_bytes_are_a_syntax_error_at_their_position():
    for rules in ([], _rules()):
        with pytest.raises(ParseError) as caught:
            lint_source(HEADER + "x = 1\ny = 2\0\n", "f.py", rules)
        assert str(caught.value) == "f.py:3:6: cannot parse: source code string cannot contain null bytes"


@pytest.mark.parametrize("warnings", ["default", "error"])
def test_cpythons_syntax_warnings_are_neither_printed_nor_errors(project, warnings):
    write(project, "a.py", HEADER + "x = [0x1for x in y]\n")  # SyntaxWarning: invalid hexadecimal literal
    write(project, "b.py", "y = 1if x else 2\n")  # SyntaxWarning: invalid decimal literal
    done = subprocess.run([sys.executable, "-W", warnings, "-m", "tflint_gpu", "--no-cache", "a.py", "b.py"],
                          cwd=project, env=_env(), capture_output=True, text=True, timeout=900)
    assert (done.returncode, done.stdout, done.stderr) == (0, "All checks passed!\n", "")


def test_a_file_noqa_does_not_hide_a_syntax_error():
    with pytest.raises(ParseError, match=r"^f\.py:3:205: cannot parse: too many nested parentheses$"):
        lint_source(HEADER + "# tflint-gpu: noqa\n" + REFUSED_BY_CPYTHON["parens"], "f.py", _rules())


@pytest.mark.parametrize("mode", [[], ["--fix"]])
def test_valid_python_libcst_cannot_read_is_one_line_and_the_run_goes_on(project, mode):
    for text in (JOINED_STRINGS, FORM_FEED_INDENT):
        ast.parse(text)  # valid Python
    write(project, "strings.py", HEADER + JOINED_STRINGS)
    (project / "formfeed.py").write_bytes((HEADER + FORM_FEED_INDENT).encode())
    write(project, "good.py", SAMPLE)
    code, out, err = cli(project, *mode, "strings.py", "formfeed.py", "good.py")
    assert code == 2, err
    found = errors(err)
    assert [line.split(CANNOT_ANALYSE)[0] for line in found] == ["formfeed.py", "strings.py"], err
    assert found[0].endswith("tokenizer error: no matching outer block for dedent")
    assert "good.py:" in out and "All checks passed!" not in out
    assert (project / "formfeed.py").read_bytes() == (HEADER + FORM_FEED_INDENT).encode()


def test_unreadable_source_is_a_parse_error_without_a_position():
    with pytest.raises(UnreadableSource) as caught:
        lint_source(HEADER + JOINED_STRINGS, "f.py", _rules())
    assert isinstance(caught.value, ParseError) and caught.value.position is None
    assert str(caught.value).startswith("f.py" + CANNOT_ANALYSE) and "\n" not in str(caught.value)


# --- 3. encodings: CPython's verdict ----------------------------------------------------------------------


def test_an_unknown_declared_encoding_is_a_read_error(project):
    data = b"# -*- coding: klingon -*-\n" + SAMPLE.encode()
    (project / "klingon.py").write_bytes(data)
    write(project, "good.py", SAMPLE)
    with pytest.raises(SyntaxError, match="unknown encoding"):
        compile(data, "klingon.py", "exec", ast.PyCF_ONLY_AST)
    code, out, err = cli(project, "klingon.py", "good.py")
    assert code == 1 and errors(err) == ["klingon.py: cannot read: unknown encoding: klingon"]
    assert "good.py:4:5: TFG201" in out
    code, out, err = cli(project, "--fix", "-", stdin=data.decode())
    assert code == 1 and errors(err) == ["-: cannot read: unknown encoding: klingon"]
    assert out == data.decode()  # --fix from stdin passes the input through
    assert (project / "klingon.py").read_bytes() == data


def test_decode_refuses_what_cpython_refuses_and_keeps_what_it_reads():
    with pytest.raises(SourceEncodingError, match="^unknown encoding: klingon$"):
        decode(b"# -*- coding: klingon -*-\nx = 1\n")
    with pytest.raises(LookupError, match="^encoding problem: iso-8859-1 with BOM$"):
        decode(b"\xef\xbb\xbf# coding: latin-1\nx = 1\n")
    with pytest.raises(UnicodeDecodeError):  # not UTF-8 and nothing declared
        decode(b"x = '\xe9'\n")
    latin = decode(b"# coding: latin-1\r\nx = '\xe9'\r\n")
    assert (latin.text, latin.encoding, latin.bom) == ("# coding: latin-1\r\nx = '\u00e9'\r\n", "iso-8859-1", False)
    bom = decode(b"\xef\xbb\xbf# coding: utf-8\nx = '\xc3\xa9'\r")
    assert (bom.text, bom.encoding, bom.bom) == ("# coding: utf-8\nx = '\u00e9'\r", "utf-8", True)
    assert decode(b"\xef\xbb\xbfx = 1\n").text == "x = 1\n"


# --- 4. notebooks and the flake8 plugin go through the same checks ----------------------------------------


def _notebook(*sources: str) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
             for source in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def test_notebook_cells_cpython_refuses_or_libcst_cannot_read_are_skipped_with_one_line(project):
    first, last = "import numpy as np\nimport tensorflow as tf", "v = tf.Variable(np.zeros((3, 3)))"
    write(project, "parens.ipynb", _notebook(first, REFUSED_BY_CPYTHON["parens"], last))
    write(project, "chain.ipynb", _notebook(first, LONG_CHAIN, last))
    write(project, "strings.ipynb", _notebook(first, JOINED_STRINGS, last))
    code, out, err = cli(project, "--select", "TFG201", ".")
    assert code == 2, err[-2000:]
    found = errors(err)
    assert found[:2] == [
        "chain.ipynb:cell 2: cannot parse: maximum recursion depth exceeded during ast construction; cell skipped",
        "parens.ipynb:cell 2:1:205: cannot parse: too many nested parentheses; cell skipped",
    ]
    assert found[2].startswith("strings.ipynb:cell 2" + CANNOT_ANALYSE) and found[2].endswith("; cell skipped")
    for name in ("chain", "parens", "strings"):  # the other cells are checked
        assert f"{name}.ipynb:cell 3:1:5: TFG201" in out


def test_the_flake8_plugin_neither_crashes_nor_reports_on_code_cpython_refuses(project):
    write(project, "chain.py", HEADER + LONG_CHAIN)
    write(project, "parens.py", SAMPLE + REFUSED_BY_CPYTHON["parens"])  # findings, were the file Python
    write(project, "strings.py", SAMPLE + JOINED_STRINGS)
    write(project, "good.py", SAMPLE)
    code, out, err = python("""
        from tflint_gpu.flake8_plugin import Flake8Plugin
        for name in ("chain.py", "parens.py", "strings.py", "good.py"):
            with open(name, encoding="utf-8") as handle:
                lines = handle.readlines()
            print(name, [row for row, *_ in Flake8Plugin(None, name, lines).run()])
    """, project)
    assert code == 0, err[-2000:]
    assert out.splitlines() == ["chain.py []", "parens.py []", "strings.py []", "good.py [4, 5, 9]"]


def test_flake8_reports_its_own_syntax_error_and_our_plugin_stays_quiet(project, capsys):
    flake8_api = pytest.importorskip("flake8.api.legacy")
    path = write(project, "parens.py", SAMPLE + REFUSED_BY_CPYTHON["parens"])
    style = flake8_api.get_style_guide(select=["TFG", "E999"])
    report = style.check_files([str(path)])
    out = capsys.readouterr().out
    assert report.total_errors == 1 and "E999 SyntaxError: too many nested parentheses" in out, out


def test_the_large_stack_thread_is_kept_and_nested_calls_run_in_it():
    from tflint_gpu.engine.lint import on_large_stack

    first = on_large_stack(threading.get_ident)
    assert first != threading.get_ident()  # not the caller's thread
    assert on_large_stack(threading.get_ident) == first  # the same thread, call after call
    # A call made from that thread runs there at once (no deadlock waiting on itself).
    assert on_large_stack(on_large_stack, threading.get_ident) == first
    with pytest.raises(ZeroDivisionError):
        on_large_stack(lambda: 1 / 0)  # its exception reaches the caller
    assert on_large_stack(len, "abc") == 3  # and the thread still serves


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_child_parses_on_its_own_large_stack():
    from tflint_gpu.engine.lint import on_large_stack

    on_large_stack(threading.get_ident)  # the parent's thread exists before the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's thread is not here; a new one must serve
        try:
            ok = lint_source(HEADER + LONG_CHAIN[:2000].rsplit(" +", 1)[0] + "\n", "c.py", _rules()) is not None
            os.write(write, b"ok" if ok and on_large_stack(threading.get_ident) != threading.get_ident() else b"no")
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert os.read(read, 2) == b"ok"


def _counting_validations(monkeypatch) -> list:
    """Every ``Name`` validated from now on, appended to the list returned."""
    import libcst as cst

    seen: list = []
    validate = cst.Name._validate

    def counted(node):
        seen.append(node.value)
        validate(node)

    monkeypatch.setattr(cst.Name, "_validate", counted)
    return seen


def test_the_parsers_nodes_skip_libcsts_validation_and_every_other_node_keeps_it(monkeypatch):
    import libcst as cst
    from tflint_gpu.engine.lint import parse

    own = cst.CSTNode.__post_init__
    seen = _counting_validations(monkeypatch)
    source = HEADER + "y = tf.constant(1)\n"
    module = parse(source, "v.py")
    assert seen == []  # the parser's nodes: not validated
    assert cst.CSTNode.__post_init__ is own  # and LibCST's own method is back (a bare parse is LibCST's)
    assert module.code == source and module.deep_equals(cst.parse_module(source))  # the same tree as LibCST's
    assert "tf" in seen  # LibCST's own parse_module, outside ours, still validates
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")  # and a node made after a parse is checked as it is made
    with pytest.raises(UnreadableSource):
        parse(JOINED_STRINGS, "j.py")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")  # also after a parse that failed


def test_only_the_parsing_thread_skips_validation(monkeypatch):
    import libcst as cst
    from tflint_gpu.engine import lint

    seen = _counting_validations(monkeypatch)
    errors: list = []

    def elsewhere():
        try:
            cst.Name("")
        except cst.CSTValidationError as error:
            errors.append(error)

    with lint._trusted_parse():  # this thread is parsing
        cst.Name("here")
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
    assert seen == [""] and len(errors) == 1  # another thread's node is validated; this one's is not
