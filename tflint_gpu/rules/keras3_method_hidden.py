from __future__ import annotations

import libcst as cst

from typing import List, Optional

from tflint_gpu.semantic.keras_attributes import KNOWN
from tflint_gpu.semantic.keras_hidden import hidden_names
from tflint_gpu.semantic.migration import KERAS3, is_model_class
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

# The new names tried, in order, for a hidden method (the first no Keras class and no class of the family has).
_RENAMES = ("{}_fn", "{}_value", "own_{}")


class Keras3MethodHidden(Rule):
    """`def loss(self, ...)` in a Keras 3 model: a method the model's own attribute hides.

    ## What it does
    Finds methods of a Keras 3 `Model` or `Layer` subclass, and their calls
    through `self`, whose name is an
    instance attribute Keras 3's constructor assigns: `loss`, `compiled`,
    `steps_per_execution`, `autocast`, `supports_jit`, `name`... for a model;
    `autocast`, `supports_jit`, `name`... for a layer (the names are derived by
    `scripts/derive_shadowed_methods.py`, which defines each method in a
    subclass of both flavours and reads it back from an instance). Not
    reported: tf_keras classes, other Keras classes, decorated methods
    (a property), names only a compiled model assigns.

    ## Why is this bad?
    An instance attribute hides a method of the same name. Keras 3's
    `Model.__init__` sets `self.loss = None`, so a model that defines its own
    `def loss(self, x, y)` and calls `self.loss(x, y)` in its training step
    raises `TypeError: 'NoneType' object is not callable` under TensorFlow
    2.21 with Keras 3.15. tf_keras 2.21 assigns `loss` only in `compile`, and
    a model trained by its own loop (never compiled) kept its method.

    ## Example
    ```python
    class Word2Vec(keras.Model):
        def loss(self, x, y):
            return tf.reduce_mean(tf.nn.nce_loss(...))

        def step(self, x, y):
            with tf.GradientTape() as tape:
                loss = self.loss(x, y)
    ```

    Use instead: rename the method (`loss_fn`) and its callers.

    ## Fix safety
    Unsafe: the fix renames the method (to `loss_fn`, or `loss_value`,
    `own_loss`: the first that no Keras model or layer of either flavour
    has and no class of the family defines) in its class, its same-module
    bases and subclasses, and at every call of a method of that name in the
    module, when each such call is on an object that can only be an
    instance of those classes (no fix when one is on `super()`, the class,
    or an object the file cannot tell). Calls in other modules, and reads
    of the method that are not calls (`f = self.loss`), are not renamed:
    under Keras 3 they read the attribute Keras set, as before the fix;
    under tf_keras they reached the method.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the TypeError above at the first call
    of the method; tf_keras 2.21 ran it. The fix case runs the original under
    tf_keras and the renamed method under Keras 3: the same gradients.
    examples/TFG925 (`tflint-gpu verify
    --rule TFG925`): fixes-error, `TypeError` before, the renamed method
    trains after.
    """

    code = "TFG925"
    name = "keras3-method-hidden"
    message = "Keras 3's constructor hides this method with an attribute"
    needs = (("def ",),)
    fix_safety = Safety.UNSAFE
    migration = True

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        function = ctx.model.scope_of_node.get(node)
        cls = function.parent if function is not None else None
        if cls is None or cls.kind != "class" or not isinstance(cls.node, cst.ClassDef) or node.decorators:
            return  # a property or a wrapped method is another matter
        base = self._hiding_base(cls, node.name.value, ctx)
        if base is not None:
            new = self._new_name(cls, node.name.value, ctx)
            fix = None if new is None else Fix(f"Rename the method to `{new}` (and its calls)", Safety.UNSAFE,
                                               {node.name: node.name.with_changes(value=new)})
            ctx.report(node.name, f"Keras 3's `{base}.__init__` sets `self.{node.name.value}`, which hides this "
                                  f"method (`self.{node.name.value}(...)` raises TypeError): rename it", fix)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return
        name = func.attr.value
        if name not in hidden_names()["model"] and name not in hidden_names()["layer"]:
            return
        cls = ctx.graphs.objects.self_class(func.value, ctx.scope)
        if cls is None or not any(isinstance(m.node, cst.FunctionDef) and not m.node.decorators
                                  for m in ctx.graphs.objects.methods(cls, name)):
            return
        base = self._hiding_base(cls, name, ctx)
        if base is not None:
            new = self._new_name(cls, name, ctx)
            fix = None if new is None else Fix(f"Call the renamed method `{new}`", Safety.UNSAFE,
                                               {func.attr: func.attr.with_changes(value=new)})
            ctx.report(node, f"Keras 3's `{base}.__init__` sets `self.{name}` (None), which hides the method: "
                             f"this call raises TypeError; rename the method and its calls", fix)

    @staticmethod
    def _new_name(cls, name: str, ctx) -> Optional[str]:
        """The name the fix gives the hidden method ``name`` of ``cls`` and of its same-module bases and
        subclasses, with every call of a method ``name`` in the module (each must be on an object that can
        only be an instance of those classes: not ``super().name``, ``Cls.name``, an object the file cannot
        tell); None when one is not, or no candidate is free (a Keras name, a name the classes have)."""
        objects = ctx.graphs.objects
        family: List = [cls] + objects.mro(cls) + objects.subclasses(cls)
        if not all(objects.only_instances_of(call.func.value, where, family)
                   for call, where in objects.calls_named(name)):
            return None
        for pattern in _RENAMES:
            new = pattern.format(name)
            if new in KNOWN or objects.calls_named(new) \
                    or any(objects.methods(member, new) or new in objects.own_attributes(member) for member in family):
                continue
            return new
        return None

    @staticmethod
    def _hiding_base(cls, name: str, ctx):
        """The Keras base (short name) whose Keras 3 constructor hides method ``name`` of ``cls``, or None."""
        tables = hidden_names()
        if name not in tables["model"] and name not in tables["layer"]:
            return None
        if ctx.graphs.keras_flavour(cls) != KERAS3:
            return None
        base = ctx.migration.class_base(cls)
        if base is None:
            return None
        if is_model_class(base):
            kind = "model"
        elif base.startswith("keras.layers."):
            kind = "layer"
        else:
            return None  # another Keras class (a dtype policy, a saveable): its own attributes
        return base.rsplit(".", 1)[-1] if name in tables[kind] else None

    cases = [
        flagged(
            """
            import tensorflow as tf


            class CBOW(tf.keras.Model):
                def __init__(self, vocab, dim):
                    super().__init__()
                    self.embeddings = tf.keras.layers.Embedding(vocab, dim)

                def call(self, x):
                    return tf.reduce_mean(self.embeddings(x), axis=1)

                def loss(self, x, y):
                    return tf.reduce_mean(tf.square(self.call(x) - y))

                def step(self, x, y):
                    with tf.GradientTape() as tape:
                        value = self.loss(x, y)
                    return tape.gradient(value, self.trainable_variables)


            class Scale(tf.keras.layers.Layer):
                def autocast(self):
                    return False
            """,
            fixed="""
            import tensorflow as tf


            class CBOW(tf.keras.Model):
                def __init__(self, vocab, dim):
                    super().__init__()
                    self.embeddings = tf.keras.layers.Embedding(vocab, dim)

                def call(self, x):
                    return tf.reduce_mean(self.embeddings(x), axis=1)

                def loss_fn(self, x, y):
                    return tf.reduce_mean(tf.square(self.call(x) - y))

                def step(self, x, y):
                    with tf.GradientTape() as tape:
                        value = self.loss_fn(x, y)
                    return tape.gradient(value, self.trainable_variables)


            class Scale(tf.keras.layers.Layer):
                def autocast_fn(self):
                    return False
            """,
            run="""
            tf.keras.utils.set_random_seed(0)
            model = CBOW(10, 4)
            model(tf.constant([[1, 2]]))
            model.embeddings.embeddings.assign(tf.reshape(tf.range(40, dtype=tf.float32), (10, 4)) / 40.0)
            step = model.step(tf.constant([[1, 2], [3, 4]]), tf.ones((2, 4)))
            grads = [tf.convert_to_tensor(g).numpy() for g in step]
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            at=[(12, 9, "Keras 3's `Model.__init__` sets `self.loss`, which hides this method"),
                (17, 21, "Keras 3's `Model.__init__` sets `self.loss` (None), which hides the method: this call "
                         "raises TypeError"),
                (22, 9, "Keras 3's `Layer.__init__` sets `self.autocast`")],
            note="the method, its call and a layer's method renamed: the same gradients (tf_keras before, Keras 3 "
                 "after)",
        ),
        flagged(
            """
            import tensorflow as tf


            class Base(tf.keras.Model):
                def loss(self, x):
                    return tf.reduce_mean(x)


            class Child(Base):
                def loss(self, x):
                    return super().loss(x) * 2.0


            def total(model, x):
                return model.loss(x)


            class Other(tf.keras.Model):
                def compiled(self):
                    return True

                def check(self, other):
                    return other.compiled()
            """,
            at=[(5, 9, "Keras 3's `Model.__init__` sets `self.loss`, which hides this method"),
                (10, 9, "Keras 3's `Model.__init__` sets `self.loss`, which hides this method"),
                (19, 9, "Keras 3's `Model.__init__` sets `self.compiled`, which hides this method")],
            note="no rename: a call through super(), a call on an object the file cannot tell",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras


            class Old(tf_keras.Model):
                def loss(self, x, y):
                    return 0.0


            class Scale(tf.keras.layers.Layer):
                def loss(self, x):
                    return 0.0


            class Plain:
                def loss(self, x, y):
                    return 0.0


            class Named(tf.keras.layers.Layer):
                @property
                def name(self):
                    return "named"


            class Policy(tf.keras.DTypePolicy):
                def name(self):
                    return "policy"


            def loss(x, y):
                return 0.0
            """,
            note="tf_keras; `loss` on a layer (Keras 3's Layer sets none); not Keras; a property; a Keras class "
                 "that is no layer; a function",
        ),
    ]
