"""Rewrite a NumPy array-creation call as the TensorFlow op that makes the same array.

NumPy's defaults are float64/int64 where TensorFlow's are float32/int32, so
the rewrite always spells out the dtype NumPy would have used: values *and*
dtypes stay identical. Random creators map to ``tf.random.*`` with the same
distribution and dtype, but a different random stream: those fixes are unsafe.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

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


def _literal_kind(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    if isinstance(expr, cst.Integer):
        return "int64"
    if isinstance(expr, cst.Float):
        return "float64"
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return "bool"
    return None


def _args(call: cst.Call, names: Tuple[str, ...]) -> Optional[Dict[str, cst.BaseExpression]]:
    """Map a call's arguments to parameter names; None if it uses * or unknown keywords."""
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
        else:
            found[arg.keyword.value] = arg.value
    return found


def rewrite(call: cst.Call, qualname: str, ctx, dtype: Optional[str],
            extra: List[str]) -> Optional[Rewrite]:
    """The TF expression making the same array as ``call`` (a NumPy creator).

    ``dtype``: the TF dtype the result must have (from the conversion call), or
    None to keep NumPy's. ``extra``: argument text appended (``name="w"``).
    """
    code = ctx.module.code_for_node
    if qualname in DETERMINISTIC:
        op, names = DETERMINISTIC[qualname]
        args = _args(call, names + ("dtype",))
        if args is None:
            return None
        np_dtype = tf_dtype_of(args["dtype"], ctx) if "dtype" in args else None
        if "dtype" in args and np_dtype is None:
            return None
        if qualname == "numpy.full":
            if "shape" not in args or "fill_value" not in args:
                return None
            kind = np_dtype or _literal_kind(args["fill_value"])
            if kind is None:
                return None
            target = dtype or kind
            const, imports = ctx.module_expr("tensorflow", "constant")
            dtype_expr, _ = ctx.module_expr("tensorflow", target)
            fill, _ = ctx.module_expr("tensorflow", "fill")
            text = (f"{code(fill)}({code(args['shape'])}, {code(const)}({code(args['fill_value'])}, "
                    f"dtype={code(dtype_expr)}){_tail(extra)})")
            return Rewrite(cst.parse_expression(text), imports, Safety.SAFE,
                           f"Create it with `tf.fill` as {target}")
        if qualname == "numpy.arange":
            bounds = [args[n] for n in ("start", "stop", "step") if n in args]
            if not bounds or set(args) - {"start", "stop", "step", "dtype"}:
                return None
            kinds = {_literal_kind(b) for b in bounds}
            if np_dtype is None:
                if None in kinds:
                    return None  # a name: its Python type decides NumPy's dtype
                np_dtype = "float64" if "float64" in kinds else "int64"
            parts = [code(b) for b in bounds]
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
        func, imports = ctx.module_expr("tensorflow", op)
        dtype_expr, _ = ctx.module_expr("tensorflow", target)
        text = f"{code(func)}({', '.join(parts)}, dtype={code(dtype_expr)}{_tail(extra)})"
        return Rewrite(cst.parse_expression(text), imports, Safety.SAFE,
                       f"Create it with `tf.{op}` as {target}")
    if qualname in RANDOM:
        dist = RANDOM[qualname]
        short = qualname.rsplit(".", 1)[1]
        if short in ("rand", "randn"):
            if any(a.keyword is not None or a.star for a in call.args):
                return None
            dims = [code(a.value) for a in call.args]
            shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
            params: List[str] = []
        else:
            names = {"uniform": ("low", "high", "size"), "normal": ("loc", "scale", "size")}.get(short, ("size",))
            args = _args(call, names)
            if args is None or set(args) - set(names):
                return None
            shape = code(args["size"]) if "size" in args else "()"
            rename = {"low": "minval", "high": "maxval", "loc": "mean", "scale": "stddev"}
            params = [f"{rename[n]}={code(args[n])}" for n in names if n in args and n != "size"]
        target = dtype or "float64"
        func, imports = ctx.module_expr("tensorflow", f"random.{dist}")
        dtype_expr, _ = ctx.module_expr("tensorflow", target)
        text = f"{code(func)}({', '.join([shape] + params)}, dtype={code(dtype_expr)}{_tail(extra)})"
        return Rewrite(cst.parse_expression(text), imports, Safety.UNSAFE,
                       f"Draw it on the device with `tf.random.{dist}` as {target} (a different random stream)")
    return None


def _tail(extra: List[str]) -> str:
    return "".join(", " + item for item in extra)

