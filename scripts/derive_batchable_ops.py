"""Derive which public TensorFlow functions compute on a whole batch what they compute per element.

Run by a developer with TensorFlow installed (never at lint time):

    python scripts/derive_batchable_ops.py > tflint_gpu/semantic/batchable_ops.py

Every public function of ``tf``, ``tf.math``, ``tf.nn`` and ``tf.image`` (random and
stateful ones aside) is called on batches of several kinds (float matrices, float
rank-3 tensors, float images, uint8 images, one-channel images, a batch of image sequences, int
matrices), with no extra argument and with each kind of extra argument in
``EXTRAS`` (every value of the kind is tried). For each batch kind and extra
kind the per-element form, ``tf.stack([f(e, *extra) for e in tf.unstack(x)])``
(what ``tf.map_fn(f, x)`` and a Python loop over the rows compute), is compared
with the batched call ``f(x, *extra)``: the same dtype, the same shape and
bit-identical values (NaN equal to NaN) is ``exact``; float values that differ
by at most ``ULPS`` units in the last place (a vectorised kernel rounding a
batch's elements differently from a short row's) make the entry not
``exact``. Extra arguments that would fall on ``name`` (ignored eagerly), or a
number on a ``dtype`` parameter, are not tried. ``tf.map_fn`` itself is run
once per recorded entry and must agree bit for bit with the per-element form.

Ops whose second parameter is ``indices`` or ``ids`` (``tf.gather``,
``tf.nn.embedding_lookup``, ``tf.gather_nd``) are also tried with the element
there: ``tf.stack([f(params, e) for e in tf.unstack(idx)])`` against
``f(params, idx)``, on batches of index vectors, matrices and tuples.

An extra kind is recorded for a function when, for every batch kind on which
the per-element form runs, every value of the kind gives ``exact``; a batch
kind on which the per-element form runs but the batched call raises is
recorded in ``raises_on`` (the fix would turn a working call into an error
there); an extra kind with any batch kind that gives a *different* result is
not recorded (``tf.nn.softmax(e, 0)`` is not ``tf.nn.softmax(x, 0)``).
"""
import inspect
import sys
import warnings

warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

MODULES = ["", "math", "nn", "image"]
RNG = np.random.default_rng(0)
BATCHES = {
    "float-matrix": tf.constant(RNG.normal(size=(5, 7)).astype("float32")),
    "float-rank3": tf.constant(RNG.normal(size=(5, 4, 6)).astype("float32")),
    "float-images": tf.constant(RNG.uniform(size=(5, 8, 8, 3)).astype("float32")),
    "uint8-images": tf.constant(RNG.integers(0, 256, size=(5, 8, 8, 3)).astype("uint8")),
    "gray-images": tf.constant(RNG.uniform(size=(5, 8, 8, 1)).astype("float32")),
    "image-sequences": tf.constant(RNG.uniform(size=(2, 3, 8, 8, 3)).astype("float32")),
    # Rows with different maxima: a per-row default (``tf.sequence_mask``'s maxlen) differs from the batch's.
    "int-matrix": tf.constant(np.stack([RNG.integers(0, row + 2, size=7) for row in range(5)]).astype("int32")),
    # A batch of one: an op that drops size-1 axes (``tf.squeeze``) would drop the batch axis.
    "float-matrix-of-one": tf.constant(RNG.normal(size=(1, 7)).astype("float32")),
    "float-images-of-one": tf.constant(RNG.uniform(size=(1, 8, 8, 3)).astype("float32")),
}
# Ops that compute nothing per element (they build, convert or regroup tensors): a map over them is not the pitfall.
STRUCTURAL = frozenset({"identity", "constant", "convert_to_tensor", "tuple", "guarantee_const", "stack", "concat",
                        "squeeze", "bitcast", "ones_like", "zeros_like", "fill", "reshape", "expand_dims"})
ULPS = 16
# Extra positional arguments by kind: each value is tried; the kind is recorded only when all agree.
EXTRAS = {
    "": [()],
    "float": [(0.3,), (-0.2,), (1.5,)],
    "int": [(1,), (2,), (3,)],
    "size": [([4, 4],), ([6, 3],)],
    "int, int": [(4, 4), (6, 3)],
    "dtype": [(tf.float32,), (tf.int32,), (tf.float16,)],
}
SKIP_WORDS = ("random", "stateless", "sample", "draw", "summary", "print", "assert", "debug", "py_func",
              "numpy_function", "function", "gradient", "scope", "device", "load", "save", "encode", "decode",
              "write", "read", "variable", "placeholder", "_v1", "dropout")


def candidates():
    seen = {}
    for module_name in MODULES:
        module = tf if not module_name else getattr(tf, module_name)
        prefix = "tensorflow." + (module_name + "." if module_name else "")
        for name in sorted(dir(module)):
            if name.startswith("_") or any(word in name.lower() for word in SKIP_WORDS):
                continue
            value = getattr(module, name)
            if not inspect.isfunction(value) and not inspect.isbuiltin(value):
                continue
            seen.setdefault(prefix + name, value)
    return seen


def _same(a, b) -> str:
    """'exact' (bit-identical), 'ulps' (floats within ULPS units in the last place) or 'differs'."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return "differs"
    if a.dtype.kind not in "fc":
        return "exact" if np.array_equal(a, b) else "differs"
    if np.array_equal(a, b, equal_nan=True):
        return "exact"
    if a.dtype.kind == "c" or not np.array_equal(np.isnan(a), np.isnan(b)):
        return "differs"
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(a[~finite], b[~finite], equal_nan=True):
        return "differs"
    spacing = np.abs(np.spacing(np.maximum(np.abs(a[finite]), np.abs(b[finite]))))
    return "ulps" if np.all(np.abs(a[finite] - b[finite]) <= ULPS * spacing) else "differs"


def _lands_well(fn, kind: str) -> bool:
    """False when the extra arguments of ``kind`` fall on ``name`` or a number on a dtype (a coincidence)."""
    if not kind:
        return True
    try:
        parameters = list(inspect.signature(fn).parameters)[1:]
    except (TypeError, ValueError):
        return False
    count = len(EXTRAS[kind][0])
    if len(parameters) < count:
        return False
    for parameter in parameters[:count]:
        if parameter == "name" or (kind == "dtype") != ("dtype" in parameter or parameter == "type"):
            return False
    return True


def compare(fn, batch, extra):
    """'exact', 'differs', 'raises' (batched form only), or None (the per-element form does not run)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            per_element = tf.stack([fn(element, *extra) for element in tf.unstack(batch)])
    except Exception:  # noqa: BLE001 - a call that does not run is simply not recorded
        return None
    if not isinstance(per_element, tf.Tensor):
        return None
    try:
        batched = fn(batch, *extra)
    except Exception:  # noqa: BLE001
        return "raises"
    if not isinstance(batched, tf.Tensor):
        return "differs"
    return _same(per_element, batched)


def derive(qualname, fn):
    if qualname.rsplit(".", 1)[1] in STRUCTURAL:
        return None
    extras, raises_on, ran, ulps = [], set(), False, False
    for kind, values in EXTRAS.items():
        if not _lands_well(fn, kind):
            continue
        verdicts = {}
        for batch_kind, batch in BATCHES.items():
            # A value the per-element call rejects (a crop fraction of -0.2) says nothing either way.
            outcomes = [outcome for outcome in (compare(fn, batch, value) for value in values) if outcome is not None]
            if not outcomes:
                continue
            if "differs" in outcomes:
                verdicts[batch_kind] = "differs"  # some value runs per element and differs (or runs only sometimes)
            else:
                verdicts[batch_kind] = "raises" if "raises" in outcomes else \
                    "ulps" if "ulps" in outcomes else "exact"
        if not verdicts:
            continue
        ran = True
        if "differs" in verdicts.values() or not {"exact", "ulps"} & set(verdicts.values()):
            continue
        extras.append(kind)
        ulps = ulps or "ulps" in verdicts.values()
        raises_on.update(batch_kind for batch_kind, verdict in verdicts.items() if verdict == "raises")
    if not ran or not extras:
        return None
    return {"extras": extras, "raises_on": sorted(raises_on), "exact": not ulps,
            "keeps_dtype": _keeps_dtype(fn, extras), "scalar_extras": _scalar_extras(fn, extras),
            "parameters": _parameters(fn)}


def _parameters(fn):
    """The names of the parameters after the element (a keyword argument maps to its position)."""
    try:
        return [name for name in inspect.signature(fn).parameters][1:]
    except (TypeError, ValueError):
        return []


def _scalar_extras(fn, extras) -> bool:
    """Do the extra arguments have to be scalars (a size: a vector of two)? Each number of a recorded
    kind is replaced by a vector that broadcasts against the element (a size by a 2x2 matrix): the op
    must raise on every batch.
    Then an extra argument whose value is not known here (a name, an expression) can only be one."""
    numeric = [kind for kind in extras if kind in ("float", "int", "size", "int, int")]
    if not numeric:
        return False
    for kind in numeric:
        for value in EXTRAS[kind]:
            for batch in BATCHES.values():
                try:
                    fn(batch, *value)
                except Exception:  # noqa: BLE001
                    continue
                # a vector that broadcasts against the element (its last axis, the batch's dtype)
                wider = tuple(tf.constant([item, item]) if isinstance(item, list)
                              else tf.cast(tf.fill([batch.shape[-1]], item), batch.dtype) for item in value)
                try:
                    fn(batch, *wider)
                except Exception:  # noqa: BLE001
                    continue
                return False
    return True


def _keeps_dtype(fn, extras) -> bool:
    """Is the result's dtype the input's, for every recorded extra value and batch (``tf.map_fn``
    without ``fn_output_signature`` raises where it is not)."""
    for kind in extras:
        for value in EXTRAS[kind]:
            for batch in BATCHES.values():
                try:
                    result = fn(batch, *value)
                except Exception:  # noqa: BLE001
                    continue
                if result.dtype != batch.dtype:
                    return False
    return True


def _map_fn_agrees(fn, entry) -> bool:
    for batch_kind, batch in BATCHES.items():
        if batch_kind in entry["raises_on"]:
            continue
        for value in EXTRAS[entry["extras"][0]]:
            try:
                per_element = tf.stack([fn(element, *value) for element in tf.unstack(batch)])
            except Exception:  # noqa: BLE001
                continue
            mapped = tf.map_fn(lambda element: fn(element, *value), batch,
                               fn_output_signature=tf.TensorSpec(per_element.shape[1:], per_element.dtype))
            if _same(per_element, mapped) != "exact":
                return False
    return True


# Ops whose second parameter takes the element (``tf.gather(params, e)``): a batch of index vectors,
# of index matrices, and of index tuples into a (6, 3) table.
PARAMS = tf.constant(RNG.normal(size=(6, 3)).astype("float32"))
INDEX_BATCHES = {
    "index-vectors": tf.constant(RNG.integers(0, 6, size=(5, 4)).astype("int32")),
    "index-matrices": tf.constant(RNG.integers(0, 6, size=(5, 2, 3)).astype("int64")),
    "index-tuples": tf.constant(RNG.integers(0, 3, size=(5, 2)).astype("int32")),
    "index-vectors-of-one": tf.constant(RNG.integers(0, 6, size=(1, 4)).astype("int32")),
}
INDEX_PARAMETERS = ("indices", "ids")


def derive_indexed(fn):
    """The entry of an op whose second parameter is the element, or None."""
    try:
        parameters = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    if len(parameters) < 2 or parameters[1] not in INDEX_PARAMETERS:
        return None
    verdicts = set()
    for batch in INDEX_BATCHES.values():
        verdicts.add(compare(lambda element: fn(PARAMS, element), batch, ()))
    verdicts.discard(None)
    if not verdicts or verdicts - {"exact"}:
        return None
    return {"extras": ("",), "raises_on": [], "exact": True, "keeps_dtype": False, "element": 1}


def main() -> None:
    table = {}
    for qualname, fn in candidates().items():
        entry = derive(qualname, fn)
        if entry is not None and _map_fn_agrees(fn, entry):
            table[qualname] = entry
            continue
        entry = derive_indexed(fn)
        if entry is not None:
            table[qualname] = entry
    out = sys.stdout
    out.write(f'"""Generated by scripts/derive_batchable_ops.py under TensorFlow {tf.__version__}: do not edit.\n\n')
    out.write("Public TensorFlow functions whose call on a batch gives what stacking their calls on each\n"
              "element gives (dtype, shape and values), per kind of extra positional argument (``extras``,\n"
              "\"\" for none). ``exact``: bit-identical; otherwise float values differ by a few units in the\n"
              "last place. ``raises_on``: batch kinds on which the per-element call runs but the batched\n"
              "call raises. ``keeps_dtype``: the result has the input's dtype. ``element``: the position\n"
              "of the argument that takes the element (1: ``tf.gather(params, e)``; the first\n"
              "argument is then a table every element reads). ``scalar_extras``: the extra arguments must\n"
              "be scalars (a size a vector of two): the op raises when each is widened to a vector that\n"
              "broadcasts against the element.\n"
              "``parameters``: the parameters after the element, for keyword arguments.\n\"\"\"\n\n")
    out.write("BATCHABLE = {\n")
    for qualname, entry in sorted(table.items()):
        out.write(f"    {qualname!r}: {{\"extras\": {tuple(entry['extras'])!r}, "
                  f"\"raises_on\": {tuple(entry['raises_on'])!r}, \"exact\": {entry['exact']!r}, "
                  f"\"keeps_dtype\": {entry['keeps_dtype']!r}, \"element\": {entry.get('element', 0)!r}, "
                  f"\"scalar_extras\": {entry.get('scalar_extras', False)!r}, "
                  f"\"parameters\": {tuple(entry.get('parameters', ()))!r}}},\n")
    out.write("}\n")


if __name__ == "__main__":
    main()
