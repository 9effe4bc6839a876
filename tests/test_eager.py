"""semantic/eager.py: GradientTape training steps, graph hazards, retracing arguments, debug guards, eager switches."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.model import SCOPE_TYPES, walk


def facts(source: str):
    """(EagerFacts, RuleContext, {function name: scope}) as a rule sees them."""
    module = cst.parse_module(textwrap.dedent(source))
    ctx = analyse(module, [])
    functions = {s.name: s for s in ctx.model.scopes if s.kind == "function"}
    return ctx.eager, ctx, functions


def tape_withs(ctx):
    """Every With statement, with its scope."""
    found = []
    for scope in ctx.model.scopes:
        body = scope.node if isinstance(scope.node, cst.Module) else scope.node.body
        for node in walk(body, skip=SCOPE_TYPES):
            if isinstance(node, cst.With):
                found.append((node, scope))
    return found


def steps(source: str):
    eager, ctx, _functions = facts(source)
    return [(scope.name, step is not None and step.loop is not None)
            for node, scope in tape_withs(ctx) for step in [eager.training_step(node, scope)] if step is not None]


def hazards(source: str, name: str):
    eager, ctx, functions = facts(source)
    return [why for _node, why in eager.graph_hazards(functions[name])]


STEP = """
import tensorflow as tf

def f(model, opt, x):
    with tf.GradientTape() as tape:
        loss = model(x)
    {between}
    {update}
"""


def test_a_tape_whose_gradients_reach_the_optimizer_is_a_step():
    source = STEP.format(between="grads = tape.gradient(loss, model.trainable_variables)",
                         update="opt.apply_gradients(zip(grads, model.trainable_variables))")
    assert steps(source) == [("f", False)]


def test_gradients_through_names_and_comprehensions_still_reach():
    source = STEP.format(between="g = tape.gradient(loss, model.trainable_variables)\n"
                                 "    g2 = [tf.clip_by_norm(t, 1.0) for t in g]\n"
                                 "    g3, _ = tf.clip_by_global_norm(g2, 5.0)",
                         update="opt.apply_gradients(zip(g3, model.trainable_variables))")
    assert steps(source) == [("f", False)]


def test_gradients_that_reach_no_optimizer_are_no_step():
    source = STEP.format(between="grads = tape.gradient(loss, model.trainable_variables)",
                         update="opt.apply_gradients(zip(other, model.trainable_variables))")
    assert steps(source) == []
    assert steps(STEP.format(between="grads = tape.gradient(loss, x)", update="print(grads)")) == []


def test_a_module_function_named_minimize_is_no_optimizer():
    source = STEP.format(between="grads = tape.gradient(loss, x)", update="scipy.optimize.minimize(grads)")
    assert steps(source.replace("import tensorflow as tf", "import tensorflow as tf\nimport scipy.optimize")) == []


def test_minimize_with_the_tape_is_a_step():
    assert steps(STEP.format(between="", update="opt.minimize(loss, model.trainable_variables, tape=tape)")) \
        == [("f", False)]


def test_a_step_inside_a_loop_of_its_scope_says_so():
    source = """
    import tensorflow as tf

    def train(model, opt, data):
        for x in data:
            with tf.GradientTape() as tape:
                loss = model(x)
            opt.apply_gradients(zip(tape.gradient(loss, model.weights), model.weights))
    """
    assert steps(source) == [("train", True)]


def test_a_clean_step_has_no_hazards():
    source = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

    def helper(x):
        return tf.reduce_mean(x)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = helper(model(x) - y)
        if len(model.weights) > 2:
            pass
        return {"loss": loss, "n": [loss]}
    """
    assert hazards(source, "step") == []


def test_hazards_in_the_body_and_in_callees():
    source = """
    import numpy as np
    import tensorflow as tf
    log = []
    lr = 0.1
    lr = 0.2

    def helper(x):
        print(x)
        return float(x)

    def step(self, x):
        global counter
        self.last = x
        log.append(x)
        x.numpy()
        np.mean(x)
        v = tf.Variable(1.0)
        y = helper(x) * lr
        if tf.reduce_sum(x) > 0:
            y = 1
        return 3
    """
    found = hazards(source, "step")
    for part in ("rebinds outer state", "stores on an object", "`.append()` on outer state", "`.numpy()`",
                 "`numpy.mean`", "builds a `Variable`", "calls `print`", "calls `float`", "reads `lr`",
                 "branches on a tensor", "returns a Python value"):
        assert any(part in why for why in found), (part, found)


def test_local_containers_and_graph_safe_builtins_are_fine():
    source = """
    import tensorflow as tf

    def step(xs):
        parts = []
        for i in range(len(xs)):
            parts.append(xs[i] * 2)
        table = {}
        table["a"] = parts
        return tf.add_n(parts)
    """
    assert hazards(source, "step") == []


def test_retracing_arguments_are_changing_python_numbers():
    source = """
    def step(x, i, flag):
        return x

    def train(data):
        count = 0
        for epoch in range(3):
            for i, x in enumerate(data):
                step(x, epoch, True)
                step(x, i + 1, True)
                step(x, count, False)
                count += 1
            for x in data:
                step(x, 0, True)
    """
    eager, ctx, functions = facts(source)
    found = [why for _node, why in eager.retracing_arguments(functions["step"])]
    assert len(found) == 3, found
    assert found[0].startswith("`epoch` changes each iteration of `for epoch in range(...)`")
    assert found[1].startswith("`i` changes each iteration of `for i, ... in enumerate(...)`")
    assert found[2].startswith("`count`")


def test_guards_and_debug_switches():
    source = """
    import tensorflow as tf

    def main(args):
        if args.debug:
            tf.config.run_functions_eagerly(True)
        if args.fast:
            pass
        else:
            tf.config.run_functions_eagerly(True)
        tf.config.run_functions_eagerly(False)

    def enable_eager():
        tf.config.experimental_run_functions_eagerly(True)
    """
    eager, ctx, _functions = facts(source)
    switches = eager.eager_switches()
    assert [ctx.module.code_for_node(arg) for _call, _scope, arg in switches] == ["True", "True", "False", "True"]
    guarded = [eager.debug_guarded(call, scope) for call, scope, _arg in switches]
    assert guarded == [True, False, False, True]
    assert [ctx.module.code_for_node(t) for t in eager.guards(switches[1][0], switches[1][1])] == ["args.fast"]


def test_statement_of_a_call_on_its_own_line():
    source = """
    import tensorflow as tf
    tf.config.run_functions_eagerly(True)
    x = tf.config.run_functions_eagerly(True)
    a = 1; tf.config.run_functions_eagerly(True)
    """
    eager, ctx, _functions = facts(source)
    switches = eager.eager_switches()
    first = eager.statement_of(switches[0][0], switches[0][1])
    assert first is not None and isinstance(first[1], cst.Module)
    assert eager.statement_of(switches[1][0], switches[1][1]) is None
    assert eager.statement_of(switches[2][0], switches[2][1]) is None


def test_step_function_finds_the_step_a_call_runs():
    eager, _ctx, functions = facts("""
        import tensorflow as tf

        def step_fn(x):
            with tf.GradientTape() as tape:
                loss = model(x)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        @tf.function
        def distributed(x):
            return strategy.run(step_fn, args=(x,))

        def outer(x):
            return distributed(x)

        def gradients_only(x):
            with tf.GradientTape() as tape:
                loss = model(x)
            return tape.gradient(loss, model.trainable_variables)

        def forward(x):
            return step_fn
        """)
    assert eager.step_function(functions["step_fn"]).scope is functions["step_fn"]
    assert eager.step_function(functions["distributed"]).scope is functions["step_fn"]  # handed on by name
    assert eager.step_function(functions["outer"]) is None  # two levels down: not followed
    assert eager.step_function(functions["gradients_only"]) is None  # no update
    assert eager.step_function(functions["forward"]) is None  # returned, not run


def test_under_tape_in_the_block_and_in_callers():
    eager, ctx, functions = facts("""
        import tensorflow as tf

        def forward(x):
            return model(x)

        def loss_fn(x):
            return forward(x)

        def step(x):
            with tf.GradientTape() as tape:
                loss = loss_fn(x)
            after = model(x)

        def infer(x):
            return model(x)
        """)

    def model_call(name):
        scope = functions[name]
        return next(c for c, s in ctx.model.index["Call"] if s is scope and isinstance(c.func, cst.Name)
                    and c.func.value == "model")

    assert not eager.under_tape(model_call("forward"), functions["forward"], callers=1)  # two calls down
    assert eager.under_tape(model_call("forward"), functions["forward"], callers=2)
    assert not eager.under_tape(model_call("step"), functions["step"])  # after the block
    assert not eager.under_tape(model_call("infer"), functions["infer"], callers=3)  # never called under a tape


def test_steps_with_a_gradient_helper_or_a_hand_written_update():
    eager, ctx, functions = facts("""
        import tensorflow as tf

        def compute(x):
            with tf.GradientTape() as tape:
                loss = model(x)
            grads = tape.gradient(loss, model.trainable_variables)
            return loss, grads

        def apply(g):
            opt.apply(g, model.trainable_variables)

        def train(x):
            loss, grads = compute(x)
            apply(grads)

        def sgd(x):
            with tf.GradientTape() as tape:
                loss = model(x)
            for v, g in zip(model.trainable_variables, tape.gradient(loss, model.trainable_variables)):
                v.assign_sub(0.1 * g)

        def saliency(x):
            with tf.GradientTape() as tape:
                score = model(x)
            return tape.gradient(score, x)

        def show(x):
            print(saliency(x))
        """)
    found = {scope.name: eager.training_step(node, scope) for node, scope in tape_withs(ctx)}
    helper = found["compute"]
    assert helper is not None and helper.where is functions["apply"]  # applied two calls away
    assert cst.Module([]).code_for_node(helper.optimizer) == "opt"
    by_hand = found["sgd"]
    assert by_hand is not None and by_hand.where is functions["sgd"] and by_hand.optimizer is None
    assert found["saliency"] is None  # returned, only printed


def test_a_step_computing_gradients_through_the_optimizer_with_the_tape():
    # issue 35: Keras 2's optimizer.compute_gradients(loss, var_list, tape=tape) then
    # apply_gradients(grads_and_vars) is a training step (tf_keras 2.21, run by hand)
    assert steps("""
        import tensorflow as tf

        def train(ds, model, opt):
            for x, y in ds:
                with tf.GradientTape() as tape:
                    loss = model(x)
                grads_and_vars = opt.compute_gradients(loss, model.trainable_variables, tape=tape)
                opt.apply_gradients(grads_and_vars)

        def other_tape(ds, model, opt, recorder):
            for x, y in ds:
                with tf.GradientTape() as tape:
                    loss = model(x)
                grads_and_vars = opt.compute_gradients(loss, model.trainable_variables, tape=recorder)
                opt.apply_gradients(grads_and_vars)
    """) == [("train", True)]
