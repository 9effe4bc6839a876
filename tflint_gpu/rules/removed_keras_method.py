from __future__ import annotations

import textwrap
from typing import List, Optional

import libcst as cst

from tflint_gpu.semantic import values
from tflint_gpu.semantic.migration import KERAS3, is_metric_class, is_model_class
from tflint_gpu.semantic.model import dotted_name
from tflint_gpu.semantic.literals import written_as_size
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

# Members this rule's own checks handle (their messages, fixes and receivers).
_HAND_MEMBERS = frozenset({"reset_states", "fit_generator", "evaluate_generator", "predict_generator",
                           "lr"})  # optimizer.lr: TFG909 (keras3-optimizer-api) reports and fixes it
_TABLE_MEMBERS: Optional[frozenset] = None


def _table():
    from tflint_gpu.semantic.migration_table import table

    return table()


def _table_members() -> frozenset:
    """Names of the members the migration table records as removed (executed: an error)."""
    global _TABLE_MEMBERS
    if _TABLE_MEMBERS is None:
        _TABLE_MEMBERS = frozenset(e["member"] for e in _table().entries()
                                   if e["kind"] == "member" and (e.get("outcome") or {}).get("breaks")) \
            | _table().raising_members()
    return _TABLE_MEMBERS


# Model.*_generator -> the method Keras 3 has, and the keywords that method accepts.
_GENERATORS = {
    "fit_generator": ("fit", frozenset({
        "steps_per_epoch", "epochs", "verbose", "callbacks", "validation_data", "validation_steps",
        "validation_freq", "class_weight", "shuffle", "initial_epoch"})),
    "evaluate_generator": ("evaluate", frozenset({"steps", "callbacks", "verbose"})),
    "predict_generator": ("predict", frozenset({"steps", "callbacks", "verbose"})),
}
# Keywords of the *_generator methods that Keras 3's fit/evaluate/predict no longer take (they moved
# to keras.utils.PyDataset): the fix drops them.
_DATA_LOADING = frozenset({"workers", "use_multiprocessing", "max_queue_size"})
_LEARNING_PHASE = frozenset({"keras.backend.learning_phase", "keras.backend.set_learning_phase"})
# tf.keras.mixed_precision.experimental.X -> tf.keras.mixed_precision.Y (same object, same signature).
_MIXED_PRECISION = {"Policy": "Policy", "set_policy": "set_global_policy", "global_policy": "global_policy"}
_MIXED_EXPERIMENTAL = "keras.mixed_precision.experimental"

# Keras 2's layer-node API -> the Keras 3 attribute of the layer's first call (node 0), and whether the
# member gives that tensor's shape.
# The recurrent layers and cells whose tf_keras ``get_initial_state`` took the inputs (measured: LSTM,
# GRU, SimpleRNN and their cells; Keras 3.15's take ``batch_size``).
_RECURRENT = frozenset({"keras.layers.LSTM", "keras.layers.GRU", "keras.layers.SimpleRNN", "keras.layers.RNN",
                        "keras.layers.LSTMCell", "keras.layers.GRUCell", "keras.layers.SimpleRNNCell"})
_NODE_SPELLINGS = {
    "get_input_shape_at": ("input", True), "get_output_shape_at": ("output", True),
    "get_input_at": ("input", False), "get_output_at": ("output", False),
    "input_shape": ("input", True), "output_shape": ("output", True),
}


def _node_index_arg(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The ``node_index`` expression a node-API call passes (its one argument, positionally or by
    keyword), else None."""
    if len(call.args) != 1 or call.args[0].star:
        return None
    arg = call.args[0]
    if arg.keyword is not None and arg.keyword.value != "node_index":
        return None
    return arg.value


_TRAIN = """import numpy as np
import tensorflow as tf

def batches():
    rng = np.random.default_rng(0)
    while True:
        x = rng.standard_normal((8, 2)).astype("float32")
        yield x, x.sum(axis=1, keepdims=True)

model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
model.compile(tf.keras.optimizers.SGD(learning_rate=0.1), "mse")
"""


def _report(ctx, node: cst.CSTNode, message: str, fix: Optional[Fix] = None) -> None:
    """Report, unless the code never runs under Keras 3 or a test expects the error."""
    if not ctx.migration.guarded(node, ctx.scope):
        ctx.report(node, message, fix)


def _checked(node: cst.Call, receiver: cst.BaseExpression, old: str, new: str, ctx) -> bool:
    """Is the call in a branch of ``if hasattr(receiver, old)`` that runs when
    ``old`` exists, or of ``if hasattr(receiver, new)`` that runs when ``new``
    is missing (neither runs the removed method under Keras 3)?"""
    for obj, name, has in ctx.migration.hasattr_guards(node, ctx.scope):
        if obj.deep_equals(receiver) and ((name == old and has) or (name == new and not has)):
            return True
    return False


class RemovedKerasMethod(Rule):
    """A Keras 2 method or function Keras 3 removed: `reset_states()`, `fit_generator`, `learning_phase()`...

    ## What it does
    Finds, in Keras 3 code (`keras`, or `tf.keras` under TensorFlow 2.16+):

    * `metric.reset_states()` on a Keras metric (made by `tf.keras.metrics.X(...)`
      or a subclass of `Metric`, through names bound once and `self.x`
      attributes), also one held in a container: a list, tuple or dict
      display, a list filled by `append`/`extend`/`+= [...]` or a dict by
      `d[k] = m`, a comprehension, `[tracker] + metrics`, `list(...)`, taken
      by iteration (`for m in self.trackers`, `for k, m in d.items()`,
      `enumerate`, `zip`) or by index (`self.metrics_dict[name]`), a
      `metrics` property returning such a list, and a Keras model's own
      `metrics`; and `model.reset_states()` on a Keras model;
    * `model.fit_generator(...)`, `evaluate_generator(...)`,
      `predict_generator(...)` on a Keras model, or on an object of unknown
      kind in a file that uses Keras 3 only;
    * `model.add_loss(x)` on a functional model (made by `keras.Model(inputs,
      outputs)`, through names, attributes and the module's defs): Keras 3's
      `Functional.add_loss` raises `NotImplementedError` whatever it is given;
    * `tf.keras.backend.learning_phase()` and `set_learning_phase(...)`;
    * `tf.keras.mixed_precision.experimental.*` (calls and imports; also gone
      from tf_keras 2.21);
    * any other member the derived migration table
      (`scripts/derive_migration.py`) records as removed from a Keras class
      and raising when read on a Keras 3 instance: `layer.add_update(...)`,
      `layer.output_shape`, `metric.get_weights()`,
      `LossScaleOptimizer.get_scaled_loss`, `optimizer.lr`..., and the
      methods Keras 3 keeps only to raise `NotImplementedError`
      (`model.add_metric(...)`), on an object made by a Keras 3 call (also
      through the module's defs: `self._model = self.build_model()` where
      every override returns `keras.Model(...)`) or on `self` in a Keras 3
      subclass that neither defines nor assigns the member; a
      LossScaleOptimizer's own members (`get_scaled_loss`,
      `get_unscaled_gradients`) also on an object one binding of which is a
      `LossScaleOptimizer(...)` (`self.opt = optimizer`, then, when mixed
      precision is on, `self.opt = LossScaleOptimizer(self.opt)`): no other
      class has them (the table also records where a subclass
      keeps a base's removed member: a functional `Model`'s `output_shape`, an
      RNN's `stateful`, not reported). Assignments (`layer.updates = []`) are
      not reported; a file reaching `keras.src` is not read against the table.
      A layer a Keras model hands out is a `Layer` here: `model.get_layer(...)`
      (also through a name), `model.layers[i]`, `for layer in model.layers`;
      Keras 2's layer-node API (`get_input_shape_at`, `get_output_at`...)
      tells a Keras layer by its name alone, also in a helper module that
      names neither TensorFlow nor Keras (a FLOPs counter given the model);
    * `x.shape.as_list()`, `x.get_shape().as_list()` and `x.get_shape()` on a
      Keras 3 KerasTensor while a functional model is built (`semantic.symbolic`),
      and `input_shape.as_list()` in `build(self, input_shape)` of a Keras 3
      layer (the parameter never rebound): Keras 3 gives tuples (measured:
      `AttributeError: 'tuple' object has no attribute 'as_list'`; a KerasTensor
      has no `get_shape`). `tf.TensorShape(input_shape).as_list()` runs under
      both (not reported);
    * `rnn.get_initial_state(inputs)` on a Keras 3 `LSTM`, `GRU`, `SimpleRNN`,
      `RNN` or one of their cells: tf_keras took the inputs, Keras 3 takes the
      batch size (measured: `ValueError: Can't convert non-rectangular Python
      sequence to Tensor`); the safe fix passes `keras.ops.shape(x)[0]` (the
      same zeros: the case runs the original under tf_keras and the fix
      under Keras 3). An argument written as a size (`tf.shape(x)[0]`,
      `batch_size`, an int) is not reported.

    The Keras of an object is that of the call that made it, else the file's
    (only when the file uses one Keras): `tf_keras` 2.21 still has
    `reset_states`, the `*_generator` methods and `learning_phase`.

    Not reported: a call in a branch that never runs it under Keras 3 (`if
    hasattr(m, "reset_states"): m.reset_states()`, the `else:` of `if
    hasattr(m, "reset_state")` or of `if hasattr(tf.keras.optimizers,
    "legacy")`), a branch of a TensorFlow or Keras version comparison that
    does not run under TF 2.16+ (the fallback in `global_policy() if
    tf_version >= (2, 4, 0) else experimental.global_policy()`, `if
    LooseVersion(tf.__version__) < "2.4":`, `packaging.version.parse`,
    `tf.__version__.startswith("1.")`, a `def` inside such a branch) or
    whose bound cannot be read (`tf_version >= MIN_TF`: either branch may be
    the fallback), an `except AttributeError:` handler (or `ImportError`,
    `ModuleNotFoundError`, `TypeError`, `ValueError`: the fallback a `try`
    takes where the current API is missing; not a bare `except` or `except
    Exception`), and code a test expects to raise (`pytest.raises(...)`,
    `self.assertRaises(...)`). The comparison is evaluated as Python would
    under each TF 2.16-2.21 and Keras 3 release: `float(tf.__version__[:3])
    >= 2.4` is False under TF 2.21 (`2.2`), so its `else` runs there and is
    reported.

    ## Why is this bad?
    Measured under TensorFlow 2.21 with Keras 3.15, each raises
    `AttributeError`: `'Mean' object has no attribute 'reset_states'`,
    `'Sequential' object has no attribute 'reset_states'` (and
    `'fit_generator'`, `'evaluate_generator'`, `'predict_generator'`),
    `module 'keras._tf_keras.keras.backend' has no attribute 'learning_phase'`,
    `module 'keras.mixed_precision' has no attribute 'experimental'` (`from
    tensorflow.keras.mixed_precision import experimental`: `ImportError`).
    Stateful RNN layers keep `reset_states()` in Keras 3: not reported. A
    list of metrics or a Keras 3 model's `metrics` (a `Mean` and
    `CompileMetrics` after `compile`) raises the same error on each element
    (measured); a dict iterated gives its keys (not reported).

    ## Example
    ```python
    train_loss = tf.keras.metrics.Mean()
    for epoch in range(epochs):
        model.fit_generator(batches(), steps_per_epoch=100, workers=4)
        train_loss.reset_states()
    ```

    Use instead:
    ```python
    train_loss = tf.keras.metrics.Mean()
    for epoch in range(epochs):
        model.fit(batches(), steps_per_epoch=100)
        train_loss.reset_state()
    ```

    ## Fix safety
    Safe: each rewrite is the method Keras 2 meant, and the tests run the
    original (which raises AttributeError under Keras 3, eagerly too) and the
    fixed code, which must run. Unsafe where `fit_generator`'s fix drops
    data-loading keywords and for Keras 2's layer-node API (below). The rewrites:
    * metric `reset_states()` → `reset_state()` (tf_keras's `reset_states` calls
      `reset_state`);
    * `fit_generator`/`evaluate_generator`/`predict_generator` → `fit`/`evaluate`/
      `predict` (in tf_keras 2.21 the `*_generator` methods call these), when at
      most the generator is passed by position (their positional order
      differs) and every other keyword is one the Keras 3 method takes;
      `generator=` becomes `x=`; `workers`, `use_multiprocessing` and
      `max_queue_size` (which Keras 3's methods reject with TypeError: they
      moved to `keras.utils.PyDataset`) are dropped, so a `Sequence` is no
      longer read by several workers; `evaluate`/`predict` get `verbose=0`,
      the `*_generator` default (theirs is `"auto"`: a progress bar);
    * `mixed_precision.experimental.Policy`/`set_policy`/`global_policy` →
      `mixed_precision.Policy`/`set_global_policy`/`global_policy` when spelled
      as an attribute chain.
    A table member gets a safe rename only where the table says the
    replacement is exact (a Keras 2 alias or one-line wrapper of a member
    Keras 3 keeps with the same parameters); the others name the replacement
    when there is one (`optimizer.lr` → `learning_rate`, a variable in Keras 3).
    * Keras 2's layer-node API (unsafe, differences measured below):
      `layer.get_input_shape_at(0)`, `get_output_shape_at(0)`, `get_input_at(0)`,
      `get_output_at(0)` → `layer.input.shape`, `layer.output.shape`,
      `layer.input`, `layer.output` (Keras 3's public first-call tensors);
      any other node index, a name too (`get_input_shape_at(i)` in `for i in
      range(len(layer._inbound_nodes))`) →
      `layer._get_node_attribute_at_index(i, "input_tensors", "input").shape`
      (`"output_tensors", "output"` for the output side): Keras 3's PRIVATE
      method behind `layer.input`/`layer.output`, its only per-call getter
      (the fix message says so). The `input_shape`/`output_shape` properties
      (Keras 2's InputLayer gives a list of one shape) and a node index passed
      with `*` are left by hand, with the Keras 3 spelling named. Measured,
      tf_keras 2.21 `get_*_at(i)` against Keras 3.15, one functional model
      holding each kind (node counts equal in both):

      | layer | tf_keras | Keras 3 public, node 0 | Keras 3 private, node i |
      |---|---|---|---|
      | ZeroPadding2D, Conv2D, BatchNormalization, LeakyReLU | a tuple | same | same |
      | DepthwiseConv2D, SeparableConv2D, Activation, Flatten | a tuple | same | same |
      | MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D | a tuple | same | same |
      | Reshape, Dense, nested Sequential | a tuple | same | same |
      | Conv2D called twice, different shapes | each call's | node 0's (index 0 only) | same |
      | nested functional model called twice | each call's | its own: differs | same |
      | InputLayer, input side | its shape | AttributeError | AttributeError |
      | InputLayer, output side | its shape | same | same |
      | Concatenate, Add (several inputs) | a list of tuples | AttributeError | AttributeError |
      | MultiHeadAttention(q, v), input side | q's shape | AttributeError | AttributeError |
      | a layer returning two tensors | a list of tuples | AttributeError | AttributeError |
      | a rank-1 input `(None,)` | `None` | `(None,)`: differs | `(None,)`: differs |
      | a never-called layer | RuntimeError | AttributeError | AttributeError |

      The nested functional model (declared `Input((None, 5))`, called on
      `(None, 1, 5)` then `(None, 2, 5)`): Keras 3's `input`/`output` are
      its own, `(None, None, 5)`/`(None, None, 3)`, where tf_keras gave
      `(None, 1, 5)`/`(None, 1, 3)` at node 0. The AttributeErrors:
      `'list' object has no attribute 'shape'` (an InputLayer's `input` is
      `[]`; `[q, v]`). The rank-1 `None` is tf_keras unwrapping a
      one-element shape as if it were a list of one.

      `get_input_at`/`get_output_at` give tensors of those shapes, with the
      same differences (an InputLayer's `input` `[]` where Keras 2 gave its
      tensor; `[q, v]` where it gave `q`; a nested functional model's own
      tensors, not its first call's); so `get_output_at(0)` → `layer.output`
      is unsafe too (`scripts/measure_keras_node_api.py` prints this table);
    * `x.shape.as_list()`, `x.get_shape().as_list()`, `input_shape.as_list()`
      → `list(x.shape)`, `list(input_shape)` (safe: the same list of ints and
      `None` under tf_keras and Keras 3, executed both ways).
    No fix for `model.reset_states()` (reset the stateful layers),
    `learning_phase()` (pass `training=` to the calls instead), the
    experimental `LossScaleOptimizer` (its arguments changed) or the imports.
    Executed under tf_keras too (the fix-execution test's Keras 2 run): the
    `reset_state()` and `fit_generator` → `fit` rewrites of `tf.keras` code
    give identical results there, so they suit code that must run under both.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the errors above, raised at the call.
    `tf_version = tuple(int(p) for p in tf.__version__.split(".")[:3])`, then
    `global_policy() if tf_version >= (2, 4, 0) else
    experimental.global_policy()` runs (the fallback is not taken: `(2, 21,
    0)`); with `float(tf.__version__[:3]) >= 2.4` as the test it raises the
    AttributeError (`2.2 >= 2.4` is False).
    tf_keras 2.21: `Mean().reset_states()`, `fit_generator` and
    `learning_phase()` run (no finding there). examples/TFG902
    (`tflint-gpu verify --rule TFG902`): fixes-error, `AttributeError`
    before, the fixed training loop runs after.
    unet-tf2's FLOPs counter (utils/utils.py `net_flops`, its 28 node-API
    lines fixed: node 0 by `input`/`output`, the `range(len(l._inbound_nodes))`
    loops by the private getter), 32x32 input: 1,760,165,888 (VGG backbone)
    and 706,689,024 (ResNet50) under tf_keras before and Keras 3 after, 0
    under Keras 3 unfixed (every layer's AttributeError swallowed by its bare
    `except`); the printed table is the same but for the InputLayer's row,
    missing after (its `input.shape` raises, swallowed: no FLOPs counted there).
    """

    code = "TFG902"
    migration = True
    name = "removed-keras-method"
    message = "Keras 3 removed this method"
    needs = (("reset_states", "_generator", "learning_phase", "experimental", "keras", "_shape_at", "_mask_at",
              "get_input_at", "get_output_at", "as_list", "get_shape"),)
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        """A member the derived migration table records as removed from a Keras class (and
        executed: AttributeError on a Keras 3 instance), read on an object of that class."""
        member = node.attr.value
        if member in _HAND_MEMBERS or member not in _table_members():
            return
        receiver = node.value
        cls = ctx.keras3_class(receiver, member)
        if cls is None:
            return
        removal = _table().removed_member(cls, member)
        if removal is None or _checked(node, receiver, member, removal.replacement or "", ctx):
            return
        parent = next(iter(ctx.scope.ancestors(node)), None)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del)) \
                and getattr(parent, "target", None) is node:
            return  # setting it makes a plain attribute (reading it back works)
        short = cls.rsplit(".", 1)[1]
        if member in _NODE_SPELLINGS:
            self._node_api(node, parent, member, short, removal.error, ctx)
            return
        if removal.error == "NotImplementedError":
            # kept only to raise (`add_metric`)
            _report(ctx, node.attr, f"Keras 3 `{short}.{member}()` only raises NotImplementedError: pass the "
                                    f"metric to `compile(metrics=...)` or update a `keras.metrics.Metric` "
                                    f"made in `__init__`")
            return
        message = f"Keras 3 `{short}` has no `{member}` ({removal.error})"
        fix = None
        if removal.replacement:
            message += f": use `{removal.replacement}`"
            if removal.exact:
                fix = Fix(f"Use `{removal.replacement}`", Safety.SAFE, {node.attr: cst.Name(removal.replacement)})
            else:
                message += " (not the same: check its arguments)"
        _report(ctx, node.attr, message, fix)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method == "reset_states" and not node.args:
                self._reset_states(node, func, ctx)
                return
            if method in _GENERATORS:
                self._generator(node, func, method, ctx)
                return
            if method in ("as_list", "get_shape") and not node.args:
                self._shape_list(node, func, ctx)
                return
            if method == "get_initial_state" and node.args:
                self._initial_state(node, func, ctx)
                return
            if method == "add_loss" and len(node.args) == 1 and not ctx.keras_internals \
                    and ctx.migration.is_functional_model(func.value, ctx.scope) \
                    and ctx.migration.object_flavour(func.value, ctx.scope) == KERAS3:
                _report(ctx, func.attr, "Keras 3 functional models' `add_loss()` raises NotImplementedError: add "
                                        "the loss in a layer's `call()` (`self.add_loss(...)`) or in `compile(loss=...)`")
                return
        qualname = ctx.call_name(node)
        if qualname is None:
            return
        if qualname in _LEARNING_PHASE and ctx.migration.api_flavour(func, ctx.scope) == KERAS3:
            name = qualname.rsplit(".", 1)[1]
            _report(ctx, node, f"Keras 3 has no `backend.{name}()` (AttributeError): pass `training=` to the "
                               f"layer and model calls")
            return
        if qualname.startswith(_MIXED_EXPERIMENTAL + ".") and ctx.migration.api_flavour(func, ctx.scope):
            self._mixed_precision(node, func, qualname[len(_MIXED_EXPERIMENTAL) + 1:], ctx)

    def visit_ImportFrom(self, node: cst.ImportFrom, ctx) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module)
        if module is None:
            return
        from tflint_gpu.semantic.migration import raw_flavour
        from tflint_gpu.semantic.names import normalize

        if raw_flavour(module) is None:
            return
        target = normalize(module)
        if target == _MIXED_EXPERIMENTAL or target.startswith(_MIXED_EXPERIMENTAL + ".") or (
                target == "keras.mixed_precision"
                and any(dotted_name(alias.name) == "experimental" for alias in node.names)):
            _report(ctx, node, "Keras 3 has no `mixed_precision.experimental` (ImportError): use "
                               "`mixed_precision.Policy` and `set_global_policy`")

    # -- Keras 2's layer-node API ---------------------------------------------
    @staticmethod
    def _node_api(node: cst.Attribute, parent: Optional[cst.CSTNode], member: str, short: str, error: str,
                  ctx) -> None:
        """``layer.get_output_shape_at(0)``, ``layer.input_shape``...: what Keras 3 spells (the first
        call's ``layer.output``/``layer.input``; another call's only through a private method), and the
        fix (unsafe: the measured differences are in the class docs)."""
        side, shape = _NODE_SPELLINGS[member]
        spelled = f"{side}.shape" if shape else side
        where = "an InputLayer's `input` is `[]` in Keras 3; " if side == "input" else ""
        if not (isinstance(parent, cst.Call) and parent.func is node):
            _report(ctx, node.attr, f"Keras 3 `{short}` has no `{member}` ({error}): use `layer.{spelled}` ({where}"
                                    f"a list where the layer has several {side}s)")
            return
        index = _node_index_arg(parent)
        if index is None:
            _report(ctx, node.attr, f"Keras 3 `{short}` has no `{member}` ({error}): use `layer.{spelled}` ({where}"
                                    f"a list where the layer has several {side}s)")
            return
        if isinstance(index, cst.Integer) and index.evaluated_value == 0:
            # node 0: Keras 3's public `input`/`output` (a nested functional model's are its own, not its first
            # call's)
            new: cst.BaseExpression = cst.Attribute(node.value, cst.Name(side))
            fix_message = f"Use `.{spelled}` (the first call's; unsafe: a functional model used as a layer gives " \
                          f"its own {side}s, {where}several {side}s give a list)"
            _report(ctx, node.attr, f"Keras 3 `{short}` has no `{member}` ({error}): use `layer.{spelled}` ({where}"
                                    f"a list where the layer has several {side}s)",
                    Fix(fix_message, Safety.UNSAFE,
                        {parent: cst.Attribute(new, cst.Name("shape")) if shape else new}))
            return
        # another call (node_index i): Keras 3 keeps the nodes, but reads one only through
        # Operation._get_node_attribute_at_index (private), which `layer.input`/`layer.output` call with 0
        private = "input_tensors" if side == "input" else "output_tensors"
        new = cst.Call(cst.Attribute(node.value, cst.Name("_get_node_attribute_at_index")),
                       [cst.Arg(index), cst.Arg(cst.SimpleString(f'"{private}"')),
                        cst.Arg(cst.SimpleString(f'"{side}"'))])
        spelled_private = f'layer._get_node_attribute_at_index(i, "{private}", "{side}")' + (".shape" if shape else "")
        _report(ctx, node.attr, f"Keras 3 `{short}` has no `{member}` ({error}): `layer.{spelled}` is the first "
                                f"call's; another call's only through Keras 3's private `{spelled_private}`",
                Fix(f"Use Keras 3's private `_get_node_attribute_at_index` (unsafe: a private method; {where}"
                    f"several {side}s give a list)", Safety.UNSAFE,
                    {parent: cst.Attribute(new, cst.Name("shape")) if shape else new}))

    # -- shapes: Keras 3 gives tuples -------------------------------------------
    @staticmethod
    def _shape_list(node: cst.Call, func: cst.Attribute, ctx) -> None:
        """``x.shape.as_list()`` / ``x.get_shape().as_list()`` on a KerasTensor, ``x.get_shape()``,
        and ``input_shape.as_list()`` in a Keras 3 layer's ``build``."""
        receiver = func.value
        if func.attr.value == "get_shape":
            parent = next(iter(ctx.scope.ancestors(node)), None)
            if isinstance(parent, cst.Attribute) and parent.attr.value == "as_list":
                return  # reported with its as_list()
            if ctx.graph() is None and ctx.symbolic.is_symbolic(receiver, ctx.scope):
                _report(ctx, func.attr, "A Keras 3 KerasTensor has no `get_shape()` (AttributeError): use `.shape` "
                                        "(a tuple)")
            return
        tensor = None
        at: cst.CSTNode = func.attr
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "shape":
            tensor = receiver.value
        elif isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                and receiver.func.attr.value == "get_shape" and not receiver.args:
            tensor = receiver.func.value
            at = receiver.func.attr
        if tensor is not None:
            if ctx.graph() is not None or not ctx.symbolic.is_symbolic(tensor, ctx.scope):
                return
            shape: cst.BaseExpression = cst.Attribute(tensor, cst.Name("shape"))
            what = "`get_shape()`" if isinstance(receiver, cst.Call) else "`shape.as_list()`: its shape is a tuple"
            message = f"A Keras 3 KerasTensor has no {what} (AttributeError): use `list(x.shape)`"
        elif ctx.migration.build_input_shape(receiver, ctx.scope):
            shape = receiver
            message = ("Keras 3 passes `build` a tuple: `input_shape.as_list()` raises AttributeError; use "
                       "`list(input_shape)`")
        else:
            return
        fix = None
        if ctx.scope.lookup("list") is None:  # the builtin: the same list of ints and None under both Kerases
            fix = Fix("Use `list(...)`", Safety.SAFE, {node: cst.Call(cst.Name("list"), [cst.Arg(shape)])})
        _report(ctx, at, message, fix)

    # -- get_initial_state ---------------------------------------------------
    @staticmethod
    def _initial_state(node: cst.Call, func: cst.Attribute, ctx) -> None:
        """``rnn.get_initial_state(inputs)`` on a Keras 3 recurrent layer or cell: Keras 3 takes the batch
        size (measured: ``ValueError: Can't convert non-rectangular Python sequence to Tensor``)."""
        first = node.args[0]
        if first.star or len(node.args) != 1 or (first.keyword is not None and first.keyword.value != "inputs"):
            return
        if written_as_size(first.value):
            return
        made = ctx.migration.object_class(func.value, ctx.scope) or ctx.migration.element_class(func.value, ctx.scope)
        if made not in _RECURRENT or ctx.migration.object_flavour(func.value, ctx.scope) != KERAS3:
            return
        fix = None
        shape = ctx.module_expr("keras", "ops.shape")
        if shape is not None and (first.keyword is None or first.keyword.value == "inputs"):
            func_expr, imports = shape
            size = cst.Subscript(cst.Call(func_expr, [cst.Arg(first.value)]),
                                 [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
            fix = Fix("Pass the batch size", Safety.SAFE, {first: cst.Arg(size)}, imports)
        _report(ctx, node.args[0].value, "Keras 3's `get_initial_state` takes the batch size, not the inputs "
                                         "(ValueError): pass `keras.ops.shape(x)[0]`", fix)

    # -- reset_states -------------------------------------------------------
    def _reset_states(self, node: cst.Call, func: cst.Attribute, ctx) -> None:
        receiver = func.value
        if _checked(node, receiver, "reset_states", "reset_state", ctx):
            return
        if ctx.migration.object_flavour(receiver, ctx.scope) != KERAS3:
            return
        cls = ctx.migration.object_class(receiver, ctx.scope)
        if is_metric_class(cls) or (cls is None and ctx.value_kind(receiver) == values.METRIC):
            fix = Fix("Call `reset_state()`", Safety.SAFE, {func.attr: cst.Name("reset_state")})
            _report(ctx, func.attr, "Keras 3 metrics have no `reset_states()` (AttributeError): use "
                                    "`reset_state()`", fix)
        elif is_model_class(cls):
            _report(ctx, func.attr, "Keras 3 models have no `reset_states()` (AttributeError): reset the "
                                    "stateful layers (`layer.reset_state()`)")

    # -- *_generator ---------------------------------------------------------
    def _generator(self, node: cst.Call, func: cst.Attribute, method: str, ctx) -> None:
        receiver = func.value
        if _checked(node, receiver, method, _GENERATORS[method][0], ctx):
            return
        kind = ctx.value_kind(receiver)
        if kind not in (values.KERAS, values.UNKNOWN):
            return
        if ctx.migration.object_flavour(receiver, ctx.scope) != KERAS3:
            return
        new, accepted = _GENERATORS[method]
        _report(ctx, func.attr, f"Keras 3 models have no `{method}()` (AttributeError): use `{new}()`",
                self._generator_fix(node, func, new, accepted))

    @staticmethod
    def _generator_fix(node: cst.Call, func: cst.Attribute, new: str, accepted) -> Optional[Fix]:
        if any(a.star for a in node.args):
            return None
        positional = [a for a in node.args if a.keyword is None]
        if len(positional) > 1:
            return None
        args: List[cst.Arg] = []
        verbose = False
        dropped = False
        for arg in node.args:
            if arg.keyword is None:
                args.append(arg)
                continue
            name = arg.keyword.value
            if name in _DATA_LOADING:
                dropped = True
                continue
            if name == "generator":
                if positional:
                    return None
                args.append(arg.with_changes(keyword=cst.Name("x")))
                continue
            if name not in accepted:
                return None
            verbose = verbose or name == "verbose"
            args.append(arg)
        if not args:
            return None
        if new != "fit" and not verbose:
            args.append(cst.Arg(cst.Integer("0"), keyword=cst.Name("verbose"),
                                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        for i, arg in enumerate(args[:-1]):
            if arg.comma is cst.MaybeSentinel.DEFAULT:
                args[i] = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        if args[-1] is not node.args[-1]:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        new_call = node.with_changes(func=func.with_changes(attr=cst.Name(new)), args=args)
        # Safe unless data-loading keywords were dropped (a Sequence then loads in one worker).
        return Fix(f"Call `{new}()`", Safety.UNSAFE if dropped else Safety.SAFE, {node: new_call})

    # -- mixed precision -----------------------------------------------------
    def _mixed_precision(self, node: cst.Call, func: cst.BaseExpression, name: str, ctx) -> None:
        fix = None
        simple = len(node.args) == (0 if name == "global_policy" else 1) and all(
            not a.star and (a.keyword is None or a.keyword.value == "name") for a in node.args)
        if simple and name in _MIXED_PRECISION and isinstance(func, cst.Attribute) \
                and isinstance(func.value, cst.Attribute) and func.value.attr.value == "experimental":
            new_func = func.with_changes(value=func.value.value, attr=cst.Name(_MIXED_PRECISION[name]))
            fix = Fix(f"Use `mixed_precision.{_MIXED_PRECISION[name]}`", Safety.SAFE, {func: new_func})
        _report(ctx, node, f"Keras 3 has no `mixed_precision.experimental` (AttributeError): use "
                           f"`mixed_precision.{_MIXED_PRECISION.get(name, name)}`", fix)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            lstm = tf.keras.layers.LSTM(4, return_sequences=True, kernel_initializer="ones",
                                        recurrent_initializer="ones")
            x = np.linspace(-1.0, 1.0, 30, dtype=np.float32).reshape(2, 5, 3)
            states = lstm.get_initial_state(x)
            y = lstm(x, initial_state=states)
            """,
            at=[(7, 33, "Keras 3's `get_initial_state` takes the batch size, not the inputs")],
            fixed="""
            import numpy as np
            import tensorflow as tf
            import keras

            lstm = tf.keras.layers.LSTM(4, return_sequences=True, kernel_initializer="ones",
                                        recurrent_initializer="ones")
            x = np.linspace(-1.0, 1.0, 30, dtype=np.float32).reshape(2, 5, 3)
            states = lstm.get_initial_state(keras.ops.shape(x)[0])
            y = lstm(x, initial_state=states)
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            note="an RNN's initial state from its inputs (Keras 2) is from the batch size under Keras 3; the "
                 "same zeros, the same outputs",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            forward = [tf.keras.layers.LSTM(4, return_sequences=True, kernel_initializer="ones",
                                            recurrent_initializer="ones") for _ in range(2)]
            backward = [tf.keras.layers.GRU(4, return_sequences=True, go_backwards=True, kernel_initializer="ones",
                                            recurrent_initializer="ones") for _ in range(2)]
            xs = [np.linspace(-1.0, 1.0, 30, dtype=np.float32).reshape(2, 5, 3)]
            for fl, bl in zip(forward, backward):
                xs.append(fl(xs[-1], initial_state=fl.get_initial_state(xs[-1])))
                xs.append(bl(xs[-1], initial_state=bl.get_initial_state(xs[-1])))
            y = xs[-1]
            """,
            at=[(10, 61, "Keras 3's `get_initial_state` takes the batch size, not the inputs"),
                (11, 61, "Keras 3's `get_initial_state` takes the batch size, not the inputs")],
            fixed="""
            import numpy as np
            import tensorflow as tf
            import keras

            forward = [tf.keras.layers.LSTM(4, return_sequences=True, kernel_initializer="ones",
                                            recurrent_initializer="ones") for _ in range(2)]
            backward = [tf.keras.layers.GRU(4, return_sequences=True, go_backwards=True, kernel_initializer="ones",
                                            recurrent_initializer="ones") for _ in range(2)]
            xs = [np.linspace(-1.0, 1.0, 30, dtype=np.float32).reshape(2, 5, 3)]
            for fl, bl in zip(forward, backward):
                xs.append(fl(xs[-1], initial_state=fl.get_initial_state(keras.ops.shape(xs[-1])[0])))
                xs.append(bl(xs[-1], initial_state=bl.get_initial_state(keras.ops.shape(xs[-1])[0])))
            y = xs[-1]
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            note="layers taken from two lists through zip (as ELMo's forward and backward LSTMs): the same outputs",
        ),
        clean(
            """
            import tensorflow as tf

            class LRLogger(tf.keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    print(float(tf.keras.backend.get_value(self.model.optimizer.lr)))

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("adam", "mse")
            rate = model.optimizer.lr
            """,
            note="optimizer.lr on objects Keras hands out (a callback's self.model, a model's optimizer: "
                 "bubbliiiing/unet-tf2 utils/callbacks.py:92) is TFG909's (keras3-optimizer-api), with its fix",
        ),
        clean(
            """
            import tensorflow as tf

            class Holder(tf.keras.callbacks.Callback):
                def __init__(self, model):
                    super().__init__()
                    self.model = model

                def on_epoch_end(self, epoch, logs=None):
                    print(self.model.optimizer.lr)

            class Plain:
                def run(self):
                    return self.model.optimizer.lr

            rate = tf.keras.Sequential([tf.keras.layers.Dense(1)]).optimizer.learning_rate
            """,
            note="a callback binding its own model (it may be anything); no Keras base; learning_rate",
        ),
        flagged(
            """
            import keras
            import numpy as np


            class Scale(keras.layers.Layer):
                def call(self, x):
                    self.add_update([])
                    return x


            dense = keras.layers.Dense(2)
            inp = keras.Input((3,))
            model = keras.Model(inp, dense(inp))
            shape = dense.output_shape
            kept = model.output_shape
            metric = keras.metrics.Mean()
            weights = metric.get_weights()
            opt = keras.optimizers.Adam()
            rate = opt.lr
            """,
            at=[(7, 14, "Keras 3 `Layer` has no `add_update` (AttributeError)"),
                (14, 15, "Keras 3 `Dense` has no `output_shape` (AttributeError)"),
                (17, 18, "Keras 3 `Mean` has no `get_weights` (AttributeError)")],
            note="members from the derived migration table (executed on Keras 3 instances); a functional model "
                 "keeps output_shape (the table records it for Model: not reported); no exact rewrite",
        ),
        flagged(
            """
            import tensorflow as tf


            class Registration(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self._model = None
                    self._model = self.build_model()

                def build_model(self):
                    \"\"\"Each subclass builds the functional model.\"\"\"

                def log(self, tensor):
                    self._model.add_metric(tensor, name="mean", aggregation="mean")


            class Dense(Registration):
                def build_model(self):
                    inputs = tf.keras.Input((3,))
                    return tf.keras.Model(inputs=inputs, outputs=tf.keras.layers.Dense(1)(inputs))


            class Trainer:
                def __init__(self, optimizer, mixed):
                    self.optimizer = optimizer
                    if mixed:
                        self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(self.optimizer)

                def step(self, loss):
                    return self.optimizer.get_scaled_loss(loss)
            """,
            at=[(14, 21, "Keras 3 `Model.add_metric()` only raises NotImplementedError"),
                (30, 31, "Keras 3 `LossScaleOptimizer` has no `get_scaled_loss` (AttributeError)")],
            note="issue 35 (DeepReg, TensorFlowTTS): the object is what the module's defs make: every override of "
                 "build_model returns a functional Model (the abstract one returns nothing), so self._model is "
                 "one; self.optimizer may be a parameter or a LossScaleOptimizer, and get_scaled_loss is read "
                 "because it is the latter (Keras 3.15, run by hand: NotImplementedError, AttributeError)",
        ),
        flagged(
            """
            import tensorflow as tf

            inp = tf.keras.Input((3,))
            model = tf.keras.Model(inputs=inp, outputs=tf.keras.layers.Dense(1)(inp))
            model.add_loss(tf.constant(1.0))
            twin = tf.keras.Model(inp, inp)
            twin.add_loss(1.0)


            class Net(tf.keras.Model):
                def call(self, x):
                    self.add_loss(tf.reduce_mean(x))
                    return x


            net = Net()
            """,
            at=[(5, 7, "Keras 3 functional models' `add_loss()` raises NotImplementedError"),
                (7, 6, "Keras 3 functional models' `add_loss()` raises NotImplementedError")],
            note="issue 35 (DeepReg network.py:225, self._model.add_loss on the functional model build_model "
                 "returns): Keras 3.15's Functional.add_loss raises NotImplementedError whatever it is given "
                 "(run by hand; tf_keras 2.21 adds it); a subclass's own add_loss in call() is Keras 3's way",
        ),
        clean(
            """
            import tensorflow as tf


            class Own:
                def get_scaled_loss(self, loss):
                    return loss


            class Trainer:
                def __init__(self, optimizer, mixed):
                    self.optimizer = optimizer
                    if mixed:
                        self.optimizer = Own()

                def step(self, loss):
                    return self.optimizer.get_scaled_loss(loss)


            class Mixed:
                def __init__(self, mixed):
                    self.model = tf.keras.Model() if mixed else load()

                def log(self, tensor):
                    self.model.add_metric(tensor)


            def load():
                return make()
            """,
            note="no Keras class among what may have made the object, or one source the module cannot tell "
                 "(load() returns what make() returns: unknown) for a member any Model has",
        ),
        clean(
            """
            import keras
            import tf_keras


            class Scale(keras.layers.Layer):
                def add_update(self, updates):
                    return updates

                def call(self, x):
                    self.add_update([])
                    return x


            class Counter(keras.metrics.Metric):
                def __init__(self):
                    super().__init__()
                    self.trainable = False

                def result(self):
                    return self.trainable


            old = tf_keras.layers.Dense(2)
            shape = old.output_shape
            lstm = keras.layers.LSTM(2, stateful=True)
            flag = lstm.stateful
            dense = keras.layers.Dense(2)
            dense.updates = []
            if hasattr(dense, "output_shape"):
                shape = dense.output_shape
            """,
            note="a subclass defining the member; an attribute the class assigns; tf_keras objects; an RNN keeps "
                 "stateful (recorded as such); an assignment target; a hasattr guard",
        ),
        flagged(
            """
            import tensorflow as tf

            class Trainer:
                def __init__(self):
                    self.train_loss = tf.keras.metrics.Mean(name="loss")
                    self.lstm = tf.keras.layers.LSTM(4, stateful=True)

                def epoch(self, values):
                    for v in values:
                        self.train_loss.update_state(v)
                    result = self.train_loss.result()
                    self.train_loss.reset_states()
                    return result, self.train_loss.result()

            test_loss = tf.keras.metrics.Mean()
            test_loss.update_state(3.0)
            test_loss.reset_states()
            """,
            fixed="""
            import tensorflow as tf

            class Trainer:
                def __init__(self):
                    self.train_loss = tf.keras.metrics.Mean(name="loss")
                    self.lstm = tf.keras.layers.LSTM(4, stateful=True)

                def epoch(self, values):
                    for v in values:
                        self.train_loss.update_state(v)
                    result = self.train_loss.result()
                    self.train_loss.reset_state()
                    return result, self.train_loss.result()

            test_loss = tf.keras.metrics.Mean()
            test_loss.update_state(3.0)
            test_loss.reset_state()
            """,
            at=[(12, 25, "Keras 3 metrics have no `reset_states()`"), (17, 11, "Keras 3 metrics have no")],
            run="""
            out = Trainer().epoch([1.0, 2.0])
            after = test_loss.result()
            """,
            effect=FIXES_ERROR,
            note="a metric in self.x and a module-level one; a stateful LSTM keeps reset_states (not flagged)",
            keras2=True,
        ),
        flagged(
            _TRAIN + textwrap.dedent("""
            model.fit_generator(batches(), steps_per_epoch=4, epochs=2, verbose=0, workers=1,
                                use_multiprocessing=False, max_queue_size=10)
            loss = model.evaluate_generator(generator=batches(), steps=2)
            pred = model.predict_generator(batches(), steps=1)
            """),
            fixed=_TRAIN + textwrap.dedent("""
            model.fit(batches(), steps_per_epoch=4, epochs=2, verbose=0)
            loss = model.evaluate(x=batches(), steps=2, verbose=0)
            pred = model.predict(batches(), steps=1, verbose=0)
            """),
            at=[(13, 7, "Keras 3 models have no `fit_generator()`"),
                (15, 14, "Keras 3 models have no `evaluate_generator()`"),
                (16, 14, "Keras 3 models have no `predict_generator()`")],
            effect=FIXES_ERROR,
            note="workers/use_multiprocessing/max_queue_size dropped; generator= becomes x=; verbose=0 kept as the "
                 "default (one worker: tf_keras runs a plain generator from several threads when workers > 1, "
                 "and a generator is not thread-safe)",
            keras2=True,
        ),
        flagged(
            """
            import tensorflow as tf

            tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
            policy = tf.keras.mixed_precision.experimental.global_policy()
            name = policy.name
            tf.keras.mixed_precision.experimental.set_policy("float32")
            """,
            fixed="""
            import tensorflow as tf

            tf.keras.mixed_precision.set_global_policy("mixed_float16")
            policy = tf.keras.mixed_precision.global_policy()
            name = policy.name
            tf.keras.mixed_precision.set_global_policy("float32")
            """,
            at=[(3, 1, "Keras 3 has no `mixed_precision.experimental` (AttributeError)"),
                (4, 10, "Keras 3 has no `mixed_precision.experimental`"),
                (6, 1, "Keras 3 has no `mixed_precision.experimental`")],
            run="""
            import numpy as np
            half = np.array([policy.compute_dtype == "float16", policy.variable_dtype == "float32"])
            """,
            effect=FIXES_ERROR,
        ),
        flagged(
            """
            import tensorflow as tf
            from tensorflow.keras.mixed_precision import experimental as mixed_precision

            model = tf.keras.Sequential([tf.keras.layers.LSTM(4, stateful=True)])
            model.reset_states()
            phase = tf.keras.backend.learning_phase()
            opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, loss_scale="dynamic")
            model.fit_generator(batches(), 10, 2)
            """,
            at=[(2, 1, "Keras 3 has no `mixed_precision.experimental` (ImportError)"),
                (5, 7, "Keras 3 models have no `reset_states()`"),
                (6, 9, "Keras 3 has no `backend.learning_phase()`"),
                (7, 7, "Keras 3 has no `mixed_precision.experimental`"),
                (8, 7, "Keras 3 models have no `fit_generator()`")],
            note="no exact rewrite: stateful layers, training=, a changed signature; positional steps/epochs",
        ),
        flagged(
            """
            import keras

            class Trainer:
                def __init__(self):
                    self.trackers = [keras.metrics.Mean(name="loss"), keras.metrics.Mean(name="acc")]
                    self.metrics_dict = {}
                    self.metrics_dict["loss"] = keras.metrics.Mean()

                def epoch(self, values):
                    for t in self.trackers:
                        t.update_state(values)
                    for t in self.trackers:
                        t.reset_states()
                    for name in ["loss"]:
                        self.metrics_dict[name].reset_states()
                    return [t.result() for t in self.trackers]

            loss_tracker = keras.metrics.Mean()
            metrics = [keras.metrics.Sum()]
            for m in [loss_tracker] + metrics:
                m.reset_states()
            """,
            fixed="""
            import keras

            class Trainer:
                def __init__(self):
                    self.trackers = [keras.metrics.Mean(name="loss"), keras.metrics.Mean(name="acc")]
                    self.metrics_dict = {}
                    self.metrics_dict["loss"] = keras.metrics.Mean()

                def epoch(self, values):
                    for t in self.trackers:
                        t.update_state(values)
                    for t in self.trackers:
                        t.reset_state()
                    for name in ["loss"]:
                        self.metrics_dict[name].reset_state()
                    return [t.result() for t in self.trackers]

            loss_tracker = keras.metrics.Mean()
            metrics = [keras.metrics.Sum()]
            for m in [loss_tracker] + metrics:
                m.reset_state()
            """,
            at=[(13, 15, "Keras 3 metrics have no `reset_states()`"),
                (15, 37, "Keras 3 metrics have no `reset_states()`"),
                (21, 7, "Keras 3 metrics have no `reset_states()`")],
            run="""
            import numpy as np
            out = np.array(Trainer().epoch([1.0, 2.0]))
            """,
            effect=FIXES_ERROR,
            note="metrics held in containers: a list built in __init__ and iterated, a dict filled by key and "
                 "indexed by a variable, a list display + a list (AttributeError under Keras 3: measured)",
        ),
        flagged(
            """
            import keras

            class GAN(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.d_loss = keras.metrics.Mean(name="d_loss")
                    self.trackers = []
                    self.trackers.append(keras.metrics.Mean(name="g_loss"))

                @property
                def metrics(self):
                    return [self.d_loss] + self.trackers

                def reset(self):
                    for metric in self.metrics:
                        metric.reset_states()

            class Plain(keras.Model):
                def reset(self):
                    for metric in self.metrics:
                        metric.reset_states()
            """,
            fixed="""
            import keras

            class GAN(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.d_loss = keras.metrics.Mean(name="d_loss")
                    self.trackers = []
                    self.trackers.append(keras.metrics.Mean(name="g_loss"))

                @property
                def metrics(self):
                    return [self.d_loss] + self.trackers

                def reset(self):
                    for metric in self.metrics:
                        metric.reset_state()

            class Plain(keras.Model):
                def reset(self):
                    for metric in self.metrics:
                        metric.reset_state()
            """,
            at=[(16, 20, "Keras 3 metrics have no `reset_states()`"),
                (21, 20, "Keras 3 metrics have no `reset_states()`")],
            run="""
            import numpy as np
            GAN().reset()
            inp = keras.Input((2,))
            plain = Plain(inp, keras.layers.Dense(1)(inp))
            plain.compile("sgd", "mse", metrics=["mae"])
            plain.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0)
            plain.reset()
            done = np.array([1.0])
            """,
            effect=FIXES_ERROR,
            note="a metrics property returning a list display plus a list filled by append; a Keras model's own "
                 "`metrics` (Mean and CompileMetrics under Keras 3: neither has reset_states)",
        ),
        flagged(
            """
            import keras
            import tf_keras


            class Trainer:
                def __init__(self):
                    self.trackers = []
                    self.trackers.append(keras.metrics.Mean(name="loss"))
                    self.old = {"a": tf_keras.metrics.Mean()}

                def epoch(self):
                    for tracker in self.trackers:
                        tracker.reset_states()
                    self.old["a"].reset_states()


            current = [keras.metrics.Mean()] + [keras.metrics.Sum()]
            legacy = [tf_keras.metrics.Mean()]
            for m in current:
                m.reset_states()
            for n in legacy:
                n.reset_states()
            """,
            fixed="""
            import keras
            import tf_keras


            class Trainer:
                def __init__(self):
                    self.trackers = []
                    self.trackers.append(keras.metrics.Mean(name="loss"))
                    self.old = {"a": tf_keras.metrics.Mean()}

                def epoch(self):
                    for tracker in self.trackers:
                        tracker.reset_state()
                    self.old["a"].reset_states()


            current = [keras.metrics.Mean()] + [keras.metrics.Sum()]
            legacy = [tf_keras.metrics.Mean()]
            for m in current:
                m.reset_state()
            for n in legacy:
                n.reset_states()
            """,
            at=[(13, 21, "Keras 3 metrics have no `reset_states()`"), (20, 7, "Keras 3 metrics have no `reset_states()`")],
            run="""
            import numpy as np
            Trainer().epoch()
            done = np.array([1.0])
            """,
            effect=FIXES_ERROR,
            note="a file using both Keras: an element's Keras is that of the calls that made every element (a "
                 "list filled by append, a + of displays); tf_keras metrics (a dict's value, a list) keep "
                 "reset_states",
        ),
        clean(
            """
            import keras
            import tf_keras

            class Trainer:
                def __init__(self):
                    self.trackers = [keras.metrics.Mean(name="loss"), keras.metrics.Mean(name="acc")]
                    self.names = {"loss": "l"}
                    self.blocks = [keras.layers.LSTM(4, stateful=True) for _ in range(2)]

                def epoch(self):
                    for t in self.trackers:
                        t.reset_state()
                    for name in self.names:
                        name.reset_states()
                    for block in self.blocks:
                        block.reset_states()

            legacy = [tf_keras.metrics.Mean(), tf_keras.metrics.Sum()]
            for m in legacy:
                m.reset_states()
            both = [keras.metrics.Mean(), keras.layers.Dense(2)]
            for b in both:
                b.reset_states()
            """,
            note="Keras 3 metrics in a list calling reset_state(); iterating a dict gives its keys; stateful "
                 "layers in a list keep reset_states; a file using both Keras: tf_keras metrics keep "
                 "reset_states; a list mixing a metric and a layer",
        ),
        clean(
            """
            import tf_keras

            metric = tf_keras.metrics.Mean()
            metric.reset_states()
            model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
            model.fit_generator(batches(), steps_per_epoch=10)
            model.reset_states()
            phase = tf_keras.backend.learning_phase()
            """,
            note="tf_keras 2.21 keeps all of these",
        ),
        clean(
            """
            import tensorflow as tf

            lstm = tf.keras.layers.LSTM(4, stateful=True)
            lstm.reset_states()

            def run(tracker):
                tracker.reset_states()

            class Agent:
                def fit_generator(self, gen):
                    return list(gen)

            Agent().fit_generator(iter([1]))
            """,
            note="stateful RNN layers keep reset_states; an unknown receiver of reset_states; a class of the "
                 "file's own",
        ),
        flagged(
            """
            import tensorflow as tf

            policy = tf.keras.mixed_precision.global_policy() if float(tf.__version__[:3]) >= 2.4 \\
                else tf.keras.mixed_precision.experimental.global_policy()
            name = policy.name
            """,
            fixed="""
            import tensorflow as tf

            policy = tf.keras.mixed_precision.global_policy() if float(tf.__version__[:3]) >= 2.4 \\
                else tf.keras.mixed_precision.global_policy()
            name = policy.name
            """,
            at=[(4, 10, "Keras 3 has no `mixed_precision.experimental` (AttributeError)")],
            run="import numpy as np\nis_float32 = np.array(name == 'float32')",
            effect=FIXES_ERROR,
            note="a version test that takes the old branch under TF 2.16+: float('2.21.0'[:3]) is 2.2, so the "
                 "else runs under Keras 3 and is reported",
        ),
        clean(
            """
            from distutils.version import LooseVersion

            import tensorflow as tf
            from packaging import version

            tf_version = tuple(int(part) for part in tf.__version__.split(".")[:3])
            policy = tf.keras.mixed_precision.global_policy() if tf_version >= (2, 4, 0) \\
                else tf.keras.mixed_precision.experimental.global_policy()
            if LooseVersion(tf.__version__) < "2.4":
                tf.keras.mixed_precision.experimental.set_policy("float32")
            if version.parse(tf.__version__) >= version.parse("2.4.0"):
                tf.keras.mixed_precision.set_global_policy("float32")
            else:
                def old_policy():
                    return tf.keras.mixed_precision.experimental.global_policy()
            if tf.__version__.startswith("1."):
                phase = tf.keras.backend.learning_phase()
            if TF_VERSION < MIN_TF_VERSION:
                tf.keras.mixed_precision.experimental.set_policy("float32")
            try:
                policy = tf.keras.mixed_precision.global_policy()
            except AttributeError:
                policy = tf.keras.mixed_precision.experimental.global_policy()
            """,
            note="branches of TensorFlow version comparisons that do not run under TF 2.16+ (tuples of parsed "
                 "versions, LooseVersion, packaging, startswith; a def in such a branch), or whose bound cannot be "
                 "read (either branch may be the fallback); an except AttributeError fallback",
        ),
        clean(
            """
            import pytest
            import tensorflow as tf

            metric = tf.keras.metrics.Mean()
            if hasattr(metric, "reset_state"):
                metric.reset_state()
            else:
                metric.reset_states()
            if hasattr(metric, "reset_states"):
                metric.reset_states()
            if not hasattr(tf.keras.optimizers, "legacy"):
                metric.reset_states()

            def test_removed(model):
                with pytest.raises(AttributeError):
                    metric.reset_states()
                if hasattr(model, "fit_generator"):
                    model.fit_generator(batches(), steps_per_epoch=2)
            """,
            note="branches that never call the removed method under Keras 3 (hasattr guards); a test that expects "
                 "the AttributeError",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            L = tf.keras.layers
            inp = tf.keras.Input((8, 8, 3))
            x = L.ZeroPadding2D(1)(inp)
            x = L.Conv2D(4, 3)(x)
            x = L.BatchNormalization()(x)
            x = L.LeakyReLU()(x)
            x = L.DepthwiseConv2D(3, padding="same")(x)
            x = L.SeparableConv2D(4, 3, padding="same")(x)
            x = L.Activation("relu")(x)
            shared = L.Conv2D(4, 1)
            a = L.GlobalAveragePooling2D()(shared(L.MaxPooling2D(2)(x)))
            b = L.Flatten()(L.Reshape((16, 16))(shared(L.AveragePooling2D(1)(x))))
            head = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(3)])
            sub_in = tf.keras.Input((None, 4))
            sub = tf.keras.Model(sub_in, L.Dense(3)(sub_in))
            c1 = L.Flatten()(sub(L.Reshape((1, 4))(a)))
            c2 = L.Flatten()(sub(L.Reshape((2, 4))(L.Dense(8)(a))))
            net = tf.keras.Model(inp, [head(a), L.Dense(2)(b), c1, c2])


            def shapes(model):
                rows = [model.layers[0].get_output_shape_at(0)]
                for l in model.layers[1:]:
                    for i in range(len(l._inbound_nodes)):
                        rows.append(l.get_input_shape_at(i)[1:4])
                        rows.append(l.get_output_shape_at(i))
                        rows.append(l.get_input_at(node_index=i).shape)
                        rows.append(l.get_output_at(i).shape)
                    if not isinstance(l, tf.keras.Model):
                        rows.append(l.get_input_shape_at(0)[1:4])
                        rows.append(l.get_output_shape_at(0)[1:4])
                        rows.append(l.get_input_at(0).shape)
                return rows
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            L = tf.keras.layers
            inp = tf.keras.Input((8, 8, 3))
            x = L.ZeroPadding2D(1)(inp)
            x = L.Conv2D(4, 3)(x)
            x = L.BatchNormalization()(x)
            x = L.LeakyReLU()(x)
            x = L.DepthwiseConv2D(3, padding="same")(x)
            x = L.SeparableConv2D(4, 3, padding="same")(x)
            x = L.Activation("relu")(x)
            shared = L.Conv2D(4, 1)
            a = L.GlobalAveragePooling2D()(shared(L.MaxPooling2D(2)(x)))
            b = L.Flatten()(L.Reshape((16, 16))(shared(L.AveragePooling2D(1)(x))))
            head = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(3)])
            sub_in = tf.keras.Input((None, 4))
            sub = tf.keras.Model(sub_in, L.Dense(3)(sub_in))
            c1 = L.Flatten()(sub(L.Reshape((1, 4))(a)))
            c2 = L.Flatten()(sub(L.Reshape((2, 4))(L.Dense(8)(a))))
            net = tf.keras.Model(inp, [head(a), L.Dense(2)(b), c1, c2])


            def shapes(model):
                rows = [model.layers[0].output.shape]
                for l in model.layers[1:]:
                    for i in range(len(l._inbound_nodes)):
                        rows.append(l._get_node_attribute_at_index(i, "input_tensors", "input").shape[1:4])
                        rows.append(l._get_node_attribute_at_index(i, "output_tensors", "output").shape)
                        rows.append(l._get_node_attribute_at_index(i, "input_tensors", "input").shape)
                        rows.append(l._get_node_attribute_at_index(i, "output_tensors", "output").shape)
                    if not isinstance(l, tf.keras.Model):
                        rows.append(l.input.shape[1:4])
                        rows.append(l.output.shape[1:4])
                        rows.append(l.input.shape)
                return rows
            """,
            at=[(25, 29, "Keras 3 `Layer` has no `get_output_shape_at` (AttributeError): use `layer.output.shape`"),
                (28, 27, "Keras 3 `Layer` has no `get_input_shape_at` (AttributeError): `layer.input.shape` is the "
                         "first call's; another call's only through Keras 3's private "
                         "`layer._get_node_attribute_at_index(i, \"input_tensors\", \"input\").shape`"),
                (29, 27, "Keras 3 `Layer` has no `get_output_shape_at` (AttributeError): `layer.output.shape` is"),
                (30, 27, "Keras 3 `Layer` has no `get_input_at` (AttributeError): `layer.input` is the first"),
                (31, 27, "Keras 3 `Layer` has no `get_output_at` (AttributeError): `layer.output` is the first"),
                (33, 27, "Keras 3 `Layer` has no `get_input_shape_at` (AttributeError): use `layer.input.shape` (an "
                         "InputLayer's `input` is `[]` in Keras 3"),
                (34, 27, "Keras 3 `Layer` has no `get_output_shape_at` (AttributeError): use `layer.output.shape`"),
                (35, 27, "Keras 3 `Layer` has no `get_input_at` (AttributeError): use `layer.input`")],
            run="""
            def _encode(rows):
                return [[len(row)] + [-1 if d is None else d for d in row] for row in rows]

            out = np.array(sum(_encode(shapes(net)), []))
            nodes = [len(layer._inbound_nodes) for layer in net.layers]
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            note="every call's shapes, by node index (the loop of unet-tf2 utils/utils.py's FLOPs counter) and at "
                 "node 0, over ZeroPadding2D, Conv2D, BatchNormalization, LeakyReLU, DepthwiseConv2D, "
                 "SeparableConv2D, Activation, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, Reshape, "
                 "Flatten, Dense, a Conv2D called twice on different shapes, a nested Sequential and a nested "
                 "functional model called twice on different shapes, and the InputLayer's output: the same numbers "
                 "(and node counts) under tf_keras before and Keras 3 after; node 0 by the public `input`/`output` "
                 "except on a nested model (its own, not its first call's: measured)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            inp = tf.keras.Input((6, 6, 3))
            h = tf.keras.layers.Conv2D(4, 3, name="conv")(inp)
            h = tf.keras.layers.Flatten()(h)
            net = tf.keras.Model(inp, tf.keras.layers.Dense(2)(h))

            def sizes(model):
                found = []
                for layer in model.layers:
                    shape = layer.get_output_shape_at(0)
                    found.append(int(np.prod(shape[1:])))
                return found

            conv = net.get_layer("conv")
            channels = conv.get_output_at(0).shape[-1]
            last = net.layers[-1].get_output_shape_at(node_index=0)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            inp = tf.keras.Input((6, 6, 3))
            h = tf.keras.layers.Conv2D(4, 3, name="conv")(inp)
            h = tf.keras.layers.Flatten()(h)
            net = tf.keras.Model(inp, tf.keras.layers.Dense(2)(h))

            def sizes(model):
                found = []
                for layer in model.layers:
                    shape = layer.output.shape
                    found.append(int(np.prod(shape[1:])))
                return found

            conv = net.get_layer("conv")
            channels = conv.output.shape[-1]
            last = net.layers[-1].output.shape
            """,
            at=[(12, 23, "Keras 3 `Layer` has no `get_output_shape_at` (AttributeError): use `layer.output.shape`"),
                (17, 17, "Keras 3 `Layer` has no `get_output_at` (AttributeError): use `layer.output`"),
                (18, 23, "Keras 3 `Layer` has no `get_output_shape_at`")],
            run="""
            out = np.array(sizes(net) + [channels] + [-1 if d is None else d for d in last])
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            note="the first call's output shape (node 0: also an InputLayer's, as in Keras 2) of the layers of a model "
                 "handed in, of model.get_layer(...) and of model.layers[i]: the same numbers under tf_keras before "
                 "and Keras 3 after (unet-tf2 utils/utils.py's FLOPs counter)",
        ),
        flagged(
            """
            import tensorflow as tf

            inp = tf.keras.Input((4,))
            net = tf.keras.Model(inp, tf.keras.layers.Dense(2, name="d")(inp))

            def table(model):
                return [layer.get_input_shape_at(*where) for layer in model.layers for where in [(0,)]]

            for layer in net.layers:
                print(layer.input_shape, layer.output_shape)
            units = net.get_layer("d").output_shape[-1]
            """,
            at=[(7, 19, "Keras 3 `Layer` has no `get_input_shape_at` (AttributeError): use `layer.input.shape`"),
                (10, 17, "Keras 3 `Layer` has no `input_shape` (AttributeError): use `layer.input.shape`"),
                (10, 36, "Keras 3 `Layer` has no `output_shape` (AttributeError): use `layer.output.shape`"),
                (11, 28, "Keras 3 `Layer` has no `output_shape` (AttributeError)")],
            note="no fix: a node index passed with *; the properties (Keras 2's InputLayer.output_shape is a list "
                 "of one tuple, `.output.shape` a tuple)",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras

            old = tf_keras.Sequential([tf_keras.Input((4,)), tf_keras.layers.Dense(1)])
            shapes = [layer.output_shape for layer in old.layers]
            for layer in old.layers:
                print(layer.input_shape)

            class Stack:
                def __init__(self):
                    self.layers = []

            for block in Stack().layers:
                print(block.input_shape, block.output_shape)

            net = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
            kept = net.output_shape
            """,
            note="a tf_keras model's layers; a class of the file's own holding `layers`; a Keras 3 Sequential's own "
                 "output_shape (kept)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            class Scale(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.width = input_shape.as_list()[-1]
                    self.table = tf.TensorShape(input_shape).as_list()

                def call(self, x):
                    return x * float(self.width)

            inp = tf.keras.Input((None, 3))
            h = tf.keras.layers.Dense(4)(inp)
            dims = inp.shape.as_list()
            units = h.get_shape().as_list()[-1]
            out = Scale()(h)
            model = tf.keras.Model(inp, out)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            class Scale(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.width = list(input_shape)[-1]
                    self.table = tf.TensorShape(input_shape).as_list()

                def call(self, x):
                    return x * float(self.width)

            inp = tf.keras.Input((None, 3))
            h = tf.keras.layers.Dense(4)(inp)
            dims = list(inp.shape)
            units = list(h.shape)[-1]
            out = Scale()(h)
            model = tf.keras.Model(inp, out)
            """,
            at=[(6, 34, "Keras 3 passes `build` a tuple: `input_shape.as_list()` raises AttributeError"),
                (14, 18, "A Keras 3 KerasTensor has no `shape.as_list()`: its shape is a tuple (AttributeError)"),
                (15, 11, "A Keras 3 KerasTensor has no `get_shape()` (AttributeError): use `list(x.shape)`")],
            run="""
            shapes = np.array([-1 if d is None else d for d in dims] + [units])
            """,
            effect=FIXES_ERROR,
            keras2=True,
            keras2_before=True,
            note="Keras 3 gives tuples where Keras 2 gave TensorShapes (measured: AttributeError under Keras 3.15 for "
                 "each, KerasTensor has no get_shape); list(...) keeps the None dimensions and the ints under both; "
                 "tf.TensorShape(input_shape).as_list() runs under both (not reported)",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras

            class Legacy(tf_keras.layers.Layer):
                def build(self, input_shape):
                    self.width = input_shape.as_list()[-1]

            class Own(tf.keras.layers.Layer):
                def build(self, input_shape):
                    input_shape = tf.TensorShape(input_shape)
                    self.width = input_shape.as_list()[-1]

                def call(self, x):
                    return x * x.shape.as_list()[-1]

            old = tf_keras.Input((3,))
            dims = old.shape.as_list()
            t = tf.ones((2, 3))
            n = t.shape.as_list() + t.get_shape().as_list()
            """,
            note="tf_keras layers and tensors; input_shape rebound to a TensorShape; a layer's call (real tensors, "
                 "traced); an eager tensor",
        ),
        clean(
            """
            import os
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            import tensorflow as tf

            def flops(model):
                return [l.get_input_shape_at(0) for l in model.layers]

            class Node:
                def get_input_shape_at(self, index):
                    return index

            n = Node().get_input_shape_at(0)
            """,
            note="tf.keras is Keras 2 here; a class of the file's own that defines the name",
        ),
    ]
