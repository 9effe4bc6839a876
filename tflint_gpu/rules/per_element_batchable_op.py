from __future__ import annotations

import libcst as cst

from tflint_gpu.findings import Fix, Safety
from tflint_gpu.semantic.names import short_name
from tflint_gpu.rules.base import Rule, clean, flagged


_ONE_CALL = "one call on the whole batch computes the same; call it once"


def _ops(ops) -> str:
    """The ops named in a message: ``tf.cast`` and ``tf.one_hot``, with the arithmetic in brackets."""
    unique = list(dict.fromkeys(ops))
    names = [f"`{short_name(op)}`" for op in unique if op[0].isalpha()]
    operators = " ".join(f"`{op}`" for op in unique if not op[0].isalpha())
    text = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else ""
    if not text:
        return f"arithmetic ({operators})"
    return f"{text} (with {operators})" if operators else text


class PerElementBatchableOp(Rule):
    """A TensorFlow op applied to each element of a batch, one call per element, when one call on the batch does the same.

    ## What it does
    Finds `tf.map_fn(f, x)`, `tf.stack([f(e) for e in x])` (also over
    `tf.unstack(x)`, or `x[i]` for `i` in `range(len(x))`, `range(x.shape[0])`
    or `range(tf.shape(x)[0])`) and a loop whose only statement appends `f(e)`
    to a list made empty just before it and stacked with `tf.stack` just
    after it, where `f` is an op that takes the whole batch and computes the
    same thing for each element (`tf.image.per_image_standardization`,
    `tf.image.rgb_to_grayscale`, `tf.image.adjust_contrast(e, 2.0)`, `tf.nn.relu`,
    `tf.one_hot(e, depth)`, `tf.cast(e, tf.float32)`...), a chain of such
    ops, or one with arithmetic by a number (`tf.cast(e, tf.float32) /
    255.0`); also `tf.vectorized_map` over such an op, the indices form
    `tf.stack([tf.gather(table, e) for e in tf.unstack(ids)])` (also
    `tf.gather_nd`, `tf.nn.embedding_lookup`), and a sample drawn once per
    iteration, `tf.stack([tf.random.normal(shape) for _ in range(n)])` (also
    `uniform`, `truncated_normal`), which one draw with a leading axis of `n`
    replaces (the same distribution, other values: no fix).

    Not reported either: ops that take at most 4 dimensions
    (`tf.image.resize`, `flip_left_right`, `resize_with_pad`, `central_crop`,
    `rot90`...: the table's `raises_on`). They take a batch of images, but of
    the four such maps read in public code three were over videos or
    volumes (5-D), where the per-element map is what makes the op run; the
    linter cannot see a tensor's rank.

    Which ops and which kinds of extra argument qualify is derived, not
    typed: `scripts/derive_batchable_ops.py` calls every public function of
    `tf`, `tf.math`, `tf.nn` and `tf.image` (random and stateful ones aside)
    on batches of nine kinds (float matrices and rank-3 tensors, float, one-channel and
    uint8 images, batches of one, image sequences, int matrices whose rows
    differ), per element and on the whole batch, with each kind of extra
    argument (none, a float, an int, a size `[h, w]`, two ints, a dtype: every
    value of the kind). An op is listed for a kind of extra argument when the
    two agree in dtype, shape and values on every batch on which the
    per-element call runs (`semantic/batchable_ops.py`: 174 ops, 135 of them bit-identical). Not
    reported: ops where they disagree (`tf.reduce_sum(e)`,
    `tf.nn.softmax(e, 0)`, `tf.argmax(e)`, whose axes move with the batch
    axis), keyword arguments other than `name` (not derived), a name as an
    extra argument unless it is a Python number, `tf.map_fn` over a list or
    tuple (a nested structure: `f` gets one slice of each), and random ops
    (`tf.image.random_flip_left_right` on a batch draws per image, but other
    random ops draw once for the whole batch).

    ## Why is this bad?
    Eagerly, each element is one more dispatch of every op from Python, and
    `tf.map_fn` adds its own loop; in a `tf.function`, `tf.map_fn` becomes a
    while loop whose iterations run one after another, and a list
    comprehension is unrolled into a copy of the ops per element at trace.
    Measured under TF 2.21 on a 2-core CPU, 64 images of 32x32x3 (one run;
    figures vary by about 30% between runs on this machine): eagerly,
    `tf.map_fn(tf.image.per_image_standardization, x)` takes 78.6 ms against
    2.32 ms for one call (34x), `tf.stack([tf.image.rgb_to_grayscale(e) for
    e in tf.unstack(x)])` 45.8 ms against 1.11 ms (41x),
    `tf.map_fn(lambda e: tf.cast(e, tf.float32) / 255.0, x)` 35.7 ms against
    0.17 ms (205x); in a `tf.function` 1.75 against 0.86 ms, 0.90 against
    0.66 ms and 1.40 against 0.36 ms (1.4x-3.9x), with a first call (the
    trace) of 70, 294 and 63 ms against 24, 27 and 16 ms. A gather per row
    of 64 rows of 16 ids: 2.82 against 0.19 ms eagerly (15x), 0.56 against
    0.42 ms traced; 64 draws of `tf.random.normal((32,))` stacked: 6.92
    against 0.14 ms for one draw of `(64, 32)` eagerly (49x), 0.37 against
    0.26 ms traced.

    ## Example
    ```python
    images = tf.map_fn(tf.image.per_image_standardization, images)
    gray = tf.stack([tf.image.rgb_to_grayscale(image) for image in tf.unstack(images)])
    ```

    Use instead:
    ```python
    images = tf.image.per_image_standardization(images)
    gray = tf.image.rgb_to_grayscale(images)
    ```

    ## Fix safety
    The fix calls the ops once on the batch (`tf.map_fn` and `tf.stack` of a
    comprehension; the three-statement loop is reported without a fix). It is
    safe when the derivation found the ops bit-identical per element and on
    the batch, the batch is known to be a tensor or a NumPy array, and the
    ops take a batch of any rank the per-element call takes. It is unsafe
    when float results may differ by up to 16 units in the last place
    (`tf.exp`, `tf.nn.sigmoid`, `tf.nn.elu`: a vectorised kernel rounds a long
    batch differently from a short row), when the batch's kind is not known
    here (a `tf.map_fn` over a parameter: a Python list of tensors would be a
    nested structure). No fix when an extra argument is a name (its value is not known).
    A `tf.map_fn` whose function changes the dtype and that gives no
    `fn_output_signature` raises (the output dtype defaults to the input's):
    the fix, which makes it run, is unsafe there too.

    ## Measured effect
    `examples/TFG408` (standardising a batch of images with `tf.map_fn` and
    turning them to grayscale in a comprehension): equivalent, same values.
    """

    code = "TFG408"
    name = "per-element-batchable-op"
    message = "an op applied to each element of a batch when one call on the batch does the same"
    needs = (("tensorflow",), ("map_fn", "vectorized_map", "stack"))
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        found = ctx.per_element.call(node, ctx.scope)
        if found is None:
            return
        form, batched, batch = found
        if batched.raises_on:
            return  # an op of at most 4 dimensions: real maps over one are over videos or volumes
        if form == "draw":
            ctx.report(node, f"`tf.stack` of {_ops(batched.ops)} drawn once per iteration: draw all of them in "
                             f"one call, with a leading axis of the loop's count")
            return
        how = "`tf.stack` of" if form == "stack" else f"`tf.{form}` over"
        ctx.report(node, f"{how} {_ops(batched.ops)} per element: {_ONE_CALL}",
                   self._fix(batched, batch, node, ctx))

    def visit_For(self, node: cst.For, ctx) -> None:
        found = ctx.per_element.appended(node, ctx.scope)
        if found is None or found[0].raises_on:
            return
        batched, _batch, name = found
        ctx.report(node, f"a loop appending {_ops(batched.ops)} of each element to `{name}`, then `tf.stack`: "
                         f"{_ONE_CALL}")

    @staticmethod
    def _fix(batched, batch, node, ctx):
        if not batched.literal or not batched.ops:
            return None
        known = ctx.per_element.is_batch(batch, ctx.scope)
        safe = batched.exact and known and not batched.raises_dtype  # (ops with raises_on are not reported)
        return Fix(f"Call {_ops(batched.ops)} once on the batch", Safety.SAFE if safe else Safety.UNSAFE,
                   {node: batched.on(batch)})


PerElementBatchableOp.cases = [
    flagged(
        """
        import numpy as np
        import tensorflow as tf

        images = tf.random.uniform((4, 8, 8, 3), seed=1)
        a = tf.map_fn(tf.image.per_image_standardization, images)
        b = tf.map_fn(lambda image: tf.image.adjust_contrast(image, 2.0), images, fn_output_signature=tf.float32)
        c = tf.stack([tf.image.rgb_to_grayscale(image) for image in tf.unstack(images)])
        d = tf.stack([tf.cast(images[i], tf.float16) * 2 for i in range(len(images))])
        e = tf.map_fn(lambda x: tf.nn.sigmoid(x), images)
        labels = np.array([[0, 1], [2, 0]])
        f = tf.stack([tf.one_hot(row, 3) for row in labels])
        table = tf.random.uniform((6, 2), seed=2)
        ids = tf.constant([[0, 5], [3, 3]])
        g = tf.stack([tf.gather(table, row) for row in tf.unstack(ids)])
        h = tf.vectorized_map(tf.nn.relu, images)
        noise = tf.stack([tf.random.normal((3,)) for _ in range(4)])
        scaled = tf.map_fn(lambda image: image / 255.0, images)
        """,
        """
        import numpy as np
        import tensorflow as tf

        images = tf.random.uniform((4, 8, 8, 3), seed=1)
        a = tf.image.per_image_standardization(images)
        b = tf.image.adjust_contrast(images, 2.0)
        c = tf.image.rgb_to_grayscale(images)
        d = (tf.cast(images, tf.float16) * 2)
        e = tf.nn.sigmoid(images)
        labels = np.array([[0, 1], [2, 0]])
        f = tf.one_hot(labels, 3)
        table = tf.random.uniform((6, 2), seed=2)
        ids = tf.constant([[0, 5], [3, 3]])
        g = tf.gather(table, ids)
        h = tf.nn.relu(images)
        noise = tf.stack([tf.random.normal((3,)) for _ in range(4)])
        scaled = (images / 255.0)
        """,
        at=[(5, 5, "`tf.map_fn` over `tf.image.per_image_standardization` per element: "
                   "one call on the whole batch computes the same"),
            (6, 5, "`tf.map_fn` over `tf.image.adjust_contrast` per element"),
            (7, 5, "`tf.stack` of `tf.image.rgb_to_grayscale` per element"),
            (8, 5, "`tf.stack` of `tf.cast` (with `*`) per element"),
            (9, 5, "`tf.map_fn` over `tf.nn.sigmoid` per element"),
            (11, 5, "`tf.stack` of `tf.one_hot` per element"),
            (14, 5, "`tf.stack` of `tf.gather` per element"),
            (15, 5, "`tf.vectorized_map` over `tf.nn.relu` per element"),
            (16, 9, "`tf.stack` of `tf.random.normal` drawn once per iteration"),
            (17, 10, "`tf.map_fn` over arithmetic (`/`) per element")],
        run="result = [a, b, c, d, e, f, g, h, scaled]",
        effect="close",
        note="sigmoid rounds a few ULPs apart, standardization may change the dtype with no output "
             "signature given: unsafe; contrast with a signature, stacks of grayscale, cast, one_hot and "
             "gather on a known batch: safe",
    ),
    flagged(
        """
        import tensorflow as tf

        def preprocess(images):
            return tf.map_fn(lambda image: tf.image.convert_image_dtype(image, tf.float32), images,
                             fn_output_signature=tf.float32)

        def saturate(images, factor):
            out = []
            for image in tf.unstack(images):
                out.append(tf.image.adjust_saturation(image, factor))
            return tf.stack(out)

        def brighten(images, delta):
            return tf.map_fn(lambda image: tf.image.adjust_brightness(image, delta), images)

        x = preprocess(tf.cast(tf.random.stateless_uniform((2, 4, 4, 3), (1, 2), maxval=255), tf.uint8))
        y = saturate(x, 2.0)
        z = brighten(x, 0.1)
        """,
        """
        import tensorflow as tf

        def preprocess(images):
            return tf.image.convert_image_dtype(images, tf.float32)

        def saturate(images, factor):
            out = []
            for image in tf.unstack(images):
                out.append(tf.image.adjust_saturation(image, factor))
            return tf.stack(out)

        def brighten(images, delta):
            return tf.map_fn(lambda image: tf.image.adjust_brightness(image, delta), images)

        x = preprocess(tf.cast(tf.random.stateless_uniform((2, 4, 4, 3), (1, 2), maxval=255), tf.uint8))
        y = saturate(x, 2.0)
        z = brighten(x, 0.1)
        """,
        at=[(4, 12, "`tf.map_fn` over `tf.image.convert_image_dtype` per element"),
            (9, 5, "a loop appending `tf.image.adjust_saturation` of each element to `out`, then `tf.stack`")],
        run="result = [x, y, z]",
        note="a parameter as the batch: the map_fn fix is unsafe; the loop has no fix; a parameter "
             "`delta` of unknown kind is not reported",
    ),
    clean(
        """
        import tensorflow as tf

        x = tf.ones((3, 4))
        a = tf.map_fn(tf.reduce_sum, x)
        b = tf.map_fn(lambda row: tf.nn.softmax(row, 0), x)
        c = tf.stack([tf.argmax(row) for row in tf.unstack(x)])
        d = tf.map_fn(lambda pair: tf.maximum(pair[0], pair[1]), (x, x), fn_output_signature=tf.float32)
        e = tf.map_fn(tf.image.random_flip_left_right, tf.ones((2, 4, 4, 3)))
        f = tf.stack([tf.image.resize(image, [2, 2]) for image in [tf.ones((4, 4, 3)), tf.ones((6, 6, 3))]])
        g = tf.map_fn(lambda image: tf.image.resize(image, [2, 2], method="nearest"), tf.ones((2, 4, 4, 3)))
        h = tf.stack([tf.nn.relu(x[i]) for i in range(3)])
        i = tf.stack([tf.nn.relu(row) for row in tf.unstack(x)], axis=1)
        j = tf.map_fn(lambda row: row * row, x)
        k = tf.stack([tf.random.normal((3,), mean=float(step)) for step in range(4)])
        videos = tf.ones((2, 3, 4, 4, 3))
        m = tf.map_fn(lambda video: tf.image.resize(video, [2, 2]), videos)
        n = tf.stack([tf.image.flip_left_right(image) for image in tf.unstack(tf.ones((2, 4, 4, 3)))])
        o = tf.stack([row for row in tf.unstack(x)])
        p = tf.map_fn(lambda row: row, x)
        """,
        note="reductions and axes move with the batch axis; a tuple of sequences; random ops; images of "
             "different sizes in a list; a keyword not derived; a range not tied to the batch; "
             "another stacking axis; an element used twice; draws that depend on the iteration; ops of at "
             "most 4 dimensions (over videos the per-element map is needed); the element itself, no work",
    ),
]
