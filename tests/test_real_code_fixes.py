"""Fixes that were wrong on real code (issue 15), each pinned by what --fix writes."""
from __future__ import annotations

import textwrap

import libcst as cst


from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import lint_source
from tflint_gpu.findings import Safety
from tflint_gpu.rules.base import REGISTRY, all_rules

list(all_rules())
TFG105, TFG401, TFG901, TFG902 = (REGISTRY[code] for code in ("TFG105", "TFG401", "TFG901", "TFG902"))


def source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def fixed(text: str, rules, unsafe: bool = False) -> str:
    return fix_source(source(text), "case.py", rules, unsafe=unsafe).source


# -- TFG901: a rename is safe only when every argument survives ------------------

def test_lr_rename_is_not_safe_when_keras3_would_drop_decay():
    code = source("""
        import tensorflow as tf

        opt = tf.keras.optimizers.SGD(lr=0.2, momentum=0.9, decay=0.01)
    """)
    [finding] = lint_source(code, "case.py", [TFG901]).findings
    assert finding.fix is not None and finding.fix.safety is Safety.UNSAFE
    assert "Keras 3 ignores `decay=`" in finding.message
    assert fixed(code, [TFG901]) == code  # --fix alone leaves it failing loudly
    assert "SGD(learning_rate=0.2, momentum=0.9, decay=0.01)" in fixed(code, [TFG901], unsafe=True)


def test_lr_rename_stays_safe_when_nothing_is_lost():
    code = """
        import tensorflow as tf

        a = tf.keras.optimizers.SGD(lr=0.2, momentum=0.9, decay=None)
        b = tf.keras.optimizers.Adam(lr=0.2, decay=0, clipnorm=1.0)
        c = tf.keras.optimizers.Adam(lr=0.2, **options)
    """
    assert fixed(code, [TFG901]) == source("""
        import tensorflow as tf

        a = tf.keras.optimizers.SGD(learning_rate=0.2, momentum=0.9, decay=None)
        b = tf.keras.optimizers.Adam(learning_rate=0.2, decay=0, clipnorm=1.0)
        c = tf.keras.optimizers.Adam(lr=0.2, **options)
    """)
    messages = [f.message for f in lint_source(source(code), "case.py", [TFG901]).findings]
    assert "`**` arguments may hold `decay=`" in messages[2]


# -- TFG902 (and TFG901): version comparisons guard like hasattr ---------------

def test_the_fallback_branch_of_a_version_comparison_is_left_alone():
    code = source("""
        import tensorflow as tf

        policy = tf.keras.mixed_precision.global_policy() if tf_version >= (2, 4, 0) \\
            else tf.keras.mixed_precision.experimental.global_policy()
        if tf_version < (2, 4, 0):
            opt = tf.keras.optimizers.SGD(lr=0.1)
    """)
    assert lint_source(code, "case.py", [TFG901, TFG902]).findings == []
    assert fixed(code, [TFG901, TFG902], unsafe=True) == code


def test_the_branch_that_runs_under_keras3_is_still_fixed():
    code = """
        import tensorflow as tf

        policy = tf.keras.mixed_precision.experimental.global_policy() if tf_version >= (2, 4, 0) else None
        if tf_version >= (2, 4, 0):
            opt = tf.keras.optimizers.SGD(lr=0.1)
        other = tf.keras.mixed_precision.experimental.global_policy()
    """
    assert fixed(code, [TFG901, TFG902]) == source("""
        import tensorflow as tf

        policy = tf.keras.mixed_precision.global_policy() if tf_version >= (2, 4, 0) else None
        if tf_version >= (2, 4, 0):
            opt = tf.keras.optimizers.SGD(learning_rate=0.1)
        other = tf.keras.mixed_precision.global_policy()
    """)


# -- TFG401: the added argument follows the call's own layout -------------------

LAYOUTS = [
    ("@tf.function(\n    input_signature=[tf.TensorSpec([None], tf.float32)]\n)",
     "@tf.function(\n    input_signature=[tf.TensorSpec([None], tf.float32)],\n    jit_compile=True\n)"),
    ("@tf.function(\n    input_signature=[tf.TensorSpec([None], tf.float32)],\n)",
     "@tf.function(\n    input_signature=[tf.TensorSpec([None], tf.float32)],\n    jit_compile=True,\n)"),
    ("@tf.function(\n    input_signature=[tf.TensorSpec([None], tf.float32)]  # one input\n)",
     "@tf.function(\n    input_signature=[tf.TensorSpec([None], tf.float32)],  # one input\n    jit_compile=True\n)"),
    ("@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])",
     "@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)], jit_compile=True)"),
    ("@tf.function(input_signature=[\n    tf.TensorSpec([None], tf.float32),\n])",
     "@tf.function(input_signature=[\n    tf.TensorSpec([None], tf.float32),\n], jit_compile=True)"),
    ("@tf.function(reduce_retracing=True,\n              input_signature=[tf.TensorSpec([None], tf.float32)])",
     "@tf.function(reduce_retracing=True,\n              input_signature=[tf.TensorSpec([None], tf.float32)],\n"
     "              jit_compile=True)"),
]


def test_jit_compile_follows_the_decorator_layout():
    for before, after in LAYOUTS:
        body = "\ndef step(x):\n    return x * 2.0\n"
        code = "import tensorflow as tf\n\n" + before + body
        assert fix_source(code, "case.py", [TFG401], unsafe=True).source == \
            "import tensorflow as tf\n\n" + after + body, before


def test_jit_compile_follows_the_wrapper_call_layout():
    head = "import tensorflow as tf\n\ndef f(x):\n    return x * 2.0\n\n"
    for before, after in [
        ("g = tf.function(f,\n  reduce_retracing=True)\n",
         "g = tf.function(f,\n  reduce_retracing=True,\n  jit_compile=True)\n"),
        ("g = tf.function(\n    f\n)\n", "g = tf.function(\n    f,\n    jit_compile=True\n)\n"),
        ("g = tf.function(f, reduce_retracing=True)\n",
         "g = tf.function(f, reduce_retracing=True, jit_compile=True)\n"),
        ("g = tf.function(f)\n", "g = tf.function(f, jit_compile=True)\n"),
    ]:
        out = fix_source(head + before, "case.py", [TFG401], unsafe=True).source
        assert out == head + after, before
        assert not any(line != line.rstrip() for line in out.splitlines()), "a trailing space"


# -- TFG401 with TFG105 in one --fix: the body XLA compiles keeps the text it was judged on --

def _compiled_with_print(code: str):
    """Names of the functions the fixed code compiles with XLA and whose body has a tf.print."""
    module = cst.parse_module(code)
    bodies = {}
    jit = set()

    class Visitor(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            bodies[node.name.value] = module.code_for_node(node.body)
            if any("jit_compile=True" in module.code_for_node(d) for d in node.decorators):
                jit.add(node.name.value)

        def visit_Call(self, node: cst.Call) -> None:
            text = module.code_for_node(node)
            if text.startswith("tf.function(") and "jit_compile=True" in text and node.args \
                    and isinstance(node.args[0].value, cst.Name):
                jit.add(node.args[0].value.value)

    module.visit(Visitor())
    return sorted(name for name in jit if "tf.print" in bodies.get(name, ""))


def test_jit_compile_and_print_to_tf_print_never_meet_in_one_function():
    code = source("""
        import tensorflow as tf

        @tf.function
        def step(x):
            loss = tf.reduce_sum(x * x)
            print("loss", loss)
            return loss

        def evaluate(x):
            loss = tf.reduce_mean(x)
            print("loss", loss)
            return loss

        fast_evaluate = tf.function(evaluate)
    """)
    outcome = fix_source(code, "case.py", [TFG401, TFG105], unsafe=True)
    assert outcome.converged and not outcome.refused
    assert _compiled_with_print(outcome.source) == [], outcome.source
    # Each fix alone is still offered: the two are not dropped, only kept apart.
    assert set(outcome.applied_codes) <= {"TFG401", "TFG105"} and outcome.applied_codes


def test_jit_compile_fix_depends_on_every_function_the_body_reaches():
    code = source("""
        import tensorflow as tf

        class Cell:
            def step(self, x):
                return helper(x) * 2.0

        def helper(x):
            return tf.tanh(x)

        class Net:
            def __init__(self):
                self.cell = Cell()

            @tf.function
            def run(self, x):
                return self.cell.step(x) + tf.reduce_sum((lambda y: y + 1.0)(x))
    """)
    result = lint_source(code, "case.py", [TFG401])
    [fix] = [f for f in result.fixes if f is not None]
    names = sorted(node.name.value if isinstance(node, cst.FunctionDef) else "<lambda>" for node in fix.depends_on)
    assert names == ["<lambda>", "helper", "run", "step"]
    assert all(isinstance(node, (cst.FunctionDef, cst.Lambda)) for node in fix.depends_on)


def test_an_except_fallback_for_old_releases_is_left_alone():
    code = source("""
        import tensorflow as tf

        try:
            policy = tf.keras.mixed_precision.global_policy()
        except AttributeError:
            policy = tf.keras.mixed_precision.experimental.global_policy()
    """)
    assert fixed(code, [TFG902]) == code
