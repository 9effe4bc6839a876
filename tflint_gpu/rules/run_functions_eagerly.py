from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import keyword
from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.rules.base import IDENTICAL, Fix, Rule, Safety, clean, flagged


class RunFunctionsEagerly(Rule):
    """`tf.config.run_functions_eagerly(True)` left on: every `tf.function` in the program runs eagerly.

    ## What it does
    Finds `tf.config.run_functions_eagerly(True)` and its deprecated alias
    `tf.config.experimental_run_functions_eagerly(True)` (any import
    spelling), and Keras `model.compile(..., run_eagerly=True)`, with the
    argument literally `True`, when the call is not behind a debug switch.

    Not flagged: `False`, or a variable (`run_functions_eagerly(args.eager)`:
    a switch already); a call inside an `if`/`while`/conditional expression
    whose test mentions "debug" or "eager" (`if FLAGS.debug:`,
    `if not use_graph: ... else:` is flagged), or in a function whose name does
    (`def enable_eager_debugging():`); code in a test (`test_*`, `setUp`,
    `tearDown`, or anywhere in a test suite: a module with test functions
    that imports a test framework: eager on purpose); a module that also switches it back
    (`run_functions_eagerly(False)`, or with a variable, anywhere in the file:
    a test's `setUp`/`tearDown`, a `try`/`finally`).

    ## Why is this bad?
    The setting is global: every `tf.function` of the program, Keras'
    `fit`/`evaluate`/`predict` included, runs its Python body op by op at
    every call instead of the traced graph (functions given to `tf.data`
    are still traced). It is a debugging aid; left on, training runs at eager
    speed with no sign of it.

    ## Example
    ```python
    tf.config.run_functions_eagerly(True)
    model.fit(x, y, epochs=10)
    ```

    Use instead:
    ```python
    model.fit(x, y, epochs=10)
    ```
    or keep it behind a switch: `if args.debug: tf.config.run_functions_eagerly(True)`.

    ## Fix safety
    Unsafe. The fix removes the call (a statement of its own; a block left
    empty gets `pass`), or the `run_eagerly=True` argument of `compile`.
    For code that traces correctly the results stay the same (TF 2.21: equal
    losses after `fit`, equal `tf.function` results). But eager mode hides
    code that works only eagerly, and the linter cannot see every
    `tf.function` of the program (other modules, libraries): after the fix a
    `.numpy()` in a `tf.function` raises `AttributeError`, a `print` or
    a Python counter in one runs once per trace instead of every call, and a
    Keras 3 custom `train_step` with a Python `if` on a tensor raises
    `OperatorNotAllowedInGraphError`. Run the program once after the fix.

    ## Measured effect
    TF 2.21, Keras 3.15, 2-core CPU, a 32-64-64-10 MLP, batch 64: `fit` took
    1.6 ms a step; 23.4 ms after `tf.config.run_functions_eagerly(True)`
    (14.6x slower) and 17.7 ms with `compile(run_eagerly=True)` (11x), with the
    same loss. A `tf.function` of a dozen elementwise ops on 64 x 64: 0.42 ms
    a call traced, 1.07 ms eagerly. `examples/TFG406` (a fresh model and one
    300-step `fit` a call, so each call also builds and traces), `tflint-gpu
    verify --rule TFG406 --device cpu --size small`: equal losses and
    weights, several times faster after the fix (the measurement below).
    """

    code = "TFG406"
    name = "run-functions-eagerly"
    message = "`run_functions_eagerly(True)` outside a debug switch: every `tf.function` runs eagerly"
    needs = (("run_functions_eagerly", "run_eagerly"),)
    fix_safety = Safety.UNSAFE

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "compile":
            arg = keyword(node, "run_eagerly")
            if arg is not None and _is_true(arg.value) and not self._guarded(node, ctx):
                ctx.report(node, "`compile(run_eagerly=True)` outside a debug switch: every Keras step runs eagerly",
                           self._drop_argument(node, arg))
            return
        switches = ctx.eager.eager_switches()
        mine = [s for s in switches if s[0] is node]
        if not mine:
            return
        value = mine[0][2]
        if not _is_true(value) or self._guarded(node, ctx):
            return
        if any(call is not node and not _is_true(arg) for call, _scope, arg in switches):
            return  # switched back elsewhere in the file: a deliberate toggle
        name = "experimental_run_functions_eagerly" if "experimental" in ctx.call_name(node) else \
            "run_functions_eagerly"
        ctx.report(node, f"`{name}(True)` outside a debug switch: every `tf.function` runs eagerly",
                   self._remove_statement(node, ctx))

    @staticmethod
    def _guarded(node: cst.Call, ctx) -> bool:
        return in_test_function(ctx.scope) or ctx.in_test_module or ctx.eager.debug_guarded(node, ctx.scope)

    @staticmethod
    def _remove_statement(node: cst.Call, ctx) -> Optional[Fix]:
        found = ctx.eager.statement_of(node, ctx.scope)
        if found is None:
            return None
        line, holder = found
        body = [statement for statement in holder.body if statement is not line]
        if not body and isinstance(holder, cst.IndentedBlock):
            body = [cst.SimpleStatementLine([cst.Pass()])]
        return Fix("Remove the call", Safety.UNSAFE, {holder: holder.with_changes(body=body)})

    @staticmethod
    def _drop_argument(call: cst.Call, arg: cst.Arg) -> Fix:
        args = list(call.args)
        index = args.index(arg)
        del args[index]
        if args and index == len(args):
            # The last argument went: the new last one takes its comma (none, or a trailing one).
            args[-1] = args[-1].with_changes(comma=arg.comma)
        return Fix("Remove `run_eagerly=True`", Safety.UNSAFE, {call: call.with_changes(args=args)})

    cases = [
        flagged(
            """
            import tensorflow as tf

            tf.config.run_functions_eagerly(True)

            @tf.function
            def step(x):
                return x * 2.0
            """,
            fixed="""
            import tensorflow as tf

            @tf.function
            def step(x):
                return x * 2.0
            """,
            at=[(3, 1, "`run_functions_eagerly(True)` outside")],
            run="y = step(tf.constant([1.0, 2.0]))",
            effect=IDENTICAL,
            note="module level",
        ),
        flagged(
            """
            from tensorflow import config
            import tensorflow as tf

            def main(args):
                if args.graph:
                    config.experimental_run_functions_eagerly(True)
                return tf.function(lambda x: x + 1.0)(tf.ones(2))

            def setup():
                tf.config.run_functions_eagerly(True)  # for now
            """,
            fixed="""
            from tensorflow import config
            import tensorflow as tf

            def main(args):
                if args.graph:
                    pass
                return tf.function(lambda x: x + 1.0)(tf.ones(2))

            def setup():
                pass
            """,
            at=[(6, 9, "`experimental_run_functions_eagerly(True)` outside"),
                (10, 5, "`run_functions_eagerly(True)` outside")],
            run="""
            class Args:
                graph = True
            setup()
            y = main(Args())
            """,
            effect=IDENTICAL,
            note="the deprecated alias from an import; a condition that is no debug switch; a block left empty",
        ),
        flagged(
            """
            import keras

            def build():
                model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
                model.compile(
                    optimizer="sgd",
                    loss="mse",
                    run_eagerly=True,
                )
                model.compile("sgd", run_eagerly=True, loss="mse")
                return model
            """,
            fixed="""
            import keras

            def build():
                model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
                model.compile(
                    optimizer="sgd",
                    loss="mse",
                )
                model.compile("sgd", loss="mse")
                return model
            """,
            at=[(5, 5, "`compile(run_eagerly=True)` outside"), (10, 5, "`compile(run_eagerly=True)` outside")],
            run="""
            import numpy as np
            keras.utils.set_random_seed(0)
            model = build()
            model.fit(np.ones((8, 2), "float32"), np.zeros((8, 1), "float32"), epochs=2, verbose=0)
            weights = model.trainable_variables[0].numpy()
            """,
            effect=IDENTICAL,
            note="Keras compile: the argument goes, its trailing comma with it",
        ),
        clean(
            """
            import tensorflow as tf

            def main(args, FLAGS, model):
                tf.config.run_functions_eagerly(False)
                tf.config.run_functions_eagerly(args.eager)
                if FLAGS.debug:
                    tf.config.run_functions_eagerly(True)
                if args.mode == "eager_tf":
                    tf.config.experimental_run_functions_eagerly(True)
                model.compile(loss="mse", run_eagerly=args.debug)
                model.compile(loss="mse", run_eagerly=True if FLAGS.debug else None)
            """,
            note="False, a variable, behind debug/eager switches; and the file switches it back (False)",
        ),
        clean(
            """
            import tensorflow as tf

            def enable_eager_debugging():
                tf.config.run_functions_eagerly(True)

            class EagerTest(tf.test.TestCase):
                def setUp(self):
                    tf.config.run_functions_eagerly(True)

                def test_fit(self, model):
                    model.compile(loss="mse", run_eagerly=True)
            """,
            note="a debugging function; tests run eagerly on purpose",
        ),
        clean(
            """
            import tensorflow as tf

            def test_body():
                tf.config.run_functions_eagerly(True)

            try:
                tf.config.run_functions_eagerly(True)
                run = 1
            finally:
                tf.config.run_functions_eagerly(False)
            """,
            note="switched on, then back off in the same file: a deliberate toggle",
        ),
        clean(
            """
            import unittest
            import tensorflow as tf

            tf.config.run_functions_eagerly(True)

            class InformerTest(unittest.TestCase):
                def test_model(self):
                    y = tf.function(lambda x: x + 1.0)(tf.ones(2))
            """,
            note="module level in a test suite (LongxingTan/Time-series-prediction tests): tests run eagerly "
                 "on purpose",
        ),
    ]


def _is_true(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"
