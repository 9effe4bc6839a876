"""Derive which Keras layers take ``training`` as the second positional parameter of ``call``, for TFG924.

Run by a developer with Keras 3 and tf_keras installed (never at lint time):

    python scripts/derive_call_training.py > tflint_gpu/semantic/data/keras_call_training.json

Keras 2 (tf_keras) binds ``layer(x, training)`` to the second positional parameter of the layer's
``call``; Keras 3 refuses a Python bool passed by position (``ValueError: Only input tensors may be
passed as positional arguments``). Passing it as ``training=`` keeps what Keras 2 did exactly when
tf_keras's ``call`` has ``training`` second, and Keras 3 takes the keyword when its ``call`` has
``training``. For every public layer class of ``tf_keras.layers`` (and ``Model``/``Sequential``),
the script reads both signatures with ``inspect`` and executes the check on one instance of each
class it can make (no arguments, a rate, a size): a bool by position raises under Keras 3
(``ValueError``, or ``TypeError`` for the preprocessing layers and a functional model), and
``training=`` does not (recorded as ``executed``). Written: the normalised class names (``keras.layers.Dropout``).
"""
import inspect
import json
import os
import sys
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402


def _second(cls):
    try:
        params = [p for p in inspect.signature(cls.call).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return None
    return params[2].name if len(params) > 2 else None  # self, inputs, then the second


def _takes_training(cls):
    try:
        params = inspect.signature(cls.call).parameters
    except (TypeError, ValueError):
        return False
    # Keras 3's Model.call is (*args, **kwargs): a functional or Sequential model takes training=
    return "training" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def main():
    import keras
    import tf_keras

    exact = []
    executed = []
    for name in sorted(dir(tf_keras.layers)):
        old = getattr(tf_keras.layers, name)
        new = getattr(keras.layers, name, None)
        if not (inspect.isclass(old) and issubclass(old, tf_keras.layers.Layer)) or new is None \
                or not inspect.isclass(new):
            continue
        if _second(old) == "training" and _takes_training(new):
            exact.append(f"keras.layers.{name}")
            layer = None
            for args in ((), (0.5,), (2, 2)):
                try:
                    layer = new(*args)
                    break
                except Exception:
                    continue
            if layer is None:
                continue
            for shape in ((2, 4, 4, 3), (2, 4, 3), (2, 4, 4, 4, 3), (2, 3)):
                x = np.ones(shape, np.float32)
                try:
                    layer(x, True)
                    continue  # ran: not refused
                except Exception:  # ValueError (only tensors by position), or a TypeError of DataLayer
                    pass
                try:
                    layer(x, training=True)
                except Exception:
                    continue
                executed.append(f"keras.layers.{name}")
                break
    inputs = keras.Input((3,))
    models = {"keras.Model": keras.Model(inputs, keras.layers.Dense(2)(inputs)),
              "keras.Sequential": keras.Sequential([keras.layers.Dense(2)])}
    for name, old, new in (("keras.Model", tf_keras.Model, keras.Model),
                           ("keras.Sequential", tf_keras.Sequential, keras.Sequential)):
        if _second(old) == "training" and _takes_training(new):
            exact.append(name)
            x = np.ones((2, 3), np.float32)
            try:
                models[name](x, True)
            except Exception:
                models[name](x, training=True)
                executed.append(name)
    json.dump({"versions": {"keras": keras.__version__, "tf_keras": tf_keras.__version__},
               "training_second": exact, "executed": executed}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
