"""A fix never moves code across notebook cells, whatever rule makes it.

The notebook layer gives the fixer the row each cell starts on: a fix whose edits do not all
lie in one cell is not applied (its finding stays, reported without a fix), and the fixed
source is cut back into cells where the edits put each line.
"""
from __future__ import annotations

import json

import libcst as cst

from tflint_gpu import notebook as nb
from tflint_gpu.engine.fix import fix_source
from tflint_gpu.rules.base import REGISTRY, Fix, Rule, Safety


class _Mover(Rule):
    """Moves a pipeline's `prefetch` to where the pipeline is read (test only): a fix whose two
    edits lie in the cell that builds the pipeline and in the cell that reads it."""

    name = "mover"
    message = "prefetch where the pipeline is read"

    def visit_Module(self, node, ctx):
        found = {}

        class Find(cst.CSTVisitor):
            def visit_Call(self, call):
                if isinstance(call.func, cst.Attribute) and call.func.attr.value == "prefetch" \
                        and isinstance(call.func.value, cst.Call) and isinstance(call.args[0].value, cst.Integer):
                    found["call"] = call

            def visit_For(self, loop):
                found.setdefault("iter", loop.iter)

        node.visit(Find())
        if len(found) == 2:
            call, read = found["call"], found["iter"]
            moved = cst.Call(cst.Attribute(read, cst.Name("prefetch")), call.args)
            ctx.report(call, fix=Fix("Prefetch where it is read", Safety.SAFE, {call: call.func.value, read: moved}))


_Mover.code = "TFG000"  # not registered: set after the class is made

PIPELINE = ["import tensorflow as tf",
            "ds = tf.data.Dataset.range(10).prefetch(2)",
            "ds = ds.map(lambda x: x * 2)",
            "for x in ds:\n    pass"]


def test_a_fix_whose_edits_lie_in_two_cells_is_not_applied_and_its_finding_has_no_fix():
    findings, _ = nb.lint_cells(PIPELINE, "n.ipynb", [_Mover])
    assert [(f.code, f.cell) for f in findings] == [("TFG000", 2)]
    assert findings[0].fix is None
    assert nb.fix_cells(PIPELINE, "n.ipynb", [_Mover]) is None


def test_the_same_fix_inside_one_cell_is_applied():
    one = ["import tensorflow as tf", "\n".join(PIPELINE[1:])]
    findings, _ = nb.lint_cells(one, "n.ipynb", [_Mover])
    assert findings[0].fix is not None
    assert nb.fix_cells(one, "n.ipynb", [_Mover]) == [
        "import tensorflow as tf",
        "ds = tf.data.Dataset.range(10)\nds = ds.map(lambda x: x * 2)\nfor x in ds.prefetch(2):\n    pass"]


def test_a_notebook_file_keeps_the_cross_cell_finding_and_gets_the_other_fixes():
    cells = PIPELINE + ["other = tf.data.Dataset.range(4).batch(2)\nfor y in other:\n    pass"]
    data = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                       "source": source} for source in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    raw = (json.dumps(data, indent=1) + "\n").encode()
    outcome = nb.process(raw, "n.ipynb", [_Mover, REGISTRY["TFG303"]], fix=True, unsafe=False, want_diff=True)
    assert outcome.error is None and outcome.fixed == 1 and outcome.fixed_codes == ["TFG303"]
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
               for c in json.loads(outcome.text)["cells"]]
    assert sources[:4] == PIPELINE
    assert sources[4] == "other = tf.data.Dataset.range(4).batch(2).prefetch(tf.data.AUTOTUNE)\nfor y in other:\n    pass"
    assert [(f.code, f.cell, f.fix is None) for f in outcome.findings] == [("TFG000", 2, True)]


def test_lines_go_to_the_cell_the_edits_put_them_in_not_where_a_line_diff_guesses():
    # A line added at the end of cell 1 by a fix there: a line diff sees an insertion on the
    # boundary and would give a non-import line to the cell below.
    joined = nb.join([nb.Cell(0, 1, "a = 1", (0, 0), [], True), nb.Cell(1, 2, "b = 2", (0, 0), [], True)])
    assert joined.starts() == [1, 2]
    assert nb.split(joined, "a = 1\nc = 3\nb = 2") == ["a = 1", "c = 3\nb = 2"]  # the guess
    assert nb.split(joined, "a = 1\nc = 3\nb = 2", [1, 3]) == ["a = 1\nc = 3", "b = 2"]


def test_the_fixer_refuses_an_edit_past_a_segment_boundary_and_carries_the_rows():
    source = "import tensorflow as tf\nds = tf.data.Dataset.range(10).prefetch(2)\nfor x in ds:\n    pass\n"
    whole = fix_source(source, "a.py", [_Mover])
    assert whole.applied == 1 and whole.segments is None
    cut = fix_source(source, "a.py", [_Mover], segments=[1, 3])
    assert cut.applied == 0 and cut.source == source and cut.segments == [1, 3]
    # An import a fix needs, put after the imports (the end of the first segment), moves the rows below.
    notebook = "from tensorflow.data import Dataset\nx = 1\nds = Dataset.range(3).batch(2)\nfor v in ds:\n    pass\n"
    fixed = fix_source(notebook, "a.py", [REGISTRY["TFG303"]], segments=[1, 2, 3])
    assert fixed.source.startswith("from tensorflow.data import Dataset\nimport tensorflow as tf\nx = 1\n")
    assert fixed.applied == 1 and fixed.segments == [1, 3, 4]
