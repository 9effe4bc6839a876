"""TensorFlow Addons -> Keras 3: the derived table, and the facts TFG917's fix reads.

``tflint_gpu/semantic/data/tfa_equivalents.json`` is written by
``scripts/derive_tfa_equivalents.py``, which executes each tfa object (tensorflow-addons 0.23 on
tf_keras) and its Keras 3 counterpart on the same inputs, weights and mapped arguments; where
tensorflow-addons is installed the derivation is rerun and compared.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic import tfa

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tflint_gpu" / "semantic" / "data" / "tfa_equivalents.json"
_MAPPING = ("keras", "kind", "identical", "exact", "params", "keywords", "drop", "add", "defaults", "divide",
            "refuse")


def test_the_table_records_what_was_measured():
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    assert table["_generated_by"] == "scripts/derive_tfa_equivalents.py"
    instance = table["tensorflow_addons.layers.InstanceNormalization"]
    assert (instance["keras"], instance["add"], instance["identical"]) == \
        ("keras.layers.GroupNormalization", {"groups": "-1"}, True)
    adamw = table["tensorflow_addons.optimizers.AdamW"]
    assert adamw["exact"] and not adamw["identical"] and adamw["divide"] == {"weight_decay": "learning_rate"}
    assert not table["tensorflow_addons.losses.SigmoidFocalCrossEntropy"]["exact"]
    assert table["tensorflow_addons.activations.gelu"]["keras"] == "keras.ops.gelu"  # approximate by default
    for name, entry in table.items():
        if name.startswith("_"):
            continue
        assert entry["exact"] == (entry["max_abs_diff"] is not None and entry["max_abs_diff"] <= 2e-6), name
        assert entry["identical"] == (entry["max_abs_diff"] == 0.0), name


@pytest.mark.skipif(importlib.util.find_spec("tensorflow_addons") is None
                    or importlib.util.find_spec("tf_keras") is None, reason="needs tensorflow-addons and tf_keras")
def test_the_derivation_writes_the_table():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "derive_tfa_equivalents.py")], capture_output=True,
                         text=True, timeout=600, env=dict(os.environ, CUDA_VISIBLE_DEVICES="-1"))
    assert out.returncode == 0, out.stderr[-2000:]
    derived = json.loads(out.stdout)
    stored = json.loads(TABLE.read_text(encoding="utf-8"))
    assert sorted(derived) == sorted(stored)
    for name, entry in stored.items():
        if name.startswith("_"):
            continue
        assert {k: entry[k] for k in _MAPPING} == {k: derived[name][k] for k in _MAPPING}, name


def _facts(source: str):
    """The file's facts (what a rule's ctx holds) and its module."""
    module = cst.parse_module(textwrap.dedent(source))
    return analyse(module, []), module


def _value(module, name):
    for statement in module.body:
        for small in getattr(statement, "body", ()):
            if isinstance(small, cst.Assign) and small.targets[0].target.value == name:
                return small.value
    raise KeyError(name)


NUMBERS = """
import argparse
from absl import flags
import tensorflow as tf
import tensorflow_addons as tfa

flags.DEFINE_float("decay", 1e-4, "weight decay")
FLAGS = flags.FLAGS
parser = argparse.ArgumentParser()
parser.add_argument("--lr", default=3e-4, type=float)
parser.add_argument("--wd", default=1e-4)
parser.add_argument("--steps", type=int, default=None)
args = parser.parse_args()

rate = 1e-3 * 2
literal = rate
flag = args.lr
untyped = args.wd
no_default = args.steps
absl_flag = FLAGS.decay
schedule = tf.keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9)
scheduled = schedule
called = float("1e-3")
uses = (tfa.layers.GELU, tfa.activations.gelu)
"""


def test_constant_number_knows_numbers_and_flags_parsed_as_numbers():
    ctx, module = _facts(NUMBERS)
    scope = ctx.model.scopes[0]
    known = {name: tfa.constant_number(ctx.graphs, ctx.resolver, _value(module, name), scope)
             for name in ("rate", "literal", "flag", "untyped", "no_default", "absl_flag", "scheduled", "called")}
    assert known == {"rate": True, "literal": True, "flag": True, "untyped": False, "no_default": False,
                     "absl_flag": True, "scheduled": False, "called": False}


def test_the_reads_of_an_import_are_its_uses():
    ctx, module = _facts(NUMBERS)
    uses = ctx.graphs.uses.uses_of("tfa", ctx.model.scopes[0])
    chains = [cst.Module([]).code_for_node(tfa.use_of(u.name, u.scope.ancestors(u.name))) for u in uses]
    assert chains == ["tfa.layers.GELU", "tfa.activations.gelu"]
