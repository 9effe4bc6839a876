"""Tensor inference on what graph code calls: Keras models, layers, losses and
metrics, gradient tapes, TFP distributions, same-module functions; and the
look-alikes that must stay "not a tensor"."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.semantic.tensors import TensorInference


def probes(source: str):
    """Each ``probe = <expr>`` in ``source`` -> whether the expression is a tensor."""
    module = cst.parse_module(textwrap.dedent(source))
    model = build_model(module, ["Call", "Name", "Return"])
    resolver = Resolver()
    graphs = GraphAnalysis(model, resolver)
    graphs.run()
    inference = TensorInference(resolver, graphs)
    found = {}
    for node, scope in model.index["Assign"]:
        target = node.targets[0].target
        if isinstance(target, cst.Name) and target.value.startswith("probe"):
            found[module.code_for_node(node.value)] = inference.is_tensor(node.value, scope)
    return found


def check(source: str, expected: dict) -> None:
    got = probes(source)
    assert {k: got.get(k) for k in expected} == expected


PRELUDE = """
import numpy as np
import tensorflow as tf
import keras
from keras import layers
import tensorflow_probability as tfp
tfd = tfp.distributions
"""


def test_keras_models_and_layers():
    check(
        PRELUDE
        + """
model = keras.Sequential([layers.Dense(2)])
functional = keras.Model(inputs, outputs)
loaded = keras.models.load_model("m.keras")
legacy = tf.keras.Sequential()
not_a_model = 3
rebound = keras.Sequential()
rebound = 4
spec = keras.layers.InputSpec(ndim=2)

class Block(keras.layers.Layer):
    pass

class Host:
    def __call__(self, x):
        return np.asarray(x)

@tf.function
def f(x):
    probe1 = model(x)
    probe2 = functional(x)
    probe3 = loaded(x)
    probe4 = legacy(x)
    probe5 = layers.Dense(3)(x)
    probe6 = Block()(x)
    probe7 = model(x)[0]
    probe8 = model.call(x)
    probe_a = model.predict(x)
    probe_b = len(model(x).shape)
    probe_c = model(x).shape
    probe_d = not_a_model(x)
    probe_e = rebound(x)
    probe_f = Host()(x)
    probe_g = spec(x)
    probe_h = model.predict_on_batch(x)
    probe_i = model.evaluate(x)
""",
        {
            "model(x)": True, "functional(x)": True, "loaded(x)": True, "legacy(x)": True,
            "layers.Dense(3)(x)": True, "Block()(x)": True, "model(x)[0]": True, "model.call(x)": True,
            "model.predict(x)": False, "len(model(x).shape)": False, "model(x).shape": False,
            "not_a_model(x)": False, "rebound(x)": False, "Host()(x)": False, "spec(x)": False,
            "model.predict_on_batch(x)": False, "model.evaluate(x)": False,
        },
    )


def test_layers_that_return_lists_or_tuples():
    check(
        PRELUDE
        + """
cell = keras.layers.LSTMCell(10)
stateful = keras.layers.LSTM(4, return_state=True)
lstm = keras.layers.LSTM(4, return_state=False)
mha = keras.layers.MultiHeadAttention(num_heads=2, key_dim=2)

@tf.function
def f(x, state):
    out, scores = mha(x, x, return_attention_scores=True)
    probe1 = out
    probe2 = lstm(x)
    probe3 = mha(x, x)
    probe_a = cell(x, state)
    probe_b = stateful(x)
    probe_c = mha(x, x, return_attention_scores=True)
""",
        {
            "out": True, "lstm(x)": True, "mha(x, x)": True,
            "cell(x, state)": False, "stateful(x)": False, "mha(x, x, return_attention_scores=True)": False,
        },
    )


def test_same_module_layers_whose_call_returns_a_tuple():
    check(
        PRELUDE
        + """
class Attention(keras.layers.Layer):
    def call(self, query, values):
        weights = tf.nn.softmax(query)
        return weights * values, weights

class Named(keras.layers.Layer):
    def call(self, x):
        return {"logits": x}

class Scaled(Attention):
    def call(self, query, values):
        return query * 2

class Decoder(keras.Model):
    def __init__(self):
        super().__init__()
        self.attention = Attention()

    def call(self, x):
        context, weights = self.attention(x, x)
        probe1 = context
        probe2 = Scaled()(x, x)
        probe3 = self.attention(x, x)[0]
        probe_a = self.attention(x, x)
        probe_b = Named()(x)
        return x
""",
        {
            "context": True, "Scaled()(x, x)": True, "self.attention(x, x)[0]": True,
            "self.attention(x, x)": False, "Named()(x)": False,
        },
    )


def test_self_attributes_assigned_keras_objects():
    check(
        PRELUDE
        + """
class Encoder(keras.layers.Layer):
    pass

class Net(keras.Model):
    def __init__(self, table, units: int = 3):
        super().__init__()
        self.dense = layers.Dense(units)
        self.encoder = Encoder()
        self.lazy = None
        self.blocks = [layers.Dense(2) for _ in range(3)]
        self.pair = (layers.Dense(2), layers.Dense(3))
        self.table = table
        self.host = np.zeros(3)
        self.mixed = layers.Dense(2)
        self.count = 0

    def build(self, shape):
        self.lazy = layers.Dense(4)
        self.mixed = lambda v: v

    def call(self, inputs):
        probe1 = self.dense(inputs)
        probe2 = self.encoder(inputs)
        probe3 = self.lazy(inputs)
        probe4 = self.blocks[0](inputs)
        probe5 = self.pair[1](inputs)
        probe6 = self(inputs)
        for block in self.blocks:
            probe7 = block(inputs)
        probe_a = self.table(inputs)
        probe_b = self.host(inputs)
        probe_c = self.mixed(inputs)
        probe_d = self.undefined(inputs)
        probe_e = self.blocks(inputs)
        probe_f = self.count(inputs)
        return inputs

class NotKeras:
    def __init__(self):
        self.net = keras.Sequential([layers.Dense(1)])

    @tf.function
    def act(self, x):
        probe8 = self.net(x)
        probe_g = self(x)
""",
        {
            "self.dense(inputs)": True, "self.encoder(inputs)": True, "self.lazy(inputs)": True,
            "self.blocks[0](inputs)": True, "self.pair[1](inputs)": True, "self(inputs)": True,
            "block(inputs)": True, "self.net(x)": True,
            "self.table(inputs)": False, "self.host(inputs)": False, "self.mixed(inputs)": False,
            "self.undefined(inputs)": False, "self.blocks(inputs)": False, "self.count(inputs)": False,
            "self(x)": False,
        },
    )


def test_keras_train_step():
    check(
        PRELUDE
        + """
class Trainer(keras.Model):
    def __init__(self):
        super().__init__()
        self.tracker = keras.metrics.Mean(name="loss")

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.tracker.update_state(loss)
        probe1 = pred
        probe2 = loss
        probe3 = grads[0]
        probe4 = self.tracker.result()
        probe_a = grads
        probe_b = self.tracker.update_state(loss)
        probe_c = grads[1:]
""",
        {
            "pred": True, "loss": True, "grads[0]": True, "self.tracker.result()": True,
            "grads": False, "self.tracker.update_state(loss)": False, "grads[1:]": False,
        },
    )


def test_methods_defined_in_the_module_decide_over_the_keras_api():
    check(
        PRELUDE
        + """
class Agent(keras.Model):
    def compute_loss(self, x, y):
        return tf.reduce_sum(x), tf.reduce_sum(y)

    def train_step(self, data):
        x, y = data
        probe_a = self.compute_loss(x, y)
        probe1 = self.call(x)

    def call(self, inputs):
        return inputs * 2
""",
        {"self.compute_loss(x, y)": False, "self.call(x)": True},
    )


def test_losses_and_metrics():
    check(
        PRELUDE
        + """
from tensorflow.keras import losses
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
legacy_loss = tf.keras.losses.MeanSquaredError()
by_name = keras.losses.get("mse")
accuracy = keras.metrics.SparseCategoricalAccuracy()
reduction = tf.keras.losses.Reduction.NONE
custom_loss = lambda y, p: 0.0

class Focal(keras.losses.Loss):
    def call(self, y_true, y_pred):
        return y_pred

@tf.function
def f(y, p):
    probe1 = loss_fn(y, p)
    probe2 = legacy_loss(y, p)
    probe3 = by_name(y, p)
    probe4 = keras.losses.sparse_categorical_crossentropy(y, p)
    probe5 = losses.mean_squared_error(y, p)
    probe6 = tf.keras.losses.MSE(y, p)
    probe7 = tf.nn.softmax_cross_entropy_with_logits(y, p)
    probe8 = tf.nn.sparse_softmax_cross_entropy_with_logits(y, p)
    probe9 = accuracy.result()
    probe10 = accuracy(y, p)
    probe11 = keras.metrics.sparse_categorical_accuracy(y, p)
    probe12 = Focal()(y, p)
    probe_a = keras.losses.SparseCategoricalCrossentropy()
    probe_b = keras.losses.get("mse")
    probe_c = keras.losses.serialize(loss_fn)
    probe_d = accuracy.update_state(y, p)
    probe_e = custom_loss(y, p)
    probe_f = reduction(y, p)
    probe_g = loss_fn.get_config()
""",
        {
            "loss_fn(y, p)": True, "legacy_loss(y, p)": True, "by_name(y, p)": True,
            "keras.losses.sparse_categorical_crossentropy(y, p)": True, "losses.mean_squared_error(y, p)": True,
            "tf.keras.losses.MSE(y, p)": True, "tf.nn.softmax_cross_entropy_with_logits(y, p)": True,
            "tf.nn.sparse_softmax_cross_entropy_with_logits(y, p)": True, "accuracy.result()": True,
            "accuracy(y, p)": True, "keras.metrics.sparse_categorical_accuracy(y, p)": True,
            "Focal()(y, p)": True,
            "keras.losses.SparseCategoricalCrossentropy()": False, 'keras.losses.get("mse")': False,
            "keras.losses.serialize(loss_fn)": False, "accuracy.update_state(y, p)": False,
            "custom_loss(y, p)": False, "reduction(y, p)": False, "loss_fn.get_config()": False,
        },
    )


def test_gradient_tapes():
    check(
        PRELUDE
        + """
w = tf.Variable(1.0)

@tf.function
def f(x):
    with tf.GradientTape(persistent=True) as tape:
        y = x * w
    tape2 = tf.GradientTape()
    grads = tape.gradient(y, [w])
    g1, g2 = tape.gradient(y, [w, x])
    for g in grads:
        probe1 = g
    probe2 = grads[0]
    probe3 = tape.gradient(y, x)
    probe4 = tape.gradient(y, [w])[0]
    probe5 = g1
    probe6 = tape.jacobian(y, x)
    probe7 = tape2.gradient(y, x)
    probe8 = tf.split(x, 2)[1]
    clipped = [tf.clip_by_norm(g, 1.0) for g in grads]
    probe9 = clipped[0]
    probe_a = tape.gradient(y, [w])
    probe_b = tape.gradient(y, w.trainable_variables)
    probe_c = tape.watch(x)
    probe_d = tape
    probe_e = [g for g in range(3)][0]
""",
        {
            "g": True, "grads[0]": True, "tape.gradient(y, x)": True, "tape.gradient(y, [w])[0]": True,
            "g1": True, "tape.jacobian(y, x)": True, "tape2.gradient(y, x)": True, "tf.split(x, 2)[1]": True,
            "clipped[0]": True,
            "tape.gradient(y, [w])": False, "tape.gradient(y, w.trainable_variables)": False, "tape.watch(x)": False,
            "tape": False, "[g for g in range(3)][0]": False,
        },
    )


def test_distributions():
    check(
        PRELUDE
        + """
from tensorflow_probability import distributions as dists
prior = tfd.Normal(loc=0.0, scale=1.0)
joint = tfd.JointDistributionSequential([prior])
numpy_normal = tfp.substrates.numpy.distributions.Normal(0.0, 1.0)
scipy_like = np.random.default_rng(0)

@tf.function
def f(x):
    dist = tfp.distributions.Normal(loc=x, scale=1.0)
    cat = dists.Categorical(logits=x)
    probe1 = dist.sample()
    probe2 = dist.log_prob(x)
    probe3 = dist.mean()
    probe4 = prior.sample(3)
    probe5 = cat.entropy()
    probe6 = tfd.Normal(x, 1.0).stddev()
    probe7 = tfd.kl_divergence(dist, prior)
    probe_a = dist.batch_shape
    probe_b = joint.sample()
    probe_c = numpy_normal.sample()
    probe_d = scipy_like.normal()
    probe_e = dist.copy(loc=1.0)
    probe_f = dist
""",
        {
            "dist.sample()": True, "dist.log_prob(x)": True, "dist.mean()": True, "prior.sample(3)": True,
            "cat.entropy()": True, "tfd.Normal(x, 1.0).stddev()": True, "tfd.kl_divergence(dist, prior)": True,
            "dist.batch_shape": False, "joint.sample()": False, "numpy_normal.sample()": False,
            "scipy_like.normal()": False, "dist.copy(loc=1.0)": False, "dist": False,
        },
    )


def test_same_module_functions_returning_tensors():
    check(
        PRELUDE
        + """
model = keras.Sequential([layers.Dense(1)])

def center(t):
    return t - tf.reduce_mean(t)

def predict(t):
    return model(t)

def branchy(t):
    if t.shape[0]:
        return tf.square(t)
    else:
        return tf.zeros([1])

def scale():
    return 2.0

def maybe(t):
    if t.shape[0]:
        return tf.square(t)

def mixed(t):
    if t.shape[0]:
        return tf.square(t)
    return 0.0

def nothing(t):
    tf.print(t)

def outer(t):
    return center(t)

def gen(t):
    yield tf.square(t)

def recursive(t):
    return recursive(t) + 1

def to_host(t):
    return t.numpy()

def pair(t):
    return t, t

square = lambda t: tf.square(t)

class Net(keras.Model):
    def head(self, x):
        return self(x)

    def call(self, x):
        probe8 = self.head(x)
        return x

@tf.function
def f(x):
    probe1 = center(x)
    probe2 = predict(x)
    probe3 = branchy(x)
    probe4 = square(x)
    probe5 = recursive(x)
    probe_a = scale()
    probe_b = maybe(x)
    probe_c = mixed(x)
    probe_d = nothing(x)
    probe_e = outer(x)
    probe_f = gen(x)
    probe_g = to_host(x)
    probe_h = pair(x)
""",
        {
            "center(x)": True, "predict(x)": True, "branchy(x)": True, "square(x)": True,
            "self.head(x)": True,
            "scale()": False, "maybe(x)": False, "mixed(x)": False, "nothing(x)": False,
            "outer(x)": False, "gen(x)": False, "to_host(x)": False, "pair(x)": False,
        },
    )


def test_recursive_function_is_decided_without_looping():
    found = probes(PRELUDE + """
def ping(t):
    return pong(t)

def pong(t):
    return ping(t)

@tf.function
def f(x):
    probe = ping(x)
""")
    assert found == {"ping(x)": False}


def test_names_rebound_or_shadowed_are_not_objects():
    check(
        PRELUDE
        + """
model = keras.Sequential()
net = keras.Sequential()

def build():
    global net
    net = 3

@tf.function
def f(x, loss_fn):
    probe_a = loss_fn(x, x)
    probe_b = net(x)

@tf.function
def g(x, model, m: keras.Model, layer: "keras.layers.Layer" = None):
    probe_c = model(x)
    probe1 = m(x)
    probe_d = layer(x)

@tf.function
def h(x):
    model = lambda t: t.numpy()
    probe_e = model(x)
""",
        {"loss_fn(x, x)": False, "net(x)": False, "model(x)": False, "m(x)": True, "layer(x)": False},
    )


def test_keras_objects_found_through_assigned_module_aliases_only_when_bound_once():
    check(
        PRELUDE
        + """
L = keras.layers
K = keras
K = None

@tf.function
def f(x):
    probe1 = L.Dense(2)(x)
    probe_a = K.layers.Dense(2)(x)
""",
        {"L.Dense(2)(x)": True, "K.layers.Dense(2)(x)": False},
    )


@pytest.mark.parametrize(
    "expr",
    ["model(x)", "loss_fn(x, x)", "dist.sample()", "grads[0]"],
)
def test_objects_bound_in_eager_code_are_still_objects_there(expr):
    """Inference says what a value is, wherever it is; the rules ask whether the code runs as a graph."""
    found = probes(PRELUDE + f"""
model = keras.Sequential()
loss_fn = keras.losses.MeanSquaredError()
dist = tfd.Normal(0.0, 1.0)
w = tf.Variable(1.0)

def eager(x):
    with tf.GradientTape() as tape:
        y = w * 2.0
    grads = tape.gradient(y, [w])
    probe = {expr}
""")
    assert found == {expr: True}


def test_calls_of_models_and_layers_held_in_containers():
    check(
        PRELUDE
        + """
class GAN(keras.Model):
    def __init__(self):
        super().__init__()
        self.nets = {}
        self.nets["g"] = keras.Sequential([layers.Dense(2)])
        self.nets["d"] = keras.Sequential([layers.Dense(1)])
        self.heads = []
        self.heads.append(layers.Dense(3))
        self.heads += [layers.Dense(4)]
        self.mixed = [layers.Dense(3), keras.losses.MeanSquaredError()]
        self.names = {"g": "generator"}

    def train_step(self, data):
        probe1 = self.nets["g"](data)
        probe2 = self.heads[0](data)
        for name, net in self.nets.items():
            probe3 = net(data)
        for i, head in enumerate(self.heads):
            probe4 = head(data)
        for key in self.nets:
            probe5 = key(data)
        probe6 = self.mixed[0](data)
        probe7 = self.names["g"](data)
        for h in self.heads + list(self.nets.values()):
            probe8 = h(data)
        return data
""",
        {"self.nets[\"g\"](data)": True, "self.heads[0](data)": True, "net(data)": True, "head(data)": True,
         "key(data)": False,  # a dict's keys
         "self.mixed[0](data)": False,  # a layer and a loss: no single kind, so erring toward "not a tensor"
         "self.names[\"g\"](data)": False, "h(data)": True},
    )


def test_objects_returned_by_same_module_functions_and_methods():
    """`self.model = self.build_model()`: the attribute holds what the method always returns
    (issue 35, attributes set from a method's return); a method that may return something else,
    or nothing, or a call followed further, decides nothing."""
    check(
        PRELUDE
        + """
def make_net():
    return keras.Sequential([layers.Dense(1)])

def maybe_net(flag):
    if flag:
        return keras.Sequential([layers.Dense(1)])
    return None

def relay():
    return make_net()

class Agent:
    def __init__(self):
        self.model = self.build_model()
        self.other = maybe_net(True)
        self.far = relay()
        self.plain = make_net()

    def build_model(self):
        net = keras.Sequential([layers.Dense(4)])
        return net

    def act(self, x):
        probe1 = self.model(x)
        probe2 = self.plain(x)
        probe3 = make_net()(x)
        probe_a = self.other(x)
        probe_b = self.far(x)
""",
        {"self.model(x)": True, "self.plain(x)": True, "make_net()(x)": True,
         "self.other(x)": False, "self.far(x)": False},
    )


def test_parameters_take_the_objects_their_calls_pass():
    """A model made in main() and passed on (issue 35, parameters): the parameter is what every call
    of the module passes in its place or by its name (else its default), through a chain of helpers
    and methods; not when the calls disagree, unpack *args, or none is seen."""
    check(
        PRELUDE
        + """
def run(model, x):
    probe1 = model(x)
    return relay(model, x)

def relay(net, x, scale=None):
    probe2 = net(x)
    return x

def by_name(x, keyword_model=None):
    probe3 = keyword_model(x)

def mixed(mixed_model, x):
    probe_a = mixed_model(x)

def unpacked(unpacked_model, x):
    probe_b = unpacked_model(x)

def never_called(lonely_model, x):
    probe_c = lonely_model(x)

class Trainer:
    def fit(self, method_model, x):
        probe4 = method_model(x)

    def go(self, x):
        self.fit(keras.Sequential([layers.Dense(1)]), x)

def main(x, args):
    net = keras.Sequential([layers.Dense(1)])
    run(net, x)
    by_name(x, keyword_model=net)
    mixed(net, x)
    mixed(lambda v: v, x)
    unpacked(*args)
""",
        {"model(x)": True, "net(x)": True, "keyword_model(x)": True, "method_model(x)": True,
         "mixed_model(x)": False, "unpacked_model(x)": False, "lonely_model(x)": False},
    )
