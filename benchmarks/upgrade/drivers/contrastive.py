"""Driver: beresandras/contrastive-classification-keras. Runs train.py (a top-level script) with
num_epochs=1, a smaller encoder width and each algorithm in turn, on a synthetic STL10 stand-in
(tfds.load patched: 96x96 uint8 images, 10 classes). steps_per_epoch=2000 gives batches of
50 unlabelled + 2 labelled images; the fake splits hold 2 batches each.
usage: python contrastive.py PROJECT_DIR WORKDIR [--legacy] [--algorithms SimCLR,NNCLR,...]"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _run

ALL = "SimCLR,NNCLR,DCCLR,BarlowTwins,HSICTwins,TWIST,MoCo,DINO"
ap = argparse.ArgumentParser()
ap.add_argument("project")
ap.add_argument("workdir")
ap.add_argument("--legacy", action="store_true")
ap.add_argument("--algorithms", default=ALL)
a = ap.parse_args()
_run.setup(a.legacy)
import numpy as np
import tensorflow as tf
import tensorflow_datasets as tfds

SIZES = {"unlabelled": 100, "train": 4, "test": 52}


def fake_load(name, split, as_supervised=True, shuffle_files=False, **kw):
    rng = np.random.default_rng(len(split))
    n = SIZES[split]
    x = rng.integers(0, 256, size=(n, 96, 96, 3), dtype=np.uint8)
    y = rng.integers(0, 10, size=(n,), dtype=np.int64)
    if split == "unlabelled":
        y = np.full((n,), -1, dtype=np.int64)
    return tf.data.Dataset.from_tensor_slices((x, y))


tfds.load = fake_load
os.makedirs(a.workdir, exist_ok=True)
os.chdir(a.workdir)
results = {}
for algo in a.algorithms.split(","):
    print(f"DRIVER: === {algo}", flush=True)
    g = _run.exec_script(os.path.join(a.project, "train.py"),
                         {"num_epochs": "1", "steps_per_epoch": "2000", "width": "32",
                          "Algorithm": algo})
    h = g["history"].history
    results[algo] = {k: float(np.mean(v[-1])) for k, v in h.items()}
    print("DRIVER:", algo, results[algo], flush=True)
print("DRIVER: OK", sorted(results), flush=True)
