"""The language server's reparse: reusing unchanged top-level statements gives the full parse's module."""
import ast
import importlib.util
import random
from pathlib import Path

import libcst as cst
import pytest

from tflint_gpu.engine.reparse import Reparser, statement_lines


def _same_as_full(reparser: Reparser, text: str) -> cst.Module:
    got = reparser.parse(text, ast.parse(text))
    full = cst.parse_module(text)
    assert got.deep_equals(full), text
    assert got.code == full.code
    assert (got.default_indent, got.has_trailing_newline, got.encoding, got.default_newline) == \
        (full.default_indent, full.has_trailing_newline, full.encoding, full.default_newline)
    return got


def _versions(*texts: str) -> Reparser:
    reparser = Reparser()
    for text in texts:
        _same_as_full(reparser, text)
    return reparser


BASE = ("import tensorflow as tf\n\n\n"
        "def f(x):\n    return x + 1\n\n\n"
        "@tf.function\ndef g(x):\n    y = x * 2\n    return y\n\n\n"
        "class L(tf.keras.layers.Layer):\n    def call(self, x):\n        return x\n\n\n"
        "z = f(1)\n")


def test_an_edit_in_one_statement_reuses_the_others_nodes():
    old = BASE
    new = BASE.replace("y = x * 2", "y = x * 3")
    reparser = _versions(old)
    before = reparser.last.module
    module = _same_as_full(reparser, new)
    assert reparser.reused == 1
    assert module.body[0] is before.body[0] and module.body[1] is before.body[1]
    assert module.body[3] is before.body[3] and module.body[4] is before.body[4]
    assert module.body[2] is not before.body[2]


@pytest.mark.parametrize("new", [
    BASE.replace("z = f(1)\n", "z = f(1)\nw = 2\n"),  # a statement added at the end
    BASE.replace("import tensorflow as tf\n", "import tensorflow as tf\nimport numpy as np\n"),  # at the start
    BASE.replace("\n\n\ndef f(x)", "\n\n# a note\n\ndef f(x)"),  # a comment between statements
    BASE.replace("@tf.function\n", "@tf.function(jit_compile=True)\n"),  # a decorator
    BASE.replace("def f(x):\n    return x + 1\n\n\n", ""),  # a statement deleted
    BASE.replace("    return y\n", "    return y\n    # trailing, in the block\n"),  # a block's footer
    BASE.replace("z = f(1)\n", "z = f(1); q = 3\n"),  # two statements on one line
    BASE.replace("z = f(1)\n", "z = f(1) + \\\n    2\n"),  # a backslash continuation
    BASE.rstrip("\n"),  # no newline at the end
    BASE.replace("def f(x):\n    return x + 1", "def f(x):\n  return x + 1"),  # the first block's indent
    BASE.replace("import tensorflow as tf\n", "# -*- coding: latin-1 -*-\nimport tensorflow as tf\n"),
    BASE + "\n\n    # an indented comment at the end\n",
    BASE.replace("\n\n\nclass L", "\n  # a comment indented less than the block\nclass L"),
], ids=["append", "prepend", "comment-between", "decorator", "delete", "block-footer", "semicolons",
        "backslash", "no-final-newline", "first-indent", "encoding", "indented-comment-at-end",
        "half-indented-comment"])
def test_edits_at_every_kind_of_boundary_give_the_full_parse(new):
    _versions(BASE, new, BASE)


def test_texts_with_carriage_returns_or_form_feeds_are_parsed_whole():
    reparser = _versions(BASE.replace("\n", "\r\n"), BASE.replace("\n", "\r\n").replace("x * 2", "x * 3"))
    assert reparser.reused == 0
    reparser = _versions(BASE, BASE.replace("\nz = f(1)", "\n\fz = f(1)"))
    assert reparser.reused == 0


def test_statement_lines_take_decorators_and_one_line_statements():
    text = "a = 1; b = 2\n@d\n@e(\n  1)\ndef f():\n    pass\nx = [\n  1]\n"
    assert statement_lines(ast.parse(text), text.split("\n")) == [(1, 1), (2, 6), (7, 8)]
    continued = "@\\\nd\ndef f():\n    pass\n"  # the `@` and its expression on two lines
    assert statement_lines(ast.parse(continued), continued.split("\n")) is None


def _keras_files():
    spec = importlib.util.find_spec("keras")
    if spec is None or not spec.submodule_search_locations:
        return []
    return sorted((Path(list(spec.submodule_search_locations)[0]) / "src").rglob("*.py"))


def _edit(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    kind = rng.randrange(7)
    if kind == 0 and lines[i] and not lines[i].endswith("\\"):
        lines[i] += "  # edited"
    elif kind == 1:
        lines.insert(i, "zz_edit = 1")
    elif kind == 2:
        lines.insert(i, "# a comment")
    elif kind == 3:
        lines.insert(i, "")
    elif kind == 4:
        del lines[i]
    elif kind == 5:
        lines.insert(i, lines[i])
    else:
        lines.insert(i, "    # an indented comment")
    return "\n".join(lines)


def test_random_edits_of_real_files_give_the_full_parse():
    """Chains of random line edits (those that stay Python) over Keras's own modules."""
    files = _keras_files()
    if not files:
        pytest.skip("keras (the test extra) is not installed")
    rng = random.Random(20261203)
    reparsers = []
    for path in rng.sample(files, 40):
        text = path.read_text(encoding="utf-8")
        reparser = Reparser()
        reparser.parse(text, ast.parse(text))
        reparsers.append(reparser)
        for _ in range(6):
            new = _edit(text, rng)
            try:
                ast.parse(new)
            except SyntaxError:
                continue
            _same_as_full(reparser, new)
            text = new
    # Most edits reuse statements (the test would pass vacuously if none did).
    assert sum(r.reused for r in reparsers) > sum(r.full for r in reparsers)


def test_lint_source_with_a_reparser_finds_what_a_full_parse_finds():
    from tflint_gpu.engine.lint import lint_source
    from tflint_gpu.rules.base import all_rules

    rules = list(all_rules())
    old = BASE + "\n\n@tf.function\ndef h(x):\n    return x.numpy()\n"
    new = old.replace("y = x * 2", "y = x * 2 + 1")
    reparser = Reparser()
    lint_source(old, "m.py", rules, reparser=reparser)
    found = lint_source(new, "m.py", rules, reparser=reparser).findings
    assert reparser.reused == 1
    assert found == lint_source(new, "m.py", rules).findings and any(f.code == "TFG101" for f in found)


def test_the_server_keeps_the_modules_of_the_documents_checked_last_only():
    from tflint_gpu.server import REPARSED, TflintServer

    server = TflintServer()
    kept = [server.reparser(f"file:///d{i}.py") for i in range(REPARSED + 4)]
    assert len(server.reparsers) == REPARSED
    assert server.reparser(f"file:///d{REPARSED + 3}.py") is kept[-1]
    assert "file:///d0.py" not in server.reparsers
