"""A module's names that other modules of the project save or load models at (``Summary.path_reads``,
``ProjectIndex.path_readers``): told, and renamed, where the name is written, in a config module that
names no framework (calmisential/TensorFlow2.0_ResNet config.py:8, train.py:96, evaluate.py:19)."""
from __future__ import annotations

import textwrap

from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.base import all_rules
from tflint_gpu.semantic.project import (PATH_READERS, ProjectFile, ProjectIndex, dependencies_valid, load_summary,
                                         summarize_source)

TFG908 = [r for r in all_rules() if r.code == "TFG908"]

FILES = {
    "config.py": '''\
        EPOCHS = 50
        save_model_dir = "saved_model/model"
        export_dir = "export/model.weights.h5"
        ''',
    "train.py": '''\
        import tensorflow as tf
        import config
        from models import resnet_50


        def get_model():
            model = resnet_50()
            model.build(input_shape=(None, 8, 8, 3))
            return model


        if __name__ == "__main__":
            model = get_model()
            model.save_weights(filepath=config.save_model_dir, save_format="tf")
            model.save_weights(config.export_dir)
        ''',
    "evaluate.py": '''\
        import tensorflow as tf
        import config
        from train import get_model

        model = get_model()
        model.load_weights(filepath=config.save_model_dir)
        loss = tf.keras.metrics.Mean()
        ''',
    "models.py": '''\
        import tensorflow as tf


        def resnet_50():
            return tf.keras.Sequential([tf.keras.layers.Dense(1)])
        ''',
}


def _project(tmp_path, files=FILES):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    paths = [str(tmp_path / name) for name in files]
    return ProjectIndex(str(tmp_path), {p: load_summary(p) for p in paths})


def _findings(tmp_path, index, name):
    path = str(tmp_path / name)
    view = ProjectFile(index, path)
    result = lint_source((tmp_path / name).read_text(), path, TFG908, project=view)
    return [(f.row, f.col + 1, f.message, f.fix) for f in result.findings], view


def test_the_summary_keeps_the_names_read_as_paths():
    summary = summarize_source(textwrap.dedent(FILES["train.py"]))
    assert summary.path_reads == ((0, "config.export_dir", "save_weights"), (0, "config.save_model_dir", "save_weights"))
    assert summarize_source(textwrap.dedent(FILES["evaluate.py"])).path_reads == (
        (0, "config.save_model_dir", "load_weights"),)


def test_the_config_constant_is_told_and_renamed_where_it_is_written(tmp_path):
    index = _project(tmp_path)
    got, view = _findings(tmp_path, index, "config.py")
    assert [(row, col) for row, col, _, _ in got] == [(2, 18)]
    assert got[0][2] == ("Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                         "checkpoints): `train` saves weights at this path, `evaluate` loads them")
    fix = got[0][3]
    assert fix.safety.value == "unsafe" and fix.edits[0].content == '"saved_model/model.weights.h5"'
    assert view.path_readers()["save_model_dir"] == (("load_weights", "evaluate"), ("save_weights", "train"))
    assert any(dep[0] == PATH_READERS + "config" for dep in view.deps)


def test_the_load_of_a_model_a_project_def_returns_is_told(tmp_path):
    index = _project(tmp_path)
    got, _ = _findings(tmp_path, index, "evaluate.py")
    assert [(row, col) for row, col, _, _ in got] == [(6, 29)]
    assert got[0][2].startswith("Keras 3 `load_weights()` raises ValueError on a SavedModel directory")


def test_no_reader_no_finding_and_a_stale_result_is_dropped(tmp_path):
    train = FILES["train.py"].replace("config.save_model_dir", '"w.weights.h5"').replace("config.export_dir", '"v"')
    files = dict(FILES, **{"train.py": train, "evaluate.py": "import config\n"})
    index = _project(tmp_path, files)
    got, view = _findings(tmp_path, index, "config.py")
    assert got == []
    key = '[["%sconfig", "-"]]' % PATH_READERS
    assert dependencies_valid(index, key)
    _project(tmp_path)  # the readers come back
    assert not dependencies_valid(ProjectIndex(str(tmp_path), {str(tmp_path / n): load_summary(str(tmp_path / n))
                                                              for n in FILES}), key)


def test_tf_keras_readers_do_not_count(tmp_path):
    files = dict(FILES, **{"train.py": FILES["train.py"].replace("import tensorflow as tf", "import tf_keras"),
                           "evaluate.py": "import config\n"})
    got, _ = _findings(tmp_path, _project(tmp_path, files), "config.py")
    assert got == []
