"""Driver: bubbliiiing/unet-tf2. Runs train_medical.py as __main__ on the project's own bundled
Medical_Datasets (30 images) at 32x32, 1 frozen + 1 unfrozen epoch, saving every epoch, then
loads the saved .h5 weights through the project's predict wrapper (unet.py) and segments one image.
--eager runs the GradientTape path (utils/utils_fit.py) instead of model.fit.
--init-weights H5 sets model_path (load_weights by_name, e.g. weights saved by the tf_keras run).
usage: python unet.py PROJECT_DIR WORKDIR [--legacy] [--eager] [--init-weights H5]"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _run

ap = argparse.ArgumentParser()
ap.add_argument("project")
ap.add_argument("workdir")
ap.add_argument("--legacy", action="store_true")
ap.add_argument("--eager", action="store_true")
ap.add_argument("--legacy-optimizers", action="store_true",
                help="with --legacy: tf.keras.optimizers.X is the pre-2.11 optimizer, as on TF 2.2")
ap.add_argument("--init-weights", default="")
a = ap.parse_args()
_run.setup(a.legacy, a.legacy_optimizers)
import numpy as np

proj = os.path.abspath(a.project)
save_dir = os.path.join(os.path.abspath(a.workdir), "logs")
os.makedirs(save_dir, exist_ok=True)
os.chdir(proj)  # the script and the dataloader use paths relative to the project
_run.exec_script(os.path.join(proj, "train_medical.py"), {
    "eager": str(a.eager),
    "model_path": repr(os.path.abspath(a.init_weights) if a.init_weights else ""),
    "input_shape": "[32, 32]",
    "Freeze_Epoch": "1",
    "UnFreeze_Epoch": "2",
    "save_period": "1",
    "save_dir": repr(save_dir),
    "VOCdevkit_path": repr(os.path.join(proj, "Medical_Datasets")),
})
saved = sorted(os.listdir(save_dir))
print("DRIVER: saved", saved, flush=True)
weights = [f for f in saved if f.startswith("last_epoch_weights")][0]
from PIL import Image
import unet as predict_wrapper
w = predict_wrapper.Unet(model_path=os.path.join(save_dir, weights), num_classes=2,
                         backbone="vgg", input_shape=[32, 32], mix_type=1)
out = w.detect_image(Image.open(os.path.join(proj, "Medical_Datasets/Images/0.png")))
print("DRIVER: predicted image", out.size, np.unique(np.asarray(out)).size, "colours", flush=True)
from nets.unet import Unet as build_unet
from utils.utils import net_flops
flops = net_flops(build_unet([32, 32, 3], 2, "vgg"), table=False, print_result=False)
print("DRIVER: summary.py net_flops (32x32 vgg) =", flops, flush=True)
m50 = build_unet([32, 32, 3], 2, "resnet50")
print("DRIVER: resnet50 backbone builds,", len(m50.layers), "layers", flush=True)
print("DRIVER: OK", flush=True)
