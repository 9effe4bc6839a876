"""Test code: is this module a test suite?

A test module runs TensorFlow on purpose in ways a program would not
(eagerly, on tiny seeded NumPy data, in short loops over cases); its speed is
not the product. ``is_test_module(model, resolver)`` says the module is one:
it defines a test function (``test*`` at module level, or a method of a
class) and it uses a test framework: it imports ``unittest``, ``pytest``,
``absl.testing``, ``numpy.testing`` or a TensorFlow/Keras testing module, or
a class of it derives from a ``*TestCase`` (``tf.test.TestCase``).

A ``test_step`` method alone (Keras' ``Model.test_step``) is no test: library
code imports no test framework.

``in_test_function(scope)``: is the scope a test function, ``setUp`` or
``tearDown``, or inside one, whatever the module?

``warning_expected(node, scope)``: is ``node`` in the body of a ``with`` that
expects a warning (``self.assertWarns(...)``, ``self.assertWarnsRegex(...)``,
``pytest.warns(...)``, ``pytest.deprecated_call()``), in its scope's code?
"""
from __future__ import annotations

import re

import libcst as cst

from tflint_gpu.semantic.model import ModuleModel, ScopeInfo
from tflint_gpu.semantic.names import Resolver

_TEST_NAME = re.compile(r"test")
_TEST_FUNCTION = re.compile(r"test|setUp|tearDown")
_FRAMEWORKS = re.compile(
    r"(unittest|pytest|absl\.testing|numpy\.testing|tensorflow\.test|tensorflow\.python\.platform\.test"
    r"|tensorflow\.python\.framework\.test_util|(keras|tf_keras)(\.src)?\.testing(_infra)?)(\.|$)"
)


def is_test_module(model: ModuleModel, resolver: Resolver) -> bool:
    """Does the module define test functions and use a test framework?"""
    test_function = False
    framework = any(_FRAMEWORKS.match(target) for target in model.root.imports.values())
    for scope in model.scopes:
        if scope.is_function and scope.parent is not None and scope.parent.kind in ("module", "class") \
                and _TEST_NAME.match(scope.name):
            test_function = True
        elif scope.kind == "class" and isinstance(scope.node, cst.ClassDef) and not framework:
            for base in scope.node.bases:
                qualname = resolver.qualname(base.value, scope.parent or model.root) or ""
                if qualname.endswith("TestCase") or _FRAMEWORKS.match(qualname):
                    framework = True
        if test_function and framework:
            return True
    return False


def in_test_function(scope: ScopeInfo) -> bool:
    """Is ``scope`` a test function or inside one (``test_*``, ``setUp``, ``tearDown``)?"""
    return any(s.is_function and _TEST_FUNCTION.match(s.name) for s in scope.chain())


_WARNS = frozenset({"assertWarns", "assertWarnsRegex", "warns", "deprecated_call"})


def warning_expected(node: cst.CSTNode, scope: ScopeInfo) -> bool:
    """Is ``node`` in the body of a ``with`` one of whose items calls ``assertWarns``,
    ``assertWarnsRegex``, ``warns`` or ``deprecated_call`` (a test expecting the warning)?"""
    child = node
    for parent in scope.ancestors(node):
        if isinstance(parent, cst.With) and child is parent.body:
            for item in parent.items:
                call = item.item
                if isinstance(call, cst.Call):
                    func = call.func
                    name = func.attr.value if isinstance(func, cst.Attribute) else \
                        func.value if isinstance(func, cst.Name) else None
                    if name in _WARNS:
                        return True
        child = parent
    return False
