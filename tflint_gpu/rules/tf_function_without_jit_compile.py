from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import EAGER_WRAPPERS, KERAS_GRAPH_METHODS, argument, keyword
from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.rules.base import Rule, clean, flagged

# Calls XLA cannot compile (checked under TF 2.21: "Detected unsupported
# operations when trying to compile graph ... No registered 'X' OpKernel for
# XLA_CPU_JIT devices"), by qualified name ...
_NOT_XLA = EAGER_WRAPPERS | {
    "tensorflow.print",  # StringFormat
    "tensorflow.as_string",
    "tensorflow.histogram_fixed_width",  # HistogramFixedWidth
    "tensorflow.RaggedTensor",
    # Ragged and sparse values: many of their ops have no XLA kernel (RaggedTensorToTensor,
    # SparseReduceSum, SparseTensorDenseMatMul, SparseAdd), some compile (reduce_max, to_dense).
    "tensorflow.RaggedTensorSpec",
    "tensorflow.SparseTensor",
    "tensorflow.SparseTensorSpec",
} | {
    # Compiled by XLA into nothing (TF 2.21, CPU): they raise InvalidArgumentError
    # without jit_compile and let the value through with it.
    "tensorflow.Assert",
    "tensorflow.debugging.Assert",
    "tensorflow.debugging.check_numerics",
    "tensorflow.check_numerics",
    "tensorflow.verify_tensor_all_finite",
}
# ... and by prefix.
_NOT_XLA_PREFIXES = (
    "tensorflow.strings.",
    "tensorflow.io.",  # file ops, decode/encode, parse_example: string tensors
    "tensorflow.data.",  # TensorSliceDataset, ScanDataset, ...
    "tensorflow.summary.",
    "tensorflow.lookup.",  # LookupTableFindV2
    "tensorflow.ragged.",  # RaggedTensorToTensor
    "tensorflow.RaggedTensor.",
    "tensorflow.audio.",
    "tensorflow.image.decode_",  # DecodePng
    "tensorflow.image.encode_",
    "tensorflow.sparse.",  # but tf.sparse.to_dense (_XLA_SPARSE)
    "tensorflow.SparseTensor.",
    "tensorflow.debugging.assert_",  # dropped by XLA, as tf.Assert
    "tensorflow.assert_",
)
# Sparse ops XLA compiles (TF 2.21, CPU; reshape, transpose, reorder, concat, slice, reduce_max,
# reduce_sum, softmax, maximum, add, sparse_dense_matmul, fill_empty_rows and `st * 2` do not).
_XLA_SPARSE = frozenset({"tensorflow.sparse.to_dense"})
# Calls making values a compiled function cannot take as inputs (ragged, sparse, strings).
_INPUT_PREFIXES = (
    "tensorflow.ragged.", "tensorflow.RaggedTensor", "tensorflow.sparse.", "tensorflow.SparseTensor",
    "tensorflow.as_string", "tensorflow.io.read_file",
)
# Iterator methods: IteratorGetNext has no XLA kernel.
_ITERATOR_METHODS = frozenset({"get_next", "get_next_as_optional"})
_STRING_DTYPES = frozenset({"tensorflow.string", "tensorflow.dtypes.string"})
# Positional string literals that are op attributes, not string tensors.
_ATTRIBUTE_STRINGS = frozenset(
    {
        "float16", "bfloat16", "float32", "float64", "half", "float", "double",
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "bool", "complex64", "complex128",
        "SAME", "VALID", "CONSTANT", "REFLECT", "SYMMETRIC",
        "NHWC", "NCHW", "NWC", "NCW", "NDHWC", "NCDHW",
    }
)
# Ops whose first positional argument is a string attribute.
_STRING_FIRST = frozenset({"tensorflow.einsum", "tensorflow.linalg.einsum", "tensorflow.name_scope"})


class TfFunctionWithoutJitCompile(Rule):
    """A `tf.function` that sets no `jit_compile`, around code that XLA could compile.

    ## What it does
    Finds `tf.function`, as a decorator (`@tf.function`, `@tf.function(...)`)
    or a wrapper (`g = tf.function(f)`), that passes neither `jit_compile` nor
    its deprecated alias `experimental_compile`, when nothing in the body, in
    functions and lambdas nested in it, or in the functions of the same module
    it calls (transitively) is known to be rejected by XLA. The calls followed
    include those through the module's own objects: methods of `self` and of
    attributes whose class the file defines
    (`self.decoder.cell.get_initial_state(x)`, through every `self.x =
    Cls()` of the class, its bases and subclasses, overrides in subclasses
    included), a layer of the
    file called (its `call`), `super().method()`, a function held in an
    attribute, a method handed on (`tf.while_loop(c, self.body, ...)`), and,
    on an object the file cannot tell (a parameter), every method of that
    name the module defines. A call to a method that no class of the file's
    hierarchy defines, on an object of one of its classes that has no library
    base (set by `setattr`, say), cannot be followed: not flagged.

    Off by default: select it with `--select TFG401`. It is an optimisation
    suggestion, not a bug: the speed-up depends on the body (none for
    matmul-bound code on CPU), compiling has a cost per new input shape, and
    the fix is unsafe. Run it when tuning, then benchmark what it suggests.

    Not flagged: `jit_compile=` given (`True` or `False`); `**kwargs` passed to
    `tf.function`; a `tf.function` on a Keras `call`/`train_step`/`test_step`/
    `predict_step` (Keras wraps those in its own `tf.function`, and whether
    they run under XLA is `compile(jit_compile=...)`'s setting: Keras 3's
    default `"auto"` uses XLA on a GPU, Keras 2's default `None` never does,
    so for a Keras 2 target the place to ask for XLA is
    `compile(jit_compile=True)`, not the method); functions traced only because `tf.data` or Keras call
    them: a `tf.function` whose every use in its file (`semantic/uses.py`) is
    given to a `Dataset` transformation (`ds.map(f)`, `filter`,
    `interleave`..., also on a dataset that every same-module caller hands in
    as a parameter) or to `keras.layers.Lambda(f)`, a call from a function or
    a lambda that is itself used only so (`ds.map(lambda x, y: (f(x), y))`, a
    mapped function calling it), or a function of the file handed to a
    same-module function whose parameter is used only so (`make(map_fn=f)`
    doing `ds.map(map_fn)`); for `g = tf.function(f)`, the uses of `g`. Such a
    function runs in tf.data's host threads, or in the step Keras compiles
    itself; the suggestion is for code of your own that runs on the device
    (`jit_compile=True` would still take effect there: TF 2.21 compiles a
    mapped function with XLA, and one with string ops then fails, and a
    Keras `Lambda` of an asserting function stops raising in `predict`).
    It is flagged when it is also called or used any other way (called from
    eager code: `f(x)` next to `ds.map(f)`), when its file does not use it at
    all, and always for a method. Nor flagged: a `tf.function` stacked over
    another decorator (`@tf.function` then `@xla.compile_in_graph_mode`): it
    traces what that decorator returns, not the body the linter reads
    (`staticmethod`, `classmethod`, `functools.wraps`, TensorFlow's own
    decorators such as `tf.custom_gradient`, and Keras's
    `register_keras_serializable`, which returns the function itself, hand on
    the body and are read through); a `tf.function` a call site of the file expects to raise a
    TensorFlow runtime error (`with pytest.raises(tf.errors.InvalidArgumentError):`,
    `self.assertRaises(...)`, `self.assertRaisesOpError(...)`, `try: ...
    except tf.errors.InvalidArgumentError:`), since the check that raises may
    be in a module the linter does not read (tensorflow/addons'
    `_check_batch_beam` runs `tf.Assert`) and XLA drops assertions (below).
    Also not flagged when the body (or what it calls here) uses
    `tf.py_function`/`tf.numpy_function`, `tf.print`, `tf.strings.*`,
    `tf.io.*`, `tf.data`, `tf.summary.*`, `tf.lookup.*`, ragged tensors,
    sparse tensors (`tf.sparse.*` but `tf.sparse.to_dense`,
    `tf.SparseTensor`), `tf.image.decode_*`,
    an assertion (`tf.Assert`, `tf.debugging.assert_*` and the `tf.assert_*`
    aliases, `tf.debugging.check_numerics`, and an `assert` statement when
    `experimental_autograph_options` holds `Feature.ASSERT_STATEMENTS` or
    `Feature.ALL`, which make AutoGraph turn it into `tf.Assert`; by default
    TF 2.21 does not convert `assert`), string tensors (`tf.constant("a")`,
    `tf.string`, a comparison with a string literal), iterates a parameter or a dataset
    (`for x in ds`, `iter`, `next`, `iterator.get_next()`), calls a method of
    an object made by one of these (`self.table.lookup(x)` with `self.table =
    tf.lookup.StaticHashTable(...)`), or builds a
    `tf.TensorArray(dynamic_size=True)`: under XLA the last one compiles and
    silently returns an empty result (TF 2.21, CPU: `[2., 4., 6.]` without
    XLA, `[]` with it, also when built in
    `self.decoder.cell.get_initial_state(x)`; tensorflow/tensorflow#119375,
    #127528).
    `iterator.get_next()` fails to compile (`InvalidArgumentError: Detected
    unsupported operations ... IteratorGetNext`), and so does a lookup
    table's `lookup`, with string keys (`_Arg` with `T=DT_STRING`) or int64
    keys (`LookupTableFindV2`). Nor when the function is traced with ragged,
    sparse or string inputs: a `tf.RaggedTensorSpec`, `tf.SparseTensorSpec`
    or `tf.TensorSpec(..., tf.string)` in its `input_signature` or in a
    `f.get_concrete_function(...)` of the file, or a call of the file passing
    one (`f(tf.ragged.constant(...))`, `f(tf.sparse.from_dense(x))`). Ragged
    and sparse values compile for some ops and not others (TF 2.21, CPU, a
    `RaggedTensorSpec` input: `tf.reduce_max` and `r + 1` compile,
    `tf.concat`/`tf.reverse` and `r.to_tensor()` fail with "Detected
    unsupported operations"; a `SparseTensor`: `tf.sparse.to_dense`,
    `from_dense`, `expand_dims`, `retain` and building a `tf.SparseTensor`
    compile, but most ops on what they make do not: `tf.sparse.reshape`, `transpose`, `reorder`, `concat`, `slice`,
    `reduce_max`, `reduce_sum`, `softmax`, `maximum`, `add`,
    `fill_empty_rows`, `sparse_dense_matmul` and `st * 2.0` fail). A body
    that only turns sparse values dense (`tf.sparse.to_dense`) is judged by
    the rest.

    ## Why is this bad?
    Without `jit_compile=True`, TensorFlow runs the graph op by op: every
    elementwise op reads and writes a whole tensor. XLA compiles the function
    and fuses chains of elementwise ops and reductions into a few kernels.
    A hand-written `tf.function` training or inference step does not get it,
    whatever the target: the default `jit_compile=None` of `tf.function` means
    no XLA in every TF 2 version. Only `fit`/`evaluate`/`predict` differ by
    Keras version, and the rule does not report them:

    * Keras 3 (TF 2.16+ `tf.keras`, `keras` 3): `compile(jit_compile="auto")`
      is the default; Keras resolves it when it builds the step functions,
      to False on a machine with no GPU (TF backend: "Disable XLA on
      CPU-only machines"), False under a `tf.distribute` strategy, with
      `tf.config.experimental.enable_op_determinism()`, or when a layer has
      `supports_jit = False`, and True otherwise (Keras 3.15 source,
      `Trainer._resolve_auto_jit_compile`, `model_supports_jit`). So on a GPU,
      `fit` already uses XLA.
    * Keras 2 (`tf.keras` of TF 2.15 and older, `tf_keras` with
      `TF_USE_LEGACY_KERAS=1`): `compile(jit_compile=None)` is the default and
      `fit` runs without XLA on any device unless `compile(jit_compile=True)`.

    ## Example
    ```python
    @tf.function
    def gelu_block(x, w, b):
        h = tf.nn.gelu(tf.matmul(x, w) + b)
        return tf.reduce_sum(tf.tanh(h) * 0.1 + tf.exp(-tf.abs(h)), axis=-1)
    ```

    Use instead:
    ```python
    @tf.function(jit_compile=True)
    def gelu_block(x, w, b):
        h = tf.nn.gelu(tf.matmul(x, w) + b)
        return tf.reduce_sum(tf.tanh(h) * 0.1 + tf.exp(-tf.abs(h)), axis=-1)
    ```

    ## Fix safety
    No fix: a hint. Whether XLA pays depends on the body and on how many
    input shapes the function sees, which the linter cannot tell. Measured
    under TF 2.21 / Keras 3.15 on a 2-core CPU (a training step of a Keras
    model, `tf.function(jit_compile=True)` against `jit_compile=None`, 100
    steps after the first call per shape): a Dense 256-512-512-10 step 3.82
    against 5.04 ms (0.76x); an LSTM(64) step on sequences of 50, 7.88
    against 11.07 ms (0.71x); a small Conv2D step 46.8 against 42.4 ms
    (1.10x: slower). The first call per input shape costs the compile: the
    LSTM step on 5 sequence lengths took 5.90 s for its first calls against
    2.12 s without XLA, about 1 s per new length, so a loop over varying
    shapes can be many times slower with XLA than without. Earlier releases
    offered `jit_compile=True` as an unsafe fix; applied to public RNN
    training scripts it was reported to make them 12-33x slower (not
    re-measured here), so the rule now only points at the place to
    benchmark. What else `jit_compile=True` changes, measured under TF 2.21
    on CPU:
    * the function may fail to compile: XLA has no kernel for many ops a linter
      cannot see (ops from other modules, `histogram_fixed_width`, ...), and
      raises `InvalidArgumentError: Detected unsupported operations when trying
      to compile graph ...`;
    * XLA compiles again for every new concrete input shape, even under an
      `input_signature` with `None` dimensions: about 59 ms per new shape
      against 0.6 ms without XLA (one trace);
    * float results change by rounding (fused kernels, other reduction order):
      a relative difference of about 1.4e-7 in float32;
    * XLA drops assertions, wherever the linter cannot see them (another
      module's function): `tf.Assert`, `tf.debugging.Assert`,
      `tf.debugging.assert_equal`/`assert_positive`/`assert_rank_at_least`
      (on a dynamic rank)/`assert_shapes`/`assert_all_finite`,
      `tf.assert_equal` and `tf.debugging.check_numerics` raise
      `InvalidArgumentError` without `jit_compile` and let the value through
      with it (TF 2.21, CPU: `assert_positive` on `[-1.]` returns `[-2.]`,
      `check_numerics` on `[nan]` returns `[nan]`); an `assert` converted by
      `Feature.ASSERT_STATEMENTS` likewise (`inverse(0.)` returns `inf`; the
      AutoGraph guide's `collatz(-3)` never returns). `tf.ensure_shape` is
      kept: it raises with and without XLA. An `assert` on a tensor without
      that feature raises `OperatorNotAllowedInGraphError` either way;
    * XLA ignores seeds: `tf.random.set_seed(1)` then
      `tf.random.uniform([4], seed=7)` gives the same values on every run
      without XLA, different values on every run with it (also under
      `tf.config.experimental.enable_op_determinism()`).

    ## Measured effect
    TF 2.21, 2-core CPU, float32, median of 40 calls after warm-up, three
    repetitions: a chain of elementwise ops and a row reduction on an n x n
    tensor ran 1.8-2.0x faster with `jit_compile=True` (n = 512: 2.13 ms ->
    1.07 ms); with a matmul in front 1.2-1.5x (n = 512: 3.06 ms -> 2.29 ms);
    a matmul alone 0.95-1.04x (no gain: XLA's CPU matmul is no faster than
    oneDNN's). `examples/TFG401` (a 512 x 512 activation block, 20 calls),
    `tflint-gpu verify --rule TFG401 --device cpu --size small`: equivalent
    within 1e-4 and faster with XLA (the measurement below; on the loaded
    2-core machine the ratio varies from run to run).

    Keras's default, per version (`benchmarks/versions/`, CPU only: a
    `Dense` model compiled with defaults, `model.jit_compile` read after
    `compile` and after one `fit` step): TF 2.12.0 to 2.15.1 (`tf.keras`
    2.12 to 2.15) and `tf_keras` 2.21 (`TF_USE_LEGACY_KERAS=1`): `compile`'s
    default `None`, `model.jit_compile` None; TF 2.16.2 and 2.21 (Keras
    3.15.1): default `"auto"`, `model.jit_compile` False on this GPU-less
    machine. What `"auto"` gives
    on a GPU (True) is read from Keras's source, not measured: no GPU here.
    """

    code = "TFG401"
    name = "tf-function-without-jit-compile"
    message = "`tf.function` without `jit_compile`: XLA could compile and fuse this function"
    needs = (("function",),)
    fix_safety = None
    default_enabled = False

    reads_index = ("Call", "Name", "Attribute", "Comparison", "For", "CompFor", "Assert")

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        self._check(ctx.model.scope_of_node[node], ctx)

    def visit_Lambda(self, node: cst.Lambda, ctx) -> None:
        self._check(ctx.model.scope_of_node[node], ctx)

    def _check(self, scope: ScopeInfo, ctx) -> None:
        info = scope.graph
        if info is None or info.kind != "tf.function" or info.jit_compile is not None or info.origin is None:
            return
        origin = info.origin
        if isinstance(origin, cst.Call) and any(arg.star for arg in origin.args):
            return  # **options may hold jit_compile
        cls = scope.enclosing_class
        if scope.name in KERAS_GRAPH_METHODS and cls is not None and ctx.graphs.is_keras_class(cls):
            return
        if isinstance(origin, cst.Call) and self._rejects(bindings.expression_nodes(origin),
                                                          scope.parent or ctx.model.root, ctx):
            return  # input_signature=[tf.TensorSpec(..., tf.string)]
        if ctx.graphs.below_tf_function(scope):
            return  # stacked over a decorator: what is traced is what that returns, not this body
        reached, unresolved = ctx.graphs.reach(scope, through_arguments=True, through_objects=True)
        if unresolved:
            return  # it calls code of the module that cannot be followed: it may hold what XLA rejects
        if any(self._rejects(ctx.nodes_in(s, *self.reads_index), s, ctx) for s in reached):
            return
        if info.converts_asserts and any(ctx.nodes_in(s, "Assert") for s in reached):
            return  # AutoGraph makes `assert` a tf.Assert, which XLA drops
        uses = ctx.graphs.uses
        if uses.traced_by_library(scope):
            return  # only tf.data or Keras trace it
        if any(self._unsupported_input(arg.value, where, ctx) for call, where in uses.tracing_calls(scope)
               for arg in call.args):
            return  # f(tf.ragged.constant(...)), f.get_concrete_function(tf.TensorSpec(..., tf.string))
        if uses.error_expected(scope):
            return  # a caller expects it to raise: XLA drops assertions
        ctx.report(origin, "`tf.function` without `jit_compile` around code XLA could compile and fuse (a hint: "
                           "benchmark `jit_compile=True`; XLA compiles again for every new input shape)")

    # -- what the function runs ------------------------------------------
    def _rejects(self, nodes, scope: ScopeInfo, ctx) -> bool:
        """Do these nodes (a function's own code, or a decorator) use something XLA rejects?"""
        for node in nodes:
            if isinstance(node, cst.Call) and self._call_rejected(node, scope, ctx):
                return True
            if isinstance(node, (cst.Attribute, cst.Name)) and ctx.qualname(node, scope) in _STRING_DTYPES:
                return True
            if isinstance(node, cst.Comparison) and (
                _is_string(node.left) or any(_is_string(c.comparator) for c in node.comparisons)
            ):
                return True
            if isinstance(node, (cst.For, cst.CompFor)) and self._iterates_unknown(node.iter, scope, ctx):
                return True
        return False

    @classmethod
    def _call_rejected(cls, call: cst.Call, scope: ScopeInfo, ctx, depth: int = 0) -> bool:
        func = call.func
        if isinstance(func, cst.Name) and func.value in ("iter", "next") and ctx.qualname(func, scope) is None:
            return True  # iterating a dataset
        if isinstance(func, cst.Attribute):
            if func.attr.value in _ITERATOR_METHODS:
                return True  # IteratorGetNext: whatever the iterator (dataset, distributed)
            if ctx.graphs.is_dataset(func.value, scope):
                return True
            if depth < 3 and ctx.qualname(func, scope) is None and any(
                    cls._call_rejected(made, where, ctx, depth + 1)
                    for made, where in ctx.graphs.objects.kind(func.value, scope).calls):
                return True  # a method of an object XLA rejects: self.table.lookup(x), self.ta.write(...)
        qualname = ctx.qualname(func, scope)
        if qualname is None or not qualname.startswith("tensorflow."):
            return False
        if qualname in _XLA_SPARSE:
            return False
        if qualname in _NOT_XLA or qualname.startswith(_NOT_XLA_PREFIXES):
            return True
        if qualname == "tensorflow.TensorArray":
            dynamic = argument(call, 2, "dynamic_size")
            return dynamic is not None and not (isinstance(dynamic, cst.Name) and dynamic.value in ("False", "None"))
        # String tensors: a string literal as a value, or a string dtype.
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if qualname in _STRING_FIRST:
            positional = positional[1:]
        for value in positional:
            elements = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
            if any(_is_string(e) and _string_value(e) not in _ATTRIBUTE_STRINGS for e in elements):
                return True
        value_arg = keyword(call, "value")
        dtype_arg = keyword(call, "dtype")
        return (value_arg is not None and _is_string(value_arg.value)) or (
            dtype_arg is not None and _string_value(dtype_arg.value) == "string"
        )

    @classmethod
    def _unsupported_input(cls, value: cst.BaseExpression, scope: ScopeInfo, ctx) -> bool:
        """Does this argument of a call that traces the function make a value XLA
        cannot take: ragged, sparse or string (``tf.ragged.constant(...)``,
        ``tf.TensorSpec([3], tf.string)``)? Other rejected calls there run before
        the function, outside it."""
        for node in bindings.expression_nodes(value):
            if isinstance(node, (cst.Attribute, cst.Name)) and ctx.qualname(node, scope) in _STRING_DTYPES:
                return True
            if not isinstance(node, cst.Call):
                continue
            qualname = ctx.qualname(node.func, scope)
            if qualname is None or not qualname.startswith("tensorflow."):
                continue
            if qualname.startswith(_INPUT_PREFIXES) and qualname not in _XLA_SPARSE:
                return True
            if qualname not in EAGER_WRAPPERS and cls._call_rejected(node, scope, ctx) \
                    and not qualname.startswith(_NOT_XLA_PREFIXES) and qualname not in _NOT_XLA:
                return True  # a string tensor: tf.constant("a")
        return False

    @staticmethod
    def _iterates_unknown(iterable: cst.BaseExpression, scope: ScopeInfo, ctx) -> bool:
        """A Python loop over a parameter (maybe a dataset) or a known dataset."""
        if ctx.graphs.is_dataset(iterable, scope):
            return True
        if isinstance(iterable, cst.Name):
            found = ctx.assigned(iterable.value, scope=scope)
            return found is not None and found.is_parameter
        return False

    cases = [
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def step(x, w):
                return tf.reduce_sum(tf.tanh(tf.matmul(x, w)) * 0.5, axis=-1)
            """,
            at=[(3, 2, '`tf.function` without')],
            note="bare decorator",
        ),
        flagged(
            """
            import tensorflow as tfl

            @tfl.function(reduce_retracing=True)
            def step(x):
                return tfl.nn.relu(x) + 1.0
            """,
            at=[(3, 2, '`tf.function` without')],
            note="aliased module, decorator called with arguments: the keyword is appended",
        ),
        flagged(
            """
            from tensorflow import function

            @function
            def step(x):
                return x * 2.0
            """,
            at=[(3, 2, '`tf.function` without')],
            note="from-import spelling kept",
        ),
        flagged(
            """
            import tensorflow as tf

            def loss(y, p):
                return tf.reduce_mean(tf.square(y - p))

            fast_loss = tf.function(loss)
            """,
            at=[(6, 13, '`tf.function` without')],
            note="wrapper call",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function(
                input_signature=[tf.TensorSpec([None, 3], tf.float32)],
            )
            def step(x):
                return scale(x)

            def scale(x):
                ta = tf.TensorArray(tf.float32, size=3)
                return ta.write(0, tf.reduce_sum(x)).stack() * 2.0
            """,
            at=[(3, 2, '`tf.function` without')],
            note="one argument a line with a trailing comma; a callee with a fixed-size TensorArray is fine",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function(
                input_signature=[tf.TensorSpec([None, 3], tf.float32)]
            )
            def step(x):
                return tf.reduce_sum(tf.tanh(x), axis=-1)

            def scale(x):
                return x * 2.0

            fast_scale = tf.function(scale,
                                     reduce_retracing=True)
            """,
            at=[(3, 2, '`tf.function` without'), (12, 14, '`tf.function` without')],
            note="no trailing comma: the new argument follows the call's layout (one a line, aligned), the "
                 "closing parenthesis keeps its line",
        ),
        flagged(
            """
            import tensorflow as tf

            class Trainer:
                @tf.function
                def step(self, x):
                    y = tf.einsum("ij,jk->ik", x, x)
                    return tf.cast(self.post(y), "float32")

                def post(self, y):
                    return tf.nn.conv2d(y[None, :, :, None], tf.ones([1, 1, 1, 1]), 1, "SAME")
            """,
            at=[(4, 6, '`tf.function` without')],
            # The instance is held: a tf.function method keeps only a weak reference to self
            # (`Trainer().step(...)` raises AttributeError: 'NoneType' object has no attribute 'post').
            note="a method calling a method; attribute strings (equation, dtype, padding) are not string tensors",
        ),
        flagged(
            """
            import tensorflow as tf

            def make():
                host = tf.py_function(lambda: 1.0, [], tf.float32)

                @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
                def step(x):
                    return x * 2.0
                return step, host
            """,
            at=[(6, 6, '`tf.function` without')],
            note="only the decorator's own arguments are checked, not the enclosing function's other code",
        ),
        flagged(
            """
            import tensorflow as tf

            class Cell:
                def step(self, x):
                    return tf.tanh(x) * 2.0

            class Net:
                def __init__(self):
                    self.cell = Cell()
                    self.dense = tf.keras.layers.Dense(2)

                @tf.function
                def run(self, x):
                    return self.cell.step(x) + tf.reduce_sum(self.dense(x))
            """,
            at=[(12, 6, '`tf.function` without')],
            note="a method of an attribute whose class the file defines is followed (and holds nothing XLA "
                 "rejects); a library layer's call is not the module's code",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function(jit_compile=False)
            def a(x):
                return x * 2.0

            @tf.function(experimental_compile=True)
            def b(x):
                return x * 2.0

            c = tf.function(lambda x: x + 1.0, jit_compile=True)
            """,
            note="jit_compile (or its deprecated alias) given: the author decided",
        ),
        clean(
            """
            import tensorflow as tf

            OPTIONS = {"jit_compile": True}

            @tf.function(**OPTIONS)
            def a(x):
                return x * 2.0
            """,
            note="options passed through **kwargs may hold jit_compile",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def a(x):
                tf.print("loss", x)
                return x * 2.0

            @tf.function
            def b(x):
                return tf.py_function(lambda v: v * 2, [x], tf.float32)

            @tf.function
            def c(path):
                return tf.strings.length(tf.io.read_file(path))

            @tf.function
            def d(x):
                return tf.constant("label"), x * 2.0
            """,
            note="XLA has no kernel for StringFormat, EagerPyFunc, string ops, file reads, string tensors",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def collect(x):
                ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
                for i in tf.range(tf.shape(x)[0]):
                    ta = ta.write(i, x[i] * 2.0)
                return ta.stack()
            """,
            note="dynamic TensorArray: XLA compiles it and silently returns [] (TF bug)",
        ),
        clean(
            """
            import tensorflow as tf

            def grow(i, ta):
                return i + 1, ta.write(i, tf.cast(i, tf.float32))

            def log(x):
                tf.print(x)
                return x

            @tf.function
            def a(n):
                ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
                return tf.while_loop(lambda i, t: i < n, grow, [0, ta])

            @tf.function
            def b(x):
                return log(x) * 2.0
            """,
            note="the XLA-incompatible code is in a same-module callee or a loop body passed to tf.while_loop",
        ),
        clean(
            """
            import tensorflow as tf

            class Cell:
                def get_initial_state(self, x):
                    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
                    for i in tf.range(tf.shape(x)[0]):
                        ta = ta.write(i, x[i] * 2.0)
                    return ta.stack()

            class Decoder:
                def __init__(self):
                    self.cell = Cell()

            class Seq2Seq:
                def __init__(self):
                    self.decoder = Decoder()

                @tf.function
                def start(self, x):
                    return self.decoder.cell.get_initial_state(x)

            @tf.function
            def start(decoder, x):
                return decoder.cell.get_initial_state(x)
            """,
            note="a dynamic TensorArray reached through an attribute chain (real code: "
                 "self.decoder.cell.get_initial_state(...)), or through an object the file cannot tell whose "
                 "method of that name the module defines: XLA returns [] instead of [2. 4. 6.]",
        ),
        clean(
            """
            import tensorflow as tf

            class Block(tf.keras.layers.Layer):
                def call(self, x):
                    tf.print("block", x)
                    return x * 2.0

            class Base:
                def log(self, x):
                    tf.print(x)
                    return x

            class Plain(Base):
                def __init__(self, hook):
                    self.block = Block()
                    setattr(self, "hook", hook)

                @tf.function
                def a(self, x):
                    return self.block(x)

                @tf.function
                def b(self, x):
                    return super().log(x) + 1.0

                @tf.function
                def c(self, x):
                    return self.hook(x)

                @tf.function
                def d(self, x):
                    return tf.while_loop(lambda i: i < 3.0, self.log, [x])
            """,
            note="a layer of the file called (its call runs), super(), a method reference handed to tf.while_loop; "
                 "a method no class of the file's plain hierarchy defines (set by setattr): the engine cannot "
                 "follow it, so the body is not flagged",
        ),
        clean(
            """
            import tensorflow as tf

            table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(tf.constant([1, 2], tf.int64), tf.constant([10, 20], tf.int64)), -1)

            class Reader:
                def __init__(self, ds):
                    self.iterator = iter(ds)
                    self.table = tf.lookup.StaticHashTable(
                        tf.lookup.KeyValueTensorInitializer(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64)), -1)

                @tf.function
                def step(self):
                    return self.iterator.get_next() * 2

                @tf.function
                def ids(self, x):
                    return self.table.lookup(x) * 2

            @tf.function
            def first(iterator):
                return iterator.get_next()

            @tf.function
            def lookup(x):
                return table.lookup(x)
            """,
            note="IteratorGetNext and LookupTableFindV2 have no XLA kernel (InvalidArgumentError: Detected "
                 "unsupported operations); a table held in an attribute or a module name",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def train(dataset, model):
                total = 0.0
                for batch in dataset:
                    total += tf.reduce_sum(model(batch))
                return total

            @tf.function
            def first(ds):
                return next(iter(ds))

            @tf.function
            def inside(x):
                return tf.data.Dataset.from_tensor_slices(x).reduce(0.0, lambda a, b: a + b)
            """,
            note="iterating a parameter (maybe a dataset) or building a dataset: XLA has no dataset kernels",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
            def a(s):
                return tf.shape(s)

            @tf.function
            def b(label):
                return tf.where(label == "cat", 1, 0)
            """,
            note="string tensors as inputs: XLA rejects them (_Arg with T=DT_STRING)",
        ),
        clean(
            """
            import tensorflow as tf
            import keras

            class Net(keras.Model):
                @tf.function
                def train_step(self, data):
                    return {"loss": tf.reduce_mean(data)}

            def scale(x):
                return x * 2.0

            ds = tf.data.Dataset.range(4).map(scale)

            def eager(x):
                return tf.tanh(x)
            """,
            note="Keras compiles train_step itself; Dataset.map functions and eager code are not explicit tf.functions",
        ),
        clean(
            """
            import tensorflow as tf
            import keras

            @tf.function
            def prepare(x, y):
                return tf.cast(x, tf.float32) / 255.0, y

            @tf.function()
            def jitter(x):
                return tf.image.flip_left_right(x)

            def load(x):
                return jitter(x) * 2.0

            @tf.function
            def augment(x):
                return tf.clip_by_value(x, 0.0, 1.0)

            @tf.function
            def collatz(x):
                return x // 2

            ds = tf.data.Dataset.from_tensor_slices((tf.zeros([4, 2, 2, 3]), tf.range(4)))
            ds = ds.map(prepare)
            images = ds.map(lambda x, y: load(x)).map(lambda x: (augment(x), x))
            model = keras.Sequential([keras.layers.Lambda(collatz)])
            """,
            note="traced only by tf.data or Keras (fix pass H39, H25, H599, H494): given to Dataset.map, called "
                 "only from a mapped function or a lambda given to map, given to keras.layers.Lambda",
        ),
        clean(
            """
            import tensorflow as tf

            def make_dataset(paths, resize=64):
                @tf.function
                def _map_fn(img):
                    return tf.clip_by_value(tf.image.resize(img, [resize, resize]), 0, 255)
                return image_dataset(paths, map_fn=_map_fn)

            def batch_dataset(dataset, map_fn=None):
                dataset = dataset.shuffle(128)
                if map_fn:
                    dataset = dataset.map(map_fn)
                return dataset.batch(8).prefetch(1)

            def image_dataset(paths, map_fn=None):
                def parse(path):
                    return tf.image.decode_png(tf.io.read_file(path), 3)
                if map_fn is not None:
                    def map_fn_(path):
                        return map_fn(parse(path))
                else:
                    map_fn_ = parse
                return batch_dataset(tf.data.Dataset.from_tensor_slices(paths), map_fn=map_fn_)

            def scale(x):
                return x * 2.0

            scaled = tf.function(scale)
            numbers = tf.data.Dataset.range(3).map(scaled)
            """,
            note="handed through same-module parameters to a map on a dataset the caller hands in (fix pass "
                 "H151, dragen1860's WGAN dataset.py); g = tf.function(f) whose g is only mapped",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def jitter(x):
                return tf.image.flip_left_right(x) * 0.5

            def load(x):
                return jitter(x)

            ds = tf.data.Dataset.from_tensors(tf.ones([1, 2, 2, 3])).map(load)
            sample = jitter(tf.ones([1, 2, 2, 3]))
            """,
            at=[(3, 2, '`tf.function` without')],
            note="also called from eager code (the Pix2Pix notebook's random_jitter, fix pass H21): flagged",
        ),
        clean(
            """
            import tensorflow as tf
            from tensorflow.autograph.experimental import Feature

            @tf.function
            def a(x):
                tf.debugging.assert_rank_at_least(x, 2)
                return x * 2.0

            @tf.function
            def b(x):
                tf.assert_equal(tf.shape(x)[0], 3)
                return x + 1.0

            def check(x):
                return tf.Assert(tf.reduce_all(x > 0), [x])

            @tf.function
            def c(x):
                check(x)
                return x * 3.0

            @tf.function
            def d(x):
                return tf.debugging.check_numerics(x, message="bad") * 2.0

            @tf.function(experimental_autograph_options=(Feature.ASSERT_STATEMENTS, Feature.EQUALITY_OPERATORS))
            def inverse(x):
                assert x != 0.0, "Do not pass zero!"
                return 1.0 / x
            """,
            note="XLA drops assertions silently (fix pass H331, H300, H488): tf.debugging.assert_*, the tf.assert_* "
                 "aliases, tf.Assert in a callee, check_numerics, an assert AutoGraph converts",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def step(x):
                assert x.shape.rank == 1, "a vector"
                return tf.ensure_shape(x, [None]) * 2.0
            """,
            at=[(3, 2, '`tf.function` without')],
            note="an assert AutoGraph does not convert (not by default in TF 2.21: a Python check at trace time) "
                 "and tf.ensure_shape, which XLA keeps",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function(input_signature=[tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)])
            def max_and_min(rt):
                return tf.math.reduce_max(rt, axis=-1), tf.math.reduce_min(rt, axis=-1)

            @tf.function(input_signature=[tf.SparseTensorSpec(shape=[3, 4], dtype=tf.int32)])
            def total(st):
                return st.values * 2

            @tf.function
            def product(x, y):
                return tf.sparse.sparse_dense_matmul(x, y)

            @tf.function
            def palindrome(x, axis):
                return tf.concat([x, tf.reverse(x, [axis])], axis)

            palindrome(tf.ragged.constant([[1, 2], [3]]), axis=1)

            @tf.function
            def serve(raw):
                return tf.expand_dims(raw, 0)

            concrete = serve.get_concrete_function(tf.TensorSpec(shape=[3], dtype=tf.string))
            """,
            note="ragged, sparse or string inputs (fix pass H429, H443, H428, H262): a RaggedTensorSpec or "
                 "SparseTensorSpec signature, tf.sparse ops, a call passing a ragged tensor, a string "
                 "get_concrete_function spec",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function
            @tf.keras.utils.register_keras_serializable(package="TFG401Cases")
            def pinball_loss(y_true, y_pred):
                if isinstance(y_true, tf.SparseTensor):
                    y_true = tf.sparse.to_dense(y_true)
                return tf.reduce_mean(tf.maximum(0.1 * (y_true - y_pred), -0.9 * (y_true - y_pred)))
            """,
            at=[(3, 2, '`tf.function` without')],
            note="stacked over register_keras_serializable, which returns the function itself; tf.sparse.to_dense "
                 "compiles (tensorflow/addons quantiles.py, npairs.py)",
        ),
        clean(
            """
            import pytest
            import tensorflow as tf
            from tensorflow_addons.seq2seq import beam_search_decoder
            from tf_agents.utils import xla

            def checks(dynamic_shape, t):
                @tf.function(input_signature=(tf.TensorSpec(dynamic_shape, dtype=tf.float32),))
                def _test_body(t):
                    beam_search_decoder._check_batch_beam(t, 4, 5)

                with pytest.raises(tf.errors.InvalidArgumentError):
                    _test_body(t)

            @tf.function
            def positive(x):
                return x * 2.0

            try:
                positive(tf.constant(-1.0))
            except tf.errors.InvalidArgumentError:
                pass

            @tf.function
            @xla.compile_in_graph_mode
            def add(x, y):
                return x + y
            """,
            note="a caller expects a runtime error (fix pass H300: the tf.Assert is in another module's "
                 "_check_batch_beam); stacked over a decorator of another module (H335): what is traced is "
                 "what it returns",
        ),
    ]


def _is_string(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def _string_value(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None
