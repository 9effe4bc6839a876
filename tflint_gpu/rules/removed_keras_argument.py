from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import argument, keyword, without_args
from tflint_gpu.semantic import values
from tflint_gpu.semantic.migration import KERAS3, TF_KERAS
from tflint_gpu.semantic.target import NEW_OPTIMIZERS_TF
from tflint_gpu.rules.base import CHANGES, FIXES_ERROR, Fix, Rule, Safety, clean, flagged

# Keras 3 layers whose constructor takes `weights=` (measured: Keras 3.15).
_LAYERS_WITH_WEIGHTS = frozenset({"Embedding", "Bidirectional"})
_NOT_LAYERS = frozenset({"Input", "InputSpec"})
# File suffixes that decide the format in Keras 3 (save_format is then ignored).
_FORMAT_SUFFIXES = (".keras", ".h5", ".hdf5")
_SAVE_FUNCTIONS = frozenset({"keras.models.save_model", "keras.saving.save_model"})

_OPTIMIZER_RUN = """
lr = float(opt.learning_rate)
"""


def _string(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        try:
            value = expr.evaluated_value
        except Exception:  # pragma: no cover - defensive
            return None
        return value if isinstance(value, str) else None
    return None


def _rename(arg: cst.Arg, new: str, message: str, safety: Safety) -> Fix:
    assert arg.keyword is not None
    return Fix(message, safety, {arg.keyword: cst.Name(new)})


def _drop(call: cst.Call, arg: cst.Arg, message: str, safety: Safety = Safety.SAFE) -> Fix:
    return Fix(message, safety, {call: without_args(call, [arg])})


def _rate_argument(call: cst.Call) -> Optional[cst.Arg]:
    """The optimizer's learning-rate argument: ``lr=``, ``learning_rate=`` or the first positional
    one; None when there is none, or both keywords."""
    lr, rate = keyword(call, "lr"), keyword(call, "learning_rate")
    if lr is not None and rate is not None:
        return None
    if lr is not None or rate is not None:
        return lr or rate
    first = call.args[0] if call.args else None
    return first if first is not None and first.keyword is None and not first.star else None


def _decay_fix(call: cst.Call, ctx) -> Optional[Fix]:
    """``Adam(lr=a, decay=d)`` -> ``Adam(learning_rate=keras.optimizers.schedules.InverseTimeDecay(a,
    decay_steps=1, decay_rate=d))``: what Keras 2's optimizers (OptimizerV2, tf_keras's legacy ones) did
    with ``decay=`` (``lr / (1 + decay * iterations)``, iterations counted before the step)."""
    decay = keyword(call, "decay")
    if decay is None or _no_decay(decay.value) or any(a.star for a in call.args):
        return None
    rate = _rate_argument(call)
    if rate is None:
        return None
    found = ctx.module_expr("keras", "optimizers.schedules.InverseTimeDecay")
    if found is None:
        return None
    func, imports = found
    schedule = cst.Call(func, args=[
        cst.Arg(rate.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Arg(cst.Integer("1"), keyword=cst.Name("decay_steps"), equal=_EQUAL,
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Arg(decay.value, keyword=cst.Name("decay_rate"), equal=_EQUAL),
    ])
    new_rate = rate.with_changes(value=schedule)
    if rate.keyword is not None:
        new_rate = new_rate.with_changes(keyword=cst.Name("learning_rate"))
    return Fix("Rewrite `decay=` as the `InverseTimeDecay` schedule Keras 2 applied", Safety.UNSAFE,
               {call: without_args(call, [decay], (rate, new_rate))}, imports)


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
_DECAY_LOST = ("Keras 3 ignores `decay=` (UserWarning) and trains at a constant rate; Keras 2 divided the rate by "
               "`1 + decay * iterations`: use `learning_rate=keras.optimizers.schedules.InverseTimeDecay(lr, "
               "decay_steps=1, decay_rate=decay)`")


def _lost_under_keras3(call: cst.Call) -> Optional[str]:
    """What a Keras 3 optimizer call would silently drop once it runs: `decay=`
    (ignored with a UserWarning, unless None or 0), or whatever `**kwargs`
    holds; None when every argument survives."""
    decay = keyword(call, "decay")
    if decay is not None and not _no_decay(decay.value):
        return ("Keras 3 ignores `decay=` (UserWarning), so the renamed optimizer would train without it: use a "
                "schedule, `learning_rate=keras.optimizers.schedules.InverseTimeDecay(lr, decay_steps=1, "
                "decay_rate=decay)`")
    star = next((a for a in call.args if a.star == "**"), None)
    if star is not None:
        return "`**` arguments may hold `decay=`, which Keras 3 ignores (UserWarning)"
    return None


def _no_decay(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value == "None"
    if isinstance(expr, (cst.Integer, cst.Float)):
        return float(expr.evaluated_value) == 0.0
    return False


# Keywords this rule's own checks handle (their messages and fixes).
_HAND_KEYWORDS = frozenset({"lr", "experimental_compile", "save_format", "weights"})
# Keras 2's data-loading keywords of fit/evaluate/predict (Keras 3 moved them to PyDataset).
_TRAINING = frozenset({"fit", "evaluate", "predict"})
_DATA_LOADING = frozenset({"workers", "use_multiprocessing", "max_queue_size"})
_TABLE_KEYWORDS: Optional[frozenset] = None


def _table():
    from tflint_gpu.semantic.migration_table import table

    return table()


def _table_keywords() -> frozenset:
    """Keywords the migration table records as rejected by some Keras 3 callable (executed)."""
    global _TABLE_KEYWORDS
    if _TABLE_KEYWORDS is None:
        _TABLE_KEYWORDS = frozenset(e["keyword"] for e in _table().entries()
                                    if e["kind"] == "keyword" and e.get("rejects_name"))
    return _TABLE_KEYWORDS


def _report(ctx, node: cst.CSTNode, message: str, fix: Optional[Fix] = None, keras3_only: bool = True) -> None:
    """Report, unless the code never runs under Keras 3 or a test expects the error; a Keras 3
    breakage (``keras3_only``) only where the project's target is Keras 3."""
    if keras3_only and not ctx.target.keras3:
        return
    if not ctx.migration.guarded(node, ctx.scope):
        ctx.report(node, message, fix)


class RemovedKerasArgument(Rule):
    """A keyword argument Keras 3 removed: `Adam(lr=)`, `compile(experimental_compile=)`, `save_format=`, `weights=`.

    ## What it does
    Finds keyword arguments that Keras 2 accepted and Keras 3 (what `tf.keras`
    is under TensorFlow 2.16+) rejects:

    * `lr=` given to a Keras optimizer (`tf.keras.optimizers.Adam(lr=1e-3)`);
    * `experimental_compile=` given to `model.compile(...)`;
    * `save_format=` given to `model.save(...)`, `keras.models.save_model(...)`
      or `model.save_weights(...)`;
    * `weights=` given to a Keras layer's constructor (`Dense(4, weights=[w, b])`);
    * any other keyword the derived migration table (`scripts/derive_migration.py`)
      records as taken by Keras 2's callable and rejected by name by Keras 3's
      when executed: `model.fit(workers=, use_multiprocessing=,
      max_queue_size=)`, `Dense(batch_size=)`, `BatchNormalization(fused=)`
      (through `**kwargs` to its base), `LSTM(time_major=)`,
      `Layer(dynamic=)`, `to_categorical(y=)`, `add_weight(synchronization=)`
      (also on `self` in a Layer subclass). Keywords Keras 3 only warns about
      (`input_shape=` on a layer) or that failed on the value rather than the
      name (`load_weights(by_name=)`) are not reported.

    The Keras is decided by the import spelling: `keras` and `tf.keras` are
    Keras 3, `tf_keras` is Keras 2 (a file that mentions `TF_USE_LEGACY_KERAS`
    leaves `tf.keras` undecided: it may be Keras 2 there). For `model.save`
    and `model.compile` the object's Keras is that of the call that made it,
    else the file's (only when the file uses one Keras).

    In Keras 2 (`tf_keras` 2.21) a new-style optimizer also takes `lr=` without
    an error, and ignores it: reported too, with its own message.

    Not reported: code in the `else:` of `if hasattr(tf.keras.optimizers,
    "legacy")` (Keras 3 has that attribute: the branch is for TF 2.10 and
    older), in a branch of a TensorFlow or Keras version comparison that does
    not run under TF 2.16+ (`if tf_version < (2, 11):`, `if
    LooseVersion(tf.__version__) < "2.4":`, `packaging.version.parse`...) or
    whose bound cannot be read (`if tf_version >= MIN_TF:`), an `except
    TypeError:` handler (or `ValueError`, `AttributeError`, `ImportError`:
    the fallback a `try` takes where the current spelling fails; not a bare
    `except` or `except Exception`), and code a test expects to raise (`with
    self.assertRaises(...)`, `pytest.raises(...)`).

    ## Why is this bad?
    Measured under TensorFlow 2.21 with Keras 3.15:
    * `tf.keras.optimizers.Adam(lr=0.1)` (and SGD, RMSprop, Adagrad, Adadelta,
      Adamax, Nadam, Ftrl, AdamW): `ValueError: Argument(s) not recognized:
      {'lr': 0.1}`. Under `tf_keras` 2.21, `tf_keras.optimizers.Adam(lr=0.1)`
      only logs a warning and trains at the default: its `learning_rate` is
      0.001 (SGD: 0.01). The legacy optimizers (`tf_keras.optimizers.legacy`)
      still honour `lr=` and are not reported.
    * `model.compile(..., experimental_compile=True)`: `TypeError:
      Trainer.compile() got an unexpected keyword argument
      'experimental_compile'` (tf_keras 2.21 raises a TypeError too). The
      argument was renamed `jit_compile`.
    * `model.save(path, save_format=...)`: `ValueError: The save_format
      argument is deprecated in Keras 3` unless `path` ends in `.keras`,
      `.h5` or `.hdf5`, where it is ignored with a warning (the suffix decides
      the format: `save("m.h5", save_format="tf")` writes HDF5). Without the
      argument, a path with no suffix raises too (`Invalid filepath
      extension`): a SavedModel is now written by `model.export(path)`.
      `model.save_weights(path, save_format=...)`: `TypeError`.
    * `Dense(1, weights=[w, b])` (any layer but `Embedding` and
      `Bidirectional`, which still take it): `ValueError: Unrecognized keyword
      arguments passed to Dense: {'weights': ...}`. tf_keras accepts it.

    ## Example
    ```python
    import tensorflow as tf

    opt = tf.keras.optimizers.Adam(lr=1e-3)
    model.compile(opt, "mse", experimental_compile=True)
    model.save("model.h5", save_format="h5")
    ```

    Use instead:
    ```python
    import tensorflow as tf

    opt = tf.keras.optimizers.Adam(learning_rate=1e-3)
    model.compile(opt, "mse", jit_compile=True)
    model.save("model.h5")
    ```

    ## Fix safety
    * `lr=` → `learning_rate=` (when `learning_rate=` is not also given) and
      `experimental_compile=` → `jit_compile=` (when `jit_compile=` is not also
      given): the names Keras 2 meant. Safe for Keras 3, where the original
      raises (eagerly too) and the tests check that the fixed code runs, when
      every other argument of the call survives under Keras 3; unsafe for
      tf_keras's `lr=`, where the fixed optimizer trains at the rate written
      instead of the default: that changes training, on purpose.
    * `decay=` (other than `None` or 0) on a Keras 3 optimizer, with or
      without `lr=`: Keras 3 ignores it with a UserWarning (`SGD(learning_rate=
      0.1, decay=1e-5)` runs and trains at a constant rate), so the call is
      rewritten to the schedule Keras 2 applied, unsafe:
      `learning_rate=keras.optimizers.schedules.InverseTimeDecay(lr,
      decay_steps=1, decay_rate=decay)` (the rate given by `lr=`,
      `learning_rate=` or first positionally; no fix without one, nor with
      `**kwargs`). Keras 2's optimizers that honoured `decay=` (TF <= 2.10's
      `tf.keras.optimizers`, tf_keras's `optimizers.legacy`) used `lr / (1 +
      decay * iterations)` with the iterations counted before the step, as
      Keras 3 hands a schedule its iterations: measured over six steps,
      legacy `SGD(lr=0.1, momentum=0.9, decay=0.05)` and Keras 3's SGD on the
      schedule move a variable identically, Adam within 2e-6 (Keras 3's Adam
      orders its arithmetic differently even without decay);
      tests/test_decay_schedule.py runs the cases both ways. TF 2.11-2.15's
      `tf.keras.optimizers` (and tf_keras 2.21's) raise `ValueError: decay is
      deprecated in the new TF-Keras optimizer` instead, so code with
      `decay=` ran only on an optimizer that applied it. Unsafe: the training
      changes under Keras 3 (restored to Keras 2's), and code that later
      assigns the rate (`K.set_value(opt.lr, ...)`, `opt.learning_rate = x`)
      fails on a schedule (TFG610 reports that). `**kwargs` that may hold
      `decay=`: the rename is unsafe and the message says so.
      `compile()` takes no `**kwargs` in Keras 3: any other removed
      argument still raises TypeError after the rename, so that rename stays
      safe.
    * `save_format=` on a literal path ending in `.keras`/`.h5`/`.hdf5`: dropped,
      safe (Keras 3 ignores it there). On any other path: no fix, the file
      name or the call (`model.export`) must change, and so must the code that
      loads the file.
    * `weights=`: no fix (`layer.set_weights(...)` once the layer is built, or
      initializers).
    * Table keywords: a rename only where the table says it is exact (none in
      the table derived from Keras 3.15); otherwise the message names the
      parameter Keras 3 has in that place when there is one
      (`to_categorical(y=)` → `x`), no fix.
    * `fit(workers=, use_multiprocessing=, max_queue_size=)` (and
      `evaluate`/`predict`): dropped, unsafe (it deletes the user's code):
      Keras 3 reads them from a `keras.utils.PyDataset`'s constructor
      (`super().__init__(workers=4, use_multiprocessing=True)` in the
      Sequence subclass), so the loading runs single-threaded until they are
      moved there; what is trained does not change.
    Executed under tf_keras too (the fix-execution test's Keras 2 run): the
    `fit(workers=)` drop and the `save_format=` drops give identical results
    there, so they suit code that must run under both.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, tf_keras 2.21, CPU: the errors above, each
    raised at the call. `SGD(learning_rate=0.2, momentum=0.9, decay=0.01)`
    warns `UserWarning: Argument `decay` is no longer supported and will be
    ignored.` and moves a variable with gradient 1 to 0.8, 0.42, -0.122 in
    three steps, as without `decay=`; tf_keras's legacy `SGD(lr=0.2,
    momentum=0.9, decay=0.01)` gives 0.8, 0.42198, -0.114316, and so does
    Keras 3 with `InverseTimeDecay(0.2, decay_steps=1, decay_rate=0.01)`.
    tf_keras 2.21's optimizers raise `ValueError: decay is deprecated in the
    new TF-Keras optimizer`. examples/TFG901 (`tflint-gpu verify --rule TFG901`):
    fixes-error, `ValueError` before, the fixed training step runs after.
    """

    code = "TFG901"
    migration = "by-target"  # rules.base.BY_TARGET: `lr=` on a tf_keras optimizer breaks under Keras 2 too
    name = "removed-keras-argument"
    message = "Keras 3 removed this argument"
    needs = (("lr", "experimental_compile", "save_format", "weights", "keras"),)
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if not any(a.keyword is not None for a in node.args):
            return
        self._from_table(node, ctx)
        lr = keyword(node, "lr")
        if lr is not None:
            self._optimizer(node, lr, ctx)
        else:
            decay = keyword(node, "decay")
            if decay is not None and not _no_decay(decay.value):
                self._decay(node, decay, ctx)
        if isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            receiver = node.func.value
            compile_arg = keyword(node, "experimental_compile")
            if method == "compile" and compile_arg is not None:
                self._compile(node, receiver, compile_arg, ctx)
            save_format = keyword(node, "save_format")
            if method in ("save", "save_weights") and save_format is not None:
                self._save(node, receiver, save_format, method, ctx)
        weights = keyword(node, "weights")
        if weights is not None:
            self._layer(node, weights, ctx)
        save_format = keyword(node, "save_format")
        if save_format is not None and ctx.call_name(node) in _SAVE_FUNCTIONS \
                and ctx.migration.api_flavour(node.func, ctx.scope) == KERAS3:
            self._report_save(node, save_format, argument(node, 1, "filepath"), ctx)

    # -- the derived migration table -------------------------------------------
    def _from_table(self, node: cst.Call, ctx) -> None:
        """Keywords the table records as rejected by the Keras 3 callable (executed: TypeError or
        ValueError), besides those the checks below handle."""
        wanted = _table_keywords()
        args = [a for a in node.args if a.keyword is not None and a.keyword.value not in _HAND_KEYWORDS
                and a.keyword.value in wanted]
        if not args:
            return
        names = ctx.keras3_callables(node)
        if not names and isinstance(node.func, cst.Attribute) and node.func.attr.value in _TRAINING \
                and all(a.keyword.value in _DATA_LOADING for a in args) \
                and ctx.unknown_keras3_model(node.func.value, node.func.attr.value, distinctive=True,
                                             judge_maker=False):
            # `model.fit(..., workers=4, use_multiprocessing=True)` on a model the file makes in a way it
            # does not show (a factory function): no other library's fit takes these keywords
            names = [f"keras.Model.{node.func.attr.value}"]
        if not names:
            return
        table = _table()
        for arg in args:
            for qualname in names:
                removal = table.removed_keyword(qualname, arg.keyword.value)
                if removal is None:
                    continue
                short = qualname[len("keras."):] if qualname.startswith("keras.") else qualname
                message = f"Keras 3 `{short}()` takes no `{arg.keyword.value}=` ({removal.error})"
                fix = None
                if removal.replacement:
                    if removal.exact:
                        fix = _rename(arg, removal.replacement, f"Rename to `{removal.replacement}=`", Safety.SAFE)
                        message += f": use `{removal.replacement}=`"
                    else:
                        message += f"; its parameter in that place is `{removal.replacement}=`"
                elif arg.keyword.value in _DATA_LOADING and qualname.rsplit(".", 1)[1] in _TRAINING:
                    # Keras 3 reads them from a PyDataset: dropping them changes how fast, not what, it trains
                    fix = _drop(node, arg, f"Drop `{arg.keyword.value}=` (Keras 3 takes it in a `PyDataset`'s "
                                           f"constructor)", Safety.UNSAFE)
                _report(ctx, arg, message, fix)
                break

    def _optimizer(self, node: cst.Call, lr: cst.Arg, ctx) -> None:
        qualname = ctx.call_name(node)
        if qualname is None:
            return
        parts = qualname.split(".")
        if len(parts) != 3 or parts[:2] != ["keras", "optimizers"] or not parts[2][:1].isupper():
            return
        flavour = ctx.migration.api_flavour(node.func, ctx.scope)
        raw = ctx.resolver.raw_qualname(node.func, ctx.scope) or ""
        has_rate = keyword(node, "learning_rate") is not None
        if flavour is None and not ctx.target.keras3 and raw.startswith(("tensorflow.keras.", "tensorflow.compat.v2.keras.")):
            flavour = TF_KERAS  # the project targets Keras 2: tf.keras is Keras 2 there
        if flavour == KERAS3:
            lost = _lost_under_keras3(node)
            message = "Keras 3 optimizers raise ValueError on `lr=`: use `learning_rate=`"
            if lost is not None:
                # The rename makes the call run, and Keras 3 then drops the other argument.
                message += f"; {lost}"
            fix = None if has_rate else _decay_fix(node, ctx) or _rename(
                lr, "learning_rate", "Rename `lr=` to `learning_rate=`", Safety.SAFE if lost is None else Safety.UNSAFE)
            _report(ctx, lr, message, fix)
        elif flavour == TF_KERAS and not has_rate and (raw.startswith("tf_keras.") or ctx.target.at_least(NEW_OPTIMIZERS_TF)):
            # tf_keras, or tf.keras of a Keras 2 target: from TF 2.11 its new optimizers ignore lr= (before, an alias)
            _report(ctx, lr, "tf_keras optimizers ignore `lr=` and train at the default rate: use `learning_rate=`",
                    _rename(lr, "learning_rate", "Rename `lr=` to `learning_rate=`", Safety.UNSAFE),
                    keras3_only=False)

    def _decay(self, node: cst.Call, decay: cst.Arg, ctx) -> None:
        """``SGD(learning_rate=0.1, decay=1e-5)`` on a Keras 3 optimizer: runs, and trains without the decay."""
        qualname = ctx.call_name(node)
        if qualname is None:
            return
        parts = qualname.split(".")
        if len(parts) != 3 or parts[:2] != ["keras", "optimizers"] or not parts[2][:1].isupper():
            return
        if ctx.migration.api_flavour(node.func, ctx.scope) != KERAS3:
            return
        _report(ctx, decay, _DECAY_LOST, _decay_fix(node, ctx))

    def _compile(self, node: cst.Call, receiver: cst.BaseExpression, arg: cst.Arg, ctx) -> None:
        kind = ctx.value_kind(receiver)
        if kind != values.KERAS and not (kind == values.UNKNOWN
                                         and ctx.migration.object_flavour(receiver, ctx.scope) is not None):
            return
        fix = None
        if keyword(node, "jit_compile") is None:
            fix = _rename(arg, "jit_compile", "Rename `experimental_compile=` to `jit_compile=`", Safety.SAFE)
        _report(ctx, arg, "`compile()` has no `experimental_compile=` (TypeError): use `jit_compile=`", fix)

    def _save(self, node: cst.Call, receiver: cst.BaseExpression, arg: cst.Arg, method: str, ctx) -> None:
        kind = ctx.value_kind(receiver)
        if kind not in (values.KERAS, values.UNKNOWN) or ctx.migration.object_flavour(receiver, ctx.scope) != KERAS3:
            return
        if method == "save_weights":
            _report(ctx, arg, "Keras 3 `save_weights()` has no `save_format=` (TypeError): the path must end in "
                              "`.weights.h5`")
            return
        self._report_save(node, arg, argument(node, 0, "filepath"), ctx)

    def _report_save(self, node: cst.Call, arg: cst.Arg, path: Optional[cst.BaseExpression], ctx) -> None:
        if (isinstance(arg.value, cst.Name) and arg.value.value in ("None", "False")) or _string(arg.value) == "":
            return  # a falsy save_format is ignored
        text = ctx.path_ending(path)
        if text is not None and text.endswith(_FORMAT_SUFFIXES):
            suffix = "." + text.rsplit(".", 1)[1]
            _report(ctx, arg, f"Keras 3 ignores `save_format=`: the `{suffix}` suffix decides the format",
                    _drop(node, arg, "Remove `save_format=`"))
            return
        _report(ctx, arg, "Keras 3 raises ValueError on `save_format=` unless the path ends in `.keras` or `.h5`; "
                          "a SavedModel is `model.export(path)`")

    def _layer(self, node: cst.Call, arg: cst.Arg, ctx) -> None:
        qualname = ctx.call_name(node)
        if qualname is None:
            return
        parts = qualname.split(".")
        if len(parts) != 3 or parts[:2] != ["keras", "layers"] or not parts[2][:1].isupper() \
                or parts[2] in _LAYERS_WITH_WEIGHTS or parts[2] in _NOT_LAYERS:
            return
        if ctx.migration.api_flavour(node.func, ctx.scope) != KERAS3:
            return
        _report(ctx, arg, f"Keras 3 layers take no `weights=` (ValueError): call `set_weights()` once the "
                          f"`{parts[2]}` is built")

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            var = tf.Variable([1.0, -2.0])
            opt = tf.keras.optimizers.SGD(lr=0.1, momentum=0.9, decay=0.05)
            for _ in range(6):
                opt.apply_gradients([(tf.constant([0.5, 0.25]), var)])
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf
            import keras

            var = tf.Variable([1.0, -2.0])
            opt = tf.keras.optimizers.SGD(learning_rate=keras.optimizers.schedules.InverseTimeDecay(0.1, decay_steps=1, decay_rate=0.05), momentum=0.9)
            for _ in range(6):
                opt.apply_gradients([(tf.constant([0.5, 0.25]), var)])
            """,
            at=[(5, 31, "Keras 3 optimizers raise ValueError on `lr=`: use `learning_rate=`; Keras 3 ignores `decay=`")],
            run="""
            weights = var.numpy()
            """,
            effect=FIXES_ERROR,
            note="lr= and decay=: the rename alone would train without the decay; the schedule is what Keras 2 "
                 "applied (tests/test_decay_schedule.py runs the original on Keras 2's optimizers, tf_keras legacy "
                 "= TF <= 2.10's tf.keras.optimizers, and the fix under Keras 3: the same weights)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf
            from tensorflow.keras.optimizers import Adam

            var = tf.Variable([1.0, -2.0])
            opt = Adam(learning_rate=0.1, decay=0.05)
            for _ in range(6):
                opt.apply_gradients([(tf.constant([0.5, 0.25]), var)])
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf
            from tensorflow.keras.optimizers import Adam
            import keras

            var = tf.Variable([1.0, -2.0])
            opt = Adam(learning_rate=keras.optimizers.schedules.InverseTimeDecay(0.1, decay_steps=1, decay_rate=0.05))
            for _ in range(6):
                opt.apply_gradients([(tf.constant([0.5, 0.25]), var)])
            """,
            at=[(6, 31, "Keras 3 ignores `decay=` (UserWarning) and trains at a constant rate")],
            run="""
            weights = var.numpy()
            """,
            effect=CHANGES,
            note="no lr=: Keras 3 runs it and drops the decay silently (a UserWarning); the fix restores it, so the "
                 "weights change under Keras 3 (to Keras 2's: tests/test_decay_schedule.py)",
        ),
        clean(
            """
            import tensorflow as tf

            opt = tf.keras.optimizers.SGD(learning_rate=0.1, decay=0.0)
            adam = tf.keras.optimizers.Adam(learning_rate=0.1, decay=None)
            wd = tf.keras.optimizers.AdamW(learning_rate=0.1, weight_decay=0.01)
            """,
            note="no decay (0, None); weight_decay is Keras 3's own argument",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def unet(n):
                inputs = tf.keras.Input((n,))
                return tf.keras.Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="zeros")(inputs))

            model = unet(2)
            model.compile("sgd", "mse")
            history = model.fit(np.ones((8, 2)), np.ones((8, 1)), epochs=1, verbose=0,
                                use_multiprocessing=False, workers=1)
            seq = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
            seq.compile("sgd", "mse")
            seq.fit(np.ones((8, 2)), np.ones((8, 1)), verbose=0, workers=2)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            def unet(n):
                inputs = tf.keras.Input((n,))
                return tf.keras.Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="zeros")(inputs))

            model = unet(2)
            model.compile("sgd", "mse")
            history = model.fit(np.ones((8, 2)), np.ones((8, 1)), epochs=1, verbose=0)
            seq = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
            seq.compile("sgd", "mse")
            seq.fit(np.ones((8, 2)), np.ones((8, 1)), verbose=0)
            """,
            at=[(11, 21, "Keras 3 `Model.fit()` takes no `use_multiprocessing=` (TypeError)"),
                (11, 48, "Keras 3 `Model.fit()` takes no `workers=` (TypeError)"),
                (14, 54, "Keras 3 `Sequential.fit()` takes no `workers=` (TypeError)")],
            run="""
            loss = history.history["loss"][0]
            """,
            effect=FIXES_ERROR,
            note="a model made by a factory function the file does not follow: no other library's fit takes "
                 "these keywords (bubbliiiing/unet-tf2 train.py:473); the original under tf_keras, the fix under "
                 "Keras 3: the same loss",
            keras2=True,
            keras2_before=True,
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf
            import keras

            model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            model.evaluate(np.ones((4, 2)), np.ones((4, 1)), callbacks=None)
            bn = tf.keras.layers.BatchNormalization(fused=True)
            dense = keras.layers.Dense(2, batch_size=8)
            labels = keras.utils.to_categorical(y=[0, 1], num_classes=2)


            class Scale(keras.layers.Layer):
                def build(self, shape):
                    self.w = self.add_weight(shape=(1,), synchronization=None)
            """,
            at=[(8, 41, "Keras 3 `layers.BatchNormalization()` takes no `fused=` (ValueError)"),
                (9, 31, "Keras 3 `layers.Dense()` takes no `batch_size=` (ValueError)"),
                (10, 37, "Keras 3 `utils.to_categorical()` takes no `y=` (TypeError); its parameter in that place "
                         "is `x=`"),
                (15, 46, "Keras 3 `layers.Layer.add_weight()` takes no `synchronization=` (TypeError)")],
            note="keywords from the derived migration table, each executed under Keras 3 (a method of a Keras "
                 "object, a constructor, **kwargs handed to a base, a method of self in a Layer subclass); no exact "
                 "rewrite",
        ),
        clean(
            """
            import numpy as np
            import keras
            import tf_keras

            model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
            model.fit(np.ones((4, 2)), np.ones((4, 1)), workers=4, use_multiprocessing=True)
            dense = keras.layers.Dense(2, input_shape=(3,))
            bn = tf_keras.layers.BatchNormalization(fused=True)


            class Trainer(keras.Model):
                def fit(self, x, workers=1):
                    return x

                def run(self):
                    return self.fit(1, workers=2)


            class Store:
                def fit(self, workers=1):
                    return workers

            Store().fit(workers=2)
            """,
            note="tf_keras keeps them; input_shape= only warns (UserWarning, executed: not a breakage); a subclass "
                 "defining fit; a class of the file's own",
        ),
        flagged(
            """
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam(lr=0.01)
            """,
            fixed="""
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam(learning_rate=0.01)
            """,
            at=[(3, 32, "Keras 3 optimizers raise ValueError on `lr=`")],
            run=_OPTIMIZER_RUN,
            effect=FIXES_ERROR,
        ),
        flagged(
            """
            from keras import optimizers

            opt = optimizers.SGD(lr=0.1, momentum=0.9)
            """,
            fixed="""
            from keras import optimizers

            opt = optimizers.SGD(learning_rate=0.1, momentum=0.9)
            """,
            at=[(3, 22, "Keras 3 optimizers raise ValueError on `lr=`")],
            run=_OPTIMIZER_RUN,
            effect=FIXES_ERROR,
            note="standalone keras is Keras 3",
        ),
        flagged(
            """
            import tensorflow as tf

            opt = tf.keras.optimizers.SGD(lr=0.2, momentum=0.9, decay=0.01)
            """,
            fixed="""
            import tensorflow as tf
            import keras

            opt = tf.keras.optimizers.SGD(learning_rate=keras.optimizers.schedules.InverseTimeDecay(0.2, decay_steps=1, decay_rate=0.01), momentum=0.9)
            """,
            at=[(3, 31, "Keras 3 optimizers raise ValueError on `lr=`: use `learning_rate=`; Keras 3 ignores "
                        "`decay=` (UserWarning)")],
            run=_OPTIMIZER_RUN,
            effect=FIXES_ERROR,
            note="decay= is ignored by Keras 3 once the call runs: rewritten as the schedule Keras 2 applied, unsafe "
                 "(real code: SGD(lr=0.2, momentum=0.9, decay=0.01))",
        ),
        flagged(
            """
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam(lr=0.01, decay=0.0, clipnorm=1.0)
            """,
            fixed="""
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam(learning_rate=0.01, decay=0.0, clipnorm=1.0)
            """,
            at=[(3, 32, "Keras 3 optimizers raise ValueError on `lr=`: use `learning_rate=`")],
            run=_OPTIMIZER_RUN,
            effect=FIXES_ERROR,
            note="decay=0.0 decays nothing in Keras 2 either, clipnorm= survives: the rename stays safe",
        ),
        flagged(
            """
            import tf_keras

            opt = tf_keras.optimizers.SGD(lr=0.1)
            """,
            fixed="""
            import tf_keras

            opt = tf_keras.optimizers.SGD(learning_rate=0.1)
            """,
            at=[(3, 31, "tf_keras optimizers ignore `lr=`")],
            run=_OPTIMIZER_RUN,
            effect=CHANGES,
            note="tf_keras 2.21 ignores lr: learning_rate 0.01 (the default) before, 0.1 after",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
            model.compile("sgd", "mse", experimental_compile=True)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
            model.compile("sgd", "mse", jit_compile=True)
            """,
            at=[(5, 29, "`compile()` has no `experimental_compile=` (TypeError)")],
            run="y = model.predict(np.ones((2, 2), np.float32), verbose=0)",
            effect=FIXES_ERROR,
        ),
        flagged(
            """
            import os
            import tempfile
            import numpy as np
            import tensorflow as tf

            def build():
                return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])

            def roundtrip(folder):
                model = build()
                model.save(os.path.join(folder, "m.h5"), save_format="h5")
                model.save(folder + "/m.keras", save_format="tf")
                path = os.path.join(folder, "m.keras")
                tf.keras.models.save_model(model, "m2.keras", save_format="keras")
                return tf.keras.models.load_model(path).get_weights()
            """,
            fixed="""
            import os
            import tempfile
            import numpy as np
            import tensorflow as tf

            def build():
                return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])

            def roundtrip(folder):
                model = build()
                model.save(os.path.join(folder, "m.h5"))
                model.save(folder + "/m.keras")
                path = os.path.join(folder, "m.keras")
                tf.keras.models.save_model(model, "m2.keras")
                return tf.keras.models.load_model(path).get_weights()
            """,
            at=[
                (11, 46, "Keras 3 ignores `save_format=`: the `.h5` suffix decides the format"),
                (12, 37, "Keras 3 ignores `save_format=`: the `.keras` suffix decides the format"),
                (14, 51, "Keras 3 ignores `save_format=`: the `.keras` suffix decides the format"),
            ],
            run="""
            with tempfile.TemporaryDirectory() as _folder:
                _old = os.getcwd()
                os.chdir(_folder)
                try:
                    weights = roundtrip(_folder)
                finally:
                    os.chdir(_old)
            """,
            note="paths known to end in .h5/.keras (literal, os.path.join, +): save_format is ignored, dropped (safe)",
            keras2=True,
        ),
        flagged(
            """
            import os
            import pathlib
            import tempfile
            import tensorflow as tf

            def save_twice(folder):
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
                filepath = str(pathlib.Path(folder) / "test.h5")
                model.save(filepath, save_format="h5")
                filepath = str(pathlib.Path(folder) / "test.keras")
                model.save(filepath, save_format="keras")
                return tf.keras.models.load_model(filepath).get_weights()
            """,
            fixed="""
            import os
            import pathlib
            import tempfile
            import tensorflow as tf

            def save_twice(folder):
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
                filepath = str(pathlib.Path(folder) / "test.h5")
                model.save(filepath)
                filepath = str(pathlib.Path(folder) / "test.keras")
                model.save(filepath)
                return tf.keras.models.load_model(filepath).get_weights()
            """,
            at=[
                (9, 26, "Keras 3 ignores `save_format=`: the `.h5` suffix decides the format"),
                (11, 26, "Keras 3 ignores `save_format=`: the `.keras` suffix decides the format"),
            ],
            run="""
            with tempfile.TemporaryDirectory() as _folder:
                weights = save_twice(_folder)
            """,
            note="a name rebound: the binding that reaches each save decides (str(), pathlib /); tensorflow/addons "
                 "normalizations_test",
            keras2=True,
        ),
        flagged(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
            model.save("saved/model", save_format="tf")
            model.save_weights("weights.ckpt", save_format="tf")
            layer = tf.keras.layers.Dense(1, weights=[w, b])
            """,
            at=[
                (4, 27, "Keras 3 raises ValueError on `save_format=` unless the path ends in `.keras` or `.h5`"),
                (5, 36, "Keras 3 `save_weights()` has no `save_format=` (TypeError)"),
                (6, 34, "Keras 3 layers take no `weights=` (ValueError)"),
            ],
            note="no exact rewrite: the file name or format changes, or the weights are set after build",
        ),
        clean(
            """
            import tf_keras
            from tf_keras.optimizers import legacy

            opt = legacy.Adam(lr=0.01)
            model = tf_keras.Sequential([tf_keras.layers.Dense(1, weights=[w, b])])
            model.save("saved/model", save_format="tf")
            model.save_weights("weights.ckpt", save_format="tf")
            """,
            note="tf_keras: the legacy optimizers honour lr; weights= and save_format= are accepted",
        ),
        clean(
            """
            import tensorflow as tf

            emb = tf.keras.layers.Embedding(100, 8, weights=[matrix], trainable=False)
            opt = tf.keras.optimizers.Adam(learning_rate=0.01)
            model = tf.keras.Sequential([emb])
            model.save("saved/model.keras", save_format=None)
            """,
            note="Keras 3 Embedding still takes weights=; a falsy save_format is ignored",
        ),
        flagged(
            """
            import os
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam(lr=0.01)
            """,
            fixed="""
            import os
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam(learning_rate=0.01)
            """,
            at=[(5, 32, "tf_keras optimizers ignore `lr=`")],
            run=_OPTIMIZER_RUN,
            effect=CHANGES,
            note="the file sets TF_USE_LEGACY_KERAS before importing tensorflow, so tf.keras is tf_keras there "
                 "(semantic.target.file_target): run under TF 2.21, it trains at 0.001 (the default) before, 0.01 after",
        ),
        clean(
            """
            import os
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            import tensorflow as tf

            layer = tf.keras.layers.Dense(1, weights=[w, b])
            """,
            note="the file sets TF_USE_LEGACY_KERAS: tf.keras is tf_keras, whose layers take weights=",
        ),
        clean(
            """
            import re
            import tensorflow as tf

            class Store:
                def save(self, path, save_format=None):
                    pass

            store = Store()
            store.save("out", save_format="tf")
            pattern = re.compile("x")
            """,
            note="save() of an object the file defines, not a Keras model",
        ),
        clean(
            """
            import tensorflow as tf

            if hasattr(tf.keras.optimizers, "legacy"):
                opt = tf.keras.optimizers.legacy.SGD(learning_rate=2.0)
            else:
                opt = tf.keras.optimizers.SGD(lr=2.0)
            sgd = tf.keras.optimizers.SGD(lr=1.0) if not hasattr(tf.keras.optimizers, "legacy") else None


            class SaveTest(tf.test.TestCase):
                def test_save_format(self):
                    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                    with self.assertRaisesRegex(ValueError, "argument is deprecated"):
                        model.save("mymodel", save_format="keras")
            """,
            note="Keras 3 has tf.keras.optimizers.legacy, so the else branch is TF <= 2.10 code (tensorflow/addons "
                 "tests); a test that expects the error (keras saving_lib_test)",
        ),
        clean(
            """
            import tensorflow as tf

            tf_version = tuple(map(int, tf.__version__.split(".")[:2]))
            if tf_version < (2, 11):
                opt = tf.keras.optimizers.SGD(lr=0.1, decay=0.01)
            else:
                opt = tf.keras.optimizers.SGD(learning_rate=0.1)
            sgd = tf.keras.optimizers.SGD(lr=0.1) if tf.__version__.startswith("1.") else None
            try:
                adam = tf.keras.optimizers.Adam(learning_rate=0.1)
            except (TypeError, ValueError):
                adam = tf.keras.optimizers.Adam(lr=0.1)
            """,
            note="branches of TensorFlow version comparisons that do not run under TF 2.16+; an except fallback",
        ),
    ]
