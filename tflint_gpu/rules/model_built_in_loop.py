from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.bindings import is_constant
from tflint_gpu.semantic.names import short_name
from tflint_gpu.rules.base import Rule, clean, flagged

# Calls that make a Keras model the same way whenever their arguments are the same: a
# `keras.applications` architecture (its weights=None gives fresh random weights, but the same
# layers and shapes), a model read from a file.
_LOADERS = frozenset({"keras.models.load_model", "keras.saving.load_model", "tensorflow.saved_model.load",
                      "keras.models.model_from_json"})
# What reading a model (not training or changing it) looks like: attributes and methods.
_READS = frozenset({"layers", "get_layer", "summary", "predict", "predict_on_batch", "evaluate", "count_params",
                    "input_shape", "output_shape", "inputs", "outputs", "input", "output", "weights",
                    "get_weights", "trainable_weights", "non_trainable_weights", "name", "get_config",
                    "to_json", "signatures"})


class ModelBuiltInLoop(Rule):
    """The same Keras model built or loaded again at every loop iteration, only to be read.

    ## What it does
    Finds a call that makes a Keras model, a `keras.applications`
    architecture (`keras.applications.DenseNet169(weights=None)`) or a model
    read from a file (`keras.models.load_model(path)`,
    `tf.saved_model.load(path)`, `model_from_json(text)`), where

    * the call runs at every iteration of a Python loop: in its body or a
      comprehension, or in a function called from one (through the project);
    * its arguments are the same at every iteration: literals, module
      constants bound once, imported names, and library calls of those
      (`os.path.join(ROOT, "m.keras")`);
    * the model is only read where it is made: used on the spot
      (`DenseNet169(weights=None).layers`), or bound to a name that the code
      only reads (`.layers`, `.get_layer`, `.predict`, `.evaluate`,
      `.summary`, `.input_shape`, `model(x)`...).

    Not reported: a model that is trained, compiled, saved, changed
    (`load_weights`, `set_weights`), returned, stored or handed on where it is
    made (cross-validation and hyper-parameter searches build a fresh model
    per fold or trial on purpose); arguments that change per iteration (a
    path per checkpoint, `units=u`); a `Sequential`/`Model` built from layers.

    ## Why is this bad?
    Every iteration pays for the whole model again, to get what the first
    one already had. Measured under TF 2.21 / Keras 3.15 on a 2-core CPU:
    building `keras.applications.DenseNet169(weights=None)` to look up a
    layer by name took 1.89 s per iteration, against 0.17 ms for the same
    lookup on a model built once; memory grew by 13 MiB per build
    (`keras.backend.clear_session()` before each build: 3 MiB per build,
    and 2.55 s per iteration). Loading a small 4-layer `.keras` model and
    predicting one batch: 0.11 s per iteration.

    ## Example
    ```python
    def layer_exists(name):
        return any(l.name == name for l in keras.applications.DenseNet169(weights=None).layers)

    for host in host_layers:
        if not layer_exists(host):
            raise ValueError(host)
    ```

    Use instead:
    ```python
    DENSENET_LAYERS = {l.name for l in keras.applications.DenseNet169(weights=None).layers}

    for host in host_layers:
        if host not in DENSENET_LAYERS:
            raise ValueError(host)
    ```

    ## Fix safety
    No fix: where to keep the model built once (a module constant, an
    attribute, a cache) is the code's design.

    ## Measured effect
    The figures above. examples/TFG607 (`tflint-gpu verify --device cpu
    --size small --rule TFG607`, 4 layer names looked up in
    `MobileNetV2(weights=None)`): equivalent, several times faster with the
    model built once (the measurement below).
    """

    code = "TFG607"
    name = "model-built-in-loop"
    message = "The same Keras model built or loaded again at every loop iteration"
    needs = (("applications", "load_model", "saved_model", "model_from_json"),)
    reads_index = ("Name",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qualname = ctx.call_name(node)
        if qualname is None:
            return
        loader = qualname in _LOADERS
        if not loader and not (qualname.startswith("keras.applications.")
                               and qualname.rsplit(".", 1)[1][:1].isupper()):
            return
        if not all(not arg.star and is_constant(arg.value, ctx.scope, ctx.resolver) for arg in node.args):
            return
        if not self._only_read(node, ctx):
            return
        why = ctx.runs_repeatedly(node, ctx.scope)
        if why is None:
            return
        what = f"`{short_name(qualname).rsplit('.', 1)[1]}(...)`"
        verb = "loads the same model again" if loader else "builds the same model again"
        ctx.report(node, f"{what} {verb} at every iteration ({why}), only to read it: make it once, "
                         f"before the loop")

    # -- only read where it is made ------------------------------------------
    def _only_read(self, node: cst.Call, ctx) -> bool:
        parent = next(ctx.scope.ancestors(node), None)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return parent.attr.value in _READS
        name = self._bound_name(node, parent, ctx)
        if name is None:
            return False
        reads = [n for n in ctx.nodes_in(ctx.scope, "Name") if n.value == name.value and n is not name]
        if not reads:
            return False
        for read in reads:
            around = next(ctx.scope.ancestors(read), None)
            if isinstance(around, cst.Attribute) and around.value is read and around.attr.value in _READS:
                continue
            if isinstance(around, cst.Call) and around.func is read:
                continue  # model(x)
            if isinstance(around, cst.AssignTarget):
                continue  # the binding itself
            return False
        return True

    @staticmethod
    def _bound_name(node: cst.Call, parent, ctx) -> Optional[cst.Name]:
        if isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1 \
                and isinstance(parent.targets[0].target, cst.Name):
            name = parent.targets[0].target
            binding = ctx.assigned(name.value, scope=ctx.scope)
            if binding is not None and binding.scope is ctx.scope and ctx.scope.parent is not None:
                return name  # a local of a function: its reads are all in this scope
            if binding is not None and binding.scope is ctx.scope and not binding.rebound:
                return name
        return None

    cases = [
        flagged(
            """
            import tensorflow as tf

            def layer_exists(name):
                return len([x for x in tf.keras.applications.DenseNet169(weights=None).layers if x.name == name])

            def check(host_layers):
                for host in host_layers:
                    if not layer_exists(host):
                        raise ValueError(host)
            """,
            at=[(4, 28, "`DenseNet169(...)` builds the same model again at every iteration")],
            note="a lookup helper called per host layer (the labelled CnnWatermarker pattern)",
        ),
        flagged(
            """
            import os
            import keras

            ROOT = "models"

            def score(batch):
                model = keras.models.load_model(os.path.join(ROOT, "net.keras"))
                return model.predict(batch, verbose=0)

            for batch in batches:
                print(score(batch))

            results = [keras.saving.load_model("net.keras").predict(b) for b in batches]
            """,
            at=[(7, 13, "`load_model(...)` loads the same model again at every iteration"),
                (13, 12, "`load_model(...)` loads the same model again")],
        ),
        clean(
            """
            import keras

            for fold in range(5):
                model = keras.applications.ResNet50(weights=None, classes=10)
                model.compile("adam", "sparse_categorical_crossentropy")
                model.fit(x, y)

            for path in checkpoints:
                m = keras.models.load_model(path)
                print(m.evaluate(x, y))

            def make():
                return keras.applications.MobileNetV2(weights=None)

            models = [make() for _ in range(3)]
            base = keras.applications.VGG16(weights=None)
            for units in (32, 64):
                head = keras.applications.VGG16(weights=None, classes=units).layers
            for i in range(3):
                net = keras.models.load_model("m.keras")
                net.load_weights(f"w{i}.weights.h5")
                net.predict(x)
            """,
            note="a fresh model trained per fold; a path per iteration; a model returned; built once; an "
                 "argument that changes; a model changed after loading",
        ),
    ]
