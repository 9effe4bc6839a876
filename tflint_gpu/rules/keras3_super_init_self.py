from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

# Keras bases whose __init__ rejects an extra positional (measured under Keras 3.15).
_CHECKED_AREAS = ("keras.layers.", "keras.callbacks.")
_CHECKED = frozenset({"keras.Model", "keras.Sequential", "keras.Layer", "keras.models.Model",
                      "keras.models.Sequential"})


def _rejects_self(base: Optional[str]) -> bool:
    return base is not None and (base in _CHECKED or (base.startswith(_CHECKED_AREAS)
                                                      and base.rsplit(".", 1)[1][:1].isupper()))


class Keras3SuperInitSelf(Rule):
    """`super().__init__(self, ...)` in a Keras 3 model, layer or callback subclass: TypeError.

    ## What it does
    Finds `super().__init__(self, ...)` and `super(Cls, self).__init__(self,
    ...)` in the `__init__` of a class whose nearest Keras base is a Keras 3
    `Model`, `Sequential`, `Layer`, a built-in layer or a callback
    (`keras...`, or `tf.keras...` under TensorFlow 2.16+). `super()` already
    binds `self`: the extra `self` is a positional argument. Not reported:
    `Base.__init__(self, ...)` (correct), tf_keras classes, other bases.

    ## Why is this bad?
    Measured under TensorFlow 2.21 with Keras 3.15: `super().__init__(self)`
    in a `keras.Model` subclass raises `TypeError: Layer.__init__() takes 1
    positional argument but 2 were given` when the model is made; tf_keras
    2.21 accepted it (a `Model` ignored the extra positional), so Keras 2
    code that ran now fails. In a `Layer` subclass it raises the same
    TypeError (tf_keras: `TypeError: Expected trainable argument to be a
    boolean`), in a `Callback` subclass `TypeError: Callback.__init__() takes
    1 positional argument but 2 were given` (both Keras), in a `Dense`
    subclass (`super().__init__(self, units)`) `AttributeError` on `name`.

    ## Example
    ```python
    class Net(tf.keras.Model):
        def __init__(self):
            super(Net, self).__init__(self)
            self.dense = tf.keras.layers.Dense(1)
    ```

    Use instead:
    ```python
    class Net(tf.keras.Model):
        def __init__(self):
            super(Net, self).__init__()
            self.dense = tf.keras.layers.Dense(1)
    ```

    ## Fix safety
    Safe: the fix drops the extra `self`, when every other argument is a
    keyword (or `**kwargs`) or the base is a built-in layer that takes
    positional arguments (`Dense(units)`). The tests run the original, which
    raises, and the fixed class, which must build and run; under tf_keras the
    fixed `Model` behaves as the original did (the positional was ignored).

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the errors above, raised when the
    object is made. examples/TFG912 (`tflint-gpu verify --rule TFG912`):
    fixes-error, `TypeError` before, the model trains after.
    """

    code = "TFG912"
    name = "keras3-super-init-self"
    message = "`super().__init__(self)` passes `self` twice: TypeError in Keras 3"
    needs = (("__init__(self",),)
    fix_safety = Safety.SAFE
    migration = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "__init__" and node.args):
            return
        first = node.args[0]
        if first.keyword is not None or first.star or not (isinstance(first.value, cst.Name)
                                                            and first.value.value == "self"):
            return
        sup = func.value
        if not (isinstance(sup, cst.Call) and isinstance(sup.func, cst.Name) and sup.func.value == "super"
                and ctx.binding("super") is None):
            return
        method = ctx.scope.function()
        if method is None or method.name != "__init__" or method.enclosing_class is None:
            return
        cls = method.enclosing_class
        if ctx.migration.legacy_env or ctx.graphs.keras_flavour(cls) != KERAS3:
            return
        base = ctx.migration.class_base(cls)
        if not _rejects_self(base) or ctx.migration.guarded(node, ctx.scope):
            return
        rest = node.args[1:]
        concrete = base.startswith("keras.layers.") and base not in ("keras.layers.Layer",)
        fix = None
        if concrete or all(a.keyword is not None or a.star == "**" for a in rest):
            args = list(rest)
            fix = Fix("Drop the extra `self`", Safety.SAFE, {node: node.with_changes(args=args)})
        ctx.report(first, f"`super().__init__(self, ...)` passes `self` twice: Keras 3's `{base.rsplit('.', 1)[1]}` "
                          f"raises TypeError (Keras 2 models ignored it): drop the `self`", fix)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            class Net(tf.keras.Model):
                def __init__(self, units=2, **kwargs):
                    super(Net, self).__init__(self, **kwargs)
                    self.dense = tf.keras.layers.Dense(units)

                def call(self, x):
                    return self.dense(x)

            class Scale(tf.keras.layers.Layer):
                def __init__(self, name=None):
                    super().__init__(self, name=name)

                def call(self, x):
                    return 2.0 * x

            class Wide(tf.keras.layers.Dense):
                def __init__(self, units):
                    super().__init__(self, units)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            class Net(tf.keras.Model):
                def __init__(self, units=2, **kwargs):
                    super(Net, self).__init__(**kwargs)
                    self.dense = tf.keras.layers.Dense(units)

                def call(self, x):
                    return self.dense(x)

            class Scale(tf.keras.layers.Layer):
                def __init__(self, name=None):
                    super().__init__(name=name)

                def call(self, x):
                    return 2.0 * x

            class Wide(tf.keras.layers.Dense):
                def __init__(self, units):
                    super().__init__(units)
            """,
            at=[(6, 35, "`super().__init__(self, ...)` passes `self` twice: Keras 3's `Model` raises TypeError"),
                (14, 26, "`super().__init__(self, ...)` passes `self` twice: Keras 3's `Layer`"),
                (21, 26, "`super().__init__(self, ...)` passes `self` twice: Keras 3's `Dense`")],
            run="""
            x = np.ones((2, 3), np.float32)
            y = Net()(x)
            z = Scale()(x)
            w = Wide(2)(x)
            """,
            effect=FIXES_ERROR,
        ),
        flagged(
            """
            import keras

            class Stop(keras.callbacks.Callback):
                def __init__(self, patience):
                    super().__init__(self, patience)
            """,
            at=[(5, 26, "`super().__init__(self, ...)` passes `self` twice: Keras 3's `Callback`")],
            note="no fix: another positional would still be rejected",
        ),
        clean(
            """
            import keras
            import tf_keras

            class A(keras.Model):
                def __init__(self):
                    super().__init__()
                    keras.Model.__init__(self)

            class Old(tf_keras.Model):
                def __init__(self):
                    super().__init__(self)

            class Plain:
                def __init__(self):
                    super().__init__(self)
            """,
            note="correct calls; tf_keras (ignored there); no Keras base",
        ),
    ]
