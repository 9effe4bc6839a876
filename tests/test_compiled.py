"""semantic.compiled: what a compile call's metrics resolve to, and whether its loss takes logits."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.compiled import (ACCURACY_BY_WIDTH, ARGMAX, BINARY, CLASS, FUNCTION, OBJECT, OTHER, STRING,
                                          THRESHOLDS, compiled_metrics, logits_loss)


def _facts(source: str):
    ctx = analyse(cst.parse_module(textwrap.dedent(source).lstrip("\n")), [])
    return ctx, ctx.model.root


def _compiles(ctx, root):
    return [c for c in root.calls if isinstance(c.func, cst.Attribute) and c.func.attr.value == "compile"]


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


def test_metrics_resolve_as_keras_resolves_them():
    ctx, root = _facts("""
        import keras

        acc = keras.metrics.BinaryAccuracy(threshold=0.0)
        prec = keras.metrics.Precision(thresholds=0.5)
        one = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        one.compile("sgd", "mse", metrics=["accuracy", "ACC", "binary_accuracy", "categorical_accuracy", "mae",
                                           keras.metrics.BinaryAccuracy(), keras.metrics.BinaryAccuracy("a", None, 0.3),
                                           keras.metrics.SparseCategoricalAccuracy(), keras.metrics.binary_accuracy,
                                           acc, keras.metrics.AUC(), keras.metrics.Precision(),
                                           keras.metrics.Recall(0.3), keras.metrics.Precision(top_k=1), prec],
                    weighted_metrics="acc")
        wide = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
        wide.compile("sgd", "mse", metrics=("accuracy",))
        told = keras.Sequential([keras.Input((4,)), keras.layers.Dense(units)])
        told.compile("sgd", "mse", metrics=["acc"])
        told.compile("sgd", "mse", ["acc"])
        told.compile("sgd", "mse", metrics=[*more])
        told.compile("sgd", "mse", metrics=None)
        """)
    one, wide, told, third, starred, none = _compiles(ctx, root)
    got = [(_code(m.node), m.kind, m.form, m.threshold and _code(m.threshold))
           for m in compiled_metrics(one, one.func.value, ctx.model_outputs, root)]
    assert got == [('"accuracy"', BINARY, STRING, None), ('"ACC"', BINARY, STRING, None),
                   ('"binary_accuracy"', BINARY, STRING, None), ('"categorical_accuracy"', ARGMAX, STRING, None),
                   ('"mae"', OTHER, STRING, None), ("keras.metrics.BinaryAccuracy()", BINARY, CLASS, None),
                   ('keras.metrics.BinaryAccuracy("a", None, 0.3)', BINARY, CLASS, "0.3"),
                   ("keras.metrics.SparseCategoricalAccuracy()", ARGMAX, CLASS, None),
                   ("keras.metrics.binary_accuracy", BINARY, FUNCTION, None), ("acc", BINARY, OBJECT, "0.0"),
                   ("keras.metrics.AUC()", OTHER, CLASS, None), ("keras.metrics.Precision()", THRESHOLDS, CLASS, None),
                   ("keras.metrics.Recall(0.3)", THRESHOLDS, CLASS, "0.3"),
                   ("keras.metrics.Precision(top_k=1)", OTHER, CLASS, None), ("prec", THRESHOLDS, OBJECT, "0.5"),
                   ('"acc"', BINARY, STRING, None)]
    assert [m.kind for m in compiled_metrics(wide, wide.func.value, ctx.model_outputs, root)] == [ARGMAX]
    assert [m.kind for m in compiled_metrics(told, told.func.value, ctx.model_outputs, root)] == [ACCURACY_BY_WIDTH]
    assert compiled_metrics(third, third.func.value, ctx.model_outputs, root) is None  # metrics or loss_weights
    assert compiled_metrics(starred, starred.func.value, ctx.model_outputs, root) is None
    assert compiled_metrics(none, none.func.value, ctx.model_outputs, root) == []


def test_losses_that_take_logits():
    ctx, root = _facts("""
        import functools
        import tensorflow as tf
        from tensorflow import keras

        a = keras.losses.BinaryCrossentropy(from_logits=True)
        b = keras.losses.BinaryCrossentropy(True, label_smoothing=0.1)
        c = tf.keras.losses.BinaryFocalCrossentropy(False, 0.25, 2.0, True)
        d = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        e = keras.losses.BinaryCrossentropy()
        f = keras.losses.BinaryCrossentropy(from_logits=flag)
        g = functools.partial(keras.losses.binary_crossentropy, from_logits=True)
        h = lambda y, p: tf.reduce_mean(keras.losses.binary_crossentropy(y, p, from_logits=True))
        i = lambda y, p: keras.losses.binary_crossentropy(p, y, from_logits=True)

        def j(y_true, y_pred):
            return tf.nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)

        def k(y_true, y_pred):
            return keras.losses.categorical_crossentropy(y_true, y_pred, from_logits=True)

        def m(y_true, y_pred):
            return keras.losses.binary_crossentropy(y_true, tf.sigmoid(y_pred))
        n = keras.losses.BinaryFocalCrossentropy(from_logits=True)
        o = keras.losses.CategoricalFocalCrossentropy(0.25, 2.0, True)
        """)
    got = {name: logits_loss(cst.Name(name), ctx.model_outputs, ctx.graphs, root) for name in "abcdefghijkmno"}
    assert got == {"a": "binary", "b": "binary", "c": "binary", "d": "categorical", "e": None, "f": None,
                   "g": "binary", "h": "binary", "i": None, "j": "binary", "k": "categorical", "m": None,
                   "n": "binary", "o": "categorical"}
    assert logits_loss(cst.SimpleString('"binary_crossentropy"'), ctx.model_outputs, ctx.graphs, root) is None


def test_logits_rules_never_report_the_same_compile():
    """TFG605 (a probability loss on logits), TFG606 (a logits loss on probabilities) and TFG611 (a
    binary accuracy on logits) each read one side of the same compile; at most one reports it."""
    from tflint_gpu.engine.lint import lint_source
    from tflint_gpu.rules.base import all_rules

    rules = [r for r in all_rules() if r.code in ("TFG605", "TFG606", "TFG611")]
    lines = ["import keras", "import tensorflow as tf"]
    for last in ("keras.layers.Dense(1)", 'keras.layers.Dense(1, activation="sigmoid")', "keras.layers.Dense(3)"):
        for loss in ("keras.losses.BinaryCrossentropy()", "keras.losses.BinaryCrossentropy(from_logits=True)",
                     '"binary_crossentropy"', "keras.losses.BinaryFocalCrossentropy(from_logits=True)"):
            for metrics in ('["accuracy"]', '["binary_accuracy", "acc"]', "[keras.metrics.BinaryAccuracy()]"):
                name = f"m{len(lines)}"
                lines.append(f"{name} = keras.Sequential([keras.Input((2,)), {last}])")
                lines.append(f"{name}.compile('sgd', {loss}, metrics={metrics})")
    findings = lint_source("\n".join(lines) + "\n", "case.py", rules).findings
    codes_by_line = {}
    for finding in findings:
        codes_by_line.setdefault(finding.row, set()).add(finding.code)
    assert {code for codes in codes_by_line.values() for code in codes} >= {"TFG605", "TFG611"}
    assert all(len(codes) == 1 for codes in codes_by_line.values()), codes_by_line
