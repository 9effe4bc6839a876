from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Set

import libcst as cst

from tflint_gpu.semantic import bindings
from tflint_gpu.rules.base import CHANGES, GRAPH_TEXT, IDENTICAL, Fix, Rule, Safety, clean, flagged

# Logging functions of the standard library and absl: they too run once per trace.
_LOG_LEVELS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "fatal", "exception", "log"})
_LOG_FUNCTIONS = frozenset(
    f"{module}.{level}"
    for module in ("logging", "absl.logging", "tensorflow.logging")  # tf.compat.v1.logging, normalized
    for level in _LOG_LEVELS
)
# Calls that return a logger whose level methods log the same way (`tf.get_logger().info(...)`).
_LOGGERS = frozenset({"tensorflow.get_logger", "logging.getLogger", "absl.logging.get_absl_logger"})
# Keywords of print that tf.print takes with the same meaning (it has `sep` and `end`).
_SAME_KEYWORDS = frozenset({"sep", "end"})
# Calls that turn their argument into text at trace time.
_TO_TEXT = frozenset({"str", "repr", "format"})
# A case's run: call the function 3 times and count the lines printed to
# sys.stdout (print) and to file descriptor 2 (tf.print writes there from C++).
_COUNT_LINES = """
import io as _io, os as _os, sys as _sys, tempfile as _tempfile
_buffer, _stdout = _io.StringIO(), _sys.stdout
_sys.stdout, _saved, _file = _buffer, _os.dup(2), _tempfile.TemporaryFile()
_os.dup2(_file.fileno(), 2)
try:
    results = [step(tf.constant([1.0, float(i)])) for i in range(3)]
finally:
    _sys.stdout = _stdout
    _os.dup2(_saved, 2)
    _os.close(_saved)
_file.seek(0)
printed = _buffer.getvalue().count("loss") + _file.read().decode().count("loss")
"""
# Words of the "log when tracing happens" idiom (TensorFlow's guide: `print("Tracing with", x)`).
_TRACE_WORDS = ("trac",)


class PrintInGraph(Rule):
    """`print` (or `logging`) of a tensor in graph code: runs once per trace, shows no value.

    ## What it does
    In code that runs traced as a graph (a `tf.function`, a function given to
    `tf.data.Dataset.map` and friends, a Keras `call`/`train_step`, a loss
    or metric Keras runs (`compile(loss=..., metrics=...)`, a Loss's `call`,
    a Metric's `update_state`/`result`), a `Lambda` function, a function
    `tf.map_fn`/`tf.while_loop`/`tf.cond`... run from graph code, or a
    function those call), finds `print(...)` and standard-library, absl or
    `tf.compat.v1.logging` `logging.info(...)` (and the other levels; also
    on a logger: `tf.get_logger().warning(...)`, `logging.getLogger(...)`,
    a name bound to one) whose arguments contain a tensor (measured: three
    calls of a `tf.function` logging through `tf.compat.v1.logging` and
    `tf.get_logger()` logged one record each, with `Tensor("Sum:0", ...)`): passed as is (`print(loss)`, `print("loss", loss)`,
    `print([a, b])`), or formatted into a string (`print(f"loss {loss}")`,
    `"%s" % loss`, `"{}".format(loss)`, `str(loss)`).

    A parameter of a `tf.function` counts as a tensor unless its default or
    annotation says otherwise (called with a Python number, it prints that
    number once per trace, and the function retraces for each new one).

    Not flagged: prints of string literals, numbers, static facts
    (`x.shape`, `x.dtype`) or values the linter cannot tell are tensors,
    which print at trace what the program meant them to; a print whose text
    mentions tracing (`print("Tracing with", x)`: TensorFlow's guide uses
    this on purpose, to show when a function is traced); a print under
    `if tf.executing_eagerly():` (it never runs traced); code handed to
    `tf.py_function`/`tf.numpy_function` (it runs eagerly). Writes to files
    (`open(...).write`, `json.dump`, `np.save`) are not reported here.

    ## Why is this bad?
    TensorFlow runs the Python body of graph code only while tracing it:
    `print` runs once per trace, not once per call, step or element, and the
    tensor it gets is symbolic, so it prints `Tensor("x:0", shape=(),
    dtype=float32)` instead of a value. `tf.print` is an op in the graph:
    it runs on every call and prints the value. AutoGraph does not convert
    `print` (unless asked to with `experimental_autograph_options`), and
    Keras 3 runs no AutoGraph on `call`/`train_step` at all.

    ## Example
    ```python
    @tf.function
    def step(x):
        loss = tf.reduce_sum(x * x)
        print("loss", loss)
        return loss
    ```

    Use instead:
    ```python
    @tf.function
    def step(x):
        loss = tf.reduce_sum(x * x)
        tf.print("loss", loss)
        return loss
    ```

    ## Fix safety
    Unsafe: the output changes, on purpose. `tf.print` prints on every call,
    the values of the tensors instead of their symbolic names, and to
    standard error, not standard output (`file=sys.stderr` is dropped as the
    default). The fix is offered only for a `print` statement in a
    `tf.function` without `jit_compile` or in a `tf.data` function, whose
    arguments are each a tensor or a string, number, `True`/`False`/`None`
    literal (`tf.print` prints those exactly as `print` does; it prints
    NumPy values and other objects by their `repr`), with no keyword other
    than `sep`/`end` with literal strings and `file=sys.stderr`. Not in a
    Keras `call`/`*_step` nor in helpers of graph code: Keras 3's default
    `jit_compile="auto"` turns XLA on when a GPU is present, and XLA cannot
    compile `tf.print` (`InvalidArgumentError: Detected unsupported
    operations ... StringFormat`), which is also why a `jit_compile=True`
    function gets no fix (a `tf.function` called from one is not checked).
    A formatted string (`f"loss {loss}"`, `%`, `.format`) gets no fix: it is
    formatted at trace, so `tf.print` would print the symbolic name on every
    call; pass the tensor as its own argument (`tf.print("loss", loss)`).

    ## Measured effect
    TensorFlow 2.21, CPU: a `tf.function` called 3 times (one input
    signature) with `print("py", x)` and `tf.print("tf", x)` prints
    `py Tensor("x:0", shape=(), dtype=float32)` once and `tf 0`, `tf 1`,
    `tf 2`; a `Dataset.map` function over 3 elements prints
    `Tensor("args_0:0", shape=(), dtype=int64)` once, `tf.print` 3 times; a
    Keras 3.15 layer's `call` under a 4-step `fit` prints twice (the
    functional build and the one trace of the training step), a
    `SymbolicTensor` each time, and `tf.print` 4 times; a `tf_keras` layer's
    `call`, which AutoGraph converts, prints a `SymbolicTensor` 3 times over
    a 2-epoch `fit`, and once more for `predict`; `logging.info("value %s",
    x)` logs `value Tensor("x:0", ...)` once over 3 calls; a file written in
    a `tf.function` called 3 times gets one line, the symbolic name.
    `tf.print` matches `print` for strings, numbers, `None`, lists, tuples
    and dicts of those, and with `sep`/`end`; it prints `np.float32(0.5)`
    where `print` prints `0.5`. Under `jit_compile=True` a `tf.print` fails
    with `InvalidArgumentError` (StringFormat is not an XLA op).
    examples/TFG105 (`tflint-gpu verify --rule TFG105`): 1 line printed over
    3 calls before the fix, 3 after, the same losses.
    """

    code = "TFG105"
    name = "print-in-graph-code"
    message = "`print` of a tensor in graph code runs once per trace and shows no value"
    needs = (GRAPH_TEXT, ("print", "logging"))
    fix_safety = Safety.UNSAFE
    reads_index = ("Expr",)

    def __init__(self) -> None:
        self._eager_blocks: Dict[int, Set[int]] = {}

    def visit_Call(self, node: cst.Call, ctx) -> None:
        graph = ctx.graph()
        if graph is None:
            return
        func = node.func
        if isinstance(func, cst.Name) and func.value == "print" and bindings.is_builtin("print", ctx.scope):
            what = "print"
        else:
            qualname = ctx.call_name(node)
            if qualname not in _LOG_FUNCTIONS and not self._logger_method(func, ctx):
                return
            what = _code(ctx, func)
        if _mentions_tracing(node) or not any(self._shows_tensor(arg.value, ctx) for arg in node.args):
            return
        if self._eager_only(node, ctx):
            return
        message = f"`{what}` of a tensor in graph code runs once per trace and shows no value"
        if what == "print":
            message += ": use `tf.print`"
        else:
            message += "; log with `tf.print`"
        ctx.report(node, message, self._fix(node, graph, ctx) if what == "print" else None)

    @staticmethod
    def _logger_method(func: cst.BaseExpression, ctx) -> bool:
        """``logger.info`` (a level method) on a logger: ``tf.get_logger()``, ``logging.getLogger(...)``,
        or a name bound once to one."""
        if not isinstance(func, cst.Attribute) or func.attr.value not in _LOG_LEVELS:
            return False
        receiver = func.value
        if isinstance(receiver, cst.Name):
            found = ctx.assigned(receiver.value)
            receiver = found.single_value if found is not None else None
        return isinstance(receiver, cst.Call) and ctx.call_name(receiver) in _LOGGERS

    def _eager_only(self, node: cst.Call, ctx) -> bool:
        """``node`` sits under ``if tf.executing_eagerly():`` (or in the
        ``else`` of ``if not tf.executing_eagerly():``): it never runs traced."""
        function = ctx.scope.function()
        key = id(function.node)
        if key not in self._eager_blocks:
            def classify(test):
                negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
                inner = test.expression if negated else test
                if isinstance(inner, cst.Call) and ctx.qualname(inner.func) == "tensorflow.executing_eagerly":
                    return not negated
                return None
            self._eager_blocks[key] = bindings.guarded_nodes(function.node, classify)
        return id(node) in self._eager_blocks[key]

    # -- what the call prints ---------------------------------------------
    def _shows_tensor(self, expr: cst.BaseExpression, ctx) -> bool:
        """Does printing ``expr`` show a (symbolic) tensor: the tensor itself,
        one in a list/tuple/dict display, or one formatted into a string?"""
        if not _is_text(expr) and ctx.is_tensor(expr):
            return True
        return any(not _is_text(part) and ctx.is_tensor(part) for part in _formatted(expr))

    # -- the fix --------------------------------------------------------------
    def _fix(self, node: cst.Call, graph, ctx) -> Optional[Fix]:
        if graph.kind not in ("tf.function", "dataset") or _jit(graph):
            return None
        if not self._is_statement(node, ctx):
            return None
        args: List[cst.Arg] = []
        for arg in node.args:
            if arg.star:
                return None
            if arg.keyword is None:
                if not (_literal(arg.value) or (not _is_text(arg.value) and ctx.is_tensor(arg.value))):
                    return None
                args.append(arg)
            elif arg.keyword.value in _SAME_KEYWORDS and _plain_string(arg.value):
                args.append(arg)
            elif arg.keyword.value == "file" and ctx.qualname(arg.value) == "sys.stderr":
                continue  # tf.print's default stream
            else:
                return None
        spelled = ctx.module_expr("tensorflow", "print")
        if spelled is None:
            return None
        tf_print, imports = spelled
        if args and len(args) < len(node.args):
            args[-1] = args[-1].with_changes(comma=node.args[-1].comma)
        new = node.with_changes(func=tf_print, args=args)
        return Fix("Use `tf.print`: it prints the values on every call (to stderr)", Safety.UNSAFE,
                   {node: new}, imports)

    @staticmethod
    def _is_statement(node: cst.Call, ctx) -> bool:
        """``print(...)`` stands as its own statement (its result is not used)."""
        return any(statement.value is node for statement in ctx.nodes_in(ctx.scope, "Expr"))

    cases = [
        flagged(
            """
            import tensorflow as tf
            import keras

            def noisy_mse(y_true, y_pred):
                print("pred", y_pred)
                return tf.reduce_mean(tf.square(y_true - y_pred))

            def per_element(x):
                print("element", x)
                return x

            @tf.function
            def mapped(x):
                return tf.map_fn(per_element, x)

            model.compile("sgd", loss=noisy_mse)
            """,
            at=[
                (5, 5, "`print` of a tensor in graph code runs once per trace"),
                (9, 5, "`print` of a tensor in graph code runs once per trace"),
            ],
            note="a loss given to compile prints once over 8 steps of fit (a SymbolicTensor); a tf.map_fn "
                 "function of a tf.function once over 2 calls of 2 elements; no fix outside tf.function "
                 "bodies and tf.data functions",
        ),
        clean(
            """
            import tensorflow as tf
            import keras

            class Mean(keras.metrics.Metric):
                def reset_state(self):
                    print("reset", self.total)
                    self.total.assign(0.0)

            def per_element(x):
                print("element", x)
                return x

            values = tf.map_fn(per_element, tf.ones([3]))
            """,
            note="a metric's reset_state runs eagerly; tf.map_fn called eagerly prints each element's value",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_sum(x * x)
                print("loss", loss)
                return loss
            """,
            fixed="""
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_sum(x * x)
                tf.print("loss", loss)
                return loss
            """,
            at=[(6, 5, "`print` of a tensor in graph code runs once per trace and shows no value: use `tf.print`")],
            run=_COUNT_LINES,
            effect=CHANGES,
            note="printed once, symbolically, over 3 calls; tf.print: once a call (the run counts the lines)",
        ),
        flagged(
            """
            import sys
            import tensorflow as tf

            def scale(x):
                y = tf.cast(x, tf.float32) * 2.0
                print("element:", y, sep="", end="\\n", file=sys.stderr)
                return y

            out = list(tf.data.Dataset.range(3).map(scale).as_numpy_iterator())
            """,
            fixed="""
            import sys
            import tensorflow as tf

            def scale(x):
                y = tf.cast(x, tf.float32) * 2.0
                tf.print("element:", y, sep="", end="\\n")
                return y

            out = list(tf.data.Dataset.range(3).map(scale).as_numpy_iterator())
            """,
            at=[(6, 5, "`print` of a tensor in graph code")],
            effect=IDENTICAL,
            note="a Dataset.map function; sep/end kept, file=sys.stderr is tf.print's default",
        ),
        flagged(
            """
            import sys
            import numpy as np
            import tensorflow as tf

            @tf.function
            def step(x, scale):
                y = tf.reduce_mean(x)
                print(f"mean {y}")
                print("mean %.3f" % y)
                print("mean {}".format(y))
                print("mean " + str(y))
                print([y, y * 2])
                print("mean", y, file=sys.stdout)
                print("mean", y, np.float32(scale))
                z = print(y)
                return y
            """,
            at=[(8, 5, "`print` of a tensor"), (9, 5, "`print` of a tensor"), (10, 5, "`print` of a tensor"),
                (11, 5, "`print` of a tensor"), (12, 5, "`print` of a tensor"), (13, 5, "`print` of a tensor"),
                (14, 5, "`print` of a tensor"), (15, 9, "`print` of a tensor")],
            note="formatted at trace (tf.print would print the symbolic name each call), another stream, a NumPy "
                 "value tf.print shows by its repr, a used result: flagged without a fix",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf
            import tf_keras

            class Probe(keras.layers.Layer):
                def call(self, inputs):
                    print("inputs", inputs)
                    return inputs * 2

            class OldProbe(tf_keras.layers.Layer):
                def call(self, inputs):
                    print("inputs", inputs)
                    return inputs * 2

            @tf.function(jit_compile=True)
            def fused(x):
                print("x", x)
                return x + 1

            def helper(x):
                print("x", x)
                return x

            @tf.function
            def outer(x):
                return helper(x)
            """,
            at=[(7, 9, "`print` of a tensor"), (12, 9, "`print` of a tensor"), (17, 5, "`print` of a tensor"),
                (21, 5, "`print` of a tensor")],
            note="no fix in a Keras call (Keras 3: XLA by default on GPU; tf_keras: AutoGraph leaves print alone), "
                 "under jit_compile (tf.print is no XLA op), "
                 "or in a helper (its callers may be either)",
        ),
        flagged(
            """
            import logging
            from absl import logging as absl_logging
            import tensorflow as tf

            @tf.function
            def step(x):
                loss = tf.reduce_sum(x)
                logging.info("loss %s", loss)
                absl_logging.warning("loss %s", loss)
                return loss
            """,
            at=[(8, 5, "`logging.info` of a tensor"), (9, 5, "`absl_logging.warning` of a tensor")],
            note="logging runs once per trace too; no fix",
        ),
        flagged(
            """
            import logging
            import tensorflow as tf

            logger = tf.get_logger()

            @tf.function
            def step(x):
                loss = tf.reduce_sum(x)
                tf.compat.v1.logging.info("loss %s", loss)
                logger.warning("loss %s", loss)
                logging.getLogger(__name__).info("loss %s", loss)
                logging.getLogger(__name__).info("traced once")
                return loss
            """,
            at=[(9, 5, "`tf.compat.v1.logging.info` of a tensor"), (10, 5, "`logger.warning` of a tensor"),
                (11, 5, "`logging.getLogger(__name__).info` of a tensor")],
            note="TF's compat logging and logger objects log once per trace too",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function(input_signature=[tf.TensorSpec([None, 28, 28], tf.float32)])
            def shrink(images):
                print("Tracing with", images)
                print("Retracing: new shape", images.shape)
                return images[:, ::2, ::2]
            """,
            note="the guide's idiom: printing at trace time on purpose, to see when a function traces",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            class Block(keras.layers.Layer):
                def call(self, x, training=False):
                    print(x.shape, x.dtype)
                    print("building block", training)
                    return x

            @tf.function
            def step(x, n=3):
                print("step", n)
                print(len(x.shape))
                return x
            """,
            note="static facts and Python values: what they print at trace is what they are",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            class Debug(keras.layers.Layer):
                def call(self, x):
                    if tf.executing_eagerly():
                        print("x", x)
                    if not tf.executing_eagerly():
                        pass
                    else:
                        print("sum", tf.reduce_sum(x))
                    return x
            """,
            note="prints that run only eagerly: under `if tf.executing_eagerly():` they show values",
        ),
        clean(
            """
            import tensorflow as tf

            def show(x):
                print("value", x)
                return x

            @tf.function
            def step(x):
                return tf.py_function(show, [x], tf.float32)

            def eager(x):
                print(tf.reduce_sum(x))
            """,
            note="a function given to tf.py_function runs eagerly, and so does plain eager code",
        ),
        clean(
            """
            import tensorflow as tf
            from rich import print

            @tf.function
            def step(x):
                y = tf.reduce_sum(x)
                print("y", y)
                return y
            """,
            note="rich's print is not the builtin (it prints once per trace too, but is not what the fix knows)",
        ),
    ]


# -- helpers -----------------------------------------------------------------
def _code(ctx, node: cst.CSTNode) -> str:
    text = ctx.module.code_for_node(node).strip()
    return text if len(text) <= 40 else text[:37] + "..."


def _formatted(expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The expressions ``expr`` turns into text when printed, one level into
    displays and string formatting: the elements of a list/tuple/set/dict
    display, the fields of an f-string, the right side of ``"..." % x``, the
    arguments of ``"...".format(...)``, ``str(x)``/``repr(x)``/``format(x)``,
    the operands of a string ``+``."""
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        for element in expr.elements:
            yield element.value
            yield from _formatted(element.value)
    elif isinstance(expr, cst.Dict):
        for element in expr.elements:
            if isinstance(element, cst.DictElement):
                yield element.value
    elif isinstance(expr, cst.FormattedString):
        for part in expr.parts:
            if isinstance(part, cst.FormattedStringExpression):
                yield part.expression
                yield from _formatted(part.expression)
    elif isinstance(expr, cst.ConcatenatedString):
        yield from _formatted(expr.left)
        yield from _formatted(expr.right)
    elif isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Modulo) and _is_text(expr.left):
            yield expr.right
            yield from _formatted(expr.right)
        elif isinstance(expr.operator, cst.Add) and (_is_text(expr.left) or _is_text(expr.right)):
            for side in (expr.left, expr.right):
                yield from _formatted(side)
    elif isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name) and func.value in _TO_TEXT and expr.args:
            yield expr.args[0].value
        elif isinstance(func, cst.Attribute) and func.attr.value == "format" and _is_text(func.value):
            for arg in expr.args:
                yield arg.value
                yield from _formatted(arg.value)


def _is_text(expr: cst.BaseExpression) -> bool:
    """A string literal, f-string, or text built from one by ``+``/``%``/``.format``/``str``."""
    if isinstance(expr, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Modulo)):
        return _is_text(expr.left) or _is_text(expr.right)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name) and func.value in _TO_TEXT:
            return True
        return isinstance(func, cst.Attribute) and func.attr.value == "format" and _is_text(func.value)
    return False


def _strings(node: cst.CSTNode) -> Iterator[str]:
    """The literal text of the string literals and f-string text parts in ``node``."""
    for child in bindings.expression_nodes(node):
        if isinstance(child, cst.SimpleString):
            yield child.value
        elif isinstance(child, cst.FormattedStringText):
            yield child.value


def _mentions_tracing(node: cst.Call) -> bool:
    return any(word in text.lower() for text in _strings(node) for word in _TRACE_WORDS)


def _plain_string(expr: cst.BaseExpression) -> bool:
    """A string literal (not bytes, not an f-string)."""
    if isinstance(expr, cst.SimpleString):
        return "b" not in expr.prefix.lower()
    if isinstance(expr, cst.ConcatenatedString):
        return _plain_string(expr.left) and _plain_string(expr.right)
    return False


def _literal(expr: cst.BaseExpression) -> bool:
    """A literal ``tf.print`` prints as ``print`` does: a string, a number, True/False/None."""
    if _plain_string(expr) or isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return isinstance(expr.expression, (cst.Integer, cst.Float))
    return isinstance(expr, cst.Name) and expr.value in ("True", "False", "None")


def _jit(graph) -> bool:
    """The tf.function is (or may be) compiled with XLA: ``jit_compile`` is not literally False."""
    arg = graph.jit_compile
    return arg is not None and not (isinstance(arg.value, cst.Name) and arg.value.value == "False")
