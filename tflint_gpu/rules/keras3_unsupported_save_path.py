from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from tflint_gpu.semantic import values
from tflint_gpu.semantic.api import exact_argument, keyword, without_args
from tflint_gpu.semantic.facts import CALLBACK_SAVE
from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

_SAVE_FUNCTIONS = frozenset({"keras.models.save_model", "keras.saving.save_model"})
_LOAD_FUNCTIONS = frozenset({"keras.models.load_model", "keras.saving.load_model"})
_CHECKPOINT = "keras.callbacks.ModelCheckpoint"
# Endings that name a TensorFlow SavedModel directory or checkpoint, never a Keras 3 file.
_TF_SUFFIXES = (".ckpt", ".tf", ".pb", ".savedmodel", ".model", ".index")
_MODEL_FILES = (".keras", ".h5", ".hdf5")
# A file name's suffix: a dot, a letter, letters and digits, at its end.
_SUFFIX = re.compile(r"\.[a-z][a-z0-9]*$")
# The suffixes a weights file of Keras 2 may have that Keras 3's `.weights.h5` replaces ("": none, a
# TensorFlow checkpoint prefix), and a whole model's that `.keras` replaces in `ModelCheckpoint`.
_WEIGHTS_SUFFIXES = (".h5", ".hdf5", ".ckpt", ".tf", "")
_MODEL_SUFFIXES = (".hdf5", "")
_LOAD_WEIGHTS = frozenset({"load_weights"})
# How a flag's value may be read for its default to be renamed to `.weights.h5` (``Summary.flag_reads``:
# the path of a weights save or load, a truth value).
_WEIGHTS_READS = frozenset({"save_weights", "load_weights", "test"})
# The methods of the checkpoint load status tf_keras's `load_weights` returns for a TF checkpoint (Keras 3's
# returns None); `expect_partial()` only silences the warnings about values the checkpoint has and the
# model does not use.
_LOAD_STATUS = frozenset({"expect_partial", "assert_consumed", "assert_existing_objects_matched",
                          "assert_nontrivial_match"})
# Keywords of Model.save/save_weights/load_weights in Keras 2 and 3.
_KERAS_KEYWORDS = frozenset({"filepath", "overwrite", "include_optimizer", "signatures", "options", "save_traces",
                             "zipped", "skip_mismatch", "by_name", "max_shard_size"})


def _tf_format(ending: str) -> Optional[str]:
    """What a path ending names when Keras 3 cannot read or write it: "a SavedModel
    directory" (no suffix: a directory or a checkpoint prefix; or a TF suffix)."""
    last = ending.rstrip("/").rsplit("/", 1)[-1].lower()
    if ending.endswith("/") or not _SUFFIX.search(last):
        # no suffix: a name whose last dot is a version's ("Model_V2.4_FP32") has none either
        return "a SavedModel directory or checkpoint prefix"
    if last.endswith(_TF_SUFFIXES):
        return f"a `{last[last.rindex('.'):]}` TensorFlow path"
    return None


class Keras3UnsupportedSavePath(Rule):
    """Keras 2 saving to (or loading from) a SavedModel directory or TF checkpoint: `model.save("saved_model")`.

    ## What it does
    Finds, in Keras 3 code (`keras`, or `tf.keras` under TensorFlow 2.16+),
    saving and loading calls whose path is known (a literal, `os.path.join`,
    `+`, an f-string, `%` or `.format()` text after the last field, `pathlib`
    `/`, through names, a constant of another module of the project such as
    `cfg.PB_MODEL` or `from settings import EXPORT_DIR` that no module
    reassigns, a name read under `if path.endswith(".ckpt"):`, the default of
    a command-line flag read as `FLAGS.name` (absl) or `args.name` (argparse:
    `parser.parse_args()`'s result, or a parameter) where every module of the
    run that defines the flag gives it that ending, the reading module's own
    definition first (a parameter not named `args`, `opt`, `options`... reads
    its own module's only) to name a TensorFlow SavedModel directory or
    checkpoint instead of a Keras file:

    * `model.save(path)`, `keras.models.save_model(model, path)` with a path
      that has no suffix, ends in `/`, or ends in `.ckpt`, `.tf`, `.pb`...;
    * `keras.models.load_model(path)` on such a path;
    * `model.save_weights(path)` with any path not ending in `.weights.h5`
      (`w.ckpt`, `weights`, `w.h5`; `.weights.json` is the sharded format);
    * `model.load_weights(path)` on a checkpoint path (no suffix, `.ckpt`);
    * `keras.callbacks.ModelCheckpoint(path)`: with `save_weights_only=True`,
      a path not ending in `.weights.h5`; without, one not ending in `.keras`
      or `.h5` (`{epoch:02d}.hdf5` too);
    * a call of a function of the project (this module or another) that hands
      its parameter unchanged to one of the calls above, reported at the
      call that gives the path: `utils.save_weights(self.generator, d +
      "generator-{}.h5".format(step))` where `utils.py` has `def
      save_weights(model, filepath): model.save_weights(filepath)`. The
      model is the argument given for the function's receiver parameter, and
      must be a Keras 3 model there; a function that reads the path's suffix
      (`path.endswith(".keras")` in an `if`) or rebinds it is not followed;
    * the construction of a project's own Keras callback class (a base
      `keras.callbacks.Callback` or `ModelCheckpoint`) whose methods save the
      callback's model (`self.model.save_weights(filepath)`) at the path its
      `__init__` stores (`self.filepath = filepath`, read as is or through
      `self.filepath.format(...)`), under the arguments the save depends on
      (`if self.save_weights_only:` and the call's `save_weights_only=True`):
      `ModelCheckpoint(os.path.join(d, "ep{epoch:03d}.h5"), save_weights_only=True)`
      with bubbliiiing/unet-tf2's own `ModelCheckpoint`; the class's own
      `self.model.save_weights(...)` is reported too, naming a module that
      constructs it with such a path (`train.py` for utils/callbacks.py); a
      top-level name of a module (a config naming no framework) that other
      modules save weights at (`model.save_weights(config.save_model_dir)`)
      is reported, and renamed, where it is written. A model made by a
      project class with a Keras base (`VisionTransformer(tf.keras.Model)` of
      another module), or by a def of another module every `return` of which
      is a Keras `Model(...)`/`Sequential(...)` call (`yolo = YoloV3(...)`), is
      a Keras model;
    * the default of an absl string flag (`flags.DEFINE_string("weights",
      "./checkpoints/yolov3.tf", ...)`) whose value the project reads as the
      path of a weights save or load (`FLAGS.weights` in this module, or in a
      module that reads the flag without defining it: a module that defines
      it is a program of its own), reported at the default;
    * `model.load_weights(path).expect_partial()` (and `assert_consumed()`
      and the other methods of tf_keras's checkpoint load status): Keras 3's
      `load_weights` returns None.

    A dict written out gives its value to `paths["model"]`; a loop over its
    keys, values or items (or over a list of strings) gives the loop
    variable the text all of them end with, when their suffixes agree
    (`for name in nets: model.save(f"{d}/{name}")`).

    A parameter's path is the one every call of its function in the module
    gives it (the argument in its place or of its name, else its default),
    when they agree.

    A path's last part whose last dot is not a suffix's (`Model_V2.4`,
    `ckpt-1000` after `w.`) has no suffix.

    The model's Keras is that of the call that made it, else the file's; a
    receiver made by a non-Keras call (`tf.train.Checkpoint(...).save(prefix)`,
    a PIL image) is not a model. A call that passes `save_format=` is left to
    TFG901. Not reported: tf_keras code, a path whose ending cannot be read,
    a directory loaded in a file that uses Orbax (Keras 3.15 loads Orbax
    checkpoint directories), files reaching `keras.src` (Keras's own code),
    branches that never run under Keras 3 (version guards, `except
    ValueError:` fallbacks) and code a test expects to raise.

    ## Why is this bad?
    Measured under TensorFlow 2.21 with Keras 3.15 (tf_keras 2.21 runs each):
    * `model.save("saved")` / `save_model(model, "m.tf")`: `ValueError: Invalid
      filepath extension for saving. Please add either a `.keras` extension
      for the native Keras format (recommended) or a `.h5` extension. Use
      `model.export(filepath)` if you want to export a SavedModel`;
    * `load_model("saved")`: `ValueError: File format not supported ... Note
      that the legacy SavedModel format is not supported by `load_model()` in
      Keras 3` (a directory written by `model.export` too);
    * `save_weights("w.ckpt")` (also `"weights"`, `"w.h5"`): `ValueError: The
      filename must end in `.weights.h5``;
    * `load_weights("w.ckpt")`: `ValueError: File format not supported`;
    * `ModelCheckpoint("cp.ckpt", save_weights_only=True)`: `ValueError: When
      using `save_weights_only=True` in `ModelCheckpoint`, the filepath
      provided must end in `.weights.h5``; `ModelCheckpoint("cp")` or
      `"cp.hdf5"`: `ValueError: The filepath provided must end in `.keras``.
    Each is raised at the call, before anything is written.

    ## Example
    ```python
    model.save("export/model")
    model.save_weights("checkpoints/ckpt")
    restored = tf.keras.models.load_model("export/model")
    ```

    Use instead:
    ```python
    model.save("export/model.keras")            # or model.export("export/model") for serving
    model.save_weights("checkpoints/ckpt.weights.h5")
    restored = tf.keras.models.load_model("export/model.keras")
    ```

    ## Fix safety
    Where the file's name is written in this module (in the call, or in a
    local name read only by saves and loads: a literal, the text that ends an
    f-string, the template of `%` or `.format()`, the last part of
    `os.path.join`), the fix renames it: a weights file (`save_weights`,
    `ModelCheckpoint(save_weights_only=True)`, a project helper or callback
    class that saves weights at the path) to `.weights.h5` (`x.h5`, `x.hdf5`,
    `x.ckpt`, `x.tf` and a suffixless checkpoint prefix `x` -> `x.weights.h5`;
    `"ep{epoch:03d}-loss{loss:.3f}.h5"` -> `"ep{epoch:03d}-loss{loss:.3f}.weights.h5"`),
    a whole model's `ModelCheckpoint` file (`.hdf5`, suffixless) to `.keras`,
    and with it every `load_weights` / `load_model` of the same text in the
    module, so what is saved is what is loaded. No fix, and the message says
    why, when the name is also written anywhere the rename would not reach:
    another string of the module (a message, a docstring, a load that reads
    the name from another folder), a name also read otherwise (`base + "_x"`),
    or another checked file of the project (its strings, weights saves left
    out: those get the same rename); the index of the project's strings only
    covers the files of the run. A name written in another module (a config
    constant) is reported where it is read, without a fix.
    * Renaming an HDF5 weights save (`.h5`, `.hdf5`) alone is safe: the
      original raises before writing anything, and nothing in the project
      names the old file.
    * Renaming a TF checkpoint (`.ckpt`, `.tf`, suffixless) is unsafe: code
      that finds checkpoints by folder (`tf.train.latest_checkpoint(dir)`,
      as google/automl's efficientdet train.py does for the
      `ModelCheckpoint(os.path.join(model_dir, "ckpt-{epoch:d}"))` files)
      names no file and finds none after; and TensorFlow made the
      checkpoint's folder where h5py makes none (measured:
      `save_weights("new_dir/x.weights.h5")` raises FileNotFoundError under
      Keras 3, `save_weights("new_dir/x")` runs under tf_keras; Keras 3's
      `ModelCheckpoint` makes its folder).
    * Renaming loads too is unsafe: weights saved before the upgrade under
      the old name (a Keras 2 `.h5`, which Keras 3 can still load) are no
      longer what the load reads.
    * `.keras` for a whole model is unsafe: the file's format changes (HDF5
      or a SavedModel to a Keras zip) for any reader outside the project.
      Not `.h5`: Keras 3.15 writes a legacy `.h5`, but its `load_model`
      raises on one compiled with `"mse"` (`ValueError: Could not deserialize
      'keras.metrics.mse'`).
    * An absl flag's default is renamed to `.weights.h5` (unsafe, as the
      checkpoint renames above) only together with every absl flag default
      of the project that names the same file (yolov3-tf2: convert.py's
      `--output`, which convert.py saves at, and the `--weights` of train.py,
      detect.py and the tools, which they load): each where it is written,
      when all give the same text and every read of each is the path of a
      weights save or load, or a truth value (`if FLAGS.weights:`); refused,
      with the reason, when a flag is read otherwise (`os.path.exists(FLAGS.weights
      + ".index")`, `load_darknet_weights(yolo, FLAGS.weights)`), another
      string of the project names the file, or the new name is named already
      (`yolov3.h5` beside `yolov3.tf`: both would be `yolov3.weights.h5`). A
      path given on the command line is the user's to rename. Notebooks are
      not in the project's index: a notebook's own default is renamed with
      the modules' and does not hold theirs back.
    * Dropping `.expect_partial()` from `model.load_weights(path).expect_partial()`
      (a statement of its own) is safe: in tf_keras it only silences the
      warnings about checkpoint values the model does not use (measured: the
      same weights and predictions with and without it), and Keras 3 has no
      load status. Not removed where the status is used, nor the
      `assert_*()` checks (reported without a fix). Not reported in a branch
      for TF checkpoints only (`if path.endswith(".ckpt"):`, DeepReg
      predict.py:287): its load raises first, and the branch is left with
      the format.
    A `model.save(dir)` to a SavedModel directory is not rewritten, even
    where the project only reloads it with `tf.saved_model.load`:
    `model.export(dir)` writes another object (measured: what
    `tf.saved_model.load` gives back is callable after tf_keras's `save`, not
    after Keras 3's `export`, which has `serve`; the `serving_default`
    signature's output is keyed by the last layer's name, `"out"`, after
    `save` and `"output_0"` after `export`), and `load_model` cannot read
    it back.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the ValueErrors above (also
    `save_weights(d + "/generator-{}.h5".format(5))`,
    `load_model(".../BirdNET_GLOBAL_6K_V2.4_Model")` and `save("model_v2.4_final")`,
    `load_weights(".../weights-epoch2.ckpt")`); `save("m.keras")`,
    `save("m.h5")`, `save("m.hdf5")`, `save_weights("w.weights.h5")`,
    `load_weights` of `.keras`/`.weights.h5`, `ModelCheckpoint("cp.keras")`,
    `ModelCheckpoint("cp-{epoch:02d}.h5")` and `ModelCheckpoint("w.weights.h5",
    save_weights_only=True)` run. tf_keras 2.21 runs every call above, and
    writes and reads `.weights.h5` and `.keras` names too. The fixes,
    executed (the original under tf_keras, the fix under Keras 3): the same
    predictions from weights saved by `save_weights`, `ModelCheckpoint` and a
    project's callback class and loaded back, and from a model checkpointed
    to `.hdf5` (tf_keras) / `.keras` (Keras 3) and reloaded with `load_model`.
    On the upgrade set (benchmarks/upgrade, score.py): save-format labels
    found 6/17 before, 17/17 after; 15 rewritten by the fix (bubbliiiing/unet-tf2
    train.py, train_medical.py, utils/utils_fit.py; TensorFlow2.0_ResNet
    config.py:8, with train.py:96's `save_format=` dropped; vision-transformer
    train.py:73), every rewritten line right; the other two (the callback's
    own saves) follow from the rename where the paths are written.
    zzh8829/yolov3-tf2 (run.py --no-drivers): found 11/29 -> 20/29, fixed
    5 -> 15 with the flag defaults and `.expect_partial()` (train.py:25,
    convert.py:9, detect.py:14/34, detect_video.py:14, tools/export_*.py:16,
    the notebook's two loads), every rewritten line right. The flag-default
    fix executed: a TF checkpoint saved and loaded with `expect_partial()`
    under tf_keras, the `.weights.h5` file under Keras 3, the same prediction.
    examples/TFG908 (`tflint-gpu verify --rule TFG908`): fixes-error,
    `ValueError` before, the `.keras`/`.weights.h5` round trip after.
    """

    code = "TFG908"
    name = "keras3-unsupported-save-path"
    message = "Keras 3 cannot save to or load from this path"
    needs = (("save", "load_", "ModelCheckpoint", "DEFINE_string"),)
    migration = True
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if ctx.keras_internals:
            return  # Keras's own code (its tests load Orbax checkpoint directories, on purpose)
        qualname = ctx.call_name(node)
        if qualname is not None:
            if ".DEFINE_" in qualname and (qualname.startswith("absl.flags.") or (
                    qualname.startswith("tensorflow.") and ".flags." in qualname)):
                self._flag(node, qualname, ctx)
                return
            if qualname in _SAVE_FUNCTIONS or qualname in _LOAD_FUNCTIONS or qualname == _CHECKPOINT:
                if ctx.migration.api_flavour(node.func, ctx.scope) == KERAS3:
                    self._function(node, qualname, ctx)
                return
        for path, what, receiver, keywords, helper in ctx.path_handoffs(node):
            self._handed(ctx, path, what, receiver, keywords, helper, node)
        if qualname is not None or not isinstance(node.func, cst.Attribute):
            return
        method = node.func.attr.value
        if method in _LOAD_STATUS:
            self._load_status(node, ctx)
            return
        save_format = keyword(node, "save_format")
        if method not in ("save", "save_weights", "load_weights") or (save_format is not None
                                                                      and method != "save_weights"):
            return  # save(save_format=) is TFG901's (which drops it where the suffix decides)
        if any(a.keyword is not None and a.keyword.value not in _KERAS_KEYWORDS | {"save_format"} for a in node.args):
            return  # a save() of another signature (save_index=, compression=): not Keras's
        path = exact_argument(node, 0, "filepath")
        if path is None or ctx.handed_path(path):
            return  # a parameter of a def that saves at it: told at each call of the def
        if method == "save_weights" and not ctx.migration.legacy_env and ctx.target.keras3:
            given = [(end, module) for end, module in ctx.callback_weights_paths(node)
                     if not end.endswith((".weights.h5", ".weights.json"))]
            if given:  # a project callback's own save, at the paths other modules construct it with
                self._report(ctx, path, "Keras 3 `save_weights()` raises ValueError unless the path ends in "
                                        f"`.weights.h5` (no TF checkpoints): `{given[0][1]}` gives this callback "
                                        f"`{given[0][0]}` (renamed where it is written)")
                return
        ending = ctx.path_ending(path)
        if ending is None or not self._keras3_model(node.func.value, ctx, method, self._status_read(node, ctx)):
            return
        message = self._method_message(method, ending, ctx)
        if message is not None:
            self._report(ctx, path, message,
                         self._weights_rename(path, node, ctx, drop=save_format) if method == "save_weights" else None)

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        """A top-level name other modules of the project save weights at (``ctx.path_readers``:
        `config.save_model_dir` in `model.save_weights(config.save_model_dir)`): told, and renamed,
        where the name is written."""
        if len(node.targets) == 1 and ctx.absl_flag(node.targets[0].target) is not None:
            self._flag_assigned(node, ctx.absl_flag(node.targets[0].target), ctx)
            return
        if ctx.scope.parent is not None or len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name) \
                or ctx.keras_internals or ctx.migration.legacy_env or not ctx.target.keras3:
            return
        readers = ctx.path_readers().get(node.targets[0].target.value)
        saves = sorted({module for how, module in readers or () if how == "save_weights"})
        if not saves:
            return
        ending = ctx.path_ending(node.value)
        if ending is None or ending.endswith((".weights.h5", ".weights.json")):
            return
        loads = sorted({module for how, module in readers if how == "load_weights"})
        told = f"`{saves[0]}`{' ...' if len(saves) > 1 else ''} saves weights at this path" + (
            f", `{loads[0]}`{' ...' if len(loads) > 1 else ''} loads them" if loads else "")
        rename = ctx.file_renames.rename(node.value, ctx.scope, _WEIGHTS_SUFFIXES, ".weights.h5", _LOAD_WEIGHTS)
        fix = None
        if rename is not None and not rename.refused:
            checkpoint = not rename.old.lower().endswith((".h5", ".hdf5"))
            fix = Fix(f"Save to `{rename.new}`{' (and load from it)' if loads else ''}"
                      f"{' (h5py makes no folder: create it first)' if checkpoint else ''}",
                      Safety.UNSAFE if loads or checkpoint else Safety.SAFE, rename.replacements)
        elif rename is not None:
            told += f"; not renamed here: {rename.refused}"
        self._report(ctx, node.value, "Keras 3 `save_weights()` raises ValueError unless the path ends in "
                                      f"`.weights.h5` (no TF checkpoints): {told}", fix)

    def _flag(self, node: cst.Call, qualname: str, ctx) -> None:
        """An absl flag whose default is a path the project's Keras 3 weights saves or loads read as
        ``FLAGS.<name>`` (``ctx.flag_readers``): told at the default, renamed to `.weights.h5` where
        every absl flag naming the same file is read only so (``ctx.file_renames.flag_default``)."""
        if ctx.keras_internals or ctx.migration.legacy_env or not ctx.target.keras3 \
                or not qualname.endswith("DEFINE_string"):
            return
        name = exact_argument(node, 0, "name")
        default = exact_argument(node, 1, "default")
        flag = name.evaluated_value if isinstance(name, cst.SimpleString) else None
        if not isinstance(flag, str) or default is None:
            return
        ending = ctx.path_ending(default)
        readers = ctx.flag_readers("absl:" + flag)
        if ending is None or not readers:
            return
        saves = sorted({module for how, module in readers if how == "save_weights"})
        loads = sorted({module for how, module in readers if how == "load_weights"})
        if saves and not ending.endswith((".weights.h5", ".weights.json")):
            message = "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF checkpoints)"
        elif loads and self._loaded_format(ending, ctx) is not None:
            message = (f"Keras 3 `load_weights()` raises ValueError on {self._loaded_format(ending, ctx)}: it reads "
                       f"`.weights.h5`, `.keras` and `.h5` files only")
        else:
            return
        def who(found):
            return f"{found[0] if found[0] == 'this module' else f'`{found[0]}`'}{' ...' if len(found) > 1 else ''}"

        told = f"{who(saves)} saves weights at and loads weights from" if saves == loads else " and ".join(
            f"{who(found)} {verb}" for found, verb in ((saves, "saves weights at"), (loads, "loads weights from"))
            if found)
        head, _, rest = message.partition(":")
        message = f"{head}: {told} `FLAGS.{flag}`, whose default this is{':' + rest if rest else ''}"
        rename = ctx.file_renames.flag_default("absl:" + flag, default, _WEIGHTS_SUFFIXES, ".weights.h5",
                                               _WEIGHTS_READS, readers)
        fix = None
        if rename is not None and rename.refused:
            message += f"; not renamed here: {rename.refused}"
        elif rename is not None:
            checkpoint = not rename.old.lower().endswith((".h5", ".hdf5"))
            fix = Fix(f"Default to `{rename.new}` (with every flag of the project that names this file)"
                      f"{' (h5py makes no folder: create it first)' if checkpoint and saves else ''}",
                      Safety.UNSAFE, rename.replacements)
        self._report(ctx, default, message, fix)

    def _flag_assigned(self, node: cst.Assign, key: str, ctx) -> None:
        """`FLAGS.weights = "checkpoints/yolov3_train_3.tf"` (yolov3-tf2's notebook) where the module's
        reads of the flag are weights loads or saves (``ctx.flag_readers``): told, without a fix (the
        file is written elsewhere, by a template such as `"yolov3_train_{epoch}.tf"`)."""
        if ctx.keras_internals or ctx.migration.legacy_env or not ctx.target.keras3:
            return
        ending = ctx.path_ending(node.value)
        readers = ctx.flag_readers(key)
        if ending is None or not readers:
            return
        flag = key.partition(":")[2]
        if any(how == "save_weights" for how, _ in readers) and not ending.endswith((".weights.h5", ".weights.json")):
            self._report(ctx, node.value, "Keras 3 `save_weights()` raises ValueError unless the path ends in "
                                          f"`.weights.h5` (no TF checkpoints): weights are saved at `FLAGS.{flag}`")
        elif any(how == "load_weights" for how, _ in readers) and self._loaded_format(ending, ctx) is not None:
            self._report(ctx, node.value, f"Keras 3 `load_weights()` raises ValueError on "
                                          f"{self._loaded_format(ending, ctx)}: weights are loaded from "
                                          f"`FLAGS.{flag}`: it reads `.weights.h5`, `.keras` and `.h5` files only")

    @staticmethod
    def _status_read(call: cst.Call, ctx) -> bool:
        """Is the result of ``call`` (a `load_weights`) read by a method of tf_keras's checkpoint load
        status (`.expect_partial()`): a use only a Keras model's `load_weights` has?"""
        parent = next(ctx.scope.ancestors(call), None)
        return isinstance(parent, cst.Attribute) and parent.value is call and parent.attr.value in _LOAD_STATUS

    def _load_status(self, node: cst.Call, ctx) -> None:
        """`model.load_weights(path).expect_partial()`: Keras 3's `load_weights` returns None."""
        loaded = node.func.value
        if not (isinstance(loaded, cst.Call) and isinstance(loaded.func, cst.Attribute)
                and loaded.func.attr.value == "load_weights" and not node.args
                and self._keras3_model(loaded.func.value, ctx, "load_weights", True)):
            return
        path = exact_argument(loaded, 0, "filepath")
        if path is not None and ctx.suffix_tested(path):
            return  # a branch for TF checkpoints only (`if path.endswith(".ckpt"):`): its load raises first
        method = node.func.attr.value
        message = (f"Keras 3 `load_weights()` returns None: `.{method}()` raises AttributeError "
                   f"(tf_keras returned a TF checkpoint's load status)")
        parent = next(ctx.scope.ancestors(node), None)
        fix = None
        if method == "expect_partial" and isinstance(parent, cst.Expr) and parent.value is node:
            fix = Fix("Remove `.expect_partial()`", Safety.SAFE, {node: loaded})
        else:
            message += "; not removed here: " + ("its result is used" if method == "expect_partial" else
                                                 f"`.{method}()` checks what was restored")
        self._report(ctx, node.func.attr, message, fix)

    def _method_message(self, method: str, ending: str, ctx) -> Optional[str]:
        """What Keras 3's ``model.<method>(path)`` raises on a path ending in ``ending``, if it raises."""
        if method == "save":
            what = _tf_format(ending)
            if what is not None:
                return (f"Keras 3 `save()` raises ValueError on {what}: end the path in `.keras` "
                        f"(or `.h5`), or write a SavedModel with `model.export(path)`")
        elif method == "save_weights":
            if not ending.endswith((".weights.h5", ".weights.json")):
                return "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF checkpoints)"
        else:
            what = self._loaded_format(ending, ctx)
            if what is not None:
                return (f"Keras 3 `load_weights()` raises ValueError on {what}: it reads "
                        f"`.weights.h5`, `.keras` and `.h5` files only")
        return None

    def _handed(self, ctx, path: cst.BaseExpression, what: str, receiver: Optional[cst.BaseExpression],
                keywords, helper: str, call_node: cst.Call) -> None:
        """A path handed to a project def that saves or loads a model at it, unchanged, or to a project
        callback that saves its model there (``ctx.path_handoffs``)."""
        callback = CALLBACK_SAVE in keywords
        keywords = tuple(k for k in keywords if k != CALLBACK_SAVE)
        if "save_format" in keywords or any(k not in _KERAS_KEYWORDS and k != "compile" for k in keywords):
            return
        ending = ctx.path_ending(path)
        if ending is None:
            return
        if callback:  # the model a Keras callback class is given: Keras 3 where the target's Keras is
            if ctx.migration.legacy_env or not ctx.target.keras3:
                return
            message = self._method_message(what, ending, ctx)
            call = f"its model's `{what}()`"
        elif "." not in what:  # model.save(path) / save_weights / load_weights on the receiver parameter
            if receiver is None or not self._keras3_model(receiver, ctx, what):
                return
            message = self._method_message(what, ending, ctx)
            call = f"`{what}()`"
        else:
            if what.startswith("tf_keras.") or ctx.migration.legacy_env or not ctx.target.keras3:
                return
            if receiver is not None and not self._keras3_model(receiver, ctx):
                return
            save = what.endswith("save_model")
            found = _tf_format(ending) if save else self._loaded_format(ending, ctx)
            message = None if found is None else (
                f"Keras 3 `{'save_model' if save else 'load_model'}()` raises ValueError on {found}: it "
                f"{'writes' if save else 'reads'} `.keras` and `.h5` files")
            call = f"`{what.rsplit('.', 1)[-1]}()`"
        if message is not None:
            self._report(ctx, path, f"{message.split(':', 1)[0]}: `{helper}` passes this path to {call} "
                                    f"unchanged{':' + message.split(':', 1)[1] if ':' in message else ''}",
                         self._weights_rename(path, call_node, ctx) if what == "save_weights" else None)

    def _function(self, node: cst.Call, qualname: str, ctx) -> None:
        if keyword(node, "save_format") is not None:
            return
        if qualname == _CHECKPOINT:
            self._checkpoint(node, ctx)
            return
        save = qualname in _SAVE_FUNCTIONS
        path = exact_argument(node, 1 if save else 0, "filepath")
        ending = ctx.path_ending(path) if path is not None and not ctx.handed_path(path) else None
        what = None if ending is None else _tf_format(ending) if save else self._loaded_format(ending, ctx)
        if what is None:
            return
        if save:
            self._report(ctx, path, f"Keras 3 `save_model()` raises ValueError on {what}: end the path in "
                                    f"`.keras` (or `.h5`), or write a SavedModel with `model.export(path)`")
        else:
            self._report(ctx, path, f"Keras 3 `load_model()` raises ValueError on {what}: it reads `.keras` "
                                    f"and `.h5` files; wrap an exported SavedModel in "
                                    f"`keras.layers.TFSMLayer(path, call_endpoint=\"serving_default\")`")

    def _checkpoint(self, node: cst.Call, ctx) -> None:
        path = exact_argument(node, 0, "filepath")
        ending = ctx.path_ending(path) if path is not None else None
        if ending is None:
            return
        weights_arg = exact_argument(node, 3, "save_weights_only")
        weights = isinstance(weights_arg, cst.Name) and weights_arg.value == "True"
        full = weights_arg is None or (isinstance(weights_arg, cst.Name) and weights_arg.value == "False")
        if weights and not ending.endswith(".weights.h5"):
            self._report(ctx, path, "Keras 3 `ModelCheckpoint(save_weights_only=True)` raises ValueError unless "
                                    "the path ends in `.weights.h5`",
                         self._weights_rename(path, node, ctx, creates_folder=True))
        elif full and not ending.endswith((".keras", ".h5")):
            self._report(ctx, path, "Keras 3 `ModelCheckpoint` raises ValueError unless the path ends in `.keras` "
                                    "(or `.h5`)", self._model_rename(path, node, ctx))
        elif not weights and not full and _tf_format(ending) is not None:
            self._report(ctx, path, "Keras 3 `ModelCheckpoint` raises ValueError on a TF checkpoint path: end it "
                                    "in `.weights.h5` (weights) or `.keras`")

    @staticmethod
    def _loaded_format(ending: str, ctx) -> Optional[str]:
        """``_tf_format`` for a path that is read: a directory may also be an
        Orbax checkpoint, which Keras 3 loads, in a file that uses Orbax."""
        what = _tf_format(ending)
        if what is not None and "." not in ending.rstrip("/").rsplit("/", 1)[-1] and "rbax" in ctx.model.source:
            return None
        return what

    @staticmethod
    def _keras3_model(receiver: cst.BaseExpression, ctx, method: str = "", distinctive: bool = False) -> bool:
        if ctx.value_kind(receiver) == values.KERAS:
            return ctx.migration.object_flavour(receiver, ctx.scope) == KERAS3
        # `save_weights` is Keras's name alone: an unknown receiver in a TensorFlow file that names no
        # Keras (a training helper given `net`) is a Keras 3 model where the target is Keras 3.
        return ctx.unknown_keras3_model(receiver, distinctive=distinctive or method == "save_weights",
                                        project_classes=True)

    @staticmethod
    def _weights_rename(path: cst.BaseExpression, call: cst.Call, ctx, creates_folder: bool = False,
                        drop: Optional[cst.Arg] = None):
        """The rename of a weights file to `.weights.h5`, with the `load_weights` of it in the module
        (``ctx.file_renames``): safe when it renames the save alone (no load of the project reads the
        name) of an HDF5 file; unsafe when loads are renamed too (a file saved before under the old
        name is no longer what they read), and for a TF checkpoint that becomes an HDF5 file
        (`tf.train.latest_checkpoint(dir)` and the like find no checkpoint there any more; and
        TensorFlow made the checkpoint's folder, h5py makes none: FileNotFoundError where it does
        not exist, said in the fix's message unless a call that ``creates_folder``, Keras 3's
        `ModelCheckpoint`, writes it)."""
        rename = ctx.file_renames.rename(path, ctx.scope, _WEIGHTS_SUFFIXES, ".weights.h5", _LOAD_WEIGHTS, call=call)
        if rename is None or rename.refused:
            why = f"; not renamed here: {rename.refused}" if rename is not None else ""
            if drop is None:
                return why or None
            return Fix("Remove `save_format=` (the file's name must end in `.weights.h5` too, where it is written)",
                       Safety.UNSAFE, {call: without_args(call, [drop])}), why
        loads = f" (and the {rename.loads} `load_weights` of it)" if rename.loads else ""
        checkpoint = not rename.old.lower().endswith((".h5", ".hdf5"))
        folder = " (h5py makes no folder: create it first)" if checkpoint and not creates_folder else ""
        safe = not rename.loads and not checkpoint
        replacements = dict(rename.replacements)
        if drop is not None:  # one replacement of the call: the literal renamed in it, save_format= gone
            renamed = call
            if rename.direct:  # the saved name is written in the call's path
                renamed = renamed.deep_replace(rename.saved, replacements.pop(rename.saved))
            replacements[call] = without_args(renamed, [a for a in renamed.args
                                                        if a.keyword is not None and a.keyword.value == "save_format"])
        return Fix(f"Save to `{rename.new}`{loads}{folder}{' without `save_format=`' if drop is not None else ''}",
                   Safety.SAFE if safe else Safety.UNSAFE, replacements)

    @staticmethod
    def _model_rename(path: cst.BaseExpression, call: cst.Call, ctx):
        """The rename of a whole model's file to `.keras`, with the `load_model` of it in the module:
        unsafe (the file's format changes from HDF5 or a SavedModel to a Keras zip)."""
        rename = ctx.file_renames.rename(path, ctx.scope, _MODEL_SUFFIXES, ".keras", load_functions=_LOAD_FUNCTIONS,
                                         call=call)
        if rename is None:
            return None
        if rename.refused:
            return f"; not renamed here: {rename.refused}"
        loads = f" (and the {rename.loads} `load_model` of it)" if rename.loads else ""
        return Fix(f"Save to `{rename.new}`{loads}", Safety.UNSAFE, rename.replacements)

    @staticmethod
    def _report(ctx, node: cst.CSTNode, message: str, fix=None) -> None:
        """Report at ``node``; ``fix`` a ``Fix``, or the text saying why none is offered (appended), or
        both (a fix, and why it does less)."""
        if isinstance(fix, tuple):
            fix, why = fix
            message += why
        if isinstance(fix, str):
            message, fix = message + fix, None
        if not ctx.migration.guarded(node, ctx.scope):
            ctx.report(node, message, fix)

    cases = [
        flagged(
            """
            import os
            import tempfile

            import tensorflow as tf


            class Trainer:
                def __init__(self):
                    self.model = None
                    self.folder = tempfile.mkdtemp()

                def build(self):
                    init = tf.keras.initializers.Constant(0.5)
                    self.model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])

                def save(self):
                    self.model.save_weights(os.path.join(self.folder, "trainer.h5"))


            class Saver(tf.keras.callbacks.Callback):
                def __init__(self, folder):
                    super().__init__()
                    self.folder = folder

                def on_epoch_end(self, epoch, logs=None):
                    self.model.save_weights(os.path.join(self.folder, "saver.h5"))
            """,
            """
            import os
            import tempfile

            import tensorflow as tf


            class Trainer:
                def __init__(self):
                    self.model = None
                    self.folder = tempfile.mkdtemp()

                def build(self):
                    init = tf.keras.initializers.Constant(0.5)
                    self.model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])

                def save(self):
                    self.model.save_weights(os.path.join(self.folder, "trainer.weights.h5"))


            class Saver(tf.keras.callbacks.Callback):
                def __init__(self, folder):
                    super().__init__()
                    self.folder = folder

                def on_epoch_end(self, epoch, logs=None):
                    self.model.save_weights(os.path.join(self.folder, "saver.weights.h5"))
            """,
            at=[(17, 33, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5`"),
                (26, 33, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5`")],
            run="""
            import numpy as np

            trainer = Trainer()
            trainer.build()
            trainer.save()
            trainer.model.compile(tf.keras.optimizers.SGD(0.0), "mean_squared_error")
            trainer.model.fit(np.ones((2, 2), "float32"), np.zeros((2, 1), "float32"), epochs=1, verbose=0,
                              callbacks=[Saver(trainer.folder)])
            restored = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
            values = []
            for name in sorted(os.listdir(trainer.folder)):
                restored.load_weights(os.path.join(trainer.folder, name))
                values.append(restored(np.ones((1, 2), "float32")).numpy())
            loaded = np.stack(values)
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            note="self.model.save_weights where self.model is a Keras model another method builds, and in a "
                 "callback (self.model is the model it is given): found and renamed. Executed: both files "
                 "saved and read back, tf_keras before, Keras 3 after",
        ),
        flagged(
            """
            import os
            import tempfile

            import numpy as np
            import tensorflow as tf


            def make(value):
                init = tf.keras.initializers.Constant(value)
                return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])


            folder = tempfile.mkdtemp()
            model = make(0.5)
            model.save_weights(filepath=os.path.join(folder, "model"), save_format="tf")
            restored = make(0.0)
            restored.load_weights(filepath=os.path.join(folder, "model"))
            prediction = restored(np.array([[1.0, 2.0]], "float32")).numpy()
            """,
            """
            import os
            import tempfile

            import numpy as np
            import tensorflow as tf


            def make(value):
                init = tf.keras.initializers.Constant(value)
                return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])


            folder = tempfile.mkdtemp()
            model = make(0.5)
            model.save_weights(filepath=os.path.join(folder, "model.weights.h5"))
            restored = make(0.0)
            restored.load_weights(filepath=os.path.join(folder, "model.weights.h5"))
            prediction = restored(np.array([[1.0, 2.0]], "float32")).numpy()
            """,
            at=[(15, 29, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                         "checkpoints)"),
                (17, 32, "Keras 3 `load_weights()` raises ValueError on a SavedModel directory or checkpoint prefix")],
            effect=FIXES_ERROR,
            keras2_before=True,
            note="a TF checkpoint saved with save_format='tf' (calmisential/TensorFlow2.0_ResNet train.py:96, "
                 "evaluate.py:19): the name renamed with its load, and save_format= (TypeError in Keras 3; TFG901 "
                 "reports it without a fix) dropped by the same fix",
        ),
        flagged(
            """
            import os
            import tempfile

            import numpy as np
            import tensorflow as tf


            class ModelCheckpoint(tf.keras.callbacks.Callback):
                def __init__(self, filepath, save_weights_only=False):
                    super().__init__()
                    self.filepath = filepath
                    self.save_weights_only = save_weights_only

                def on_epoch_end(self, epoch, logs=None):
                    filepath = self.filepath.format(epoch=epoch + 1)
                    if self.save_weights_only:
                        self.model.save_weights(filepath, overwrite=True)
                    else:
                        self.model.save(filepath, overwrite=True)


            def make(value):
                init = tf.keras.initializers.Constant(value)
                return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])


            folder = tempfile.mkdtemp()
            x = np.array([[1.0, 2.0], [3.0, -1.0]], "float32")
            model = make(0.5)
            model.compile(tf.keras.optimizers.SGD(0.0), "mean_squared_error")
            weights = ModelCheckpoint(os.path.join(folder, "ep{epoch:03d}.h5"), save_weights_only=True)
            whole = ModelCheckpoint(os.path.join(folder, "model.h5"))
            model.fit(x, np.zeros((2, 1), "float32"), epochs=2, verbose=0, callbacks=[weights, whole])
            restored = make(0.0)
            restored.load_weights(os.path.join(folder, [n for n in sorted(os.listdir(folder)) if "ep" in n][-1]))
            prediction = restored(x).numpy()
            """,
            """
            import os
            import tempfile

            import numpy as np
            import tensorflow as tf


            class ModelCheckpoint(tf.keras.callbacks.Callback):
                def __init__(self, filepath, save_weights_only=False):
                    super().__init__()
                    self.filepath = filepath
                    self.save_weights_only = save_weights_only

                def on_epoch_end(self, epoch, logs=None):
                    filepath = self.filepath.format(epoch=epoch + 1)
                    if self.save_weights_only:
                        self.model.save_weights(filepath, overwrite=True)
                    else:
                        self.model.save(filepath, overwrite=True)


            def make(value):
                init = tf.keras.initializers.Constant(value)
                return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])


            folder = tempfile.mkdtemp()
            x = np.array([[1.0, 2.0], [3.0, -1.0]], "float32")
            model = make(0.5)
            model.compile(tf.keras.optimizers.SGD(0.0), "mean_squared_error")
            weights = ModelCheckpoint(os.path.join(folder, "ep{epoch:03d}.weights.h5"), save_weights_only=True)
            whole = ModelCheckpoint(os.path.join(folder, "model.h5"))
            model.fit(x, np.zeros((2, 1), "float32"), epochs=2, verbose=0, callbacks=[weights, whole])
            restored = make(0.0)
            restored.load_weights(os.path.join(folder, [n for n in sorted(os.listdir(folder)) if "ep" in n][-1]))
            prediction = restored(x).numpy()
            """,
            at=[(31, 27, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                         "checkpoints): `ModelCheckpoint` passes this path to its model's `save_weights()` "
                         "unchanged")],
            effect=FIXES_ERROR,
            keras2_before=True,
            note="the project's own ModelCheckpoint (bubbliiiing/unet-tf2 utils/callbacks.py:213, given its paths in "
                 "train.py:452): its save_weights on the callback's model at self.filepath.format(...) under "
                 "`if self.save_weights_only:`, told where the path is given; the whole model's save to .h5 runs "
                 "(Keras 3.15 writes legacy H5). Executed: tf_keras saves ep002.h5, Keras 3 ep002.weights.h5",
        ),
        flagged(
            """
            import os
            import tempfile

            import numpy as np
            import tensorflow as tf


            def make(value):
                init = tf.keras.initializers.Constant(value)
                return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])


            folder = tempfile.mkdtemp()
            x = np.array([[1.0, 2.0], [3.0, -1.0]], "float32")
            model = make(0.5)
            model.compile(tf.keras.optimizers.SGD(0.0), "mean_squared_error")
            best = tf.keras.callbacks.ModelCheckpoint(os.path.join(folder, "best_epoch_weights.h5"),
                                                      save_weights_only=True)
            model.fit(x, np.zeros((2, 1), "float32"), epochs=1, verbose=0, callbacks=[best])
            model.save_weights(folder + "/ep%03d-loss%.3f.hdf5" % (1, 0.5))
            prefix = f"{folder}/ckpt"
            model.save_weights(prefix)
            first, second = make(0.0), make(0.0)
            first.load_weights(os.path.join(folder, "best_epoch_weights.h5"))
            second.load_weights(prefix)
            predictions = np.stack([first(x).numpy(), second(x).numpy()])
            """,
            """
            import os
            import tempfile

            import numpy as np
            import tensorflow as tf


            def make(value):
                init = tf.keras.initializers.Constant(value)
                return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])


            folder = tempfile.mkdtemp()
            x = np.array([[1.0, 2.0], [3.0, -1.0]], "float32")
            model = make(0.5)
            model.compile(tf.keras.optimizers.SGD(0.0), "mean_squared_error")
            best = tf.keras.callbacks.ModelCheckpoint(os.path.join(folder, "best_epoch_weights.weights.h5"),
                                                      save_weights_only=True)
            model.fit(x, np.zeros((2, 1), "float32"), epochs=1, verbose=0, callbacks=[best])
            model.save_weights(folder + "/ep%03d-loss%.3f.weights.h5" % (1, 0.5))
            prefix = f"{folder}/ckpt.weights.h5"
            model.save_weights(prefix)
            first, second = make(0.0), make(0.0)
            first.load_weights(os.path.join(folder, "best_epoch_weights.weights.h5"))
            second.load_weights(prefix)
            predictions = np.stack([first(x).numpy(), second(x).numpy()])
            """,
            at=[(17, 43, "Keras 3 `ModelCheckpoint(save_weights_only=True)` raises ValueError unless the path ends "
                         "in `.weights.h5`"),
                (20, 20, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5`"),
                (22, 20, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5`"),
                (25, 21, "Keras 3 `load_weights()` raises ValueError on a SavedModel directory or checkpoint")],
            effect=FIXES_ERROR,
            keras2_before=True,
            note="the weights paths of Keras 2 (a .h5 checkpoint, a %-template .hdf5, a TF checkpoint prefix in an "
                 "f-string through a name) renamed to .weights.h5 with the loads of the same names (unsafe: a file "
                 "saved before under the old name is no longer read). Executed: the values tf_keras saved and read "
                 "back are those Keras 3 saves and reads after the fix",
        ),
        flagged(
            """
            import os
            import tempfile

            import numpy as np
            import tensorflow as tf

            folder = tempfile.mkdtemp()
            x = np.array([[1.0, 2.0], [3.0, -1.0]], "float32")
            init = tf.keras.initializers.Constant(0.5)
            model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])
            model.compile(tf.keras.optimizers.SGD(0.0), "mse")
            best = tf.keras.callbacks.ModelCheckpoint(os.path.join(folder, "best.hdf5"))
            model.fit(x, np.zeros((2, 1), "float32"), epochs=1, verbose=0, callbacks=[best])
            restored = tf.keras.models.load_model(os.path.join(folder, "best.hdf5"))
            prediction = restored(x).numpy()
            """,
            """
            import os
            import tempfile

            import numpy as np
            import tensorflow as tf

            folder = tempfile.mkdtemp()
            x = np.array([[1.0, 2.0], [3.0, -1.0]], "float32")
            init = tf.keras.initializers.Constant(0.5)
            model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])
            model.compile(tf.keras.optimizers.SGD(0.0), "mse")
            best = tf.keras.callbacks.ModelCheckpoint(os.path.join(folder, "best.keras"))
            model.fit(x, np.zeros((2, 1), "float32"), epochs=1, verbose=0, callbacks=[best])
            restored = tf.keras.models.load_model(os.path.join(folder, "best.keras"))
            prediction = restored(x).numpy()
            """,
            at=[(12, 43, "Keras 3 `ModelCheckpoint` raises ValueError unless the path ends in `.keras` (or `.h5`)")],
            effect=FIXES_ERROR,
            keras2_before=True,
            note="a whole model checkpointed to .hdf5 and reloaded: renamed to .keras with the load_model of it "
                 "(not .h5: Keras 3.15's load_model of a legacy .h5 compiled with 'mse' raises ValueError: Could "
                 "not deserialize 'keras.metrics.mse'); unsafe, the file's format changes from HDF5 to a Keras zip",
        ),
        flagged(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
            model.save_weights("logs/w.h5")
            print("weights saved to logs/w.h5")
            model.save_weights("logs/v.h5")
            model.load_weights("pretrained/v.h5")
            path = "logs/u.h5"
            model.save_weights(path)
            model.save(path + "_full.keras")
            """,
            at=[(4, 20, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                        "checkpoints); not renamed here: `w.h5` is also written elsewhere in this module"),
                (6, 20, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                        "checkpoints); not renamed here: a load in this module reads it as `pretrained/v.h5`"),
                (9, 20, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                        "checkpoints)")],
            note="no rename where the name is also read otherwise: a message, a load of another folder's file of "
                 "that name, a name also read by a `+` (renaming it would rename the other path too)",
        ),
        flagged(
            """
            import os

            import tensorflow as tf


            def fit_one_epoch(net, images, labels, optimizer, save_dir):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(net(images) - labels))
                optimizer.apply_gradients(zip(tape.gradient(loss, net.trainable_variables), net.trainable_variables))
                net.save_weights(os.path.join(save_dir, "last_epoch_weights.h5"))
            """,
            """
            import os

            import tensorflow as tf


            def fit_one_epoch(net, images, labels, optimizer, save_dir):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(net(images) - labels))
                optimizer.apply_gradients(zip(tape.gradient(loss, net.trainable_variables), net.trainable_variables))
                net.save_weights(os.path.join(save_dir, "last_epoch_weights.weights.h5"))
            """,
            at=[(10, 22, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5`")],
            run="""
            import tempfile
            import numpy as np

            def make(value):
                init = tf.keras.initializers.Constant(value)
                return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])

            folder = tempfile.mkdtemp()
            net = make(0.5)
            fit_one_epoch(net, np.ones((4, 2), "float32"), np.zeros((4, 1), "float32"), tf.keras.optimizers.SGD(0.25),
                          folder)
            restored = make(0.0)
            restored.load_weights(os.path.join(folder, os.listdir(folder)[0]))
            prediction = restored(np.array([[1.0, 2.0]], "float32")).numpy()
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            note="a training helper given the model (bubbliiiing/unet-tf2 utils/utils_fit.py:108): save_weights is "
                 "Keras's name alone; the saved file renamed (nothing else in the module names it): a safe fix. "
                 "Executed: the weights tf_keras saved to `.h5` and read back, Keras 3 to `.weights.h5`",
        ),
        clean(
            """
            import os


            def export(net, save_dir):
                net.save(os.path.join(save_dir, "model"))
            """,
            note="save() of an unknown object (a parameter) stays silent: many objects have a save()",
        ),
        flagged(
            """
            import os
            import tensorflow as tf

            def train(folder):
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.save(os.path.join(folder, "saved_model"))
                model.save(folder + "/model.tf")
                model.save_weights(f"{folder}/ckpt")
                model.save_weights("weights.h5")
                model.load_weights("checkpoints/cp.ckpt")
                tf.keras.models.save_model(model, "export/")
                return tf.keras.models.load_model(os.path.join(folder, "saved_model"))
            """,
            """
            import os
            import tensorflow as tf

            def train(folder):
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.save(os.path.join(folder, "saved_model"))
                model.save(folder + "/model.tf")
                model.save_weights(f"{folder}/ckpt.weights.h5")
                model.save_weights("weights.weights.h5")
                model.load_weights("checkpoints/cp.ckpt")
                tf.keras.models.save_model(model, "export/")
                return tf.keras.models.load_model(os.path.join(folder, "saved_model"))
            """,
            run="""
            import tempfile

            train(tempfile.mkdtemp())
            """,
            at=[(6, 16, "Keras 3 `save()` raises ValueError on a SavedModel directory"),
                (7, 16, "Keras 3 `save()` raises ValueError on a `.tf` TensorFlow path"),
                (8, 24, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5`"),
                (9, 24, "Keras 3 `save_weights()` raises ValueError"),
                (10, 24, "Keras 3 `load_weights()` raises ValueError on a `.ckpt` TensorFlow path"),
                (11, 39, "Keras 3 `save_model()` raises ValueError on a SavedModel directory"),
                (12, 39, "Keras 3 `load_model()` raises ValueError on a SavedModel directory")],
            note="measured: each raises ValueError under Keras 3 and runs under tf_keras; the weights saves' names "
                 "renamed (an f-string's end), the other calls by hand (the SavedModel's readers)",
        ),
        flagged(
            """
            import keras

            path = "checkpoints/cp-{epoch:04d}.ckpt"
            weights = keras.callbacks.ModelCheckpoint(path, save_weights_only=True, verbose=1)
            best = keras.callbacks.ModelCheckpoint("best.hdf5", monitor="val_loss", save_best_only=True)
            plain = keras.callbacks.ModelCheckpoint(filepath="ckpt_dir")
            """,
            """
            import keras

            path = "checkpoints/cp-{epoch:04d}.weights.h5"
            weights = keras.callbacks.ModelCheckpoint(path, save_weights_only=True, verbose=1)
            best = keras.callbacks.ModelCheckpoint("best.keras", monitor="val_loss", save_best_only=True)
            plain = keras.callbacks.ModelCheckpoint(filepath="ckpt_dir.keras")
            """,
            run="""
            import numpy as np

            made = np.array(len([weights, best, plain]))
            """,
            effect=FIXES_ERROR,
            at=[(4, 43, "Keras 3 `ModelCheckpoint(save_weights_only=True)` raises ValueError"),
                (5, 40, "Keras 3 `ModelCheckpoint` raises ValueError unless the path ends in `.keras`"),
                (6, 50, "Keras 3 `ModelCheckpoint` raises ValueError unless the path ends in `.keras`")],
        ),
        clean(
            """
            import os
            import keras
            import numpy as np
            import tensorflow as tf

            model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
            model.save("model.keras")
            model.save(os.path.join("out", "model.h5"))
            model.save("legacy.hdf5")
            model.save_weights("w.weights.h5")
            model.load_weights("w.weights.h5")
            model.load_weights("model.keras")
            model.export("serving/model")
            model.save(path)
            model.save_weights("sharded.weights.json", max_shard_size=1)
            restored = keras.models.load_model("model.keras")
            layer = keras.layers.TFSMLayer("serving/model", call_endpoint="serving_default")
            cp = keras.callbacks.ModelCheckpoint("cp-{epoch:02d}.keras")
            cw = keras.callbacks.ModelCheckpoint("cp.weights.h5", save_weights_only=True)
            ckpt = tf.train.Checkpoint(model=model)
            ckpt.save("ckpts/ckpt")
            manager = tf.train.CheckpointManager(ckpt, "ckpts", max_to_keep=3)
            manager.save()
            np.save("array", np.ones(3))
            store = stores.get("memory")
            store.save("index_dir", compression=True)
            index = Indexer.load("index")
            index.save("index_dir")
            tf.saved_model.save(model, "sm")
            model.save("saved", save_format="tf")
            """,
            note="Keras 3 code already migrated (sharded .weights.json too); export/TFSMLayer; tf.train.Checkpoint, "
                 "np.save, a project's store and index objects are no models (tensorflow/similarity indexer.py); an "
                 "unknown path; save_format= is TFG901's",
        ),
        flagged(
            """
            import tensorflow as tf


            def save_weights(model, filepath):
                \"\"\"model.save_weights(filepath), to GCS buckets too.\"\"\"
                if not filepath.startswith("gs://"):
                    model.save_weights(filepath)


            def restore(path):
                return tf.keras.models.load_model(path, compile=False)


            class Trainer:
                def save_checkpoint(self):
                    save_weights(self._generator, self.saved_path + "generator-{}.h5".format(self.steps))
                    save_weights(self._generator, self.saved_path + "generator-%d.weights.h5" % self.steps)
                    save_weights(self._generator, filepath="generator-{:06d}.weights.h5".format(self.steps))
                    return restore(self.saved_path + "/export")

                def load(self, model, ckpt_path):
                    if ckpt_path.endswith(".ckpt"):
                        model.load_weights(ckpt_path).expect_partial()
                    else:
                        model.load_weights(ckpt_path)
            """,
            """
            import tensorflow as tf


            def save_weights(model, filepath):
                \"\"\"model.save_weights(filepath), to GCS buckets too.\"\"\"
                if not filepath.startswith("gs://"):
                    model.save_weights(filepath)


            def restore(path):
                return tf.keras.models.load_model(path, compile=False)


            class Trainer:
                def save_checkpoint(self):
                    save_weights(self._generator, self.saved_path + "generator-{}.weights.h5".format(self.steps))
                    save_weights(self._generator, self.saved_path + "generator-%d.weights.h5" % self.steps)
                    save_weights(self._generator, filepath="generator-{:06d}.weights.h5".format(self.steps))
                    return restore(self.saved_path + "/export")

                def load(self, model, ckpt_path):
                    if ckpt_path.endswith(".ckpt"):
                        model.load_weights(ckpt_path).expect_partial()
                    else:
                        model.load_weights(ckpt_path)
            """,
            run="""
            import tempfile

            class Run(Trainer):
                def __init__(self):
                    self._generator = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                    self.saved_path = tempfile.mkdtemp() + "/"
                    self.steps = 3

            Run().save_checkpoint()
            """,
            at=[(16, 39, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                         "checkpoints): `save_weights` passes this path to `save_weights()` unchanged"),
                (19, 24, "Keras 3 `load_model()` raises ValueError on a SavedModel directory or checkpoint prefix: "
                         "`restore` passes this path to `load_model()`"),
                (23, 32, "Keras 3 `load_weights()` raises ValueError on a `.ckpt` TensorFlow path")],
            note="a helper that saves at its parameter's path (TensorSpeech/TensorFlowTTS base_trainer.py:597 through "
                 "utils/utils.py save_weights); the path under `if ckpt_path.endswith('.ckpt'):` (DeepReg "
                 "predict.py:287); .format() and % endings",
        ),
        clean(
            """
            import tensorflow as tf


            def save(model, path):
                if path.endswith(".keras"):
                    model.save(path)
                else:
                    tf.saved_model.save(model, path)


            def export(model, path):
                path = path + ".keras"
                model.save(path)


            def save_index(index, path):
                index.save(path, compression=True)


            def dump(obj, path):
                tf.saved_model.save(obj, path)


            def restore(model, ckpt):
                if not ckpt.endswith(".ckpt"):
                    model.load_weights(ckpt)
                if ckpt.endswith(".ckpt"):
                    ckpt = ckpt[:-5] + ".weights.h5"
                    model.load_weights(ckpt)


            model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
            save(model, "export/model")
            export(model, "export/model")
            save_index(store, "index_dir")
            dump(model, "export/sm")
            name = "{}".format(model.name)
            model.save_weights("w-{}.weights.h5".format(3))
            model.save("model_{}.keras".format(name))
            """,
            note="helpers that read the suffix or rebind the path, another save() signature, tf.saved_model; a "
                 "name read where the test is false or after the name is rebound; .format() ending in a Keras file",
        ),
        flagged(
            """
            import argparse

            import tensorflow as tf
            from absl import app, flags

            FLAGS = flags.FLAGS
            flags.DEFINE_string("weights_path", "checkpoints/yolov3.h5", "where the weights go")
            flags.DEFINE_string("pretrained", "./checkpoints/yolov3.tf", "weights to start from")


            def main(_argv):
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.load_weights(FLAGS.pretrained)
                model.fit(x, y, callbacks=[tf.keras.callbacks.ModelCheckpoint(FLAGS.weights_path, save_weights_only=True)])


            def export(args):
                model = tf.keras.models.load_model(args.checkpoint)
                model.save(args.export_dir)


            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--checkpoint", default="runs/best.keras")
                parser.add_argument("--export-dir", default="runs/export")
                export(parser.parse_args())
                app.run(main)
            """,
            at=[(7, 37, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                        "checkpoints): this module saves weights at `FLAGS.weights_path`, whose default this is; not "
                        "renamed here: `yolov3.tf` is named too, and would be `yolov3.weights.h5` as well"),
                (8, 35, "Keras 3 `load_weights()` raises ValueError on a `.tf` TensorFlow path: this module loads "
                        "weights from `FLAGS.pretrained`, whose default this is"),
                (13, 24, "Keras 3 `load_weights()` raises ValueError on a `.tf` TensorFlow path"),
                (14, 67, "Keras 3 `ModelCheckpoint(save_weights_only=True)` raises ValueError unless the path ends "
                         "in `.weights.h5`"),
                (19, 16, "Keras 3 `save()` raises ValueError on a SavedModel directory")],
            note="the defaults of absl flags (FLAGS.x) and argparse arguments (args.x, args a parameter or "
                 "parse_args()'s result) are possible paths (zzh8829/yolov3-tf2 detect.py, train.py)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf
            from absl import flags
            from absl.flags import FLAGS

            flags.DEFINE_string("tfg908_weights", "./tfg908/yolov3.tf", "path to weights file")


            def make(value):
                init = tf.keras.initializers.Constant(value)
                return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])


            def convert():
                model = make(0.5)
                model.save_weights(FLAGS.tfg908_weights)


            def detect(x):
                yolo = make(0.0)
                yolo.load_weights(FLAGS.tfg908_weights).expect_partial()
                return yolo(x).numpy()
            """,
            """
            import numpy as np
            import tensorflow as tf
            from absl import flags
            from absl.flags import FLAGS

            flags.DEFINE_string("tfg908_weights", "./tfg908/yolov3.weights.h5", "path to weights file")


            def make(value):
                init = tf.keras.initializers.Constant(value)
                return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer=init)])


            def convert():
                model = make(0.5)
                model.save_weights(FLAGS.tfg908_weights)


            def detect(x):
                yolo = make(0.0)
                yolo.load_weights(FLAGS.tfg908_weights)
                return yolo(x).numpy()
            """,
            at=[(6, 39, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                        "checkpoints): this module saves weights at and loads weights from `FLAGS.tfg908_weights`, "
                        "whose default this is"),
                (16, 24, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5`"),
                (21, 23, "Keras 3 `load_weights()` raises ValueError on a `.tf` TensorFlow path"),
                (21, 45, "Keras 3 `load_weights()` returns None: `.expect_partial()` raises AttributeError")],
            run="""
            import os
            import tempfile

            os.chdir(tempfile.mkdtemp())
            os.makedirs("tfg908")  # h5py makes no folder (TensorFlow's checkpoint made its own)
            if not FLAGS.is_parsed():
                FLAGS(["case"])
            try:
                convert()
                prediction = detect(np.array([[1.0, 2.0]], "float32"))
            finally:
                delattr(FLAGS, "tfg908_weights")  # the next source of the process defines it again
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            note="an absl flag's default read only by weights saves and loads (zzh8829/yolov3-tf2 convert.py:9 "
                 "--output, detect.py:14 --weights, detect.py:34 load_weights(FLAGS.weights).expect_partial()): "
                 "the default renamed to .weights.h5 and the load status's expect_partial() (None in Keras 3) "
                 "dropped. Executed: the TF checkpoint and expect_partial under tf_keras, the .weights.h5 file "
                 "under Keras 3, the same prediction",
        ),
        clean(
            """
            import argparse

            import tensorflow as tf
            from absl import app, flags

            FLAGS = flags.FLAGS
            flags.DEFINE_string("weights_path", "checkpoints/yolov3.weights.h5", "where the weights go")
            flags.DEFINE_string("pretrained", None, "weights to start from")


            class Settings:
                export_dir = "runs/export"


            def main(_argv):
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.load_weights(FLAGS.pretrained)
                model.fit(x, y, callbacks=[tf.keras.callbacks.ModelCheckpoint(FLAGS.weights_path, save_weights_only=True)])
                model.save(Settings().export_dir)


            def export(args):
                model = tf.keras.models.load_model(args.checkpoint)
                model.save(args.export_dir)


            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--checkpoint", default="runs/best.keras")
                parser.add_argument("--export-dir", default="runs/export.keras")
                parser.add_argument("--output", default="runs/export")
                parser.add_argument("--output", default="runs/export.keras")
                export(parser.parse_args())
                app.run(main)
            """,
            note="flag defaults that are Keras files or unknown (None), an argument defined twice with two "
                 "defaults, a class attribute named like an argument",
        ),
        flagged(
            """
            import os

            import tensorflow as tf


            def export(model, folder, name="saved_model"):
                model.save(os.path.join(folder, name))


            def checkpoint(model, path):
                model.save_weights(path)


            class Trainer:
                def __init__(self, model):
                    self.model = model

                def snapshot(self, path):
                    self.model.save_weights(path)

                def run(self):
                    self.snapshot("ckpt/last")


            def main():
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                export(model, "out")
                checkpoint(model, "w.ckpt")
                Trainer(model).run()
            """,
            """
            import os

            import tensorflow as tf


            def export(model, folder, name="saved_model"):
                model.save(os.path.join(folder, name))


            def checkpoint(model, path):
                model.save_weights(path)


            class Trainer:
                def __init__(self, model):
                    self.model = model

                def snapshot(self, path):
                    self.model.save_weights(path)

                def run(self):
                    self.snapshot("ckpt/last")


            def main():
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                export(model, "out")
                checkpoint(model, "w.weights.h5")
                Trainer(model).run()
            """,
            run="""
            main()
            """,
            at=[(7, 16, "Keras 3 `save()` raises ValueError on a SavedModel directory"),
                (19, 33, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5`"),
                (28, 23, "Keras 3 `save_weights()` raises ValueError unless the path ends in `.weights.h5` (no TF "
                         "checkpoints): `checkpoint` passes this path to `save_weights()` unchanged")],
            note="a parameter is the path every call of its function in the module gives it (its default too); "
                 "a top-level def that saves at its parameter unchanged is told at the call instead",
        ),
        clean(
            """
            import tensorflow as tf


            def save(model, path):
                model.save(path)


            def keep(model, path):
                model.save(path)


            def unused(model, path="export"):
                model.save(path)


            def main(paths):
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                save(model, "m.keras")
                save(model, paths[0])
                keep(model, "a.keras")
                keep(model, "b.h5")
                keep(model, path="c.keras")
                unused(model, *paths)
            """,
            note="calls that give Keras files, disagree, give an unknown path or unpack *args",
        ),
        flagged(
            """
            import os

            import tensorflow as tf


            def save_all(save_dir, step):
                nets = {"generator": make(), "discriminator": make()}
                paths = {"model": os.path.join(save_dir, "export"), "weights": os.path.join(save_dir, "w.weights.h5")}
                model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
                model.save(paths["model"])
                model.save_weights(paths["weights"])
                for name in nets:
                    model.save(os.path.join(save_dir, name))
                for name, net in nets.items():
                    model.save(f"{save_dir}/{name}")
                for name in ("a.keras", "b.keras"):
                    model.save(name)
                for key, path in paths.items():
                    model.save_weights(path)
                model.save(paths["missing"])
                for name in {**nets, "x": 1}:
                    model.save(name)
                for name, net in sorted(nets.items()):
                    model.save(name)
            """,
            at=[(10, 16, "Keras 3 `save()` raises ValueError on a SavedModel directory"),
                (13, 20, "Keras 3 `save()` raises ValueError on a SavedModel directory"),
                (15, 20, "Keras 3 `save()` raises ValueError on a SavedModel directory")],
            note="a value of a dict written out, read by its key; a dict's keys as the last part of the path "
                 "(f-string, os.path.join); not: names that end in .keras, values of different suffixes, a "
                 "missing key, a dict with **, a loop over something else than the dict",
        ),
        clean(
            """
            import keras

            model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
            model.fit(x, y, callbacks=[keras.callbacks.OrbaxCheckpoint("orbax_ckpt")])
            model.load_weights("orbax_ckpt")
            restored = keras.models.load_model("orbax_ckpt")
            """,
            note="an Orbax checkpoint directory, which Keras 3.15 loads (keras/src/callbacks/orbax_checkpoint_test.py)",
        ),
        clean(
            """
            import tf_keras

            model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
            model.save("saved_model")
            model.save_weights("ckpt")
            model.load_weights("ckpt")
            restored = tf_keras.models.load_model("saved_model")
            cb = tf_keras.callbacks.ModelCheckpoint("cp.ckpt", save_weights_only=True)
            """,
            note="tf_keras 2.21 writes and reads SavedModels and checkpoints",
        ),
        clean(
            """
            import tensorflow as tf
            import pytest

            model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
            if tf.__version__.startswith("1."):
                model.save("saved_model")
            try:
                model.save("m.keras")
            except ValueError:
                model.save("saved_model")

            def test_rejects():
                with pytest.raises(ValueError):
                    model.save_weights("w.ckpt")
            """,
            note="a TF 1 branch, an except ValueError fallback, a test expecting the error",
        ),
    ]
