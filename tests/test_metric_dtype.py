"""Metric functions Keras 3 calls with uncast targets (semantic/metric_dtype.py, GraphAnalysis.compile_metric,
the project index's metric_calls/metric_names) and TFG928 across modules.

Measured (TF 2.21, Keras 3.15, tf_keras 2.21): tf_keras's MeanMetricWrapper.update_state casts y_true and
y_pred to the metric's dtype before calling the function; Keras 3's passes float64 targets from a Sequence,
generator or tf.data pipeline as they are (NumPy arrays given to fit are converted to floatx), and
`y_true * y_pred` raises TypeError.
"""
from __future__ import annotations

import json
import textwrap

import libcst as cst
import pytest

from tflint_gpu.engine import run
from tflint_gpu.rules.base import REGISTRY
from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.metric_dtype import label_mixes
from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.semantic.project import Summary, compile_tree, summarize
from tflint_gpu.semantic.target import parse_target


def mixes(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    function = module.body[0]
    return [module.code_for_node(node) for node in label_mixes(function)]


def test_the_mixes_of_targets_and_predictions_are_followed_through_names_and_reductions():
    assert mixes("""
        def f(y_true, y_pred):
            y_pred = K.cast(K.greater(y_pred, 0.5), K.floatx())
            tp = K.sum(y_true[..., :-1] * y_pred, axis=0)
            fp = K.sum(y_pred, axis=0) - tp
            fn = K.sum(y_true[..., :-1], axis=0) - tp
            return (2 * tp + 1e-5) / (2 * tp + fn + fp + 1e-5)
        """) == ["y_true[..., :-1] * y_pred", "K.sum(y_true[..., :-1], axis=0) - tp"]
    assert mixes("""
        def f(t, p):
            if True:
                a = tf.reduce_mean(tf.abs(t), axis=-1)
            return tf.maximum(a, p) + tf.multiply(p, 2.0)
        """) == ["tf.maximum(a, p)"]


def test_no_mix_once_the_targets_are_cast_or_handed_on():
    assert mixes("def f(y_true, y_pred):\n    y_true = K.cast(y_true, 'float32')\n    return y_true * y_pred\n") == []
    assert mixes("def f(y_true, y_pred):\n    return losses.mse(y_true, y_pred) * 2\n") == []
    assert mixes("def f(y_true, y_pred):\n    return K.equal(K.argmax(y_true), K.argmax(y_pred))\n") == []
    assert mixes("def f(y_true, y_pred):\n    g = lambda: y_true * y_pred\n    return g\n") == []  # not its own body
    assert mixes("def f(self, y_pred):\n    return self * y_pred\n") == []
    assert mixes("def f(y_pred):\n    return y_pred * y_pred\n") == []
    # a cast of the predictions to another dtype is not the predictions' floatx any more
    assert mixes("def f(y_true, y_pred):\n    p = K.cast(y_pred, 'float64')\n    return y_true * p\n") == []


def metric_functions(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    model = build_model(module, ["Call", "Name", "Return"])
    graphs = GraphAnalysis(model, Resolver())
    graphs.run()
    return sorted(scope.name for scope in model.scopes
                  if scope.kind == "function" and graphs.compile_metric(scope) is not None)


def test_a_function_given_to_compile_as_a_metric_here():
    assert metric_functions("""
        import tensorflow as tf

        def f_score(beta=1):
            def _f_score(y_true, y_pred):
                return y_true * y_pred
            return _f_score

        def direct(y_true, y_pred):
            return y_true

        def weighted(y_true, y_pred):
            return y_true

        def loss(y_true, y_pred):
            return y_true

        def other(y_true, y_pred):
            return y_true

        model = tf.keras.Sequential()
        model.compile(loss=loss, metrics=[f_score(), direct], run_eagerly=True)
        model.compile(loss=loss, weighted_metrics={"out": weighted})
        other(1, 2)
        """) == ["_f_score", "direct", "weighted"]
    # tf_keras's wrapper casts: not asked
    assert metric_functions("""
        import tf_keras

        def direct(y_true, y_pred):
            return y_true

        tf_keras.Sequential().compile(metrics=[direct])
        """) == []


def test_the_metric_references_of_a_summary_are_data():
    summary = summarize(compile_tree(textwrap.dedent("""
        import tensorflow as tf
        from utils.utils_metrics import f_score, Iou_score
        import utils.extra as extra

        model.compile(loss=tf.keras.losses.mse, metrics=[f_score(), Iou_score, extra.dice(2), "accuracy",
                                                         tf.keras.metrics.AUC()])
        model.compile(weighted_metrics=extra.single)
        model.fit(metrics=[extra.not_compile()])
        """)))
    assert sorted(summary.metric_calls) == [(0, "utils.extra.dice"), (0, "utils.utils_metrics.f_score")]
    assert sorted(summary.metric_names) == [(0, "utils.extra.single"), (0, "utils.utils_metrics.Iou_score")]
    assert Summary.from_json(json.loads(json.dumps(summary.to_json()))).digest == summary.digest
    data = summary.to_json()
    data["metric_calls"] = [[0, "utils.extra.dice", []]]
    with pytest.raises(ValueError):
        Summary.from_json(data)


METRICS = """\
from tensorflow.keras import backend


def f_score(threshold=0.5):
    def _f_score(y_true, y_pred):
        y_pred = backend.cast(backend.greater(y_pred, threshold), backend.floatx())
        return backend.sum(y_true[..., :-1] * y_pred)
    return _f_score


def dice(y_true, y_pred):
    return backend.sum(y_true * y_pred)


def unused(y_true, y_pred):
    return backend.sum(y_true * y_pred)
"""
TRAIN = """\
import tensorflow as tf

from utils.metrics import f_score, dice, unused

model = tf.keras.Sequential()
model.compile(loss="mse", optimizer="adam", metrics=[f_score(), dice])
print(unused(1.0, 2.0))
"""


def checked(root, names):
    paths = [str(root / name) for name in names]
    target = parse_target("latest")
    results = run.run_files(paths, lambda _: [REGISTRY["TFG928"]], run.CHECK, jobs=1, project_root=str(root),
                            target_for=lambda _: target)
    return {r.path[len(str(root)) + 1:]: [(f.code, f.row, f.message.split(" with ")[0]) for f in r.findings]
            for r in results}


def test_a_metric_another_module_compiles(tmp_path):
    # bubbliiiing/unet-tf2: utils/utils_metrics.py's factory, called in train.py's compile(metrics=[f_score()])
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "metrics.py").write_text(METRICS)
    (tmp_path / "train.py").write_text(TRAIN)
    given = "Keras 3 calls this metric (given to `compile(metrics=...)` in `train.py`)"
    assert checked(tmp_path, ["utils/metrics.py", "train.py"]) == {
        "utils/metrics.py": [("TFG928", 7, given), ("TFG928", 12, given)], "train.py": []}
    # checked alone, or the other module calls the factory elsewhere than compile: nothing
    assert checked(tmp_path, ["utils/metrics.py"]) == {"utils/metrics.py": []}
    (tmp_path / "train.py").write_text(TRAIN.replace("metrics=[f_score(), dice]", "metrics=['accuracy']"))
    assert checked(tmp_path, ["utils/metrics.py", "train.py"]) == {"utils/metrics.py": [], "train.py": []}
