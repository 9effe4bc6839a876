"""The derived table of NumPy 2 removals (scripts/derive_numpy_removals.py) against the installed NumPy,
and which NumPy a target's TensorFlow installs."""
import builtins
import warnings

import numpy as np
import pytest

from tflint_gpu.semantic import numpy_removals
from tflint_gpu.semantic.target import parse_target

ENTRIES = sorted(numpy_removals.table().values(), key=lambda e: e["name"])


def test_the_table_holds_numpys_own_lists():
    import numpy._expired_attrs_2_0 as expired

    names = {e["name"] for e in ENTRIES}
    assert set(expired.__expired_attributes__) <= names
    assert set(np.__former_attrs__) <= names
    assert {"product", "cumproduct", "NAN", "in1d", "trapz"} <= names
    assert "bool" not in names  # NumPy 2 has np.bool again


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_each_name_raises_and_its_replacement_exists_under_the_installed_numpy(entry):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AttributeError):
            getattr(np, entry["name"])
        if entry["replacement"]:
            eval(entry["replacement"], {"np": np, "__builtins__": builtins})


def test_exact_entries_say_why():
    exact = {e["name"]: e for e in ENTRIES if e["exact"]}
    assert {"Inf", "NaN", "float_", "int", "float", "product", "string_", "unicode_", "NINF"} <= set(exact)
    assert exact["Inf"]["kind"] == "same object" and exact["product"]["kind"] == "forwards"
    assert not numpy_removals.table()["in1d"]["exact"]


@pytest.mark.parametrize("spelling,numpy", [
    ("latest", (2, 4)), ("tf2.21", (2, 4)), ("latest-keras2", (2, 4)), ("tf2.18", (2, 0)),
    ("tf2.17", (1, 26)), ("tf2.16", (1, 26)), ("tf2.14", (1, 26)), ("tf2.13", (1, 24)), ("tf2.12", None),
])
def test_the_numpy_a_target_installs(spelling, numpy):
    assert numpy_removals.installed_numpy(parse_target(spelling)) == numpy


def test_removals_follow_the_installed_numpy():
    assert numpy_removals.removed("Inf", (2, 0)) is not None
    assert numpy_removals.removed("Inf", (1, 26)) is None  # TF 2.16/2.17 pin numpy<2
    assert numpy_removals.removed("int", (1, 24)) is not None  # gone since NumPy 1.24
    assert numpy_removals.removed("in1d", (2, 0)) is None and numpy_removals.removed("in1d", (2, 4)) is not None
    assert numpy_removals.removed("int", None) is None


def test_the_rule_reports_what_the_targets_numpy_lacks():
    from tflint_gpu.engine.lint import lint_source
    from tflint_gpu.rules.numpy2_removed_name import Numpy2RemovedName

    source = "import numpy as np\nimport tensorflow as tf\nbest = np.Inf\nlabels = np.int\n"

    def found(spelling):
        result = lint_source(source, "x.py", [Numpy2RemovedName], target=parse_target(spelling))
        return [(f.row, f.message.split(" was")[0]) for f in result.findings]

    assert found("latest") == [(3, "`np.Inf`"), (4, "`np.int`")]
    assert found("tf2.18") == [(3, "`np.Inf`"), (4, "`np.int`")]
    assert found("tf2.17") == [(4, "`np.int`")]  # TF 2.17 installs NumPy 1.26: np.Inf still there
    assert found("tf2.12") == []
