from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.model import AUGMENTED, PARAM, UNPACKED, ScopeInfo
from tflint_gpu.rules.base import GRAPH_TEXT, Rule, clean, flagged

# Methods of list and dict that change them in place (sets and deques cannot
# be tf.function arguments at all: `TypeError: Could not generate a generic
# TraceType`). Not `sort`/`reverse`/`clear`: they change nothing on an
# already sorted or empty list, and TensorFlow compares, not watches.
MUTATING_METHODS = frozenset({"append", "extend", "insert", "remove", "pop", "popitem", "update", "setdefault"})
# Keras 3 wraps these in a tf.function whose argument is the batch (`data`).
# (`predict_step` too, but changing its `data` raises nothing: measured.)
KERAS_STEPS = frozenset({"train_step", "test_step"})
# Annotations under which a parameter may hold a list or dict.
_CONTAINER_ANNOTATIONS = frozenset({"list", "dict", "List", "Dict", "MutableMapping", "MutableSequence"})


class MutatedPythonArgument(Rule):
    """A `tf.function` changes a list or dict passed to it: `ValueError` at the first call.

    ## What it does
    Finds, in the body of a function decorated with or wrapped by
    `tf.function`, statements that change one of its parameters in place:
    `acc.append(x)` (also `extend`, `insert`, `remove`, `pop`, `popitem`,
    `update`, `setdefault`), `acc[k] = v`, `acc[k] += v`, `del acc[k]`,
    `acc += [x]`, also on an element (`acc[0].append(x)`). In a Keras 3
    model's `train_step`/`test_step` it finds the same on the `data`
    parameter and on the names unpacked from it (`x, y = data`,
    then `x["mask"] = ...`): Keras 3 calls these from a `tf.function` whose
    argument is `data`; also a `train_step` a Keras 3 model inherits from a
    same-module mixin (`class Net(StepMixin, keras.Model)`).

    Item assignment and `del` count where the key is a string (`acc["k"]`:
    a dict) or the parameter's default or annotation is a list or dict
    (`out: List[tf.Tensor]`, `slots=[None]`): on a tensor argument
    `x[0] = v` raises a `TypeError` (no item assignment) instead.

    Not flagged: a parameter rebound anywhere in the function (`acc =
    list(acc)`, `if acc is None: acc = []`: the function changes its own
    copy), `self`, `*args`/`**kwargs` (`kwargs` is a fresh dict), a parameter
    with a default or annotation that is not a list or dict; attribute
    assignment on an object argument (`obj.v = x` raises nothing); helpers
    called from the `tf.function` (a helper changing a list it is given
    raises only if that list is the `tf.function`'s argument; not followed);
    functions given to `Dataset.map`/`filter`/`reduce`/`scan` (tf.data lets
    them change their element: `d["y"] = ...; return d` is fine), Keras
    `call` (`inputs["extra"] = ...` under `fit` and `predict` is fine), a
    Keras 3 `predict_step`, and Keras 2 (`tf_keras`) steps, which do not
    raise.

    ## Why is this bad?
    While tracing, `tf.function` compares the structure and the objects of
    its arguments before and after running the Python body, and any change
    stops it: `ValueError: collect(x, acc) should not modify its Python
    input arguments. Modifying a copy is allowed. The following parameter(s)
    were modified: acc`. The caller's list would not have been changed
    anyway: the body runs on a copy whose tensors are placeholders, and only
    once per trace.

    ## Example
    ```python
    @tf.function
    def collect(x, acc):
        acc.append(x * 2)
        return x

    acc = []
    collect(tf.constant(1.0), acc)
    ```

    Use instead:
    ```python
    @tf.function
    def collect(x):
        return x * 2

    acc = [collect(tf.constant(1.0))]
    ```

    ## Fix safety
    No fix: the caller has to take the value returned instead of reading it
    from its list (or the function copies the argument first: `acc =
    list(acc)`).

    ## Measured effect
    TensorFlow 2.21, CPU. `ValueError ... should not modify its Python input
    arguments` at the first call: `append` (of a tensor or of `1`),
    `extend`, `insert`, `pop`, `dict.pop`, `update`, `setdefault`,
    `acc[0] = x`, `acc["k"] = x`, `del acc["k"]`, `acc += [x]`,
    `acc[0].append(x)`, `slots[0] = x` on a default `slots=[None]`; with
    `autograph=False` too, in a `tf.Module` method, on a dict of tensors
    (`d["y"] = d["x"] * 2`), and from a function nested in the `tf.function`
    or a helper given the parameter (both not flagged). Keras 3.15: a
    `train_step`/`test_step` doing `x, y = data; x["b"] = ...` under
    `fit`/`evaluate`, or `data.pop("label")` on a dataset of dicts, raises
    `ValueError: TensorFlowTrainer._make_function.<locals>.one_step_on_data(data)
    should not modify its Python input arguments`.

    No error: `obj.v = x` on an object argument, `kwargs["a"] = 1`,
    `acc = list(acc)` then `append`, `append` then `pop`, `clear()` of an
    empty list, `sort()` of a sorted one, a helper changing a local list;
    `Dataset.map`/`scan`/`reduce` functions changing their dict element or
    state; a Keras 3 `call` changing its dict input under `fit`/`predict`, a
    Keras 3 `predict_step` changing its data, a `tf_keras` `train_step`
    changing its data. `x[0] = 0.0` on a tensor argument raises `TypeError`
    instead. examples/TFG106 (`tflint-gpu verify --rule TFG106`): before
    raises the `ValueError`; the rewrite returns the value and the caller
    appends it.
    """

    code = "TFG106"
    name = "tf-function-mutates-python-argument"
    message = "A tf.function changes a Python argument in place: ValueError when traced"
    needs = (GRAPH_TEXT,)
    fix_safety = None

    # -- visitors ---------------------------------------------------------
    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATING_METHODS:
            self._check(node, func.value, f"`.{func.attr.value}(...)`", ctx, True)

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):
                self._check(node, target.target.value, "item assignment", ctx, _string_key(target.target))

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        target = node.target
        if isinstance(target, cst.Subscript):
            self._check(node, target.value, "item assignment", ctx, _string_key(target))
        elif isinstance(target, cst.Name) and isinstance(node.operator, cst.AddAssign) \
                and isinstance(node.value, (cst.List, cst.ListComp)):
            self._check(node, target, "`+=`", ctx, True)

    def visit_Del(self, node: cst.Del, ctx) -> None:
        targets = node.target.elements if isinstance(node.target, cst.Tuple) else [node.target]
        for target in targets:
            value = target.value if isinstance(target, cst.Element) else target
            if isinstance(value, cst.Subscript):
                self._check(node, value.value, "`del`", ctx, _string_key(value))
                return

    # -- the check --------------------------------------------------------
    def _check(self, node: cst.CSTNode, receiver: cst.BaseExpression, how: str, ctx, container: bool) -> None:
        """``container``: the statement itself shows ``receiver`` is a list or
        dict (a list/dict method, a string key); else the parameter's
        default or annotation must (a tensor argument raises a TypeError on
        item assignment, not this ValueError)."""
        graph = ctx.graph()
        if graph is None:
            return
        function = ctx.scope.function()
        if function is None or function is not ctx.scope or not isinstance(function.node, cst.FunctionDef):
            return
        name = _root_name(receiver)
        if name is None:
            return
        found = self._argument(name, function, graph)
        if found is None:
            return
        parameter, where = found
        if not container and not _declared_container(parameter, function):
            return
        ctx.report(node, f"{how} changes `{parameter}`, {where}: ValueError when traced")

    def _argument(self, name: str, function: ScopeInfo, graph) -> Optional[Tuple[str, str]]:
        """(parameter, words) if ``name`` is always the argument the
        tf.function receives (or, in a Keras 3 step, part of its ``data``)."""
        if graph.kind == "tf.function":
            param = _own_parameter(name, function)
            if param is None:
                return None
            return name, "an argument of the tf.function"
        if graph.kind == "keras" and graph.keras == "keras3" and function.name in KERAS_STEPS:
            data = _step_data(function)
            if data is None:
                return None
            if name == data:
                return (name, f"the data of Keras 3's `{function.name}`") \
                    if _own_parameter(name, function) is not None else None
            values = bindings.local_values(name, function)
            if len(values) == 1 and isinstance(values[0], tuple) and values[0][0] == UNPACKED \
                    and isinstance(values[0][1], cst.Name) and values[0][1].value == data \
                    and _own_parameter(data, function) is not None:
                return name, f"part of the data of Keras 3's `{function.name}`"
        return None

    cases = [
        flagged(
            """
            import keras

            class LabelledStep:
                def train_step(self, data):
                    labels = data.pop("label")
                    return {"n": labels}

            class Model(LabelledStep, keras.Model):
                pass
            """,
            at=[(5, 18, "`.pop(...)` changes `data`, the data of Keras 3's `train_step`: ValueError when traced")],
            note="a train_step inherited from a mixin: measured, Keras 3.15 raises the ValueError under fit",
        ),
        clean(
            """
            import tf_keras

            class LabelledStep:
                def train_step(self, data):
                    labels = data.pop("label")
                    return {"n": labels}

            class Model(LabelledStep, tf_keras.Model):
                pass

            class Unused:
                def train_step(self, data):
                    data.pop("label")
                    return {}
            """,
            note="tf_keras's steps do not raise (measured); a class no Keras class inherits from",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def collect(x, acc, table, rows):
                acc.append(x * 2)
                acc.extend([x])
                table["k"] = x
                table["n"] += 1
                del table["old"]
                rows[0].append(x)
                acc += [x]
                table.update(k=x)
                return x
            """,
            at=[(5, 5, "`.append(...)` changes `acc`, an argument of the tf.function: ValueError when traced"),
                (6, 5, "`.extend(...)` changes `acc`"), (7, 5, "item assignment changes `table`"),
                (8, 5, "item assignment changes `table`"), (9, 5, "`del` changes `table`"),
                (10, 5, "`.append(...)` changes `rows`"), (11, 5, "`+=` changes `acc`"),
                (12, 5, "`.update(...)` changes `table`")],
            note="each raises ValueError: collect(x, acc, ...) should not modify its Python input arguments",
        ),
        flagged(
            """
            from typing import Dict, List

            import tensorflow as tf

            class Recorder(tf.Module):
                @tf.function
                def __call__(self, x, seen: List[tf.Tensor]):
                    seen.append(x)
                    return x

            def fill(x, out: Dict[str, tf.Tensor] = None):
                out["x"] = x
                out.setdefault("y", x * 2)
                return x

            fill_graph = tf.function(fill)
            """,
            at=[(8, 9, "`.append(...)` changes `seen`"), (12, 5, "item assignment changes `out`"),
                (13, 5, "`.setdefault(...)` changes `out`")],
            note="a tf.Module method (self aside), a function wrapped by tf.function, container annotations",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            class Model(keras.Model):
                def train_step(self, data):
                    labels = data.pop("label")
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(y=labels, y_pred=self(data, training=True))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply(grads, self.trainable_variables)
                    return {"loss": loss}

                def test_step(self, data):
                    x, y = data
                    x["mask"] = tf.ones_like(x["ids"])
                    return {"loss": self.compute_loss(y=y, y_pred=self(x))}
            """,
            at=[(6, 18, "`.pop(...)` changes `data`, the data of Keras 3's `train_step`"),
                (15, 9, "item assignment changes `x`, part of the data of Keras 3's `test_step`")],
            note="Keras 3 calls the steps from a tf.function whose argument is data: fit/evaluate raise",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def collect(x, acc, cache=None, **options):
                acc = list(acc)
                acc.append(x)
                if cache is None:
                    cache = {}
                cache["x"] = x
                options["seen"] = True
                local = []
                local.append(x)
                return acc[-1]

            @tf.function
            def rebind(x, steps=3, training=False):
                x += 1
                return x
            """,
            note="a copy (acc = list(acc)), a default replaced, **kwargs (a fresh dict), locals: no error",
        ),
        clean(
            """
            import keras
            import tensorflow as tf
            import tf_keras

            def add_feature(features):
                features["double"] = features["x"] * 2
                features.pop("raw")
                return features

            ds = tf.data.Dataset.from_tensor_slices({"x": [1, 2], "raw": [3, 4]}).map(add_feature)

            class Net(keras.Model):
                def call(self, inputs):
                    inputs["extra"] = inputs["a"] * 2
                    return inputs["a"]

                def predict_step(self, data):
                    data["b"] = data["a"] + 1
                    return self(data)

            class Old(tf_keras.Model):
                def train_step(self, data):
                    x, y = data
                    x["b"] = x["a"] + 1
                    return super().train_step((x, y))
            """,
            note="tf.data functions may change their element; a Keras 3 call and predict_step, and a tf_keras "
                 "train_step, raise nothing (measured)",
        ),
        clean(
            """
            import tensorflow as tf

            state = []

            class Box:
                pass

            @tf.function
            def step(x, box):
                box.value = x
                state.append(x)

                def inner(acc):
                    acc.append(x)
                inner([])
                return x
            """,
            note="an attribute set on an object argument raises nothing; a global list is TFG103's; "
                 "a nested function's own parameter is not the tf.function's",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def clip(x, i):
                x[0] = 0.0
                x[i] += 1.0
                del x[1]
                return x
            """,
            note="an index that a tensor would take too: on a tensor argument item assignment raises "
                 "TypeError (no item assignment), not this ValueError; only string keys or a list/dict "
                 "default or annotation tell a container",
        ),
        flagged(
            """
            from typing import List

            import tensorflow as tf

            @tf.function
            def fill(x, out: List[tf.Tensor], slots=[None]):
                out[0] = x
                slots[0] = x
                return x
            """,
            at=[(7, 5, "item assignment changes `out`"), (8, 5, "item assignment changes `slots`")],
            note="an index into a parameter declared a list (annotation, default)",
        ),
    ]


# -- helpers -----------------------------------------------------------------
def _string_key(target: cst.Subscript) -> bool:
    """``d["k"]``: a string key, which only a dict (not a tensor) takes."""
    if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return False
    return isinstance(target.slice[0].slice.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def _declared_container(name: str, function: ScopeInfo) -> bool:
    """The parameter's default is a list or dict display, or its annotation a list or dict type."""
    for value in bindings.local_values(name, function):
        if isinstance(value, tuple) and value[0] == PARAM:
            param = value[1]
            if param.default is not None and isinstance(param.default, (cst.List, cst.Dict)):
                return True
            if param.annotation is not None and _container_annotation(param.annotation.annotation):
                return True
    return False


def _root_name(expr: cst.BaseExpression) -> Optional[str]:
    """``acc`` for ``acc``, ``acc[0]``, ``acc["k"][1]``; None for attributes and calls."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _own_parameter(name: str, function: ScopeInfo) -> Optional[cst.Param]:
    """The parameter ``name`` of ``function`` if the name is never rebound in
    it (``+= [...]`` changes the list in place), is not ``self``/``*args``/``**kwargs``, and
    its default and annotation, if any, allow a list or dict."""
    values = bindings.local_values(name, function)
    params = [v for v in values if isinstance(v, tuple) and v[0] == PARAM]
    others = [v for v in values if not (isinstance(v, tuple) and v[0] == PARAM) and not _extends_list(v)]
    if len(params) != 1 or others:
        return None
    _, param, position = params[0]
    node = function.node
    if param is node.params.star_arg or param is node.params.star_kwarg:
        return None
    if position == 0 and function.binds_instance:
        return None
    if param.default is not None and not _container_default(param.default):
        return None
    if param.annotation is not None and not _container_annotation(param.annotation.annotation):
        return None
    return param


def _extends_list(value) -> bool:
    """A binding ``acc += [x]`` (or a list comprehension): changes the list in place."""
    if not (isinstance(value, tuple) and value[0] == AUGMENTED):
        return False
    node = value[1]
    return isinstance(node.operator, cst.AddAssign) and isinstance(node.value, (cst.List, cst.ListComp))


def _container_default(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.List, cst.Dict)) or (isinstance(expr, cst.Name) and expr.value == "None")


def _container_annotation(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Attribute):
        expr = expr.attr
    return isinstance(expr, cst.Name) and expr.value in _CONTAINER_ANNOTATIONS


def _step_data(function: ScopeInfo) -> Optional[str]:
    """The name of a Keras step's ``data`` parameter (the one after ``self``)."""
    return bindings.parameter_name(function, 1)
