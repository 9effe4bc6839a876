"""semantic/attribute_typos.py (wrong-case names of settable Keras attributes), the derived table
semantic/keras_attributes.py, and facts.may_be_keras_object."""
from __future__ import annotations

import importlib.util
import pathlib
import textwrap

import libcst as cst
import pytest

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic import keras_attributes
from tflint_gpu.semantic.attribute_typos import keras_attribute_meant, module_uses_attribute

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "derive_keras_attributes.py"


def test_wrong_case_names_of_settable_attributes():
    assert keras_attribute_meant("Trainable") == "trainable"
    assert keras_attribute_meant("TRAINABLE") == "trainable"
    assert keras_attribute_meant("Stop_Training") == "stop_training"
    assert keras_attribute_meant("Run_Eagerly") == "run_eagerly"
    # Keras's own names, other names, private names: nothing meant.
    assert keras_attribute_meant("trainable") is None
    assert keras_attribute_meant("Trainablee") is None
    assert keras_attribute_meant("_Trainable") is None
    assert keras_attribute_meant("Summary") is None  # a method, not a settable attribute


def test_a_module_that_uses_the_name_as_its_own():
    assert not module_uses_attribute("model.Trainable = False\nmodel.Trainable=True\n", "Trainable")
    assert module_uses_attribute("model.Trainable = False\nif model.Trainable: pass\n", "Trainable")
    assert module_uses_attribute("m.Trainable = 1\nprint(m.Trainable == 1)\n", "Trainable")
    assert module_uses_attribute("m.Trainable += 1\n", "Trainable")
    assert module_uses_attribute("setattr(m, 'Trainable', 1)\n", "Trainable")
    assert module_uses_attribute("class A:\n    Trainable: bool = True\n", "Trainable")
    assert module_uses_attribute("class A:\n    def Trainable(self):\n        pass\n", "Trainable")
    assert not module_uses_attribute("m.Trainable = 1\nm.Trainable_all = 2\n", "Trainable")


@pytest.mark.parametrize("module, flavour", [("keras", "KERAS3"), ("tf_keras", "TF_KERAS")])
def test_the_stored_table_is_what_the_script_derives(module, flavour):
    keras = pytest.importorskip(module)
    spec = importlib.util.spec_from_file_location("derive_keras_attributes", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    settable, known = script.derive(keras)
    assert frozenset(settable) == getattr(keras_attributes, f"{flavour}_SETTABLE")
    assert frozenset(known) == getattr(keras_attributes, f"{flavour}_KNOWN")
    assert {"trainable", "stop_training", "run_eagerly"} <= set(settable)


def _kinds(source: str):
    ctx = analyse(cst.parse_module(textwrap.dedent(source)), [])
    found = []
    for node, scope in ctx.model.index.get("Assign", ()):
        target = node.targets[0].target
        if isinstance(target, cst.Attribute):
            ctx.scope = scope
            found.append(ctx.may_be_keras_object(target.value))
    return found


def test_may_be_keras_object():
    assert _kinds("""
        import tensorflow as tf

        base = tf.keras.applications.VGG16(weights=None)
        base.a = 1
        for layer in base.layers:
            layer.a = 1
        base.layers[0].a = 1

        def maybe_path(model):
            if isinstance(model, str):
                model = tf.keras.models.load_model(model)
            model.a = 1

        def unknown(model):
            model.a = 1

        class Config:
            pass

        config = Config()
        config.a = 1

        def either(flag):
            thing = tf.keras.layers.Dense(1) if flag else Config()
            thing.a = 1
        """) == [True, True, True, True, False, False, False]
