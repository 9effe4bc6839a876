"""semantic/shuffles.py: random permutations of one array, and two arrays used as rows and labels."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import analyse
from tflint_gpu.rules.features_labels_shuffled_apart import FeaturesLabelsShuffledApart
from tflint_gpu.semantic.shuffles import reseeds, shuffle_of, used_together

CODE = cst.Module(body=[]).code_for_node


def _function(source: str, name: str = "f"):
    ctx = analyse(cst.parse_module(textwrap.dedent(source)), [])
    scope = next(s for s in ctx.model.scopes if s.name == name)
    statements = [small for line in scope.node.body.body if isinstance(line, cst.SimpleStatementLine)
                  for small in line.body]
    return ctx, scope, statements


def test_shuffle_of_reads_each_stream_and_form():
    ctx, scope, statements = _function("""
        import random
        import numpy as np
        from numpy.random import shuffle
        gen = np.random.default_rng(0)

        def f(x, y, n, rng):
            np.random.shuffle(x)
            random.shuffle(y)
            shuffle(x)
            gen.shuffle(y)
            x = np.random.permutation(x)
            idx = np.random.permutation(n)
            z = np.random.permutation(x)
            rng.shuffle(x)
            np.random.shuffle(x[0])
        """)
    found = [shuffle_of(s, scope, ctx) for s in statements]
    assert [(f.array, f.stream.split(":")[0]) if f else None for f in found] == [
        ("x", "numpy.random"), ("y", "random"), ("x", "numpy.random"), ("y", "generator"),
        ("x", "numpy.random"), None, None, None, None]
    assert found[3].generator == "gen" and found[0].generator is None


def test_reseeds_knows_seed_state_and_generator_rebinding():
    ctx, scope, statements = _function("""
        import random
        import numpy as np
        import tensorflow as tf

        def f(x, s, st):
            rng = np.random.RandomState(0)
            rng.shuffle(x)
            np.random.seed(s)
            np.random.set_state(st)
            random.seed(s)
            tf.keras.utils.set_random_seed(s)
            set_seed(s)
            rng = np.random.RandomState(1)
            print(x)
        """)
    shuffle = shuffle_of(statements[1], scope, ctx)
    assert [reseeds(s, shuffle, ctx, scope) for s in statements[2:]] == [True] * 6 + [False]


def test_used_together_reads_pairs_not_neighbours():
    def pair(body):
        ctx, scope, statements = _function("import tensorflow as tf\ndef f(x, y, m, i, other):\n"
                                           + textwrap.indent(textwrap.dedent(body), "    "))
        nodes = [n for s in scope.node.body.body for n in ctx.descendants(s)]
        found = used_together("x", "y", nodes, ctx, scope)
        return CODE(found) if found is not None else None

    assert pair("m.fit(x, y)") == "m.fit(x, y)"
    assert pair("m.fit(x=x, y=y, epochs=2)") == "m.fit(x=x, y=y, epochs=2)"
    assert pair("m.fit(other, validation_data=(x, y))") is not None
    assert pair("list(zip(x, y))") == "zip(x, y)"
    assert pair("tf.data.Dataset.from_tensor_slices((x, y))") is not None
    assert pair("a = x[i:i + 8]\nb = y[i:i + 8]") == "y[i:i + 8]"
    assert pair("return x, y") is None
    assert pair("m.fit(x, other)\nprint(y)") is None
    assert pair("a = x[i]\nb = y[i + 1]") is None


def _fixed(source: str) -> str:
    return fix_source(textwrap.dedent(source), "case.py", [FeaturesLabelsShuffledApart], unsafe=True).source


def test_the_fix_keeps_rows_and_labels_together_when_run():
    # Executed under NumPy: the original's pairs are scrambled, the fixed code's all match.
    source = """
        import numpy as np
        import random  # a tensorflow training script

        def load(seed):
            x = np.arange(200.0).reshape(100, 2)
            y = np.arange(100)
            np.random.seed(seed)
            np.random.shuffle(x)
            np.random.shuffle(y)
            names = [f"img{i}" for i in range(100)]
            classes = list(range(100))
            random.seed(seed)
            random.shuffle(names)
            random.shuffle(classes)
            return np.mean([a[0] == 2 * b for a, b in zip(x, y)]), np.mean([n == f"img{c}" for n, c in zip(names, classes)])
        """
    before, after = {}, {}
    exec(textwrap.dedent(source), before)
    fixed = _fixed(source)
    assert fixed.count("get_state()") == 1 and fixed.count("getstate()") == 1
    exec(fixed, after)
    assert max(before["load"](0)) < 0.2
    assert after["load"](0) == (1.0, 1.0)
