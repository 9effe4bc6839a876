"""Rewrite a NumPy array-creation call as the TensorFlow op that makes the same array.

NumPy's defaults are float64/int64 where TensorFlow's are float32/int32, so
the rewrite always spells out the dtype NumPy would have used: values *and*
dtypes stay identical. Random creators map to ``tf.random.*`` with the same
distribution and dtype, but a different random stream: those fixes are unsafe.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import arguments_by_name, keyword
from tflint_gpu.rules.base import Safety

# numpy creator -> (tf op, positional parameter names of the numpy function)
DETERMINISTIC = {
    "numpy.zeros": ("zeros", ("shape",)),
    "numpy.ones": ("ones", ("shape",)),
    "numpy.full": ("fill", ("shape", "fill_value")),
    "numpy.eye": ("eye", ("N", "M", "k")),
    "numpy.identity": ("eye", ("n",)),
    "numpy.arange": ("range", ("start", "stop", "step")),
}
RANDOM = {
    "numpy.random.rand": "uniform",
    "numpy.random.random": "uniform",
    "numpy.random.random_sample": "uniform",
    "numpy.random.uniform": "uniform",
    "numpy.random.randn": "normal",
    "numpy.random.standard_normal": "normal",
    "numpy.random.normal": "normal",
}
# Creators we flag but cannot rewrite exactly (tf.linspace rounds differently, ...).
OTHER = frozenset({"numpy.linspace", "numpy.empty", "numpy.random.randint", "numpy.random.choice",
                   "numpy.random.permutation", "numpy.random.shuffle", "numpy.tile"})
CREATORS = frozenset(DETERMINISTIC) | frozenset(RANDOM) | (OTHER - {"numpy.random.shuffle"})

NUMPY_DTYPES = {
    "float16": "float16", "float32": "float32", "float64": "float64", "double": "float64",
    "single": "float32", "half": "float16",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "bool_": "bool", "bool": "bool", "complex64": "complex64", "complex128": "complex128",
}
BUILTIN_DTYPES = {"float": "float64", "int": "int64", "bool": "bool", "complex": "complex128"}


@dataclass
class Rewrite:
    expr: cst.BaseExpression
    imports: Tuple[str, ...]
    safety: Safety
    message: str


def tf_dtype_of(expr: cst.BaseExpression, ctx) -> Optional[str]:
    """The TF dtype name a NumPy/TF/builtin dtype expression stands for."""
    qualname = ctx.qualname(expr)
    if qualname is not None:
        module, _, name = qualname.rpartition(".")
        if module in ("numpy", "tensorflow", "tensorflow.dtypes") and name in NUMPY_DTYPES:
            return NUMPY_DTYPES[name]
        return None
    if isinstance(expr, cst.Name) and expr.value in BUILTIN_DTYPES:
        return BUILTIN_DTYPES[expr.value]
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        if isinstance(value, str) and value in NUMPY_DTYPES:
            return NUMPY_DTYPES[value]
    return None


def _literal(expr: cst.BaseExpression) -> object:
    """The value of a number or bool literal (``-2``, ``1.5``, ``True``), else None."""
    negative = isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus)
    inner = expr.expression if negative else expr
    if isinstance(inner, (cst.Integer, cst.Float)):
        value = inner.evaluated_value
        return -value if negative else value
    if not negative and isinstance(inner, cst.Name) and inner.value in ("True", "False"):
        return inner.value == "True"
    return None


def _literal_kind(value: object) -> Optional[str]:
    """NumPy's dtype for a Python literal."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return None


def _category(dtype: str) -> str:
    return "bool" if dtype == "bool" else ("complex" if dtype.startswith("complex") else
                                           ("float" if dtype.startswith("float") else "int"))


def _fits(value: object, dtype: str) -> bool:
    """Does converting the literal to ``dtype`` keep its value (so that NumPy and
    ``tf.constant(value, dtype=...)`` agree, and neither refuses)?"""
    category = _category(dtype)
    if isinstance(value, bool):
        return category == "bool"
    if isinstance(value, int):
        if category == "int":
            bits = int("".join(ch for ch in dtype if ch.isdigit()))
            signed = not dtype.startswith("uint")
            low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
            return low <= value <= high
        return category in ("float", "complex") and abs(value) <= 2 ** 11  # exact even in float16
    # A float literal rounds to any float dtype the same way in NumPy and TF.
    return isinstance(value, float) and category in ("float", "complex")


class _Spelling:
    """TensorFlow names as the file spells them where the rewrite stands."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.imports: Tuple[str, ...] = ()

    def __call__(self, attribute: str) -> str:
        spelled = self.ctx.module_expr("tensorflow", attribute)
        if spelled is None:
            raise LookupError(attribute)
        expr, imports = spelled
        self.imports = tuple(dict.fromkeys(self.imports + imports))  # every spelling's, not the last one's
        return self.ctx.module.code_for_node(expr)


# Creators whose array is float64 unless a dtype is named (random ones: with a size).
_FLOAT64_BY_DEFAULT = frozenset({"numpy.zeros", "numpy.ones", "numpy.eye", "numpy.identity", "numpy.empty",
                                 "numpy.linspace"}) | frozenset(RANDOM)


def float64_by_default(call: cst.Call, qualname: str) -> bool:
    """Does the NumPy creator ``call`` make a float64 array only because
    NumPy's default says so (no ``dtype=``; a random draw with a size)?"""
    if qualname not in _FLOAT64_BY_DEFAULT or keyword(call, "dtype") is not None:
        return False
    return qualname not in RANDOM or bool(call.args)


def rewrite(call: cst.Call, qualname: str, ctx, dtype: Optional[str],
            extra: List[str]) -> Optional[Rewrite]:
    """The TF expression making the same array as ``call`` (a NumPy creator)
    and then converting it to ``dtype`` as ``tf.constant``/``tf.Variable`` do.

    ``dtype``: the dtype the conversion asks for (None: the array's own).
    The conversion of a NumPy array casts it (float to int truncates, nonzero
    to bool is True), so when ``dtype`` differs from the array's, the rewrite
    creates the array in its NumPy dtype and casts, unless creating it
    directly in ``dtype`` gives the same values. ``extra``: argument text
    appended (``name="w"``).
    """
    tf = _Spelling(ctx)
    try:
        if qualname in DETERMINISTIC:
            return _deterministic(call, qualname, ctx, dtype, extra, tf)
        if qualname in RANDOM:
            return _random(call, qualname, ctx, dtype, extra, tf)
    except LookupError:
        return None  # no name spells TensorFlow here
    return None


def _deterministic(call: cst.Call, qualname: str, ctx, dtype: Optional[str], extra: List[str],
                   tf: _Spelling) -> Optional[Rewrite]:
    code = ctx.module.code_for_node
    op, names = DETERMINISTIC[qualname]
    args = arguments_by_name(call, names + ("dtype",))
    if args is None:
        return None
    np_dtype = tf_dtype_of(args["dtype"], ctx) if "dtype" in args else None
    if "dtype" in args and np_dtype is None:
        return None
    # 0 and 1 are exact in every dtype: zeros/ones/eye are made in the target dtype directly.
    exact_everywhere = op in ("zeros", "ones", "eye")
    if qualname == "numpy.full":
        if "shape" not in args or "fill_value" not in args or set(args) - {"shape", "fill_value", "dtype"}:
            return None
        value = _literal(args["fill_value"])
        kind = _literal_kind(value)
        if kind is None:
            return None
        np_dtype = np_dtype or kind
        if not _fits(value, np_dtype):
            return None  # NumPy itself converts (or refuses) the fill value
        parts = [code(args["shape"])]
        # The value is exact in the target dtype: fill it directly.
        exact_everywhere = dtype is not None and _fits(value, dtype)
    elif qualname == "numpy.arange":
        bounds = [args[n] for n in ("start", "stop", "step") if n in args]
        if not bounds or set(args) - {"start", "stop", "step", "dtype"}:
            return None
        values = [_literal(b) for b in bounds]
        kinds = {_literal_kind(v) for v in values}
        if None in kinds or "bool" in kinds:
            return None  # a name: its Python type decides NumPy's dtype
        natural = "float64" if "float64" in kinds else "int64"
        if np_dtype is None:
            np_dtype = natural
        elif _category(np_dtype) != _category(natural) and not (natural == "int64" and _category(np_dtype) == "float"):
            return None  # np.arange(0.5, 3, dtype=int): NumPy's own rounding rules
        parts = [code(b) for b in bounds]
        if dtype is not None and _category(np_dtype) == "int" and all(_fits(v, dtype) for v in values):
            np_dtype = dtype  # small integers: tf.range counts exactly in the target dtype
    elif qualname in ("numpy.eye", "numpy.identity"):
        size = args.get("N", args.get("n"))
        if size is None or "k" in args or set(args) - {"N", "n", "M", "dtype"}:
            return None
        parts = [code(size)] + ([f"num_columns={code(args['M'])}"] if "M" in args else [])
        np_dtype = np_dtype or "float64"
    else:
        if "shape" not in args or set(args) - {"shape", "dtype"}:
            return None
        parts = [code(args["shape"])]
        np_dtype = np_dtype or "float64"
    target = dtype or np_dtype

    def made(in_dtype: str, tail: str = "") -> str:
        if op == "fill":
            value = f"{tf('constant')}({code(args['fill_value'])}, dtype={tf(in_dtype)})"
            return f"{tf(op)}({parts[0]}, {value}{tail})"
        return f"{tf(op)}({', '.join(parts)}, dtype={tf(in_dtype)}{tail})"

    if target == np_dtype or exact_everywhere:
        text = made(target, _tail(extra))
        return Rewrite(cst.parse_expression(text), tf.imports, Safety.SAFE, f"Create it with `tf.{op}` as {target}")
    text = f"{tf('cast')}({made(np_dtype)}, {tf(target)}{_tail(extra)})"
    return Rewrite(cst.parse_expression(text), tf.imports, Safety.SAFE,
                   f"Create it with `tf.{op}` as {np_dtype} and cast to {target}")


def _random(call: cst.Call, qualname: str, ctx, dtype: Optional[str], extra: List[str],
            tf: _Spelling) -> Optional[Rewrite]:
    code = ctx.module.code_for_node
    dist = RANDOM[qualname]
    short = qualname.rsplit(".", 1)[1]
    params: List[str] = []
    if short in ("rand", "randn"):
        if any(a.keyword is not None or a.star for a in call.args):
            return None
        dims = [a.value for a in call.args]
        if not all(isinstance(_literal(d), int) and not isinstance(_literal(d), bool) for d in dims):
            return None
        shape = _shape_text([code(d) for d in dims]) if dims else None
    else:
        names = {"uniform": ("low", "high", "size"), "normal": ("loc", "scale", "size")}.get(short, ("size",))
        args = arguments_by_name(call, names)
        if args is None or set(args) - set(names):
            return None
        shape = _size_shape(args["size"], ctx) if "size" in args else None
        if "size" in args and shape is None:
            return None  # a size whose form we cannot see: no fix
        rename = {"low": "minval", "high": "maxval", "loc": "mean", "scale": "stddev"}
        params = [f"{rename[n]}={code(args[n])}" for n in names if n in args and n != "size"]
    if shape is None:
        # No size: NumPy returns a Python float, which converts to float32
        # unless a dtype is asked for; to an int or bool dtype it does not convert.
        if dtype is not None and _category(dtype) != "float":
            return None
        shape, np_dtype = "()", "float32"
    else:
        np_dtype = "float64"
    target = dtype or np_dtype
    made_in = target if _category(target) == "float" else np_dtype
    text = f"{tf('random.' + dist)}({', '.join([shape] + params)}, dtype={tf(made_in)}"
    if made_in == target:
        text += f"{_tail(extra)})"
    else:
        text = f"{tf('cast')}({text}), {tf(target)}{_tail(extra)})"
    return Rewrite(cst.parse_expression(text), tf.imports, Safety.UNSAFE,
                   f"Draw it on the device with `tf.random.{dist}` as {target} (a different random stream)")


def _shape_text(dims: List[str]) -> str:
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _size_shape(size: cst.BaseExpression, ctx) -> Optional[str]:
    """The TF shape for NumPy's ``size=``: an int becomes a 1-tuple; a tuple or
    list of int literals stays; anything else is unknown."""
    value = _literal(size)
    if isinstance(value, int) and not isinstance(value, bool):
        return _shape_text([ctx.module.code_for_node(size)])
    if isinstance(size, (cst.Tuple, cst.List)) and all(
        isinstance(_literal(e.value), int) and not isinstance(_literal(e.value), bool)
        and not isinstance(e, cst.StarredElement) for e in size.elements
    ):
        return ctx.module.code_for_node(size)
    return None


def _tail(extra: List[str]) -> str:
    return "".join(", " + item for item in extra)
