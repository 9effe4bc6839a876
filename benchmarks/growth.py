"""How check time and memory grow with the size of one file.

    python benchmarks/growth.py [--sizes 1000,10000,30000,100000]
                                [--variants blocks,function,module]
                                [--no-fix] [--fix-max LINES] [--profile LINES]

Generates TensorFlow 2 files of about each size in lines and measures each in
a fresh subprocess. Variants:

* ``blocks``: a block of varied code (``tf.function``s, loops calling them
  with Python values, ``tf.function`` objects made in loops, datasets, a Keras
  model class, NumPy round trips) repeated with unique names per copy;
* ``function``: the loop bodies of that block, repeated inside one huge
  function (one scope, one loop around everything);
* ``module``: the same inside one module-level loop.

For each file it prints the bare LibCST parse time, the full check time
(``lint_source`` with every rule), check / parse, milliseconds per line,
the peak memory of the check as a multiple of the file's size, counted two
ways: the Python objects it allocates (``tracemalloc``, a separate pass) and
the growth of the process's peak resident memory (which also sees LibCST's
native parser), each beside the bare parse's (the floor); and the cost
of ``--fix --unsafe-fixes`` (``fix_source``) as a multiple of the check.
All figures are ratios within this one run: machines here are noisy, so
compare ratios and their growth, not seconds. A linear engine keeps
check / parse, ms per line and the memory multiple flat as the size grows.

``--profile LINES`` runs cProfile over the check of one ``blocks`` file of
that size (``--variants`` picks another) and prints the functions with the
most cumulative time.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from typing import Dict, Optional

HEADER = """\
import numpy as np
import tensorflow as tf

EPOCHS = 3


@tf.function
def shared_step(x, lr):
    return x * lr


def shared_plain(x, s):
    return x


shared_wrapped = tf.function(shared_plain)
"""

# Module-level code, ``{n}`` a unique suffix per copy.
BLOCK = '''

@tf.function
def train_step_{n}(x, lr):
    y = tf.matmul(x, x)
    if tf.reduce_sum(y) > 0:
        y = y * lr
    return y


def plain_{n}(x, s):
    return x + s


wrapped_{n} = tf.function(plain_{n})
lam_{n} = tf.function(lambda x, s: x)


class Model{n}(tf.keras.Model):
    def __init__(self, units):
        super().__init__()
        self.dense = tf.keras.layers.Dense(units)
        self.fn = tf.function(self._fn)

    def _fn(self, x, s):
        return x

    @tf.function
    def step(self, x, s):
        return self.dense(x)

    def call(self, x, training=False):
        return self.dense(x)

    def fit_{n}(self, ds, epochs):
        step = 0
        for epoch in range(epochs):
            for x in ds:
                self.step(x, step)
                self.fn(x, epoch)
                self.step(x, True)
                step += 1
        return step


def make_dataset_{n}(paths, batch):
    ds = tf.data.Dataset.from_tensor_slices(paths)
    ds = ds.map(lambda p: tf.io.read_file(p))
    ds = ds.shuffle(1000).batch(batch).cache()
    return ds


def train_{n}(x, ds, epochs, w):
    for epoch in range(epochs):
        lr = 0.1 * 0.5 ** epoch
        for i, batch in enumerate(ds):
            train_step_{n}(batch, lr)
            wrapped_{n}(batch, i)
            lam_{n}(x, f"e{{i}}")
    for b in ds:
        step = tf.function(lambda v: tf.tanh(v @ w))
        y = step(b)
        tf.function(plain_{n})(b, 1)

        @tf.function
        def inner(v):
            return v * 2.0
        inner(b)
    values = np.zeros((4, 4))
    t = tf.constant(values)
    return [wrapped_{n}(t, k + 1) for k in range(epochs)]


def evaluate_{n}(model, batches):
    @tf.function
    def step(x):
        return model(x)
    for x in batches:
        y = step(x)
        print(y.numpy())
    return y


def main_{n}(model, batches):
    for _ in range(EPOCHS):
        evaluate_{n}(model, batches)
'''

# The body of one loop turn (indented by ``{pad}``), ``{n}`` unique per copy.
LOOP_BODY = '''\
{pad}lr_{n} = 0.1 * 0.5 ** epoch
{pad}count_{n} = 0
{pad}for x_{n} in ds:
{pad}    shared_step(x_{n}, lr_{n})
{pad}    shared_wrapped(x_{n}, count_{n})
{pad}    count_{n} += 1
{pad}    f_{n} = tf.function(lambda v: tf.tanh(v @ w))
{pad}    y_{n} = f_{n}(x_{n})

{pad}    @tf.function
{pad}    def inner_{n}(v):
{pad}        return v * 2.0
{pad}    inner_{n}(x_{n})
{pad}    values_{n} = np.zeros((4, 4))
{pad}    t_{n} = tf.constant(values_{n})
{pad}for k_{n} in range(epoch):
{pad}    shared_wrapped(w, k_{n} + 1)
{pad}ds_{n} = tf.data.Dataset.from_tensor_slices(w).map(lambda v: v + 1).batch(8).shuffle(10)
'''


def generate(variant: str, lines: int = 0, copies: Optional[int] = None) -> str:
    """A TF2 file of about ``lines`` lines (at least that many), or of exactly
    ``copies`` copies of the variant's code."""
    parts = [HEADER]
    if variant == "function":
        parts.append("\n\ndef run_all(ds, w, epochs):\n    for epoch in range(epochs):\n")
        pad, copy = " " * 8, LOOP_BODY
    elif variant == "module":
        parts.append("\nds = tf.data.Dataset.range(10)\nw = tf.ones((4, 4))\nfor epoch in range(EPOCHS):\n")
        pad, copy = " " * 4, LOOP_BODY
    else:
        pad, copy = "", BLOCK
    count = sum(part.count("\n") for part in parts)
    n = 0
    while (count < lines) if copies is None else (n < copies):
        text = copy.format(n=n, pad=pad)
        parts.append(text)
        count += text.count("\n")
        n += 1
    return "".join(parts)


def measure(variant: str, lines: int, fix: bool) -> Dict[str, float]:
    """Time and memory figures for one generated file (run in a fresh process:
    the check comes first, so its peak resident memory is its own)."""
    import tracemalloc

    import libcst as cst

    from tflint_gpu.engine.lint import lint_source
    from tflint_gpu.rules.base import all_rules

    rules = list(all_rules())
    lint_source(generate(variant, copies=1), "warm-up.py", rules)  # imports, caches: not the file's cost
    source = generate(variant, lines)
    result: Dict[str, float] = {"lines": source.count("\n"), "bytes": len(source.encode())}
    base = _rss()
    start = time.perf_counter()
    findings = lint_source(source, "generated.py", rules).findings
    result["check"] = time.perf_counter() - start
    result["check_rss"] = _peak_rss() - base
    result["findings"] = len(findings)
    start = time.perf_counter()
    cst.parse_module(source)
    result["parse"] = time.perf_counter() - start
    if fix:
        from tflint_gpu.engine.fix import fix_source

        start = time.perf_counter()
        fix_source(source, "generated.py", rules, unsafe=True)
        result["fix"] = time.perf_counter() - start
    gc.collect()
    tracemalloc.start()
    module = cst.parse_module(source)
    result["parse_peak"] = tracemalloc.get_traced_memory()[1]
    del module
    tracemalloc.reset_peak()
    lint_source(source, "generated.py", rules)
    result["check_peak"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result


def measure_parse_rss(variant: str, lines: int) -> Dict[str, float]:
    """The peak resident memory of the bare parse, in a fresh process (LibCST's
    native parser allocates outside tracemalloc's view)."""
    import libcst as cst

    cst.parse_module(generate(variant, copies=1))
    source = generate(variant, lines)
    base = _rss()
    cst.parse_module(source)
    return {"parse_rss": _peak_rss() - base}


def _rss() -> int:
    """This process's resident memory now, in bytes (Linux; else 0)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 0


def _peak_rss() -> int:
    """The most resident memory this process has had, in bytes (0 where unknown)."""
    try:
        import resource
    except ImportError:
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def profile(variant: str, lines: int, top: int) -> None:
    import cProfile
    import pstats

    from tflint_gpu.engine.lint import lint_source
    from tflint_gpu.rules.base import all_rules

    rules = list(all_rules())
    source = generate(variant, lines)
    profiler = cProfile.Profile()
    profiler.enable()
    lint_source(source, "generated.py", rules)
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,30000,100000", help="file sizes in lines, comma-separated")
    parser.add_argument("--variants", default="blocks,function,module")
    parser.add_argument("--no-fix", action="store_true", help="do not time --fix")
    parser.add_argument("--fix-max", type=int, default=100000, help="time --fix only up to this many lines")
    parser.add_argument("--profile", type=int, metavar="LINES", help="profile the check of one file instead")
    parser.add_argument("--top", type=int, default=35)
    parser.add_argument("--one", nargs=2, metavar=("VARIANT", "LINES"), help=argparse.SUPPRESS)
    parser.add_argument("--fix", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--parse-rss", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    if args.one:
        variant, lines = args.one[0], int(args.one[1])
        print(json.dumps(measure_parse_rss(variant, lines) if args.parse_rss else measure(variant, lines, args.fix)))
        return
    if args.profile:
        profile(variants[0], args.profile, args.top)
        return
    sizes = [int(s) for s in args.sizes.split(",") if s]
    print(f"{'variant':9} {'lines':>7} {'MB':>6} {'parse s':>8} {'check s':>8} {'check/parse':>11} "
          f"{'ms/line':>8} {'mem x file':>10} {'parse mem x':>11} {'RSS x file':>10} {'parse RSS x':>11} "
          f"{'fix/check':>9} {'findings':>8}")
    for variant in variants:
        for lines in sizes:
            fix = not args.no_fix and lines <= args.fix_max
            command = [sys.executable, __file__, "--one", variant, str(lines)]
            r: Dict[str, float] = {}
            for extra in (["--fix"] if fix else [], ["--parse-rss"]):
                done = subprocess.run(command + extra, capture_output=True, text=True)
                if done.returncode != 0:
                    break
                r.update(json.loads(done.stdout.strip().splitlines()[-1]))
            if done.returncode != 0:
                print(f"{variant:9} {lines:>7} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            fix_text = f"{r['fix'] / r['check']:9.2f}" if "fix" in r else f"{'-':>9}"
            print(f"{variant:9} {int(r['lines']):>7} {r['bytes'] / 1e6:6.2f} {r['parse']:8.2f} {r['check']:8.2f} "
                  f"{r['check'] / r['parse']:11.2f} {1000 * r['check'] / r['lines']:8.3f} "
                  f"{r['check_peak'] / r['bytes']:10.0f} {r['parse_peak'] / r['bytes']:11.0f} "
                  f"{r['check_rss'] / r['bytes']:10.0f} {r['parse_rss'] / r['bytes']:11.0f} {fix_text} "
                  f"{int(r['findings']):>8}", flush=True)


if __name__ == "__main__":
    main()
