"""Derive the table of NumPy names that NumPy 2 removed, then execute every entry.

Run by a developer (never at lint time):

    python scripts/derive_numpy_removals.py --numpy 1.23.5=/tmp/np_1.23.5 --numpy 1.24.4=/tmp/np_1.24.4 \\
        --numpy 1.26.4=/tmp/np_1.26.4 --numpy 2.0.2=/tmp/np_2.0.2 ...   # writes tflint_gpu/semantic/data/numpy2_removed.json
    ... --check     # exit 1 when the committed file differs

Each ``--numpy VERSION=DIR`` is a folder holding that NumPy
(``python -m pip install --no-deps --target DIR numpy==VERSION``); the NumPy
this Python imports (2.4.6 here) is always probed too. The NumPy 1 folders
are needed for the exactness check and the ``removed_in`` column.

Where the names come from (NumPy's own lists, read from the installed NumPy 2):

* ``numpy._expired_attrs_2_0.__expired_attributes__``: the names NumPy 2.0
  removed, each with NumPy's own advice ("Use `np.inf` instead.");
* ``numpy.__former_attrs__``: the aliases of Python builtins (``np.int``,
  ``np.float``, ``np.object``...) removed in NumPy 1.24;
* the public names of the oldest NumPy 1 probed that no probed NumPy 2 has
  (``np.product``, ``np.in1d``, ``np.trapz``, ``np.NAN``...: removed in a
  2.x release without an entry in the first list).

Each entry is executed: ``getattr(numpy, name)`` must raise AttributeError
under the installed NumPy 2 (the message is recorded) and ``removed_in`` is
the first probed NumPy where it raises. The replacement is the expression
NumPy's advice names when it is one expression (``np.inf``, ``-np.inf``,
``np.float64``, ``int``), else one from ``_CANDIDATES`` below; it must
evaluate under NumPy 2. ``exact`` says whether the rewrite changes nothing
under NumPy 1 either: under every probed NumPy 1 that still has the name,
the old name is the very object the replacement gives (``np.Inf is np.inf``,
``np.int is int``), or a function whose body only forwards its arguments
unchanged to that object (``product``: ``return prod(*args, **kwargs)``),
and under NumPy 2 the replacement is the same thing (same class or function
name, or the same float). Otherwise ``exact`` is false and ``why`` says what
differs. ``bool`` is not an entry: NumPy 2 has ``np.bool`` again (NumPy's
``bool_``), so it raises nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tflint_gpu" / "semantic" / "data" / "numpy2_removed.json"

# Replacements for names NumPy's lists give no one-expression advice for (each executed below).
_CANDIDATES = {
    "NAN": "np.nan",
    "product": "np.prod",
    "cumproduct": "np.cumprod",
    "in1d": "np.isin",
    "trapz": "np.trapezoid",
    "RankWarning": "np.exceptions.RankWarning",
    "round_": "np.around",
    "bool8": "np.bool_",
    "int0": "np.intp",
    "uint0": "np.uintp",
    "object0": "np.object_",
    "str0": "np.str_",
    "bytes0": "np.bytes_",
    "void0": "np.void",
    "AxisError": "np.exceptions.AxisError",
    "ComplexWarning": "np.exceptions.ComplexWarning",
    "VisibleDeprecationWarning": "np.exceptions.VisibleDeprecationWarning",
    "ModuleDeprecationWarning": "np.exceptions.ModuleDeprecationWarning",
    "TooHardError": "np.exceptions.TooHardError",
}
# What differs where a candidate is not exact (the executed verdict decides; this only words it).
_DIFFERENCES = {
    "in1d": "`np.isin` keeps the shape of its first argument where `np.in1d` flattened it to 1-D",
    "trapz": "`np.trapezoid` does not exist before NumPy 2.0",
}

_ADVICE = [
    re.compile(r"^Use `(?P<expr>-?np\.[\w.]+|-?\d+\.\d+)` instead\.?$"),
    re.compile(r"^It's still available as `(?P<expr>np\.[\w.]+)`\.?$"),
    re.compile(r"^Now it's available under `(?P<expr>np\.[\w.]+)`\.?$"),
]

# Run in a child Python with one NumPy on its path: what each name is there.
_PROBE = r'''
import ast, builtins, inspect, json, math, sys, textwrap, warnings
warnings.simplefilter("ignore")
import numpy as np
names, replacements = json.loads(sys.stdin.read())

def ident(obj):
    if isinstance(obj, float):
        return ["float", "nan" if math.isnan(obj) else repr(obj)]
    if isinstance(obj, type) or callable(obj):
        return ["named", getattr(obj, "__name__", None)]
    return ["other", type(obj).__name__, repr(obj)]

def evaluate(expr):
    return eval(expr, {"np": np, "__builtins__": builtins})

def forwards(old, new):
    """Does ``old``'s body only forward its parameters, unchanged, to ``new``?"""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(old)))
    except Exception:
        return False
    fn = tree.body[0]
    if not isinstance(fn, ast.FunctionDef):
        return False
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    body = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                                     and ast.unparse(s.value.func).endswith("warn"))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Call):
        return False
    call = body[0].value
    scope = getattr(sys.modules.get(getattr(old, "__module__", "") or ""), "__dict__", None) \
        or getattr(old, "__globals__", {})
    if not isinstance(call.func, ast.Name) or scope.get(call.func.id) is not new:
        return False
    params = [a.arg for a in fn.args.args]
    passed_pos = [a.id if isinstance(a, ast.Name) else (("*" + a.value.id) if isinstance(a, ast.Starred) else None)
                  for a in call.args]
    passed_kw = {k.arg: (k.value.id if isinstance(k.value, ast.Name) else None) for k in call.keywords}
    if fn.args.vararg is not None and passed_pos == ["*" + fn.args.vararg.arg] and fn.args.kwarg is not None \
            and passed_kw == {None: fn.args.kwarg.arg} and not params:
        return True
    lead = passed_pos[:len(params)]
    return fn.args.vararg is None and lead == params[:len(lead)] and len(passed_pos) == len(lead) \
        and passed_kw == {p: p for p in params[len(lead):]}

out = {"version": np.__version__, "names": {}, "replacements": {}}
for name in names:
    try:
        obj = getattr(np, name)
    except AttributeError as exc:
        out["names"][name] = {"raises": "AttributeError: " + str(exc).splitlines()[0]}
        continue
    except Exception as exc:  # np.Tester under 1.25+: RuntimeError
        out["names"][name] = {"raises": type(exc).__name__ + ": " + str(exc).splitlines()[0]}
        continue
    entry = {"ident": ident(obj)}
    expr = replacements.get(name)
    if expr:
        try:
            new = evaluate(expr)
        except Exception as exc:
            entry["replacement"] = "missing: " + type(exc).__name__
        else:
            if obj is new:
                entry["replacement"] = "same object"
            elif isinstance(obj, float) and isinstance(new, float) and (obj == new or (math.isnan(obj) and math.isnan(new))):
                entry["replacement"] = "same value"
            elif callable(obj) and forwards(obj, new):
                entry["replacement"] = "forwards"
            else:
                entry["replacement"] = "different: " + repr(ident(obj)) + " vs " + repr(ident(new))
    out["names"][name] = entry
for name, expr in replacements.items():
    try:
        out["replacements"][name] = ident(evaluate(expr))
    except Exception as exc:
        out["replacements"][name] = ["missing", type(exc).__name__]
print(json.dumps(out))
'''


def _probe(path, names, replacements):
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = path
    done = subprocess.run([sys.executable, "-c", _PROBE], input=json.dumps([names, replacements]),
                          capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"probe of {path or 'the installed NumPy'} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def _version_key(text):
    return tuple(int(p) for p in text.split(".")[:3])


def _advice(message):
    for pattern in _ADVICE:
        found = pattern.match(message.strip())
        if found:
            return found.group("expr")
    return None


def derive(folders):
    import numpy as np
    import numpy._expired_attrs_2_0 as expired

    sources = {}
    advice = {}
    for name, text in expired.__expired_attributes__.items():
        sources[name] = "numpy._expired_attrs_2_0.__expired_attributes__"
        advice[name] = text
    for name in np.__former_attrs__:
        sources[name] = "numpy.__former_attrs__"
        advice[name] = f"Use `{name}` by itself (the builtin NumPy aliased)."
    probes = {}
    for version, path in sorted(folders.items(), key=lambda item: _version_key(item[0])):
        probes[version] = path
    oldest = min(probes, key=_version_key) if probes else None
    if oldest is not None:
        env = dict(os.environ, PYTHONPATH=probes[oldest])
        listed = subprocess.run([sys.executable, "-c", "import warnings, json; warnings.simplefilter('ignore');"
                                 "import numpy as np; print(json.dumps([n for n in dir(np) if not n.startswith('_')]))"],
                                capture_output=True, text=True, env=env, check=True)
        for name in json.loads(listed.stdout):
            try:
                getattr(np, name)
            except AttributeError:
                sources.setdefault(name, f"public in NumPy {oldest}, absent from NumPy {np.__version__}")
    replacements = {}
    for name in sources:
        if name in np.__former_attrs__:
            replacements[name] = name
        elif name in _CANDIDATES:
            replacements[name] = _CANDIDATES[name]
        elif name in advice and _advice(advice[name]):
            replacements[name] = _advice(advice[name])
    names = sorted(sources)
    results = {version: _probe(path, names, replacements) for version, path in probes.items()}
    here = _probe(None, names, replacements)
    results[here["version"]] = here
    order = sorted(results, key=_version_key)
    newest = order[-1]
    entries = []
    for name in names:
        now = results[newest]["names"][name]
        if "raises" not in now:
            continue  # NumPy 2 has it (bool): not a removal
        removed_in = next(v for v in order if all("raises" in results[w]["names"][name]
                                                  for w in order if _version_key(w) >= _version_key(v)))
        entry = {"name": name, "source": sources[name], "error": now["raises"],
                 "removed_in": ".".join(removed_in.split(".")[:2]), "replacement": None, "exact": False, "why": ""}
        if name in advice:
            entry["advice"] = advice[name]
        expr = replacements.get(name)
        if expr is not None:
            new_ident = results[newest]["replacements"][name]
            if new_ident[0] == "missing":
                entry["why"] = f"`{expr}` does not exist in NumPy {newest}"
                entries.append(entry)
                continue
            entry["replacement"] = expr
            had = [(v, results[v]["names"][name]) for v in order if "raises" not in results[v]["names"][name]]
            verdicts = [(v, h.get("replacement", "")) for v, h in had]
            same_after = all(results[v]["replacements"][name] == new_ident for v, _ in had)
            if had and all(kind in ("same object", "same value", "forwards") for _, kind in verdicts) and same_after:
                entry["exact"] = True
                kinds = sorted({kind for _, kind in verdicts})
                entry["kind"] = kinds[0] if len(kinds) == 1 else "same value"
                entry["why"] = (f"under NumPy {', '.join(v for v, _ in had)} `np.{name}` "
                                + " / ".join({"same object": f"is `{expr}`", "same value": f"== `{expr}`",
                                              "forwards": f"only forwards its arguments to `{expr}`"}[k]
                                             for k in kinds)
                                + f"; NumPy {newest} has the same `{expr}`")
            else:
                bad = [f"NumPy {v}: {kind}" for v, kind in verdicts if kind not in ("same object", "same value",
                                                                                   "forwards")]
                if not same_after:
                    bad.append(f"`{expr}` is not the same in every NumPy probed")
                if not had:
                    bad.append("no probed NumPy has the old name")
                entry["why"] = "; ".join(([_DIFFERENCES[name]] if name in _DIFFERENCES else []) + bad)
                missing = [v for v, kind in verdicts if kind.startswith("missing")]
                moved = [v for v, _ in had if results[v]["replacements"][name] != new_ident]
                if name in _DIFFERENCES:
                    entry["difference"] = _DIFFERENCES[name]
                elif missing:
                    entry["difference"] = f"`{expr}` does not exist in NumPy {missing[0]}"
                elif moved and all(kind in ("same object", "same value", "forwards") for _, kind in verdicts):
                    entry["difference"] = (f"`{expr}` is `{results[moved[0]]['replacements'][name][-1]}` under NumPy "
                                           f"{moved[0]} and `{new_ident[-1]}` under NumPy {newest}")
                else:
                    entry["difference"] = f"not the same object as `np.{name}` under NumPy 1"
        entries.append(entry)
    return {
        "about": "NumPy names NumPy 2 (and 1.24, for the builtin aliases) removed; executed by "
                 "scripts/derive_numpy_removals.py under NumPy " + ", ".join(order),
        "numpy_probed": order,
        "entries": entries,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--numpy", action="append", default=[], metavar="VERSION=DIR")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    folders = dict(item.split("=", 1) for item in args.numpy)
    table = derive(folders)
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    if args.check:
        same = Path(args.out).read_text(encoding="utf-8") == text
        print("up to date" if same else "differs")
        return 0 if same else 1
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"{len(table['entries'])} entries -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
