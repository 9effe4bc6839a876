"""docs/keras3-migration.md is what scripts/keras3_coverage.py makes of the table and the rules now."""
from __future__ import annotations

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _script():
    spec = importlib.util.spec_from_file_location("keras3_coverage", os.path.join(ROOT, "scripts",
                                                                                   "keras3_coverage.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_coverage_page_is_current():
    assert _script().main(["--check"]) == 0, "run: python scripts/keras3_coverage.py"


def test_the_page_counts_what_the_rules_report():
    script = _script()
    assert script._lint("opt = keras.optimizers.Adam(lr=0.001)\n") == (["TFG901"], "safe")
    assert script._lint("opt = keras.optimizers.Adam(learning_rate=0.001)\n") == ([], "")
    with open(script.PAGE, encoding="utf-8") as handle:
        assert "| `lr=` of optimizers (now `learning_rate=`) | TFG901 | safe |" in handle.read()


def test_the_fixes_of_keras_list_run_as_recorded():
    """Each fix of Keras's list is executed (the original under tf_keras, the fixed text under Keras 3);
    the page's `fix executed` column is what that gives now."""
    script = _script()
    assert script.verify() == script._verified(), "run: python scripts/keras3_coverage.py --verify"
    assert "runs" in script._verified().values()
