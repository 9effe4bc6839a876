"""A project's own Keras callback that saves its model at the path its constructor is given
(``semantic.project._class_saves``, ``RuleContext.path_handoffs``): the saves it makes, under which
arguments, and TFG908 told at the construction (bubbliiiing/unet-tf2 utils/callbacks.py, train.py)."""
from __future__ import annotations

import textwrap

from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.base import all_rules
from tflint_gpu.semantic.project import CALLBACK_MODEL, ProjectFile, ProjectIndex, load_summary, summarize_source

TFG908 = [r for r in all_rules() if r.code == "TFG908"]

CALLBACKS = '''\
    import warnings
    from tensorflow import keras


    class ModelCheckpoint(keras.callbacks.Callback):
        def __init__(self, filepath, monitor="val_loss", save_best_only=False, save_weights_only=False, period=1):
            super().__init__()
            self.filepath = filepath
            self.save_best_only = save_best_only
            self.save_weights_only = save_weights_only

        def on_epoch_end(self, epoch, logs=None):
            filepath = self.filepath.format(epoch=epoch + 1, **logs)
            if self.save_best_only:
                if self.save_weights_only:
                    self.model.save_weights(filepath, overwrite=True)
                else:
                    self.model.save(filepath, overwrite=True)
            else:
                if self.save_weights_only:
                    self.model.save_weights(filepath, overwrite=True)
                else:
                    self.model.save(filepath, overwrite=True)


    class Renamed(keras.callbacks.Callback):
        def __init__(self, filepath):
            self.filepath = filepath

        def set_model(self, model):
            self.filepath = self.filepath + ".keras"

        def on_epoch_end(self, epoch, logs=None):
            self.model.save(self.filepath)


    class NotACallback:
        def __init__(self, filepath):
            self.filepath = filepath

        def on_epoch_end(self, epoch, logs=None):
            self.model.save_weights(self.filepath)
    '''


def test_the_summary_keeps_a_callbacks_saves_and_their_conditions():
    saves = summarize_source(textwrap.dedent(CALLBACKS)).saves
    assert set(saves) == {"ModelCheckpoint"}  # Renamed rebinds its path; NotACallback has no Keras base
    positional, made = saves["ModelCheckpoint"]
    assert positional[:1] == ("filepath",)
    assert ("filepath", "save_weights", CALLBACK_MODEL,
            ("overwrite", "?save_best_only=0", "?save_weights_only=0")) in made
    assert ("filepath", "save", CALLBACK_MODEL,
            ("overwrite", "?!save_best_only=0", "?!save_weights_only=0")) in made
    assert len(made) == 4


def test_tf_keras_callbacks_are_not_read():
    source = textwrap.dedent(CALLBACKS).replace("from tensorflow import keras", "import tf_keras as keras")
    assert summarize_source(source).saves == {}


def _findings(tmp_path, train: str):
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "callbacks.py").write_text(textwrap.dedent(CALLBACKS))
    (tmp_path / "train.py").write_text(textwrap.dedent(train))
    path = str(tmp_path / "train.py")
    files = [path, str(tmp_path / "utils" / "callbacks.py")]
    index = ProjectIndex(str(tmp_path), {p: load_summary(p) for p in files})
    result = lint_source((tmp_path / "train.py").read_text(), path, TFG908, project=ProjectFile(index, path))
    return [(f.row, f.col + 1, f.message, f.fix and f.fix.edits[0].content) for f in result.findings]


def test_the_construction_is_told_as_the_callback_saves(tmp_path):
    got = _findings(tmp_path, '''\
        import os
        from utils.callbacks import ModelCheckpoint

        def callbacks(save_dir):
            a = ModelCheckpoint(os.path.join(save_dir, "ep{epoch:03d}-loss{loss:.3f}.h5"), monitor="loss",
                                save_weights_only=True, save_best_only=False, period=5)
            b = ModelCheckpoint(os.path.join(save_dir, "best_epoch_weights.h5"), save_weights_only=True,
                                save_best_only=True)
            c = ModelCheckpoint(os.path.join(save_dir, "model.h5"))
            d = ModelCheckpoint(os.path.join(save_dir, "export"))
            e = ModelCheckpoint(os.path.join(save_dir, "w.h5"), save_weights_only=flag)
            return [a, b, c, d, e]
        ''')
    assert [(row, col) for row, col, _, _ in got] == [(5, 25), (7, 25), (10, 25)]
    assert got[0][2] == ("Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                         "checkpoints): `ModelCheckpoint` passes this path to its model's `save_weights()` unchanged")
    assert got[0][3] == '"ep{epoch:03d}-loss{loss:.3f}.weights.h5"' and got[1][3] == '"best_epoch_weights.weights.h5"'
    assert got[2][2].startswith("Keras 3 `save()` raises ValueError on a SavedModel directory")


def test_the_callbacks_own_save_is_told_with_the_paths_other_modules_give(tmp_path):
    _findings(tmp_path, '''\
        import os
        from utils.callbacks import ModelCheckpoint

        def callbacks(save_dir):
            return [ModelCheckpoint(os.path.join(save_dir, "last_epoch_weights.h5"), save_weights_only=True),
                    ModelCheckpoint(os.path.join(save_dir, "model.keras"))]
        ''')
    files = [str(tmp_path / "train.py"), str(tmp_path / "utils" / "callbacks.py")]
    index = ProjectIndex(str(tmp_path), {p: load_summary(p) for p in files})
    path = files[1]
    result = lint_source((tmp_path / "utils" / "callbacks.py").read_text(), path, TFG908,
                         project=ProjectFile(index, path))
    got = [(f.row, f.col + 1, f.message) for f in result.findings]
    assert [(row, col) for row, col, _ in got] == [(16, 41), (21, 41)]  # the two save_weights of ModelCheckpoint
    assert got[0][2] == ("Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                         "checkpoints): `train` gives this callback `last_epoch_weights.h5` (renamed where it is "
                         "written)")
    # Constructed with `.weights.h5` paths only: nothing to tell.
    (tmp_path / "train.py").write_text((tmp_path / "train.py").read_text().replace('weights.h5"', 'weights.weights.h5"'))
    index = ProjectIndex(str(tmp_path), {p: load_summary(p) for p in files})
    assert lint_source((tmp_path / "utils" / "callbacks.py").read_text(), path, TFG908,
                       project=ProjectFile(index, path)).findings == []
