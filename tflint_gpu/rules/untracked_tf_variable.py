from __future__ import annotations

from typing import Iterator, List, Optional

import libcst as cst

from tflint_gpu.semantic.api import keyword
from tflint_gpu.semantic.migration import KERAS3, is_metric_class, is_model_class
from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged

_VARIABLES = frozenset({"tensorflow.Variable", "tensorflow.compat.v1.Variable"})
# Keywords tf.Variable and keras.Variable both take with one meaning; keras.Variable's second
# positional parameter is `shape`, tf.Variable's `trainable`: only a lone positional value is rewritten.
_SAME_KEYWORDS = frozenset({"initial_value", "trainable", "name", "dtype"})


def _tracking_base(qualname: Optional[str]) -> Optional[str]:
    """"layer", "model" or "metric" for a Keras class whose objects track their variables."""
    if qualname is None:
        return None
    if is_metric_class(qualname):
        return "metric"
    if is_model_class(qualname):
        return "model"
    parts = qualname.split(".")
    if qualname == "keras.Layer" or (len(parts) == 3 and parts[:2] == ["keras", "layers"] and parts[2][:1].isupper()):
        return "layer"
    return None


def _variables(value: cst.BaseExpression) -> Iterator[cst.Call]:
    """The calls that make the value (or the elements of a list, tuple or comprehension of them)."""
    if isinstance(value, cst.Call):
        yield value
    elif isinstance(value, (cst.List, cst.Tuple)):
        for element in value.elements:
            if isinstance(element, cst.Element):
                yield from _variables(element.value)
    elif isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        yield from _variables(value.elt)


class UntrackedTfVariable(Rule):
    """A `tf.Variable` held by a Keras 3 layer, model or metric: Keras 3 does not track it.

    ## What it does
    Finds `self.x = tf.Variable(...)` (also a list, tuple or comprehension of
    them) in a method of a class whose Keras base is Keras 3's (`keras.layers.Layer`
    and the layers, `keras.Model`, `keras.metrics.Metric`), in `__init__`,
    `build` or any other method.

    ## Why is this bad?
    Keras 2 (`tf_keras`) tracked any `tf.Variable` set as an attribute. Keras 3
    tracks only its own variables (`self.add_weight`, `keras.Variable`): a
    `tf.Variable` attribute is not in `layer.weights` or
    `model.trainable_variables`, so `fit` does not train it, `save_weights`
    and `model.save` do not save it, and a metric's `reset_state` does not
    reset it (it goes on counting across epochs). Nothing raises; when the
    model has no other weight, `fit` warns "The model does not have any
    trainable weights". Keras's own list of incompatibilities names it
    (keras-team/keras issue 18467).

    ## Example
    ```python
    class Scale(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(2.0)
    ```

    Use instead:
    ```python
    class Scale(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.w = keras.Variable(2.0)  # or self.add_weight(...)
    ```

    ## Fix safety
    Unsafe: `tf.Variable(value)` becomes `keras.Variable(value)` (`tf.keras.Variable`
    where the class spells its base `tf.keras`; `trainable=`, `name=` and
    `dtype=` kept), so the variable is now trained, saved and reset: the
    behaviour changes, on purpose. The dtype is the value's, as before
    (measured: a Python float gives float32, an int int32, a float64 array
    float64). Offered only for one positional value and those keywords
    (`keras.Variable`'s second positional parameter is `shape`, not
    `trainable`). Not flagged: `tf_keras` classes, classes of no Keras base,
    `tf.Module` subclasses (which track them), a `tf.Variable` in a local
    name, a `trainable=False` one of a layer or model (then it is only not
    saved, and is often a constant rebuilt in `build`, such as a positional
    encoding; a metric's is reported: `reset_state` misses it), `keras.Variable` and `add_weight`, Keras's own code (`keras.src`).
    Keras 3 only: tf_keras has no `tf.keras.Variable` (AttributeError,
    executed).

    ## Measured effect
    TF 2.21 / Keras 3.15, CPU: a layer with `self.w = tf.Variable(2.0)` has no
    weights (`layer.weights == []`, also when bound in `build`, in a list, or
    on a `keras.Model` subclass); after one epoch of SGD `w` is still 2.0,
    where under tf_keras 2.21 it is 1.96. A `keras.metrics.Metric` counting in
    a `tf.Variable` returns 1.0 after `reset_state()` (0 variables tracked).
    With `keras.Variable(2.0)` the layer's weights hold it and `fit` trains it.
    """

    code = "TFG920"
    name = "untracked-tf-variable"
    message = "Keras 3 does not track a `tf.Variable` attribute"
    needs = (("Variable",), ("keras",))
    fix_safety = Safety.UNSAFE
    migration = True

    def visit_Module(self, node: cst.Module, ctx) -> None:
        for kind in ("Assign", "AnnAssign"):
            for statement, scope in ctx.model.index.get(kind, ()):
                if statement.value is None:
                    continue
                targets: List[cst.BaseExpression] = (
                    [t.target for t in statement.targets] if isinstance(statement, cst.Assign)
                    else [statement.target])
                self._check(statement.value, targets, scope, ctx)

    def _check(self, value: cst.BaseExpression, targets: List[cst.BaseExpression], scope: ScopeInfo, ctx) -> None:
        calls = [c for c in _variables(value) if ctx.qualname(c.func, scope) in _VARIABLES]
        if not calls:
            return
        owner = _self_attribute_owner(targets, scope)
        if owner is None or ctx.keras_flavour(owner) != KERAS3:
            return
        if any(raw.startswith("keras.src.") for raw in ctx.graphs.class_bases(owner)):
            return  # Keras's own code: it knows what it tracks (a tf.Variable for tf.saved_model, on purpose)
        base = ctx.migration.class_base(owner)
        tracking = _tracking_base(base)
        if tracking is None:
            return
        for call in calls:
            if ctx.migration.guarded(call, scope):
                continue
            trainable = keyword(call, "trainable")
            if tracking != "metric" and trainable is not None and isinstance(trainable.value, cst.Name) \
                    and trainable.value.value == "False":
                continue  # only not saved: often a constant rebuilt in build (a positional encoding)
            consequence = ("`reset_state` does not reset it and it is not saved" if tracking == "metric"
                           else "`fit` does not train it and `save_weights` does not save it")
            ctx.report(call.func, f"Keras 3 does not track a `tf.Variable` attribute of a {tracking}: "
                                  f"{consequence}; use `keras.Variable` or `self.add_weight`",
                       _fix(call, owner, scope, ctx))


def _self_attribute_owner(targets: List[cst.BaseExpression], scope: ScopeInfo) -> Optional[ScopeInfo]:
    """The class whose method binds ``self.<name>`` among ``targets``, or None."""
    function = scope
    while function is not None and function.kind in ("lambda",):
        function = function.parent
    if function is None or function.kind != "function" or function.parent is None \
            or function.parent.kind != "class":
        return None
    params = function.node.params.params if isinstance(function.node, cst.FunctionDef) else ()
    if not params:
        return None
    self_name = params[0].name.value
    for target in targets:
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value == self_name:
            return function.parent
    return None


def _fix(call: cst.Call, owner: ScopeInfo, scope: ScopeInfo, ctx) -> Optional[Fix]:
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or len(positional) > 1 or any(
            a.keyword is not None and a.keyword.value not in _SAME_KEYWORDS for a in call.args):
        return None
    if positional and keyword(call, "initial_value") is not None:
        return None
    spelled_tf = any(raw.startswith("tensorflow.") for raw in ctx.graphs.class_bases(owner))
    spelled = ctx.module_expr("tensorflow", "keras.Variable", scope=scope) if spelled_tf \
        else ctx.module_expr("keras", "Variable", scope=scope)
    if spelled is None:
        return None
    func, imports = spelled
    args = [a.with_changes(keyword=cst.Name("initializer")) if a.keyword is not None
            and a.keyword.value == "initial_value" else a for a in call.args]
    return Fix("Make it a `keras.Variable` (now trained and saved)", Safety.UNSAFE,
               {call: call.with_changes(func=func, args=args)}, imports)


UntrackedTfVariable.cases = [
    flagged(
        """
        import numpy as np
        import keras
        import tensorflow as tf

        class Scale(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.w = tf.Variable(2.0)

            def call(self, x):
                return x * self.w

        layer = Scale()
        model = keras.Sequential([keras.Input((1,)), layer])
        model.compile(keras.optimizers.SGD(0.1), "mse")
        model.fit(np.ones((4, 1)), np.zeros((4, 1)), epochs=1, batch_size=4, verbose=0)
        """,
        fixed="""
        import numpy as np
        import keras
        import tensorflow as tf

        class Scale(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.w = keras.Variable(2.0)

            def call(self, x):
                return x * self.w

        layer = Scale()
        model = keras.Sequential([keras.Input((1,)), layer])
        model.compile(keras.optimizers.SGD(0.1), "mse")
        model.fit(np.ones((4, 1)), np.zeros((4, 1)), epochs=1, batch_size=4, verbose=0)
        """,
        at=[(8, 18, "Keras 3 does not track a `tf.Variable` attribute of a layer: `fit` does not train it")],
        run="""
        w = float(np.asarray(layer.w))
        tracked = len(layer.weights)
        """,
        effect=CHANGES,
        note="w stays 2.0 and layer.weights is [] before; after the fix it is trained (1.6) and tracked",
    ),
    flagged(
        """
        import tensorflow as tf

        class Count(tf.keras.metrics.Metric):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.n = tf.Variable(0.0, trainable=False, name="n")

            def update_state(self, y_true, y_pred, sample_weight=None):
                self.n.assign_add(1.0)

            def result(self):
                return self.n

        metric = Count()
        metric.update_state(1, 1)
        metric.reset_state()
        """,
        fixed="""
        import tensorflow as tf

        class Count(tf.keras.metrics.Metric):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.n = tf.keras.Variable(0.0, trainable=False, name="n")

            def update_state(self, y_true, y_pred, sample_weight=None):
                self.n.assign_add(1.0)

            def result(self):
                return self.n

        metric = Count()
        metric.update_state(1, 1)
        metric.reset_state()
        """,
        at=[(6, 18, "Keras 3 does not track a `tf.Variable` attribute of a metric: `reset_state` does not "
                    "reset it")],
        run="""
        count = float(metric.result())
        """,
        effect=CHANGES,
        note="the count is 1.0 after reset_state() before the fix, 0.0 after",
    ),
    flagged(
        """
        import keras
        import tensorflow as tf

        class Net(keras.Model):
            def __init__(self):
                super().__init__()
                self.scales = [tf.Variable(1.0), tf.Variable(2.0)]

            def build(self, shape):
                self.kernel = tf.Variable(tf.ones((shape[-1], 2)), True)
                self.bias: tf.Variable = tf.Variable(initial_value=tf.zeros(2), name="bias")
        """,
        fixed="""
        import keras
        import tensorflow as tf

        class Net(keras.Model):
            def __init__(self):
                super().__init__()
                self.scales = [keras.Variable(1.0), keras.Variable(2.0)]

            def build(self, shape):
                self.kernel = tf.Variable(tf.ones((shape[-1], 2)), True)
                self.bias: tf.Variable = keras.Variable(initializer=tf.zeros(2), name="bias")
        """,
        at=[(7, 24, "Keras 3 does not track a `tf.Variable` attribute of a model"),
            (7, 42, "Keras 3 does not track"),
            (10, 23, "Keras 3 does not track"),
            (11, 34, "Keras 3 does not track")],
        run="""
        net = Net()
        net.build((None, 3))
        tracked = len(net.weights)
        """,
        effect=CHANGES,
        note="0 weights tracked before, 3 after (the kernel keeps its tf.Variable); "
             "a list of them; bound in build; a second positional argument (trainable here, shape for "
             "keras.Variable): no fix; initial_value= becomes initializer=",
    ),
    clean(
        """
        import keras
        import tensorflow as tf
        import tf_keras

        class Legacy(tf_keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.w = tf.Variable(2.0)

        class Module(tf.Module):
            def __init__(self):
                self.w = tf.Variable(2.0)

        class Plain:
            def __init__(self):
                self.w = tf.Variable(2.0)

        class Tracked(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.w = keras.Variable(2.0)
                self.v = self.add_weight(shape=(), initializer="ones")
                local = tf.Variable(1.0)

            def build(self, shape):
                self.encoding = tf.Variable(tf.zeros((8, 4)), trainable=False, name="positions")

        class Saver(keras.callbacks.Callback):
            def __init__(self):
                super().__init__()
                self.best = tf.Variable(0.0)

        from keras.src import models

        class Internal(models.Model):
            def __init__(self):
                super().__init__()
                self.v = tf.Variable(1.0)
        """,
        note="tf_keras tracks them; tf.Module tracks them; no Keras base; keras.Variable, add_weight, a local; "
             "a callback has no weights to track; keras.src internals",
    ),
]
