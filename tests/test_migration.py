"""semantic/migration.py: which Keras a file, an API spelling or an object belongs to."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.migration import KERAS3, TF_KERAS, is_metric_class, is_model_class, raw_flavour


def context(source: str):
    module = cst.parse_module(textwrap.dedent(source).lstrip("\n"))
    return analyse(module, [])


def test_raw_flavour_by_spelling():
    assert raw_flavour("tf_keras.optimizers.Adam") == TF_KERAS
    assert raw_flavour("tensorflow.python.keras.layers.Dense") == TF_KERAS
    assert raw_flavour("tensorflow.keras.optimizers.Adam") == KERAS3
    assert raw_flavour("keras.optimizers.Adam") == KERAS3
    assert raw_flavour("keras") == KERAS3
    assert raw_flavour("tensorflow.zeros") is None
    assert raw_flavour(None) is None
    assert raw_flavour("tensorflow.keras.optimizers.Adam", legacy_env=True) is None
    assert raw_flavour("keras.optimizers.Adam", legacy_env=True) == KERAS3


def test_module_flavour_from_imports_calls_and_bases():
    assert context("import tensorflow as tf\nm = tf.keras.Sequential()\n").migration.module_flavour() == KERAS3
    assert context("import tf_keras\nm = tf_keras.Sequential()\n").migration.module_flavour() == TF_KERAS
    assert context("import tensorflow as tf\nx = tf.zeros(3)\n").migration.module_flavour() is None
    both = context("import tf_keras\nimport keras\n")
    assert both.migration.module_flavour() is None
    assert both.migration.module_flavours() == {KERAS3, TF_KERAS}
    base = context("import tensorflow as tf\nclass M(tf.keras.Model):\n    pass\n")
    assert base.migration.module_flavour() == KERAS3
    legacy = context("import os\nos.environ['TF_USE_LEGACY_KERAS'] = '1'\nimport tensorflow as tf\n"
                     "m = tf.keras.Sequential()\n")
    assert legacy.migration.module_flavour() is None


def test_object_flavour_and_class_follow_names_bound_once():
    ctx = context("""
        import tensorflow as tf
        import tf_keras

        metric = tf.keras.metrics.Mean()
        old = tf_keras.metrics.Mean()
        alias = metric

        class Net(tf.keras.Model):
            pass

        class Sub(Net):
            pass

        net = Sub()
        loaded = tf.keras.models.load_model("m.keras")
        twice = tf.keras.metrics.Mean()
        twice = tf_keras.metrics.Mean()
    """)
    m = ctx.migration
    root = ctx.model.root
    assert m.object_flavour(cst.Name("metric"), root) == KERAS3
    assert m.object_flavour(cst.Name("old"), root) == TF_KERAS
    assert m.object_flavour(cst.Name("alias"), root) == KERAS3
    assert m.object_flavour(cst.Name("net"), root) == KERAS3
    assert m.object_class(cst.Name("metric"), root) == "keras.metrics.Mean"
    assert m.object_class(cst.Name("net"), root) == "keras.Model"
    assert m.object_class(cst.Name("loaded"), root) == "keras.Model"
    assert m.object_class(cst.Name("twice"), root) is None
    # Rebound to two Keras: the file uses both, so nothing is decided.
    assert m.object_flavour(cst.Name("twice"), root) is None
    assert m.object_flavour(cst.Name("unknown"), root) is None


def test_object_flavour_falls_back_to_the_file():
    ctx = context("""
        from tensorflow import keras

        def train(model):
            model.fit_generator(gen)
    """)
    function = next(s for s in ctx.model.scopes if s.name == "train")
    assert ctx.migration.object_flavour(cst.Name("model"), function) == KERAS3


def test_class_kinds():
    assert is_model_class("keras.Sequential") and is_model_class("keras.models.Model")
    assert not is_model_class("keras.layers.Dense")
    assert is_metric_class("keras.metrics.Mean") and is_metric_class("keras.metrics.AUC")
    assert not is_metric_class("keras.metrics.MSE") and not is_metric_class("keras.metrics.mean_squared_error")
    assert not is_metric_class(None)


def test_path_ending():
    ctx = context("""
        import os

        path = os.path.join(folder, "model.keras")
        other = folder + "/w.h5"
        text = f"{folder}/m.keras"
        unknown = make_path()
        twice = "a.keras"
        twice = "b"
    """)
    ends = {name: ctx.path_ending(cst.Name(name), ctx.model.root)
            for name in ("path", "other", "text", "unknown", "twice")}
    assert ends == {"path": "model.keras", "other": "/w.h5", "text": "/m.keras", "unknown": None, "twice": None}
    assert ctx.path_ending(cst.parse_expression("'x.hdf5'"), ctx.model.root) == "x.hdf5"
    formatted = "'ep%03d-loss%.3f.h5' % (epoch, loss)"
    assert ctx.path_ending(cst.parse_expression(formatted), ctx.model.root) == ".h5"
    assert ctx.path_ending(cst.parse_expression("'weights-%s' % name"), ctx.model.root) is None


def _call_at(ctx, text):
    """The call whose code is ``text`` and the scope it sits in."""
    for call, scope in ctx.model.index.get("Call", ()):
        if ctx.module.code_for_node(call) == text:
            return call, scope
    raise AssertionError(text)


def test_hasattr_guards_and_unreached_under_keras3():
    ctx = context("""
        import tensorflow as tf

        def make(metric):
            if hasattr(tf.keras.optimizers, "legacy"):
                a = tf.keras.optimizers.legacy.SGD(lr=1.0)
            elif not hasattr(metric, "reset_state"):
                b = tf.keras.optimizers.SGD(lr=2.0)
            else:
                c = tf.keras.optimizers.SGD(lr=3.0)
            d = tf.keras.optimizers.SGD(lr=4.0) if not hasattr(tf.keras.optimizers, "legacy") else None
            if hasattr(tf.keras, "legacy"):
                pass
            else:
                e = tf.keras.optimizers.SGD(lr=5.0)
            f = tf.keras.optimizers.SGD(lr=6.0)
    """)
    m = ctx.migration
    guards = {}
    for text in ("a", "b", "c", "d", "e", "f"):
        lr = {"a": "1.0", "b": "2.0", "c": "3.0", "d": "4.0", "e": "5.0", "f": "6.0"}[text]
        legacy = ".legacy" if text == "a" else ""
        call, scope = _call_at(ctx, f"tf.keras.optimizers{legacy}.SGD(lr={lr})")
        found = [(ctx.module.code_for_node(obj), name, has) for obj, name, has in m.hasattr_guards(call, scope)]
        guards[text] = (found, m.unreached_under_keras3(call, scope))
    assert guards["a"] == ([("tf.keras.optimizers", "legacy", True)], False)
    assert guards["b"] == ([("metric", "reset_state", False), ("tf.keras.optimizers", "legacy", False)], True)
    assert guards["c"] == ([("metric", "reset_state", True), ("tf.keras.optimizers", "legacy", False)], True)
    assert guards["d"] == ([("tf.keras.optimizers", "legacy", False)], True)
    assert guards["e"] == ([("tf.keras", "legacy", False)], False)  # not an attribute Keras 3 is known to have
    assert guards["f"] == ([], False)


def test_expects_error():
    ctx = context("""
        import pytest
        import tensorflow as tf

        class T(tf.test.TestCase):
            def test(self):
                with self.assertRaisesRegex(ValueError, "deprecated"):
                    model.save("m", save_format="tf")
                model.save("n", save_format="tf")

        def test_raises():
            with pytest.raises(AttributeError):
                metric.reset_states()
            with open("f") as handle:
                metric.reset_states(handle)
    """)
    m = ctx.migration
    assert m.expects_error(*_call_at(ctx, 'model.save("m", save_format="tf")'))
    assert not m.expects_error(*_call_at(ctx, 'model.save("n", save_format="tf")'))
    assert m.expects_error(*_call_at(ctx, "metric.reset_states()"))
    assert not m.expects_error(*_call_at(ctx, "metric.reset_states(handle)"))
    assert m.guarded(*_call_at(ctx, "metric.reset_states()"))


def test_path_ending_follows_the_binding_that_reaches_the_read():
    ctx = context("""
        import os
        import pathlib

        def save(model, tmpdir):
            filepath = str(tmpdir / "test.h5")
            model.save(filepath, save_format="h5")
            filepath = str(tmpdir / "test")
            model.save(filepath, save_format="tf")
            model.save(os.fspath(pathlib.Path(tmpdir, "m.keras")))
            for name in ("a.keras", "b"):
                model.save(name)
    """)
    ends = []
    for call, scope in ctx.model.index.get("Call", ()):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "save":
            ends.append(ctx.path_ending(call.args[0].value, scope))
    assert ends == ["test.h5", "test", "m.keras", None]


def _probes(ctx):
    """{n: (call, scope)} for every call ``probe(n)``."""
    found = {}
    for call, scope in ctx.model.index.get("Call", ()):
        if isinstance(call.func, cst.Name) and call.func.value == "probe":
            found[int(call.args[0].value.value)] = (call, scope)
    return found


def test_version_guarded_branches_evaluate_the_comparison_as_python_would():
    ctx = context("""
        from distutils.version import LooseVersion

        import tensorflow as tf
        from packaging import version

        tf_version = tuple(int(part) for part in tf.__version__.split(".")[:3])
        a = probe(1) if tf_version >= (2, 4, 0) else probe(2)
        if LooseVersion(tf.__version__) < "2.4":
            probe(3)
        else:
            probe(4)
        if version.parse(tf.__version__) < version.parse("2.4"):
            probe(5)
        if float(tf.__version__[:3]) >= 2.4:
            probe(6)
        else:
            probe(7)
        if tf.__version__.startswith("1."):
            probe(8)
        if int(tf.__version__.split(".")[1]) < 4:
            probe(9)
        if tf_version < (2, 17):
            probe(10)
        if use_amp and tf_version >= (2, 4):
            probe(11)
        if use_amp:
            probe(12)
        if version.parse(tf.__version__).release[:2] >= (2, 4):
            def helper():
                return probe(13)
        else:
            def helper():
                return probe(14)
        NEW_TF = tf_version >= (2, 4)
        if not NEW_TF:
            probe(15)
    """)
    m = ctx.migration
    guarded = {n: m.version_guarded(call, scope) for n, (call, scope) in _probes(ctx).items()}
    assert guarded == {
        1: False, 2: True,  # the fallback of a tuple comparison
        3: True, 4: False,  # LooseVersion compares "2.21.0" with "2.4" as versions
        5: True,
        6: True, 7: False,  # float("2.21.0"[:3]) is 2.2: the else runs under TF 2.21
        8: True, 9: True,
        10: False,  # TF 2.16 takes it: code that runs under Keras 3
        11: False, 12: False,  # another condition decides: not a version fallback
        13: False, 14: True,  # a def in the fallback branch
        15: True,  # a flag bound to a version comparison
    }


def test_version_names_the_file_does_not_bind_are_read_every_way():
    ctx = context("""
        import tensorflow as tf
        from config import TF_VERSION

        def build(self):
            if tf_version < (2, 4):
                probe(1)
            if TF_VERSION >= "2.4":
                probe(2)
            else:
                probe(3)
            if self.keras_version < (3, 0):
                probe(4)
            if tf_version >= MIN_TF_VERSION:
                probe(5)
            else:
                probe(6)
            if tf_verbose > 1:
                probe(7)
    """)
    m = ctx.migration
    guarded = {n: m.version_guarded(call, scope) for n, (call, scope) in _probes(ctx).items()}
    # A tuple reading is the only one that compares with a tuple: decided. A string
    # compared with "2.4" is False as text ("2.21.0" < "2.4") and True as a version:
    # either branch may be the fallback, as with a bound that cannot be read.
    assert guarded == {1: True, 2: True, 3: True, 4: True, 5: True, 6: True, 7: False}


def test_version_guards_count_for_removed_api_findings_only_where_they_apply():
    ctx = context("""
        import os
        import tensorflow as tf

        if tf.keras.__version__ < "3":
            probe(1)
    """)
    assert ctx.migration.version_guarded(*_probes(ctx)[1])
    assert ctx.migration.guarded(*_probes(ctx)[1])
    legacy = context("""
        import os
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        import tensorflow as tf

        if tf.keras.__version__ < "3":
            probe(1)
        if tf_keras.__version__ < "2.4":
            probe(2)
    """)
    # tf.keras may be Keras 2 here: its version cannot be told, either branch may be the fallback.
    assert legacy.migration.version_guarded(*_probes(legacy)[1])
    assert not legacy.migration.version_guarded(*_probes(legacy)[2])  # not imported: not a version


def test_except_fallback_handlers_of_the_errors_a_removed_api_raises():
    ctx = context("""
        import tensorflow as tf

        try:
            a = tf.keras.mixed_precision.global_policy()
        except AttributeError:
            probe(1)
        try:
            probe(2)
        except (ImportError, KeyError):
            probe(3)
        try:
            train()
        except Exception:
            probe(4)
        except:
            probe(5)
        try:
            from tensorflow.keras.mixed_precision import experimental
        except ModuleNotFoundError:
            def policy():
                return probe(6)
    """)
    m = ctx.migration
    assert {n: m.except_fallback(*where) for n, where in _probes(ctx).items()} == \
        {1: True, 2: False, 3: True, 4: False, 5: False, 6: True}
    assert m.guarded(*_probes(ctx)[1])


def test_objects_keras_hands_out_through_attributes():
    ctx = context("""
        import tensorflow as tf

        class Logger(tf.keras.callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                return self.model.optimizer

        class Own(tf.keras.callbacks.Callback):
            def set(self, model):
                self.model = model

            def read(self):
                return self.model

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = model.optimizer
    """)
    migration = ctx.migration
    logger = next(s for s in ctx.model.scopes if s.name == "on_epoch_end")
    read = next(s for s in ctx.model.scopes if s.name == "read")
    assert migration.keras_attribute(cst.parse_expression("self.model"), logger) == ("keras.Model", "keras3")
    assert migration.object_class(cst.parse_expression("self.model.optimizer"), logger) == "keras.optimizers.Optimizer"
    assert migration.keras_attribute(cst.parse_expression("self.model"), read) is None  # it binds model itself
    assert migration.object_class(cst.parse_expression("model.optimizer"), ctx.model.root) == \
        "keras.optimizers.Optimizer"
    assert migration.keras_attribute(cst.parse_expression("model.layers"), ctx.model.root) is None


def test_layers_a_keras_model_hands_out():
    # model.get_layer(...), model.layers[i] and the loop variable over model.layers (or a slice of it)
    # are Keras layers of the model's Keras; not a list slice, a tf_keras model's, nor a class of the file's own.
    ctx = context("""
        import tensorflow as tf
        import tf_keras

        inp = tf.keras.Input((4,))
        model = tf.keras.Model(inp, tf.keras.layers.Dense(2, name="d")(inp))
        old = tf_keras.Sequential([tf_keras.layers.Dense(1)])

        class Stack:
            def __init__(self):
                self.layers = [1, 2]

        stack = Stack()
        for layer in model.layers:
            pass
        for rest in model.layers[1:]:
            pass
        for legacy in old.layers:
            pass
        for item in stack.layers:
            pass
    """)
    migration = ctx.migration
    root = ctx.model.root
    layer = ("keras.layers.Layer", KERAS3)
    for text in ('model.get_layer("d")', "model.layers[1]", "model.layers[-1]", "layer", "rest"):
        assert migration.keras_attribute(cst.parse_expression(text), root) == layer, text
        assert migration.object_class(cst.parse_expression(text), root) == "keras.layers.Layer", text
    assert migration.keras_attribute(cst.parse_expression("model.layers[1:]"), root) is None
    assert migration.keras_attribute(cst.parse_expression("old.layers[0]"), root) == ("keras.layers.Layer", TF_KERAS)
    assert migration.object_flavour(cst.parse_expression("legacy"), root) == TF_KERAS
    for text in ("item", "stack.layers[0]", "stack.get_layer(0)", "model"):
        assert migration.keras_attribute(cst.parse_expression(text), root) is None, text


def test_member_class_tells_a_keras_layer_by_its_node_api():
    # An object of unknown origin asked for Keras 2's layer-node API is a Keras layer; not where the
    # object's maker is known, where tf.keras is Keras 2, or for a member other libraries have too.
    from tflint_gpu.semantic.model import walk

    def member_class(source, name, member):
        ctx = context(source)
        for node in walk(ctx.model.module):
            if isinstance(node, cst.Attribute) and node.attr.value == member and isinstance(node.value, cst.Name) \
                    and node.value.value == name:
                scope = next(s for s in list(reversed(ctx.model.scopes)) + [ctx.model.root]
                             if any(n is node for n in walk(s.node)))
                return ctx.migration.member_class(node.value, scope, member)
        raise AssertionError("no such attribute")

    loop = "import tensorflow as tf\ndef f(model):\n    for l in model.layers:\n        l.{m}(0)\n"
    assert member_class(loop.format(m="get_input_shape_at"), "l", "get_input_shape_at") == "keras.layers.Layer"
    assert member_class(loop.format(m="get_config"), "l", "get_config") is None
    legacy = 'import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\n' + loop.format(m="get_output_at")
    assert member_class(legacy, "l", "get_output_at") is None
    made = "import numpy as np\nimport tensorflow as tf\nl = np.zeros(3)\nl.get_input_at(0)\n"
    assert member_class(made, "l", "get_input_at") is None


def test_unknown_keras3_model_is_told_by_use_only_in_keras3_code():
    # A receiver the engine cannot follow is a Keras 3 model for a use only Keras models have, in Keras 3
    # code; not when something else made it, when the file's class defines the method, or in keras.src.
    def told(source, name, method="", distinctive=False, judge_maker=True):
        ctx = context(source)
        return ctx.unknown_keras3_model(cst.Name(name), method, distinctive, judge_maker)

    keras3 = "import tensorflow as tf\nm = tf.keras.Sequential()\n"
    assert told(keras3 + "net = make()\n", "net", "fit", True)
    assert not told(keras3 + "import PIL.Image\nnet = PIL.Image.open('x')\n", "net", "save", False)
    assert not told(keras3 + "class Store:\n    def fit(self):\n        pass\n", "net", "fit", True)
    tensorflow_only = "import tensorflow as tf\nnet = make()\n"
    assert told(tensorflow_only, "net", "save_weights", True)  # the newest release: Keras 3
    assert not told(tensorflow_only, "net", "save", False)  # `save` is everyone's name
    assert not told("import tf_keras\nm = tf_keras.Sequential()\nnet = make()\n", "net", "fit", True)
    # an imported factory's result (`model = Unet()` from the project's nets module): judged by its maker
    # unless the use is a Keras model's whatever made it
    factory = keras3 + "from nets.unet import Unet\nnet = Unet()\n"
    assert not told(factory, "net", "fit", True) and told(factory, "net", "fit", True, judge_maker=False)


def test_an_assignment_annotated_with_a_keras_model_class_is_one_of_that_keras():
    # issue 35 (DeepReg predict.py:287: model: tf.keras.Model = REGISTRY.build_model(...), then
    # model.load_weights(ckpt_path))
    ctx = context("""
        import tensorflow as tf
        import registry

        model: tf.keras.Model = registry.build_model()
        other: dict = registry.build_model()
        plain = registry.build_model()
    """)
    m = ctx.migration
    root = ctx.model.root
    assert ctx.value_kind(cst.Name("model"), root) == "keras"
    assert m.object_flavour(cst.Name("model"), root) == KERAS3
    assert ctx.value_kind(cst.Name("other"), root) != "keras"
    assert ctx.value_kind(cst.Name("plain"), root) != "keras"
