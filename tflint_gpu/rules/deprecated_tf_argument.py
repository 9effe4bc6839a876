from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import keyword, without_args
from tflint_gpu.semantic.names import short_name
from tflint_gpu.semantic.target import KERAS3_TF
from tflint_gpu.rules.base import Fix, Rule, Safety, clean, flagged

# TFG904 reports and renames these two (its own checks, messages and cases).
_ELSEWHERE = frozenset({("tensorflow.function", "experimental_compile"),
                        ("tensorflow.function", "experimental_relax_shapes")})
# TF's dtypes as `tf.<name>` (an `output_types=` entry the fix can turn into a `tf.TensorSpec`).
_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16", "half", "double", "int8", "int16", "int32",
                     "int64", "uint8", "uint16", "uint32", "uint64", "bool", "string", "complex64",
                     "complex128", "qint8", "quint8", "qint32", "variant", "resource"})
_GENERATOR = "tensorflow.data.Dataset.from_generator"


def _table():
    from tflint_gpu.semantic.migration_table import table

    return table()


def _given(node: cst.Call, name: str, position: Optional[int]) -> Optional[cst.Arg]:
    """The argument of ``node`` that fills parameter ``name`` (by keyword, or at ``position``)."""
    found = keyword(node, name)
    if found is not None or position is None:
        return found
    leading = []
    for arg in node.args:
        if arg.keyword is not None or arg.star:
            break
        leading.append(arg)
    if any(a.star for a in node.args[:len(leading) + 1] if a.keyword is None):
        return None  # `*args` before it: its place is unknown
    return leading[position] if position < len(leading) else None


class DeprecatedTfArgument(Rule):
    """A TensorFlow argument marked deprecated: `from_generator(output_types=)`, `map_fn(dtype=)`, `back_prop=False`...

    ## What it does
    Finds arguments that TensorFlow 2's own deprecation markers name, as the
    migration table derives them from TF 2.21 (`scripts/derive_migration.py`
    reads each `deprecated_args` / `deprecated_arg_values` marker and executes
    every entry with the deprecated argument and with its current spelling, or
    without it):

    * `tf.data.Dataset.from_generator(gen, output_types=..., output_shapes=...)`
      → `output_signature=tf.TensorSpec(...)`;
    * `tf.map_fn(fn, elems, dtype=...)` → `fn_output_signature=`;
    * `tf.nn.l2_normalize(x, dim=...)` (and `tf.math.`, `tf.linalg.`) → `axis=`;
    * `tf.train.CheckpointOptions(experimental_enable_async_checkpoint=...)` →
      `enable_async=`;
    * `back_prop=False` given to `tf.map_fn`, `tf.while_loop`, `tf.scan`,
      `tf.foldl`, `tf.foldr`;
    * arguments with no current spelling: `tf.Variable(caching_device=)`,
      `tf.function(experimental_follow_type_hints=)`,
      `import_graph_def(op_dict=)`, `Graph.create_op(compute_shapes=)`,
      `LinearOperator(graph_parents=)`.

    `tf.function`'s `experimental_compile=` and `experimental_relax_shapes=`
    are TFG904's. A marker that names no parameter (`set_jit`'s
    `jit_config`: passing it is a TypeError) is not reported; neither is
    code in the fallback branch of a TensorFlow version test.

    ## Why is this bad?
    TensorFlow says each will be removed in a future version, and some do not
    do what they say. Executed under TensorFlow 2.21 on the CPU
    (`tflint_gpu/semantic/data/keras3_migration.json` keeps each result):
    * `back_prop=False` does nothing eagerly (the gradient through `tf.map_fn`,
      `tf.while_loop`, `tf.scan`, `tf.foldl`, `tf.foldr` is computed) and
      stops it once traced (`tf.function`, Keras `fit`): the gradient is
      `None`. The same code trains differently in the two modes.
    * `tf.function(experimental_follow_type_hints=True)` changes nothing: a
      function annotated `x: tf.Tensor` traces 7 times for 5 shapes and 2
      Python floats, with and without it.
    * The renames give identical outputs both ways: `l2_normalize(dim=1)` and
      `axis=1`, `map_fn(dtype=tf.float32)` and `fn_output_signature=`,
      `from_generator(output_types=tf.int32, output_shapes=(2,))` and
      `output_signature=tf.TensorSpec(shape=(2,), dtype=tf.int32)` (the same
      elements and `element_spec`).
    * Deprecation warnings are logged for `back_prop=`, `compute_shapes=` and
      `op_dict=`; the others are silent at run time, so nothing tells the user
      before the argument is removed.

    ## Example
    ```python
    ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int32),
                                        output_shapes=((None, 3), ()))
    squares = tf.map_fn(lambda v: v * v, x, dtype=tf.float32)
    unit = tf.math.l2_normalize(x, dim=1)
    ```

    Use instead:
    ```python
    ds = tf.data.Dataset.from_generator(
        gen, output_signature=(tf.TensorSpec(shape=(None, 3), dtype=tf.float32),
                               tf.TensorSpec(shape=(), dtype=tf.int32)))
    squares = tf.map_fn(lambda v: v * v, x, fn_output_signature=tf.float32)
    unit = tf.math.l2_normalize(x, axis=1)
    ```

    ## Fix safety
    Safe: a keyword renamed where the table's execution gave identical
    outputs (`dim=` → `axis=`, `dtype=` → `fn_output_signature=`,
    `experimental_enable_async_checkpoint=` → `enable_async=`), unless the
    new keyword is also given; `output_types=`/`output_shapes=` become one
    `output_signature=` when each type is a `tf.<dtype>` or a string, alone
    or in a flat tuple (with a tuple of as many shapes, or none), and no
    positional argument follows them. Unsafe: removing an argument that has
    no current spelling (`caching_device=`, `experimental_follow_type_hints=`,
    `op_dict=`, `compute_shapes=`, `graph_parents=`): the executed example
    gave identical outputs without it, eagerly; `caching_device=` may still
    change where a TF 1-style graph caches reads. `back_prop=False` has no
    fix: the equivalent of its traced behaviour (`tf.stop_gradient` on the
    result) changes what it computes eagerly. No fix where the project's
    target is older than TF 2.16 (the current spellings were executed under
    TF 2.21 only).
    Executed under tf_keras too (the fix-execution test's Keras 2 run):
    identical results, so the fixes suit code that must run under both.

    ## Measured effect
    TensorFlow 2.21, CPU: the executed results above. examples/TFG918
    (`tflint-gpu verify --device cpu --size small --rule TFG918`): a
    generator pipeline and a `map_fn`/`l2_normalize` step, equivalent after
    the fix (the same values) and without the deprecated arguments.
    """

    code = "TFG918"
    name = "deprecated-tf-argument"
    message = "A deprecated TensorFlow argument"
    needs = (("output_types", "output_shapes", "back_prop", "dim", "dtype", "caching_device", "compute_shapes",
              "op_dict", "graph_parents", "experimental_follow_type_hints", "experimental_enable_async_checkpoint"),)
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if not node.args:
            return
        qualname = ctx.call_name(node)
        if qualname is None or not qualname.startswith("tensorflow."):
            return
        table = _table()
        if not table.deprecates_tf_keywords(qualname):
            return
        if ctx.migration.version_guarded(node, ctx.scope) or ctx.migration.except_fallback(node, ctx.scope):
            return  # code for releases without the current spelling, on purpose
        fixes = ctx.target.at_least(KERAS3_TF)
        if qualname == _GENERATOR:
            self._generator(node, qualname, ctx, fixes)
            return
        for arg in node.args:
            if arg.keyword is None:
                continue  # these are keywords in practice (`dim` is l2_normalize's fifth parameter)
            found = table.deprecated_tf_keyword(qualname, arg.keyword.value)
            if found is not None and (qualname, found.keyword) not in _ELSEWHERE:
                self._report(node, arg, found, ctx, fixes)

    def _report(self, node: cst.Call, arg: cst.Arg, found, ctx, fixes: bool) -> None:
        what = f"`{short_name(found.qualname)}({found.keyword}=)`"
        if found.value is not None:
            if not (isinstance(arg.value, cst.Name) and arg.value.value == found.value):
                return  # only that value is deprecated (a variable: not known)
            traced = ctx.graph() is not None
            ctx.report(arg, f"`{found.keyword}={found.value}` is deprecated: eagerly it does nothing, traced it "
                            f"stops the gradient" + (" (this code is traced)" if traced else "") +
                            "; to stop it, wrap the result in `tf.stop_gradient`")
            return
        fix = None
        if found.replacement and found.rename:
            message = f"{what} is deprecated: use `{found.replacement}=`"
            if fixes and found.exact and keyword(node, found.replacement) is None:
                fix = Fix(f"Rename to `{found.replacement}=`", Safety.SAFE, {arg.keyword: cst.Name(found.replacement)})
        elif found.replacement:
            message = f"{what} is deprecated: use `{found.replacement}=`"
        else:
            advice = found.instructions.split(". ")[0].rstrip(".")
            message = f"{what} is deprecated" + (f" ({advice})" if advice and "deprecated" not in advice else "")
            if fixes and found.dropped_exact:
                fix = Fix(f"Remove `{found.keyword}=`", Safety.UNSAFE, {node: without_args(node, [arg])})
        ctx.report(arg, message, fix)

    # -- from_generator ------------------------------------------------------
    def _generator(self, node: cst.Call, qualname: str, ctx, fixes: bool) -> None:
        table = _table()
        types_entry = table.deprecated_tf_keyword(qualname, "output_types")
        shapes_entry = table.deprecated_tf_keyword(qualname, "output_shapes")
        if types_entry is None or shapes_entry is None:
            return
        types = _given(node, "output_types", types_entry.position)
        shapes = _given(node, "output_shapes", shapes_entry.position)
        first = types or shapes
        if first is None:
            return
        fix = self._signature_fix(node, types, shapes, ctx) if fixes and keyword(node, "output_signature") is None \
            else None
        given = "`output_types=` and `output_shapes=`" if types is not None and shapes is not None else \
            ("`output_types=`" if types is not None else "`output_shapes=`")
        ctx.report(first, f"`tf.data.Dataset.from_generator` {given}: deprecated, use `output_signature=` "
                          f"(`tf.TensorSpec` per element)", fix)

    def _signature_fix(self, node: cst.Call, types: Optional[cst.Arg], shapes: Optional[cst.Arg],
                       ctx) -> Optional[Fix]:
        if types is None:
            return None
        positional = [a for a in node.args if a.keyword is None]
        last = max(node.args.index(a) for a in (types, shapes) if a is not None)
        if any(a.keyword is None and node.args.index(a) > last for a in positional) or any(a.star for a in node.args):
            return None  # a positional argument after them (`args`) would move
        spec = ctx.module_expr("tensorflow", "TensorSpec")
        if spec is None:
            return None
        spec_expr, imports = spec
        code = cst.Module([]).code_for_node
        if isinstance(types.value, cst.Tuple):
            kinds = [e.value for e in types.value.elements]
            if not kinds or any(isinstance(e, cst.StarredElement) for e in types.value.elements):
                return None
            if shapes is None:
                forms = [None] * len(kinds)
            elif isinstance(shapes.value, (cst.Tuple, cst.List)) and len(shapes.value.elements) == len(kinds) \
                    and not any(isinstance(e, cst.StarredElement) for e in shapes.value.elements):
                forms = [e.value for e in shapes.value.elements]
            else:
                return None
        else:
            kinds, forms = [types.value], [shapes.value if shapes is not None else None]
        if not all(self._dtype(kind, ctx) for kind in kinds):
            return None
        specs = [f"{code(spec_expr)}(shape={code(form) if form is not None else 'None'}, dtype={code(kind)})"
                 for kind, form in zip(kinds, forms)]
        text = specs[0] if len(specs) == 1 and not isinstance(types.value, cst.Tuple) else \
            "(" + ", ".join(specs) + ("," if len(specs) == 1 else "") + ")"
        try:
            value = cst.parse_expression(text)
        except cst.ParserSyntaxError:  # pragma: no cover - built from parsed code
            return None
        new = cst.Arg(value, keyword=cst.Name("output_signature"),
                      equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
        call = without_args(node, [shapes] if shapes is not None else [], (types, new))
        return Fix("Use `output_signature=` with a `tf.TensorSpec` per element", Safety.SAFE, {node: call}, imports)

    @staticmethod
    def _dtype(expr: cst.BaseExpression, ctx) -> bool:
        if isinstance(expr, cst.SimpleString):
            try:
                return expr.evaluated_value in _DTYPES
            except Exception:  # pragma: no cover - defensive
                return False
        qualname = ctx.qualname(expr) if isinstance(expr, cst.Attribute) else None
        return qualname is not None and qualname.rsplit(".", 1)[0] in ("tensorflow", "tensorflow.dtypes") \
            and qualname.rsplit(".", 1)[1] in _DTYPES

    cases = [
        flagged(
            """
            import tensorflow as tf

            def gen():
                for i in range(4):
                    yield [float(i), 1.0, 2.0], i

            ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int32),
                                                output_shapes=((3,), ()))
            one = tf.data.Dataset.from_generator(lambda: iter([[1, 2], [3, 4]]), tf.int64)
            """,
            fixed="""
            import tensorflow as tf

            def gen():
                for i in range(4):
                    yield [float(i), 1.0, 2.0], i

            ds = tf.data.Dataset.from_generator(gen, output_signature=(tf.TensorSpec(shape=(3,), dtype=tf.float32), tf.TensorSpec(shape=(), dtype=tf.int32)))
            one = tf.data.Dataset.from_generator(lambda: iter([[1, 2], [3, 4]]), output_signature=tf.TensorSpec(shape=None, dtype=tf.int64))
            """,
            at=[(7, 42, "`tf.data.Dataset.from_generator` `output_types=` and `output_shapes=`: deprecated"),
                (9, 70, "`tf.data.Dataset.from_generator` `output_types=`: deprecated")],
            run="""
            values = [[t.numpy() for t in item] for item in ds] + [str(ds.element_spec)]
            ones = [t.numpy() for t in one] + [str(one.element_spec)]
            """,
            note="the same elements and element_spec (shapes (3,) and (); one shape unknown)",
            keras2=True,
        ),
        flagged(
            """
            import tensorflow as tf

            x = tf.constant([[3.0, 4.0], [1.0, 0.0]])
            unit = tf.math.l2_normalize(x, dim=1)
            also = tf.nn.l2_normalize(x, dim=0, epsilon=1e-6)
            squares = tf.map_fn(lambda v: v * v, x, dtype=tf.float32)
            opts = tf.train.CheckpointOptions(experimental_enable_async_checkpoint=False)
            """,
            fixed="""
            import tensorflow as tf

            x = tf.constant([[3.0, 4.0], [1.0, 0.0]])
            unit = tf.math.l2_normalize(x, axis=1)
            also = tf.nn.l2_normalize(x, axis=0, epsilon=1e-6)
            squares = tf.map_fn(lambda v: v * v, x, fn_output_signature=tf.float32)
            opts = tf.train.CheckpointOptions(enable_async=False)
            """,
            at=[(4, 32, "`tf.math.l2_normalize(dim=)` is deprecated: use `axis=`"),
                (5, 30, "`tf.nn.l2_normalize(dim=)` is deprecated: use `axis=`"),
                (6, 41, "`tf.map_fn(dtype=)` is deprecated: use `fn_output_signature=`"),
                (7, 35, "`tf.train.CheckpointOptions(experimental_enable_async_checkpoint=)` is deprecated")],
            run="""
            values = [unit, also, squares, opts.enable_async]
            """,
            keras2=True,
        ),
        flagged(
            """
            import tensorflow as tf

            x = tf.constant([1.0, 2.0, 3.0])

            @tf.function
            def traced(x):
                return tf.map_fn(lambda v: v * v, x, back_prop=False)

            def eager(x):
                return tf.scan(lambda a, v: a + v, x, back_prop=False)

            v = tf.Variable([1.0, 2.0], caching_device="/cpu:0")
            f = tf.function(lambda t: t * 2.0, experimental_follow_type_hints=True)
            """,
            fixed="""
            import tensorflow as tf

            x = tf.constant([1.0, 2.0, 3.0])

            @tf.function
            def traced(x):
                return tf.map_fn(lambda v: v * v, x, back_prop=False)

            def eager(x):
                return tf.scan(lambda a, v: a + v, x, back_prop=False)

            v = tf.Variable([1.0, 2.0])
            f = tf.function(lambda t: t * 2.0)
            """,
            at=[(7, 42, "`back_prop=False` is deprecated: eagerly it does nothing, traced it stops the gradient "
                        "(this code is traced)"),
                (10, 43, "`back_prop=False` is deprecated: eagerly it does nothing, traced it stops the gradient;"),
                (12, 29, "`tf.Variable(caching_device=)` is deprecated"),
                (13, 36, "`tf.function(experimental_follow_type_hints=)` is deprecated")],
            run="""
            values = [traced(x), eager(x), v.read_value(), f(tf.constant(1.5))]
            """,
            note="back_prop has no fix (its traced meaning differs from its eager one); the removals are unsafe",
            keras2=True,
        ),
        clean(
            """
            import tensorflow as tf

            x = tf.constant([1.0, 2.0])
            a = tf.map_fn(lambda v: v, x, back_prop=True)
            b = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], back_prop=flag)
            c = tf.nn.l2_normalize(x, axis=0)
            d = tf.zeros([2], dtype=tf.float32)
            e = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int32))
            tf.config.optimizer.set_jit(True)
            f = tf.function(g, experimental_relax_shapes=True)
            h = torch.nn.functional.normalize(t, dim=1)
            """,
            note="back_prop=True (the default) or a variable; current spellings; dtype= of another function; "
                 "set_jit's marker names no parameter; tf.function's keywords are TFG904's; not TensorFlow",
        ),
        clean(
            """
            import tensorflow as tf

            TF_VERSION = tuple(int(v) for v in tf.__version__.split(".")[:2])
            if TF_VERSION >= (2, 4):
                ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int32))
            else:
                ds = tf.data.Dataset.from_generator(gen, output_types=tf.int32)
            """,
            note="the old spelling for old TensorFlow releases, on purpose",
        ),
    ]
