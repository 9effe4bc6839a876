"""TensorFlow and Keras API facts the analyses share, and how a call's arguments are read.

A leaf module: the tables of traced callables, dataset methods and Keras
graph methods, and ``keyword``/``argument``, imported by ``context``,
``datasets``, ``uses`` and the rules (it imports no other analysis).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

TF_FUNCTION = "tensorflow.function"
EAGER_WRAPPERS = frozenset({"tensorflow.py_function", "tensorflow.numpy_function", "tensorflow.py_func"})
# Dataset method -> (positional index, keyword) of each function it traces.
DATASET_FUNCTION_ARGS: Dict[str, Tuple[Tuple[int, str], ...]] = {
    "map": ((0, "map_func"),),
    "filter": ((0, "predicate"),),
    "flat_map": ((0, "map_func"),),
    "interleave": ((0, "map_func"),),
    "parallel_interleave": ((0, "map_func"),),
    "reduce": ((1, "reduce_func"),),
    "scan": ((1, "scan_func"),),
    "group_by_window": ((0, "key_func"), (1, "reduce_func"), (2, "window_size_func")),
    "take_while": ((0, "predicate"),),
    "bucket_by_sequence_length": ((0, "element_length_func"),),
}
# Functions of tf.data.experimental that trace the functions they are given
# (used as ``ds.apply(tf.data.experimental.parallel_interleave(f, 4))``).
TRACING_FUNCTIONS: Dict[str, Tuple[Tuple[int, str], ...]] = {
    "tensorflow.data.experimental.parallel_interleave": ((0, "map_func"),),
    "tensorflow.data.experimental.map_and_batch": ((0, "map_func"),),
    "tensorflow.data.experimental.group_by_window": ((0, "key_func"), (1, "reduce_func"), (2, "window_size_func")),
    "tensorflow.data.experimental.scan": ((1, "scan_func"),),
    "tensorflow.data.experimental.take_while": ((0, "predicate"),),
}
KERAS_GRAPH_METHODS = frozenset({"call", "train_step", "test_step", "predict_step"})
# Methods Keras runs in its traced steps, by the kind of class: a Loss subclass's
# `call` (what `compile(loss=...)` calls), a Metric subclass's `update_state`
# and `result` (`reset_state` runs eagerly between epochs). Measured, TF 2.21,
# Keras 3.15 and tf_keras 2.21: `.numpy()` there raises AttributeError under `fit`.
KERAS_LOSS_METHODS = frozenset({"call"})
KERAS_METRIC_METHODS = frozenset({"update_state", "result"})
# `model.compile` keywords whose functions (and objects' `__call__`) Keras traces
# in its steps; `loss` is also the second positional argument.
KERAS_COMPILE_FUNCTIONS = ("loss", "metrics", "weighted_metrics")
# TensorFlow functions that call the functions handed to them (position, keyword):
# eagerly when the call itself runs eagerly (tf.map_fn and tf.while_loop run a
# Python loop, tf.cond runs the branch taken), traced into the caller's graph
# when it is graph code. `switch_case` takes a list or dict of branches, `case`
# a list (or dict) of (predicate, function) pairs. AutoGraph converts only what
# `tf.map_fn` is given, and only when its caller's AutoGraph status allows it
# (a `tf.function`, a tf.data function, tf_keras code; not Keras 3 nor
# `autograph=False`); the others run the function as written (a Python `if`
# on a tensor there raises OperatorNotAllowedInGraphError), unless it is
# nested in converted code. (Measured, TF 2.21.)
CONTROL_FLOW_FUNCTIONS: Dict[str, Tuple[Tuple[int, str], ...]] = {
    "tensorflow.map_fn": ((0, "fn"),),
    "tensorflow.scan": ((0, "fn"),),
    "tensorflow.foldl": ((0, "fn"),),
    "tensorflow.foldr": ((0, "fn"),),
    "tensorflow.while_loop": ((0, "cond"), (1, "body")),
    "tensorflow.cond": ((1, "true_fn"), (2, "false_fn")),
    "tensorflow.switch_case": ((1, "branch_fns"), (2, "default")),
    "tensorflow.case": ((0, "pred_fn_pairs"), (1, "default")),
}
CONVERTING_CONTROL_FLOW = frozenset({"tensorflow.map_fn"})
# Traced even when called eagerly (once per call), never converted by AutoGraph.
VECTORIZED_MAP = "tensorflow.vectorized_map"
# `strategy.run(fn, args=...)` (and its old name): eager when called eagerly;
# from graph code it runs `fn` in that graph, converted only under a
# `tf.function` with AutoGraph (not in tf.data functions nor Keras code).
STRATEGY_RUN_METHODS = frozenset({"run", "experimental_run_v2"})
# AutoGraph features that convert `assert` statements to tf.Assert.
ASSERT_FEATURES = frozenset({
    "tensorflow.autograph.experimental.Feature.ASSERT_STATEMENTS",
    "tensorflow.autograph.experimental.Feature.ALL",
})
# Decorators that hand on the function they decorate (stacked below tf.function, harmless).
TRANSPARENT_DECORATORS = frozenset({"functools.wraps", "abc.abstractmethod"})
# Text without which no function body in a file can run as a graph (the rules'
# text prefilter): derived from the lists above, so the two cannot drift apart.
GRAPH_TEXT: Tuple[str, ...] = tuple(dict.fromkeys(
    ("function", "_step", "def call")
    + tuple(f".{method}(" for method in DATASET_FUNCTION_ARGS)
    + tuple(name.rsplit(".", 1)[1] + "(" for name in TRACING_FUNCTIONS)
    + ("vectorized_map(", "compile(", "Lambda(", "update_state", "def result")
))
# Imports of another Keras 3 backend: a module with one of these and no
# TensorFlow import is backend-specific code that TensorFlow never traces.
OTHER_BACKENDS = ("jax", "torch", "openvino", "mlx")
# Keras's Sequential as qualified names read it (``names.normalize``: ``tf.keras`` and ``tf_keras`` are ``keras``).
KERAS_SEQUENTIAL = frozenset({"keras.Sequential", "keras.models.Sequential"})
# A model's or layer's variables that its optimizer trains (``variables``/``weights`` hold the others too).
TRAINABLE_LISTS = frozenset({"trainable_variables", "trainable_weights"})
DATASET_METHODS = frozenset(
    {
        "map",
        "filter",
        "flat_map",
        "interleave",
        "batch",
        "padded_batch",
        "unbatch",
        "rebatch",
        "ragged_batch",
        "shuffle",
        "repeat",
        "prefetch",
        "cache",
        "take",
        "skip",
        "shard",
        "concatenate",
        "zip",
        "with_options",
        "apply",
        "enumerate",
        "window",
        "scan",
        "take_while",
        "unique",
        "group_by_window",
        "bucket_by_sequence_length",
        "ignore_errors",
        "snapshot",
        "rejection_resample",
        "sample_from_datasets",
        "choose_from_datasets",
        "random",
        "range",
        "from_tensor_slices",
        "from_tensors",
        "from_generator",
        "list_files",
        "load",
    }
)
DATASET_FACTORIES_PREFIX = ("tensorflow.data.",)
# Keras utilities that return a tf.data.Dataset (any module path under ``keras.``:
# ``keras.utils``, ``tf.keras.preprocessing``, ``keras.src.utils.image_dataset_utils``);
# with ``subset="both"`` a pair of them, with ``format="grain"`` something else.
DATASET_KERAS_UTILITIES = frozenset(
    {
        "image_dataset_from_directory",
        "text_dataset_from_directory",
        "audio_dataset_from_directory",
        "timeseries_dataset_from_array",
    }
)
# tensorflow_datasets: `load(name, split=...)` and `builder(name).as_dataset(split=...)`
# return a dataset for one split, a list for a list of splits, a dict without a split
# (tensors with `batch_size=-1`); `with_info=True` adds the info as a second element.
DATASET_TFDS_LOAD = "tensorflow_datasets.load"
DATASET_TFDS_BUILDER = "tensorflow_datasets.builder"


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def argument(call: cst.Call, position: int, name: str) -> Optional[cst.BaseExpression]:
    """The expression passed at ``position`` or as keyword ``name``."""
    found = keyword(call, name)
    if found is not None:
        return found.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position < len(positional):
        return positional[position].value
    return None


def without_args(call: cst.Call, dropped: Sequence[cst.Arg],
                 replaced: Optional[Tuple[cst.Arg, cst.Arg]] = None) -> cst.Call:
    """``call`` without the arguments ``dropped``, and with ``replaced``'s new argument in place
    of its old one (keeping the old one's comma); when the last argument went, the new last one
    loses its comma."""
    args = []
    for arg in call.args:
        if replaced is not None and arg is replaced[0]:
            args.append(replaced[1].with_changes(comma=arg.comma))
        elif not any(arg is gone for gone in dropped):
            args.append(arg)
    if args and any(call.args[-1] is gone for gone in dropped):
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


def arguments_by_name(call: cst.Call, names: Sequence[str],
                      known_only: bool = False) -> Optional[Dict[str, cst.BaseExpression]]:
    """``call``'s arguments by parameter name (positional ones take ``names`` in order). None when
    the call unpacks ``*``/``**`` or has more positional arguments than names; with ``known_only``,
    also when it passes a keyword ``names`` does not hold or one parameter twice."""
    found: Dict[str, cst.BaseExpression] = {}
    positional = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if positional >= len(names):
                return None
            found[names[positional]] = arg.value
            positional += 1
        elif not known_only or (arg.keyword.value in names and arg.keyword.value not in found):
            found[arg.keyword.value] = arg.value
        else:
            return None
    return found


def positional_args(call: cst.Call) -> Optional[List[cst.Arg]]:
    """The arguments ``call`` passes by position, in order; None when it unpacks ``*args``/``**kwargs``."""
    positional = []
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            positional.append(arg)
    return positional


def named_positionals(call: cst.Call, names: Sequence[str], start: int = 0) -> Optional[Dict[cst.Arg, cst.Arg]]:
    """The positional arguments of ``call`` from ``start`` on, each given the keyword ``names`` has at its
    place (``names[0]`` for the argument at ``start``): {old argument: new one}. None when the call
    unpacks ``*args``, has more positional arguments than names, or already passes one of those names."""
    positional = positional_args(call)
    if positional is None:
        return None
    positional = positional[start:]
    if len(positional) > len(names):
        return None
    chosen = list(names[:len(positional)])
    if {a.keyword.value for a in call.args if a.keyword is not None} & set(chosen):
        return None
    equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    return {arg: arg.with_changes(keyword=cst.Name(name), equal=equal) for arg, name in zip(positional, chosen)}


# The dtypes TensorFlow and NumPy name (``tf.float32``, ``tf.dtypes.int64``, ``np.float16``...).
DTYPE_NAMES = frozenset({
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16",
    "float32", "float64", "half", "double", "complex64", "complex128", "string", "qint8", "quint8", "qint16",
    "quint16", "qint32", "float8_e4m3fn", "float8_e5m2", "int4", "uint4",
})
_DTYPE_MODULES = ("tensorflow.", "tensorflow.dtypes.", "numpy.", "tensorflow.experimental.numpy.")


def is_dtype(qualname: str) -> bool:
    """Does the (normalized) qualified name spell a TensorFlow or NumPy dtype?"""
    for module in _DTYPE_MODULES:
        if qualname.startswith(module) and qualname[len(module):] in DTYPE_NAMES:
            return True
    return False


def is_false(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def exact_argument(call: cst.Call, position: int, name: str) -> Optional[cst.BaseExpression]:
    """``argument``, but None wherever a ``*args``/``**kwargs`` in the call could
    be the one passing it (the value cannot then be told)."""
    positional = []
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            positional.append(arg.value)
        elif arg.keyword.value == name:
            return arg.value
    if 0 <= position < len(positional):
        return positional[position]
    return None
