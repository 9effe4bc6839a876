"""Measure what replaces Keras 2's layer-node API (``get_input_shape_at(i)``, ``get_output_shape_at(i)``,
``get_input_at(i)``, ``get_output_at(i)``) under Keras 3.

Run by a developer (never at lint time): ``python scripts/measure_keras_node_api.py``. One functional
model holding each layer kind (ZeroPadding2D, Conv2D, BatchNormalization, LeakyReLU, DepthwiseConv2D,
SeparableConv2D, Activation, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, Reshape, Flatten,
Dense, a Conv2D called twice on different shapes, a nested functional model called twice on different
shapes, a nested Sequential, Concatenate, Add, MultiHeadAttention(q, v), a layer returning two tensors,
a layer given a rank-1 input, InputLayers) is built in a fresh process under tf_keras
(``TF_USE_LEGACY_KERAS=1``) and one under Keras 3; for every layer and node index it prints what tf_keras's
getter gives and whether each Keras 3 spelling gives the same:

* ``pub0``: ``layer.input.shape`` / ``layer.output.shape`` / ``layer.input`` / ``layer.output`` (node 0);
* ``priv``: ``layer._get_node_attribute_at_index(i, "input_tensors", "input")`` (``.shape``), the private
  method Keras 3's ``input``/``output`` call with 0.

Measured (TF 2.21, tf_keras 2.21.0, Keras 3.15.1; the table in TFG902's docs, removed_keras_method.py):
``priv`` equals tf_keras at every node of every single-input, single-output layer, a nested functional
model's included; ``pub0`` equals it at node 0 except on the nested functional model (its own declared
tensors). Both raise AttributeError where there are several inputs or outputs and on an InputLayer's input
side (``input`` is ``[]``); on a rank-1 input tf_keras gives ``None``, Keras 3 ``(None,)``. Node counts
(``len(layer._inbound_nodes)``) are equal.
"""
import json
import os
import subprocess
import sys
import tempfile

CHILD = r'''
import json, os, sys
legacy, out = sys.argv[1] == "legacy", sys.argv[2]
if legacy:
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
K = tf.keras
L = K.layers


class Pick(L.Layer):
    def call(self, x):
        return x[:, 0]


class Two(L.Layer):
    def call(self, x):
        return [x * 2.0, x + 1.0]


inp = K.Input((8, 8, 3), name="img")
x = L.ZeroPadding2D(1, name="pad")(inp)
x = L.Conv2D(4, 3, name="conv")(x)
x = L.BatchNormalization(name="bn")(x)
x = L.LeakyReLU(name="leaky")(x)
x = L.DepthwiseConv2D(3, padding="same", name="dw")(x)
x = L.SeparableConv2D(4, 3, padding="same", name="sep")(x)
x = L.Activation("relu", name="act")(x)
shared = L.Conv2D(4, 1, name="shared_twice")
s1 = shared(L.MaxPooling2D(2, name="maxpool")(x))
s2 = shared(x)
c = L.Concatenate(name="concat")([s1, L.AveragePooling2D(2, name="avgpool")(s2)])
d = L.Dense(5, name="dense")(L.Flatten(name="flatten")(L.Reshape((2, 4), name="reshape")(
    L.GlobalAveragePooling2D(name="gap")(c))))
sub_in = K.Input((None, 5), name="sub_in")
sub = K.Model(sub_in, L.Dense(3, name="sub_dense")(sub_in), name="nested_functional")
n1 = L.Flatten(name="f1")(sub(L.Reshape((1, 5), name="r1")(d)))
n2 = sub(L.Reshape((2, 5), name="r2")(L.Dense(10, name="dense2")(d)))
seq = K.Sequential([K.Input((None, 5), name="seq_in"), L.Dense(3, name="seq_dense")], name="nested_sequential")
sq = L.Flatten(name="f3")(seq(L.Reshape((1, 5), name="r3")(d)))
picked = L.Add(name="add")([Pick(name="pick")(n1), Pick(name="pick2")(sq)])
t1, t2 = Two(name="two_outputs")(n1)
tok = K.Input((), name="tok")
rank1 = L.Reshape((1,), name="rank1_input")(tok)
q, v = K.Input((4, 6), name="q"), K.Input((5, 6), name="v")
mha = L.MultiHeadAttention(num_heads=1, key_dim=2, name="mha")(q, v)
model = K.Model([inp, tok, q, v], [t1, t2, n2, rank1, mha, picked])
never = L.Dense(2, name="never_called")


def encode(value):
    if value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, (tuple, list)):
        return {type(value).__name__: [encode(v) for v in value]}
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return {"tensor": encode(tuple(value.shape))}
    return {"other": type(value).__name__}


def run(expression, layer, i):
    try:
        return encode(eval(expression, {"layer": layer, "i": i}))
    except Exception as error:
        return {"error": type(error).__name__}


if legacy:
    spellings = {"in": "layer.get_input_shape_at(i)", "out": "layer.get_output_shape_at(i)",
                 "in_t": "layer.get_input_at(i)", "out_t": "layer.get_output_at(i)"}
else:
    spellings = {}
    for side, attr in (("in", "input"), ("out", "output")):
        private = f"layer._get_node_attribute_at_index(i, '{attr}_tensors', '{attr}')"
        spellings.update({f"{side}:pub0": f"layer.{attr}.shape", f"{side}:priv": private + ".shape",
                          f"{side}_t:pub0": f"layer.{attr}", f"{side}_t:priv": private})
found = {}
for layer in list(model.layers) + [sub.get_layer("sub_dense"), never]:
    nodes = len(layer._inbound_nodes)
    found[layer.name] = {"kind": type(layer).__name__, "nodes": nodes,
                         "at": [{k: run(e, layer, i) for k, e in spellings.items()} for i in range(max(nodes, 1))]}
json.dump(found, open(out, "w"))
'''


def measure(legacy: bool, folder: str) -> dict:
    out = os.path.join(folder, f"{'legacy' if legacy else 'keras3'}.json")
    subprocess.run([sys.executable, "-c", CHILD, "legacy" if legacy else "keras3", out], check=True,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def short(value) -> str:
    return json.dumps(value, separators=(",", ":"))[:60]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        keras2, keras3 = measure(True, folder), measure(False, folder)
    print("| layer (kind) | node | getter | tf_keras | Keras 3 pub0 | Keras 3 priv |")
    print("|---|---|---|---|---|---|")
    for name, old in keras2.items():
        new = keras3[name]
        if old["nodes"] != new["nodes"]:
            print(f"| {name} | node counts differ: tf_keras {old['nodes']}, Keras 3 {new['nodes']} |")
        for i, (before, after) in enumerate(zip(old["at"], new["at"])):
            for getter, value in before.items():
                cells = ["same" if after[f"{getter}:{how}"] == value else short(after[f"{getter}:{how}"])
                         for how in ("pub0", "priv")]
                print(f"| {name} ({old['kind']}) | {i} | {getter} | {short(value)} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
