"""absl flags whose value reaches Keras weights saves and loads (``Summary.flag_reads``,
``ProjectIndex.flag_readers``/``flag_files``, ``FileRenames.flag_default``): TFG908 tells the default
where it is written and renames it to `.weights.h5` together with every flag of the project that names
the same file, or refuses (zzh8829/yolov3-tf2: convert.py:9 writes what train.py:25 and detect.py:14 read;
detect.py:34 `load_weights(FLAGS.weights).expect_partial()`)."""
from __future__ import annotations

import textwrap

from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.base import all_rules
from tflint_gpu.semantic.project import (FLAG_NAMED, FLAG_OTHER, FLAG_READS, FLAG_TEST, ProjectFile, ProjectIndex,
                                         dependencies_valid, load_summary, summarize_source)

TFG908 = [r for r in all_rules() if r.code == "TFG908"]

MODELS = '''\
    import tensorflow as tf
    from tensorflow.keras import Model


    def YoloV3(classes=80):
        x = inputs = tf.keras.Input((2,))
        return Model(inputs, tf.keras.layers.Dense(classes)(x), name='yolov3')  # a word, not a file
    '''

FILES = {
    "models.py": MODELS,
    "convert.py": '''\
        from absl import app, flags
        from absl.flags import FLAGS
        from models import YoloV3
        from utils import load_darknet_weights

        flags.DEFINE_string('weights', './data/yolov3.weights', 'path to weights file')
        flags.DEFINE_string('output', './checkpoints/yolov3.tf', 'path to output')


        def main(_argv):
            yolo = YoloV3()
            load_darknet_weights(yolo, FLAGS.weights)
            yolo.save_weights(FLAGS.output)
        ''',
    "detect.py": '''\
        import tensorflow as tf
        from absl import app, flags, logging
        from absl.flags import FLAGS
        from models import YoloV3

        flags.DEFINE_string('weights', './checkpoints/yolov3.tf',
                            'path to weights file')
        flags.DEFINE_string('output', './output.jpg', 'path to output image')


        def main(_argv):
            yolo = YoloV3()
            yolo.load_weights(FLAGS.weights).expect_partial()
            logging.info('weights loaded')
            tf.io.write_file(FLAGS.output, b"")
        ''',
    "train.py": '''\
        import tensorflow as tf
        from absl import flags
        FLAGS = flags.FLAGS
        from models import YoloV3

        flags.DEFINE_string('weights', './checkpoints/yolov3.tf', 'path to weights file')


        def main(_argv):
            model = YoloV3()
            if FLAGS.weights:
                model.load_weights(FLAGS.weights)
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


def test_the_summary_keeps_how_each_flag_is_read():
    reads = summarize_source(textwrap.dedent(FILES["convert.py"])).flag_reads
    assert reads == {"absl:weights": (FLAG_OTHER,), "absl:output": ("save_weights",)}
    reads = summarize_source(textwrap.dedent(FILES["train.py"])).flag_reads  # FLAGS = flags.FLAGS
    assert reads == {"absl:weights": ("load_weights", FLAG_TEST)}  # `if FLAGS.weights:` is a truth value
    # An assignment is no read; a default whose file another string of the module names is marked.
    reads = summarize_source(textwrap.dedent('''\
        from absl import flags
        flags.DEFINE_string("w", "ckpt/yolov3.tf", "")
        flags.FLAGS.w = "x"
        print("see ckpt/yolov3.tf")
        ''')).flag_reads
    assert reads == {"absl:w": (FLAG_NAMED,)}
    assert summarize_source("import os\nFLAGS = object()\nprint(FLAGS.weights)\n").flag_reads == {}


def test_a_flag_is_read_by_its_own_module_and_by_modules_that_do_not_define_it(tmp_path):
    files = dict(FILES, **{"helpers.py": '''\
        from absl.flags import FLAGS

        def restore(model):
            model.load_weights(FLAGS.weights)
        '''})
    index = _project(tmp_path, files)
    deps = set()
    assert index.flag_readers("detect", "absl:weights", deps) == (("load_weights", "detect"),
                                                                  ("load_weights", "helpers"))
    assert index.flag_readers("convert", "absl:weights", deps) == (("load_weights", "helpers"),
                                                                   (FLAG_OTHER, "convert"))
    assert any(dep[0] == FLAG_READS + "absl:weights" for dep in deps)
    assert [m for m, _, _ in index.flag_files("yolov3.tf", deps)] == ["convert", "detect", "train"]


def test_every_default_naming_the_file_is_told_and_renamed_alike(tmp_path):
    index = _project(tmp_path)
    renamed = {}
    for name, row in (("convert.py", 7), ("detect.py", 6), ("train.py", 6)):
        got, _ = _findings(tmp_path, index, name)
        told = [g for g in got if g[0] == row]
        assert len(told) == 1, (name, got)
        fix = told[0][3]
        assert fix is not None and fix.safety.value == "unsafe", told[0][2]
        renamed[name] = fix.edits[0].content
    assert set(renamed.values()) == {"'./checkpoints/yolov3.weights.h5'"}
    got, _ = _findings(tmp_path, index, "convert.py")
    assert got[0][2].startswith("Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` "
                                "(no TF checkpoints): `convert` saves weights at `FLAGS.output`, whose default this is")
    got, _ = _findings(tmp_path, index, "detect.py")
    status = [g for g in got if g[0] == 13 and "returns None" in g[2]]
    assert len(status) == 1 and status[0][3].safety.value == "safe"
    assert status[0][3].edits[0].content == "yolo.load_weights(FLAGS.weights)"
    # convert.py's darknet --weights is read by another call: not told (nor the save at line 13 of a file
    # that imports no TensorFlow: told at the default only).
    assert [g[0] for g in _findings(tmp_path, index, "convert.py")[0]] == [7]


def test_a_reader_of_another_kind_or_another_text_refuses_every_rename(tmp_path):
    files = dict(FILES, **{"export.py": '''\
        import os
        from absl import flags
        from absl.flags import FLAGS
        from models import YoloV3

        flags.DEFINE_string('weights', './checkpoints/yolov3.tf', 'path to weights file')


        def main(_argv):
            if os.path.exists(FLAGS.weights + ".index"):
                YoloV3().load_weights(FLAGS.weights)
        '''})
    index = _project(tmp_path, files)
    for name, row in (("convert.py", 7), ("detect.py", 6)):
        got, _ = _findings(tmp_path, index, name)
        told = [g for g in got if g[0] == row][0]
        assert told[3] is None and told[2].endswith("not renamed here: `export` reads `FLAGS.weights` otherwise"), told
    files = dict(FILES, **{"export.py": FILES["train.py"].replace("'./checkpoints/yolov3.tf'", "'ckpt/yolov3.tf'")})
    got, _ = _findings(tmp_path, _project(tmp_path, files), "detect.py")
    told = [g for g in got if g[0] == 6][0]
    assert told[3] is None and "`export`'s `--weights` defaults to `ckpt/yolov3.tf`" in told[2]
    files = dict(FILES, **{"readme.py": 'USAGE = "python detect.py --weights ./checkpoints/yolov3.tf"\n'})
    got, _ = _findings(tmp_path, _project(tmp_path, files), "detect.py")
    told = [g for g in got if g[0] == 6][0]
    assert told[3] is None and "`yolov3.tf` is also named in `readme.py`" in told[2]


def test_a_stale_answer_is_dropped_when_another_module_reads_the_flag_otherwise(tmp_path):
    index = _project(tmp_path)
    _, view = _findings(tmp_path, index, "detect.py")
    key = [dep for dep in view.deps if dep[0] == FLAG_READS + "absl:weights"]
    assert key and dependencies_valid(index, '[["%s", "%s"]]' % key[0])
    files = dict(FILES, **{"helpers.py": "from absl.flags import FLAGS\nprint(FLAGS.weights)\n"})
    assert not dependencies_valid(_project(tmp_path, files), '[["%s", "%s"]]' % key[0])


def test_a_path_assigned_to_a_flag_the_module_loads_weights_from_is_told_without_a_fix():
    source = textwrap.dedent('''\
        import tensorflow as tf
        from absl import flags
        from absl.flags import FLAGS

        flags.DEFINE_string("weights", None, "path to weights file")
        flags.DEFINE_string("image", None, "path to an image")
        FLAGS.weights = "checkpoints/yolov3_train_3.tf"
        FLAGS.image = "data/meme.tf"
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.load_weights(FLAGS.weights)
        print(FLAGS.image)
        ''')
    findings = lint_source(source, "notebook.py", TFG908).findings
    assert [(f.row, f.col + 1, f.fix) for f in findings if f.row == 7] == [(7, 17, None)]
    assert findings[0].message.startswith("Keras 3 `load_weights()` raises ValueError on a `.tf` TensorFlow path: "
                                          "weights are loaded from `FLAGS.weights`")
    assert not [f for f in findings if f.row == 8]  # read otherwise only
