"""semantic/per_element.py: per-element maps, stacks and loops of ops that take the whole batch."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.batchable_ops import BATCHABLE

ROOT = Path(__file__).resolve().parents[1]


def context(source: str):
    module = cst.parse_module(textwrap.dedent(source).lstrip("\n"))
    return module, analyse(module, [])


def code(module, node) -> str:
    return module.code_for_node(node)


def calls(ctx, name):
    return [(call, scope) for call, scope in ctx.model.index.get("Call", ())
            if ctx.resolver.qualname(call.func, scope) == name]


def found_maps(source):
    module, ctx = context(source)
    out = []
    for call, scope in calls(ctx, "tensorflow.map_fn"):
        found = ctx.per_element.mapped(call, scope)
        out.append(None if found is None else (code(module, found[0].on(found[1])), found[0].exact,
                                               sorted(found[0].raises_on), found[0].literal))
    return out


def found_stacks(source):
    module, ctx = context(source)
    out = []
    for call, scope in calls(ctx, "tensorflow.stack"):
        found = ctx.per_element.stacked(call, scope)
        out.append(None if found is None else code(module, found[0].on(found[1])))
    return out


def test_the_table_is_what_the_derivation_prints():
    """The table is the derivation's, but for ``exact``: bit-identity depends on the CPU's vector
    width (softmax's batched rows differ by an ULP from its per-element rows on an AVX2 machine,
    not on others), so ``exact`` may be False where this machine measures bit-identical values,
    never True where it measures a difference."""
    derived = subprocess.run([sys.executable, str(ROOT / "scripts" / "derive_batchable_ops.py")],
                             capture_output=True, text=True, check=True).stdout
    table = (ROOT / "tflint_gpu" / "semantic" / "batchable_ops.py").read_text()
    found, kept = {}, {}
    exec(compile(derived, "derived", "exec"), found)
    exec(compile(table, "table", "exec"), kept)
    assert derived.split("BATCHABLE = ")[0] == table.split("BATCHABLE = ")[0]
    assert found["BATCHABLE"].keys() == kept["BATCHABLE"].keys()
    for name, entry in kept["BATCHABLE"].items():
        measured = found["BATCHABLE"][name]
        assert {**entry, "exact": None} == {**measured, "exact": None}, name
        assert measured["exact"] or not entry["exact"], name


def test_the_table_keeps_ops_whose_axes_move_with_the_batch_out():
    assert "tensorflow.image.per_image_standardization" in BATCHABLE
    assert BATCHABLE["tensorflow.image.resize"]["extras"] == ("size",)
    assert "image-sequences" in BATCHABLE["tensorflow.image.resize"]["raises_on"]
    assert BATCHABLE["tensorflow.nn.sigmoid"]["exact"] is False
    assert "" in BATCHABLE["tensorflow.nn.softmax"]["extras"] and "int" not in BATCHABLE["tensorflow.nn.softmax"]["extras"]
    for name in ("reduce_sum", "argmax", "reduce_mean", "squeeze", "identity", "transpose"):
        assert "tensorflow." + name not in BATCHABLE, name
    # an extra argument that falls on `name` is never a kind (tf.abs(x, 0.3) names the op "0.3")
    assert BATCHABLE["tensorflow.abs"]["extras"] == ("",)


def test_map_fn_over_an_op_a_lambda_a_chain_and_arithmetic():
    assert found_maps("""
        import tensorflow as tf
        x = tf.ones((2, 4, 4, 3))
        a = tf.map_fn(tf.image.per_image_standardization, x)
        b = tf.map_fn(lambda im: tf.image.resize(tf.cast(im, tf.float32) / 255.0, (8, 8)), x)
        c = tf.map_fn(lambda im: im ** 2, x)
        d = tf.map_fn(lambda im: tf.nn.relu(im), x, parallel_iterations=4, name="m")
    """) == [("tf.image.per_image_standardization(x)", True, [], True),
             ("tf.image.resize(tf.cast(x, tf.float32) / 255.0, (8, 8))", True, ["image-sequences"], True),
             ("(x ** 2)", False, [], True),
             ("tf.nn.relu(x)", True, [], True)]


def test_map_fn_that_is_not_per_element_batchable():
    assert found_maps("""
        import tensorflow as tf
        x = tf.ones((2, 3))
        pair = [x, x]
        a = tf.map_fn(tf.reduce_sum, x)
        b = tf.map_fn(lambda r: tf.nn.softmax(r, 0), x)
        c = tf.map_fn(lambda p: tf.nn.relu(p), (x, x))
        d = tf.map_fn(lambda p: tf.nn.relu(p), pair)
        e = tf.map_fn(lambda r: tf.nn.relu(r), x, unknown=1)
        f = tf.map_fn(lambda r: tf.nn.relu(r) + r, x)
        g = tf.map_fn(lambda r, s=1: tf.nn.relu(r), x)
        h = tf.map_fn(lambda r: tf.image.resize(r, [2, 2], method="nearest"), x)
        i = tf.map_fn(lambda r: tf.cast(r, "float32"), x)
    """) == [None] * 9


def test_extra_arguments_that_are_names():
    # a Python number (delta), or anything where the op takes only a scalar (adjust_contrast's factor)
    assert found_maps("""
        import tensorflow as tf
        x = tf.ones((2, 4, 4, 3))
        delta = 0.1
        def f(images, size, factor):
            return (tf.map_fn(lambda im: tf.image.resize(im, [size, size]), images),
                    tf.map_fn(lambda im: tf.image.adjust_brightness(im, delta), images),
                    tf.map_fn(lambda im: tf.image.adjust_contrast(im, factor), images))
    """) == [("tf.image.resize(images, [size, size])", True, ["image-sequences"], False),
             ("tf.image.adjust_brightness(images, delta)", True, [], False),
             ("tf.image.adjust_contrast(images, factor)", True, [], False)]


def test_stack_of_a_comprehension_over_rows():
    assert found_stacks("""
        import numpy as np
        import tensorflow as tf
        x = tf.ones((3, 4))
        n = np.ones((3, 4))
        a = tf.stack([tf.nn.relu(r) for r in tf.unstack(x)])
        b = tf.stack([tf.nn.relu(x[i]) for i in range(len(x))])
        c = tf.stack([tf.nn.relu(x[i]) for i in range(x.shape[0])], axis=0)
        d = tf.stack([tf.nn.relu(n[i]) for i in range(tf.shape(n)[0])])
        e = tf.stack([tf.one_hot(r, 5) for r in n])
        f = tf.stack([tf.nn.relu(x[i]) for i in range(3)])
        g = tf.stack([tf.nn.relu(r) for r in tf.unstack(x)], axis=1)
        h = tf.stack([tf.nn.relu(r) for r in [x, x]])
        i = tf.stack([tf.nn.relu(r) for r in tf.unstack(x) if r is not None])
        j = tf.stack([tf.nn.relu(n[i]) for i in range(len(x))])
    """) == ["tf.nn.relu(x)", "tf.nn.relu(x)", "tf.nn.relu(x)", "tf.nn.relu(n)", "tf.one_hot(n, 5)",
             None, None, None, None, None]


def test_a_shadowed_range_is_not_the_builtin():
    assert found_stacks("""
        import tensorflow as tf
        range = lambda n: [0]
        x = tf.ones((3, 4))
        a = tf.stack([tf.nn.relu(x[i]) for i in range(len(x))])
    """) == [None]


def loops(source):
    module, ctx = context(source)
    out = []
    for call, scope in calls(ctx, "tensorflow.unstack"):
        loop = next(node for node in scope.ancestors(call) if isinstance(node, cst.For))
        found = ctx.per_element.appended(loop, scope)
        out.append(None if found is None else (found[2], code(module, found[0].on(found[1]))))
    return out


def test_an_append_loop_between_an_empty_list_and_its_stack():
    assert loops("""
        import tensorflow as tf
        def f(x):
            out = []
            for r in tf.unstack(x):
                out.append(tf.nn.relu(r))
            return tf.stack(out)
        def g(x):
            out = []
            for r in tf.unstack(x):
                out.append(tf.nn.relu(r))
                print(r)
            return tf.stack(out)
        def h(x):
            out = [1]
            for r in tf.unstack(x):
                out.append(tf.nn.relu(r))
            return tf.stack(out)
        def k(x):
            out = []
            for r in tf.unstack(x):
                out.append(tf.nn.relu(r))
            y = tf.concat(out, 0)
            return tf.stack(out)
    """) == [("out", "tf.nn.relu(x)"), None, None, None]


def test_a_map_fn_that_may_change_the_dtype_without_an_output_dtype_raises():
    module, ctx = context("""
        import tensorflow as tf
        x = tf.ones((2, 4, 4, 3), tf.uint8)
        a = tf.map_fn(tf.image.per_image_standardization, x)
        b = tf.map_fn(tf.image.per_image_standardization, x, fn_output_signature=tf.float32)
        c = tf.map_fn(lambda im: im / 2, x)
        d = tf.map_fn(lambda im: im * 2, x)
        e = tf.map_fn(lambda im: tf.cast(im, tf.float32), x, dtype=tf.float32)
    """)
    found = [ctx.per_element.mapped(call, scope)[0] for call, scope in calls(ctx, "tensorflow.map_fn")]
    assert [f.raises_dtype for f in found] == [True, False, True, False, False]


def test_indices_as_the_element_and_vectorized_map():
    assert found_stacks("""
        import tensorflow as tf
        table = tf.ones((6, 3))
        idx = tf.constant([[0, 1], [2, 3]])
        a = tf.stack([tf.gather(table, row) for row in tf.unstack(idx)])
        b = tf.stack([tf.nn.embedding_lookup(table, idx[i]) for i in range(len(idx))])
        c = tf.stack([tf.gather(row, idx) for row in tf.unstack(table)])
        d = tf.stack([tf.gather(table, row, axis=1) for row in tf.unstack(idx)])
        e = tf.stack([tf.gather(table[i], idx[i]) for i in range(len(idx))])
    """) == ["tf.gather(table, idx)", "tf.nn.embedding_lookup(table, idx)", None, None, None]
    module, ctx = context("""
        import tensorflow as tf
        x = tf.ones((2, 3))
        a = tf.vectorized_map(tf.nn.relu, x)
        b = tf.vectorized_map(lambda r: tf.cast(r, tf.int32), x, fallback_to_while_loop=False)
        c = tf.vectorized_map(lambda r: tf.nn.relu(r), x, parallel_iterations=2)
    """)
    found = [ctx.per_element.call(call, scope) for call, scope in calls(ctx, "tensorflow.vectorized_map")]
    assert [(f[0], code(module, f[1].on(f[2])), f[1].raises_dtype) if f else None for f in found] == [
        ("vectorized_map", "tf.nn.relu(x)", False), ("vectorized_map", "tf.cast(x, tf.int32)", False), None]


def test_a_sample_drawn_once_per_iteration():
    module, ctx = context("""
        import tensorflow as tf
        n = 4
        a = tf.stack([tf.random.normal((3,)) for _ in range(n)])
        b = tf.stack([tf.random.uniform((3,), maxval=i) for i in range(n)])
        c = tf.stack([tf.random.shuffle(tf.range(3)) for _ in range(n)])
        d = tf.stack([tf.random.normal((3,)) for _ in tf.range(n)])
        e = tf.stack([tf.random.truncated_normal((3,)) for _ in range(n)], axis=1)
    """)
    found = [ctx.per_element.call(call, scope) for call, scope in calls(ctx, "tensorflow.stack")]
    assert [(f[0], f[1].ops, f[1].literal, code(module, f[2])) if f else None for f in found] == [
        ("draw", ["tensorflow.random.normal"], False, "n"), None, None, None, None]


def test_keywords_at_their_parameters_place_and_comparisons():
    assert found_maps("""
        import tensorflow as tf
        x = tf.ones((2, 3))
        n = 7
        a = tf.map_fn(lambda r: tf.one_hot(tf.cast(r, tf.int32), depth=n), x, dtype=tf.float32)
        b = tf.map_fn(lambda r: tf.cast(r > 0., dtype=tf.float32), x)
        c = tf.map_fn(lambda r: tf.cast(r, tf.float32, name="c"), x)
        d = tf.map_fn(lambda r: tf.one_hot(r, on_value=1, depth=3), x)  # keywords out of order
        e = tf.map_fn(lambda r: tf.add(r, y=1.0), x)
        f = tf.map_fn(lambda r: tf.add(r, bias), x)
    """) == [("tf.one_hot(tf.cast(x, tf.int32), depth=n)", True, [], False),
             ("tf.cast(x > 0., dtype=tf.float32)", True, [], True),
             ("tf.cast(x, tf.float32, name=\"c\")", True, [], True),
             ("tf.one_hot(x, on_value=1, depth=3)", True, [], True), ("tf.add(x, y=1.0)", True, [], True), None]
