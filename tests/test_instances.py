"""semantic/instances.py and the index facts under it (``Summary.members``, ``ProjectIndex.made_classes``):
of which project classes an object is an instance, across modules."""
from __future__ import annotations

import ast
import json
import textwrap

import libcst as cst
import pytest

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.project import ProjectFile, ProjectIndex, Summary, summarize

MODELS = {
    "models/__init__.py": "",
    "models/base.py": """
        import tensorflow as tf


        class Base(tf.keras.Model):
            def call(self, x):
                return self.head(x)


        class Built(tf.keras.Model):
            def build(self, input_shape):
                super().build(input_shape)
    """,
    "models/resnet.py": """
        import tensorflow as tf
        from models.base import Base, Built


        class ResNet(Base):
            def __init__(self, units):
                super().__init__()
                self.head = tf.keras.layers.Dense(units)


        class Other(Built):
            pass


        def resnet_18():
            return ResNet(2)


        def resnet_50():
            return resnet_18()


        def other():
            return Other()


        def library():
            return tf.keras.Sequential()


        def chained():
            return ResNet(2).compile()


        def given(model):
            return model
    """,
}


def make(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def test_the_summary_keeps_what_each_class_body_binds():
    summary = summarize(ast.parse(textwrap.dedent("""
        import tensorflow as tf

        class A(tf.keras.Model):
            size = 2
            def call(self, x):
                return x
            if tf.__version__ > "2":
                def build(self, input_shape):
                    pass
            try:
                from os import path
            except ImportError:
                path = None

        class B:
            pass

        if True:
            class C(A):
                def extra(self):
                    pass
        else:
            class C(A):
                def build(self, input_shape):
                    pass

        class D:
            def build(self):
                pass
        D = 3
    """)))
    assert summary.members == {"A": ("build", "call", "path", "size"), "B": (), "C": ("build", "extra")}
    again = Summary.from_json(json.loads(json.dumps(summary.to_json())))
    assert again.members == summary.members and again.digest == summary.digest
    data = summary.to_json()
    data["members"] = {"A": [1]}
    with pytest.raises(ValueError):
        Summary.from_json(data)


def test_the_index_follows_a_factory_to_the_class_it_makes(tmp_path):
    index = ProjectIndex(str(make(tmp_path, MODELS)))
    deps = set()
    assert index.made_classes("models.resnet.resnet_50", deps) == ("models.resnet.ResNet",)  # through resnet_18
    assert index.made_classes("models.resnet.ResNet", deps) == ("models.resnet.ResNet",)
    assert index.made_classes("models.resnet.other", deps) == ("models.resnet.Other",)
    for unknown in ("library", "chained", "given", "missing"):
        assert index.made_classes(f"models.resnet.{unknown}", deps) is None, unknown
    assert index.class_members("models.resnet.ResNet", deps) == ("__init__",)
    assert index.class_members("models.base.Built", deps) == ("build",)
    assert index.class_members("models.resnet.resnet_18", deps) is None
    assert index.class_members("tensorflow.keras.Model", deps) is None


def _classes(root, name, function, receiver):
    """What ``ctx.made_classes`` says of the name ``receiver`` read in ``function`` of the file ``name``."""
    path = str(root / name)
    source = (root / name).read_text()
    module = cst.parse_module(source)
    ctx = analyse(module, [], source, project=ProjectFile(ProjectIndex(str(root)), path))
    scope = next(s for s in ctx.model.scopes if s.name == function)
    calls = [n for n in scope.calls if isinstance(n.func, cst.Attribute) and n.func.attr.value == "build"
             and isinstance(n.func.value, cst.Name) and n.func.value.value == receiver]
    found = ctx.made_classes(calls[-1].func.value, scope)
    return None if found is None else [(c.name, "build" in c.members, "call" in c.members, c.bases)
                                       for c in found]


TRAIN = """
    import tensorflow as tf
    from models.resnet import ResNet, resnet_18, resnet_50, other, library, given
    import config


    class Local(tf.keras.Model):
        def call(self, x):
            return x


    def get_model():
        model = resnet_50()
        if config.small:
            model = resnet_18()
        model.build((None, 3))


    def mixed():
        model = resnet_50()
        if config.small:
            model = other()
        model.build((None, 3))


    def local():
        net = None
        net = Local() if config.small else ResNet(3)
        net.build((None, 3))


    def unknown(net):
        net.build((None, 3))


    def from_library():
        net = library()
        net.build((None, 3))
"""


def test_an_object_made_by_a_factory_of_another_module_is_an_instance_of_its_class(tmp_path):
    root = make(tmp_path, {**MODELS, "config.py": "small = False\n", "train.py": TRAIN})
    resnet = ("models.resnet.ResNet", False, True, ("tensorflow.keras.Model",))
    assert _classes(root, "train.py", "get_model", "model") == [resnet]  # both branches agree
    assert _classes(root, "train.py", "mixed", "model") == [
        resnet, ("models.resnet.Other", True, False, ("tensorflow.keras.Model",))]
    assert _classes(root, "train.py", "local", "net") == [("Local", False, True, ("tensorflow.keras.Model",)),
                                                           resnet]
    assert _classes(root, "train.py", "unknown", "net") is None
    assert _classes(root, "train.py", "from_library", "net") is None


def test_a_local_class_reads_the_members_of_its_project_bases(tmp_path):
    root = make(tmp_path, {**MODELS, "train.py": """
        import tensorflow as tf
        from models.base import Base, Built


        class Mine(Base):
            pass


        class Rebuilt(Built):
            def call(self, x):
                return x


        def main():
            mine = Mine()
            mine.build((None, 3))
            rebuilt = Rebuilt()
            rebuilt.build((None, 3))
    """})
    assert _classes(root, "train.py", "main", "mine") == [("Mine", False, True, ("tensorflow.keras.Model",))]
    assert _classes(root, "train.py", "main", "rebuilt") == [("Rebuilt", True, True, ("tensorflow.keras.Model",))]


def test_tfg927_flags_and_fixes_a_build_on_a_factory_of_another_module(tmp_path):
    """The rule through the fact: ``model = resnet_50()`` (and the branches' ``resnet_18()``) in train.py,
    the class in models/; not the mixed one (``other()`` makes a class with ``build``)."""
    from tflint_gpu.engine.fix import fix_source
    from tflint_gpu.engine.lint import lint_source, using_target
    from tflint_gpu.rules.base import REGISTRY
    from tflint_gpu.semantic.target import parse_target

    root = make(tmp_path, {**MODELS, "config.py": "small = False\n", "train.py": TRAIN})
    path = str(root / "train.py")
    source = (root / "train.py").read_text()
    rule = REGISTRY["TFG927"]
    view = ProjectFile(ProjectIndex(str(root)), path)
    found = lint_source(source, path, [rule], project=view, target=parse_target("latest")).findings
    assert [(f.row, f.col + 1) for f in found] == [(15, 5), (28, 5)]  # get_model, local; not mixed, unknown, library
    assert lint_source(source, path, [rule], project=None, target=parse_target("latest")).findings == []
    with using_target(parse_target("latest")):
        fixed = fix_source(source, path, [rule], unsafe=True, project=view).source
    assert "    model(tf.keras.Input(batch_shape=(None, 3)), training=False)\n" in fixed
    assert fixed.count("build(") == 3
