"""A fix writes only TensorFlow names the project's target has (``semantic.api_since``).

On real code, TFG904 rewrote `tf.data.experimental.AUTOTUNE` to `tf.data.AUTOTUNE` in a project
pinned to TF 2.3.1 (AttributeError at import: the name came in 2.4), `experimental_relax_shapes=` to
`reduce_retracing=` under TF 2.7 (TypeError: 2.9), and TFG306 added `num_parallel_calls=tf.data.AUTOTUNE`
under TF 2.1. The table of first releases is derived by ``scripts/derive_api_since.py`` (each release
installed and asked); here it is checked against the installed TensorFlow, and every name the
rules write through the engine's spelling is in it.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

import pytest

from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import lint_source, using_target
from tflint_gpu.rules.base import REGISTRY, all_rules
from tflint_gpu.semantic import api_since
from tflint_gpu.semantic.target import parse_target

PACKAGE = Path(api_since.__file__).resolve().parent.parent


def _exists(tf, name: str) -> bool:
    if name.endswith("=)"):
        function, keyword = name[:-2].split("(")
        obj = tf
        for part in function.split(".")[1:]:
            obj = getattr(obj, part)
        return keyword in inspect.signature(obj).parameters
    obj = tf
    for part in name.split(".")[1:]:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def test_the_table_holds_what_the_installed_tensorflow_has():
    tf = pytest.importorskip("tensorflow")
    table = api_since._table()
    assert table, "no entries"
    for name, first in table.items():
        assert first is not None, f"{name}: not found in any release the derivation installed"
        assert _exists(tf, name), f"{name}: the table says since {first}, TF {tf.__version__} lacks it"
    assert api_since.since("tensorflow.data.AUTOTUNE") == (2, 4)
    assert api_since.since("tensorflow.function(reduce_retracing=)") == (2, 9)


def test_every_tensorflow_name_a_rule_spells_is_in_the_table():
    """The rules and fix helpers spell TF names through ``ctx.module_expr("tensorflow", ...)``:
    each literal one is judged against the target, so each must be in the table."""
    written = set()
    for path in list((PACKAGE / "rules").glob("*.py")) + list((PACKAGE / "autofix").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "module_expr" and len(node.args) >= 2 \
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value == "tensorflow" \
                    and isinstance(node.args[1], ast.Constant):
                written.add("tensorflow." + node.args[1].value)
    assert "tensorflow.data.AUTOTUNE" in written
    assert sorted(name for name in written if api_since.since(name) is None) == []


def _lint(source, code, target):
    return [(f.row, f.code, f.fix is not None) for f in
            lint_source(textwrap.dedent(source), "a.py", [REGISTRY[code]], target=parse_target(target)).findings]


def _fixed(source, code, target):
    with using_target(parse_target(target)):
        return fix_source(textwrap.dedent(source), "a.py", [REGISTRY[code]], unsafe=True).source


ALIAS = """
import tensorflow as tf

AUTO = tf.data.experimental.AUTOTUNE

@tf.function(experimental_relax_shapes=True)
def f(x):
    return x
"""


def test_tfg904_names_a_current_name_only_where_the_target_has_it():
    assert _lint(ALIAS, "TFG904", "tf2.3") == []
    assert _lint(ALIAS, "TFG904", "tf2.7") == [(4, "TFG904", True)]  # AUTOTUNE: 2.4; reduce_retracing: 2.9
    assert _lint(ALIAS, "TFG904", "tf2.9") == [(4, "TFG904", True), (6, "TFG904", True)]
    assert "reduce_retracing" not in _fixed(ALIAS, "TFG904", "tf2.7")
    assert "reduce_retracing=True" in _fixed(ALIAS, "TFG904", "tf2.15")
    assert _fixed(ALIAS, "TFG904", "tf2.3") == textwrap.dedent(ALIAS)


PIPELINE = """
import tensorflow as tf

def augment(x):
    return tf.image.random_flip_left_right(x)

ds = tf.data.Dataset.from_tensor_slices(tf.zeros((4, 8, 8, 3))).map(augment).batch(2)
"""


def test_a_fix_spells_autotune_as_the_target_has_it():
    old = _fixed(PIPELINE, "TFG306", "tf2.3")
    assert "tf.data.experimental.AUTOTUNE" in old and "tf.data.AUTOTUNE" not in old
    assert "num_parallel_calls=tf.data.AUTOTUNE" in _fixed(PIPELINE, "TFG306", "tf2.6")


def test_the_rules_run_with_every_target():
    """No rule asks for a name in a way that fails for an old target."""
    rules = list(all_rules())
    for target in ("tf2.1", "tf2.3", "tf2.8", "latest"):
        lint_source(textwrap.dedent(ALIAS + PIPELINE), "a.py", rules, target=parse_target(target))
