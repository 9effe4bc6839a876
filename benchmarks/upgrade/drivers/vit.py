"""Driver: emla2805/vision-transformer. Runs train.py as __main__ (tiny sizes, 1 epoch) on a
synthetic imagenet_resized/32x32 stand-in (tfds.load patched), then rebuilds the model and
loads the weights train.py saved.
usage: python vit.py PROJECT_DIR WORKDIR [--legacy]"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _run

ap = argparse.ArgumentParser()
ap.add_argument("project")
ap.add_argument("workdir")
ap.add_argument("--legacy", action="store_true")
a = ap.parse_args()
_run.setup(a.legacy)
import numpy as np
import tensorflow as tf
import tensorflow_datasets as tfds


def fake_load(name, as_supervised=True, **kw):
    rng = np.random.default_rng(0)
    def split(n):
        x = rng.integers(0, 256, size=(n, 32, 32, 3), dtype=np.uint8)
        y = rng.integers(0, 1000, size=(n,), dtype=np.int64)
        return tf.data.Dataset.from_tensor_slices((x, y))
    return {"train": split(16), "validation": split(8)}


tfds.load = fake_load
os.makedirs(a.workdir, exist_ok=True)
os.chdir(a.workdir)
logdir = os.path.join(a.workdir, "logs")
sys.argv = ["train.py", "--logdir", logdir, "--batch-size", "8", "--epochs", "1",
            "--num-layers", "2", "--d-model", "32", "--mlp-dim", "64"]
g = _run.exec_script(os.path.join(a.project, "train.py"))
model = g["model"]
print("DRIVER: trained; history keys", list(model.history.history), flush=True)
x = np.random.default_rng(1).integers(0, 256, size=(2, 32, 32, 3)).astype("float32")
p1 = model(x, training=False)
VisionTransformer = sys.modules["model"].VisionTransformer
m2 = VisionTransformer(image_size=32, patch_size=4, num_layers=2, num_classes=1000,
                       d_model=32, num_heads=4, mlp_dim=64, channels=3, dropout=0.1)
m2(x, training=False)
saved = [f for f in os.listdir(logdir) if f.startswith("vit")]
print("DRIVER: saved files", saved, flush=True)
m2.load_weights(os.path.join(logdir, "vit" if "vit.index" in saved else sorted(saved)[0]))
p2 = m2(x, training=False)
print("DRIVER: reload max abs diff", float(np.max(np.abs(np.asarray(p1) - np.asarray(p2)))), flush=True)
print("DRIVER: OK", flush=True)
