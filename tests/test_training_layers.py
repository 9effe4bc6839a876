"""semantic/training_layers.py: which models hold BatchNormalization/dropout layers, how a call passes
``training``, and which functions are training steps."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse


def _ctx(source: str):
    return analyse(cst.parse_module(textwrap.dedent(source)), [])


def _find(ctx, function: str, text: str):
    """The first expression equal to ``text`` in the function (or class) named ``function``."""
    scope = next(s for s in ctx.model.scopes if s.name == function)
    wanted = cst.parse_expression(text)
    stack = [scope.node]
    while stack:
        node = stack.pop(0)
        if isinstance(node, cst.BaseExpression) and node.deep_equals(wanted):
            inner = next((s for s in ctx.model.scopes if s.node is not scope.node and s.is_function
                          and any(n is node for n in _below(s.node))), None)
            return node, inner or scope
        stack.extend(node.children)
    raise AssertionError(text)


def _below(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


HOLDS = """
    import keras
    import tensorflow as tf
    import tf_keras


    class MyBN(keras.layers.BatchNormalization):
        pass


    class Block(tf.keras.layers.Layer):
        def __init__(self, bn):
            super().__init__()
            self.forward = tf.keras.Sequential([tf.keras.layers.Dense(8)])
            if bn:
                self.forward.add(tf.keras.layers.BatchNormalization())


    class Plain(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.d = keras.layers.Dense(3)
            self.norm = keras.layers.LayerNormalization()


    class Helper(keras.Model):
        def __init__(self):
            super().__init__()
            self.layers_ = self._make()

        def _make(self):
            return [keras.layers.Dense(2), keras.layers.SpatialDropout1D(0.1)]


    class Outer(keras.Model):
        def __init__(self):
            super().__init__()
            self.inner = Block(True)


    class Inline(keras.layers.Layer):
        def call(self, x):
            return keras.layers.GaussianNoise(0.1)(x)


    class NotKeras:
        def __init__(self):
            self.drop = keras.layers.Dropout(0.5)


    def functional():
        inputs = keras.Input((4,))
        h = keras.layers.Dense(4)(inputs)
        h = keras.layers.AlphaDropout(0.1)(h)
        return keras.Model(inputs, keras.layers.Dense(1)(h))


    def functional_plain():
        inputs = keras.Input((4,))
        base = keras.Sequential([keras.layers.Dense(4), keras.layers.BatchNormalization()])
        h = base(inputs, training=False)
        return keras.Model(inputs=inputs, outputs=keras.layers.Dense(1)(h))


    def step(model):
        return model


    def main():
        seq = tf_keras.Sequential([tf_keras.layers.Dense(2), tf_keras.layers.GaussianDropout(0.2)])
        added = keras.Sequential()
        added.add(keras.layers.Dense(3))
        added.add(keras.layers.Dropout(0.3))
        dense_only = keras.Sequential([keras.layers.Dense(2)])
        f = functional()
        g = functional_plain()
        mine = MyBN()
        plain = Plain()
        helper = Helper()
        outer = Outer()
        inline = Inline()
        other = NotKeras()
        step(f)
        return seq, added, dense_only, f, g, mine, plain, helper, outer, inline, other
"""


def test_what_a_model_holds():
    ctx = _ctx(HOLDS)
    facts = ctx.training_layers
    expected = {
        "seq": "GaussianDropout",  # a tf_keras Sequential's list
        "added": "Dropout",  # Sequential() then .add(...)
        "dense_only": None,
        "f": "AlphaDropout",  # functional: back from the outputs
        "g": None,  # its BatchNormalization is called with training=False: the author's choice
        "mine": "BatchNormalization",  # a same-module subclass
        "plain": None,  # LayerNormalization has no training mode
        "helper": "SpatialDropout1D",  # a list a helper method returns
        "outer": "BatchNormalization",  # Block(True): a Sequential attribute filled by .add under an if
        "inline": "GaussianNoise",  # made in call
        "other": None,  # not a Keras class
    }
    for name, held in expected.items():
        node, scope = _find(ctx, "main", name)
        assert facts.holds(node, scope) == held, name
    # a parameter, through the module's call of the function
    node, scope = _find(ctx, "step", "model")
    assert facts.holds(node, scope) == "AlphaDropout"


SIGNATURES = """
    import keras
    import tensorflow as tf


    class Critic(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.bn = keras.layers.BatchNormalization()

        def call(self, x, y):
            return self.bn(x + y)


    class Conv(keras.Model):
        def __init__(self):
            super().__init__()
            self.bn = keras.layers.BatchNormalization()

        def call(self, x, is_training=False):
            return self.bn(x, training=is_training)


    class Eager(keras.Model):
        def __init__(self):
            super().__init__()
            self.bn = keras.layers.BatchNormalization()

        def call(self, x, training=True):
            return self.bn(x, training=training)


    def main(x, y, kw):
        seq = keras.Sequential([keras.layers.BatchNormalization()])
        critic = Critic()
        conv = Conv()
        eager = Eager()
        a = critic(x, y)
        b = conv(x, True)
        c = conv(x, is_training=True)
        d = seq(x, True)
        e = seq(x)
        f = seq(x, **kw)
        g = eager(x)
        h = critic(x, y, training=True)
"""


def test_how_a_call_passes_training():
    ctx = _ctx(SIGNATURES)
    facts = ctx.training_layers
    given = {"critic(x, y)": False, "conv(x, True)": True, "conv(x, is_training=True)": True,
             "seq(x, True)": True, "seq(x)": False, "seq(x, **kw)": True, "eager(x)": False,
             "critic(x, y, training=True)": True}
    for text, expected in given.items():
        node, scope = _find(ctx, "main", text)
        assert facts.training_given(node, scope) is expected, text
    node, scope = _find(ctx, "main", "eager(x)")
    assert facts.call_signature(node.func, scope).trains_by_default
    node, scope = _find(ctx, "main", "conv(x, True)")
    signature = facts.call_signature(node.func, scope)
    assert set(signature.modes) == {"is_training"} and not signature.trains_by_default
    node, scope = _find(ctx, "main", "seq(x)")
    assert facts.call_signature(node.func, scope) is None  # a Keras built-in: call(inputs, training=None, mask=None)


STEPS = """
    import keras
    import tensorflow as tf
    import tf_keras

    model = keras.Sequential([keras.layers.Dense(1)])
    opt = keras.optimizers.SGD(0.1)


    class Gan(keras.Model):
        def train_step(self, data):
            return {}

        def call(self, x):
            return x


    def fit_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x))
        variables = model.trainable_variables + self.D.trainable_weights
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))


    def val_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))


    def saliency(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = model(x)
        return tape.gradient(y, x)
"""


def test_training_steps():
    ctx = _ctx(STEPS)
    facts = ctx.training_layers
    scopes = {s.name: s for s in ctx.model.scopes}
    assert facts.step(scopes["train_step"])  # a Keras class's train_step: fit runs it
    assert not facts.step(scopes["call"])
    assert facts.step(scopes["fit_step"])  # gradients reach an update
    assert not facts.step(scopes["val_step"])  # named as an evaluation
    assert not facts.step(scopes["saliency"])  # gradients only read
    assert facts.trained(scopes["fit_step"]) == {"model", "self.D"}
    assert not facts.learning_phase_set()
    phase = textwrap.dedent(STEPS) + "\ntf_keras.backend.set_learning_phase(1)\n"
    assert _ctx(phase).training_layers.learning_phase_set()


# -- across modules: what another project module hands a def (semantic.project: holders, hands) ------------

MODELS = """
    import tensorflow as tf


    class DS2(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.bn = tf.keras.layers.BatchNormalization()
            self.out = tf.keras.layers.Dense(1)

        def call(self, inputs):
            return self.out(self.bn(inputs))


    class Plain(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.out = tf.keras.layers.Dense(1)


    def encoder(rate):
        inputs = tf.keras.Input((4,))
        return tf.keras.Model(inputs, tf.keras.layers.Dropout(rate)(inputs))


    def wrapped():
        return encoder(0.1)
"""

TRAINER = """
    import tensorflow as tf


    def train(model, optimizer, data):
        for x, y in data:
            _train_step(model, optimizer, x, y)


    def _train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def _write(root, files):
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))


def _checked(root, names):
    from tflint_gpu.engine import run
    from tflint_gpu.rules.base import REGISTRY

    paths = [str(root / name) for name in names]
    results = run.run_files(paths, lambda _: [REGISTRY["TFG612"]], run.CHECK, jobs=1, project_root=str(root))
    return {r.path[len(str(root)) + 1:]: [(f.row, f.message.split(" and ")[0]) for f in r.findings]
            for r in results}


def test_summary_holders_and_hands():
    from tflint_gpu.semantic.project import summarize_source

    assert summarize_source(textwrap.dedent(MODELS)).holders == ("DS2", "encoder", "wrapped")
    hands = summarize_source(textwrap.dedent("""
        import tensorflow as tf
        from models import DS2, encoder
        from trainer import train

        model = DS2()
        other = DS2() if tf else None
        train(model, tf.keras.optimizers.SGD(), data)
        train(model=encoder(0.1), optimizer=None, data=data)
        train(other, None, data)
    """)).hands
    assert set(hands) == {(0, "trainer.train", "0", 0, "models.DS2"), (0, "trainer.train", "=model", 0, "models.encoder")}


def test_a_model_handed_by_another_module(tmp_path):
    _write(tmp_path, {"models.py": MODELS, "trainer.py": TRAINER,
                      "main.py": "from models import DS2\nfrom trainer import train\n\n"
                                 "model = DS2()\ntrain(model=model, optimizer=None, data=[])\n"})
    assert _checked(tmp_path, ["models.py", "trainer.py", "main.py"])["trainer.py"] == [
        (12, "`model` holds BatchNormalization/dropout layers (made by `models.DS2`)")]
    # a def returning a functional model with a Dropout, positionally; a class without such a layer
    (tmp_path / "main.py").write_text("import models\nimport trainer\n\ntrainer.train(models.wrapped(), None, [])\n")
    assert _checked(tmp_path, ["models.py", "trainer.py", "main.py"])["trainer.py"] == [
        (12, "`model` holds BatchNormalization/dropout layers (made by `models.wrapped`)")]
    (tmp_path / "main.py").write_text("from models import Plain\nfrom trainer import train\n\ntrain(Plain(), None, [])\n")
    assert _checked(tmp_path, ["models.py", "trainer.py", "main.py"])["trainer.py"] == []
    # checked alone, the trainer does not see what main.py hands it
    (tmp_path / "main.py").write_text("from models import DS2\nfrom trainer import train\n\ntrain(DS2(), None, [])\n")
    assert _checked(tmp_path, ["trainer.py"])["trainer.py"] == []


def test_a_target_network_updated_softly_is_not_trained():
    ctx = _ctx("""
        import keras
        import tensorflow as tf

        model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dropout(0.1)])
        target = keras.Sequential([keras.layers.Dense(4), keras.layers.Dropout(0.1)])
        opt = keras.optimizers.Adam()


        def learn(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y - target(x)))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            for t, s in zip(target.variables, model.weights):
                t.assign(0.99 * t + 0.01 * s)
    """)
    learn = next(s for s in ctx.model.scopes if s.name == "learn")
    assert ctx.training_layers.step(learn)
    assert ctx.training_layers.trained(learn) == {"model"}


def test_a_step_in_module_code():
    ctx = _ctx("""
        import keras
        import tensorflow as tf

        model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dropout(0.1)])
        opt = keras.optimizers.Adam()

        for x, y in data:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x) - y)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))

        with tf.GradientTape() as tape:
            tape.watch(x)
            saliency = model(x)
        after = model(x)
    """)
    calls = [node for node, _ in ctx.model.index["Call"] if cst.Module([]).code_for_node(node) == "model(x)"]
    inside, saliency, after = calls
    root = ctx.model.root
    facts = ctx.training_layers
    assert facts.inline_trained(inside, root) == {"model"}
    assert facts.inline_trained(saliency, root) is None  # a tape whose gradients reach no update
    assert facts.inline_trained(after, root) is None


def test_a_helper_called_under_a_step_s_tape():
    ctx = _ctx("""
        import tensorflow as tf

        target = tf.keras.Sequential([tf.keras.layers.Dense(2)])


        class Agent:
            def _loss(self, x, model):
                return tf.reduce_mean(self.q(x) + model(x) + target(x))

            def learn(self, x, model):
                with tf.GradientTape() as tape:
                    loss = self._loss(x, model)
                variables = self.q.trainable_variables + model.trainable_variables + target.trainable_variables
                self.opt.apply_gradients(zip(tape.gradient(loss, variables), variables))

            def _forward(self, x):
                return self.q(x)

            def learn_and_log(self, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(self._forward(x))
                self.opt.minimize(loss, self.q.trainable_variables, tape=tape)
                return self._forward(x)
    """)
    scopes = {s.name: s for s in ctx.model.scopes}
    facts = ctx.training_layers
    # `model` is the step's parameter, another binding in the helper: not carried over
    assert facts.helper_trained(scopes["_loss"]) == {"self.q", "target"}
    assert facts.helper_trained(scopes["_forward"]) is None  # also called after the tape
    assert facts.helper_trained(scopes["learn"]) is None  # a step itself


# -- evaluation steps (TFG617) ---------------------------------------------------------------

EVALUATION_SOURCE = """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
drop = tf.keras.layers.Dropout(0.5)
optimizer = tf.keras.optimizers.SGD()

def test_step(x):
    return model(x, training=True), drop(x, training=True)

def validate_and_train(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x, training=True))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

def mc_predict(x):
    return model(x, training=True)

def train_step(x):
    return model(x, training=True)

class Net(tf.keras.Model):
    def call(self, x, training=None):
        return model(x, training=True)

def evaluation_epoch(x):
    return model(x, training=True)
"""


def _evaluation_facts():
    ctx = analyse(cst.parse_module(textwrap.dedent(EVALUATION_SOURCE)), [])
    return ctx, {s.name: s for s in ctx.model.scopes if s.is_function}


def test_a_function_evaluates_by_its_name_unless_it_trains_or_is_a_call():
    ctx, scopes = _evaluation_facts()
    evaluates = {name: ctx.training_layers.evaluates(scope) for name, scope in scopes.items()}
    assert evaluates == {"test_step": True, "validate_and_train": False, "mc_predict": True, "train_step": False,
                         "call": False, "evaluation_epoch": True}


def test_prediction_names_and_a_dropout_layer_itself_are_training_mode_on_purpose():
    ctx, scopes = _evaluation_facts()
    on_purpose = {}
    for name in ("test_step", "mc_predict", "evaluation_epoch"):
        scope = scopes[name]
        on_purpose[name] = [ctx.training_layers.training_on_purpose(call, scope) for call in scope.calls
                            if any(a.keyword is not None and a.keyword.value == "training" for a in call.args)]
    assert on_purpose == {"test_step": [False, True], "mc_predict": [True], "evaluation_epoch": [False]}
