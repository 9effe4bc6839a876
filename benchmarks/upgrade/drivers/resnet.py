"""Driver: calmisential/TensorFlow2.0_ResNet. Writes a tiny JPEG image-folder dataset (3 classes),
points config.py's values at it (set on the imported config module: 1 epoch, 32x32, resnet18,
weights under WORKDIR with config.py's relative name), runs train.py as __main__ (GradientTape loop, save_weights), then
evaluate.py as __main__ (rebuilds the model, load_weights, test loop).
usage: python resnet.py PROJECT_DIR WORKDIR [--legacy]"""
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

work = os.path.abspath(a.workdir)
rng = np.random.default_rng(0)
for split, n in (("train", 6), ("valid", 3), ("test", 3)):
    for c in range(3):
        d = os.path.join(work, "dataset", split, f"class{c}")
        os.makedirs(d, exist_ok=True)
        for i in range(n):
            img = rng.integers(0, 256, size=(40, 40, 3), dtype=np.uint8)
            tf.io.write_file(os.path.join(d, f"{i}.jpg"), tf.io.encode_jpeg(img))
proj = os.path.abspath(a.project)
sys.path.insert(0, proj)
import config
config.EPOCHS, config.BATCH_SIZE, config.NUM_CLASSES = 1, 4, 3
config.image_height = config.image_width = 32
config.model = "resnet18"
# keep the project's own relative file name (its suffix is part of what is being tested);
# the repository ships the saved_model/ folder, so create it in the work dir
config.save_model_dir = os.path.join(work, config.save_model_dir)
os.makedirs(os.path.dirname(config.save_model_dir), exist_ok=True)
config.dataset_dir = os.path.join(work, "dataset") + "/"
config.train_dir, config.valid_dir, config.test_dir = (config.dataset_dir + s for s in ("train", "valid", "test"))
os.chdir(work)
_run.exec_script(os.path.join(proj, "train.py"))
print("DRIVER: trained; saved", sorted(os.listdir(os.path.dirname(config.save_model_dir))), flush=True)
_run.exec_script(os.path.join(proj, "evaluate.py"))
print("DRIVER: OK", flush=True)
