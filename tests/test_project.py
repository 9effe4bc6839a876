"""The project index: TensorFlow reached through the project's own modules.

Each project is a few files in tmp_path; every test fails when the file is
read alone (as before the index), and passes with it.
"""
from __future__ import annotations

import io
import json
import sys
import textwrap

import pytest

from tflint_gpu import cli
from tflint_gpu.engine import run
from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.base import REGISTRY, all_rules
from tflint_gpu.semantic.project import ProjectFile, ProjectIndex, compile_tree, project_root, summarize

RULES = list(all_rules())

STEP = textwrap.dedent("""\
    @tf.function
    def step(x):
        return x.numpy()
""")


def make(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def codes(root, name, project=True, rules=RULES):
    path = str(root / name)
    source = (root / name).read_text()
    view = ProjectFile(ProjectIndex(str(root)), path) if project else None
    return [(f.code, f.row) for f in lint_source(source, path, rules, project=view).findings]


def test_package_init_reexports_tensorflow(tmp_path):
    make(tmp_path, {"mypkg/__init__.py": "import tensorflow as tf\n",
                    "mypkg/train.py": "from mypkg import tf\n" + STEP})
    assert ("TFG101", 4) not in codes(tmp_path, "mypkg/train.py", project=False)
    assert ("TFG101", 4) in codes(tmp_path, "mypkg/train.py")
    view = ProjectFile(ProjectIndex(str(tmp_path)), str(tmp_path / "mypkg/train.py"))
    assert view.meaning("mypkg.tf") == "tensorflow"
    assert view.meaning("mypkg.tf.keras.layers.Dense") == "tensorflow.keras.layers.Dense"


def test_star_import_without_all_brings_every_public_name(tmp_path):
    make(tmp_path, {"utils.py": "import tensorflow as tf\nimport numpy as np\nlayers = tf.keras.layers\n_hidden = 1\n",
                    "train.py": "from utils import *\n" + STEP})
    assert codes(tmp_path, "train.py", project=False) == []
    assert ("TFG101", 4) in codes(tmp_path, "train.py")
    view = ProjectFile(ProjectIndex(str(tmp_path)), str(tmp_path / "train.py"))
    names = view.star_names(0, "utils")
    assert set(names) == {"tf", "np", "layers"}
    assert view.meaning(names["layers"]) == "tensorflow.keras.layers"


def test_star_import_honours_all(tmp_path):
    make(tmp_path, {"utils.py": "import tensorflow as tf\n__all__ = ['helper']\ndef helper(): pass\n",
                    "train.py": "from utils import *\n" + STEP,
                    "other.py": "from utils import *\nimport tensorflow as tf\n" + STEP})
    # `tf` is not in __all__: the star does not bring it, so `tf.function` is unknown here.
    assert codes(tmp_path, "train.py") == []
    view = ProjectFile(ProjectIndex(str(tmp_path)), str(tmp_path / "train.py"))
    assert set(view.star_names(0, "utils")) == {"helper"}
    assert ("TFG101", 5) in codes(tmp_path, "other.py")


def test_star_import_through_a_star_import(tmp_path):
    make(tmp_path, {"base.py": "import tensorflow as tf\n", "utils.py": "from base import *\n",
                    "train.py": "from utils import *\n" + STEP})
    assert ("TFG101", 4) in codes(tmp_path, "train.py")


def test_relative_import_of_a_reexported_module(tmp_path):
    make(tmp_path, {"pkg/__init__.py": "", "pkg/common.py": "from tensorflow import keras\nimport tensorflow as tf\n",
                    "pkg/model.py": """\
                        from .common import keras, tf

                        class Block(keras.layers.Layer):
                            def call(self, x):
                                return x.numpy()
                        """})
    assert codes(tmp_path, "pkg/model.py", project=False) == []
    assert ("TFG101", 5) in codes(tmp_path, "pkg/model.py")


def test_keras_base_class_in_another_module_makes_call_graph_code(tmp_path):
    make(tmp_path, {"models/__init__.py": "",
                    "models/base.py": "import tensorflow as tf\n\nclass BaseModel(tf.keras.Model):\n    pass\n",
                    "models/net.py": """\
                        from models.base import BaseModel

                        class Net(BaseModel):
                            def call(self, x):
                                return x.numpy()
                        """,
                    "models/rel.py": """\
                        from .base import BaseModel

                        class Net(BaseModel):
                            def call(self, x):
                                return x.numpy()
                        """,
                    "models/plain.py": """\
                        class Base:
                            pass

                        class Net(Base):
                            def call(self, x):
                                return x.numpy()
                        """})
    for name in ("models/net.py", "models/rel.py"):
        assert codes(tmp_path, name, project=False) == []
        assert ("TFG101", 5) in codes(tmp_path, name), name
    assert codes(tmp_path, "models/plain.py") == []  # no Keras class: not graph code
    view = ProjectFile(ProjectIndex(str(tmp_path)), str(tmp_path / "models/net.py"))
    assert view.class_bases("models.base.BaseModel") == ["tensorflow.keras.Model"]


def test_a_layer_subclass_of_a_project_layer_through_two_modules(tmp_path):
    make(tmp_path, {"pkg/__init__.py": "from .layers import MyLayer\n",
                    "pkg/layers.py": "import keras\n\nclass MyLayer(keras.layers.Layer):\n    pass\n",
                    "pkg/blocks.py": """\
                        from pkg import MyLayer

                        class Block(MyLayer):
                            def call(self, x):
                                return x.numpy()
                        """})
    assert ("TFG101", 5) in codes(tmp_path, "pkg/blocks.py")


def test_src_layout(tmp_path):
    make(tmp_path, {"src/mypkg/__init__.py": "import tensorflow as tf\n",
                    "src/mypkg/train.py": "from mypkg import tf\n" + STEP,
                    "scripts/run.py": "from mypkg import tf\n" + STEP})
    assert ("TFG101", 4) in codes(tmp_path, "src/mypkg/train.py")
    assert ("TFG101", 4) in codes(tmp_path, "scripts/run.py")
    index = ProjectIndex(str(tmp_path))
    assert index.module_name(str(tmp_path / "src/mypkg/train.py")) == ("mypkg.train", False)


def test_script_folder_sibling_module(tmp_path):
    make(tmp_path, {"scripts/helpers.py": "import tensorflow as tf\n",
                    "scripts/train.py": "from helpers import tf\n" + STEP})
    assert ("TFG101", 4) in codes(tmp_path, "scripts/train.py")


def test_a_cycle_between_two_modules_ends(tmp_path):
    make(tmp_path, {"a.py": "from b import *\nfrom b import tf\n", "b.py": "from a import *\nfrom a import tf\n",
                    "c.py": "from a import tf\nfrom b import *\n" + STEP})
    assert codes(tmp_path, "c.py") == []  # tf stands for nothing known: no finding, and no endless loop
    view = ProjectFile(ProjectIndex(str(tmp_path)), str(tmp_path / "c.py"))
    assert view.meaning("a.tf") is None  # a project name, as written


def test_an_outside_module_is_not_the_projects(tmp_path):
    make(tmp_path, {"train.py": "import tensorflow as tf\n" + STEP})
    view = ProjectFile(ProjectIndex(str(tmp_path)), str(tmp_path / "train.py"))
    assert view.meaning("tensorflow.function") is None
    assert codes(tmp_path, "train.py") == codes(tmp_path, "train.py", project=False)


def test_summary_reads_top_level_blocks_and_keeps_the_import(tmp_path):
    summary = summarize(compile_tree(textwrap.dedent("""\
        try:
            import tensorflow as tf
        except ImportError:
            tf = None
        if True:
            from tensorflow import keras as k
        def f():
            import numpy
        class C(k.Model, object):
            pass
        alias = tf.keras
        __all__ = ["C"]
        __all__ += ["f"]
    """)))
    assert summary.bound["tf"] == ("i", 0, "tensorflow")
    assert summary.bound["k"] == ("i", 0, "tensorflow.keras")
    assert summary.bound["C"] == ("c", ("k.Model", "object"))
    assert summary.bound["alias"] == ("a", "tf.keras")
    assert summary.all == ("C", "f")
    assert (0, "numpy") in summary.imported and summary.framework
    from tflint_gpu.semantic.project import Summary

    again = Summary.from_json(json.loads(json.dumps(summary.to_json())))
    import pickle

    sent = pickle.loads(pickle.dumps(summary))  # as a worker hands it over, its digest not yet asked
    assert summary._digest is None  # made only when a dependency key asks for it
    assert again.digest == summary.digest == sent.digest and again.bound == summary.bound == sent.bound
    summary.bound["extra"] = ("o",)
    assert summary.digest == again.digest  # worked out once


def test_project_root_rises_out_of_packages(tmp_path):
    make(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/mod.py": ""})
    assert project_root([str(tmp_path / "pkg/sub/mod.py")]) == str(tmp_path)
    assert project_root([str(tmp_path / "pkg/sub/mod.py")], configured=str(tmp_path / "pkg")) == str(tmp_path / "pkg")


# -- the driver ----------------------------------------------------------------

def test_the_prefilter_admits_a_file_whose_project_imports_reach_tensorflow(tmp_path, monkeypatch):
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n",
                    "utils.py": "import tensorflow as T\n",
                    "train.py": "from utils import T\n\n@T.function\ndef step(x):\n    return x.numpy()\n",
                    "lonely.py": "import os\n\n@os.function\ndef step(x):\n    return x.numpy()\n"})
    monkeypatch.chdir(tmp_path)
    assert "tensorflow" not in (tmp_path / "train.py").read_text()
    [train, lonely] = run.run_files(["train.py", "lonely.py"], lambda _: RULES, run.CHECK,
                                    project_root=str(tmp_path))
    assert ("TFG101", 5) in [(f.code, f.row) for f in train.findings]
    assert lonely.findings == []
    [alone] = run.run_files(["train.py"], lambda _: RULES, run.CHECK)
    assert alone.findings == []


def test_cli_sees_the_project(tmp_path, monkeypatch, capsys):
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n", "utils.py": "import tensorflow as tf\n",
                    "train.py": "from utils import *\n" + STEP})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--no-cache", "--select", "TFG101", "train.py"]) == 1
    assert "train.py:4:12: TFG101" in capsys.readouterr().out


def test_the_cache_is_invalidated_when_an_imported_module_changes(tmp_path, monkeypatch, capsys):
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n", "utils.py": "import tensorflow as tf\n",
                    "train.py": "from utils import *\n" + STEP})
    monkeypatch.chdir(tmp_path)
    args = ["--select", "TFG101", "train.py"]
    assert cli.main(args) == 1
    capsys.readouterr()
    calls = []
    real = run.process_file
    monkeypatch.setattr(run, "process_file", lambda *a: calls.append(a[0]) or real(*a))
    assert cli.main(args) == 1 and calls == []  # warm: from the cache
    capsys.readouterr()
    (tmp_path / "utils.py").write_text("import numpy as tf\n")  # train.py itself is unchanged
    assert cli.main(args) == 0
    assert calls == ["train.py"]
    assert "TFG101" not in capsys.readouterr().out
    # A body edit that leaves the module's summary as it was keeps the cached result.
    (tmp_path / "utils.py").write_text("import numpy as tf\n\ndef helper():\n    return 1\n")
    del calls[:]
    cli.main(args)
    assert calls == ["train.py"]  # the summary changed (a new def)
    del calls[:]
    (tmp_path / "utils.py").write_text("import numpy as tf\n\ndef helper():\n    return 2\n")
    cli.main(args)
    assert calls == []


def test_a_module_created_later_invalidates_the_cache(tmp_path, monkeypatch, capsys):
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n", "train.py": "from utils import *\n" + STEP})
    monkeypatch.chdir(tmp_path)
    args = ["--select", "TFG101", "train.py"]
    assert cli.main(args) == 0
    make(tmp_path, {"utils.py": "import tensorflow as tf\n"})
    assert cli.main(args) == 1
    capsys.readouterr()


def test_the_summary_cache_is_data_checked_field_by_field(tmp_path, monkeypatch, capsys):
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n", "utils.py": "import tensorflow as tf\n",
                    "train.py": "from utils import *\n" + STEP})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--select", "TFG101", "train.py"]) == 1
    [store] = list((tmp_path / ".tflint_gpu_cache" / "project").glob("*.json"))
    data = json.loads(store.read_text())
    assert data["summaries"]
    for summary in data["summaries"].values():
        summary["bound"] = {"tf": ["i", "not a level", 3]}
    store.write_text(json.dumps(data))
    (tmp_path / "train.py").write_text((tmp_path / "train.py").read_text() + "\n")
    assert cli.main(["--select", "TFG101", "train.py"]) == 1  # the planted summary is ignored
    capsys.readouterr()


def test_stdin_with_a_filename_sees_the_project(tmp_path, monkeypatch, capsys):
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n", "mypkg/__init__.py": "import tensorflow as tf\n"})
    monkeypatch.chdir(tmp_path)
    source = "from mypkg import tf\n" + STEP
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(source.encode())))
    assert cli.main(["--select", "TFG101", "-", "--stdin-filename", "mypkg/train.py"]) == 1
    assert "mypkg/train.py:4:12: TFG101" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(source.encode())))
    assert cli.main(["--select", "TFG101", "-"]) == 0  # no name: read alone
    capsys.readouterr()


def test_the_fixer_sees_the_project(tmp_path, monkeypatch, capsys):
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n",
                    "utils.py": "import tensorflow as tf\nimport numpy as np\n",
                    "train.py": "from utils import *\n\nx = tf.Variable(np.zeros((3, 3)))\n"})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--no-cache", "--select", "TFG201", "--fix", "train.py"]) == 0
    fixed = "from utils import *\n\nx = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))\n"
    assert (tmp_path / "train.py").read_text() == fixed
    capsys.readouterr()


def test_a_notebook_sees_the_modules_beside_it(tmp_path, monkeypatch, capsys):
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": ["from utils import *\n"]},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": STEP.splitlines(True)}]
    notebook = {"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n", "utils.py": "import tensorflow as tf\n",
                    "nb.ipynb": json.dumps(notebook)})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--no-cache", "--select", "TFG101", "nb.ipynb"]) == 1
    assert "nb.ipynb:cell 2:3:12: TFG101" in capsys.readouterr().out


def test_flake8_sees_the_project(tmp_path, monkeypatch, capsys):
    flake8_api = pytest.importorskip("flake8.api.legacy")
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n", "utils.py": "import tensorflow as tf\n",
                    "train.py": "from utils import *\n" + STEP})
    monkeypatch.chdir(tmp_path)
    style = flake8_api.get_style_guide(select=["TFG101"])
    report = style.check_files([str(tmp_path / "train.py")])
    assert report.total_errors == 1
    assert ":4:12: TFG101" in capsys.readouterr().out


def test_parallel_run_sees_the_project(tmp_path):
    files = {"pyproject.toml": "[tool.tflint-gpu]\n", "utils.py": "import tensorflow as tf\n"}
    files.update({f"train{i}.py": "from utils import *\n" + STEP for i in range(run.PARALLEL_THRESHOLD + 2)})
    make(tmp_path, files)
    paths = [str(tmp_path / name) for name in files if name.startswith("train")]
    results = run.run_files(paths, lambda _: [REGISTRY["TFG101"]], run.CHECK, jobs=2, project_root=str(tmp_path))
    assert all([(f.code, f.row) for f in r.findings] == [("TFG101", 4)] for r in results)


def test_a_keras_class_in_a_sibling_module_of_a_script(tmp_path):
    make(tmp_path, {"scripts/nets.py": "import tensorflow as tf\n\nclass Base(tf.keras.layers.Layer):\n    pass\n",
                    "scripts/train.py": """\
                        from nets import Base

                        class Block(Base):
                            def call(self, x):
                                return x.numpy()
                        """})
    assert ("TFG101", 5) in codes(tmp_path, "scripts/train.py")


def test_a_project_object_keeps_the_name_it_is_imported_by(tmp_path):
    """In Keras's own code, ``keras.src.ops.x`` stays ``keras.ops.x`` (not the module defining it)."""
    make(tmp_path, {"keras/src/__init__.py": "", "keras/src/ops/__init__.py": "from keras.src.ops.core import *\n",
                    "keras/src/ops/core.py": "def convert_to_tensor(x):\n    return x\n",
                    "keras/src/layers/dense.py": "from keras.src import ops\nfrom .. import ops as o\n"})
    view = ProjectFile(ProjectIndex(str(tmp_path)), str(tmp_path / "keras/src/layers/dense.py"))
    assert view.meaning("keras.src.ops.convert_to_tensor") is None  # as written
    assert view.meaning("..ops") == "keras.src.ops"


def test_a_name_from_the_one_star_import_of_tensorflow(tmp_path):
    make(tmp_path, {"train.py": "from tensorflow import *\n\n@function\ndef step(x):\n    return x.numpy()\n",
                    "two.py": "from tensorflow import *\nfrom mylib import *\n\n@function\ndef step(x):\n"
                              "    return x.numpy()\n",
                    "other.py": "from mylib import *\n\n@function\ndef step(x):\n    return x.numpy()\n"})
    assert ("TFG101", 5) in codes(tmp_path, "train.py", project=False)
    assert codes(tmp_path, "two.py", project=False) == []  # which star brings `function`? Unknown.
    assert codes(tmp_path, "other.py", project=False) == []


# -- callers in other modules -----------------------------------------------

TRAINER = """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.Adam()


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""
LOOPED = "from trainer import train_step\n\ndef run(ds):\n    for x, y in ds:\n        train_step(x, y)\n"
ONCE = "from trainer import train_step\n\ndef run(x, y):\n    train_step(x, y)\n"


def checked(root, names, select="TFG405"):
    paths = [str(root / name) for name in names]
    results = run.run_files(paths, lambda _: [REGISTRY[select]], run.CHECK, jobs=1, project_root=str(root))
    return {r.path[len(str(root)) + 1:]: [(f.code, f.row) for f in r.findings] for r in results}


def test_a_training_step_called_in_a_loop_in_another_module_is_eager_in_a_loop(tmp_path):
    make(tmp_path, {"trainer.py": TRAINER, "main.py": LOOPED})
    assert checked(tmp_path, ["trainer.py", "main.py"]) == {"trainer.py": [("TFG405", 7)], "main.py": []}
    assert checked(tmp_path, ["trainer.py"]) == {"trainer.py": []}  # checked alone: main.py is not seen


def test_the_loop_call_through_a_module_attribute_and_a_package(tmp_path):
    make(tmp_path, {"pkg/__init__.py": "from .trainer import train_step\n", "pkg/trainer.py": TRAINER,
                    "main.py": "import pkg.trainer\nfrom pkg import train_step as ts\n\n"
                               "for b in range(3):\n    pkg.trainer.train_step(b, b)\n",
                    "other.py": "import pkg\n\nwhile True:\n    pkg.train_step(1, 2)\n"})
    assert checked(tmp_path, ["pkg/trainer.py", "main.py"])["pkg/trainer.py"] == [("TFG405", 7)]
    assert checked(tmp_path, ["pkg/trainer.py", "other.py"])["pkg/trainer.py"] == [("TFG405", 7)]
    index = run.build_index(str(tmp_path), [str(tmp_path / "main.py"), str(tmp_path / "other.py")], 1)
    assert index.loop_callers("pkg.trainer") == {"train_step": ("main", "other")}


def test_a_call_once_or_shadowed_or_in_a_def_in_the_loop_is_not_a_loop_call(tmp_path):
    make(tmp_path, {"trainer.py": TRAINER, "main.py": ONCE,
                    "shadow.py": "from trainer import train_step\n\ndef run(ds, train_step):\n"
                                 "    for x, y in ds:\n        train_step(x, y)\n",
                    "later.py": "from trainer import train_step\n\nfor b in range(3):\n"
                                "    def go():\n        train_step(b, b)\n"
                                "[x for x in train_step(1, 2)]\n"})
    assert checked(tmp_path, ["trainer.py", "main.py", "shadow.py", "later.py"])["trainer.py"] == []


def test_a_tf_function_step_called_in_a_loop_elsewhere_stays_a_graph(tmp_path):
    make(tmp_path, {"trainer.py": TRAINER.replace("def train_step", "@tf.function\ndef train_step"),
                    "main.py": LOOPED})
    assert checked(tmp_path, ["trainer.py", "main.py"])["trainer.py"] == []


def test_a_tf_function_made_in_a_function_called_in_a_loop_elsewhere(tmp_path):
    make(tmp_path, {"steps.py": "import tensorflow as tf\n\n\ndef predict(w, x):\n"
                                "    step = tf.function(lambda v: tf.tanh(v @ w))\n    return step(x)\n",
                    "main.py": "import steps\n\nfor x in batches:\n    steps.predict(w, x)\n"})
    assert checked(tmp_path, ["steps.py", "main.py"], "TFG403")["steps.py"] == [("TFG403", 5)]
    assert checked(tmp_path, ["steps.py"], "TFG403")["steps.py"] == []


def test_dropping_the_loop_elsewhere_invalidates_the_cached_result(tmp_path, monkeypatch, capsys):
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n", "trainer.py": TRAINER, "main.py": LOOPED})
    monkeypatch.chdir(tmp_path)
    args = ["--select", "TFG405", "trainer.py", "main.py"]
    assert cli.main(args) == 1
    assert "trainer.py:7:5: TFG405" in capsys.readouterr().out
    calls = []
    real = run.process_file
    monkeypatch.setattr(run, "process_file", lambda *a: calls.append(a[0]) or real(*a))
    assert cli.main(args) == 1 and calls == []  # warm: from the cache
    capsys.readouterr()
    (tmp_path / "main.py").write_text(ONCE)  # trainer.py itself is unchanged
    assert cli.main(args) == 0
    assert sorted(calls) == ["main.py", "trainer.py"]
    assert "TFG405" not in capsys.readouterr().out
    del calls[:]
    (tmp_path / "main.py").write_text(LOOPED)  # and back: found again
    assert cli.main(args) == 1
    assert sorted(calls) == ["main.py", "trainer.py"]
    capsys.readouterr()


def test_the_loop_calls_of_a_summary_are_data(tmp_path):
    summary = summarize(compile_tree("import trainer\nfrom . import util\nimport numpy as np\n"
                                     "import tensorflow as tf\nfor b in ds:\n    trainer.step(b)\n"
                                     "    util.go(b)\n    np.mean(b)\n    tf.add(b, 1)\n"))
    assert set(summary.loop_calls) == {(0, "trainer.step"), (1, "util.go")}  # not numpy, not tensorflow
    from tflint_gpu.semantic.project import Summary
    assert Summary.from_json(json.loads(json.dumps(summary.to_json()))).digest == summary.digest
    data = summary.to_json()
    data["loop_calls"] = [[0, 1]]
    with pytest.raises(ValueError):
        Summary.from_json(data)


def test_a_loop_in_graph_code_elsewhere_is_not_a_loop_call(tmp_path):
    """Graph code's loop runs at trace time: its callee runs once a trace, in the graph."""
    make(tmp_path, {"trainer.py": TRAINER,
                    "graph.py": "import tensorflow as tf\nfrom trainer import train_step\n\n@tf.function\n"
                                "def epoch(ds):\n    for x, y in ds:\n        train_step(x, y)\n",
                    "handed.py": "import tensorflow as tf\nfrom trainer import train_step\n\ndef epoch(ds):\n"
                                 "    for x, y in ds:\n        train_step(x, y)\n\nepoch = tf.function(epoch)\n",
                    "keras_model.py": "import keras\nfrom trainer import train_step\n\nclass M(keras.Model):\n"
                                      "    def train_step(self, data):\n        for x, y in data:\n"
                                      "            train_step(x, y)\n",
                    "mapped.py": "from trainer import train_step\n\nds.map(lambda b: [train_step(x, x) for x in b])\n"})
    assert checked(tmp_path, ["trainer.py", "graph.py", "handed.py", "keras_model.py", "mapped.py"]) \
        ["trainer.py"] == []
    make(tmp_path, {"plain.py": "from trainer import train_step\n\nclass Trainer:\n    def fit(self, ds):\n"
                                "        for x, y in ds:\n            train_step(x, y)\n"})
    assert checked(tmp_path, ["trainer.py", "plain.py"])["trainer.py"] == [("TFG405", 7)]


# -- what other modules' defs return: a dataset built in data.py, consumed in train.py -----------------
DATA = """\
    import tensorflow as tf


    def parse(x):
        return x * 2


    def load(n, training=True):
        ds = tf.data.Dataset.range(n)
        ds = ds.map(parse)
        if training:
            ds = ds.shuffle(100)
        return ds.batch(32)


    def shuffled_batches(n):
        return tf.data.Dataset.range(n).batch(4).shuffle(10)


    def maybe_batched(n, batch):
        ds = tf.data.Dataset.range(n)
        if batch:
            ds = ds.batch(4)
        return ds


    def augment(ds):
        return ds.map(parse)


    def numbers(n):
        return list(range(n))


    def looped(files):
        for f in files:
            ds = tf.data.TFRecordDataset(f)
        return ds.batch(2)
"""


def test_the_summary_keeps_what_each_def_returns():
    summary = summarize(compile_tree(textwrap.dedent(DATA)))
    assert summary.returns["load"] == (("call", "tf.data.Dataset.range", ("map", "?shuffle", "batch")),)
    assert summary.returns["augment"] == (("param", 0, ("map",)),)
    assert summary.returns["maybe_batched"] == (("call", "tf.data.Dataset.range", ("?batch",)),)
    assert summary.returns["numbers"] == (("call", "list", ()),)  # the importer's facts judge the root
    assert "parse" not in summary.returns  # `x * 2`: not a chain
    assert "looped" not in summary.returns  # bound in a loop: not followed
    from tflint_gpu.semantic.project import Summary
    assert Summary.from_json(json.loads(json.dumps(summary.to_json()))).returns == summary.returns
    data = summary.to_json()
    data["returns"]["load"] = [["call", 3, []]]
    with pytest.raises(ValueError):
        Summary.from_json(data)


def test_returns_that_are_not_followed():
    tree = compile_tree(textwrap.dedent("""\
        import tensorflow as tf

        def gen(n):
            yield tf.data.Dataset.range(n)

        def falls_through(n, flag):
            if flag:
                return tf.data.Dataset.range(n)

        def rebinds_in_a_with(n):
            ds = tf.data.Dataset.range(n)
            with ctx() as ds:
                pass
            return ds

        @decorated
        def wrapped(n):
            return tf.data.Dataset.range(n)

        def replaced(n):
            return tf.data.Dataset.range(n)
        replaced = 3
    """))
    assert summarize(tree).returns == {}


def test_project_file_resolves_the_def_and_its_root(tmp_path):
    make(tmp_path, {"pkg/__init__.py": "from .data import load\n", "pkg/data.py": DATA,
                    "pkg/train.py": "from . import load\n", "train.py": "import pkg\n"})
    view = ProjectFile(ProjectIndex(str(tmp_path)), str(tmp_path / "pkg/train.py"))
    assert view.returns("pkg.load") == [("call", ("external", "tensorflow.data.Dataset.range"),
                                         ("map", "?shuffle", "batch"))]
    assert view.returns("pkg.data.augment") == [("param", 0, ("map",))]
    assert view.returns("pkg.data.numbers") == [("call", ("external", "list"), ())] or \
        view.returns("pkg.data.numbers") is None
    assert view.returns("tensorflow.data.Dataset.range") is None
    assert ("pkg.data", next(d for m, d in view.deps if m == "pkg.data")) in view.deps


CONSUMER = """\
    import tensorflow as tf
    from data import load, shuffled_batches, maybe_batched, augment, numbers

    ds = load(1000)
    ds = ds.shuffle(1000)
    ok = shuffled_batches(10).shuffle(5)
    maybe = maybe_batched(10, True).shuffle(5)
    again = load(10).unbatch().shuffle(5)
    mapped = augment(tf.data.Dataset.range(3).batch(2)).shuffle(4)
    plain = augment(numbers(3)).shuffle(4)
    rnd = load(10).map(lambda x: x + tf.random.uniform([]))
"""


def test_a_dataset_built_by_a_helper_in_another_module_feeds_the_dataset_rules(tmp_path):
    make(tmp_path, {"data.py": DATA, "train.py": CONSUMER})
    path = str(tmp_path / "train.py")
    source = (tmp_path / "train.py").read_text()
    view = ProjectFile(ProjectIndex(str(tmp_path)), path)
    found = [(f.code, f.row, f.col, f.message) for f in lint_source(source, path, RULES, project=view).findings
             if f.code.startswith("TFG30")]
    shuffle_message = ("`shuffle` after the `batch` in `data.load` shuffles whole batches: each batch holds "
                       "consecutive elements")
    assert ("TFG305", 5, 8, shuffle_message) in found
    # a helper passing on the dataset it is given: the batch of the argument is in view, in the chain
    assert [f[:2] for f in found if f[1] == 9] == [("TFG305", 9)]
    assert [f[:2] for f in found if f[1] == 11] == [("TFG306", 11)]  # the receiver is known to be a dataset
    # look-alikes: already shuffled after the batch there; a batch under an `if`; unbatched again here;
    # a helper given a list
    assert not [f for f in found if f[1] in (6, 7, 8, 10)]
    alone = [f.code for f in lint_source(source, path, RULES).findings if f.code.startswith("TFG30")]
    assert alone == []  # read alone, nothing is known of `load`


def test_changing_what_a_helper_returns_invalidates_the_cached_result(tmp_path, monkeypatch, capsys):
    make(tmp_path, {"pyproject.toml": "[tool.tflint-gpu]\n", "data.py": DATA, "train.py": CONSUMER})
    monkeypatch.chdir(tmp_path)
    args = ["--select", "TFG305", "train.py"]
    assert cli.main(args) == 1
    assert "train.py:5:9: TFG305" in capsys.readouterr().out
    (tmp_path / "data.py").write_text(textwrap.dedent(DATA).replace("return ds.batch(32)",
                                                                    "return ds.batch(32).shuffle(3)"))
    assert cli.main(args) == 1
    assert "train.py:5:9" not in capsys.readouterr().out


def test_a_package_of_the_project_is_its_own_module(tmp_path):
    """TFG917 leaves tensorflow/addons's own imports of tensorflow_addons alone (RuleContext.own_module)."""
    make(tmp_path, {"tensorflow_addons/__init__.py": "import tensorflow as tf\nfrom tensorflow_addons import utils\n",
                    "tensorflow_addons/utils.py": "x = 1\n",
                    "outside/train.py": "import tensorflow as tf\nimport tensorflow_addons as tfa\n"})
    tfg917 = [REGISTRY["TFG917"]]
    assert codes(tmp_path, "tensorflow_addons/__init__.py", rules=tfg917) == []
    assert codes(tmp_path / "outside", "train.py", rules=tfg917) == [("TFG917", 2)]


BLOCKS = {
    "core/__init__.py": "",
    "core/common.py": """\
        import tensorflow as tf

        def conv(x, filters, bn=True):
            y = tf.keras.layers.Conv2D(filters, 3, use_bias=not bn)(x)
            return tf.nn.relu(y)

        def block(x, filters):
            short = x
            y = conv(x, filters=filters)
            return short + conv(y, filters)

        def upsample(x):
            return tf.image.resize(x, (2, 2))

        def scale(n):
            return n * 2
        """,
    "core/backbone.py": """\
        import tensorflow as tf
        import core.common as common

        def darknet(x):
            x = common.block(x, 32)
            route = x
            x = common.conv(x, 64)
            return tf.concat([x, route], axis=-1)
        """,
    "model.py": """\
        import tensorflow as tf
        import core.backbone as backbone
        import core.common as common

        def head(inputs):
            feature = backbone.darknet(inputs)
            up = common.upsample(feature)
            return tf.concat([feature, up], axis=-1), tf.split(common.scale(inputs), 2)
        """,
}


def test_a_nested_def_is_not_part_of_the_def_it_is_written_in():
    # The inner def's return and layer call run when it is called, not when `outer` is.
    summary = summarize(compile_tree(textwrap.dedent("""\
        import tensorflow as tf

        def outer(x, units):
            def inner():
                return tf.keras.layers.Dense(4)(x)
            return inner

        def feeds(x, units):
            return tf.keras.layers.Dense(units)(x)
        """)))
    assert "outer" not in summary.builds
    assert summary.builds["feeds"][:2] == ((0,), (0,))


def test_the_summary_keeps_which_parameters_build_a_model():
    summary = summarize(compile_tree(textwrap.dedent(BLOCKS["core/common.py"])))
    assert summary.builds["conv"][:2] == ((0,), (0,))  # filters and bn go to the constructor only
    assert summary.builds["block"][0] == (0,)  # through the module's own conv
    assert summary.builds["upsample"][0] == ()  # hands x to tf.image.resize only
    assert "scale" not in summary.builds
    from tflint_gpu.semantic.project import Summary
    assert Summary.from_json(json.loads(json.dumps(summary.to_json()))).builds == summary.builds
    data = summary.to_json()
    data["builds"]["conv"] = [[0], [0], [["x", "0", 0]]]
    with pytest.raises(ValueError):
        Summary.from_json(data)


def test_builders_are_followed_across_modules(tmp_path):
    make(tmp_path, BLOCKS)
    index = ProjectIndex(str(tmp_path))
    deps = set()
    assert index.builds("core.backbone.darknet", deps) == ((0,), (0,))  # through common.block
    assert index.builds("core.common.upsample", deps) is None  # feeds no model
    assert ("TFG907", 8) in codes(tmp_path, "core/backbone.py")  # tf.concat on the block's output
    assert ("TFG907", 8) not in codes(tmp_path, "core/backbone.py", project=False)
    assert codes(tmp_path, "model.py") == [("TFG907", 8)]  # darknet's result; not tf.split of a number


def test_an_imports_only_summary_has_the_full_ones_imports_and_bindings():
    """What a file's own check reads (``ProjectFile.imports``) is the same in both; only the
    defs' facts, which the index reads of other modules, are left out."""
    import ast as _ast
    import importlib.util as _util
    from pathlib import Path

    from tflint_gpu.semantic.project import summarize

    spec = _util.find_spec("keras")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("keras (the test extra) is not installed")
    paths = sorted((Path(list(spec.submodule_search_locations)[0]) / "src").rglob("*.py"))[::10]
    some_defs = 0
    for path in paths:
        tree = _ast.parse(path.read_text(encoding="utf-8"))
        full, light = summarize(tree), summarize(tree, imports_only=True)
        assert (light.bound, light.stars, light.all, light.imported, light.framework) == \
            (full.bound, full.stars, full.all, full.imported, full.framework), path
        assert not (light.returns or light.builds or light.loop_calls)
        some_defs += bool(full.returns or full.builds)
    assert some_defs  # the full summaries had facts to leave out


# -- defs another module calls from graph code ---------------------------------------------
HELPERS = "def to_host(x):\n    return x.numpy()\n\n\ndef log(x, n):\n    print(x, n)\n    return x\n"
METRIC = """\
import tensorflow as tf

from helpers import to_host
import helpers


class Host(tf.keras.metrics.Metric):
    def update_state(self, y_true, y_pred, sample_weight=None):
        to_host(y_pred)
        helpers.log(y_pred, 3)


@tf.function
def step(x):
    return helpers.log(x, x)
"""


def test_a_helper_another_module_calls_from_graph_code_runs_in_its_graph(tmp_path):
    # issue 35: `.numpy()` through a helper a metric's update_state calls (a module naming no TensorFlow
    # is checked for it); a print of the graph def's data there
    make(tmp_path, {"helpers.py": HELPERS, "metric.py": METRIC})
    assert checked(tmp_path, ["helpers.py", "metric.py"], "TFG101") == {"helpers.py": [("TFG101", 2)],
                                                                       "metric.py": []}
    # log's x is the data of both graph defs; n is a Python 3 in one call
    assert checked(tmp_path, ["helpers.py", "metric.py"], "TFG105")["helpers.py"] == [("TFG105", 6)]
    index = run.build_index(str(tmp_path), [str(tmp_path / "metric.py")], 1)
    assert index.graph_callers("helpers") == {"to_host": ("metric",), "log": ("metric",)}
    assert index.graph_data_positions("helpers", "log") == (0,)
    # checked alone, or called only eagerly elsewhere: not graph code
    assert checked(tmp_path, ["helpers.py"], "TFG101") == {"helpers.py": []}
    make(tmp_path, {"metric.py": "from helpers import to_host\n\n\ndef run(x):\n    return to_host(x)\n"})
    assert checked(tmp_path, ["helpers.py", "metric.py"], "TFG101")["helpers.py"] == []


def test_the_graph_calls_of_a_summary_are_data():
    summary = summarize(compile_tree(METRIC + "\n\nclass Plain:\n    def call(self, x):\n"
                                              "        helpers.other(x)\n"))
    # argument positions given the graph defs' data (log(y_pred, 3) and log(x, x): 0 in both); not a
    # `call` of a class without bases
    assert set(summary.graph_calls) == {(0, "helpers.to_host", (0,)), (0, "helpers.log", (0,))}
    from tflint_gpu.semantic.project import Summary
    assert Summary.from_json(json.loads(json.dumps(summary.to_json()))).digest == summary.digest
    data = summary.to_json()
    data["graph_calls"] = [[0, "helpers.log"]]
    with pytest.raises(ValueError):
        Summary.from_json(data)
