"""Fuzz the command line with mutated real files: no traceback, no hang, fixes that parse and settle.

    python benchmarks/fuzz.py SEED_DIR... [--files 400] [--seed 0] [--budget 20]

Takes the Python files and notebooks under the seed folders (examples/, a checkout of real code),
makes ``--files`` mutants (lines deleted, duplicated, swapped, re-indented, cut short; long
`and`/`or` chains, commented-out code after a full stop, deep nesting, odd bytes and line ends;
notebook cells split and emptied), and runs on them, in a scratch folder:

1. ``check --format json`` with ``--jobs 1`` and ``--jobs 2``: the same findings and problems;
2. ``--diff`` and ``--fix --unsafe-fixes`` on a copy: every fixed file that parsed before parses after;
3. a second ``--fix --unsafe-fixes`` on the fixed copy: nothing more to fix (a fixed point);
4. every run: exit code 0, 1 or 2, no Python traceback on stderr, done within its time limit.

Prints the figures (files, runs, crashes, hangs, fixes that broke a file, fixes that did not settle)
and the files behind each problem, kept in the scratch folder. The linter is run as a command, as a
user runs it; TensorFlow is never imported.
"""
from __future__ import annotations

import argparse
import ast
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, List, Tuple

HERE = Path(__file__).resolve().parent


def _lines(text: str) -> List[str]:
    return text.splitlines(keepends=True) or [""]


def _delete(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    del lines[rng.randrange(len(lines))]
    return "".join(lines)


def _duplicate(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    return "".join(lines[:i + 1] + lines[i:])


def _swap(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def _indent(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines[i] = rng.choice(["    ", "\t", " ", ""]) + lines[i].lstrip(" \t") if rng.random() < 0.5 else "    " + lines[i]
    return "".join(lines)


def _truncate(rng: random.Random, text: str) -> str:
    return text[:rng.randrange(len(text) + 1)]


def _chain(rng: random.Random, text: str) -> str:
    op = rng.choice(["and", "or", "+", "*"])
    terms = f" {op} ".join(["x"] * rng.choice([500, 3000, 10000]))
    return text + f"\nx = 1\ny = {terms}\nif {terms}:\n    pass\n"


def _commented_code(rng: random.Random, text: str) -> str:
    block = "# The old head, kept.\n" + "#    # y = layers.Dense(4)(y)  # old head\n" * rng.choice([6, 30, 200])
    lines = _lines(text)
    i = rng.randrange(len(lines))
    return "".join(lines[:i] + [block] + lines[i:])


def _nesting(rng: random.Random, text: str) -> str:
    depth = rng.choice([50, 90])
    return text + "\nz = " + "(" * depth + "1" + ")" * depth + "\n" + "f(" * 40 + "1" + ")" * 40 + "\n"


def _bytes(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines[i] = lines[i].rstrip("\n") + rng.choice(["\f", "\r", "\r\n", "\t", "\u00a0", "\\", " # noqa", " # noqa: TFG"]) \
        + "\n"
    return "".join(lines)


def _call_twist(rng: random.Random, text: str) -> str:
    """A call's arguments shuffled or a method chain cut: the shapes fixes are written for, made odd."""
    lines = _lines(text)
    candidates = [i for i, line in enumerate(lines) if "(" in line and ")" in line]
    if not candidates:
        return text
    i = rng.choice(candidates)
    line = lines[i]
    twist = rng.choice([".numpy()", ".numpy().tolist()", " or None", "[0]", ".batch(2)", ".shuffle(8)", ".prefetch(1)"])
    cut = line.rstrip("\n")
    lines[i] = cut + twist + "\n" if not cut.rstrip().endswith(":") else line
    return "".join(lines)


MUTATIONS: Dict[str, Callable[[random.Random, str], str]] = {
    "delete": _delete, "duplicate": _duplicate, "swap": _swap, "indent": _indent, "truncate": _truncate,
    "chain": _chain, "commented-code": _commented_code, "nesting": _nesting, "bytes": _bytes, "twist": _call_twist,
}


def _notebook(rng: random.Random, data: str) -> str:
    try:
        nb = json.loads(data)
    except ValueError:
        return data
    cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    if not cells:
        return data
    cell = rng.choice(cells)
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else source
    choice = rng.random()
    if choice < 0.3:
        text = "    # a note\n"  # a cell with only an indented comment
    elif choice < 0.6:
        text = MUTATIONS[rng.choice(list(MUTATIONS))](rng, text) if text else text
    else:  # split the cell in two at a line
        lines = _lines(text)
        i = rng.randrange(len(lines))
        new = dict(cell, source="".join(lines[i:]))
        nb["cells"].insert(nb["cells"].index(cell) + 1, new)
        text = "".join(lines[:i])
    cell["source"] = text
    return json.dumps(nb, indent=1)


def _parses(path: Path) -> bool:
    if path.suffix == ".ipynb":
        return True  # cells are IPython; the tool reports its own cell problems
    try:
        ast.parse(path.read_bytes())
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # what CPython refuses, as the tool reads it
        return False


def _run(args: List[str], timeout: float) -> Tuple[int, str, str, bool]:
    try:
        done = subprocess.run([sys.executable, "-m", "tflint_gpu"] + args, capture_output=True, text=True,
                              timeout=timeout, cwd=tempfile.gettempdir())
        return done.returncode, done.stdout, done.stderr, False
    except subprocess.TimeoutExpired:
        return -1, "", "", True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", nargs="+", type=Path)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=20.0, help="per-file analysis budget given to the tool (s)")
    parser.add_argument("--keep", type=Path, default=None, help="scratch folder (default: a new temporary one)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    sources = sorted(p for seed in args.seeds for p in seed.rglob("*") if p.suffix in (".py", ".ipynb") and p.is_file()
                     and p.stat().st_size < 300_000)
    if not sources:
        print("no seed files", file=sys.stderr)
        return 2
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="tflint-fuzz-"))
    files = scratch / "files"
    files.mkdir(parents=True, exist_ok=True)
    kinds: Dict[str, int] = {}
    for n in range(args.files):
        source = rng.choice(sources)
        text = source.read_text(encoding="utf-8", errors="replace")
        if source.suffix == ".ipynb":
            out, kind = _notebook(rng, text), "notebook"
        else:
            kind = rng.choice(list(MUTATIONS))
            out = MUTATIONS[kind](rng, text)
            if rng.random() < 0.3:  # a second mutation
                out = MUTATIONS[rng.choice(list(MUTATIONS))](rng, out)
        kinds[kind] = kinds.get(kind, 0) + 1
        (files / f"m{n:05d}_{kind}{source.suffix}").write_text(out, encoding="utf-8", newline="")
    # Leave the project's own configuration out: a scratch pyproject selecting every rule.
    (scratch / "pyproject.toml").write_text("[tool.tflint-gpu]\nselect = [\"ALL\"]\n")
    budget = ["--file-timeout", str(args.budget)] if _supports_budget() else []
    limit = max(600.0, args.files * 3.0)
    runs = crashes = hangs = 0
    problems: List[str] = []

    def run(label: str, extra: List[str]) -> Tuple[int, str, str]:
        nonlocal runs, crashes, hangs
        runs += 1
        code, out, err, hung = _run(["--no-cache", "--config", str(scratch / "pyproject.toml")] + budget + extra, limit)
        if hung:
            hangs += 1
            problems.append(f"{label}: no answer in {limit:.0f} s")
        elif code not in (0, 1, 2) or "Traceback (most recent call last)" in err:
            crashes += 1
            problems.append(f"{label}: exit {code}: {err.strip().splitlines()[-1:] if err.strip() else ''}")
        return code, out, err

    one = run("check --jobs 1", ["--format", "json", "--jobs", "1", "--exit-zero", str(files)])
    two = run("check --jobs 2", ["--format", "json", "--jobs", "2", "--exit-zero", str(files)])
    if one[1] != two[1]:
        problems.append("check: --jobs 1 and --jobs 2 differ")
    run("diff", ["--diff", "--unsafe-fixes", "--exit-zero", str(files)])
    fixed = scratch / "fixed"
    shutil.rmtree(fixed, ignore_errors=True)
    shutil.copytree(files, fixed)
    parsed_before = {p.name for p in files.iterdir() if _parses(p)}
    run("fix", ["--fix", "--unsafe-fixes", "--exit-zero", str(fixed)])
    broken = sorted(p.name for p in fixed.iterdir() if p.name in parsed_before and not _parses(p))
    changed = sorted(p.name for p in fixed.iterdir() if p.read_bytes() != (files / p.name).read_bytes())
    again = scratch / "again"
    shutil.rmtree(again, ignore_errors=True)
    shutil.copytree(fixed, again)
    run("second fix", ["--fix", "--unsafe-fixes", "--exit-zero", str(again)])
    unsettled = sorted(p.name for p in again.iterdir() if p.read_bytes() != (fixed / p.name).read_bytes())
    stopped = sum("analysis stopped after" in line for line in one[2].splitlines())
    print(f"files: {args.files} ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) from {len(sources)} seeds")
    print(f"runs: {runs} (each over every file); crashes: {crashes}; hangs: {hangs}; files over the budget: {stopped}")
    print(f"files changed by --fix --unsafe-fixes: {len(changed)}; a parsing file broken by it: {len(broken)}; "
          f"not at a fixed point after one --fix: {len(unsettled)}")
    for line in problems + [f"broken by fix: {n}" for n in broken] + [f"not settled: {n}" for n in unsettled]:
        print("  " + line)
    print(f"scratch: {scratch}")
    return 1 if problems or broken or unsettled else 0


def _supports_budget() -> bool:
    done = subprocess.run([sys.executable, "-m", "tflint_gpu", "--help"], capture_output=True, text=True)
    return "--file-timeout" in done.stdout


if __name__ == "__main__":
    sys.exit(main())
