"""semantic/testcode.py: is a module a test suite?"""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.semantic.testcode import is_test_module


def test_module(source: str) -> bool:
    model = build_model(cst.parse_module(textwrap.dedent(source)), ["Call"])
    return is_test_module(model, Resolver())


# Not collected by pytest as a test (it takes an argument): a helper.
test_module.__test__ = False


@pytest.mark.parametrize("source", [
    """
    import unittest
    import tensorflow as tf
    tf.config.run_functions_eagerly(True)
    class InformerTest(unittest.TestCase):
        def test_model(self):
            pass
    """,
    """
    import pytest
    def helper():
        pass
    def test_dense():
        helper()
    """,
    """
    import tensorflow as tf
    class LayerTest(tf.test.TestCase):
        def testCall(self):
            pass
    """,
    """
    from absl.testing import parameterized
    class T(parameterized.TestCase):
        def test_x(self):
            pass
    """,
])
def test_test_suites(source):
    assert test_module(source)


@pytest.mark.parametrize("source", [
    """
    import tensorflow as tf
    class Model(tf.keras.Model):
        def test_step(self, data):
            return {}
    def test_fn():
        pass
    """,
    """
    import unittest
    def train():
        pass
    """,
    """
    import pytest
    def outer():
        def test_inner():
            pass
    """,
])
def test_not_test_suites(source):
    assert not test_module(source)


def test_in_test_function_is_true_inside_test_methods_and_their_nested_functions():
    import textwrap

    import libcst as cst

    from tflint_gpu.semantic.model import build_model
    from tflint_gpu.semantic.testcode import in_test_function

    model = build_model(cst.parse_module(textwrap.dedent("""
        class T:
            def setUp(self):
                pass

            def test_step(self):
                def inner():
                    pass

            def train(self):
                pass
    """)), [])
    verdict = {s.name: in_test_function(s) for s in model.scopes if s.is_function}
    assert verdict == {"setUp": True, "test_step": True, "inner": True, "train": False}
