"""TFG301/TFG302/TFG303 variants: every pipeline reorder the rules make, in every layout.

Small in-memory pipelines, each written on one line and one call per line
(bare, with a comment ending each call's line, with a comment line above each
call), and run for two epochs. The reorders: a ``prefetch`` at each position
before the end (and a second one already last: removed); ``cache()`` before an
expensive ``map`` (``tf.image.resize``, ``tf.io.decode_base64``; with and
without ``num_parallel_calls``/``deterministic``); ``cache().take(k)``; a
random ``map`` before ``cache()``; and several of them on one pipeline, fixed
by all three rules together.

Effects, as the rules' docs say: moving ``prefetch``, a deterministic map
before the cache and ``take`` before the cache over a deterministic source
are safe (identical). Caching before a random map changes the elements of the
second epoch (``changes``) when the randomness is a ``tf.random.Generator`` or
a Keras random layer; a plain ``tf.random.*`` op restarts its sequence with
each new iterator under ``tf.random.set_seed`` (which the test sets), so there
the values stay identical. ``take(k).cache()`` over a source that differs per
epoch freezes the first sample (``changes``). Pipelines with a ``shuffle``
before the cache get no fix (they are generated too, and stay unchanged).
"""
from __future__ import annotations

import itertools
from typing import Iterator, List, Sequence, Tuple

from fix_execution import Variant

RUN = "epochs = [list(d.as_numpy_iterator()) for d in (ds, ds)]"
LAYOUTS = ("line", "lines", "trailing", "leading")
IMAGES = "images = tf.reshape(tf.range(36, dtype=tf.float32), (3, 2, 2, 3))\n"
RANGE = "tf.data.Dataset.range(12)"
IMAGE_SOURCE = "tf.data.Dataset.from_tensor_slices(images)"


def comment(stage: str, i: int) -> str:
    """A comment naming its call, so that a test can tell where it ended up."""
    return f"# {i}: {stage.split('(', 1)[0]}"


def render(source: str, stages: Sequence[str], layout: str, target: str = "ds") -> str:
    if layout == "line":
        return f"{target} = {source}" + "".join("." + s for s in stages) + "\n"
    lines = [f"{target} = (", f"    {source}"]
    for i, stage in enumerate(stages):
        if layout == "leading":
            lines.append(f"    {comment(stage, i)}")
        lines.append(f"    .{stage}" + (f"  {comment(stage, i)}" if layout == "trailing" else ""))
    lines.append(")")
    return "\n".join(lines) + "\n"


def module(prelude: str, source: str, stages: Sequence[str], layout: str, after: str = "") -> str:
    return "import tensorflow as tf\n\n" + prelude + render(source, stages, layout) + after


# -- TFG302: prefetch before the end ---------------------------------------
BODIES_302: List[Tuple[str, ...]] = [
    ("map(lambda x: x * 2)", "batch(3)"),
    ("filter(lambda x: x % 3 != 0)", "map(lambda x: x + 1, num_parallel_calls=tf.data.AUTOTUNE)", "batch(2)"),
    ("map(lambda x: x * 2)", "take(7)", "batch(2, drop_remainder=True)"),
    ("skip(2)", "repeat(2)", "batch(4)"),
    ("batch(4)", "unbatch()", "map(lambda x: x - 1)"),
    ("shuffle(12, seed=3)", "batch(3)"),
    ("cache()", "map(lambda x: x * 5)", "take(5)"),
]
PREFETCH_ARGS = ("1", "tf.data.AUTOTUNE", "buffer_size=2")


def _prefetch_variants() -> Iterator[Variant]:
    args = itertools.cycle(PREFETCH_ARGS)
    for b, body in enumerate(BODIES_302):
        for position in range(len(body)):
            for layout in LAYOUTS:
                arg = next(args)
                stages = list(body[:position]) + [f"prefetch({arg})"] + list(body[position:])
                yield Variant(f"302-body{b}-at{position}-{layout}", module("", RANGE, stages, layout),
                              ("TFG302",), run=RUN)
                if position == 0:  # a pipeline that already ends with a prefetch: the early one goes
                    stages = stages + ["prefetch(tf.data.AUTOTUNE)"]
                    yield Variant(f"302-body{b}-at0-lastalready-{layout}", module("", RANGE, stages, layout),
                                  ("TFG302",), run=RUN)


# -- TFG301: cache before an expensive map ---------------------------------
UPSCALE = "def upscale(v):\n    return tf.image.resize(v, (4, 4))\n\n"
EXPENSIVE_MAPS = [
    ("", IMAGE_SOURCE, "map(lambda v: tf.image.resize(v, (4, 4)))"),
    ("", IMAGE_SOURCE, "map(lambda v: tf.image.resize(v, (4, 4)), num_parallel_calls=tf.data.AUTOTUNE)"),
    (UPSCALE, IMAGE_SOURCE, "map(upscale, num_parallel_calls=2, deterministic=True)"),
    (UPSCALE, IMAGE_SOURCE, "map(upscale, deterministic=False)"),  # unsafe, but sequential: same order
    ("", IMAGE_SOURCE, "map(lambda v: tf.image.resize(v, (3, 3), method='nearest'))"),
    ("", 'tf.data.Dataset.from_tensor_slices([b"YWJj", b"ZGVm", b"Z2hp"])', "map(tf.io.decode_base64)"),
]
CONTEXTS_301 = [((), ()), (("map(lambda v: v * 2)",), ()), ((), ("batch(2)",)), (("take(2)",), ("repeat(2)",))]


def _expensive_variants() -> Iterator[Variant]:
    contexts = itertools.cycle(CONTEXTS_301)
    for m, (helper, source, mapping) in enumerate(EXPENSIVE_MAPS):
        for layout in LAYOUTS:
            for _ in range(2):
                before, after = next(contexts)
                if "decode_base64" in mapping and before:
                    before = ()  # strings: no arithmetic before the decode
                stages = list(before) + ["cache()", mapping] + list(after)
                code = module(IMAGES + helper, source, stages, layout)
                yield Variant(f"301-expensive{m}-{'-'.join(s.split('(')[0] for s in stages)}-{layout}", code,
                              ("TFG301",), run=RUN)


# -- TFG301: cache().take(k) -------------------------------------------------
TAKE_SOURCES = [
    ("", "tf.data.Dataset.range(10).map(lambda x: x * 2)", "identical"),
    ("", "tf.data.Dataset.random(seed=4, rerandomize_each_iteration=True)", "changes"),
    ("", "tf.data.Dataset.range(10).shuffle(10)", "identical"),  # refused: shuffle before the cache
]


def _take_variants() -> Iterator[Variant]:
    for s, (prelude, source, effect) in enumerate(TAKE_SOURCES):
        for k, (layout, suffix) in enumerate(itertools.product(LAYOUTS, ((), ("batch(2)",), ("repeat(2)",)))):
            count = (1, 3, 20)[k % 3] if "random" not in source else (1, 3)[k % 2]
            stages = ["cache()", f"take({count})"] + list(suffix)
            yield Variant(f"301-take{s}-{count}-{'-'.join(x.split('(')[0] for x in suffix)}-{layout}",
                          module(prelude, source, stages, layout), ("TFG301",), effect=effect, run=RUN)


# -- TFG301: a random map before the cache -----------------------------------
GENERATOR = "rng = tf.random.Generator.from_seed(7)\n"
RANDOM_MAPS = [
    (GENERATOR, RANGE, "map(lambda x: x + rng.uniform((), minval=0, maxval=100, dtype=tf.int64))", "changes"),
    ("", RANGE, "map(lambda x: x + tf.random.uniform((), maxval=100, dtype=tf.int64))", "identical"),
    ("import keras\n\nflip = keras.layers.RandomFlip('horizontal')\n" + IMAGES, IMAGE_SOURCE,
     "map(lambda v: flip(v, training=True))", "changes"),
]
CONTEXTS_RANDOM = [((), (), ()), (("map(lambda x: x * 3)",), (), ()), ((), ("map(tf.math.abs)",), ()),
                   ((), (), ("batch(2)",))]


def _random_variants() -> Iterator[Variant]:
    for r, (prelude, source, mapping, effect) in enumerate(RANDOM_MAPS):
        contexts = CONTEXTS_RANDOM if "keras" not in prelude else CONTEXTS_RANDOM[:1] + CONTEXTS_RANDOM[3:]
        for (before, between, after), layout in itertools.product(contexts, LAYOUTS):
            if "keras" in prelude and layout == "leading":
                continue  # Keras variants are the slow ones (a Keras session each)
            stages = list(before) + [mapping] + list(between) + ["cache()"] + list(after)
            name = "-".join(s.split("(")[0] for s in stages)
            yield Variant(f"301-random{r}-{name}-{layout}", module(prelude, source, stages, layout),
                          ("TFG301",), effect=effect, run=RUN)
    # A shuffle before the cache: no fix.
    for layout in LAYOUTS:
        stages = ["shuffle(12)", RANDOM_MAPS[0][2], "cache()"]
        yield Variant(f"301-random-shuffled-{layout}", module(GENERATOR, RANGE, stages, layout), ("TFG301",),
                      effect="changes", run=RUN)


# -- Several rules on one pipeline --------------------------------------------
ALL = ("TFG301", "TFG302", "TFG303")
COMBINED = [
    # prefetch mid-pipeline + cache before an expensive map
    (IMAGES, IMAGE_SOURCE, ["prefetch(1)", "cache()", "map(lambda v: tf.image.resize(v, (4, 4)))", "batch(2)"],
     "", "identical"),
    (IMAGES, IMAGE_SOURCE, ["cache()", "prefetch(2)", "map(lambda v: tf.image.resize(v, (4, 4)))"], "",
     "identical"),
    # cache before an expensive map + consumed with no prefetch (TFG303)
    (IMAGES, IMAGE_SOURCE, ["cache()", "map(lambda v: tf.image.resize(v, (4, 4)))", "batch(2)"],
     "for batch in ds:\n    pass\n", "identical"),
    # prefetch mid-pipeline + cache().take(k)
    ("", RANGE, ["prefetch(1)", "map(lambda x: x * 2)", "cache()", "take(4)"], "", "identical"),
    ("", RANGE, ["cache()", "prefetch(1)", "take(4)", "batch(2)"], "", "identical"),
    # prefetch mid-pipeline + a random map before the cache
    (GENERATOR, RANGE, ["prefetch(2)", "map(lambda x: x + rng.uniform((), 0, 9, dtype=tf.int64))", "cache()",
                        "batch(3)"], "", "changes"),
    # cache().take(k) + consumed with no prefetch
    ("", RANGE, ["map(lambda x: x * 2)", "cache()", "take(5)"], "for x in ds:\n    pass\n", "identical"),
    # all three reorders of TFG301 and a misplaced prefetch
    (IMAGES + GENERATOR, IMAGE_SOURCE,
     ["prefetch(1)", "map(lambda v: v + rng.normal(()))", "cache()", "map(lambda v: tf.image.resize(v, (4, 4)))",
      "take(2)"], "", "changes"),
]


def _combined_variants() -> Iterator[Variant]:
    for c, (prelude, source, stages, after, effect) in enumerate(COMBINED):
        for layout in LAYOUTS:
            yield Variant(f"all-{c}-{layout}", module(prelude, source, stages, layout, after), ALL,
                          effect=effect, run=RUN)


def variants() -> Iterator[Variant]:
    yield from _prefetch_variants()
    yield from _expensive_variants()
    yield from _take_variants()
    yield from _random_variants()
    yield from _combined_variants()


# -- TFG304 / TFG306: shuffle order and parallel calls (appended) -------------
# TFG304 moves a shuffle to right after the cache (the order changes: "changes";
# the first epoch keeps the seeded order, the second differs). TFG306 adds
# `num_parallel_calls=tf.data.AUTOTUNE` to a random map (which element gets which
# draw varies: "random") and to an interleave (identical with a cycle length,
# another order without one: "changes").
SHUFFLED_CACHES = [
    ["shuffle(12, seed=5)", "cache()"],
    ["shuffle(12)", "map(lambda x: x * 2)", "cache()", "batch(3)"],
    ["map(lambda x: x + 1)", "shuffle(6, seed=2)", "filter(lambda x: x % 3 != 0)", "prefetch(1)", "cache()"],
    ["shuffle(12)", "batch(3)", "cache()"],  # refused: a batch in between
]
PARALLEL_MAPS = [
    ("", RANGE, "map(lambda x: x + tf.random.uniform((), maxval=100, dtype=tf.int64))", "random"),
    (GENERATOR, RANGE, "map(lambda x: x + rng.uniform((), minval=0, maxval=100, dtype=tf.int64))", "random"),
    ("", RANGE, "interleave(lambda i: tf.data.Dataset.range(i, i + 3), cycle_length=2)", "identical"),
    ("", RANGE, "interleave(lambda i: tf.data.Dataset.range(i * 10, i * 10 + i % 4), 3, 2)", "identical"),
    ("", RANGE, "interleave(lambda i: tf.data.Dataset.range(i * 10, i * 10 + 7))", "changes"),
]
ORDER_RULES = ("TFG301", "TFG302", "TFG303", "TFG304", "TFG306")
COMBINED_ORDER = [
    # a shuffle before a random map before the cache: TFG304, TFG301 and TFG306 together
    (GENERATOR, RANGE, ["shuffle(12)", "map(lambda x: x + rng.uniform((), 0, 9, dtype=tf.int64))", "cache()",
                        "batch(3)"]),
    # a shuffle before a cache, a prefetch mid-pipeline, an interleave
    ("", RANGE, ["shuffle(12, seed=1)", "prefetch(1)", "cache()",
                 "interleave(lambda i: tf.data.Dataset.range(i, i + 2), cycle_length=2)", "batch(2)"]),
    # a random map without parallel calls, then an expensive map after the cache
    (IMAGES + GENERATOR, IMAGE_SOURCE, ["map(lambda v: v + rng.normal(()))", "cache()",
                                        "map(lambda v: tf.image.resize(v, (4, 4)))"]),
]


def _order_variants() -> Iterator[Variant]:
    for s, stages in enumerate(SHUFFLED_CACHES):
        for layout in LAYOUTS:
            yield Variant(f"304-{s}-{layout}", module("", RANGE, stages, layout), ("TFG304",), effect="changes",
                          run=RUN)
    for m, (prelude, source, stage, effect) in enumerate(PARALLEL_MAPS):
        for context, layout in zip(((), ("batch(2)",), ("map(lambda x: x * 2)",), ("take(20)",)), LAYOUTS):
            stages = [stage] + list(context)
            # "-npc": the comment check of test_dataset_fixes keys calls by their text, which
            # this fix changes; test_each_call_keeps_its_comments_with_parallel_calls checks these.
            yield Variant(f"306-{m}-{layout}-npc", module(prelude, source, stages, layout), ("TFG306",),
                          effect=effect, run=RUN)
    for c, (prelude, source, stages) in enumerate(COMBINED_ORDER):
        for layout in LAYOUTS:
            yield Variant(f"order-all-{c}-{layout}-npc", module(prelude, source, stages, layout), ORDER_RULES,
                          effect="changes", run=RUN)


_variants_before_order = variants


def variants() -> Iterator[Variant]:  # noqa: F811  (extends the generator above)
    yield from _variants_before_order()
    yield from _order_variants()
