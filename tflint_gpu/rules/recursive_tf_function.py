from __future__ import annotations

import libcst as cst

from tflint_gpu.rules.base import GRAPH_TEXT, Rule, clean, flagged


class RecursiveTfFunction(Rule):
    """A `tf.function` that calls itself: fails on tensors, retraces on Python values.

    ## What it does
    Finds a call of a `tf.function` (decorated, or wrapped with
    `f = tf.function(f)`, or a method decorated and called as `self.f`)
    inside its own body, in a function nested in it, or in a function of the
    same module it calls (mutual recursion).

    ## Why is this bad?
    The TensorFlow guide states that recursive `tf.function`s are not
    supported. Each recursive call is a call of the `tf.function` while it is
    being traced, so it traces again:
    * with a tensor argument, the base case cannot stop the tracing: AutoGraph
      turns `if n <= 1:` into a `tf.cond` and traces both branches, so the
      recursive branch is traced again, without end (measured: `StagingError`
      wrapping `RecursionError: maximum recursion depth exceeded`);
    * with a Python argument, it works but traces once per value reached
      (measured: `fact(5)` traced 5 functions; each new top-level value
      traces again).

    ## Example
    ```python
    @tf.function
    def fact(n):
        if n <= 1:
            return tf.constant(1)
        return n * fact(n - 1)
    ```

    Use instead (a loop, which AutoGraph turns into a `tf.while_loop`):
    ```python
    @tf.function
    def fact(n):
        result = tf.constant(1)
        for i in tf.range(2, n + 1):
            result *= i
        return result
    ```

    ## Fix safety
    No fix: the recursion must be rewritten as a loop (`tf.while_loop`, or a
    `for` over `tf.range`) by hand, or the decorator moved to a non-recursive
    caller.

    ## Measured effect
    TF 2.21, CPU: `fact(tf.constant(5))` raises `StagingError`
    (`RecursionError`); `fact(5)` returns 120 after 5 traces. The loop version
    returns 120 for both, with one trace per input signature.
    `examples/TFG404` (`x ** k` by recursion on a tensor `k`), `tflint-gpu
    verify --rule TFG404 --device cpu --size small`: fixes-error, the
    recursive version raises `StagingError`, the `tf.range` loop runs (one
    trace).
    """

    code = "TFG404"
    name = "recursive-tf-function"
    message = "recursive `tf.function`: tensor arguments make tracing recurse forever; use a loop"
    needs = (GRAPH_TEXT,)
    fix_safety = None

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        function = ctx.model.scope_of_node[node]
        info = function.graph
        if info is None or info.kind != "tf.function" or function.excluded:
            return
        found = ctx.retracing.recursive_call(function)
        if found is None:
            return
        call, caller = found
        ctx.report(call, f"`{node.name.value}` is a `tf.function` that calls itself: it fails on tensor "
                         "arguments and retraces per Python value")

    cases = [
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def fact(n):
                if n <= 1:
                    return tf.constant(1)
                return n * fact(n - 1)
            """,
            at=[(7, 16, "`fact` is a `tf.function` that calls itself")],
            note="direct recursion (measured: StagingError with a tensor, a trace per value with an int)",
        ),
        flagged(
            """
            import tensorflow as tf

            class Tree:
                @tf.function
                def walk(self, x, depth):
                    if depth == 0:
                        return x
                    return self.walk(x * 2.0, depth - 1)

            @tf.function
            def ping(n):
                return pong(n)

            def pong(n):
                return ping(n - 1) if n > 0 else n
            """,
            at=[(8, 16, "`walk` is a `tf.function` that calls itself"),
                (15, 12, "`ping` is a `tf.function` that calls itself")],
            note="a method through self (measured: 4 traces for depth 3); mutual recursion through a helper"
                 " (measured: StagingError with a tensor)",
        ),
        clean(
            """
            import tensorflow as tf

            def fact(n):
                return 1 if n <= 1 else n * fact(n - 1)

            fast_fact = tf.function(fact)

            def flatten(tree):
                if isinstance(tree, (list, tuple)):
                    return [y for t in tree for y in flatten(t)]
                return [tree]

            @tf.function
            def total(tree):
                return tf.add_n(flatten(tree))
            """,
            note="plain Python recursion inside one trace (the wrapper is another name; a helper over a structure)",
        ),
    ]
