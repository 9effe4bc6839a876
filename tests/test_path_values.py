"""What a path is known to end with: ``.format()`` and ``%`` templates, an ``endswith`` test around
the read, constants of other project modules, and project functions that save or load a model at
the path their parameter gives (``semantic.migration.path_ending``, ``semantic.project``)."""
from __future__ import annotations

import json
import time
import textwrap

import libcst as cst
import pytest

from tflint_gpu.engine.lint import analyse, lint_source
from tflint_gpu.rules.base import all_rules
from tflint_gpu.semantic.path_text import format_tail, percent_tail
from tflint_gpu.semantic.project import (REFERENCE, TEXT, WRITES, ProjectFile, ProjectIndex, Summary,
                                         dependencies_valid, load_summary, summarize_source)

TFG908 = [r for r in all_rules() if r.code == "TFG908"]


def test_template_tails():
    assert format_tail("generator-{}.h5") == ".h5"
    assert format_tail("{:06d}.weights.h5") == ".weights.h5"
    assert format_tail("{a:{b}}c.ckpt") == "c.ckpt"
    assert format_tail("ckpt/{}") is None  # ends with a field
    assert format_tail("{") is None  # no valid template
    assert format_tail("plain.h5") == "plain.h5"
    assert percent_tail("ep%03d-loss%.3f.h5") == ".h5"
    assert percent_tail("%(name)s.ckpt") == ".ckpt"
    assert percent_tail("model_%s") is None


def _ending_of_last_call(source: str):
    """The ``path_ending`` of the first argument of the last call of ``target(...)`` in ``source``."""
    ctx = analyse(cst.parse_module(textwrap.dedent(source)), [])
    call, scope = [(c, s) for c, s in ctx.model.index.get("Call", ())
                   if isinstance(c.func, cst.Name) and c.func.value == "target"][-1]
    return ctx.path_ending(call.args[0].value, scope)


@pytest.mark.parametrize("source,ending", [
    ('target("generator-{}.h5".format(step))', ".h5"),
    ('target(d + "model-{}.weights.h5".format(step))', ".weights.h5"),
    ('target("w_{}_{}".format(a, b))', None),
    ('target("w-%d.h5" % step)', ".h5"),
    ('def f(p):\n    if p.endswith(".ckpt"):\n        target(p)\n', ".ckpt"),
    ('def f(p, ok):\n    if ok and p.endswith(".ckpt"):\n        target(p)\n', ".ckpt"),
    ('def f(p):\n    if p.endswith(".ckpt"):\n        pass\n    else:\n        target(p)\n', None),
    ('def f(p):\n    if not p.endswith(".ckpt"):\n        target(p)\n', None),
    ('def f(p):\n    if p.endswith(".ckpt") or p.endswith(".h5"):\n        target(p)\n', None),
    ('def f(p, q):\n    if q.endswith(".ckpt"):\n        target(p)\n', None),
    ('def f(p):\n    if p.endswith((".ckpt", ".tf")):\n        target(p)\n', None),
    ('def f(p, q):\n    if p.endswith(".ckpt"):\n        p = q\n        target(p)\n', None),
])
def test_path_ending_reads_templates_and_endswith_tests(source, ending):
    assert _ending_of_last_call(source) == ending


def test_the_summary_keeps_path_constants_and_attribute_writes():
    summary = summarize_source(textwrap.dedent('''\
        import os
        import pkg.config as cfg
        from pathlib import Path
        from . import settings

        SCRIPT_DIR = os.path.abspath(os.path.dirname(__file__))
        PB_MODEL: str = os.path.join(SCRIPT_DIR, "checkpoints/V2.4/Model")
        WEIGHTS = Path("out") / "w.ckpt"
        FORMATTED = "gen-{}.h5".format(3)
        PERCENT = "gen-%d" % 3
        ALIAS = PB_MODEL
        REF = cfg.PB_MODEL
        OTHER = settings.EXPORT_DIR + "/model"
        TWICE = "a.h5"
        TWICE = "b.h5"
        CHANGED = "c.h5"
        DOC = """line
        more"""
        NUMBER = 3

        def configure(args):
            global CHANGED
            CHANGED = args.path
            cfg.MODEL_PATH = args.model
            args.lr, self.x = 1, 2
    '''))
    assert summary.constants == {
        "PB_MODEL": (TEXT, "checkpoints/V2.4/Model"), "WEIGHTS": (TEXT, "w.ckpt"), "FORMATTED": (TEXT, ".h5"),
        "ALIAS": (TEXT, "checkpoints/V2.4/Model"), "REF": (REFERENCE, "cfg.PB_MODEL"), "OTHER": (TEXT, "/model")}
    assert summary.writes == ("MODEL_PATH", "lr")
    again = Summary.from_json(json.loads(json.dumps(summary.to_json())))
    assert (again.constants, again.writes, again.saves) == (summary.constants, summary.writes, summary.saves)
    with pytest.raises(ValueError):
        Summary.from_json({**summary.to_json(), "constants": {"X": ["text", 3]}})


def test_the_summary_keeps_the_defs_that_save_at_a_parameters_path():
    summary = summarize_source(textwrap.dedent('''\
        import os
        import tensorflow as tf
        from keras.saving import save_model

        def save_weights(model, filepath):
            if not _gfile(filepath):
                model.save_weights(filepath)
                return
            _, ext = os.path.splitext(filepath)

        def restore(path, *, verbose=False):
            return tf.keras.models.load_model(path, compile=False)

        def export(net, out):
            save_model(net, filepath=out)

        def by_suffix(model, path):
            if path.endswith(".keras"):
                model.save(path)

        def rebound(model, path):
            path = path + ".keras"
            model.save(path)

        def own_model(path):
            model = make()
            model.save(path)

        def not_keras(path):
            tf.saved_model.save(obj, path)
    '''))
    assert summary.saves == {
        "save_weights": (("model", "filepath"), (("filepath", "save_weights", "model", ()),)),
        "restore": (("path",), (("path", "tensorflow.keras.models.load_model", "", ("compile",)),)),
        "export": (("net", "out"), (("out", "keras.saving.save_model", "net", ()),)),
    }


def make(root, files):
    paths = []
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        paths.append(str(path))
    return paths


def findings(root, name, checked=()):
    """TFG908's findings in ``name``, the index built with the summaries of ``checked`` (the run's files)."""
    index = ProjectIndex(str(root), {str(root / c): load_summary(str(root / c)) for c in checked})
    path = str(root / name)
    view = ProjectFile(index, path)
    result = lint_source((root / name).read_text(), path, TFG908, project=view)
    return [(f.row, f.col + 1, f.message) for f in result.findings], view


CONFIG = {
    "pkg/__init__.py": "",
    "pkg/config.py": '''\
        import os
        SCRIPT_DIR = os.path.abspath(os.path.dirname(__file__))
        PB_MODEL: str = os.path.join(SCRIPT_DIR, "checkpoints/V2.4/BirdNET_GLOBAL_6K_V2.4_Model")
        MODEL_PATH: str = os.path.join(SCRIPT_DIR, "checkpoints/V2.4/BirdNET_GLOBAL_6K_V2.4_Model_FP32.tflite")
        KERAS_MODEL = "model.keras"
    ''',
    "settings.py": '''\
        from pkg.config import PB_MODEL as EXPORT_DIR
    ''',
    "pkg/model.py": '''\
        import os
        import pkg.config as cfg
        from settings import EXPORT_DIR

        SCRIPT_DIR = os.path.dirname(__file__)

        def load():
            import tensorflow as tf
            a = tf.keras.models.load_model(os.path.join(SCRIPT_DIR, cfg.PB_MODEL), compile=False)
            b = tf.keras.models.load_model(EXPORT_DIR)
            c = tf.keras.models.load_model(cfg.KERAS_MODEL)
            if cfg.MODEL_PATH.endswith(".tflite"):
                return None
            return tf.keras.models.load_model(cfg.MODEL_PATH)
    ''',
}


def test_a_constant_of_another_module_is_a_known_path(tmp_path):
    make(tmp_path, CONFIG)
    got, view = findings(tmp_path, "pkg/model.py")
    assert [(row, col) for row, col, _ in got] == [(9, 36), (10, 36)]
    assert got[0][2].startswith("Keras 3 `load_model()` raises ValueError on a SavedModel directory")
    assert view.constant("pkg.config.PB_MODEL") == "checkpoints/V2.4/BirdNET_GLOBAL_6K_V2.4_Model"
    assert view.constant("settings.EXPORT_DIR") == "checkpoints/V2.4/BirdNET_GLOBAL_6K_V2.4_Model"
    assert view.constant("pkg.config.SCRIPT_DIR") is None  # os.path.dirname(...): not known
    assert (WRITES + "PB_MODEL", "-") in view.deps and any(d[0] == "pkg.config" for d in view.deps)
    # Read alone, the file knows nothing of its project's constants.
    alone = lint_source((tmp_path / "pkg/model.py").read_text(), str(tmp_path / "pkg/model.py"), TFG908)
    assert alone.findings == []


def test_a_constant_another_module_reassigns_is_not_known(tmp_path):
    make(tmp_path, {**CONFIG, "pkg/analyze.py": '''\
        import pkg.config as cfg

        def main(args):
            cfg.PB_MODEL = args.model
    '''})
    got, view = findings(tmp_path, "pkg/model.py", checked=["pkg/analyze.py", "pkg/model.py", "pkg/config.py"])
    assert got == []
    key = view.dependency_key()
    assert dependencies_valid(view.index, key)
    # That module dropping its assignment changes the answer: the cached result is invalid.
    (tmp_path / "pkg/analyze.py").write_text("import pkg.config as cfg\n")
    fresh = ProjectIndex(str(tmp_path), {str(tmp_path / c): load_summary(str(tmp_path / c))
                                         for c in ["pkg/analyze.py", "pkg/model.py", "pkg/config.py"]})
    assert not dependencies_valid(fresh, key)
    assert [(row, col) for row, col, _ in findings(tmp_path, "pkg/model.py",
                                                    checked=["pkg/analyze.py", "pkg/model.py"])[0]] == [(9, 36), (10, 36)]


def test_changing_the_constant_invalidates_the_cached_result(tmp_path):
    make(tmp_path, CONFIG)
    _, view = findings(tmp_path, "pkg/model.py")
    key = view.dependency_key()
    (tmp_path / "pkg/config.py").write_text(
        (tmp_path / "pkg/config.py").read_text().replace('V2.4_Model")', 'V2.4_Model.keras")'))
    assert not dependencies_valid(ProjectIndex(str(tmp_path)), key)
    assert [(row, col) for row, col, _ in findings(tmp_path, "pkg/model.py")[0]] == []


SAVING = {
    "tts/__init__.py": "",
    "tts/utils/__init__.py": "",
    "tts/utils/utils.py": '''\
        import os
        import tempfile
        import tensorflow as tf

        def save_weights(model, filepath):
            """Same as model.save_weights(filepath), to GCS buckets too."""
            if not filepath.startswith("gs://"):
                model.save_weights(filepath)
                return
            _, ext = os.path.splitext(filepath)
            with tempfile.NamedTemporaryFile(suffix=ext) as temp_file:
                model.save_weights(temp_file.name)

        def load_weights(model, filepath):
            model.load_weights(filepath)

        def export(model, path):
            if path.endswith(".keras"):
                model.save(path)
            else:
                tf.saved_model.save(model, path)
    ''',
    "tts/trainer.py": '''\
        import tensorflow as tf
        from tts.utils import utils

        class Trainer:
            def __init__(self, generator, saved_path):
                self._generator = generator
                self.saved_path = saved_path
                self.ckpt = tf.train.Checkpoint(generator=generator)

            def save_checkpoint(self, steps):
                utils.save_weights(
                    self._generator,
                    self.saved_path + "generator-{}.h5".format(steps)
                )
                utils.save_weights(self._generator, self.saved_path + "generator-{}.weights.h5".format(steps))
                utils.load_weights(self._generator, self.saved_path + "generator-{}.h5".format(steps))
                utils.save_weights(self.ckpt, self.saved_path + "ckpt-{}".format(steps))
                utils.export(self._generator, self.saved_path + "export")
                utils.save_weights(self._generator, self.saved_path)
    ''',
}


def test_a_path_handed_to_a_function_of_another_module_that_saves_it(tmp_path):
    make(tmp_path, SAVING)
    got, view = findings(tmp_path, "tts/trainer.py")
    assert [(row, col) for row, col, _ in got] == [(13, 13)]
    assert got[0][2].startswith("Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5`")
    assert "`utils.save_weights` passes this path to `save_weights()`" in got[0][2]
    assert view.saves("tts.utils.utils.save_weights") == (
        ("model", "filepath"), (("filepath", "save_weights", "model", ()),))
    assert any(d[0] == "tts.utils.utils" for d in view.deps)


def test_changing_the_saving_function_invalidates_the_cached_result(tmp_path):
    make(tmp_path, SAVING)
    _, view = findings(tmp_path, "tts/trainer.py")
    key = view.dependency_key()
    utils = tmp_path / "tts/utils/utils.py"
    utils.write_text(utils.read_text().replace("model.save_weights(filepath)", "model.save_weights(filepath + '.weights.h5')"))
    assert not dependencies_valid(ProjectIndex(str(tmp_path)), key)
    assert findings(tmp_path, "tts/trainer.py")[0] == []


def test_the_summary_keeps_the_defaults_of_command_line_flags():
    summary = summarize_source(textwrap.dedent('''\
        import argparse
        from absl import flags
        import tensorflow as tf

        DEFAULT = "out/model.ckpt"
        flags.DEFINE_string("weights", "./checkpoints/yolov3.tf", "path to weights")
        flags.DEFINE_integer("size", 416, "image size")
        tf.compat.v1.flags.DEFINE_string(name="out", default=DEFAULT, help="output")
        other.DEFINE_string("not_a_flag", "x.h5", "an object of another library")

        def parse():
            parser = argparse.ArgumentParser()
            parser.add_argument("--ckpt-path", type=str, default="log/save/ckpt-1")
            parser.add_argument("-o", "--output_dir", default=DEFAULT)
            parser.add_argument("--m", dest="model_path", default="m.h5")
            parser.add_argument("--twice", default="a.h5")
            parser.add_argument("--twice", default="b.h5")
            parser.add_argument("--resume", action="store_true")
            parser.add_argument("file")
            return parser.parse_args()
    '''))
    assert summary.flags == {
        "absl:weights": (TEXT, "./checkpoints/yolov3.tf"), "absl:size": ("", ""), "absl:out": (TEXT, "out/model.ckpt"),
        "argparse:ckpt_path": (TEXT, "log/save/ckpt-1"), "argparse:output_dir": (TEXT, "out/model.ckpt"),
        "argparse:model_path": (TEXT, "m.h5"), "argparse:twice": ("", ""), "argparse:resume": ("", ""),
        "argparse:file": ("", "")}
    assert Summary.from_json(json.loads(json.dumps(summary.to_json()))).flags == summary.flags


FLAGGED = '''\
    import argparse

    import tensorflow as tf
    from absl import app, flags
    from absl.flags import FLAGS

    flags.DEFINE_string("weights", "./checkpoints/yolov3.tf", "path to weights file")
    flags.DEFINE_string("output", "./checkpoints/yolov3.weights.h5", "path to output")
    flags.DEFINE_string("unknown", None, "no default")


    class Config:
        save_dir = "runs/exp/saved_model"


    def main(_argv):
        model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
        model.load_weights(FLAGS.weights)
        model.save_weights(FLAGS.output)
        model.save_weights(FLAGS.unknown)
        model.save(Config().save_dir)


    def train(args):
        model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
        model.save(args.save_dir)
        model.save(args.export)
        model.save(args.twice)
        model.save(args.undefined)


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--save-dir", default="runs/exp/saved_model")
        parser.add_argument("--export", default="runs/exp/model.keras")
        parser.add_argument("--twice", default="runs/a")
        parser.add_argument("--twice", default="runs/b.keras")
        options = parser.parse_args()
        train(options)
        tf.keras.models.load_model(options.save_dir)
        app.run(main)
'''


def test_the_default_of_a_flag_is_a_possible_path():
    ctx = analyse(cst.parse_module(textwrap.dedent(FLAGGED)), [])
    ends = {}
    for call, scope in ctx.model.index.get("Call", ()):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("load_weights", "save_weights", "save",
                                                                             "load_model"):
            ends[ctx.module.code_for_node(call.args[0].value)] = ctx.path_ending(call.args[0].value, scope)
    assert ends == {"FLAGS.weights": "./checkpoints/yolov3.tf", "FLAGS.output": "./checkpoints/yolov3.weights.h5",
                    "FLAGS.unknown": None, "Config().save_dir": None, "args.save_dir": "runs/exp/saved_model",
                    "args.export": "runs/exp/model.keras", "args.twice": None, "args.undefined": None,
                    "options.save_dir": "runs/exp/saved_model"}


def test_a_flag_defined_in_another_module_of_the_run(tmp_path):
    make(tmp_path, {
        "train.py": '''\
            import argparse
            from trainer import fit

            parser = argparse.ArgumentParser()
            parser.add_argument("--out", default="runs/saved_model")
            fit(parser.parse_args())
        ''',
        "trainer.py": '''\
            import tensorflow as tf

            def fit(args):
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.save(args.out)
        ''',
        "other.py": '''\
            import argparse
            parser = argparse.ArgumentParser()
            parser.add_argument("--out", default="runs/model.keras")
        ''',
    })
    got, view = findings(tmp_path, "trainer.py", checked=["train.py", "trainer.py"])
    assert [(row, col) for row, col, _ in got] == [(5, 16)]
    assert got[0][2].startswith("Keras 3 `save()` raises ValueError on a SavedModel directory")
    key = view.dependency_key()
    # A second checked module defining --out with another default: the default is not known.
    index = ProjectIndex(str(tmp_path), {str(tmp_path / c): load_summary(str(tmp_path / c))
                                         for c in ["train.py", "trainer.py", "other.py"]})
    assert not dependencies_valid(index, key)
    assert findings(tmp_path, "trainer.py", checked=["train.py", "trainer.py", "other.py"])[0] == []
    # Read alone, the flag is nobody's.
    assert findings(tmp_path, "trainer.py")[0] == []


def test_a_parameter_is_the_path_every_call_of_its_function_gives_it():
    ctx = analyse(cst.parse_module(textwrap.dedent('''\
        def agreed(model, path):
            target(path)

        def defaulted(model, folder, name="saved_model"):
            target(name)

        def differ(path):
            target(path)

        def unpacked(path):
            target(path)

        def uncalled(path):
            target(path)

        def relay(path):
            agreed(None, path)
            target(path)

        class Trainer:
            def snapshot(self, path, *, step=0):
                target(path)

            def run(self):
                self.snapshot("ckpt/last")
                self.snapshot(path="ckpt/last", step=3)

        agreed(model, "w.ckpt")
        agreed(model, path="dir/w.ckpt")
        defaulted(model, "out")
        differ("a.keras")
        differ("b")
        unpacked(*paths)
        relay("w.ckpt")
    ''')), [])
    ends = {}
    for call, scope in ctx.model.index.get("Call", ()):
        if isinstance(call.func, cst.Name) and call.func.value == "target":
            ends[scope.node.name.value] = ctx.path_ending(call.args[0].value, scope)
    assert ends == {"agreed": "w.ckpt", "defaulted": "saved_model", "differ": None, "unpacked": None,
                    "uncalled": None, "relay": "w.ckpt", "snapshot": "ckpt/last"}


@pytest.mark.parametrize("source,ending", [
    ('paths = {"model": "out/export", "w": "w.weights.h5"}\ntarget(paths["model"])', "out/export"),
    ('paths = {"model": "out/export"}\ntarget(paths["other"])', None),
    ('paths = {"model": "out/export", **extra}\ntarget(paths["model"])', None),
    ('paths = {"model": "out/export"}\npaths = {}\ntarget(paths["model"])', None),
    ('nets = {"generator": g, "discriminator": d}\nfor name in nets:\n    target(f"{out}/{name}")', "ator"),
    ('nets = {"generator": g, "discriminator": d}\nfor name in nets.keys():\n    target(name)', "ator"),
    ('nets = {"g": g, "d": d}\nfor name in nets:\n    target(name)', None),  # no text in common
    ('for name, net in {"g.h5": g, "d.h5": d}.items():\n    target(name)', ".h5"),
    ('for name, path in {"g": "a.h5", "d": "b.h5"}.items():\n    target(path)', ".h5"),
    ('for path in {"g": "a.h5", "d": "b.weights.h5"}.values():\n    target(path)', None),
    ('for name in ["model_a", "model_b.keras"]:\n    target(name)', None),
    ('for name in ("a.keras", "b.keras"):\n    target(name)', ".keras"),
    ('for name in sorted(nets):\n    target(name)', None),
    ('for name in ["a", "b"]:\n    pass\ntarget(name)', None),  # after the loop: not told
])
def test_dict_values_and_loops_over_written_out_collections(source, ending):
    assert _ending_of_last_call(source) == ending


def test_parameters_relayed_through_many_calls_are_read_once():
    """Twelve relays, each calling the next from six places: every parameter's ending is found once
    (without that, 6**8 readings down to the depth limit)."""
    lines = ["def f0(path):\n    target(path)\n"]
    for i in range(1, 12):
        lines.append(f"def f{i}(path):\n" + "".join(f"    f{i - 1}(path)\n" for _ in range(6)))
    lines.append("".join('f11("out/saved_model")\n' for _ in range(6)))
    start = time.perf_counter()
    assert _ending_of_last_call("\n".join(lines)) is None  # deeper than the depth limit: not told
    shallow = "\n".join(lines[:6]) + "".join('f5("out/saved_model")\n' for _ in range(6))
    assert _ending_of_last_call(shallow) == "out/saved_model"
    assert time.perf_counter() - start < 20


def test_a_parameter_not_named_as_parsed_arguments_reads_its_own_modules_flags_only(tmp_path):
    make(tmp_path, {
        "train.py": '''\
            import argparse
            parser = argparse.ArgumentParser()
            parser.add_argument("--out", default="runs/saved_model")
        ''',
        "trainer.py": '''\
            import tensorflow as tf

            def fit(cfg, args):
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.save(cfg.out)
                model.save(args.out)
        ''',
    })
    got, _ = findings(tmp_path, "trainer.py", checked=["train.py", "trainer.py"])
    assert [(row, col) for row, col, _ in got] == [(6, 16)]


def test_a_notebook_reads_its_own_defs_and_flags(tmp_path, monkeypatch, capsys):
    from tflint_gpu import cli

    sources = ["import tensorflow as tf\nfrom absl import flags\nflags.DEFINE_string('w', 'w.ckpt', 'x')\n"
               "FLAGS = flags.FLAGS\n",
               "def save_weights(model, filepath):\n    model.save_weights(filepath)\n",
               "model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])\n"
               "save_weights(model, 'gen-{}.h5'.format(3))\nmodel.load_weights(FLAGS.w)\n"]
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": s}
             for s in sources]
    notebook = {"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n", "nb.ipynb": json.dumps(notebook)})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--no-cache", "--select", "TFG908", "--target-version", "latest", "nb.ipynb"]) == 1
    out = capsys.readouterr().out
    assert "nb.ipynb:cell 3:2:21: TFG908" in out and "`save_weights` passes this path" in out
    assert "nb.ipynb:cell 3:3:20: TFG908" in out
    assert "cell 2" not in out
