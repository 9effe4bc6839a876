from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import argument
from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.semantic.target import NEW_OPTIMIZERS_TF
from tflint_gpu.rules.base import BY_TARGET, FIXES_ERROR, Fix, Rule, Safety, clean, flagged

_VARIABLE_LISTS = frozenset({"trainable_variables", "trainable_weights", "variables", "weights"})
_DEPTH = 6


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


class SharedOptimizer(Rule):
    """One Keras optimizer applying gradients to two models' variables (a GAN's generator and discriminator).

    ## What it does
    Finds a Keras optimizer object whose `apply_gradients(zip(grads, vars))`
    (or `minimize(loss, var_list=vars)`) is called in two places with the
    variables of different models or layers (`generator.trainable_variables`
    in one, `discriminator.trainable_variables` in the other; also through
    names and `self.` attributes bound once, and one optimizer handed in once
    and stored under two attributes, as `compile(self, optimizer)` often
    does), when it is never built explicitly (`optimizer.build(all_vars)`).
    Reported at the second call. Also one optimizer handed to `compile` again
    after layers were unfrozen in that code (`layer.trainable = True`; the
    freeze-then-fine-tune recipe): it was built at the first `fit` for the
    variables trainable then. And a Keras optimizer made in a parameter's
    default (`def compile(self, optimizer=keras.optimizers.Adam())`): Python
    evaluates a default once, when the `def` runs, so every model compiled
    with the defaults shares that one optimizer.

    ## Why is this bad?
    Since TF 2.11, `tf.keras.optimizers.Adam` and the others are the optimizers
    that create their slots for the variables of their first
    `apply_gradients` and refuse any other variable afterwards. Measured under
    TF 2.21: Keras 3 raises `ValueError: Unknown variable: ... This optimizer
    can only be called for the variables it was originally built with`, and
    tf_keras 2.21 raises `KeyError: 'The optimizer cannot recognize variable
    dense/kernel:0 ...'`, on the second model's first step. Code written for
    TF 2.0-2.10, whose optimizers kept slots per variable, shared one
    optimizer freely (also its step count and learning-rate schedule, which
    two models should not share either).

    ## Example
    ```python
    optimizer = tf.keras.optimizers.Adam(1e-4)
    optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    optimizer.apply_gradients(zip(g_grads, generator.trainable_variables))
    ```

    Use instead:
    ```python
    d_optimizer = tf.keras.optimizers.Adam(1e-4)
    g_optimizer = tf.keras.optimizers.Adam(1e-4)
    d_optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    g_optimizer.apply_gradients(zip(g_grads, generator.trainable_variables))
    ```

    ## Fix safety
    No fix for two models: making a second optimizer means choosing its name
    and settings (for a default: `None`, and an optimizer made in the body
    when it is), and a model's training then no longer shares the step
    count. At a re-compile after unfreezing, an unsafe fix compiles with
    `type(optimizer).from_config(optimizer.get_config())`: a new optimizer
    of the same class and settings, with the learning rate the old one has
    now (a `LearningRateScheduler`'s last value), built at the next `fit`
    for every trainable variable. What differs from the TF 2.0-2.10
    optimizer the code was written for (which added slots for the newly
    trainable variables and kept the rest): the step count restarts at 0
    (Adam's bias correction and a `LearningRateSchedule` start over) and
    the moments of the variables trained before restart at zero. Measured
    (TF 2.21, Dense(3) frozen then unfrozen under Dense(1), Adam(1e-2),
    3 + 3 epochs of 2 steps): tf_keras's legacy Adam (the old behaviour)
    ends at `iterations` 12 and losses 18.152, 16.265, 14.369 in the second
    phase; the fix under Keras 3 at 6 and 18.095, 15.778, 13.742, its
    weights up to 0.014 apart. Offered only for a plain name that no code
    reads after the compile (a later `optimizer.learning_rate.assign(...)`
    would set the old object), where `type` is the builtin. Not
    flagged: the same model's variables in both calls, an optimizer built
    with `build(...)`, TF 1 optimizers (`tf.compat.v1.train.*`) and
    `optimizers.legacy` ones (they keep slots per variable), and projects
    whose target is TF 2.10 or older (`target-version`, pins).

    ## Measured effect
    TF 2.21 CPU, Keras 3.15 and tf_keras 2.21: the errors above on the second
    `apply_gradients` (examples/TFG602: fixes-error); the same at the first
    step of the `fit` after a re-compile with the same optimizer, in both
    (bubbliiiing/unet-tf2 train.py:506/510, train_medical.py:475/479), and
    none with the fix's new optimizer. With one optimizer per
    model both steps run. A default optimizer, run by hand (Keras 3.15): two
    instances of a model whose `compile(optimizer=keras.optimizers.Adam())`
    passes it to `super().compile`: the same object, and the second's `fit`
    raises the ValueError. TF 2.10 and older do not install on this Python;
    the boundary is TF 2.11's release note ("tf.keras.optimizers.Optimizer
    now points to the new Keras optimizer"), not measured here.
    """

    code = "TFG602"
    fix_safety = Safety.UNSAFE
    name = "shared-optimizer"
    message = "One optimizer updates the variables of two models"
    needs = (("apply_gradients", "minimize", "compile"),)
    reads_index = ("Call", "Assign", "FunctionDef")
    # What breaks when a project moves past TF 2.11 (both Keras): on at every target that has the new
    # optimizers (it asks ``ctx.target`` itself), and run by `tflint-gpu upgrade`.
    migration = BY_TARGET

    def visit_Module(self, node: cst.Module, ctx) -> None:
        if not ctx.target.at_least(NEW_OPTIMIZERS_TF):
            return
        source = ctx.model.source
        if "compat.v1.train" in source or "tf.train." in source:
            return  # TF 1 optimizers share apply_gradients' name and keep slots per variable
        calls: Dict[int, List[Tuple[cst.Call, ScopeInfo, FrozenSet[int], str]]] = {}
        built: set = set()
        for call, scope in ctx.model.index.get("Call", ()):
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in ("apply_gradients", "minimize",
                                                                               "build"):
                continue
            origin = ctx.migration.object_origin(func.value, scope)
            if origin is None or not _keras_optimizer(origin, ctx):
                continue
            if func.attr.value == "build":
                built.add(id(origin[0]))
                continue
            owners = _owners(_variables(call, func.attr.value), scope, ctx, 0)
            if owners is None:
                continue
            keys, shown = owners
            calls.setdefault(id(origin[0]), []).append((call, scope, frozenset(keys), shown))
        self._recompiled(ctx)
        self._defaults(ctx)
        for key, uses in calls.items():  # each in source order (the walk's index keeps it)
            if key in built or len(uses) < 2:
                continue
            first_keys, first_shown = uses[0][2], uses[0][3]
            for call, scope, keys, shown in uses[1:]:
                if keys != first_keys:
                    ctx.report(call.func.attr,
                               f"This optimizer also updates {first_shown}'s variables: from TF 2.11 (Keras 3 "
                               f"and tf_keras) an optimizer refuses variables it was not built with "
                               f"(ValueError: Unknown variable); give {shown} an optimizer of its own")
                    break


    def _defaults(self, ctx) -> None:
        """A Keras optimizer made in a parameter's default: Python evaluates a default once, when the
        ``def`` runs, so every call that takes it (every model compiled with the defaults) gets the
        same optimizer, built for the first model's variables."""
        for function, scope in ctx.model.index.get("FunctionDef", ()):
            params = function.params
            found = [param for param in (*params.posonly_params, *params.params, *params.kwonly_params)
                     if isinstance(param.default, cst.Call) and _keras_optimizer((param.default, scope), ctx)]
            if found:  # one finding a def, at its first such default
                names = ", ".join(f"`{param.name.value}`" for param in found)
                ctx.report(found[0].default,
                           f"This optimizer is made once, when the `def` runs, and shared by every call of "
                           f"`{function.name.value}` that takes the default ({names}): from TF 2.11 (Keras 3 "
                           f"and tf_keras) the second model it trains raises ValueError: Unknown variable; "
                           f"default to None and make the optimizer in the body")

    def _recompiled(self, ctx) -> None:
        """``model.compile(optimizer=opt)`` again with the same optimizer after layers were unfrozen
        (``layer.trainable = True`` between the two, in that scope's code and on one path): the
        optimizer was built for the variables trainable at its first ``fit`` and refuses the others."""
        compiles: Dict[Tuple[int, int], List[cst.Call]] = {}
        for call, scope in ctx.model.index.get("Call", ()):
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value != "compile":
                continue
            given = argument(call, 0, "optimizer")
            if given is None or isinstance(given, (cst.SimpleString, cst.Call)):
                continue  # a string or a new optimizer each time
            key = _optimizer_key(given, scope, ctx)
            if key is not None:
                compiles.setdefault((id(scope), key), []).append(call)
        if not compiles:
            return
        unfreezing: Dict[int, List[cst.CSTNode]] = {}
        for statement, where in ctx.model.index.get("Assign", ()):
            if any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "trainable"
                   for t in statement.targets) and isinstance(statement.value, cst.Name) \
                    and statement.value.value == "True":
                unfreezing.setdefault(id(where), []).append(statement)
        scopes = {id(scope): scope for _, scope in ctx.model.index.get("Call", ())}
        for (scope_id, _), calls in compiles.items():
            scope = scopes[scope_id]
            order = scope.flow_order()
            for later in calls[1:]:
                if any(_before(first, unfreeze, order) and _before(unfreeze, later, order)
                       and _before(first, later, order)
                       for first in calls if first is not later for unfreeze in unfreezing.get(scope_id, ())):
                    given = argument(later, 0, "optimizer")
                    ctx.report(given,
                               "This optimizer was built at the first `fit` for the variables trainable then: "
                               "after unfreezing, from TF 2.11 (Keras 3 and tf_keras) it refuses the others "
                               "(ValueError: Unknown variable); compile with a new optimizer",
                               _fresh_optimizer(given, later, scope, order, ctx))


def _fresh_optimizer(given: cst.BaseExpression, later: cst.Call, scope: ScopeInfo, order, ctx) -> Optional[Fix]:
    """``optimizer=type(optimizer).from_config(optimizer.get_config())`` at a re-compile: a new optimizer of
    the same class and settings (the learning rate it has now), built at the next ``fit`` for the
    variables trainable then. Only for a plain name no code reads after this compile (a later
    ``optimizer.learning_rate.assign(...)`` would set the old one), nor a nested function."""
    if not isinstance(given, cst.Name) or not ctx.resolver.is_free("type", scope):
        return None
    found = ctx.assigned(given.value, given, scope)
    if found is None:
        return None
    for use in ctx.graphs.uses.uses_of(given.value, found.scope):
        if use.scope is not scope:
            return None
        if use.name is not given and _before(later, use.name, order):
            return None
    name = given.value
    fresh = cst.parse_expression(f"type({name}).from_config({name}.get_config())")
    return Fix("Compile with a new optimizer made from this one's config (its step count and slots restart)",
               Safety.UNSAFE, {given: fresh})


def _before(a: cst.CSTNode, b: cst.CSTNode, order) -> bool:
    """Does ``a`` come before ``b`` in the scope's code, on a path that reaches both (not the two
    branches of one ``if``)?"""
    if id(a) not in order.index or id(b) not in order.index or order.pre[id(a)] >= order.pre[id(b)]:
        return False
    above_a = list(order.ancestors(a))
    above_b = {id(n) for n in order.ancestors(b)}
    common = next((n for n in above_a if id(n) in above_b), None)
    if isinstance(common, cst.If) and common.orelse is not None:
        in_body = order.contains(common.body, a)
        return in_body == order.contains(common.body, b)
    return True


def _optimizer_key(expr: cst.BaseExpression, scope: ScopeInfo, ctx) -> Optional[int]:
    """An id for the optimizer object ``expr`` names: its origin (``Migration.object_origin``), or the
    subscript of a dict display of Keras optimizers it was bound from (``{"adam": Adam(), "sgd": SGD()}[name]``)."""
    origin = ctx.migration.object_origin(expr, scope)
    if origin is not None:
        return id(origin[0]) if _keras_optimizer(origin, ctx) else None
    if isinstance(expr, cst.Name):
        found = ctx.assigned(expr.value, expr, scope)
        if found is not None and len(found.values) == 1 and isinstance(found.values[0], cst.Subscript) \
                and isinstance(found.values[0].value, cst.Dict):
            values = [e.value for e in found.values[0].value.elements if isinstance(e, cst.DictElement)]
            if values and all(isinstance(v, cst.Call) and _keras_optimizer((v, found.scope), ctx) for v in values):
                return id(found.values[0])
    return None


def _keras_optimizer(origin: Tuple[cst.CSTNode, ScopeInfo], ctx) -> bool:
    """Does the object come from a Keras optimizer of the new kind (or from a parameter, in a file
    that uses Keras and no TF 1 or legacy optimizer)?"""
    node, scope = origin
    if isinstance(node, cst.Param):
        return bool(ctx.migration.module_flavours()) and "optimizers.legacy" not in ctx.model.source
    if not isinstance(node, cst.Call):
        return False
    qualname = ctx.qualname(node.func, scope)
    if qualname is None or not qualname.startswith("keras.optimizers.") or ".legacy." in qualname \
            or ".schedules." in qualname:
        return False
    last = qualname.rsplit(".", 1)[1]
    return last[:1].isupper() and last not in ("Optimizer", "LossScaleOptimizer") or last == "get"


def _variables(call: cst.Call, method: str) -> Optional[cst.BaseExpression]:
    """The variables expression of ``apply_gradients(zip(grads, vars))`` / ``minimize(loss, var_list=vars)``."""
    if method == "minimize":
        return argument(call, 1, "var_list")
    pairs = argument(call, 0, "grads_and_vars")
    return pairs


def _owners(expr: Optional[cst.BaseExpression], scope: ScopeInfo, ctx, depth: int
            ) -> Optional[Tuple[List[int], str]]:
    """(origin ids of the models or layers whose variables ``expr`` lists, how the first is written),
    or None when that cannot be told."""
    if expr is None or depth > _DEPTH:
        return None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("zip", "list") \
            and ctx.qualname(expr.func, scope) is None:
        if expr.func.value == "list":
            return _owners(argument(expr, 0, "iterable"), scope, ctx, depth + 1)
        if len(expr.args) != 2 or any(a.keyword is not None or a.star for a in expr.args):
            return None
        return _owners(expr.args[1].value, scope, ctx, depth + 1)
    if isinstance(expr, cst.Attribute) and expr.attr.value in _VARIABLE_LISTS:
        origin = ctx.migration.object_origin(expr.value, scope)
        if origin is None:
            return None
        return [id(origin[0])], f"`{_code(expr.value)}`"
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        left = _owners(expr.left, scope, ctx, depth + 1)
        right = _owners(expr.right, scope, ctx, depth + 1)
        if left is None or right is None:
            return None
        return left[0] + right[0], left[1]
    if isinstance(expr, cst.Name):
        found = ctx.assigned(expr.value, expr, scope)
        if found is None or len(found.values) != 1 or not isinstance(found.values[0], cst.BaseExpression):
            return None
        return _owners(found.values[0], found.scope, ctx, depth + 1)
    return None


SharedOptimizer.cases = [
    flagged(
        """
        import tensorflow as tf

        generator = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(2)])
        discriminator = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.Adam(1e-4)

        @tf.function
        def train_step(x):
            with tf.GradientTape() as tape:
                d_loss = tf.reduce_mean(discriminator(x))
            d_vars = discriminator.trainable_variables
            optimizer.apply_gradients(zip(tape.gradient(d_loss, d_vars), d_vars))
            with tf.GradientTape() as tape:
                g_loss = -tf.reduce_mean(discriminator(generator(x)))
            grads = tape.gradient(g_loss, generator.trainable_variables)
            optimizer.apply_gradients(zip(grads, generator.trainable_variables))
        """,
        at=[(16, 15, "This optimizer also updates `discriminator`'s variables: from TF 2.11")],
        note="Keras 3: ValueError: Unknown variable (measured, TF 2.21); tf_keras 2.21: KeyError",
    ),
    flagged(
        """
        import tensorflow as tf

        class Gan(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.generator = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                self.discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])

            def compile(self, optimizer):
                super().compile()
                self.d_optimizer = optimizer
                self.g_optimizer = optimizer

            def train_step(self, x):
                with tf.GradientTape() as tape:
                    d_loss = tf.reduce_mean(self.discriminator(x))
                grads = tape.gradient(d_loss, self.discriminator.trainable_variables)
                self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_variables))
                with tf.GradientTape() as tape:
                    g_loss = -tf.reduce_mean(self.discriminator(self.generator(x)))
                grads = tape.gradient(g_loss, self.generator.trainable_variables)
                self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_variables))
                return {"d": d_loss, "g": g_loss}
        """,
        at=[(22, 26, "This optimizer also updates `self.discriminator`'s variables")],
        note="one optimizer handed to compile and kept under two names (dslisleedh/GAN-tensorflow2's dcgan.py)",
    ),
    flagged(
        """
        import tensorflow as tf

        def train(model, base, data, optimizer_type):
            optimizer = {
                "adam": tf.keras.optimizers.Adam(1e-3),
                "sgd": tf.keras.optimizers.SGD(1e-2),
            }[optimizer_type]
            base.trainable = False
            model.compile(optimizer=optimizer, loss="mse")
            model.fit(data, epochs=1)
            base.trainable = True
            model.compile(optimizer=optimizer, loss="mse")
            model.fit(data, epochs=1)
            model.compile(optimizer="adam", loss="mse")
        """,
        """
        import tensorflow as tf

        def train(model, base, data, optimizer_type):
            optimizer = {
                "adam": tf.keras.optimizers.Adam(1e-3),
                "sgd": tf.keras.optimizers.SGD(1e-2),
            }[optimizer_type]
            base.trainable = False
            model.compile(optimizer=optimizer, loss="mse")
            model.fit(data, epochs=1)
            base.trainable = True
            model.compile(optimizer=type(optimizer).from_config(optimizer.get_config()), loss="mse")
            model.fit(data, epochs=1)
            model.compile(optimizer="adam", loss="mse")
        """,
        at=[(12, 29, "This optimizer was built at the first `fit` for the variables trainable then")],
        run="""
        base = tf.keras.layers.Dense(3, kernel_initializer="ones")
        model = tf.keras.Sequential([tf.keras.Input((4,)), base, tf.keras.layers.Dense(1, kernel_initializer="ones")])
        x = tf.reshape(tf.linspace(-1.0, 1.0, 32), (8, 4))
        train(model, base, tf.data.Dataset.from_tensor_slices((x, tf.reduce_sum(x, 1, keepdims=True))).batch(4), "adam")
        weights = model.get_weights()
        """,
        effect=FIXES_ERROR,
        note="bubbliiiing/unet-tf2 train_medical.py:479 (ValueError: Unknown variable under Keras 3, run by "
             "hand); a string optimizer makes a new one",
    ),
    flagged(
        """
        import numpy as np
        import tensorflow as tf

        x = np.linspace(-1.0, 1.0, 32, dtype="float32").reshape(8, 4)
        y = x.sum(axis=1, keepdims=True)
        base = tf.keras.layers.Dense(3, kernel_initializer="ones")
        model = tf.keras.Sequential([tf.keras.Input((4,)), base, tf.keras.layers.Dense(1, kernel_initializer="ones")])
        optimizer = tf.keras.optimizers.Adam(1e-2)
        base.trainable = False
        model.compile(optimizer=optimizer, loss="mse")
        model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
        base.trainable = True
        if x.shape[0] > 1:
            with tf.distribute.get_strategy().scope():
                model.compile(optimizer=optimizer, loss="mse")
        else:
            model.compile(optimizer=optimizer, loss="mse")
        losses = np.array(model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0).history["loss"])
        weights = model.get_weights()
        """,
        """
        import numpy as np
        import tensorflow as tf

        x = np.linspace(-1.0, 1.0, 32, dtype="float32").reshape(8, 4)
        y = x.sum(axis=1, keepdims=True)
        base = tf.keras.layers.Dense(3, kernel_initializer="ones")
        model = tf.keras.Sequential([tf.keras.Input((4,)), base, tf.keras.layers.Dense(1, kernel_initializer="ones")])
        optimizer = tf.keras.optimizers.Adam(1e-2)
        base.trainable = False
        model.compile(optimizer=optimizer, loss="mse")
        model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
        base.trainable = True
        if x.shape[0] > 1:
            with tf.distribute.get_strategy().scope():
                model.compile(optimizer=type(optimizer).from_config(optimizer.get_config()), loss="mse")
        else:
            model.compile(optimizer=type(optimizer).from_config(optimizer.get_config()), loss="mse")
        losses = np.array(model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0).history["loss"])
        weights = model.get_weights()
        """,
        at=[(15, 33, "This optimizer was built at the first `fit` for the variables trainable then"),
            (17, 29, "This optimizer was built at the first `fit` for the variables trainable then")],
        effect=FIXES_ERROR,
        note="unet-tf2 train.py:506/510's two branches (a strategy scope or not): ValueError: Unknown variable "
             "under Keras 3 (tf_keras 2.21: KeyError); the new optimizer trains both phases",
    ),
    flagged(
        """
        import tensorflow as tf

        def train(model, base, data, type=None):
            optimizer = tf.keras.optimizers.Adam(1e-3)
            base.trainable = False
            model.compile(optimizer=optimizer, loss="mse")
            model.fit(data, epochs=1)
            base.trainable = True
            model.compile(optimizer=optimizer, loss="mse")
            model.fit(data, epochs=1)

        def tune(model, base, data):
            optimizer = tf.keras.optimizers.Adam(1e-3)
            base.trainable = False
            model.compile(optimizer=optimizer, loss="mse")
            model.fit(data, epochs=1)
            base.trainable = True
            model.compile(optimizer=optimizer, loss="mse")
            optimizer.learning_rate.assign(1e-4)
            model.fit(data, epochs=1)
        """,
        at=[(9, 29, "This optimizer was built at the first `fit` for the variables trainable then"),
            (18, 29, "This optimizer was built at the first `fit` for the variables trainable then")],
        note="no fix where `type` is rebound, nor where the code reads the old optimizer after the compile "
             "(the assign would set the optimizer the model no longer uses)",
    ),
    clean(
        """
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        other = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam()
        d_opt = tf.keras.optimizers.Adam()
        g_opt = tf.keras.optimizers.Adam()
        built = tf.keras.optimizers.SGD()
        built.build(model.trainable_variables + other.trainable_variables)

        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

        def warmup(grads):
            opt.apply_gradients(zip(grads, model.trainable_variables))
            d_opt.apply_gradients(zip(grads, model.trainable_variables))
            g_opt.apply_gradients(zip(grads, other.trainable_variables))
            built.apply_gradients(zip(grads, model.trainable_variables))
            built.apply_gradients(zip(grads, other.trainable_variables))

        def unknown(optimizer, grads, variables):
            optimizer.apply_gradients(zip(grads, variables))
            optimizer.apply_gradients(zip(grads, other.trainable_variables))
        """,
        note="the same model twice; one optimizer per model; an optimizer built for both; variables that "
             "cannot be told",
    ),
    flagged(
        """
        import keras

        class Gan(keras.Model):
            def compile(self,
                        generator_optimizer=keras.optimizers.Adam(),
                        discriminator_optimizer=keras.optimizers.Adam(learning_rate=1e-3, beta_1=0.5),
                        **kwargs):
                super().compile(**kwargs)
                self.generator_optimizer = generator_optimizer
                self.discriminator_optimizer = discriminator_optimizer

        def fine_tune(model, optimizer=keras.optimizers.get("adam"), schedule=None, loss="mse"):
            model.compile(optimizer=optimizer, loss=loss)
        """,
        at=[(5, 37, "This optimizer is made once, when the `def` runs, and shared by every call of `compile` "
                    "that takes the default (`generator_optimizer`, `discriminator_optimizer`)"),
            (12, 32, "This optimizer is made once, when the `def` runs")],
        note="KhawajaAbaid/teras gans/gain.py:44 and ctgan.py:36: a second model compiled with the default "
             "raises ValueError: Unknown variable at its first step (measured, Keras 3.15)",
    ),
    clean(
        """
        import keras

        class Gan(keras.Model):
            def compile(self, generator_optimizer=None, discriminator_optimizer="adam",
                        schedule=keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9), **kwargs):
                super().compile(**kwargs)
                self.generator_optimizer = generator_optimizer or keras.optimizers.Adam()
        """,
        note="a None or string default (a new optimizer per call), a schedule (no variables)",
    ),
    clean(
        """
        import tensorflow as tf

        generator = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        legacy = tf.keras.optimizers.legacy.Adam(1e-4)
        legacy.apply_gradients(zip(d_grads, discriminator.trainable_variables))
        legacy.apply_gradients(zip(g_grads, generator.trainable_variables))
        """,
        note="a legacy optimizer keeps slots per variable (tf_keras; Keras 3 has no legacy: TFG903's finding)",
    ),
]
