"""semantic/repetition.py: which code runs repeatedly, in Python and per call/step."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.semantic.repetition import Repetition


def repetition(source: str):
    """Build the model as the engine does; return (Repetition, {call text: (call, scope)})."""
    module = cst.parse_module(textwrap.dedent(source))
    model = build_model(module, ["Call"])
    resolver = Resolver()
    graphs = GraphAnalysis(model, resolver)
    graphs.run()
    calls = {model.module.code_for_node(node): (node, scope) for node, scope in model.index["Call"]}
    return Repetition(model, graphs), calls


def answers(source: str):
    """{name: (python_repeats, per_call)} for every call ``probe_<name>()``."""
    rep, calls = repetition(source)
    result = {}
    for text, (node, scope) in calls.items():
        if text.startswith("probe_"):
            name = text[len("probe_"):].split("(", 1)[0]
            result[name] = (bool(rep.python_repeats(node, scope)), bool(rep.per_call(node, scope)))
    return result


PYTHON = (True, True)
GRAPH = (False, True)
ONCE = (False, False)


def test_loops_in_one_function():
    got = answers("""
        def f(items, n):
            probe_before()
            for item in probe_for_iter(items):
                probe_for_body()
                if item:
                    probe_nested_if()
            else:
                probe_for_else()
            while probe_while_test(n):
                probe_while_body()
            else:
                probe_while_else()
            probe_after()
    """)
    assert got == {
        "before": ONCE, "for_iter": ONCE, "for_body": PYTHON, "nested_if": PYTHON, "for_else": ONCE,
        "while_test": PYTHON, "while_body": PYTHON, "while_else": ONCE, "after": ONCE,
    }


def test_nested_loops_and_inner_iterables():
    got = answers("""
        for a in probe_outer_iter():
            for b in probe_inner_iter(a):
                probe_inner_body()
            else:
                probe_inner_else()
        probe_module()
    """)
    assert got == {"outer_iter": ONCE, "inner_iter": PYTHON, "inner_body": PYTHON, "inner_else": PYTHON,
                   "module": ONCE}


def test_comprehensions_and_generator_expressions():
    got = answers("""
        def f(rows):
            a = [probe_list_elt(x) for x in probe_list_iter(rows) if probe_list_if(x)]
            b = {probe_key(x): probe_value(x) for x in probe_dict_iter(rows)}
            c = sum(probe_gen_elt(x) for x in rows)
            d = {probe_set_elt(y) for x in rows for y in probe_second_iter(x)}
            return a, b, c, d
    """)
    assert got == {
        "list_elt": PYTHON, "list_iter": ONCE, "list_if": PYTHON, "key": PYTHON, "value": PYTHON,
        "dict_iter": ONCE, "gen_elt": PYTHON, "set_elt": PYTHON, "second_iter": PYTHON,
    }


def test_callees_of_loops_transitively_and_a_helper_called_once():
    got = answers("""
        def deeper():
            probe_deeper()

        def helper():
            probe_helper()
            deeper()

        def once():
            probe_once()

        def train(steps):
            once()
            for _ in range(steps):
                helper()

        train(10)
    """)
    assert got == {"deeper": PYTHON, "helper": PYTHON, "once": ONCE}


def test_a_helper_called_once_at_module_level_is_not_repeated():
    rep, calls = repetition("""
        def setup():
            probe_setup()

        setup()
    """)
    node, scope = calls["probe_setup()"]
    assert rep.python_repeats(node, scope) is None and rep.per_call(node, scope) is None


def test_nested_functions_repeat_only_when_called_from_a_loop():
    got = answers("""
        def outer(xs):
            def inner():
                probe_inner()

            def unused():
                probe_unused()

            for x in xs:
                inner()
                def defined_in_loop():
                    probe_defined_in_loop()
            probe_outer()
    """)
    assert got == {"inner": PYTHON, "unused": ONCE, "defined_in_loop": ONCE, "outer": ONCE}


def test_lambdas_written_in_a_loop_and_functions_given_to_map_or_sorted():
    got = answers("""
        def by_key(x):
            probe_key()

        def convert(x):
            probe_convert()

        def not_called_per_element(x):
            probe_not_per_element()

        for x in range(3):
            f = lambda: probe_lambda_in_loop()
        g = lambda: probe_lambda_outside()
        ys = sorted([3, 1], key=by_key)
        zs = list(map(convert, ys))
        not_called_per_element(zs)
    """)
    assert got == {"lambda_in_loop": PYTHON, "lambda_outside": ONCE, "key": PYTHON, "convert": PYTHON,
                   "not_per_element": ONCE}


def test_a_shadowed_builtin_map_is_not_per_element():
    got = answers("""
        def map(f, xs):
            return f

        def convert(x):
            probe_convert()

        map(convert, [1, 2])
    """)
    assert got == {"convert": ONCE}


def test_recursion_terminates_and_repeats():
    got = answers("""
        def ping(n):
            probe_ping()
            return pong(n - 1) if n else 0

        def pong(n):
            probe_pong()
            return ping(n)

        def countdown(n):
            probe_countdown()
            if n:
                countdown(n - 1)

        def plain():
            probe_plain()

        ping(3)
        countdown(3)
        plain()
    """)
    assert got == {"ping": PYTHON, "pong": PYTHON, "countdown": PYTHON, "plain": ONCE}


def test_tf_function_body_runs_per_call_but_its_python_once():
    rep, calls = repetition("""
        import tensorflow as tf

        def helper(x):
            probe_helper()
            return x

        @tf.function
        def step(x):
            probe_step()
            for i in range(3):
                probe_unrolled()
            for i in tf.range(3):
                probe_converted()
            return helper(x)

        for batch in range(100):
            step(batch)
    """)
    got = {name: (bool(rep.python_repeats(*calls[f"probe_{name}()"])), bool(rep.per_call(*calls[f"probe_{name}()"])))
           for name in ("helper", "step", "unrolled", "converted")}
    # The loop calling `step` runs the traced graph, not step's Python; a Python
    # `range` loop is unrolled at trace time; a `tf.range` loop is traced once.
    assert got == {"helper": GRAPH, "step": GRAPH, "unrolled": PYTHON, "converted": GRAPH}
    assert "tf.function" in rep.per_call(*calls["probe_step()"])
    assert "AutoGraph" in rep.per_call(*calls["probe_converted()"])


def test_a_loop_in_graph_code_without_autograph_is_unrolled():
    got = answers("""
        import tensorflow as tf

        @tf.function(autograph=False)
        def step(x):
            for i in tf.range(3):
                probe_body()
            return x
    """)
    assert got == {"body": PYTHON}


def test_dataset_functions_run_per_element_and_are_retraced_in_a_loop():
    got = answers("""
        import tensorflow as tf

        def parse(x):
            probe_parse()
            return x

        def augment(x):
            probe_augment()
            return x

        ds = tf.data.Dataset.range(8).map(parse)
        for epoch in range(3):
            again = tf.data.Dataset.range(8).map(augment)
    """)
    assert got == {"parse": GRAPH, "augment": PYTHON}


def test_keras_call_and_train_step_run_per_step():
    got = answers("""
        import keras

        class Net(keras.Model):
            def call(self, x):
                probe_call()
                return self.helper(x)

            def helper(self, x):
                probe_helper()
                return x

            def train_step(self, data):
                probe_train_step()
                return data

            def summary_text(self):
                probe_other()
    """)
    assert got == {"call": GRAPH, "helper": GRAPH, "train_step": GRAPH, "other": ONCE}


def test_sequence_and_pydataset_methods_and_callbacks_repeat():
    got = answers("""
        import keras
        from tensorflow import keras as tfk

        class Batches(keras.utils.Sequence):
            def __init__(self):
                probe_sequence_init()

            def __getitem__(self, index):
                probe_getitem()
                return self.load(index)

            def load(self, index):
                probe_load()

            def __len__(self):
                return 10

        class Base(keras.utils.PyDataset):
            pass

        class Stream(Base):
            def __iter__(self):
                probe_iter()
                yield 1

            def __next__(self):
                probe_next()

        class Logger(tfk.callbacks.Callback):
            def on_train_batch_end(self, batch, logs=None):
                probe_batch_end()

            def on_epoch_end(self, epoch, logs=None):
                probe_epoch_end()

            def on_train_begin(self, logs=None):
                probe_train_begin()

        class NotASequence:
            def __getitem__(self, index):
                probe_plain_getitem()
    """)
    assert got == {
        "sequence_init": ONCE, "getitem": PYTHON, "load": PYTHON, "iter": PYTHON, "next": PYTHON,
        "batch_end": PYTHON, "epoch_end": PYTHON, "train_begin": ONCE, "plain_getitem": ONCE,
    }


def test_generator_fed_to_from_generator_repeats_each_epoch():
    got = answers("""
        import numpy as np
        import tensorflow as tf

        def gen():
            probe_preamble()
            for i in range(10):
                yield probe_element(i)

        def lazy(n):
            probe_lazy()
            yield n

        def consumed_once():
            probe_consumed_once_preamble()
            for i in range(3):
                yield probe_consumed_once_element(i)

        ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int32))
        other = tf.data.Dataset.from_generator(lambda: lazy(3), output_types=tf.int32)
        for value in consumed_once():
            pass
    """)
    # from_generator calls the generator function anew each time the dataset
    # is iterated; a generator iterated by one loop runs its preamble once and
    # its own loop per element.
    assert got == {
        "preamble": PYTHON, "element": PYTHON, "lazy": PYTHON,
        "consumed_once_preamble": ONCE, "consumed_once_element": PYTHON,
    }


def test_generator_called_inside_a_loop_repeats():
    got = answers("""
        def gen():
            probe_gen()
            yield 1

        for epoch in range(5):
            for x in gen():
                pass
    """)
    assert got == {"gen": PYTHON}


def test_py_function_targets_run_eagerly_at_every_call_of_the_graph():
    got = answers("""
        import tensorflow as tf

        def host(x):
            probe_host()
            return x

        def host_once(x):
            probe_host_once()
            return x

        @tf.function
        def step(x):
            return tf.py_function(host, [x], tf.float32)

        y = tf.numpy_function(host_once, [1.0], tf.float32)
    """)
    assert got == {"host": PYTHON, "host_once": ONCE}


def test_while_loop_bodies_eager_and_in_graph_code():
    got = answers("""
        import tensorflow as tf

        def cond(i):
            probe_cond()
            return i < 10

        def body(i):
            probe_body()
            return i + 1

        def graph_body(i):
            probe_graph_body()
            return i + 1

        def square(x):
            probe_square()
            return x * x

        tf.while_loop(cond, body, [0])

        @tf.function
        def step(n):
            return tf.while_loop(lambda i: i < n, graph_body, [0])

        tf.vectorized_map(square, tf.range(4))
    """)
    assert got == {"cond": PYTHON, "body": PYTHON, "graph_body": GRAPH, "square": GRAPH}


def test_class_body_and_method_called_from_a_loop():
    got = answers("""
        class Trainer:
            SIZE = probe_class_attr()

            def step(self):
                probe_step()

            def fit(self, n):
                for _ in range(n):
                    self.step()

        for i in range(2):
            class Local:
                VALUE = probe_class_in_loop()
    """)
    assert got == {"class_attr": ONCE, "step": PYTHON, "class_in_loop": PYTHON}


def test_reasons_name_the_cause():
    rep, calls = repetition("""
        def helper():
            probe_helper()

        def train(n):
            while n:
                helper()
                n -= 1
    """)
    reason = rep.python_repeats(*calls["probe_helper()"])
    assert "while" in reason and "train" in reason
    assert rep.python_repeats(*calls["helper()"]) == "inside a `while` loop"


def test_loop_sets_are_computed_only_for_scopes_asked_about():
    rep, calls = repetition("""
        def a():
            for i in range(3):
                probe_a()

        def b():
            for i in range(3):
                probe_b()

        a()
        b()
    """)
    node, scope = calls["probe_a()"]
    assert rep.python_repeats(node, scope)
    # scope a and its callers' scope (the module) only; b is never walked
    walked = {id(s) for s in rep.model.scopes if id(s) in rep._loops}
    assert id(calls["probe_b()"][1]) not in walked


def test_a_call_through_a_parameter_of_the_same_name_is_not_the_def():
    got = answers("""
        def work():
            probe_work()

        def train(work):
            for i in range(3):
                work()
    """)
    assert got == {"work": ONCE}


def test_iterating_a_dataset_eagerly_and_in_graph_code():
    got = answers("""
        import tensorflow as tf

        ds = tf.data.Dataset.range(8)
        for x in ds:
            probe_eager()

        @tf.function
        def total(ds):
            for x in tf.data.Dataset.range(8):
                probe_converted()
                f = lambda: probe_lambda_in_graph()
            return [probe_unrolled_comprehension(i) for i in range(3)]
    """)
    assert got == {"eager": PYTHON, "converted": GRAPH, "lambda_in_graph": GRAPH,
                   "unrolled_comprehension": PYTHON}


def test_module_and_class_level_code_outside_loops_runs_once():
    rep, calls = repetition("""
        import tensorflow as tf
        x = probe_module()
    """)
    node, scope = calls["probe_module()"]
    assert rep.python_repeats(node, scope) is None and rep.per_call(node, scope) is None
    assert rep.scope_python_repeats(scope) is None and rep.scope_per_call(scope) is None


def test_dataset_map_in_a_loop_reason_names_the_method():
    rep, calls = repetition("""
        import tensorflow as tf

        def augment(x):
            probe_augment()
            return x

        for epoch in range(3):
            ds = tf.data.Dataset.range(8).map(augment)
    """)
    reason = rep.python_repeats(*calls["probe_augment()"])
    assert "`.map`" in reason and "module level" in reason


def test_a_method_called_in_a_loop_through_an_object_of_the_modules_own_class_repeats():
    got = answers("""
        class Actor:
            def train(self, x):
                probe_actor_train()

            def act(self, x):
                probe_actor_act()

        class Critic:
            def train(self, x):
                probe_critic_train()

        class Agent:
            def __init__(self, critic):
                self.actor = Actor()
                self.critic = critic  # a parameter: a Critic, what main's Agent(...) passes

            def replay(self):
                for _ in range(10):
                    self.actor.train(1)
                    self.critic.train(1)

            def run(self, episodes):
                for _ in range(episodes):
                    self.replay()

        def main():
            agent = Agent(Critic())
            agent.run(5)
            Actor().act(1)
    """)
    # train through ``self.actor`` (bound once, to an Actor) in a loop, and through
    # ``self.critic`` (the Critic the one ``Agent(...)`` call passes); act runs once.
    assert got == {"actor_train": PYTHON, "critic_train": PYTHON, "actor_act": ONCE}


def test_sometimes_an_interval_here_in_the_loop_or_in_every_caller():
    rep, calls = repetition("""
        def train(ds, model):
            for step, batch in enumerate(ds):
                probe_every_step()
                if step % 100 == 0:
                    probe_interval_in_loop()
                    preview()
                log()

        def preview():
            probe_through_a_conditioned_caller()

        def log():
            probe_through_an_unconditioned_caller()

        class Callback:
            def on_train_batch_end(self, batch, logs=None):
                if batch % self.every == 0:
                    self.show()
                    probe_interval_in_method()
                self.show()
                self.other()

            def show(self):
                probe_one_caller_unconditioned()

            def other(self):
                if self.enabled:
                    self.deep()

            def deep(self):
                probe_two_callers_up()

        def orphan():
            probe_never_called()
    """)
    got = {text[len("probe_"):].split("(", 1)[0]: rep.sometimes(node, scope)
           for text, (node, scope) in calls.items() if text.startswith("probe_")}
    assert got == {"every_step": False, "interval_in_loop": True, "through_a_conditioned_caller": True,
                   "through_an_unconditioned_caller": False, "interval_in_method": True,
                   "one_caller_unconditioned": False, "two_callers_up": True, "never_called": False}
