"""semantic/loops.py: a handful of iterations, and loops around heavier work."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.loops import few_iterations, heavy_iteration
from tflint_gpu.semantic.model import walk


def loops(source):
    module = cst.parse_module(textwrap.dedent(source).lstrip("\n"))
    ctx = analyse(module, [])
    found = []
    for scope in [ctx.model.root] + [s for s in ctx.model.scopes if s is not ctx.model.root]:
        for node in walk(scope.node if scope.node is not None else module):
            if isinstance(node, cst.For) and next(iter(scope.ancestors(node)), None) is not None:
                found.append((node, scope))
    return module, ctx, found


def few(source):
    module, ctx, found = loops(source)
    return {module.code_for_node(loop.iter): few_iterations(loop, scope, ctx.repetition) for loop, scope in found}


def test_displays_and_small_counts_of_a_loop_that_runs_once():
    assert few("""
        import tensorflow as tf
        phases = ["train", "test"]
        for p in ["train", "test"]: pass
        for k, v in {"a": 1}.items(): pass
        for i, p in enumerate(phases): pass
        for i in range(10): pass
        for i in range(11): pass
        for x in ds.take(1).batch(1): pass
        for x in data: pass
    """) == {'["train", "test"]': True, '{"a": 1}.items()': True, "enumerate(phases)": True, "range(10)": True,
             "range(11)": False, "ds.take(1).batch(1)": True, "data": False}


def test_a_small_count_in_a_loop_that_repeats_is_many():
    assert few("""
        def replay(buffer, n=3):
            for _ in range(10): pass
            for x in buffer.take(n): pass
            for p in ["a", "b"]: pass
        while True:
            replay(None)
    """) == {"range(10)": False, "buffer.take(n)": False, '["a", "b"]': True}


def heavy(source):
    module, ctx, found = loops(source)
    outer = [(loop, scope) for loop, scope in found if loop.target.value == "epoch"]
    out = []
    for loop, scope in outer:
        call = next(n for n in walk(loop.body) if isinstance(n, cst.Call) and module.code_for_node(n.func) == "model")
        out.append(heavy_iteration(loop, call, scope))
    return out


def test_an_epoch_loop_around_batches_or_fit():
    assert heavy("""
        for epoch in range(100):
            for batch in data:
                step(batch)
            model(x)
        for epoch in range(100):
            if epoch % 10 == 0:
                for batch in data:
                    step(batch)
            model(x)
        for epoch in range(100):
            net.fit(x, y)
            model(x)
        for epoch in range(100):
            model(x)
    """) == [True, False, True, False]
