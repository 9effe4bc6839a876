"""The derived migration table: regenerated where TensorFlow is installed (drift fails), and its loader."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tflint_gpu.semantic import migration_table
from tflint_gpu.semantic.migration_table import spelling_of, table

ROOT = Path(__file__).resolve().parent.parent
HAS_FRAMEWORKS = all(importlib.util.find_spec(m) is not None for m in ("tensorflow", "keras", "tf_keras"))


def _env():
    env = dict(os.environ)
    env.pop("TF_USE_LEGACY_KERAS", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return env


@pytest.mark.skipif(not HAS_FRAMEWORKS, reason="tensorflow, keras and tf_keras are needed to derive the table")
def test_committed_table_matches_a_fresh_derivation():
    """scripts/derive_migration.py --check derives the table again (every entry executed) and compares."""
    import keras
    import tensorflow as tf  # noqa: F401  (the versions the table was derived with)

    recorded = table().versions
    if recorded.get("keras") != keras.__version__:
        pytest.skip(f"the table was derived with Keras {recorded.get('keras')}, this is {keras.__version__}")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "derive_migration.py"), "--check"],
                          capture_output=True, text=True, timeout=900, env=_env(), cwd=ROOT)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:] + \
        "\nthe table drifted: run `python scripts/derive_migration.py` and commit the data file"


def test_table_is_read_only_when_a_rule_asks():
    code = ("import tflint_gpu.rules, tflint_gpu.engine.lint\n"
            "from tflint_gpu.semantic import migration_table as m\n"
            "print(m._TABLE is None)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.stdout.strip() == "True", done.stderr


def test_data_file_is_package_data_and_sorted():
    text = (ROOT / "pyproject.toml").read_text()
    assert '"semantic/data/*.json"' in text
    data = json.loads(Path(migration_table.DATA_FILE).read_text(encoding="utf-8"))
    keys = [(e["kind"], e["qualname"], e.get("member", ""), e.get("keyword", "")) for e in data["entries"]]
    assert keys == sorted(keys)
    assert data["format"] == 1 and set(data["versions"]) == {"tensorflow", "keras", "tf_keras"}


def test_every_entry_was_executed_or_says_why_not():
    kinds = {}
    for entry in table().entries():
        kinds[entry["kind"]] = kinds.get(entry["kind"], 0) + 1
        if entry["kind"] in ("module", "name"):
            for outcome in entry["spellings"].values():
                assert "breaks" in outcome["attribute"] and "breaks" in outcome["import"]
        elif entry["kind"] == "tf_name":
            assert "breaks" in entry["outcome"]["attribute"]
        elif entry["kind"] == "member":
            assert "breaks" in entry["outcome"]
        else:
            assert entry["executed"]
            assert entry["outcome"] is not None or entry["executed"].startswith("not executed")
    assert set(kinds) == {"module", "name", "member", "keyword", "tf_name", "tf_keyword", "positional", "tf_positional",
                          "safe_mode"}


def test_modules_and_names_per_spelling():
    t = table()
    found = t.removed_module("keras.layers.experimental", "tensorflow.keras")
    assert found.error == "ModuleNotFoundError" and "tensorflow.keras.layers.experimental" in found.message
    assert t.removed_module("keras.layers.experimental", "tensorflow.keras", "attribute").error == "AttributeError"
    # tf.keras under TF 2.21 keeps preprocessing.text and the legacy backend; standalone Keras 3 does not
    assert t.removed_module("keras.preprocessing.text", "tensorflow.keras") is None
    assert t.removed_module("keras.preprocessing.text", "keras").error == "ModuleNotFoundError"
    assert t.removed_name("keras.backend", "eval", "tensorflow.keras") is None
    found = t.removed_name("keras.backend", "eval", "keras")
    assert found.error == "AttributeError" and found.replacement is None
    assert t.removed_name("keras.backend", "eval", "keras", "import").error == "ImportError"
    moved = t.removed_name("keras.layers.experimental.preprocessing", "Rescaling", "tensorflow.keras")
    assert (moved.replacement, moved.exact) == ("keras.layers.Rescaling", True)
    near = t.removed_name("keras.backend", "sum", "keras")
    assert (near.replacement, near.exact) == ("keras.ops.sum", False)
    assert t.removed_name("keras.layers", "Dense", "keras") is None


def test_members_through_the_bases_the_table_records():
    t = table()
    assert t.removed_member("keras.layers.Dense", "add_update").error == "AttributeError"
    assert "keras.layers.Layer" in t.classes["keras.layers.Dense"]
    reset = t.removed_member("keras.metrics.Mean", "reset_states")
    assert (reset.replacement, reset.exact) == ("reset_state", True)
    assert t.removed_member("keras.Model", "fit_generator").error == "AttributeError"
    # in dir() of Keras 2's class only, but an instance attribute in Keras 3: executed, no error
    assert t.removed_member("keras.layers.Layer", "name") is None
    assert t.removed_member("keras.layers.Dense", "call") is None
    assert t.removed_member("mypkg.Thing", "add_update") is None


def test_keywords_executed_under_keras3():
    t = table()
    workers = t.removed_keyword("keras.Model.fit", "workers")
    assert workers.error == "TypeError" and "workers" in workers.message
    fused = t.removed_keyword("keras.layers.Dense", "batch_size")
    assert fused.error == "ValueError" and "Unrecognized keyword arguments" in fused.message
    # accepted with a warning: not a breakage
    entry = t.keyword_entry("keras.layers.Dense", "input_shape")
    assert entry is None or not (entry["outcome"] or {}).get("breaks")
    assert t.removed_keyword("keras.layers.Dense", "input_shape") is None
    leaky = t.removed_keyword("keras.utils.to_categorical", "y")
    assert (leaky.error, leaky.replacement, leaky.exact) == ("TypeError", "x", False)


def test_tensorflow_names_and_deprecated_arguments():
    t = table()
    session = t.removed_tf_name("tensorflow.Session")
    assert session.error == "AttributeError"
    assert (session.replacement, session.exact) == ("tensorflow.compat.v1.Session", False)
    assert t.removed_tf_name("tensorflow.Session", "import").error == "ImportError"
    normal = t.removed_tf_name("tensorflow.random_normal")
    assert (normal.replacement, normal.exact) == ("tensorflow.random.normal", True)
    assert t.removed_tf_name("tensorflow.function") is None
    assert t.is_tf_module("tensorflow.layers") or t.removed_tf_name("tensorflow.layers") is not None
    dtype = t.deprecated_tf_keyword("tensorflow.map_fn", "dtype")
    assert (dtype.replacement, dtype.exact, dtype.rename) == ("fn_output_signature", True, True)
    generator = t.deprecated_tf_keyword("tensorflow.data.Dataset.from_generator", "output_types")
    assert (generator.replacement, generator.exact, generator.rename) == ("output_signature", True, False)
    assert generator.arguments == "output_signature=tf.TensorSpec(shape=None, dtype=tf.int32)"
    back_prop = t.deprecated_tf_keyword("tensorflow.while_loop", "back_prop")
    # executed: no effect eagerly, no gradient once traced: dropping it is not exact
    assert (back_prop.value, back_prop.replacement, back_prop.dropped_exact) == ("False", None, False)
    assert back_prop.deprecated_result.endswith("True]") and back_prop.current_result.endswith("False]")
    follow = t.deprecated_tf_keyword("tensorflow.function", "experimental_follow_type_hints")
    assert follow.dropped_exact is True  # the same traces with and without it under TF 2.21
    assert t.deprecates_tf_keywords("tensorflow.nn.l2_normalize") and not t.deprecates_tf_keywords("tensorflow.add")
    # every entry was executed
    assert all(e["executed"].startswith("executed") for e in t.entries() if e["kind"] == "tf_keyword")


def test_spelling_of_raw_names():
    assert spelling_of("keras.layers.Dense") == "keras"
    assert spelling_of("tensorflow.keras.layers.Dense") == "tensorflow.keras"
    assert spelling_of("tensorflow.compat.v2.keras.layers") == "tensorflow.keras"
    assert spelling_of("keras.src.layers.Dense") is None
    assert spelling_of("tf_keras.layers.Dense") is None
    assert spelling_of("tensorflow.nn.relu") is None


def test_tfg918_reads_every_deprecated_tf_argument_the_table_flags():
    # The rule's text prefilter must name each keyword the table records (else a file is never parsed).
    from tflint_gpu.rules.deprecated_tf_argument import _ELSEWHERE, DeprecatedTfArgument

    t = table()
    wanted = {e["keyword"] for e in t.entries() if e["kind"] == "tf_keyword"
              and t.deprecated_tf_keyword(e["qualname"], e["keyword"]) is not None
              and (e["qualname"], e["keyword"]) not in _ELSEWHERE}
    assert wanted and wanted <= set(DeprecatedTfArgument.needs[0])


def test_tfg902_text_prefilter_names_every_layer_node_member():
    # A file asking for Keras 2's layer-node API must reach the rule, whatever else it says.
    from tflint_gpu.rules.removed_keras_method import RemovedKerasMethod

    members = [e["member"] for e in table().entries() if e["kind"] == "member" and e.get("node_api")]
    assert members and all(any(text in m for text in RemovedKerasMethod.needs[0]) for m in members)


def test_a_file_naming_no_framework_that_reads_the_layer_node_api_is_checked():
    # A FLOPs helper module (no tensorflow or keras in its text) walking the layers of a model its callers
    # hand in: Keras 2's node-API names are the engine's text for Keras, as the table records them.
    from tflint_gpu.engine.lint import KERAS_ONLY_TEXT, lint_source
    from tflint_gpu.rules.removed_keras_method import RemovedKerasMethod

    members = {e["member"] for e in table().entries() if e["kind"] == "member" and e.get("node_api")}
    assert set(KERAS_ONLY_TEXT) == members
    source = "import numpy as np\n\ndef flops(model):\n    return [l.get_output_shape_at(0) for l in model.layers]\n"
    assert [(f.code, f.row) for f in lint_source(source, "utils.py", [RemovedKerasMethod]).findings] == \
        [("TFG902", 4)]
    assert lint_source(source.replace("get_output_shape_at", "output_size"), "utils.py",
                       [RemovedKerasMethod]).findings == []


def test_positional_parameters_keras3_binds_otherwise():
    t = table()
    compile_ = t.moved_positional("keras.Model.compile")
    assert (compile_["position"], compile_["keras2"], compile_["keras3"]) == (2, "metrics", "loss_weights")
    assert compile_["keras2_names"][:2] == ["metrics", "loss_weights"]
    assert set(compile_["keras2_names"][:2]) <= set(compile_["keras3_keywords"])
    sequential = t.moved_positional("keras.Sequential")
    assert (sequential["position"], sequential["keras3"]) == (1, "trainable")
    fit = t.moved_positional("keras.Model.fit")
    assert fit["keras3"] is None and fit["outcome"]["error"] == "TypeError" and "positional" in fit["outcome"]["message"]
    # renamed in place (alpha -> negative_slope): maybe the same meaning, not recorded
    assert t.moved_positional("keras.layers.LeakyReLU") is None
    assert t.moved_positional("keras.layers.Dense") is None


def test_tf_name_and_keepdims_positions_executed():
    t = table()
    [sqrt] = t.tf_positional_traps("tensorflow.sqrt")
    assert (sqrt["parameter"], sqrt["position"]) == ("name", 1)
    assert not sqrt["outcome"]["eager"]["breaks"] and sqrt["outcome"]["traced"]["error"] == "TypeError"
    traps = {e["parameter"]: e for e in t.tf_positional_traps("tensorflow.reduce_mean")}
    assert (traps["keepdims"]["position"], traps["keepdims"]["outcome"]["shape_changed"]) == (2, True)
    assert traps["name"]["position"] == 3 and traps["name"]["outcome"]["traced"]["breaks"]
    assert t.tf_positional_traps("tensorflow.cast") == []  # its second parameter is the dtype


def test_safe_mode_outcomes_were_executed_per_flavour_and_format():
    t = table()
    keras3 = t.safe_mode("keras.models.load_model", "keras3")
    tf_keras = t.safe_mode("keras.models.load_model", "tf_keras")
    assert keras3["position"] == tf_keras["position"] == 3 and keras3["default"] is True
    assert keras3["outcome"][".keras"]["default"]["result"] == "refused"
    assert keras3["outcome"][".keras"]["safe_mode=False"]["result"] == "ran"
    assert keras3["outcome"][".h5"]["default"]["result"] == "refused"
    assert tf_keras["outcome"][".h5"]["default"]["result"] == "ran"  # tf_keras ignores safe_mode for .h5
    assert tf_keras["outcome"][".keras"]["default"]["result"] == "refused"
    switch = t.safe_mode("keras.config.enable_unsafe_deserialization", "keras3")
    assert switch["switch"] and switch["outcome"][".keras"]["default"]["result"] == "ran"
    assert t.safe_mode("keras.config.enable_unsafe_deserialization", "tf_keras") is None  # tf_keras has none
    assert t.safe_mode("keras.layers.Dense.from_config", "keras3") is None
