from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.autofix import cond as cond_fix
from tflint_gpu.semantic import bindings, values
from tflint_gpu.semantic.api import exact_argument
from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.rules.base import FIXES_ERROR, GRAPH_TEXT, Fix, Rule, Safety, clean, flagged

_ERROR = "OperatorNotAllowedInGraphError"
_STEP_METHODS = frozenset({"train_step", "test_step", "predict_step"})
_WEIGHT_METHODS = frozenset({"add_weight", "add_variable"})
_KERAS_VARIABLES = frozenset({"keras.Variable", "keras.backend.Variable", "keras.variables.Variable"})
# Keras 3 layers whose `call` tests `training` with a Python `if` (`if training and self.rate > 0:`),
# read in keras/src/layers (3.15): a tensor there fails in any graph.
_PYTHON_TRAINING = frozenset({
    "BatchNormalization", "Dropout", "AlphaDropout", "GaussianDropout", "GaussianNoise", "SpatialDropout1D",
    "SpatialDropout2D", "SpatialDropout3D", "SpectralNormalization",
})


# Runs a custom train_step traced with AutoGraph off (as Keras 3's fit does), on
# a batch whose loss is above 1 and one whose loss is below.
TRAIN_STEP_RUN = """
inp = keras.Input((2,))
model = Net(inp, keras.layers.Dense(1, kernel_initializer="ones")(inp))
step = tf.function(model.train_step, autograph=False)
big = step((tf.ones((4, 2)), tf.zeros((4, 1))))
small = step((tf.ones((4, 2)) * 0.1, tf.zeros((4, 1))))
"""


class PythonControlFlowOnTensor(Rule):
    """Python `if`/`while`/`and`/`or`/`not` on a tensor where AutoGraph does not rescue it.

    ## What it does
    Finds Python control flow whose condition is a tensor in code that runs
    as a graph, where it fails:

    * where AutoGraph is off: `tf.function(autograph=False)`, Keras 3
      `Layer.call` and `Model.train_step`/`test_step`/`predict_step` (Keras 3
      does not run AutoGraph on user code), and functions they call: an `if`,
      `while`, conditional expression, `and`, `or` or `not` on a tensor;
    * where AutoGraph converts the `if` but cannot: a name assigned in only one
      branch and used after the `if`, or a `return` in only one branch when the
      function then ends;
    * a variable the class binds (`self.bias = self.add_weight(...)` in
      `build`, `tf.Variable(...)`, `None` bindings aside) used as a Python
      bool (`if self.bias:`, `not self.w`): a Keras 3 variable raises
      `TypeError: A Keras Variable cannot be used as a boolean` in any method,
      eagerly too; a `tf.Variable` fails where AutoGraph is off; under
      AutoGraph (tf_keras's `call`) a float weight fails (`ValueError:
      condition of if statement expected to be tf.bool scalar`);
    * a tensor `training` (`tf.logical_and(training, self.trainable)`) handed
      in graph code to a Keras 3 layer whose `call` tests it with a Python
      `if` (`BatchNormalization`, `Dropout` and the other dropout and noise
      layers, `SpectralNormalization`): through `super().call(...)` in a
      subclass, or calling such a layer (`self.drop(x, training=t)`).

    An `if` on a tensor inside a plain `tf.function` (or a `Dataset.map`
    function) whose branches assign the same names is converted to `tf.cond`
    by AutoGraph and is not flagged; nor are conditions on Python values
    (`training`, `mask is not None`, `x.shape[0] == 1`, `x.dtype == tf.float32`,
    `self.limit > 0`, `len(x)`, `keras.ops.ndim(x)`), a bare parameter
    (`if training:`), `if self.bias is not None:`, a Python flag set in
    `__init__` (`if self.use_bias:`), a bool weight under AutoGraph, a Python
    `training` handed to a layer, a tensor one handed to a layer that does not
    test it (`LayerNormalization`) or to tf_keras's `BatchNormalization`
    (which uses `smart_cond`), eager code, code under `if tf.executing_eagerly():`,
    functions run by `tf.py_function`, a `call` decorated with `tf.function`
    (it gets its own AutoGraph), and `Layer.call` in files that use Keras 2
    (`tf_keras` converts `call` with AutoGraph; it does not convert
    `train_step`, which is still flagged).

    ## Why is this bad?
    While a graph is traced a tensor has no value, so Python cannot decide
    which way to go. Without AutoGraph, the trace fails with
    `OperatorNotAllowedInGraphError: Using a symbolic tf.Tensor as a Python
    bool is not allowed`. A Keras layer with such a `call` works when called
    eagerly on concrete data, and fails under `fit`/`predict`, when a
    functional or `Sequential` model is built on `keras.Input` (Keras reports
    `Could not automatically infer the output shape / dtype`), and even under
    `compile(run_eagerly=True)` for a `Sequential` model, which is built
    symbolically (a subclassed `Model` with `run_eagerly=True` runs).

    With AutoGraph on, the `if` becomes `tf.cond`, which needs every name
    that lives on after it to be set by both branches (`ValueError: 'y' must
    also be initialized in the else branch`) and, if one branch returns, the
    other to return too (`ValueError: the else branch must also have a return
    statement.`).

    ## Example
    ```python
    class Gate(keras.layers.Layer):
        def call(self, x):
            if tf.reduce_sum(x) > 0:
                y = x * 2.0
            else:
                y = x * 3.0
            return y
    ```

    Use instead:
    ```python
    class Gate(keras.layers.Layer):
        def call(self, x):
            y = keras.ops.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x * 3.0)
            return y
    ```

    ## Fix safety
    The `tf.cond` fix (`keras.ops.cond` in a Keras method of a file that
    imports `keras`) is safe. It is offered only when AutoGraph is off, for a
    conditional expression or an `if`/`else` whose branches are both plain
    assignments of the same names or both a single `return`, with pure
    branch values (names, attributes, literals, operators, subscripts and
    TensorFlow/`keras.ops` calls); an `if` without `else` qualifies when its
    names already hold a value (`x = x * 2`, or a parameter). A condition made
    of `and`/`or`/`not` of comparisons of tensors becomes `tf.logical_*` inside
    `tf.cond` (both sides are free of effects, and only `tf.cond` reads it); a
    condition with any other Python `and`/`or`/`not`, a conditional expression
    or a chained comparison (`0 < t < 5`) gets no fix: inside `tf.cond` it
    would still call `bool()` on a tensor, and a Python part such as `teacher
    is None` guards a branch (`teacher[:, t]`) that `tf.cond` would trace on
    `None` too. For the same reason no branch may read a parameter that is
    `None` unless the caller passes it (`teacher=None`). Where the original
    ran (a Keras layer called eagerly), `tf.cond` runs only the chosen branch
    and returns its value unchanged, even a Python number. Where it raised (any
    trace), the fix makes it run with the values the branches compute; in a
    graph, Python-number branches become int32/float32 tensors, and branches of
    different dtypes raise `TypeError` from `tf.cond` instead.
    `and`/`or`/`not` on comparisons become `tf.logical_and/or/not` (unsafe:
    both operands are evaluated, and eagerly `not` gave a Python bool, now a
    bool tensor). `while` loops and the AutoGraph-on findings get no fix: the
    intent of the missing branch is unknown.

    ## Measured effect
    The code raises at trace time before the fix and runs after it:
    `tflint-gpu verify --rule TFG102` records the error (see examples/RESULTS.md).
    """

    code = "TFG102"
    name = "python-control-flow-on-tensor"
    message = "Python control flow on a tensor fails in this graph code"
    needs = (GRAPH_TEXT,)
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)

    def __init__(self) -> None:
        self._elifs: Set[int] = set()
        self._inner_tests: Dict[int, Set[int]] = {}
        self._eager_blocks: Dict[int, Set[int]] = {}

    # -- AutoGraph off: every bool() of a tensor fails ---------------------
    def visit_If(self, node: cst.If, ctx) -> None:
        if isinstance(node.orelse, cst.If):
            self._elifs.add(id(node.orelse))
        graph = ctx.graph()
        if _variable_test(node, node.test, "if", graph, ctx):
            return
        if graph is None or not _bool_of_tensor(node.test, ctx) or self._eager_only(node, ctx):
            return
        if not _autograph(graph, ctx):
            fix = None
            if id(node) not in self._elifs:
                keras = _use_keras(graph, ctx)
                test = _predicate(node.test, ctx, keras)
                rewrite = None if test is None else cond_fix.if_statement(node, ctx, keras, test)
                if rewrite is not None:
                    fix = Fix(_fix_message(graph, ctx), Safety.SAFE, {node: rewrite[0]}, rewrite[1])
            ctx.report(node, _off_message("if", graph, "tf.cond"), fix)
            return
        message = _autograph_if_problem(node, ctx)
        if message is not None:
            ctx.report(node, message)

    def visit_While(self, node: cst.While, ctx) -> None:
        graph = ctx.graph()
        if _variable_test(node, node.test, "while", graph, ctx):
            return
        if graph is None or _autograph(graph, ctx) or not _bool_of_tensor(node.test, ctx):
            return
        if not self._eager_only(node, ctx):
            ctx.report(node, _off_message("while", graph, "tf.while_loop"))

    def visit_IfExp(self, node: cst.IfExp, ctx) -> None:
        graph = ctx.graph()
        if _variable_test(node, node.test, "... if ... else ...", graph, ctx):
            return
        if graph is None or _autograph(graph, ctx) or not _bool_of_tensor(node.test, ctx):
            return
        if self._eager_only(node, ctx):
            return
        keras = _use_keras(graph, ctx)
        test = _predicate(node.test, ctx, keras)
        rewrite = None if test is None else cond_fix.if_expression(node, ctx, keras, test)
        fix = None
        if rewrite is not None:
            fix = Fix(_fix_message(graph, ctx), Safety.SAFE, {node: rewrite[0]}, rewrite[1])
        ctx.report(node, _off_message("... if ... else ...", graph, "tf.cond"), fix)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """A tensor `training` handed to a Keras 3 layer whose `call` tests it with a Python `if`."""
        graph = ctx.graph()
        if graph is None:
            return
        value = exact_argument(node, 1, "training")
        if value is None:
            return
        layer = _python_training_layer(node, ctx)
        if layer is None or not _tensor_flag(value, node, ctx):
            return
        ctx.report(value, f"`training` is a tensor here, and Keras 3's `{layer}.call` tests it with a Python `if` "
                          f"(`if training and ...`): {_ERROR} under fit/predict and in any graph; pass a Python "
                          f"bool (the `training` Keras gave `call`)")

    def visit_BooleanOperation(self, node: cst.BooleanOperation, ctx) -> None:
        # `a and b` calls bool(a); b is only returned.
        self._boolean(node, node.left, "and" if isinstance(node.operator, cst.And) else "or", ctx)

    def visit_UnaryOperation(self, node: cst.UnaryOperation, ctx) -> None:
        if isinstance(node.operator, cst.Not):
            self._boolean(node, node.expression, "not", ctx)

    def _boolean(self, node, operand: cst.BaseExpression, word: str, ctx) -> None:
        graph = ctx.graph()
        if graph is None or _autograph(graph, ctx) or not _bool_of_tensor(operand, ctx):
            return
        if id(node) in self._inside_tests(ctx) or self._eager_only(node, ctx):
            return  # the enclosing if/while/and/or/not is reported, or it runs eagerly
        fix = None
        try:
            replacement, imports = _logical(node, ctx, _use_keras(graph, ctx)) if _is_bool_tensor(node, ctx) \
                else (None, ())
        except LookupError:
            replacement = None
        if replacement is not None:
            fix = Fix(f"Use `{'keras.ops' if _use_keras(graph, ctx) else 'tf'}.logical_{word}`",
                      Safety.UNSAFE, {node: replacement}, imports)
        ctx.report(node, _off_message(word, graph, f"tf.logical_{word}"), fix)

    def _eager_only(self, node: cst.CSTNode, ctx) -> bool:
        """Is ``node`` under `if tf.executing_eagerly():` (or `if not tf.inside_function():`)?"""
        function = ctx.scope.function()
        found = self._eager_blocks.get(id(function))
        if found is None:
            found = bindings.guarded_nodes(function.node, lambda test: _eager_test(test, ctx))
            self._eager_blocks[id(function)] = found
        return id(node) in found

    def _inside_tests(self, ctx) -> Set[int]:
        """Boolean operations inside a test or another boolean operation of this function."""
        function = ctx.scope.function()
        found = self._inner_tests.get(id(function))
        if found is None:
            found = self._inner_tests[id(function)] = bindings.condition_operands(function.node)
        return found

    cases = [
        flagged(
            """
            import keras
            import tensorflow as tf


            class Dense(keras.layers.Layer):
                def __init__(self, units, use_bias=True):
                    super().__init__()
                    self.units = units
                    self.use_bias = use_bias
                    self.bias = None

                def build(self, shape):
                    self.kernel = self.add_weight(shape=(shape[-1], self.units))
                    if self.use_bias:
                        self.bias = self.add_weight(shape=(self.units,), initializer="zeros")
                    self.scale = self.add_weight(shape=(self.units,)) if self.use_bias else None

                def call(self, x):
                    y = tf.matmul(x, self.kernel)
                    if self.bias:
                        y = y + self.bias
                    if not self.scale:
                        return y
                    return y * self.scale if not self.kernel else y


            class FrozenBN(keras.layers.BatchNormalization):
                def call(self, x, training=None):
                    if training is None:
                        training = tf.constant(False)
                    training = tf.logical_and(training, self.trainable)
                    return super().call(x, training=training)


            class Block(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.drop = keras.layers.Dropout(0.5)

                def call(self, x, training=None):
                    return self.drop(x, training=tf.logical_and(training, self.trainable))
            """,
            at=[(20, 9, "Python `if` on a Keras variable (`self.bias = self.add_weight(...)` in `build`): TypeError "
                        "under Keras 3"),
                (22, 9, "Python `if` on a Keras variable (`self.scale = self.add_weight(...)` in `build`)"),
                (24, 16, "Python `... if ... else ...` on a Keras variable (`self.kernel = self.add_weight(...)`"),
                (32, 41, "`training` is a tensor here, and Keras 3's `BatchNormalization.call` tests it with a "
                         "Python `if`"),
                (41, 38, "`training` is a tensor here, and Keras 3's `Dropout.call` tests it")],
            note="measured under Keras 3.15: `if self.bias:` on an add_weight raises TypeError (eagerly and under "
                 "fit; also bound as `add_weight(...) if use_bias else None`); a tensor training handed to BatchNormalization.call (super()) or a Dropout layer held in "
                 "self: OperatorNotAllowedInGraphError under fit and predict (eager calls run)",
        ),
        flagged(
            """
            import tensorflow as tf
            import tf_keras as keras


            class Scale(keras.layers.Layer):
                def build(self, shape):
                    self.offset = self.add_weight(shape=(), initializer="zeros")
                    self.flag = self.add_weight(shape=(), dtype="bool", initializer="ones", trainable=False)

                def call(self, x):
                    if self.offset:
                        x = x + self.offset
                    if self.flag:
                        x = x * 2.0
                    return x


            class Gate(tf.Module):
                def __init__(self):
                    super().__init__()
                    self.on = tf.Variable(True)

                @tf.function(autograph=False)
                def __call__(self, x):
                    return x * 2.0 if self.on else x

                @tf.function
                def converted(self, x):
                    if self.on:
                        x = x * 2.0
                    return x
            """,
            at=[(11, 9, "Python `if` on a float variable (`self.offset = self.add_weight(...)` in `build`): AutoGraph "
                        "needs a `tf.bool` scalar there"),
                (25, 16, "Python `... if ... else ...` on a tf.Variable (`self.on = tf.Variable(...)` in `__init__`) "
                         "where AutoGraph is off")],
            note="tf_keras converts call with AutoGraph, which rejects a float condition (ValueError under fit, "
                 "measured); a bool weight is converted to tf.cond (not flagged); a tf.Variable tested where "
                 "AutoGraph is off, and the same in a converted tf.function (not flagged)",
        ),
        clean(
            """
            import keras
            import tensorflow as tf
            import tf_keras


            class Dense(keras.layers.Layer):
                def __init__(self, units, use_bias=True):
                    super().__init__()
                    self.units = units
                    self.use_bias = use_bias
                    self.bias = None
                    self.drop = keras.layers.Dropout(0.5)
                    self.norm = keras.layers.LayerNormalization()

                def build(self, shape):
                    if self.use_bias:
                        self.bias = self.add_weight(shape=(self.units,), initializer="zeros")

                def call(self, x, training=None):
                    if self.bias is not None:
                        x = x + self.bias
                    if self.use_bias:
                        x = x * 1.0
                    x = self.drop(x, training=training)
                    x = self.drop(x, training=training and self.trainable)
                    return self.norm(x, training=tf.constant(bool(training)))


            class FrozenBN(keras.layers.BatchNormalization):
                def call(self, x, training=None):
                    return super().call(x, training=bool(training) and self.trainable)


            class LegacyBN(tf_keras.layers.BatchNormalization):
                def call(self, x, training=None):
                    training = tf.logical_and(training, self.trainable)
                    return super().call(x, training=training)


            def eager(x):
                bn = keras.layers.BatchNormalization()
                return bn(x, training=tf.constant(True))
            """,
            note="an `is not None` test and a Python bool from __init__; a Python `training` (the parameter, "
                 "or `training and self.trainable`); a tensor training to a layer whose call does not test it "
                 "(LayerNormalization), to tf_keras's BatchNormalization (smart_cond: runs under fit, measured), "
                 "or in eager code (an eager tensor has a value)",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function(autograph=False)
            def f(x):
                if tf.reduce_sum(x) > 0:
                    y = x * 2
                else:
                    y = x * 3
                return y
            """,
            fixed="""
            import tensorflow as tf

            @tf.function(autograph=False)
            def f(x):
                y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2, lambda: x * 3)
                return y
            """,
            at=[(5, 5, 'Python `if` on a tensor where')],
            run="a = f(tf.constant([1.0, 2.0]))\nb = f(tf.constant([-1.0, -2.0]))",
            effect=FIXES_ERROR,
            note="autograph=False; both branches assign y",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            class Decoder(keras.layers.Layer):
                def call(self, x, teacher=None):
                    time = tf.shape(x)[1] - 1
                    start = tf.zeros_like(x[:, 0])
                    if time == 0 or teacher is None:
                        inp = start
                    else:
                        inp = teacher[:, time - 1]
                    total = tf.reduce_sum(x)
                    if 0.0 < total < 5.0:
                        inp = inp * 2.0
                    return inp
            """,
            at=[(8, 9, "Python `if` on a tensor where"), (13, 9, "Python `if` on a tensor where")],
            note="no fix: in tf.cond's predicate, `or` on a tensor and a chained comparison still call bool() on "
                 "a tensor, and the traced else branch would subscript None (teacher is None); real code had "
                 "tf.cond(time == 0 or teacher is None, ...)",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function(autograph=False)
            def step(x, teacher=None, scale=None):
                if tf.reduce_sum(x) > 0:
                    y = teacher[:, 0]
                else:
                    y = x[:, 0]
                return y * 2.0 if tf.reduce_max(x) > 1.0 else y * scale
            """,
            at=[(5, 5, "Python `if` on a tensor where"), (9, 12, "Python `... if ... else ...` on a tensor where")],
            note="no fix: a branch reads a parameter that is None unless the caller passes it (teacher=None); "
                 "tf.cond traces both branches, so the fixed code would raise on None where the Python if never "
                 "took that branch",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            class Gate(keras.layers.Layer):
                def call(self, x, training=False):
                    total = tf.reduce_sum(x)
                    if total > 0:
                        y, z = x * 2.0, total
                        w = x + 1.0
                    else:
                        w = x - 1.0
                        y = x * 3.0
                        z = -total
                    return y, z, w
            """,
            at=[(7, 9, 'Python `if` on a tensor where')],
            note="Keras call; tuple assignment in a branch: flagged, no fix",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            class Gate(keras.layers.Layer):
                def call(self, x):
                    # scale by sign
                    if tf.reduce_sum(x) > 0:
                        x = x * 2.0
                        s = tf.ones([])
                    else:
                        s = tf.zeros([])
                        x = x * 3.0
                    return x * s
            """,
            fixed="""
            import keras
            import tensorflow as tf

            class Gate(keras.layers.Layer):
                def call(self, x):
                    # scale by sign
                    x, s = keras.ops.cond(tf.reduce_sum(x) > 0, lambda: (x * 2.0, tf.ones([])), lambda: (x * 3.0, tf.zeros([])))
                    return x * s
            """,
            at=[(7, 9, 'Python `if` on a tensor where')],
            run="layer = tf.function(Gate())\na = layer(tf.constant([1.0, 2.0]))\nb = layer(tf.constant([-1.0, -2.0]))",
            effect=FIXES_ERROR,
            note="Keras call: keras.ops.cond, several names, else branch in another order",
        ),
        flagged(
            """
            import tensorflow as tf
            from tensorflow import keras

            class Net(keras.Model):
                def train_step(self, data):
                    x, y = data
                    loss = tf.reduce_mean(tf.square(self(x) - y))
                    if loss > 1.0:
                        loss = loss / 2.0
                    return {"loss": loss}
            """,
            fixed="""
            import tensorflow as tf
            from tensorflow import keras

            class Net(keras.Model):
                def train_step(self, data):
                    x, y = data
                    loss = tf.reduce_mean(tf.square(self(x) - y))
                    loss = tf.cond(loss > 1.0, lambda: loss / 2.0, lambda: loss)
                    return {"loss": loss}
            """,
            at=[(8, 9, 'Python `if` on a tensor where')],
            run=TRAIN_STEP_RUN,
            effect=FIXES_ERROR,
            note="train_step; if without else keeps the old value; tf.keras may be Keras 2: tf.cond",
        ),
        flagged(
            """
            import tensorflow as tf
            import tf_keras as keras

            class Net(keras.Model):
                def train_step(self, data):
                    x, y = data
                    loss = tf.reduce_mean(tf.square(self(x) - y))
                    if loss > 1.0:
                        loss = loss / 2.0
                    return {"loss": loss}
            """,
            fixed="""
            import tensorflow as tf
            import tf_keras as keras

            class Net(keras.Model):
                def train_step(self, data):
                    x, y = data
                    loss = tf.reduce_mean(tf.square(self(x) - y))
                    loss = tf.cond(loss > 1.0, lambda: loss / 2.0, lambda: loss)
                    return {"loss": loss}
            """,
            at=[(8, 9, 'Python `if` on a tensor where')],
            run=TRAIN_STEP_RUN,
            effect=FIXES_ERROR,
            note="Keras 2 (tf_keras) has no keras.ops: tf.cond",
        ),
        flagged(
            """
            import tensorflow as tf

            def pick(x):
                if tf.reduce_max(x) > 1.0:
                    return x / tf.reduce_max(x)
                else:
                    return x

            f = tf.function(pick, autograph=False)
            """,
            fixed="""
            import tensorflow as tf

            def pick(x):
                return tf.cond(tf.reduce_max(x) > 1.0, lambda: x / tf.reduce_max(x), lambda: x)

            f = tf.function(pick, autograph=False)
            """,
            at=[(4, 5, 'Python `if` on a tensor where')],
            run="a = f(tf.constant([1.0, 4.0]))\nb = f(tf.constant([0.5]))",
            effect=FIXES_ERROR,
            note="both branches return",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function(autograph=False)
            def f(x):
                return x * 2 if tf.reduce_sum(x) > 0 else -x
            """,
            fixed="""
            import tensorflow as tf

            @tf.function(autograph=False)
            def f(x):
                return tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2, lambda: -x)
            """,
            at=[(5, 12, 'Python `... if ... else ...`')],
            run="a = f(tf.constant([1.0, 2.0]))\nb = f(tf.constant([-1.0, -2.0]))",
            effect=FIXES_ERROR,
            note="conditional expression",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function(autograph=False)
            def f(x):
                ok = tf.reduce_min(x) > 0 and tf.reduce_max(x) < 1
                big = not (tf.reduce_max(x) > 1 or tf.reduce_min(x) < -1)
                return ok, big

            @tf.function(autograph=False)
            def g(x):
                return not tf.reduce_any(x > 1)
            """,
            fixed="""
            import tensorflow as tf

            @tf.function(autograph=False)
            def f(x):
                ok = tf.logical_and(tf.reduce_min(x) > 0, tf.reduce_max(x) < 1)
                big = tf.logical_not(tf.logical_or(tf.reduce_max(x) > 1, tf.reduce_min(x) < -1))
                return ok, big

            @tf.function(autograph=False)
            def g(x):
                return not tf.reduce_any(x > 1)
            """,
            at=[(5, 10, 'Python `and` on a tensor'), (6, 11, 'Python `not` on a tensor'), (11, 12, 'Python `not` on a tensor')],
            run="a = f(tf.constant([0.5, 0.2]))\nb = f(tf.constant([2.0, -3.0]))",
            effect=FIXES_ERROR,
            note="and/not/or; fix only for comparisons; the inner `or` is reported with its `not`",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function(autograph=False)
            def count(x):
                i = tf.constant(0)
                while i < tf.size(x):
                    i += 1
                return i
            """,
            at=[(6, 5, 'Python `while` on a tensor')],
            note="while: flagged, no fix",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function(autograph=False)
            def f(x):
                if tf.reduce_sum(x) > 0 and x.shape[0] == 1:
                    tf.print("positive")
                elif tf.reduce_sum(x) < 0:
                    tf.print("negative")
            """,
            at=[(5, 5, 'Python `if` on a tensor where'), (7, 5, 'Python `if` on a tensor where')],
            note="if and elif each bool() a tensor; a call branch gets no fix; the `and` is not reported twice",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def f(x):
                if tf.reduce_sum(x) > 0:
                    y = x * 2
                return y
            """,
            at=[(5, 5, '`y` set in one branch of an')],
            note="AutoGraph: 'y' must also be initialized in the else branch",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def f(x):
                with tf.name_scope("pick"):
                    if tf.reduce_sum(x) > 0:
                        pass
                    else:
                        y = x * 2
                if tf.reduce_sum(x) > 1:
                    x = y
                return x
            """,
            at=[(6, 9, '`y` set in one branch of an')],
            note="AutoGraph: 'y' must also be initialized in the main branch; used in a later if",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def f(x):
                tf.print(x)
                if tf.reduce_sum(x) > 0:
                    return x * 2
            """,
            at=[(6, 5, '`return` in one branch of an')],
            note="AutoGraph: the else branch must also have a return statement",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf
            import tf_keras

            class Gate(keras.layers.Layer):
                def call(self, x):
                    if tf.reduce_sum(x) > 0:
                        x = x * 2.0
                    return x

            class OldGate(tf_keras.layers.Layer):
                def call(self, x):
                    if tf.reduce_sum(x) > 0:
                        x = x * 2.0
                    return x
            """,
            fixed="""
            import keras
            import tensorflow as tf
            import tf_keras

            class Gate(keras.layers.Layer):
                def call(self, x):
                    x = keras.ops.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x)
                    return x

            class OldGate(tf_keras.layers.Layer):
                def call(self, x):
                    if tf.reduce_sum(x) > 0:
                        x = x * 2.0
                    return x
            """,
            at=[(7, 9, 'Python `if` on a tensor where')],
            run="a = tf.function(Gate())(tf.constant([1.0, 2.0]))\nb = tf.function(OldGate())(tf.constant([-1.0]))",
            effect=FIXES_ERROR,
            note="Keras flavour is per class: an `import tf_keras` elsewhere in the file does not silence a Keras 3 layer",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            @tf.function
            def scaled(x):
                if tf.reduce_sum(x) > 0:
                    x = x * 2.0
                return x

            class Block(keras.layers.Layer):
                def call(self, x):
                    return scaled(x)
            """,
            note="a tf.function converts its own body even when a Keras 3 call (no AutoGraph) calls it",
        ),
        clean(
            """
            import jax
            import keras

            class Gate(keras.layers.Layer):
                def call(self, x):
                    if jax.numpy.sum(x) > 0:
                        x = x * 2.0
                    return x
            """,
            note="a Keras 3 layer in a JAX module (no TensorFlow import): not TensorFlow graph code",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def f(x):
                if tf.reduce_sum(x) > 0:
                    y = x * 2
                else:
                    y = x * 3
                z = x if tf.reduce_sum(x) > 0 else -x
                ok = tf.reduce_min(x) > 0 and not tf.reduce_max(x) > 1
                while tf.reduce_sum(x) > 0:
                    x = x - 1
                return y + z, ok
            """,
            note="AutoGraph converts these in a plain tf.function",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def f(x):
                y = x
                if tf.reduce_sum(x) > 0:
                    y = x * 2
                if tf.reduce_sum(x) > 0:
                    z = x * 2
                if tf.reduce_sum(x) > 0:
                    w = x
                w = x * 5
                if tf.reduce_sum(x) > 0:
                    return x
                return y + w
            """,
            note="AutoGraph: initialised before, unused after, overwritten; return then fall-through",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def f(x):
                if tf.reduce_sum(x) > 0:
                    y = 1
                else:
                    return x
                return x + y
            """,
            note="the other branch returns: AutoGraph accepts this",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            class Block(keras.layers.Layer):
                def call(self, x, training=None, mask=None):
                    if training:
                        x = x * 0.5
                    if mask is not None and x.shape[0] == 1:
                        x = x * mask
                    if x.dtype == tf.float32 and self.limit > 0:
                        x = x + 1
                    if len(x.shape) > 2 or not self.built:
                        x = tf.reshape(x, [-1])
                    return x
            """,
            note="conditions on Python values",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            class Gate(keras.layers.Layer):
                @tf.function
                def call(self, x):
                    if tf.reduce_sum(x) > 0:
                        y = x * 2.0
                    else:
                        y = x * 3.0
                    return y
            """,
            note="a tf.function-decorated call gets its own AutoGraph, even under Keras",
        ),
        clean(
            """
            import tensorflow as tf

            class Crf(tf.keras.layers.Layer):
                def call(self, inputs, mask=None):
                    first = tf.reduce_all(inputs[:, 0] > 0)
                    if mask is not None and tf.executing_eagerly():
                        if not first:
                            raise ValueError("left padding")
                    if not tf.executing_eagerly():
                        return inputs
                    else:
                        return inputs * 2 if first else inputs
            """,
            note="code guarded by tf.executing_eagerly() runs eagerly",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras as keras

            class Gate(keras.layers.Layer):
                def call(self, x):
                    if tf.reduce_sum(x) > 0:
                        y = x * 2.0
                    else:
                        y = x * 3.0
                    return y
            """,
            note="Keras 2 (tf_keras) converts Layer.call with AutoGraph",
        ),
        flagged(
            """
            import tensorflow as tf
            import tf_keras as keras

            class Net(keras.Model):
                def train_step(self, data):
                    x, y = data
                    loss = tf.reduce_mean(tf.square(self(x) - y))
                    if loss > 0.5:
                        self.optimizer.minimize(loss, self.trainable_variables)
                    return {"loss": loss}
            """,
            at=[(8, 9, 'Python `if` on a tensor where')],
            note="but not train_step: fails under tf_keras too; a call in the branch: no fix",
        ),
        clean(
            """
            import tensorflow as tf

            def f(x):
                if tf.reduce_sum(x) > 0:
                    return x * 2
                return not tf.reduce_any(x)

            @tf.function(autograph=False)
            def g(x):
                def host(v):
                    return v * 2 if tf.reduce_sum(v) > 0 else v
                return tf.py_function(host, [x], tf.float32)
            """,
            note="eager code and tf.py_function",
        ),
    ]


# -- conditions -----------------------------------------------------------
def _autograph(graph, ctx) -> bool:
    """Does AutoGraph convert this function? The engine decides it per function:
    a `tf.function` converts its own body whoever calls it; Keras 3 methods are
    not converted; tf_keras converts `call` and what it calls."""
    return graph.autograph


def _bool_of_tensor(expr: cst.BaseExpression, ctx) -> bool:
    """Would Python call bool() on a tensor to use ``expr`` as a condition?"""
    if isinstance(expr, cst.BooleanOperation):
        return _bool_of_tensor(expr.left, ctx) or _bool_of_tensor(expr.right, ctx)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return _bool_of_tensor(expr.expression, ctx)
    if isinstance(expr, cst.Name) and _is_parameter(expr.value, ctx):
        return False  # `if training:`, `if mask:`: usually Python values
    return ctx.is_tensor(expr)


_EAGER_TRUE = {"tensorflow.executing_eagerly": True, "tensorflow.inside_function": False}


def _eager_test(test: cst.BaseExpression, ctx) -> Optional[bool]:
    """True if ``test`` holds only when running eagerly, False if only when tracing, else None."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _eager_test(test.expression, ctx)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        for side in (test.left, test.right):
            if _eager_test(side, ctx) is True:
                return True
        return None
    if isinstance(test, cst.Call) and not test.args:
        return _EAGER_TRUE.get(ctx.qualname(test.func))
    return None


def _is_parameter(name: str, ctx) -> bool:
    return ctx.is_parameter(name)


def _is_bool_tensor(expr: cst.BaseExpression, ctx) -> bool:
    """A comparison of tensors, or and/or/not of such: certainly a bool tensor."""
    if isinstance(expr, cst.BooleanOperation):
        return _is_bool_tensor(expr.left, ctx) and _is_bool_tensor(expr.right, ctx)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return _is_bool_tensor(expr.expression, ctx)
    return isinstance(expr, cst.Comparison) and ctx.is_tensor(expr) and cond_fix.is_pure(expr, ctx)


def _predicate(test: cst.BaseExpression, ctx, keras: bool) -> Optional[cond_fix.Test]:
    """``test`` as ``tf.cond``'s predicate: itself when Python calls no bool() in it; and/or/not of
    pure comparisons of tensors as ``tf.logical_*`` (both sides evaluated, both free of effects;
    the predicate is only read by tf.cond, so a bool tensor stands for the Python bool); else None
    (`time == 0 or teacher is None`: `or` still calls bool() on the tensor, and the branch the
    Python part guards, `teacher[:, t]`, is traced too, on None)."""
    if not cond_fix.calls_bool(test):
        return test, ()
    if not (isinstance(test, (cst.BooleanOperation, cst.UnaryOperation)) and _is_bool_tensor(test, ctx)):
        return None
    try:
        made = _logical(test, ctx, keras)
    except LookupError:
        return None
    return None if cond_fix.calls_bool(made[0]) else made


def _logical(expr: cst.BaseExpression, ctx, keras: bool) -> Tuple[cst.BaseExpression, Tuple[str, ...]]:
    if isinstance(expr, cst.BooleanOperation):
        word = "and" if isinstance(expr.operator, cst.And) else "or"
        left, imports = _logical(expr.left, ctx, keras)
        right, more = _logical(expr.right, ctx, keras)
        func, own = _module_expr(ctx, keras, f"logical_{word}")
        return cst.Call(func, [cst.Arg(left), cst.Arg(right)]), imports + more + own
    if isinstance(expr, cst.UnaryOperation):
        inner, imports = _logical(expr.expression, ctx, keras)
        func, own = _module_expr(ctx, keras, "logical_not")
        return cst.Call(func, [cst.Arg(inner)]), imports + own
    return expr.with_changes(lpar=(), rpar=()), ()


def _module_expr(ctx, keras: bool, name: str):
    spelled = ctx.module_expr("keras", f"ops.{name}", exact=True) if keras else ctx.module_expr("tensorflow", name)
    if spelled is None:
        raise LookupError(name)  # no name spells the module here: no fix
    return spelled


def _use_keras(graph, ctx) -> bool:
    """Write ``keras.ops.*`` only in a Keras method of a file that imports Keras 3
    itself (``import keras``): ``tf.keras`` may be Keras 2 on older TensorFlow, and
    ``tf_keras`` is Keras 2, where ``keras.ops`` does not exist; ``tf.*`` works in both."""
    return (graph.kind == "keras" and graph.keras == "keras3"
            and ctx.resolver.module_alias("keras", ctx.scope, exact=True) is not None)


def _off_message(what: str, graph, use: str) -> str:
    return f"Python `{what}` on a tensor where AutoGraph is off: {_ERROR}"


def _fix_message(graph, ctx) -> str:
    return "Use `keras.ops.cond`" if _use_keras(graph, ctx) else "Use `tf.cond`"


# -- AutoGraph on: what tf.cond cannot express ------------------------------
def _autograph_if_problem(node: cst.If, ctx) -> Optional[str]:
    function = ctx.scope.function()
    if function is None or not isinstance(function.node, cst.FunctionDef):
        return None
    path = bindings.block_path(bindings.block_statements(function.node.body), node)
    if path is None:
        return None  # inside a loop or another if: out of this rule's depth
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        return None
    branches = [node.body, orelse.body if orelse is not None else None]
    exits = [bindings.contains(b, (cst.Return, cst.Raise, cst.Break, cst.Continue)) for b in branches]
    # A name set in one branch and read after the `if`.
    if not any(exits):
        stored = [bindings.bound_names(b) for b in branches]
        for i, other in ((0, 1), (1, 0)):
            for name in sorted(stored[i] - stored[other]):
                if name in function.globals or _is_parameter(name, ctx):
                    continue
                if any(name in bindings.mentions(s) for s in bindings.statements_before(path)):
                    continue
                if bindings.read_after(name, path):
                    return f"`{name}` set in one branch of an `if` on a tensor only: AutoGraph fails at trace time"
    # A return in one branch only, when the function then ends.
    if any(index + 1 < len(statements) for statements, index in path):
        return None
    returns = [b is not None and bindings.ends_in_return(b) for b in branches]
    if returns[0] != returns[1]:
        other = branches[1] if returns[0] else branches[0]
        if other is not None and bindings.contains(other, (cst.Return, cst.Raise)):
            return None
        return "`return` in one branch of an `if` on a tensor only: AutoGraph fails at trace time"
    return None


# -- a variable tested as a bool (`if self.bias:`) -----------------------------
def _variable_test(node: cst.CSTNode, test: cst.BaseExpression, what: str, graph, ctx) -> bool:
    """Report (and return True) when ``test`` uses ``self.x``, a variable bound
    in the class (``add_weight``, ``tf.Variable``), as a Python bool where that fails."""
    found = _variable_operand(test, ctx)
    if found is None:
        return False
    expr, fact = found
    message = _variable_message(what, fact, graph, ctx)
    if message is None:
        return False
    ctx.report(node, message)
    return True


def _variable_operand(expr: cst.BaseExpression, ctx):
    if isinstance(expr, cst.BooleanOperation):
        return _variable_operand(expr.left, ctx) or _variable_operand(expr.right, ctx)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return _variable_operand(expr.expression, ctx)
    if isinstance(expr, cst.Attribute):
        fact = ctx.values.attribute(expr, ctx.scope)
        if fact is not None and any(_makes_variable(b.value) for b in fact.bound) and fact.kind == values.VARIABLE:
            return expr, fact
    return None


def _makes_variable(value) -> bool:
    """A cheap look before asking for the kind: is the binding a call of
    ``add_weight``/``add_variable`` or of something named ``Variable``?"""
    call = values.made_by(value) if isinstance(value, cst.BaseExpression) else None
    if call is None:
        return False
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name in _WEIGHT_METHODS or name == "Variable"


def _variable_message(what: str, fact, graph, ctx) -> Optional[str]:
    binding = next((b for b in fact.bound
                    if isinstance(b.value, cst.BaseExpression) and values.made_by(b.value) is not None), None)
    if binding is None:
        return None
    call = values.made_by(binding.value)
    func = call.func
    weight = isinstance(func, cst.Attribute) and func.attr.value in _WEIGHT_METHODS
    flavour = ctx.graphs.keras_flavour(fact.cls)
    keras_variable = (weight and flavour == KERAS3) or (
        ctx.qualname(func, binding.method) in _KERAS_VARIABLES and ctx.migration.api_flavour(func, binding.method)
        == KERAS3)
    made = f"`self.{fact.name} = {_short(func)}(...)` in `{binding.where}`"
    instead = f"test `self.{fact.name} is not None`"
    if keras_variable and not ctx.migration.legacy_env:
        return (f"Python `{what}` on a Keras variable ({made}): TypeError under Keras 3 (\"A Keras Variable cannot "
                f"be used as a boolean\"); {instead}")
    if graph is None:
        return None
    if not graph.autograph:
        return f"Python `{what}` on a tf.Variable ({made}) where AutoGraph is off: {_ERROR}; {instead}"
    if weight and flavour is not None and _float_weight(call):
        return (f"Python `{what}` on a float variable ({made}): AutoGraph needs a `tf.bool` scalar there "
                f"(ValueError: condition of if statement expected to be `tf.bool` scalar); {instead}")
    return None


def _float_weight(call: cst.Call) -> bool:
    """``add_weight(...)`` without a dtype, or with a float one (the default is float32)."""
    for arg in call.args:
        if arg.star:
            return False
        if arg.keyword is not None and arg.keyword.value == "dtype":
            value = arg.value
            text = value.evaluated_value if isinstance(value, cst.SimpleString) else (
                value.attr.value if isinstance(value, cst.Attribute) else None)
            return isinstance(text, str) and text.startswith(("float", "bfloat", "half", "double"))
    return True


def _short(func: cst.BaseExpression) -> str:
    text = cst.Module([]).code_for_node(func)
    return text if len(text) <= 30 else "..." + text[-27:]


# -- a tensor `training` handed to a Keras 3 layer ------------------------------
def _python_training_layer(call: cst.Call, ctx) -> Optional[str]:
    """The Keras 3 layer class (of ``_PYTHON_TRAINING``) whose ``call`` this call
    runs: ``super().call(...)`` in a subclass, ``layer(...)``/``layer.call(...)``
    on an instance, or None."""
    func = call.func
    migration = ctx.migration
    if isinstance(func, cst.Attribute) and func.attr.value == "call" and isinstance(func.value, cst.Call) \
            and isinstance(func.value.func, cst.Name) and func.value.func.value == "super" \
            and ctx.binding("super") is None:
        cls = ctx.scope.method_class()
        if cls is None or ctx.graphs.keras_flavour(cls) != KERAS3 or migration.legacy_env:
            return None
        base = migration.class_base(cls)
        return _layer_name(base)
    # layer.call(x, training=t) runs the layer's call; layer(x, training=t) and self.bn(x, ...) too
    receiver = func.value if isinstance(func, cst.Attribute) and func.attr.value == "call" else func
    base = migration.object_class(receiver, ctx.scope)
    name = _layer_name(base)
    if name is None or migration.object_flavour(receiver, ctx.scope) != KERAS3 or migration.legacy_env:
        return None
    return name


def _layer_name(qualname: Optional[str]) -> Optional[str]:
    if qualname is None or not qualname.startswith("keras.layers."):
        return None
    name = qualname.rsplit(".", 1)[1]
    return name if name in _PYTHON_TRAINING else None


def _tensor_flag(value: cst.BaseExpression, at: cst.CSTNode, ctx) -> bool:
    """Is ``value`` a tensor that is no bare parameter (a parameter `training`
    is the Python value Keras passes)? A name counts when every binding
    reaching ``at`` is a tensor expression."""
    if isinstance(value, cst.Name):
        found = ctx.assigned(value.value, at=at)
        if found is None or found.scope is not ctx.scope.function() or not found.own_values:
            return False
        return all(isinstance(v, cst.BaseExpression) and ctx.is_tensor(v, found.scope) for v in found.own_values)
    return ctx.is_tensor(value)
