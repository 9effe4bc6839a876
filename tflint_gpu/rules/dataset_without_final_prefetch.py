from __future__ import annotations


import libcst as cst

from tflint_gpu.autofix.dataset_chain import append
from tflint_gpu.semantic.api import DATASET_FACTORIES_PREFIX, argument
from tflint_gpu.semantic.datasets import Chain, chains, continued, is_stage, method
from tflint_gpu.rules.base import Fix, Rule, Safety, clean, flagged

_KERAS_CONSUMERS = frozenset({"fit", "evaluate", "predict"})

# The first TensorFlow that appends a final prefetch by itself (`inject_prefetch`, "If None,
# defaults to True"): documented so in the r2.12 API docs and later, "defaults to False" in
# r2.10; measured (benchmarks/versions/) from TF 2.12 on. TF 2.11 was not established.
INJECT_PREFETCH_TF = (2, 12)
_BUILTIN_CONSUMERS = frozenset({"iter", "enumerate", "list"})


class DatasetWithoutFinalPrefetch(Rule):
    """A tf.data pipeline consumed with no `prefetch` anywhere in it (a hint).

    ## What it does
    Finds a `tf.data` pipeline built in view (from a `tf.data` constructor,
    across `ds = ds.map(...)` statements) that is consumed in the same scope
    (iterated by `for`, `iter()`/`enumerate()`/`list()`, or passed to a Keras
    `fit`/`evaluate`/`predict`) and has no `prefetch` stage at all.

    A pipeline built over several statements is reported once, at its last
    stage: a stage whose dataset is taken further later (`ds = ds.batch(2)`
    after `ds = ds.map(f)`, also past a loop or an `if`, or `other =
    ds.batch(2)`) is not an end, even when it is consumed on the way.

    This rule is **off by default**: select it with `--select TFG303`. The
    target (`target-version`, or the project's pins) does not change that,
    as Ruff's `target-version` never selects a rule: it changes what a
    selected rule says. For a target older than TF 2.12 the message says
    that tf.data adds no prefetch itself there; for TF 2.12 and newer (and
    the default target, the newest release) it says the finding is a hint.

    ## Why is this bad?
    Without a final `prefetch`, producing the next element and consuming the
    current one do not overlap. Since TF 2.12, tf.data injects a final
    prefetch itself after a sequential last stage when autotuning is on
    (`tf.data.Options().experimental_optimization.inject_prefetch`: "If None,
    defaults to True" in the r2.12 API docs and later; TF 2.12 to 2.21 leave
    it `None`). The r2.10 docs say "If None, defaults to False" (the option
    first appears there; TF 2.11 was not established: it has no wheel for
    this Python and its docs were not found). So for TF 2.12+ with default
    options this is a hint about being explicit, not a slowdown; it matters
    when the injection or autotuning is turned off (through `with_options`,
    possibly in another module), for readers who expect the pipeline to say
    what it does, and for a project that targets TF 2.11 or older, where
    nothing is injected. A misplaced prefetch is TFG302.

    ## Example
    ```python
    ds = tf.data.Dataset.from_tensor_slices(files).map(load).batch(32)
    model.fit(ds, epochs=3)
    ```

    Use instead:
    ```python
    ds = tf.data.Dataset.from_tensor_slices(files).map(load).batch(32).prefetch(tf.data.AUTOTUNE)
    model.fit(ds, epochs=3)
    ```

    ## Fix safety
    Safe: `prefetch` does not change the elements or their order. It appends
    `.prefetch(tf.data.AUTOTUNE)` (`tf.data.experimental.AUTOTUNE` where the target is
    older than TF 2.4) to the last stage only, never after an
    intermediate one (a prefetch followed by more stages is TFG302's
    finding); in a parenthesised chain written one call per line, on a line
    of its own inside the parentheses. No fix where no name can spell
    `tensorflow` at that place. In a notebook whose pipeline is built across
    cells the fix edits only the cell of the last stage; as for every rule, a
    fix whose edits would not all lie in one cell is not offered (the finding
    stays), and the fixed lines go back to the cells the edits put them in.

    ## Measured effect
    TF 2.21, CPU, 40 elements, a map doing 10 ms of work per element and a
    consumer doing 10 ms per element (best of 3): `map(f)` 439 ms with default
    options, the same as `map(f).prefetch(AUTOTUNE)` (437 ms), because tf.data
    appends its own prefetch; with `inject_prefetch = False`, `map(f)` takes
    846 ms and `map(f).prefetch(AUTOTUNE)` 435 ms. The example pair
    (`tflint-gpu verify --rule TFG303`) uses default options: expect a ratio
    near 1.

    Per version (`benchmarks/versions/`, TF 2.12.0, 2.13.1, 2.14.1, 2.15.1,
    2.16.2 and 2.21 CPU wheels, Python 3.11, on the 2-core machine shared with
    other jobs, load average 16 to 30; the table is in
    `benchmarks/versions/README.md`): every one leaves `inject_prefetch`
    None, documents "If None, defaults to True", and runs `map(f)` followed
    by a `Prefetch` it added (`assert_next(["Map", "Prefetch"])`, which
    fails with `inject_prefetch = False`). The timings on that loaded machine
    (100 elements, best of 5) mostly show the overlap (TF 2.21: 1.23 s by
    default, 1.33 s with an explicit prefetch, 4.49 s with the injection
    off; TF 2.14 to 2.16 alike; TF 2.12 again at a lower load: 1.23 s,
    1.27 s, 2.41 s), but the first runs of TF 2.12 and 2.13 were as slow by
    default as with the injection off (2.13: 2.29 s, 1.25 s, 2.31 s), while
    a fresh 200-element pass on 2.13 (`prefetch_long.py`) overlapped (5.50
    s, 6.12 s, 13.59 s): the load, not the version. TF 2.11 and older do
    not install here: not measured.
    """

    code = "TFG303"
    name = "dataset-without-final-prefetch"
    message = "tf.data pipeline consumed without a final `prefetch`"
    needs = (("tf.data", "Dataset", "dataset_from"), ("for ", "fit(", "evaluate(", "predict(", "iter(",
                                                      "enumerate(", "list("))
    fix_safety = Safety.SAFE
    default_enabled = False

    def visit_Module(self, node: cst.Module, ctx) -> None:
        consumed = self._consumed(ctx)
        for chain in chains(ctx):
            if continued(chain, ctx) or not self._source_in_view(chain, ctx):
                continue  # goes on in another statement, or starts from a value we cannot see
            if any(method(stage) == "prefetch" for stage in chain.all_stages()):
                continue
            if id(chain.outermost) not in consumed:
                continue
            outermost = chain.outermost
            spelled = ctx.module_expr("tensorflow", "data.AUTOTUNE", scope=chain.scope)
            fix = None
            if spelled is not None:
                func, imports = spelled
                fixed = append(outermost, "prefetch", [cst.Arg(func)])
                fix = Fix("Append `.prefetch(tf.data.AUTOTUNE)`", Safety.SAFE, {outermost: fixed}, imports)
            message = "tf.data pipeline consumed without a final `prefetch`" + _what_target_does(ctx)
            ctx.report(outermost.func.attr, message, fix)

    @staticmethod
    def _source_in_view(chain: Chain, ctx) -> bool:
        """Does the pipeline start from a tf.data constructor in this scope, with no
        prefetch on the way (``ds = tf.data.X(...)``, then ``for x in ds.take(3)``)?"""
        origin = chain.origin()
        if not isinstance(origin, cst.Name):
            return _constructor(origin, chain.scope, ctx)
        return _name_from_constructor(origin, chain.scope, ctx, set())

    @staticmethod
    def _consumed(ctx) -> set:
        """ids of the expressions a pipeline ends in that are iterated or trained on here."""
        used = []
        for node, scope in ctx.model.index.get("For", ()):
            used.append((node.iter, scope))
        for call, scope in ctx.model.index.get("Call", ()):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in _KERAS_CONSUMERS:
                used.append((argument(call, 0, "x"), scope))
            elif isinstance(func, cst.Name) and func.value in _BUILTIN_CONSUMERS and ctx.qualname(func, scope) is None:
                used.append((argument(call, 0, "iterable"), scope))
        result = set()
        for expr, scope in used:
            if isinstance(expr, cst.Call):
                result.add(id(expr))
            elif isinstance(expr, cst.Name):
                for value in _bindings(expr, scope, ctx):
                    if isinstance(value, cst.BaseExpression):
                        result.add(id(value))
        return result

    cases = [
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).map(lambda x: x * 2).batch(10)
            for batch in ds:
                print(batch)
            """,
            fixed="""
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).map(lambda x: x * 2).batch(10).prefetch(tf.data.AUTOTUNE)
            for batch in ds:
                print(batch)
            """,
            at=[(3, 54, 'tf.data pipeline consumed')],
            ),
        flagged(
            """
            import tensorflow as tf

            class Trainer:
                def fit(self, ds, epochs):
                    return [list(ds.as_numpy_iterator()) for _ in range(epochs)]

            def train(model, n):
                ds = tf.data.Dataset.range(n)
                ds = ds.map(lambda v: v * 2)
                ds = ds.batch(4)
                return model.fit(ds, epochs=2)
            """,
            fixed="""
            import tensorflow as tf

            class Trainer:
                def fit(self, ds, epochs):
                    return [list(ds.as_numpy_iterator()) for _ in range(epochs)]

            def train(model, n):
                ds = tf.data.Dataset.range(n)
                ds = ds.map(lambda v: v * 2)
                ds = ds.batch(4).prefetch(tf.data.AUTOTUNE)
                return model.fit(ds, epochs=2)
            """,
            at=[(10, 13, 'tf.data pipeline consumed')],
            run="history = train(Trainer(), 10)",
            note="a pipeline split across statements, consumed by a Keras-style fit: reported once, at its last stage",
        ),
        flagged(
            """
            from tensorflow.data import Dataset

            class Model:
                def evaluate(self, ds):
                    return list(ds.as_numpy_iterator())

            x = [1.0, 2.0, 3.0]
            result = Model().evaluate(Dataset.from_tensor_slices(x).batch(2))
            """,
            fixed="""
            from tensorflow.data import Dataset
            import tensorflow as tf

            class Model:
                def evaluate(self, ds):
                    return list(ds.as_numpy_iterator())

            x = [1.0, 2.0, 3.0]
            result = Model().evaluate(Dataset.from_tensor_slices(x).batch(2).prefetch(tf.data.AUTOTUNE))
            """,
            at=[(8, 57, 'tf.data pipeline consumed')],
            note="consumed in place; the fix adds the import it needs",
        ),
        flagged(
            """
            from tensorflow import data as tf_data

            def load():
                ds = tf_data.Dataset.range(10).map(lambda x: x * 2)
                return list(ds)
            """,
            fixed="""
            from tensorflow import data as tf_data

            def load():
                ds = tf_data.Dataset.range(10).map(lambda x: x * 2).prefetch(tf_data.AUTOTUNE)
                return list(ds)
            """,
            at=[(4, 36, 'tf.data pipeline consumed')],
            run="values = load()",
            note="the file names tf.data as `tf_data`: the fix uses it instead of adding an import",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).batch(10).prefetch(tf.data.AUTOTUNE)
            for batch in ds:
                pass
            """,
            note="already prefetched",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).prefetch(2).batch(10)
            for batch in ds:
                pass
            """,
            note="a misplaced prefetch is TFG302's finding",
        ),
        clean(
            """
            import tensorflow as tf

            def make(files):
                return tf.data.TFRecordDataset(files).map(parse).batch(32)
            """,
            note="returned: the caller may prefetch",
        ),
        clean(
            """
            import tensorflow as tf

            def show(ds):
                for x in ds.take(3):
                    print(x)
            """,
            note="a pipeline that starts from a parameter: it may be prefetched upstream",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).batch(2)
            ds = ds.prefetch(1)
            for x in ds:
                pass
            """,
            note="prefetched in a later statement",
        ),
        clean(
            """
            import pandas as pd
            import tensorflow as tf

            for row in pd.Series([1, 2]).map(str):
                pass
            """,
            note="not a dataset",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10).map(lambda x: x + 1).prefetch(1)
            for x in ds.take(3):
                pass
            """,
            note="the source it continues was prefetched",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10)
            for x in ds.map(lambda v: v * 2).take(3):
                pass
            """,
            fixed="""
            import tensorflow as tf

            ds = tf.data.Dataset.range(10)
            for x in ds.map(lambda v: v * 2).take(3).prefetch(tf.data.AUTOTUNE):
                pass
            """,
            at=[(4, 34, 'tf.data pipeline consumed')],
            note="a constructor bound to a name, continued where it is consumed",
        ),
        # -- added with "fixes you can trust" ------------------------------
        flagged(
            """
            import tensorflow as tf

            def make(flag):
                ds = tf.data.Dataset.range(9)
                ds = ds.map(lambda v: v + 1)
                if flag:
                    ds = ds.filter(lambda v: v > 2)
                ds = ds.batch(2)
                batches = []
                for x in ds:
                    batches.append(x)
                return batches
            """,
            fixed="""
            import tensorflow as tf

            def make(flag):
                ds = tf.data.Dataset.range(9)
                ds = ds.map(lambda v: v + 1)
                if flag:
                    ds = ds.filter(lambda v: v > 2)
                ds = ds.batch(2).prefetch(tf.data.AUTOTUNE)
                batches = []
                for x in ds:
                    batches.append(x)
                return batches
            """,
            at=[(8, 13, 'tf.data pipeline consumed')],
            run="out = [make(True), make(False)]",
            note="an `if` between the stages: only the last stage is reported and fixed (a prefetch after the "
                 "map or the filter would be mid-pipeline, TFG302)",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(9)
            ds = ds.map(lambda v: v * 2)
            for x in ds:
                pass
            ds = ds.batch(2)
            batches = list(ds)
            """,
            fixed="""
            import tensorflow as tf

            ds = tf.data.Dataset.range(9)
            ds = ds.map(lambda v: v * 2)
            for x in ds:
                pass
            ds = ds.batch(2).prefetch(tf.data.AUTOTUNE)
            batches = list(ds)
            """,
            at=[(7, 9, 'tf.data pipeline consumed')],
            note="consumed twice, continued after the first loop: reported once, at the last stage",
        ),
        flagged(
            """
            import tensorflow as tf

            raw = tf.data.Dataset.range(6).map(lambda v: v * 3)
            ds = raw.batch(2)
            for x in ds:
                pass
            total = sum(int(v) for v in iter(raw))
            """,
            fixed="""
            import tensorflow as tf

            raw = tf.data.Dataset.range(6).map(lambda v: v * 3)
            ds = raw.batch(2).prefetch(tf.data.AUTOTUNE)
            for x in ds:
                pass
            total = sum(int(v) for v in iter(raw))
            """,
            at=[(4, 10, 'tf.data pipeline consumed')],
            note="`raw` goes on under another name: the prefetch goes after the batch, not after the map",
        ),
        flagged(
            """
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))

            def upscale(v):
                return tf.image.resize(v, (8, 8))

            ds = tf.data.Dataset.from_tensor_slices(images).cache().map(upscale)
            for batch in ds:
                pass
            """,
            fixed="""
            import tensorflow as tf

            images = tf.reshape(tf.range(96, dtype=tf.float32), (2, 4, 4, 3))

            def upscale(v):
                return tf.image.resize(v, (8, 8))

            ds = tf.data.Dataset.from_tensor_slices(images).cache().map(upscale).prefetch(tf.data.AUTOTUNE)
            for batch in ds:
                pass
            """,
            at=[(8, 57, 'tf.data pipeline consumed')],
            run="epochs = [list(d.as_numpy_iterator()) for d in (ds, ds)]",
            note="with TFG301 (an expensive map after cache): all rules' fixes together end in "
                 "map(...).cache().prefetch(tf.data.AUTOTUNE)",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = (
                tf.data.Dataset.range(6)
                .map(lambda v: v + 1)  # shift
                .batch(2)  # pairs
            )
            for x in ds:
                pass
            """,
            fixed="""
            import tensorflow as tf

            ds = (
                tf.data.Dataset.range(6)
                .map(lambda v: v + 1)  # shift
                .batch(2)  # pairs
                .prefetch(tf.data.AUTOTUNE)
            )
            for x in ds:
                pass
            """,
            at=[(6, 6, 'tf.data pipeline consumed')],
            note="one call per line: the prefetch gets a line of its own inside the parentheses",
        ),

        # -- added with "one semantic model in the engine" -------------------
        clean(
            """
            import tensorflow as tf

            def train(model, ds: tf.data.Dataset):
                return model.fit(ds.map(lambda x: x * 2).batch(2))
            """,
            note="a dataset parameter: it may be prefetched upstream",
        ),
        clean(
            """
            import tensorflow as tf

            def load(n):
                return tf.data.Dataset.range(n).prefetch(2)

            for batch in load(10).batch(2):
                pass
            """,
            note="a dataset a function returns: it may prefetch (so do tfds.load and the Keras utilities)",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).map(lambda x: x * 2).batch(10)
            for x in ds:
                pass

            ds = tf.data.Dataset.range(5)
            ds = ds.batch(2).prefetch(1)
            for x in ds:
                pass
            """,
            fixed="""
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).map(lambda x: x * 2).batch(10).prefetch(tf.data.AUTOTUNE)
            for x in ds:
                pass

            ds = tf.data.Dataset.range(5)
            ds = ds.batch(2).prefetch(1)
            for x in ds:
                pass
            """,
            at=[(3, 54, "tf.data pipeline consumed without a final `prefetch`")],
            note="a notebook rebuilding `ds` in a later cell: the first cell's pipeline ends where it is consumed, "
                 "the later `ds` does not continue it",
        ),
    ]


def _what_target_does(ctx) -> str:
    """What the target's tf.data does about a final prefetch, for the message."""
    tf = ctx.target.tf
    if ctx.target.at_least(INJECT_PREFETCH_TF):
        return ": a hint, tf.data appends one itself with default options (TF 2.12+)"
    does = "may not append" if tf == (2, 11) else "does not append"
    return (f": with TF {tf[0]}.{tf[1]} (the target) tf.data {does} one itself (it does by default from TF 2.12), "
            f"so after a sequential last stage the next element is made only when it is asked for")


def _constructor(node: cst.BaseExpression, scope, ctx) -> bool:
    """A tf.data constructor call. Not a Keras utility or ``tfds.load`` (they end
    in a prefetch of their own) or a function's result (it may prefetch)."""
    qualname = ctx.qualname(node.func, scope) if isinstance(node, cst.Call) else None
    return qualname is not None and qualname.startswith(DATASET_FACTORIES_PREFIX)


def _name_from_constructor(name: cst.Name, scope, ctx, seen: set) -> bool:
    """Do all the values reaching ``name`` come from a tf.data constructor here,
    stage by stage (``ds = ds.map(...)`` followed back), with no prefetch?"""
    if id(name) in seen:
        return True  # already followed (or round a loop): the other values decide
    seen.add(id(name))
    values = _bindings(name, scope, ctx)
    if not values:
        return False
    for value in values:
        if not isinstance(value, cst.BaseExpression):
            return False  # a parameter, a loop variable, a with-target
        node = value
        while is_stage(node):
            if method(node) == "prefetch":
                return False
            node = node.func.value
        if isinstance(node, cst.Name) and node.value == name.value:
            if not _name_from_constructor(node, scope, ctx, seen):  # `ds = ds.map(...)`
                return False
        elif not _constructor(node, scope, ctx):
            return False
    return True


def _bindings(name: cst.Name, scope, ctx) -> list:
    """The values bound to ``name`` that reach it."""
    found = ctx.assigned(name.value, at=name, scope=scope)
    return found.values if found is not None else []
