"""Write docs/keras3-migration.md: what tflint-gpu reports of each Keras 3 / TF 2.16+ breakage.

Two lists are covered:

* every breaking entry of the derived migration table
  (``tflint_gpu/semantic/data/keras3_migration.json``, made by
  ``scripts/derive_migration.py``), and
* the incompatibilities Keras lists itself (keras-team/keras issue 18467
  and the Keras 3 migration guide), each with a short example of the usage
  it breaks (``KERAS_LIST`` below: the one hand-written part, since it is a
  document's list).

Nothing is assumed: for each item the script writes the usage a user would
write (an import, an attribute, a method on an object of that class, a call
with that keyword), lints it with every rule, and records the codes that
report it and whether a fix is offered (safe, or unsafe only). It needs no
TensorFlow: the linter never imports it. Run from the repository root:

    python scripts/keras3_coverage.py            # rewrite the page
    python scripts/keras3_coverage.py --check    # exit 1 when the page is stale

tests/test_keras3_coverage.py runs ``--check``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tflint_gpu.engine.lint import lint_source  # noqa: E402
from tflint_gpu.findings import Safety  # noqa: E402
from tflint_gpu.rules.base import all_rules  # noqa: E402

TABLE = os.path.join(ROOT, "tflint_gpu", "semantic", "data", "keras3_migration.json")
PAGE = os.path.join(ROOT, "docs", "keras3-migration.md")
HEADER = "import keras\nimport tensorflow as tf\n"
# The objects the examples of Keras's list use, made as a user makes them.
OBJECTS = ("model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
           "layer = keras.layers.Dense(1)\n")

# Keras's own list of incompatibilities (issue 18467, "tf.keras <> Keras Core incompatibilities", and the
# migration guide), one usage each, as a user writes it. (item, example).
KERAS_LIST: List[Tuple[str, str]] = [
    ("`jit_compile` is True by default (\"auto\": XLA on GPU)", """\
        model.compile(optimizer="adam", loss="mse")
    """),
    ("`model.save()` to a TF SavedModel directory", """\
        model.save("saved_model_dir")
    """),
    ("`keras.models.load_model()` of a TF SavedModel", """\
        model = keras.models.load_model("saved_model_dir")
    """),
    ("`save_format=` of `model.save`", """\
        model.save("model.h5", save_format="h5")
    """),
    ("`save_weights` without the `.weights.h5` suffix", """\
        model.save_weights("checkpoints/ckpt")
    """),
    ("TF ops on Keras symbolic tensors while building a functional model", """\
        inputs = keras.Input((4,))
        a, b = tf.split(inputs, 2, axis=-1)
    """),
    ("AutoGraph is not applied to a custom layer's `call`: a Python `if` on a tensor", """\
        class Gate(keras.layers.Layer):
            def call(self, x):
                if tf.reduce_sum(x) > 0:
                    return x
                return -x
    """),
    ("`tf.Variable` as a layer attribute is not tracked as a weight", """\
        class Scale(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.w = tf.Variable(1.0)
    """),
    ("`Layer.add_loss` on a symbolic tensor / `Model.add_metric`", """\
        model.add_metric(tf.reduce_mean(outputs), name="mean")
    """),
    ("`Layer.updates`, `add_update`, `get_updates_for`", """\
        updates = layer.updates
    """),
    ("`keras.layers.experimental.preprocessing`", """\
        layer = tf.keras.layers.experimental.preprocessing.Rescaling(1.0 / 255)
    """),
    ("`keras.optimizers.legacy`", """\
        opt = tf.keras.optimizers.legacy.Adam()
    """),
    ("`keras.mixed_precision.experimental`", """\
        tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
    """),
    ("`Model.fit_generator` / `evaluate_generator` / `predict_generator`", """\
        model.fit_generator(gen, steps_per_epoch=10)
    """),
    ("`workers`/`use_multiprocessing`/`max_queue_size` of `fit` (moved to PyDataset)", """\
        model.fit(seq, workers=4, use_multiprocessing=True)
    """),
    ("`Metric.reset_states` (now `reset_state`)", """\
        metric = keras.metrics.Mean()
        metric.reset_states()
    """),
    ("`lr=` of optimizers (now `learning_rate=`)", """\
        opt = keras.optimizers.Adam(lr=0.001)
    """),
    ("`optimizer.variables()` (a list, not a method)", """\
        opt = keras.optimizers.Adam()
        v = opt.variables()
    """),
    ("`LossScaleOptimizer.get_scaled_loss` / `get_unscaled_gradients`", """\
        opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())
        scaled = opt.get_scaled_loss(loss)
    """),
    ("`self.compiled_loss` / `compiled_metrics` in a custom `train_step`", """\
        class Net(keras.Model):
            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    loss = self.compiled_loss(y, self(x), regularization_losses=self.losses)
                return {"loss": loss}
    """),
    ("`keras.backend.learning_phase` / `set_learning_phase`", """\
        tf.keras.backend.set_learning_phase(0)
    """),
    ("`keras.backend` session functions (`get_session`, `eval`...)", """\
        sess = tf.keras.backend.get_session()
    """),
    ("`keras.utils.Sequence` subclasses not calling `super().__init__()` (PyDataset; measured: only a "
     "UserWarning under Keras 3.15, `fit` runs)", """\
        class Batches(keras.utils.Sequence):
            def __init__(self, x):
                self.x = x
    """),
    ("`keras.Input(shape=<int>)`", """\
        inputs = keras.Input(shape=4)
    """),
    ("`super().__init__(self, ...)` in a Keras subclass", """\
        class Block(keras.layers.Layer):
            def __init__(self, units):
                super().__init__(self, name="block")
    """),
    ("Variable names carry no layer scope (`v.name` is `kernel`): name filters", """\
        decay = [v for v in model.trainable_variables if "dense_1/kernel" in v.name]
    """),
    ("`keras.layers.CuDNNLSTM` / `CuDNNGRU`", """\
        layer = tf.keras.layers.CuDNNLSTM(32)
    """),
    ("`keras.layers.DenseFeatures` / feature columns", """\
        layer = tf.keras.layers.DenseFeatures(columns)
    """),
    ("`keras.estimator.model_to_estimator`", """\
        est = tf.keras.estimator.model_to_estimator(model)
    """),
    ("`keras.utils.experimental.DatasetCreator`", """\
        creator = tf.keras.utils.experimental.DatasetCreator(fn)
    """),
    ("`Layer.dynamic=True` / `Model.run_eagerly` as a constructor argument", """\
        layer = keras.layers.Dense(3, dynamic=True)
    """),
    ("Deeply nested inputs/outputs of a functional `Model` (lists of lists)", """\
        model = keras.Model([[a, b], c], outputs)
    """),
]


# What runs around an item of Keras's list when its fix is executed (``--verify``): (before, after) the
# example: objects it needs, and code that uses what it made. The original runs where tf.keras is
# tf_keras (``keras`` is then ``tf.keras``), the fixed text under Keras 3.
PRELUDE = ("import os\nimport tempfile\nimport numpy as np\nos.chdir(tempfile.mkdtemp())\n"
           "def _batches():\n    while True:\n        yield np.ones((2, 4), np.float32), np.ones((2, 1), np.float32)\n"
           "gen = _batches()\n"
           "seq = tf.data.Dataset.from_tensor_slices((np.ones((4, 4), np.float32), np.ones((4, 1), np.float32)))"
           ".batch(2)\n")
KERAS_RUN: Dict[str, Tuple[str, str]] = {
    "`save_format=` of `model.save`": ("", "reloaded = keras.models.load_model(\"model.h5\", compile=False)\n"),
    "`save_weights` without the `.weights.h5` suffix": ("", "model.load_weights(_saved)\n"),
    "TF ops on Keras symbolic tensors while building a functional model": (
        "", "y = keras.Model(inputs, [a, b]).predict(np.ones((2, 4), np.float32), verbose=0)\n"),
    "`tf.Variable` as a layer attribute is not tracked as a weight": ("", "scale = Scale()\n"),
    "`keras.layers.experimental.preprocessing`": ("", "y = layer(np.ones((1, 2), np.float32))\n"),
    "`keras.mixed_precision.experimental`": ("", "keras.mixed_precision.set_global_policy(\"float32\")\n"),
    "`Model.fit_generator` / `evaluate_generator` / `predict_generator`": ("model.compile(\"sgd\", \"mse\")\n", ""),
    "`workers`/`use_multiprocessing`/`max_queue_size` of `fit` (moved to PyDataset)": (
        "model.compile(\"sgd\", \"mse\")\n", ""),
    "`self.compiled_loss` / `compiled_metrics` in a custom `train_step`": ("", """\
class Small(Net):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)

    def call(self, x):
        return self.dense(x)


net = Small()
net.compile("sgd", "mse")
history = net.fit(np.ones((4, 4), np.float32), np.ones((4, 1), np.float32), epochs=1, verbose=0)
"""),
    "`super().__init__(self, ...)` in a Keras subclass": ("", "block = Block(3)\n"),
}
VERIFIED = os.path.join(ROOT, "docs", "keras3-list-verified.json")
UPGRADE_SET = os.path.join(ROOT, "benchmarks", "upgrade", "RESULTS.md")  # run.py's table, kept by hand
LEGACY_HEADER = "import tensorflow as tf\nkeras = tf.keras\n"


def _saved(text: str) -> str:
    """``_saved = <the path the last save_weights call of text writes>`` (what the run loads)."""
    return "_saved = " + repr(text.rsplit("save_weights(", 1)[1].split('"')[1]) + "\n"


def fix_pairs() -> List[Tuple[str, str, str]]:
    """(item, original, fixed) for each item of Keras's list that the rules reporting it fix, with what
    runs around it (``KERAS_RUN``)."""
    from tflint_gpu.engine.fix import fix_source

    pairs = []
    for item, body in KERAS_LIST:
        found, fix = _lint(body, OBJECTS)
        if not fix:
            continue
        before_run, after_run = KERAS_RUN.get(item, ("", ""))
        source = HEADER + PRELUDE + OBJECTS + before_run + textwrap.dedent(body)
        fixed = fix_source(source, "example.py", [r for r in RULES if r.code in found], unsafe=True).source
        original_run = fixed_run = after_run
        if "_saved" in after_run:
            original_run, fixed_run = _saved(source) + after_run, _saved(fixed) + after_run
        pairs.append((item, LEGACY_HEADER + source[len(HEADER):] + original_run, fixed + fixed_run))
    return pairs


def verify() -> Dict[str, str]:
    """Execute each fix of Keras's list: the original where tf.keras is tf_keras, the fixed text under
    Keras 3 (needs TensorFlow, tf_keras and the tests' runner). item -> verdict."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import fix_execution  # noqa: E402  (the fix-execution tests' runner)

    pairs = fix_pairs()
    before = fix_execution.run_many([p[1] for p in pairs], legacy_keras=True)
    after = fix_execution.run_many([p[2] for p in pairs])
    verdicts = {}
    for (item, _, _), old, new in zip(pairs, before, after):
        if old.error:
            verdicts[item] = f"the original fails under tf_keras ({old.error.split(':')[0]})"
        elif new.error:
            verdicts[item] = f"the fix fails under Keras 3 ({new.error.split(':')[0]})"
        else:
            verdicts[item] = "runs"
    return verdicts


def _verified() -> Dict[str, str]:
    try:
        with open(VERIFIED, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError:
        return {}


def _lint(body: str, objects: str = "") -> Tuple[List[str], str]:
    """(codes reporting on the body, the fix offered: "safe", "unsafe" or "")."""
    source = HEADER + objects + textwrap.dedent(body)
    result = lint_source(source, "example.py", RULES)
    codes = sorted({f.code for f in result.findings})
    fixes = {f.fix.safety for f in result.findings if f.fix is not None}
    fix = "safe" if Safety.SAFE in fixes else "unsafe" if fixes else ""
    return codes, fix


def _writable(body: str) -> bool:
    try:
        compile(HEADER + body, "example.py", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


def _module_parent(qualname: str) -> Tuple[str, str]:
    parent, _, last = qualname.rpartition(".")
    return parent, last


def _spell(qualname: str, spelling: str) -> str:
    """``keras.x.y`` under a spelling: ``keras.x.y`` or ``tf.keras.x.y``."""
    return qualname if spelling == "keras" else "tf." + qualname


def _usages(entry: Dict) -> List[Tuple[str, str]]:
    """(form, body) of the usages that exercise one table entry."""
    kind = entry["kind"]
    qualname = entry["qualname"]
    if kind in ("module", "name"):
        forms = []
        for spelling in entry.get("breaks", ()):
            parent, last = _module_parent(qualname)
            module = parent if spelling == "keras" else "tensorflow." + parent
            forms.append((f"{spelling} import", f"from {module} import {last}\n"))
            forms.append((f"{spelling} attribute", f"value = {_spell(qualname, spelling)}\n"))
        return forms
    if kind == "tf_name":
        parent, last = _module_parent(qualname)
        return [("import", f"from {parent} import {last}\n"),
                ("attribute", f"value = tf{qualname[len('tensorflow'):]}\n")]
    if kind == "member":
        member = entry["member"]
        return [("instance", f"obj = {qualname}()\nvalue = obj.{member}\n"),
                ("self", f"class Sub({qualname}):\n    def f(self):\n        return self.{member}\n")]
    if kind == "keyword":
        keyword = f"{entry['keyword']}={entry.get('value') or 'None'}"
        if entry.get("callable") == "method":
            owner, method = _module_parent(qualname)
            return [("call", f"obj = {owner}()\nobj.{method}({keyword})\n")]
        return [("call", f"{qualname}({keyword})\n")]
    if kind == "tf_keyword":
        keyword = f"{entry['keyword']}={entry.get('value') or 'None'}"
        return [("call", f"tf{qualname[len('tensorflow'):]}({keyword})\n")]
    if kind == "positional":
        args = ", ".join(["None"] * (entry["position"] + 1))
        if entry.get("callable") == "method":
            owner, method = _module_parent(qualname)
            return [("call", f"obj = {owner}()\nobj.{method}({args})\n")]
        return [("call", f"{qualname}({args})\n")]
    return []


def _breaks(entry: Dict) -> bool:
    if entry["kind"] in ("module", "name"):
        return bool(entry.get("breaks"))
    if entry["kind"] == "tf_name":
        return bool(entry.get("breaks"))
    if entry["kind"] == "positional":
        return True  # the argument binds another parameter (or none) under Keras 3
    if entry.get("in_signature") is False:
        return False  # a deprecation marker naming no parameter: no user can pass it
    outcome = entry.get("outcome") or {}
    return bool(outcome.get("breaks") or outcome.get("deprecated"))


def _describe(entry: Dict) -> str:
    kind = entry["kind"]
    if kind == "member":
        return f"`{entry['qualname']}.{entry['member']}`"
    if kind in ("keyword", "tf_keyword"):
        return f"`{entry['qualname']}({entry['keyword']}=)`"
    if kind == "positional":
        return f"`{entry['qualname']}` positional {entry['position'] + 1} (Keras 2's `{entry['keras2']}`)"
    return f"`{entry['qualname']}`"


def _outcome(entry: Dict) -> str:
    outcome = entry.get("outcome") or {}
    if entry["kind"] in ("module", "name"):
        spellings = entry.get("spellings") or {}
        first = next(iter(spellings.values()), {})
        outcome = first.get("import") or first.get("attribute") or {}
    elif entry["kind"] == "tf_name":
        outcome = outcome.get("attribute") or outcome.get("import") or {}
    if entry["kind"] == "positional":
        return outcome.get("error") or f"binds `{entry['keras3']}`"
    if outcome.get("deprecated"):
        return "deprecated"
    return outcome.get("error") or ""


def _replacement(entry: Dict) -> str:
    replacement = entry.get("replacement") or {}
    value = replacement.get("qualname") or replacement.get("member") or replacement.get("keyword")
    if not value:
        return ""
    return f"`{value}`" + (" (exact)" if replacement.get("exact") else "")


def _cell(codes: Iterable[str]) -> str:
    codes = list(codes)
    return ", ".join(codes) if codes else "—"


def build() -> str:
    with open(TABLE, encoding="utf-8") as handle:
        table = json.load(handle)
    rows: Dict[str, List[str]] = defaultdict(list)
    counts: Dict[str, Counter] = defaultdict(Counter)
    for entry in sorted(table["entries"], key=lambda e: (e["kind"], _describe(e))):
        if not _breaks(entry):
            continue
        kind = entry["kind"]
        codes: set = set()
        fixes = set()
        per_form = []
        for form, body in _usages(entry):
            if not _writable(body):
                continue  # a name Python cannot spell in code (a keyword): no user writes it
            found, fix = _lint(body)
            codes.update(found)
            if fix:
                fixes.add(fix)
            per_form.append(f"{form}: {_cell(found)}")
        fix = "safe" if "safe" in fixes else "unsafe" if fixes else ""
        counts[kind]["entries"] += 1
        counts[kind]["reported"] += bool(codes)
        counts[kind]["fixed"] += bool(fix)
        rows[kind].append(f"| {_describe(entry)} | {_outcome(entry)} | {_replacement(entry)} | "
                          f"{'; '.join(per_form) if len(per_form) > 1 else _cell(sorted(codes))} | {fix or '—'} |")
    keras_rows = []
    keras_reported = keras_fixed = keras_verified = 0
    verified = _verified()
    for item, body in KERAS_LIST:
        found, fix = _lint(body, OBJECTS)
        keras_reported += bool(found)
        keras_fixed += bool(fix)
        verdict = verified.get(item, "not executed") if fix else "—"
        keras_verified += verdict == "runs"
        keras_rows.append(f"| {item} | {_cell(found)} | {fix or '—'} | {verdict} |")
    versions = table.get("versions", {})
    lines = [
        "# Keras 3 / TF 2.16+ migration: what tflint-gpu reports",
        "",
        "Generated by `python scripts/keras3_coverage.py` (do not edit by hand; "
        "`tests/test_keras3_coverage.py` fails when it is stale). For each item the script writes the usage a "
        "user would write, lints it with every rule, and records the codes that report it and the fix `--fix` "
        "(safe) or `--fix --unsafe-fixes` (unsafe) applies. A `—` in the codes column is a breakage the tool "
        "does not report yet.",
        "",
        f"The table was derived from tf_keras {versions.get('tf_keras', '?')} (Keras 2) and Keras "
        f"{versions.get('keras', '?')} under TensorFlow {versions.get('tensorflow', '?')} by "
        "`scripts/derive_migration.py`, which executed its entries under Keras 3 (the deprecated TF arguments "
        "under TensorFlow, with the deprecated argument and with its current spelling); the error column is what "
        "that raised. Not executed: " + (", ".join(f"`{e['qualname']}({e['keyword']}=)` ({e['executed'][len('not executed: '):]})"
                                          for e in table["entries"] if e.get("executed", "").startswith("not executed"))
                                         or "none") + ".",
        "",
        "## Summary",
        "",
        "| list | items | reported | with a fix | fix executed |",
        "|---|---:|---:|---:|---:|",
        f"| Keras's own list (issue 18467, migration guide) | {len(KERAS_LIST)} | {keras_reported} | "
        f"{keras_fixed} | {keras_verified} |",
    ]
    for kind in sorted(counts):
        c = counts[kind]
        lines.append(f"| derived table: {kind} | {c['entries']} | {c['reported']} | {c['fixed']} | |")
    try:
        with open(UPGRADE_SET, encoding="utf-8") as handle:
            upgrade_set = handle.read().strip()
    except OSError:
        upgrade_set = ""
    if upgrade_set:
        lines += ["", "## Real projects: the upgrade set", "",
                  "From `benchmarks/upgrade/RESULTS.md` (`python benchmarks/upgrade/run.py`; see "
                  "`benchmarks/upgrade/README.md`):", "", upgrade_set]
    lines += ["", "## Keras's own list", "",
              "`fix executed`: the item's example, fixed by `--fix --unsafe-fixes`, with code that uses what it "
              "makes, run by `python scripts/keras3_coverage.py --verify` (`tests/test_keras3_coverage.py` "
              "runs it again): `runs` when the original ran where `tf.keras` is tf_keras (Keras 2) and the fixed "
              "text ran under Keras 3.", "",
              "| item | reported by | fix | fix executed |", "|---|---|---|---|"] + keras_rows
    for kind in sorted(rows):
        lines += ["", f"## Derived table: {kind}", "", "| entry | error under Keras 3 | replacement | reported by "
                  "| fix |", "|---|---|---|---|---|"] + rows[kind]
    return "\n".join(lines) + "\n"


RULES = list(all_rules())


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is not what it would be")
    parser.add_argument("--verify", action="store_true", help="execute the fixes of Keras's list first "
                                                              "(needs TensorFlow and tf_keras) and record them")
    args = parser.parse_args(argv)
    if args.verify:
        with open(VERIFIED, "w", encoding="utf-8") as handle:
            json.dump(verify(), handle, indent=1, sort_keys=True)
            handle.write("\n")
    page = build()
    if args.check:
        try:
            with open(PAGE, encoding="utf-8") as handle:
                current = handle.read()
        except OSError:
            current = ""
        if current != page:
            print(f"{os.path.relpath(PAGE, ROOT)} is stale: run python scripts/keras3_coverage.py", file=sys.stderr)
            return 1
        return 0
    os.makedirs(os.path.dirname(PAGE), exist_ok=True)
    with open(PAGE, "w", encoding="utf-8") as handle:
        handle.write(page)
    print(f"wrote {os.path.relpath(PAGE, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
