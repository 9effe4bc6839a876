"""Engine units: name resolution, graph contexts, tensor inference, the model walk, the fixer."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Set

import libcst as cst
import pytest

import tflint_gpu
from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import ParseError, analyse, lint_source
from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.semantic.tensors import TensorInference
from tflint_gpu.rules.base import REGISTRY, Fix, Rule, Safety, all_rules


def analysed(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    model = build_model(module, ["Call", "Name", "Return"])
    resolver = Resolver()
    graphs = GraphAnalysis(model, resolver)
    graphs.run()
    return model, resolver, graphs


def calls_by_text(model):
    return {model.module.code_for_node(node): (node, scope) for node, scope in model.index["Call"]}


@pytest.mark.parametrize(
    "imports,expr,expected",
    [
        ("import tensorflow as tf", "tf.function", "tensorflow.function"),
        ("import tensorflow as tfl", "tfl.function", "tensorflow.function"),
        ("from tensorflow import function", "function", "tensorflow.function"),
        ("import tensorflow as tf", "tf.compat.v2.function", "tensorflow.function"),
        ("import tensorflow.compat.v2 as tf", "tf.function", "tensorflow.function"),
        ("import tensorflow", "tensorflow.function", "tensorflow.function"),
        ("import numpy", "numpy.zeros", "numpy.zeros"),
        ("from numpy import zeros as z", "z", "numpy.zeros"),
        ("import numpy as np", "np.random.randn", "numpy.random.randn"),
        ("from tensorflow import keras", "keras.layers.Layer", "keras.layers.Layer"),
        ("import tensorflow as tf", "tf.keras.Model", "keras.Model"),
        ("from tensorflow.keras import layers", "layers.Dense", "keras.layers.Dense"),
        ("import os.path", "os.path.join", "os.path.join"),
        ("import tensorflow as tf", "tf.losses.BinaryCrossentropy", "keras.losses.BinaryCrossentropy"),
        ("import tensorflow as tf", "tf.optimizers.Adam", "keras.optimizers.Adam"),
        ("import tensorflow as tf", "tf.compat.v1.losses.log_loss", "tensorflow.losses.log_loss"),
        ("import tensorflow as tf", "tensorflow.function", None),
        ("from . import tf", "tf.function", None),
    ],
)
def test_resolver_spellings(imports, expr, expected):
    model, resolver, _ = analysed(f"{imports}\nvalue = {expr}\n")
    value = model.root.assigned["value"][0]
    assert resolver.qualname(value, model.root) == expected


def test_local_binding_shadows_an_import():
    model, resolver, _ = analysed(
        """
        import numpy as np

        def f(np):
            return np.zeros(3)
        """
    )
    call, scope = calls_by_text(model)["np.zeros(3)"]
    assert resolver.qualname(call.func, scope) is None


def test_import_inside_a_function():
    model, resolver, _ = analysed(
        """
        def f():
            import tensorflow as tf
            return tf.zeros(3)
        """
    )
    call, scope = calls_by_text(model)["tf.zeros(3)"]
    assert resolver.qualname(call.func, scope) == "tensorflow.zeros"


GRAPHS = """
import functools
import tensorflow as tf
import keras

@tf.function
def decorated(x):
    return helper(x)

@tf.function(autograph=False, jit_compile=True)
def no_autograph(x):
    return x

def helper(x):
    return deeper(x)

def deeper(x):
    return x

def wrapped(x):
    return x

g = tf.function(wrapped, reduce_retracing=True)

def mapped(x):
    return x

def filtered(x):
    return x

ds = tf.data.Dataset.range(4)
ds = ds.map(mapped).filter(functools.partial(filtered))

def eager(x):
    return x

def host(x):
    return x

@tf.function
def uses_py_function(x):
    return tf.py_function(host, [x], tf.float32)

class Base(keras.Model):
    pass

class Net(Base):
    def call(self, inputs):
        return self.scale(inputs)

    def scale(self, inputs):
        return inputs

    def train_step(self, data):
        return data

    def other(self, x):
        return x

class NotKeras:
    def call(self, x):
        return x

plain = [1, 2].map(eager) if False else None
"""


def test_graph_contexts():
    model, _, _ = analysed(GRAPHS)
    graphs = {s.name if s.enclosing_class is None else f"{s.enclosing_class.name}.{s.name}": s.graph
              for s in model.scopes if s.kind == "function"}
    assert graphs["decorated"].kind == "tf.function" and graphs["decorated"].autograph
    assert graphs["no_autograph"].autograph is False
    assert graphs["no_autograph"].jit_compile is not None
    assert graphs["helper"].kind == "called" and graphs["deeper"].kind == "called"
    assert graphs["wrapped"].kind == "tf.function" and graphs["wrapped"].jit_compile is None
    assert graphs["mapped"].kind == "dataset" and graphs["filtered"].kind == "dataset"
    assert graphs["Net.call"].kind == "keras" and graphs["Net.call"].autograph is False
    assert graphs["Net.scale"].kind == "called" and graphs["Net.scale"].autograph is False
    assert graphs["Net.train_step"].kind == "keras"
    assert graphs["Net.other"] is None
    assert graphs["NotKeras.call"] is None
    assert graphs["eager"] is None
    assert graphs["host"] is None  # tf.py_function runs it eagerly


@pytest.mark.parametrize(
    "expr,expected",
    [
        ("x", True),
        ("y", True),
        ("x.shape[0]", False),
        ("x.dtype", False),
        ("tf.shape(x)[0]", True),
        ("len(x)", False),
        ("training", False),
        ("mask", False),
        ("n", False),
        ("x is None", False),
        ("x > 0", True),
        ("not x", False),
        ("x.numpy()", False),
        ("z", False),
        ("w", False),
        ("CONSTANT", False),
        ("tf.random.normal([2])", True),
        ("tf.data.Dataset.range(3)", False),
        ("keras.ops.sum(x)", True),
    ],
)
def test_tensor_inference(expr, expected):
    source = f"""
import tensorflow as tf
import keras
CONSTANT = tf.constant(1.0)

@tf.function
def f(x, training=False, mask=None, n: int = 3):
    y = tf.reduce_sum(x) * 2
    z = 3
    w = x if training else 0
    probe = {expr}
"""
    model, resolver, graphs = analysed(source)
    scope = next(s for s in model.scopes if s.name == "f")
    value = scope.assigned["probe"][0]
    assert TensorInference(resolver, graphs).is_tensor(value, scope) is expected


def test_helper_parameters_are_tensors_only_if_every_call_passes_one():
    model, resolver, graphs = analysed(
        """
        import tensorflow as tf

        def helper(t, k):
            a = t
            b = k

        @tf.function
        def f(x):
            helper(x, 3)
            helper(tf.ones(2), 4)
        """
    )
    inference = TensorInference(resolver, graphs)
    scope = next(s for s in model.scopes if s.name == "helper")
    assert inference.is_tensor(scope.assigned["a"][0], scope)
    assert not inference.is_tensor(scope.assigned["b"][0], scope)


def test_walk_records_scopes_in_source_order():
    module = cst.parse_module("def a():\n    lambda y: y\n    class C:\n        def m(self):\n            f(1)\n")
    model = build_model(module, ["Call"])
    assert [(s.kind, s.name) for s in model.scopes] == [
        ("module", "<module>"), ("function", "a"), ("lambda", "<lambda>"), ("class", "C"), ("function", "m")
    ]
    (call, scope), = model.index["Call"]
    assert scope.name == "m" and scope.enclosing_class.name == "C"


def test_parse_error_is_one_line_naming_the_file():
    with pytest.raises(ParseError) as info:
        lint_source("import tensorflow as tf\nimport numpy as np\ntf.constant(np.zeros(3)\n", "bad.py",
                    list(all_rules()))
    assert str(info.value).startswith("bad.py:") and "\n" not in str(info.value)


def test_files_without_rule_text_are_not_parsed(monkeypatch):
    import tflint_gpu.engine.lint as lint

    monkeypatch.setattr(lint, "parse", lambda *a: pytest.fail("parsed"))
    assert lint_source("import os\nx = 1\n", "a.py", list(all_rules())).findings == []
    assert lint_source("import tensorflow as tf\nx = tf.zeros(3)\n", "a.py", [REGISTRY["TFG201"]]).findings == []


class _BreakingRule(Rule):
    """A rule whose fix would produce invalid code (test only)."""

    name = "breaking"
    message = "m"

    def visit_Call(self, node, ctx):
        if ctx.call_name(node) == "tensorflow.zeros":
            ctx.report(node, fix=Fix("break", Safety.SAFE, {node: cst.Name("if")}))


def test_fixer_refuses_output_that_does_not_parse():
    _BreakingRule.code = "TFG000"  # not registered: set after class creation
    outcome = fix_source("import tensorflow as tf\nx = tf.zeros(3)\n", "a.py", [_BreakingRule])
    assert outcome.refused and outcome.source == "import tensorflow as tf\nx = tf.zeros(3)\n"


def test_overlapping_fixes_converge_over_rounds():
    source = (
        "import numpy as np\nimport tensorflow as tf\n\n@tf.function\ndef f(x):\n    return np.mean(np.asarray(x))\n"
    )
    outcome = fix_source(source, "a.py", [REGISTRY["TFG101"]], unsafe=True)
    assert outcome.source.endswith("    return tf.reduce_mean(x)\n")
    assert outcome.applied == 2 and outcome.findings == []


def test_analyse_visits_in_source_order():
    module = cst.parse_module("import tensorflow as tf\na = tf.zeros(1)\nb = tf.ones(2)\n")
    seen = []

    class Recorder(Rule):
        name = "recorder"
        message = "m"

        def visit_Call(self, node, ctx):
            seen.append(ctx.call_name(node))

    Recorder.code = "TFG000"
    analyse(module, [Recorder])
    assert seen == ["tensorflow.zeros", "tensorflow.ones"]



def test_the_index_and_the_bindings_are_in_source_order_across_a_node_s_fields():
    # A node's fields in order too (a stack walk gives them last first unless it pushes them reversed):
    # the callee before its arguments' neighbours, a loop's iterable before its body, `if` before `else`.
    module = cst.parse_module(
        "x = a(1) + b(2)\n"
        "for i in c(3):\n    d(4)\nelse:\n    e(5)\n"
        "if f(6):\n    k = 1\nelif g(7):\n    k = 2\nelse:\n    k = 3\n"
        "y = [h(8) for j in m(9) if n(10)]\n"
    )
    model = build_model(module, ["Call"])
    assert [call.args[0].value.value for call, _ in model.index["Call"]] == [str(n) for n in range(1, 11)]
    assert [v.value for v in model.root.assigned["k"]] == ["1", "2", "3"]
    assert [cst.Module([]).code_for_node(n) for n in model.nodes_in(model.root, "Call")][:2] == ["a(1)", "b(2)"]



def test_a_lint_leaves_no_syntax_tree_for_the_cyclic_collector():
    # The facts break their cycles once the result is made: the tree is freed by reference counting
    # as soon as the result is dropped (the collector is off here), not left for the collector to find.
    import gc

    source = textwrap.dedent("""
        import numpy as np
        import tensorflow as tf

        class Net(tf.keras.Model):
            def call(self, x):
                if tf.reduce_sum(x) > 0:
                    return x.numpy()
                return [v for v in x]

        @tf.function
        def step(x):
            return np.mean(x)

        for i in range(3):
            y = tf.Variable(np.zeros((3, 3)))
    """)
    rules = list(all_rules())
    enabled = gc.isenabled()
    gc.disable()
    try:
        result = lint_source(source, "a.py", rules)
        assert result.findings
        # Ids, not references (LibCST nodes take no weak reference): is either still among the living?
        tree, statement = id(result.module), id(result.module.body[-1])
        del result
        alive = {id(o) for o in gc.get_objects() if o.__class__ in (cst.Module, cst.For)}
        assert tree not in alive and statement not in alive
    finally:
        if enabled:
            gc.enable()

def test_keras_call_parameters_after_the_data_are_python_values():
    model, resolver, graphs = analysed(
        """
        import keras

        class Block(keras.layers.Layer):
            def call(self, inputs, training, scale):
                a = inputs
                b = training
                c = scale
        """
    )
    inference = TensorInference(resolver, graphs)
    scope = next(s for s in model.scopes if s.name == "call")
    assert [inference.is_tensor(scope.assigned[n][0], scope) for n in "abc"] == [True, False, False]


def test_fixer_says_whether_it_reached_a_fixed_point():
    """A fix that always changes the code never converges: the fixer stops after
    MAX_ROUNDS and says so; an ordinary fix converges."""

    class Grows(Rule):
        name = "grows"
        message = "grows"

        def visit_Integer(self, node, ctx):
            ctx.report(node, fix=Fix("grow", Safety.SAFE, {node: cst.Integer(node.value + "1")}))

    Grows.code = "TFG999"  # set after the class statement: not registered as a real rule
    source = "import tensorflow as tf\nx = 1\n"
    endless = fix_source(source, "a.py", [Grows])
    assert not endless.converged and endless.applied > 1
    ordinary = fix_source("import numpy as np\nimport tensorflow as tf\nx = tf.Variable(np.zeros(3))\n",
                          "a.py", [REGISTRY["TFG201"]])
    assert ordinary.converged and ordinary.applied == 1
    assert "TFG999" not in REGISTRY


def _graphs_of(source):
    model, _, _ = analysed(textwrap.dedent(source))
    return {s.name if s.enclosing_class is None else f"{s.enclosing_class.name}.{s.name}": s.graph
            for s in model.scopes if s.kind == "function"}


def test_a_function_rebound_to_its_tf_function_is_graph_code():
    graphs = _graphs_of("""
        import tensorflow as tf

        def step(x):
            return x * 2

        step = tf.function(step)
    """)
    assert graphs["step"] is not None and graphs["step"].kind == "tf.function"


DECORATED_G = "\n@function\ndef g(x):\n    return x\n"


@pytest.mark.parametrize("source,graph", [
    ("from tensorflow import function\n\ndef function(f):\n    return f\n" + DECORATED_G, False),
    ("from tensorflow import function\n\nclass function:\n    pass\n" + DECORATED_G, False),
    ("def function(f):\n    return f\n\nfrom tensorflow import function\n" + DECORATED_G, True),
], ids=["def-after-import", "class-after-import", "import-after-def"])
def test_the_last_definition_of_a_name_wins_over_an_import(source, graph):
    assert (_graphs_of(source)["g"] is not None) is graph


def test_functions_traced_by_group_by_window_and_tf_data_experimental():
    graphs = _graphs_of("""
        import tensorflow as tf

        def key(x):
            return x % 2

        def reduce(k, window):
            return window.batch(2)

        def load(path):
            return tf.data.TFRecordDataset(path)

        ds = tf.data.Dataset.range(8).group_by_window(key, reduce, window_size=2)
        files = tf.data.Dataset.list_files("*.tfrecord")
        records = files.apply(tf.data.experimental.parallel_interleave(load, cycle_length=2))
    """)
    assert all(graphs[name] is not None and graphs[name].kind == "dataset" for name in ("key", "reduce", "load"))


def test_autograph_is_decided_per_function():
    """A tf.function converts its own body even when a Keras 3 call (no AutoGraph)
    calls it; a plain helper of that call is not converted."""
    graphs = _graphs_of("""
        import keras
        import tensorflow as tf

        @tf.function
        def converted(x):
            return x

        def plain(x):
            return x

        class Block(keras.layers.Layer):
            def call(self, x):
                return converted(x) + plain(x)
    """)
    assert graphs["converted"].kind == "tf.function" and graphs["converted"].autograph is True
    assert graphs["plain"].kind == "called" and graphs["plain"].autograph is False
    assert graphs["Block.call"].autograph is False


def test_keras_flavour_is_decided_per_class():
    graphs = _graphs_of("""
        import keras
        import tf_keras
        from tensorflow.python import keras as legacy

        class New(keras.layers.Layer):
            def call(self, x):
                return x

        class Old(tf_keras.layers.Layer):
            def call(self, x):
                return x

            def train_step(self, data):
                return data

        class OldChild(Old):
            def call(self, x):
                return x

        class Legacy(legacy.layers.Layer):
            def call(self, x):
                return x
    """)
    assert (graphs["New.call"].keras, graphs["New.call"].autograph) == ("keras3", False)
    assert (graphs["Old.call"].keras, graphs["Old.call"].autograph) == ("tf_keras", True)
    assert (graphs["Old.train_step"].keras, graphs["Old.train_step"].autograph) == ("tf_keras", False)
    assert graphs["OldChild.call"].keras == "tf_keras" and graphs["Legacy.call"].keras == "tf_keras"


@pytest.mark.parametrize("imports,graph", [
    ("import keras\nimport jax\n", False),
    ("import keras\nfrom openvino import Core\n", False),
    ("import keras\nimport jax\nimport tensorflow as tf\n", True),
    ("import keras\n", True),
], ids=["jax-only", "openvino-only", "jax-and-tensorflow", "keras-only"])
def test_keras3_code_of_another_backend_is_not_tensorflow_graph_code(imports, graph):
    graphs = _graphs_of(imports + "\nclass L(keras.layers.Layer):\n    def call(self, x):\n        return x\n")
    assert (graphs["L.call"] is not None) is graph


def test_text_prefilter_changes_no_result_over_all_rule_cases():
    """The prefilter skips files that cannot hold a finding: over every rule case,
    findings with and without it are the same."""
    rules = list(all_rules())
    for rule in rules:
        for case in rule.cases:
            for selected in ([rule], rules):
                filtered = lint_source(case.code, "case.py", selected).findings
                unfiltered = lint_source(case.code, "case.py", selected, prefilter_text=False).findings
                assert [(f.code, f.row, f.col) for f in filtered] == [(f.code, f.row, f.col) for f in unfiltered]


@pytest.mark.parametrize("needs", [("function", "_step"), (("function",), "call"), ((),), [("keras",)]],
                         ids=["bare-strings", "one-bare-string", "empty-group", "a-list"])
def test_a_rule_whose_needs_are_not_groups_of_strings_is_refused(needs):
    """A bare tuple of strings would make each string a group of its characters, every one
    present in any file: a prefilter that admits everything (TFG402-404 had it)."""
    from tflint_gpu.rules.base import Rule

    with pytest.raises(TypeError, match="needs"):
        type("Loose", (Rule,), {"needs": needs})


def test_the_graph_rules_prefilter_on_graph_text():
    """A TensorFlow file with no graph-making text is not parsed for TFG402-404."""
    from tflint_gpu.engine.lint import prefilter

    retracing = [rule for rule in all_rules() if rule.code in ("TFG402", "TFG403", "TFG404")]
    assert prefilter("import tensorflow as tf\nx = tf.zeros(3)\n", retracing) == []
    assert prefilter("import tensorflow as tf\n@tf.function\ndef f(x):\n    return x\n", retracing) == retracing


# -- layering: data flows one way (ARCHITECTURE.md) --------------------------

PACKAGE = Path(tflint_gpu.__file__).parent


def _imported_modules(path: Path) -> Set[str]:
    """Every module ``path`` imports, anywhere in the file (functions and
    ``if TYPE_CHECKING:`` blocks included), relative imports made absolute;
    ``from a import b`` counts as ``a`` and ``a.b`` (b may be a submodule)."""
    package = list(path.relative_to(PACKAGE.parent).parts[:-1])  # the package holding the file
    names: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_engine_imports_no_rule_module():
    engine = sorted((PACKAGE / "engine").glob("*.py"))
    assert PACKAGE / "engine" / "lint.py" in engine
    offenders = {
        path.name: sorted(n for n in _imported_modules(path) if _within(n, "tflint_gpu.rules"))
        for path in engine
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_semantic_model_imports_neither_the_driver_nor_a_rule():
    semantic = sorted((PACKAGE / "semantic").glob("*.py"))
    assert PACKAGE / "semantic" / "model.py" in semantic
    offenders = {
        path.name: sorted(n for n in _imported_modules(path)
                          if _within(n, "tflint_gpu.rules") or _within(n, "tflint_gpu.engine"))
        for path in semantic
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_semantic_modules_import_one_another_without_a_circle():
    """Each fact module can be imported first, on its own, in a fresh interpreter."""
    import subprocess
    import sys

    names = sorted(path.stem for path in (PACKAGE / "semantic").glob("*.py") if path.stem != "__init__")
    for name in names:
        subprocess.run([sys.executable, "-c", f"import tflint_gpu.semantic.{name}"], check=True, timeout=120)
    graph = {name: {n.rsplit(".", 1)[-1] for n in _imported_modules(PACKAGE / "semantic" / f"{name}.py")
                    if _within(n, "tflint_gpu.semantic") and n.rsplit(".", 1)[-1] in names}
             for name in names}

    def reaches(start, goal, seen=()):
        return any(n == goal or (n not in seen and reaches(n, goal, seen + (n,))) for n in graph[start])

    assert sorted(name for name in names if reaches(name, name)) == []


def test_findings_import_nothing_from_the_project():
    imported = _imported_modules(PACKAGE / "findings.py")
    assert imported  # the walk sees its imports (dataclasses, typing, ...)
    assert sorted(n for n in imported if _within(n, "tflint_gpu") or n.startswith(".")) == []


def test_the_import_walk_sees_relative_and_nested_imports(monkeypatch):
    """The layering tests would pass vacuously if the walk missed a spelling."""
    module = PACKAGE / "engine" / "lint.py"
    text = (
        "from ..rules import base\n"
        "from .. import rules\n"
        "def f():\n    import tflint_gpu.rules.numpy_in_graph\n"
    )
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: text)
    found = _imported_modules(module)
    assert {"tflint_gpu.rules", "tflint_gpu.rules.base", "tflint_gpu.rules.numpy_in_graph"} <= found


def test_importing_the_runner_loads_no_rule_module():
    """The engine reaches the rules only through what its caller hands it."""
    import subprocess
    import sys

    code = ("import sys, tflint_gpu.engine.run, tflint_gpu.engine.lint, tflint_gpu.engine.fix\n"
            "print([m for m in sys.modules if m.startswith('tflint_gpu.rules')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_rules_ask_whether_code_runs_repeatedly():
    source = textwrap.dedent("""
        import numpy as np
        import tensorflow as tf

        once = tf.constant(np.zeros(3))
        for step in range(10):
            each = tf.constant(np.zeros(4))

        @tf.function
        def f(x):
            return tf.constant(np.ones(3)) + x
    """)
    ctx = analyse(cst.parse_module(source), [REGISTRY["TFG201"]])
    calls = {ctx.module.code_for_node(node): (node, scope) for node, scope in ctx.model.index["Call"]}

    def asked(text, python=True):
        return bool(ctx.runs_repeatedly(*calls[text], python=python))

    assert not asked("tf.constant(np.zeros(3))") and not asked("tf.constant(np.zeros(3))", python=False)
    assert asked("tf.constant(np.zeros(4))") and asked("tf.constant(np.zeros(4))", python=False)
    # Graph code: its Python runs at trace time only, its ops every call.
    assert not asked("tf.constant(np.ones(3))") and asked("tf.constant(np.ones(3))", python=False)


def test_a_nested_function_also_called_keeps_its_call_sites():
    graphs = _graphs_of("""
        import tensorflow as tf

        @tf.function
        def outer(x):
            def inner(y):
                return y * 2

            def sibling(z):
                return inner(z)
            return x
    """)
    assert graphs["inner"].kind == "called" and len(graphs["inner"].call_sites) == 1


def test_positions_match_libcst_position_providers():
    """Our one-pass ranges equal LibCST's PositionProvider and
    WhitespaceInclusivePositionProvider for every node of every rule case."""
    from libcst.metadata import MetadataWrapper, PositionProvider, WhitespaceInclusivePositionProvider

    from tflint_gpu.engine.positions import code_ranges

    sources = [case.code for rule in all_rules() for case in rule.cases]
    sources.append("# header\n\n@dec\nclass A(B):\n    '''doc'''\n    x: int = 1  # c\n\n    def f(self, *a, **k):\n"
                   "        return [i for i in a if i] or {**k}\n")
    for source in sources:
        module = cst.parse_module(source)
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        syntactic, inclusive, code, _ = code_ranges(module)
        assert code == module.code
        assert syntactic == dict(wrapper.resolve(PositionProvider))
        assert inclusive == dict(wrapper.resolve(WhitespaceInclusivePositionProvider))


ODD_LAYOUTS = [
    "class A:\n  def f(self):\n      x = 1; y = 2\n      # c\n      return x\n  # footer\n\n\n# top\n"
    "def g():\n\tif a:\n\t\tb()\n\telif c:\n\t\td()\n\telse:\n\t\te()\n",
    "@dec\nclass A(B):\n    @property\n    @other(\n        1)\n    def f(self): return 1\n    def g(self):\n"
    "        try:\n            x()\n        except E:\n            y()\n        finally:\n            z()\n",
    "def f():\n    with a as b, c:\n        for i in x:\n            while j:\n                k = (1 +\n"
    "                     2)\n                m = \'\'\'\nabc\n\'\'\'\n    return \\\n        3\n",
    "async def f():\n    async for x in y:\n        await z\n    async with a:\n        b\n",
    "def f():\n    if x: y()\n    z = [i\n  for i in a]\n    return z",
    "class A:\n\n    # lead\n\n    def f(self):\n        pass\n        # trailing in block\n    x = 1\n",
    "x = 1\nif True:\n    def g():\n            deeply = 1\n            return deeply\n",
]


def test_positions_of_the_statements_holding_a_node_equal_those_of_the_whole_module():
    """``statement_ranges`` (the innermost statements holding the nodes, each written alone)
    gives every node the ranges and indentation ``code_ranges`` of the whole module gives."""
    from tflint_gpu.engine.positions import code_ranges, statement_ranges
    from tflint_gpu.engine.reparse import statement_groups
    from tflint_gpu.semantic.model import children

    sources = [case.code for rule in all_rules() for case in rule.cases] + ODD_LAYOUTS
    compared = 0
    for source in sources:
        if "\r" in source or "\f" in source:
            continue
        module = cst.parse_module(source)
        lines = source.split("\n")
        top = statement_groups(ast.parse(source).body, lines)
        nodes, todo = [], list(module.body)
        while todo:
            node = todo.pop()
            nodes.append(node)
            todo.extend(children(node))
        whole = code_ranges(module, nodes, nodes)
        for node in nodes[::3] if len(nodes) > 60 else nodes:
            ranges = statement_ranges(module, lines, top, [node], [node], also=[0])
            assert ranges is not None, (source, node)
            assert ranges.syntactic[node] == whole.syntactic[node], (source, node)
            assert ranges.inclusive[node] == whole.inclusive[node], (source, node)
            assert ranges.indents[node] == whole.indents[node], (source, node)
            assert ranges.inclusive[module.body[0]] == whole.inclusive[module.body[0]]
            compared += 1
    assert compared > 1000



def test_a_scope_s_flow_order_is_its_own_code_in_source_order_with_nested_scopes_as_one_node():
    """The flow order (read inline, as the walk reads fields) against the plain definition: each
    scope's own nodes by ``children``, pre-order, a nested def, class or lambda one node."""
    from tflint_gpu.semantic.model import SCOPE_TYPES, children

    sources = [case.code for rule in all_rules() for case in rule.cases] + ODD_LAYOUTS
    checked = 0
    for source in sources:
        model = build_model(cst.parse_module(source), [])
        for scope in model.scopes:
            root = scope.node if isinstance(scope.node, cst.Module) else scope.node.body
            expected, todo = [], [(root, None)]
            events = []
            while todo:
                node, parent = todo.pop()
                if node is None:
                    events.append(("leave", parent))
                    continue
                expected.append((node, parent))
                events.append(("enter", node))
                todo.append((None, node))
                if node is root or not isinstance(node, SCOPE_TYPES):
                    todo.extend((child, node) for child in reversed(children(node)))
            order = scope.flow_order()
            assert [n for n in order.nodes] == [n for n, _ in expected]
            assert [order.nodes[p] if p >= 0 else None for p in order.up] == [p for _, p in expected]
            entered = [id(n) for kind, n in events if kind == "enter"]
            left = [id(n) for kind, n in events if kind == "leave"]
            assert sorted(entered, key=lambda i: order.pre[i]) == entered
            assert sorted(left, key=lambda i: order.post[i]) == left
            assert all(order.pre[id(n)] < order.post[id(n)] for n, _ in expected)
            checked += 1
    assert checked > 500


def test_positions_write_only_the_innermost_statement_holding_a_node():
    from tflint_gpu.engine.positions import statement_ranges
    from tflint_gpu.engine.reparse import statement_groups

    source = "import tensorflow as tf\n\n\nclass A:\n    def f(self):\n        return 1\n\n" \
             "    def g(self, x):\n        if x:\n            y = tf.constant(x)\n        return y\n"
    module = cst.parse_module(source)
    lines = source.split("\n")
    top = statement_groups(ast.parse(source).body, lines)
    klass = module.body[1]
    f, g = klass.body.body
    assign = g.body.body[0].body.body[0]
    call = assign.body[0].value
    ranges = statement_ranges(module, lines, top, [call], [call])
    assert (ranges.syntactic[call].start.line, ranges.syntactic[call].start.column) == (10, 16)
    assert assign in ranges.syntactic and klass not in ranges.syntactic and g not in ranges.syntactic
    assert f not in ranges.inclusive
    assert ranges.indents[call] == ("    ", "    ", "    ")
    # A node in the header of a block (the test of the `if`) has the whole `if` written.
    test = g.body.body[0].test
    ranges = statement_ranges(module, lines, top, [test], [test])
    assert g.body.body[0] in ranges.syntactic and g not in ranges.syntactic
    # The module itself is in no statement.
    assert statement_ranges(module, lines, top, [], [module]) is None


def test_the_call_method_of_a_callable_object_given_to_map_is_traced():
    graphs = _graphs_of("""
        import tensorflow as tf

        class Flip:
            def __call__(self, x):
                return x

        class Crop:
            def __call__(self, x):
                return x

        class Unused:
            def __call__(self, x):
                return x

        flip = Flip()
        ds = tf.data.Dataset.range(3).map(flip).map(Crop())
    """)
    assert graphs["Flip.__call__"] is not None and graphs["Flip.__call__"].kind == "dataset"
    assert graphs["Crop.__call__"] is not None
    assert graphs["Unused.__call__"] is None


def _rule_offences(text: str):
    """What a rule module does that only the engine may: walk the tree, read the
    model's raw bindings, use LibCST's matchers or metadata."""
    tree = ast.parse(text)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("assigned", "defs", "classes", "global_writes") \
                and not (isinstance(node.value, ast.Name) and node.value.id == "ctx"):
            found.add(f".{node.attr}")
        if isinstance(node, ast.Name) and node.id in ("walk", "MetadataWrapper", "lookup"):
            found.add(node.id)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            found |= {n for n in names if n and ("matchers" in n or "metadata" in n)}
    return found


def test_rules_only_ask_the_engine():
    rules = sorted((PACKAGE / "rules").glob("*.py"))
    offences = {path.name: sorted(_rule_offences(path.read_text(encoding="utf-8"))) for path in rules}
    assert {name: found for name, found in offences.items() if found} == {}
    # The check sees what it looks for.
    assert _rule_offences("x = scope.assigned['a']\nfor n in walk(m): pass\nimport libcst.matchers as m\n") \
        == {".assigned", "walk", "libcst.matchers"}


def test_functions_given_to_py_function_by_a_decorator_run_eagerly():
    model, _, _ = analysed("""
        import tensorflow as tf

        def map_decorator(func):
            def wrapper(*args):
                return tf.py_function(func, inp=args, Tout=tf.float32)
            return wrapper

        def plain_decorator(func):
            return func

        @map_decorator
        def slow(x):
            return x

        @tf.py_function(Tout=tf.float32)
        def direct(x):
            return x

        @plain_decorator
        def traced(x):
            return x

        ds = tf.data.Dataset.range(3).map(slow).map(direct).map(traced)
    """)
    scopes = {s.name: s for s in model.scopes}
    assert scopes["slow"].excluded and scopes["direct"].excluded
    assert not scopes["traced"].excluded and scopes["traced"].graph is not None
