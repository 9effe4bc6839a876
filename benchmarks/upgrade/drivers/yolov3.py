"""Driver: zzh8829/yolov3-tf2 (YOLOv3-tiny at 64x64, 80 COCO classes).

Writes a synthetic darknet weights file (header + one float per parameter of the tiny model, in the
order convert.py reads them) and small synthetic TFRecord datasets (8 train / 2 val JPEGs of 64x64 with
one or two boxes, class names from the project's data/coco.names), then runs the project's own
scripts as __main__, each in its own process (they all define the same absl flags), with absl
command-line flags only (no source override), in the work directory:
  1. convert.py --tiny --weights ./data/yolov3-tiny.weights      (output: the script's default path)
  2. train.py --tiny --mode fit --transfer darknet                (weights: train.py's default path =
     convert.py's default output; 2 epochs of 4 steps; ModelCheckpoint, ReduceLROnPlateau, ...)
  3. train.py --tiny --mode eager_tf --transfer fine_tune         (1 epoch of the GradientTape loop)
  4. detect.py --tiny --weights <last checkpoint of step 2>       (inference model with the Lambda
     box decoding and NMS; load_weights; draws the boxes)
  5. tools/export_tfserving.py --tiny --weights <same>            (tf.saved_model.save, reload, serve)
  (optional, --stages convert,tflite: tools/export_tflite.py --tiny on convert.py's output, 416x416)
For steps 4-5 the checkpoint is whatever file step 2 wrote (`yolov3_train_2.tf` or, once the project
writes Keras 3 weights files, `yolov3_train_2.weights.h5`), as a person would pass it on the command line.
Stops at the first stage that fails (its traceback is printed by that stage).
usage: python yolov3.py PROJECT_DIR WORKDIR [--legacy [--legacy-optimizers]] [--stages convert,fit,...]

Environment shims under --legacy only (the TF 2.5 / NumPy 1 environment the project pinned, not its
code): _run.setup's (NumPy-1 aliases; tensorflow_addons import) plus `np.product` (removed in NumPy
2.0); --legacy-optimizers: the pre-2.11 optimizers (TF 2.5.1's Adam took lr=).
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _run

STAGES = ("convert", "fit", "eager", "detect", "export")

ap = argparse.ArgumentParser()
ap.add_argument("project")
ap.add_argument("workdir")
ap.add_argument("--legacy", action="store_true")
ap.add_argument("--legacy-optimizers", action="store_true")
ap.add_argument("--stages", default=",".join(STAGES))
ap.add_argument("--fit-transfer", default="darknet",
                help="train.py --transfer of the fit stage (fine_tune: every weight from convert.py's output, "
                     "so Keras 2 and Keras 3 runs start from the same weights)")
ap.add_argument("--stage", help=argparse.SUPPRESS)  # internal: run one stage in this process
a = ap.parse_args()
proj = os.path.abspath(a.project)
work = os.path.abspath(a.workdir)
TINY = ["--tiny", "--num_classes", "80", "--verbosity", "0"]


def checkpoint(epoch):
    """The weights file the fit stage wrote for `epoch`, whichever format the project wrote."""
    for name in (f"checkpoints/yolov3_train_{epoch}.tf", f"checkpoints/yolov3_train_{epoch}.weights.h5"):
        if os.path.exists(name) or os.path.exists(name + ".index"):
            return "./" + name
    raise SystemExit(f"DRIVER: no checkpoint for epoch {epoch} in {os.listdir('checkpoints')}")


def run_stage(stage):
    _run.setup(a.legacy, a.legacy_optimizers)
    import numpy as np
    if a.legacy and not hasattr(np, "product"):
        np.product = np.prod  # NumPy 1 alias (removed in NumPy 2.0)
    import tensorflow as tf
    tf.random.set_seed(0)
    np.random.seed(0)
    sys.path.insert(0, proj)  # the project is used as `pip install -e .` (setup.py: yolov3_tf2)
    os.chdir(work)
    if stage == "convert":
        # synthetic darknet file: 5 int32 header, then per conv layer [bn or bias] + kernel floats;
        # their total is the tiny model's parameter count (BN: 4 per filter; conv: kernel (+ bias))
        from absl import flags
        flags.FLAGS(["count"])  # the model module reads FLAGS at build time
        from yolov3_tf2.models import YoloV3Tiny
        n = YoloV3Tiny(classes=80).count_params()
        tf.keras.backend.clear_session()
        flags.FLAGS.unparse_flags()
        rng = np.random.default_rng(0)
        with open("data/yolov3-tiny.weights", "wb") as f:
            np.array([0, 2, 0, 0, 0], np.int32).tofile(f)
            # positive and small: BN variances must be > 0 and activations must stay finite
            (np.abs(rng.standard_normal(n)) * 0.02).astype(np.float32).tofile(f)
        print("DRIVER: wrote data/yolov3-tiny.weights with", n, "floats", flush=True)
        argv = ["convert.py", "--weights", "./data/yolov3-tiny.weights"] + TINY
        script = "convert.py"
    elif stage in ("fit", "eager"):
        argv = ["train.py", "--size", "64", "--batch_size", "2",
                "--dataset", "./data/train.tfrecord", "--val_dataset", "./data/val.tfrecord"] + TINY
        if stage == "fit":
            argv += ["--mode", "fit", "--transfer", a.fit_transfer, "--epochs", "2"]
        else:
            argv += ["--mode", "eager_tf", "--transfer", "fine_tune", "--epochs", "1"]
        script = "train.py"
    elif stage == "detect":
        argv = ["detect.py", "--size", "64", "--weights", checkpoint(2)] + TINY
        script = "detect.py"
    elif stage == "export":
        argv = ["export_tfserving.py", "--weights", checkpoint(2)] + TINY
        script = os.path.join("tools", "export_tfserving.py")
    elif stage == "tflite":  # not in the default stages: weights = the script's default (convert.py's output)
        argv = ["export_tflite.py"] + TINY
        script = os.path.join("tools", "export_tflite.py")
    print("DRIVER: stage", stage, "argv:", " ".join(argv), flush=True)
    sys.argv = argv
    try:
        _run.exec_script(os.path.join(proj, script))
    except SystemExit as e:  # export_tflite.py calls app.run(main) without catching absl's sys.exit(0)
        if e.code not in (0, None):
            raise
    if stage in ("convert", "fit", "eager"):
        print("DRIVER: checkpoints", sorted(os.listdir("checkpoints")), flush=True)
    if stage == "detect":
        print("DRIVER: output.jpg", os.path.getsize("output.jpg"), "bytes", flush=True)
    if stage == "tflite":
        print("DRIVER: tflite", os.path.getsize("checkpoints/yolov3.tflite"), "bytes", flush=True)
    if stage == "export":
        print("DRIVER: serving", sorted(os.listdir("serving/yolov3/1")), flush=True)
    print("DRIVER: stage", stage, "OK", flush=True)


def make_data():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    os.makedirs(os.path.join(work, "data"), exist_ok=True)
    os.makedirs(os.path.join(work, "checkpoints"), exist_ok=True)
    for name in ("coco.names", "girl.png"):
        shutil.copy(os.path.join(proj, "data", name), os.path.join(work, "data", name))
    names = [l.strip() for l in open(os.path.join(proj, "data", "coco.names"))]
    rng = np.random.default_rng(0)

    def feature(kind, values):
        if kind == "bytes":
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))

    for split, count in (("train", 8), ("val", 2)):
        with tf.io.TFRecordWriter(os.path.join(work, "data", f"{split}.tfrecord")) as w:
            for _ in range(count):
                img = rng.integers(0, 256, size=(64, 64, 3), dtype=np.uint8)
                k = int(rng.integers(1, 3))
                x1, y1 = rng.uniform(0.0, 0.5, k), rng.uniform(0.0, 0.5, k)
                x2, y2 = x1 + rng.uniform(0.1, 0.5, k), y1 + rng.uniform(0.1, 0.5, k)
                cls = [names[int(c)].encode() for c in rng.integers(0, 80, k)]
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "image/encoded": feature("bytes", [tf.io.encode_jpeg(img).numpy()]),
                    "image/object/bbox/xmin": feature("float", x1.tolist()),
                    "image/object/bbox/ymin": feature("float", y1.tolist()),
                    "image/object/bbox/xmax": feature("float", x2.tolist()),
                    "image/object/bbox/ymax": feature("float", y2.tolist()),
                    "image/object/class/text": feature("bytes", cls),
                }))
                w.write(ex.SerializeToString())


if a.stage:
    run_stage(a.stage)
    sys.exit(0)

if os.path.exists(work):
    shutil.rmtree(work)
os.makedirs(work)
make_data()
flags = (["--legacy"] if a.legacy else []) + (["--legacy-optimizers"] if a.legacy_optimizers else [])
flags += ["--fit-transfer", a.fit_transfer]
for stage in a.stages.split(","):
    r = subprocess.run([sys.executable, os.path.abspath(__file__), proj, work, "--stage", stage] + flags)
    if r.returncode != 0:
        print(f"DRIVER: stage {stage} FAILED (exit {r.returncode})", flush=True)
        sys.exit(1)
print("DRIVER: OK", flush=True)
