"""Derive which public TensorFlow functions reject a Keras 3 symbolic tensor (KerasTensor).

Run by a developer with TensorFlow and Keras 3 installed (never at lint time):

    python scripts/derive_symbolic_ops.py > tflint_gpu/semantic/symbolic_ops.py

Every public function of ``tf``, ``tf.math``, ``tf.nn``, ``tf.linalg``, ``tf.image``,
``tf.signal``, ``tf.random``, ``tf.bitwise`` and ``tf.strings`` is called with a
``keras.Input`` (and a few usual extra arguments, tried in turn until one call
gets past argument checking). A function is listed in ``RAISES`` when the call
raised Keras 3's ``A KerasTensor cannot be used as input to a TensorFlow
function`` (or another error naming the KerasTensor); in ``ACCEPTS`` when a call
returned. Functions whose every attempt failed on its arguments are in
neither list, and the rule that reads the lists stays silent on them.
"""
import inspect
import sys
import warnings

warnings.filterwarnings("ignore")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

MODULES = ["", "math", "nn", "linalg", "image", "signal", "random", "bitwise", "strings"]
# Calls the generic attempts cannot make (the op needs arguments of its own): name -> (args, kwargs) builder.
x = keras.Input((4, 6))
xi = keras.Input((4,), dtype="int32")
xs = keras.Input((), dtype="string")
x4 = keras.Input((8, 8, 3))
EXPLICIT = {
    "tf.nn.max_pool2d": lambda: tf.nn.max_pool2d(x4, 2, 2, "SAME"),
    "tf.nn.avg_pool2d": lambda: tf.nn.avg_pool2d(x4, 2, 2, "SAME"),
    "tf.nn.max_pool": lambda: tf.nn.max_pool(x4, 2, 2, "SAME"),
    "tf.nn.avg_pool": lambda: tf.nn.avg_pool(x4, 2, 2, "SAME"),
    "tf.nn.pool": lambda: tf.nn.pool(x4, (2, 2), "MAX", padding="SAME"),
    "tf.nn.conv2d": lambda: tf.nn.conv2d(x4, tf.ones((3, 3, 3, 2)), 1, "SAME"),
    "tf.nn.conv1d": lambda: tf.nn.conv1d(x, tf.ones((3, 6, 2)), 1, "SAME"),
    "tf.nn.depthwise_conv2d": lambda: tf.nn.depthwise_conv2d(x4, tf.ones((3, 3, 3, 1)), [1, 1, 1, 1], "SAME"),
    "tf.nn.separable_conv2d": lambda: tf.nn.separable_conv2d(x4, tf.ones((3, 3, 3, 1)), tf.ones((1, 1, 3, 2)),
                                                             [1, 1, 1, 1], "SAME"),
    "tf.image.crop_to_bounding_box": lambda: tf.image.crop_to_bounding_box(x4, 0, 0, 4, 4),
    "tf.image.pad_to_bounding_box": lambda: tf.image.pad_to_bounding_box(x4, 0, 0, 10, 10),
    "tf.image.extract_patches": lambda: tf.image.extract_patches(x4, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1],
                                                                 "VALID"),
    "tf.image.resize_with_crop_or_pad": lambda: tf.image.resize_with_crop_or_pad(x4, 4, 4),
    "tf.image.resize_with_pad": lambda: tf.image.resize_with_pad(x4, 4, 4),
    "tf.image.central_crop": lambda: tf.image.central_crop(x4, 0.5),
    "tf.einsum": lambda: tf.einsum("bij,bkj->bik", x, x),
    "tf.broadcast_to": lambda: tf.broadcast_to(x, (2, 4, 6)),
    "tf.one_hot": lambda: tf.one_hot(xi, 4),
    "tf.nn.embedding_lookup": lambda: tf.nn.embedding_lookup(tf.ones((5, 2)), xi),
    "tf.strings.split": lambda: tf.strings.split(xs),
}
TRIES = [((x,), {}), ((x, 2), {}), ((x,), {"axis": -1}), ((x, 2), {"axis": -1}), (([x, x],), {"axis": -1}),
         (([x, x],), {}), ((x, [1, 1]), {}), ((x, x), {}), ((x, (2, 2)), {}), ((x, tf.float32), {}), ((x, 0, 1), {}),
         ((x, [1, 0, 2]), {}), ((x, [[0, 0], [1, 1], [0, 0]]), {}), ((x, [-1]), {}), ((x, [0]), {}), ((xi,), {}),
         ((xi, 2), {}), ((xs,), {})]
# Not ops: they take no tensor to convert, or run a Python function / decorate one.
SKIP = frozenset({"tf.function", "tf.py_function", "tf.numpy_function", "tf.custom_gradient", "tf.recompute_grad",
                  "tf.grad_pass_through", "tf.device", "tf.name_scope", "tf.init_scope", "tf.control_dependencies",
                  "tf.variable_creator_scope", "tf.get_logger", "tf.load_library", "tf.load_op_library",
                  "tf.nondifferentiable_batch_function", "tf.random.set_global_generator", "tf.random.set_seed",
                  "tf.signal.inverse_stft_window_fn", "tf.no_gradient", "tf.import_graph_def"})


def _rejects(error: Exception) -> bool:
    return "KerasTensor" in str(error).split("\n")[0]


def outcome(call):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
        return "accepts"
    except Exception as error:  # noqa: BLE001 - every error is recorded
        return "raises" if _rejects(error) else "other"


def main() -> None:
    results = {}
    for module in MODULES:
        owner = getattr(tf, module) if module else tf
        for name in sorted(dir(owner)):
            if name.startswith("_"):
                continue
            function = getattr(owner, name)
            if not callable(function) or inspect.isclass(function) or inspect.ismodule(function):
                continue
            full = f"tf.{module + '.' if module else ''}{name}"
            if full in SKIP:
                continue
            if full in EXPLICIT:
                results[full] = outcome(EXPLICIT[full])
                continue
            found = "other"
            for args, kwargs in TRIES:
                found = outcome(lambda: function(*args, **kwargs))
                if found != "other":
                    break
            results[full] = found
    for full, call in EXPLICIT.items():
        results.setdefault(full, outcome(call))
    raises = sorted(n for n, v in results.items() if v == "raises")
    accepts = sorted(n for n, v in results.items() if v == "accepts")
    out = sys.stdout
    out.write('"""Generated by scripts/derive_symbolic_ops.py under TensorFlow %s, Keras %s: do not edit.\n\n'
              % (tf.__version__, keras.__version__))
    out.write("Public TensorFlow functions called with a Keras 3 symbolic tensor (``keras.Input``):\n"
              "``RAISES`` raised ``ValueError: A KerasTensor cannot be used as input to a TensorFlow\n"
              "function`` (or another error naming the KerasTensor); ``ACCEPTS`` returned (they take no\n"
              "tensor to convert, or compute with Python operators, which KerasTensor has).\n"
              '"""\n\n')
    for title, names in (("RAISES", raises), ("ACCEPTS", accepts)):
        out.write(f"{title} = frozenset({{\n")
        for name in names:
            out.write(f'    "{name.replace("tf.", "tensorflow.", 1)}",\n')
        out.write("})\n")


if __name__ == "__main__":
    main()
