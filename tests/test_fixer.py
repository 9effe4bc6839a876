"""The fixer: edits applied to the text as read, untouched lines byte for byte,
reported edits equal to what --fix writes, and fixes of one round kept out of
the text another fix was judged safe on (``Fix.depends_on``)."""
from __future__ import annotations

import re

import libcst as cst
import pytest

from tflint_gpu.engine.fix import apply_edits, fix_source
from tflint_gpu.engine.lint import lint_source
from tflint_gpu.findings import Edit, Fix, Safety
from tflint_gpu.rules.base import REGISTRY, all_rules

RULES = list(all_rules())


def _lines(text):
    return re.split(r"(?<=\n)", text)  # not splitlines: it splits at form feeds too


def test_lines_no_fix_touches_come_out_byte_for_byte():
    """LibCST writes a line-leading form feed before a statement back without
    it; the fixer edits the text it read, so every other line keeps it."""
    source = ("import tensorflow as tf\n"
              "\x0c\n"
              "\x0cdef f(x):\n"
              "\tif x:\t \n"
              "\t\treturn x   \n"
              "\x0c\tdevices = tf.config.experimental.list_physical_devices('CPU')\n"
              "\treturn devices\n"
              "\x0cclass A:  # c\n"
              "    pass\n")
    outcome = fix_source(source, "f.py", RULES)
    assert outcome.applied == 1
    before, after = _lines(source), _lines(outcome.source)
    assert len(before) == len(after)
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert changed == [5]
    assert after[5] == "\x0c\tdevices = tf.config.list_physical_devices('CPU')\n"


def test_a_finding_on_a_line_with_a_dropped_form_feed_has_the_column_of_the_text():
    source = "import tensorflow as tf\n\x0cdevices = tf.config.experimental.list_physical_devices('CPU')\n"
    finding = lint_source(source, "f.py", [REGISTRY["TFG904"]]).findings[0]
    assert (finding.row, finding.col) == (2, _lines(source)[1].index("tf.config"))
    assert apply_edits(source, finding.fix.edits) == \
        "import tensorflow as tf\n\x0cdevices = tf.config.list_physical_devices('CPU')\n"


FIX_CASES = [pytest.param(rule, case, id=f"{rule.code}-{i}")
             for rule in RULES for i, case in enumerate(rule.cases) if case.fixed is not None]


@pytest.mark.parametrize("rule,case", FIX_CASES)
def test_the_edits_a_finding_reports_are_what_the_fixer_writes(rule, case):
    """An editor applying one finding's edits (JSON, SARIF, a language server)
    gets valid code, and where the case has one fix, exactly ``--fix``'s output."""
    findings = [f for f in lint_source(case.code, "case.py", [rule]).findings if f.fix is not None]
    for finding in findings:
        cst.parse_module(apply_edits(case.code, finding.fix.edits))
    outcome = fix_source(case.code, "case.py", [rule], unsafe=True)
    if len(findings) == 1 and outcome.applied == 1:
        assert apply_edits(case.code, findings[0].fix.edits) == case.fixed


def test_edits_keep_the_indentation_of_a_replaced_statement():
    rule = REGISTRY["TFG102"]
    case = next(c for c in rule.cases if c.fixed is not None and "\n    if " in c.code)
    finding = next(f for f in lint_source(case.code, "case.py", [rule]).findings if f.fix is not None)
    text = apply_edits(case.code, finding.fix.edits)
    assert "\n    y = tf.cond(" in text


# -- fixes judged on text another fix replaces ------------------------------

class _Compile:
    """Renames a function whose body has no `traced_print` to `compiled_...`: a
    fix judged on the body that replaces only the name."""

    code, name, message, needs, node_types = "XFX1", "compile", "m", (), ("FunctionDef",)

    def visit_FunctionDef(self, node, ctx):
        if "traced_print" in ctx.module.code_for_node(node) or node.name.value.startswith("compiled_"):
            return
        new = cst.Name("compiled_" + node.name.value)
        ctx.report(node.name, fix=Fix("compile", Safety.SAFE, {node.name: new}, depends_on=(node.body,)))


class _TracedPrint:
    """Renames `print` to `traced_print` unless the file has a compiled function."""

    code, name, message, needs, node_types = "XFX2", "print", "m", (), ("Call",)

    def visit_Call(self, node, ctx):
        if isinstance(node.func, cst.Name) and node.func.value == "print" and "compiled_" not in ctx.model.source:
            ctx.report(node, fix=Fix("print", Safety.SAFE, {node.func: cst.Name("traced_print")}))


def test_a_fix_is_not_combined_with_one_inside_the_text_it_was_judged_on():
    source = "import tensorflow as tf\n\ndef step(x):\n    print(x)\n    return x\n"
    outcome = fix_source(source, "f.py", [_Compile, _TracedPrint])
    assert "compiled_step" in outcome.source and "traced_print" not in outcome.source
    assert outcome.converged and outcome.applied == 1


def test_without_a_dependency_fixes_of_one_round_are_applied_together():
    """The look-alike: two fixes that do not depend on each other's text go in one round."""
    source = "import tensorflow as tf\n\nprint(1)\nprint(2)\n"
    outcome = fix_source(source, "f.py", [_TracedPrint])
    assert outcome.source.count("traced_print") == 2 and outcome.applied == 2


def test_a_round_that_does_not_parse_is_refused():
    class Breaks:
        code, name, message, needs, node_types = "XFX3", "breaks", "m", (), ("Call",)

        def visit_Call(self, node, ctx):
            ctx.report(node, fix=Fix("break", Safety.SAFE, {node: cst.Name("lambda")}))

    source = "import tensorflow as tf\nx = tf.zeros(3)\n"
    outcome = fix_source(source, "f.py", [Breaks])
    assert outcome.refused and outcome.source == source and outcome.applied == 0


def test_apply_edits_puts_an_insertion_before_a_replacement_at_the_same_point():
    text = "a\nb\n"
    edits = [Edit("B\n", (2, 0), (3, 0)), Edit("import x\n", (2, 0), (2, 0))]
    assert apply_edits(text, edits) == "a\nimport x\nB\n"
