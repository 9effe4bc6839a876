"""Graph code that Keras and TensorFlow run for you (semantic/context.py).

Each fact below was measured under TensorFlow 2.21 (CPU), Keras 3.15 and
tf_keras 2.21 before it was written: `.numpy()` in the body raises
AttributeError (a SymbolicTensor), a Python side-effect counter runs once per
trace, and a Python `if` on a tensor raises OperatorNotAllowedInGraphError
where AutoGraph does not convert the body.
"""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.base import REGISTRY
from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.semantic.tensors import TensorInference


def analysed(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    model = build_model(module, ["Call", "Name", "Return"])
    resolver = Resolver()
    graphs = GraphAnalysis(model, resolver)
    graphs.run()
    return model, resolver, graphs


def contexts(source: str):
    model, _, _ = analysed(source)
    found = {}
    for scope in model.scopes:
        if scope.kind != "function":
            continue
        name = scope.name if scope.enclosing_class is None else f"{scope.enclosing_class.name}.{scope.name}"
        found[name] = None if scope.excluded else scope.graph
    return found


KERAS = """
import numpy as np
import tensorflow as tf
import keras

def my_loss(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred))

def my_metric(y_true, y_pred):
    return tf.reduce_mean(y_pred)

def focal(gamma):
    def loss(y_true, y_pred):
        return tf.reduce_mean(y_pred) * gamma
    return loss

class Weighted:
    def __call__(self, y_true, y_pred):
        return tf.reduce_mean(y_pred)

class MyLoss(keras.losses.Loss):
    def __init__(self, k=2.0, **kwargs):
        super().__init__(**kwargs)
        self.k = k

    def call(self, y_true, y_pred):
        return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1) * self.k

class MyMetric(keras.metrics.Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.total = self.add_weight(name="total", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.total.assign_add(tf.reduce_mean(y_pred))

    def result(self):
        return tf.identity(self.total)

    def reset_state(self):
        self.total.assign(0.0)

def shift(x):
    return x + 1.0

class Mixin:
    def call(self, x):
        return x * 2.0

    def helper(self, x):
        return x

class StepMixin:
    def train_step(self, data):
        return {}

class Net(Mixin, keras.layers.Layer):
    pass

class Trainer(StepMixin, keras.Model):
    pass

def unused_loss(y_true, y_pred):
    return y_pred

model = keras.Sequential([keras.layers.Lambda(shift), keras.layers.Lambda(lambda t: t * 2.0)])
weighted = Weighted()
model.compile("adam", loss=my_loss, metrics=[my_metric, focal(2.0), "accuracy", MyMetric()],
              weighted_metrics={"out": weighted})
"""


def test_keras_runs_these_as_graph_code():
    found = contexts(KERAS)
    for name in ("my_loss", "my_metric", "loss", "Weighted.__call__", "MyLoss.call", "MyMetric.update_state",
                 "MyMetric.result", "shift", "Mixin.call", "StepMixin.train_step"):
        info = found[name]
        assert info is not None and info.kind == "keras", name
        assert info.keras == "keras3" and info.autograph is False and info.status == "disabled", name
    assert "given to `compile`" in found["my_loss"].reason
    assert "metric's `update_state`" in found["MyMetric.update_state"].reason
    assert "`Lambda` layer" in found["shift"].reason
    assert "inherited by `Net`" in found["Mixin.call"].reason
    assert "inherited by `Trainer`" in found["StepMixin.train_step"].reason
    # A loss's and a metric's (y_true, y_pred) are tensors; a call's data only.
    assert found["my_loss"].data_parameters == 2 and found["MyLoss.call"].data_parameters == 2
    assert found["shift"].data_parameters == 1 and found["Mixin.call"].data_parameters == 1
    # Eager: __init__, reset_state (Keras calls it between epochs), the factory
    # itself, a mixin method Keras does not call, an unused function.
    for name in ("MyLoss.__init__", "MyMetric.__init__", "MyMetric.reset_state", "focal", "Mixin.helper",
                 "unused_loss"):
        assert found[name] is None, name


def test_lambda_layer_functions_of_lambdas_too():
    model, _, _ = analysed(KERAS)
    lambdas = [s for s in model.scopes if s.kind == "lambda"]
    assert lambdas and all(s.graph is not None and s.graph.kind == "keras" for s in lambdas)


def test_loss_and_metric_parameters_are_tensors():
    model, resolver, graphs = analysed(KERAS)
    tensors = TensorInference(resolver, graphs)
    scopes = {s.name: s for s in model.scopes if s.kind == "function"}
    kept = []
    for function, names in (("my_loss", ("y_true", "y_pred")), ("update_state", ("y_true", "y_pred")),
                            ("shift", ("x",))):
        scope = scopes[function]
        for name in names:
            node = cst.Name(name)
            kept.append(node)  # the inference caches answers by node identity
            assert tensors.is_tensor(node, scope), (function, name)
    node = cst.Name("sample_weight")
    kept.append(node)
    assert not tensors.is_tensor(node, scopes["update_state"])


def test_tf_keras_converts_losses_metrics_and_call_not_lambda_nor_steps():
    found = contexts(KERAS.replace("import keras\n", "import tf_keras as keras\n"))
    for name in ("my_loss", "my_metric", "MyLoss.call", "MyMetric.update_state", "MyMetric.result", "Mixin.call"):
        info = found[name]
        assert info.kind == "keras" and info.keras == "tf_keras" and info.autograph, name
        assert info.status == "unspecified", name
    assert found["shift"].autograph is False  # a Lambda function is not converted in tf_keras either
    assert found["StepMixin.train_step"].autograph is False


@pytest.mark.parametrize("compile_call,traced", [
    ('model.compile("adam", loss=my_loss, run_eagerly=True)', False),
    ('model.compile("adam", loss=my_loss, run_eagerly=DEBUG)', False),
    ('model.fit(x, y, loss=my_loss)', False),
    ('model.compile("adam", my_loss, run_eagerly=False)', True),
    ('model.compile(optimizer="adam", loss=[my_loss])', True),
])
def test_compile_look_alikes(compile_call, traced):
    source = f"""
    import tensorflow as tf

    def my_loss(y_true, y_pred):
        return tf.reduce_mean(y_pred)

    {compile_call}
    """
    assert (contexts(source)["my_loss"] is not None) == traced


@pytest.mark.parametrize("imports,traced", [("import jax\nimport keras", False),
                                             ("import tensorflow as tf\nimport keras", True)])
def test_other_backend_module_is_not_tensorflow_graph_code(imports, traced):
    source = imports + '\n\ndef my_loss(y_true, y_pred):\n    return y_pred\n\nmodel.compile("adam", loss=my_loss)\n'
    assert (contexts(source)["my_loss"] is not None) == traced


CONTROL = """
import tensorflow as tf

def fn(x):
    return x * 2.0

def cond_fn(i, v):
    return i < 3

def body(i, v):
    return i + 1, v

def true_fn():
    return tf.constant(1.0)

def false_fn():
    return tf.constant(0.0)

def branch_a():
    return tf.constant(1.0)

def branch_b():
    return tf.constant(2.0)

def pair_fn():
    return tf.constant(3.0)

def replica_fn(x):
    return x

def scanned(a, e):
    return a + e

@tf.function
def step(x):
    y = tf.map_fn(fn, x)
    tf.while_loop(cond_fn, body, [0, x])
    tf.cond(x[0] > 0, true_fn, false_fn)
    tf.switch_case(tf.constant(0), [branch_a, branch_b])
    tf.case([(x[0] > 0, pair_fn)], default=branch_a)
    tf.distribute.get_strategy().run(replica_fn, args=(x,))
    tf.scan(scanned, x)

    def nested_body(i, v):
        return i + 1, v

    tf.while_loop(cond_fn, nested_body, [0, x])
    return y
"""


def test_functions_handed_to_control_flow_from_graph_code():
    found = contexts(CONTROL)
    for name in ("fn", "cond_fn", "body", "true_fn", "false_fn", "branch_a", "branch_b", "pair_fn", "replica_fn",
                 "scanned"):
        assert found[name] is not None and found[name].kind == "handed", name
    assert "`tf.map_fn` runs it in the graph of `step`" == found["fn"].reason
    # AutoGraph: tf.map_fn converts its function under a tf.function, and so does
    # strategy.run; tf.while_loop, tf.cond, switch_case, case and scan do not.
    assert found["fn"].autograph and found["replica_fn"].autograph
    for name in ("cond_fn", "body", "true_fn", "false_fn", "branch_a", "pair_fn", "scanned"):
        assert found[name].autograph is False, name
    # Nested in the tf.function: converted with it.
    assert found["nested_body"].autograph


def test_control_flow_called_eagerly_runs_its_functions_eagerly():
    # Called eagerly, tf.map_fn and tf.while_loop run Python loops and tf.cond the
    # branch taken (`.numpy()` works there); called from a tf.function, they trace.
    source = CONTROL.replace("@tf.function\n", "") + """
def traced(x):
    return tf.map_fn(fn, x)

traced = tf.function(traced)
"""
    found = contexts(source)
    for name in ("cond_fn", "body", "true_fn", "false_fn", "branch_a", "pair_fn", "replica_fn", "scanned"):
        assert found[name] is None, name
    assert found["fn"] is not None and found["fn"].kind == "handed"  # from the tf.function only


def test_vectorized_map_traces_even_eagerly_and_converts_nothing():
    source = """
    import tensorflow as tf

    def per_row(x):
        return x * 2.0

    y = tf.vectorized_map(per_row, tf.ones([3, 2]))
    """
    info = contexts(source)["per_row"]
    assert info is not None and info.kind == "handed" and info.autograph is False
    assert "even when called eagerly" in info.reason


def test_map_fn_in_keras3_code_is_not_converted_but_in_tf_keras_it_is():
    source = """
    import tensorflow as tf
    import keras

    def per_row(x):
        return x

    def replica(x):
        return x

    class Net(keras.layers.Layer):
        def call(self, x):
            tf.distribute.get_strategy().run(replica, args=(x,))
            return tf.map_fn(per_row, x)
    """
    found = contexts(source)
    assert found["per_row"].kind == "handed" and found["per_row"].autograph is False
    found = contexts(source.replace("import keras\n", "import tf_keras as keras\n"))
    assert found["per_row"].autograph is True
    assert found["replica"].autograph is False  # strategy.run converts only under a tf.function


def test_py_function_bodies_stay_eager_inside_handed_functions():
    source = """
    import tensorflow as tf

    def host(x):
        return x.numpy()

    def fn(x):
        return tf.py_function(host, [x], tf.float32)

    @tf.function
    def step(x):
        return tf.map_fn(fn, x)
    """
    found = contexts(source)
    assert found["fn"].kind == "handed"
    assert found["host"] is None


def test_handed_helpers_take_the_autograph_of_the_handed_function():
    source = """
    import tensorflow as tf

    def helper(v):
        return v

    def body(i, v):
        return i + 1, helper(v)

    @tf.function
    def step(x):
        return tf.while_loop(lambda i, v: i < 2, body, [0, x])
    """
    found = contexts(source)
    assert found["body"].autograph is False
    assert found["helper"].kind == "called" and found["helper"].autograph is False


def lint(source: str, codes):
    rules = [REGISTRY[code] for code in codes]
    return [(f.row, f.col + 1, f.code) for f in lint_source(textwrap.dedent(source), "t.py", rules).findings]


def test_rules_see_the_new_contexts():
    source = """
    import numpy as np
    import tensorflow as tf
    import keras

    def my_loss(y_true, y_pred):
        return tf.reduce_mean(y_pred.numpy())

    def body(i, v):
        return i + 1, v * np.random.rand()

    @tf.function
    def step(x):
        return tf.while_loop(lambda i, v: i < 2, body, [0, x])

    def eager_fn(x):
        return x.numpy()

    tf.map_fn(eager_fn, tf.ones([2]))
    model.compile("adam", loss=my_loss)
    """
    found = lint(source, ["TFG101", "TFG108"])
    assert (7, 27, "TFG101") in found
    assert (10, 23, "TFG108") in found
    assert not any(line == 17 for line, _, _ in found)


def test_tf_functions_given_to_compile_are_traced_only_by_keras():
    source = """
    import tensorflow as tf

    @tf.function
    def my_loss(y_true, y_pred):
        return tf.reduce_mean(y_pred)

    @tf.function
    def my_metric(y_true, y_pred):
        return tf.reduce_mean(y_pred)

    @tf.function
    def debug_loss(y_true, y_pred):
        return tf.reduce_mean(y_pred)

    model.compile("adam", loss=my_loss, metrics=[my_metric, "accuracy"])
    model.compile("adam", loss=debug_loss, run_eagerly=True)
    """
    model, _, graphs = analysed(source)
    traced = {s.name: graphs.uses.traced_by_library(s) for s in model.scopes if s.kind == "function"}
    assert traced == {"my_loss": True, "my_metric": True, "debug_loss": False}


def test_a_step_handed_to_strategy_run_still_runs_eagerly_where_eager_code_calls_it():
    """The single-device path calls the step eagerly in a loop, the distributed one
    hands it to strategy.run from a tf.function: the step is graph code there and
    an eager training step here (strutive07/transformer-tensorflow2.0)."""
    source = """
    import tensorflow as tf

    class Trainer:
        def __init__(self, model, strategy=None):
            self.model = model
            self.optimizer = tf.keras.optimizers.Adam()
            self.strategy = strategy

        def fit(self, dataset):
            for x, y in dataset:
                if self.strategy is None:
                    self.train_step(x, y)
                else:
                    self.distributed_train_step(x, y)

        def train_step(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x) - y))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            return loss

        @tf.function
        def distributed_train_step(self, x, y):
            return self.strategy.run(self.train_step, args=(x, y))
    """
    assert contexts(source)["Trainer.train_step"].kind == "handed"
    assert lint(source, ["TFG405"]) == [(17, 9, "TFG405")]


def test_methods_of_objects_of_the_modules_own_classes_called_from_graph_code_are_graph_code():
    found = contexts("""
        import tensorflow as tf

        class History:
            def __init__(self):
                self.items = []

            def __call__(self, item):
                self.items.append(item)
                return item

            def query(self, item):
                return item

            def unused(self):
                return 0

        class Pool:
            def query(self, item):
                return item

        class Net(tf.keras.Model):
            def __init__(self, pool):
                super().__init__()
                self.history = History()
                self.pool = pool  # a parameter: its class is not told

            @tf.function
            def train_step(self, data):
                a = self.history(data)
                b = self.history.query(data)
                return a + b + self.pool.query(data)

        def eager(history: History, x):
            return History().query(x)
    """)
    assert found["History.__call__"] is not None and found["History.query"] is not None
    assert "train_step" in found["History.query"].reason
    assert found["History.unused"] is None and found["History.__init__"] is None
    assert found["Pool.query"] is None  # never every method of that name
