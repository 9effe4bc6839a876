"""semantic/callbacks.py: the callbacks a fit is given, the figure each watches, whether a fit validates;
facts.may_be_keras_model for a model made by a project class of another module."""
from __future__ import annotations

import inspect
import textwrap

import libcst as cst
import pytest

from tflint_gpu.engine.lint import analyse, lint_source
from tflint_gpu.rules.base import REGISTRY
from tflint_gpu.semantic.callbacks import MONITORING, fit_validates, given_callbacks, watched_metric
from tflint_gpu.semantic.project import ProjectFile, ProjectIndex


def _fits(source: str):
    """(ctx, [(fit call, scope)]) of every ``.fit(...)`` in ``source``."""
    ctx = analyse(cst.parse_module(textwrap.dedent(source)), [])
    fits = [(call, scope) for call, scope in ctx.model.index.get("Call", ())
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "fit"]
    return ctx, fits


def _given(source: str):
    ctx, fits = _fits(source)
    answers = []
    for call, scope in fits:
        callbacks = next(a.value for a in call.args if a.keyword is not None and a.keyword.value == "callbacks")
        found = given_callbacks(callbacks, scope, ctx.graphs.flow, ctx.graphs.objects)
        answers.append((sorted(cst.Module([]).code_for_node(e) for e, _ in found.found), found.complete))
    return answers


def test_callbacks_through_names_appends_extensions_concatenations_and_parameters():
    assert _given("""
        cbs = [a()]
        cbs.append(b())
        cbs += [c()]
        cbs.extend([d()])
        model.fit(x, callbacks=cbs)
        model.fit(x, callbacks=[a()] + more)

        def train(model, callbacks):
            model.fit(x, callbacks=callbacks)

        e = E()
        train(m, [e, *[f()]])
        """) == [(["a()", "b()", "c()", "d()"], True), (["a()"], False), (["E()", "f()"], True)]


def test_an_unknown_list_is_not_complete():
    assert _given("""
        def train(model, callbacks):
            model.fit(x, callbacks=callbacks)
        """) == [([], False)]


def _metrics(source: str):
    ctx = analyse(cst.parse_module(textwrap.dedent(source)), [])
    return [(watched_metric(call, scope, ctx.migration) or (None, None))[1]
            for call, scope in ctx.model.index.get("Call", ()) if isinstance(call.func, cst.Attribute)
            and call.func.attr.value in ("EarlyStopping", "ReduceLROnPlateau", "ModelCheckpoint")]


def test_the_watched_figure():
    assert _metrics("""
        import keras
        import tf_keras
        from tensorflow import keras as tk
        M = "val_auc"
        keras.callbacks.EarlyStopping()
        tf_keras.callbacks.ReduceLROnPlateau("loss")
        tk.callbacks.EarlyStopping(monitor=M)
        keras.callbacks.ModelCheckpoint("p.keras")
        keras.callbacks.ModelCheckpoint("p.keras", save_best_only=True)
        keras.callbacks.ModelCheckpoint("p.keras", "val_acc", 1, True)
        keras.callbacks.ModelCheckpoint("p.keras", save_best_only=flag)
        keras.callbacks.EarlyStopping(monitor=name)
        keras.callbacks.EarlyStopping(**options)
        """) == ["val_loss", "loss", "val_auc", None, "val_loss", "val_acc", None, None, None]


def test_whether_a_fit_validates():
    ctx, fits = _fits("""
        model.fit(x, y, validation_split=0.2)
        model.fit(x, y, validation_data=val)
        model.fit(x, y, validation_freq=2)
        model.fit(x, y, validation_data=None, validation_split=0.0)
        model.fit(x, y, 32, 1, 0, None, 0.1)
        model.fit(x, y, **kwargs)
        """)
    assert [fit_validates(call, "fit", scope) for call, scope in fits] == [True, True, False, False, True, None]


@pytest.mark.parametrize("module", ["keras", "tf_keras"])
def test_the_table_matches_the_installed_signatures(module):
    keras = pytest.importorskip(module)
    for qualname, (position, default, gate) in MONITORING.items():
        params = list(inspect.signature(getattr(keras.callbacks, qualname.rsplit(".", 1)[1]).__init__)
                      .parameters.values())[1:]
        assert params[position].name == "monitor" and params[position].default == default, qualname
        if gate is not None:
            assert params[gate[0]].name == gate[1] and params[gate[0]].default is False, qualname


def test_a_model_made_by_a_keras_class_of_another_project_module(tmp_path):
    (tmp_path / "models.py").write_text("import tensorflow as tf\n\nclass CustomModel(tf.keras.Model):\n    pass\n")
    (tmp_path / "other.py").write_text("class Trainer:\n    pass\n")
    source = textwrap.dedent("""
        import tensorflow as tf
        from models import CustomModel
        from other import Trainer

        es = tf.keras.callbacks.EarlyStopping()
        m = CustomModel(inputs=i, outputs=o)
        m.fit(x, y, callbacks=[es])
        t = Trainer()
        t.fit(x, y, callbacks=[tf.keras.callbacks.EarlyStopping()])
        """)
    path = str(tmp_path / "train.py")
    (tmp_path / "train.py").write_text(source)
    view = ProjectFile(ProjectIndex(str(tmp_path)), path)
    findings = lint_source(source, path, [REGISTRY["TFG613"]], project=view).findings
    assert [(f.code, f.row) for f in findings] == [("TFG613", 6)]


LOGGED = """
    import numpy as np
    import tensorflow as tf
    import tf_keras

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    history = model.fit(np.ones((8, 2)), np.ones((8, 1)), callbacks=[tf.keras.callbacks.ReduceLROnPlateau()])
    a = history.history
    figures = history.history
    b = figures
    c = model.history.history
    old = tf_keras.Sequential([tf_keras.layers.Dense(1)]).fit(np.ones((8, 2)), np.ones((8, 1)))
    d = old.history
    config = {"lr": 0.1}
    e = config

    def plot(results, other):
        f = results.history
        g = other.history

    plot(history, config)

    class Log(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            h = logs

        def on_train_batch_end(self, batch, logs=None):
            i = logs

    class Plain:
        def on_epoch_end(self, epoch, logs=None):
            j = logs
            logs["lr"] = 1.0
            logs.update(val_lr=2.0)
"""


def test_logged_figures_a_history_dict_and_a_callbacks_epoch_logs():
    ctx = analyse(cst.parse_module(textwrap.dedent(LOGGED)), [])
    figures = ctx.logged_figures
    history, logs = {}, {}
    for scope in ctx.model.scopes:
        stack = list(scope.node.children)
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                continue  # its own scope
            stack.extend(node.children)
            if isinstance(node, cst.Assign) and isinstance(node.targets[0].target, cst.Name) \
                    and len(node.targets[0].target.value) == 1:
                name = node.targets[0].target.value
                fits = figures.history_fits(node.value, scope)
                history[name] = None if fits is None else len(fits)
                logs[name] = figures.epoch_logs(node.value, scope)
    assert history == {"a": 1, "b": 1, "c": 0, "d": None, "e": None, "f": 1, "g": None, "h": None, "i": None,
                       "j": None}
    assert sorted(n for n, v in logs.items() if v) == ["h"]
    assert figures.written_keys() == {"lr", "val_lr"}
