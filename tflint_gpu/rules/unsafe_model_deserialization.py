from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import argument, is_false
from tflint_gpu.semantic.names import short_name
from tflint_gpu.rules.base import Rule, clean, flagged

_SWITCH = "keras.config.enable_unsafe_deserialization"
_H5 = (".h5", ".hdf5")


def _table():
    from tflint_gpu.semantic.migration_table import table

    return table()


def _ran(outcome: dict, how: str) -> bool:
    return any(per.get(how, {}).get("result") == "ran" for per in outcome.values())


class UnsafeModelDeserialization(Rule):
    """Loading a Keras model or config with safe mode off: the file can run any Python code.

    ## What it does
    Finds, by the table `scripts/derive_migration.py` derives and executes
    (every public Keras 3 and tf_keras callable with a `safe_mode`
    parameter):

    * `load_model(path, safe_mode=False)` (`keras.models`/`keras.saving`,
      `tf.keras`, tf_keras), `deserialize_keras_object(config,
      safe_mode=False)`, `keras.layers.Lambda.from_config(config,
      safe_mode=False)`;
    * `keras.config.enable_unsafe_deserialization()`, which turns safe mode off
      for the whole process;
    * under tf_keras (Keras 2), `load_model` of a downloaded `.h5`/`.hdf5`
      file (`keras.utils.get_file(...)`, `huggingface_hub.hf_hub_download(...)`,
      `urllib.request.urlretrieve(url, "model.h5")`, `gdown`, `wget`), whatever
      `safe_mode` says.

    Not reported: a `safe_mode` the linter cannot read; test modules; Keras
    3's `load_model` of a downloaded file with the default safe mode (it
    refuses a saved Python `lambda`, measured).

    ## Why is this bad?
    A `.keras` or `.h5` file can hold a `Lambda` layer whose function is a
    Python `lambda`, saved as bytecode; with safe mode off, Keras turns it back
    into a function and runs it while loading the model. What an attacker
    needs: to supply or replace the file this code loads (a model shared on a
    hub, a download, a writable path); then their code runs with this
    process's rights when it loads the model. Executed under TF 2.21 with
    Keras 3.15 and tf_keras 2.21 on a model whose `Lambda` records that it ran:

    * Keras 3: `.keras` and `.h5` refused by default (ValueError), ran with
      `safe_mode=False`; after `enable_unsafe_deserialization()`, `.keras` ran
      by default (`.h5` was still refused);
    * tf_keras: `.keras` refused by default, ran with `safe_mode=False`;
      **`.h5` ran by default**, and with `safe_mode=True` too;
    * `deserialize_keras_object` of the `Lambda`'s config: refused by default,
      ran with `safe_mode=False`, in both.

    The table records each outcome (`kind: safe_mode`).

    ## Example
    ```python
    model = keras.models.load_model(path, safe_mode=False)
    ```

    Use instead:
    ```python
    @keras.saving.register_keras_serializable()
    def scale(x):
        return x * 2.0

    model = keras.models.load_model(path)  # a registered function is loaded by name, not bytecode
    ```

    ## Fix safety
    No fix: a model that needs its `lambda` fails to load in safe mode, and
    making its functions loadable by name is a change to the code that saved
    it.

    ## Measured effect
    The outcomes above, executed by `scripts/derive_migration.py` (no timing:
    a security rule). `examples/TFG801`: a `Lambda` model saved and loaded
    back with `safe_mode=False` (before) and with its function registered and
    the default safe mode (after): the same outputs (equivalent).
    """

    code = "TFG801"
    name = "unsafe-model-deserialization"
    message = "A Keras model or config loaded with safe mode off: the file can run code"
    needs = (("safe_mode", "unsafe_deserialization", "load_model"),)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if ctx.in_test_module:
            return  # a test round-trips its own model
        qualname = ctx.call_name(node)
        if qualname is None or not qualname.startswith("keras."):
            return
        flavour = ctx.keras_flavour(node.func) or "keras3"
        entry = _table().safe_mode(qualname, flavour)
        if entry is None:
            return
        outcome = entry["outcome"]
        if entry.get("switch"):
            if _ran(outcome, "default"):
                ctx.report(node, "`enable_unsafe_deserialization()` turns Keras's safe mode off for the whole "
                                 "process: a model file loaded later can run any Python code (a saved `lambda`); "
                                 "whoever can supply or replace such a file runs code here")
            return
        given = argument(node, entry["position"], "safe_mode")
        if is_false(given):
            if _ran(outcome, "safe_mode=False"):
                what = qualname.rsplit(".", 1)[-1]
                ctx.report(given, f"`safe_mode=False` lets what `{what}` reads run any Python code (a saved "
                                  f"`lambda`): whoever can supply or replace it runs code here; keep safe mode and "
                                  f"register the functions it needs")
            return
        if (given is None or given.deep_equals(cst.Name("True"))) and flavour == "tf_keras" \
                and qualname.endswith("load_model") \
                and outcome.get(".h5", {}).get("default", {}).get("result") == "ran":
            self._downloaded_h5(node, ctx)

    def _downloaded_h5(self, node: cst.Call, ctx) -> None:
        path = argument(node, 0, "filepath")
        download = ctx.origins.download(path, ctx.scope, at=path) if path is not None else None
        if download is None:
            return
        suffix: Optional[str] = ctx.origins.suffix(download)
        if isinstance(path, cst.SimpleString) and isinstance(path.evaluated_value, str):
            suffix = ctx.origins.suffix(cst.Call(cst.Name("_"), [cst.Arg(path)])) or suffix
        if suffix not in _H5:
            return
        source = short_name(ctx.call_name(download) or "a download")
        ctx.report(path, f"tf_keras runs the Python code a `.h5` file's `Lambda` layers hold whatever `safe_mode` "
                         f"says, and this file comes from `{source}`: whoever controls that download runs code "
                         f"here; load a `.keras` file, or with Keras 3")

    cases = [
        flagged(
            """
            import keras
            import tensorflow as tf

            model = keras.models.load_model("model.keras", safe_mode=False)
            other = tf.keras.models.load_model(path, None, True, False)
            keras.config.enable_unsafe_deserialization()
            layer = keras.saving.deserialize_keras_object(config, safe_mode=False)
            """,
            at=[(4, 58, "`safe_mode=False` lets what `load_model` reads run any Python code (a saved `lambda`): "
                        "whoever can supply or replace it runs code here"),
                (5, 54, "`safe_mode=False` lets what `load_model` reads"),
                (6, 1, "`enable_unsafe_deserialization()` turns Keras's safe mode off for the whole process"),
                (7, 65, "`safe_mode=False` lets what `deserialize_keras_object` reads")],
            note="by keyword and by position (load_model's fourth parameter); the process-wide switch",
        ),
        flagged(
            """
            import urllib.request
            import tf_keras

            path = tf_keras.utils.get_file("weights.h5", origin="https://example.com/weights.h5")
            model = tf_keras.models.load_model(path)
            urllib.request.urlretrieve(url, "net.hdf5")
            net = tf_keras.models.load_model("net.hdf5", safe_mode=True)
            """,
            at=[(5, 36, "tf_keras runs the Python code a `.h5` file's `Lambda` layers hold whatever `safe_mode` "
                        "says, and this file comes from `keras.utils.get_file`"),
                (7, 34, "tf_keras runs the Python code a `.h5` file's `Lambda` layers hold whatever `safe_mode` "
                        "says, and this file comes from `urllib.request.urlretrieve`")],
            note="tf_keras loads an .h5 file's lambda by default and with safe_mode=True (executed)",
        ),
        clean(
            """
            import keras
            import tf_keras

            a = keras.models.load_model("model.keras")
            b = keras.models.load_model(path, safe_mode=trusted)
            c = keras.models.load_model(keras.utils.get_file("m.h5", origin=url))
            d = tf_keras.models.load_model("local.h5")
            e = tf_keras.models.load_model(tf_keras.utils.get_file("m.keras", origin=url))
            f = keras.models.load_model(path, safe_mode=True)
            """,
            note="the default safe mode; a safe_mode the linter cannot read; Keras 3 refuses a downloaded .h5's "
                 "lambda by default; a local .h5 under tf_keras; a downloaded .keras (tf_keras refuses it by "
                 "default)",
        ),
    ]
