"""Derive the method names a Keras 3 model or layer subclass cannot define, for TFG925.

Run by a developer with Keras 3 and tf_keras installed (never at lint time):

    python scripts/derive_shadowed_methods.py > tflint_gpu/semantic/data/keras_shadowed_methods.json

Keras 3's ``Model.__init__``/``Layer.__init__`` (and ``compile``) assign instance attributes
(``self.loss = None``...). A subclass method of the same name is then hidden by the instance
attribute: ``self.loss(y, p)`` calls ``None`` (``TypeError: 'NoneType' object is not callable``).
For every public instance attribute a bare Keras 3 ``Model`` (as made: a model with its own training loop is never compiled; a compiled tf_keras model
sets ``loss`` too, so the names are those only Keras 3 hides) or ``Layer`` has,
the script defines a method of that name in a subclass, makes and compiles an instance, and keeps
the names where the attribute read from the instance is not that method under Keras 3 while it is
under tf_keras (the same subclass of ``tf_keras.Model``/``Layer``): executed, name by name.
"""
import json
import os
import sys
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.filterwarnings("ignore")


def _hidden(base, name, compile_it):
    marker = object()

    def method(self, *args, **kwargs):
        return marker

    cls = type("Probe", (base,), {name: method})
    try:
        obj = cls()
        if compile_it:
            obj.compile(optimizer="sgd")
        value = getattr(obj, name)
    except Exception as error:  # the class refuses the method outright
        return f"{type(error).__name__}"
    # Hidden: the instance holds a value that is no callable (None, a string, a number) where the
    # method was; a wrapper Keras puts around the method (``build``) still calls it.
    return None if callable(value) else "hidden"


def main():
    import keras
    import tf_keras

    found = {}
    for kind, new, old, compile_it in (("model", keras.Model, tf_keras.Model, False),
                                       ("layer", keras.layers.Layer, tf_keras.layers.Layer, False)):
        sample = new()
        if compile_it:
            sample.compile(optimizer="sgd")
        names = sorted(n for n in vars(sample) if not n.startswith("_"))
        hidden = []
        for name in names:
            if _hidden(new, name, compile_it) == "hidden" and _hidden(old, name, compile_it) is None:
                hidden.append(name)
        found[kind] = hidden
    json.dump({"versions": {"keras": keras.__version__, "tf_keras": tf_keras.__version__}, **found},
              sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
