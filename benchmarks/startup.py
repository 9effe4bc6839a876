"""What a tflint-gpu command costs to start: the CPU time (user + system) of its process.

    python benchmarks/startup.py [--repeat N] [--cold-repeat N] [--corpus DIR] [--no-bytecode]

Each row runs one command in a child process and reads the CPU time that child (and the worker
processes it waited for) used, from ``os.wait4``; every row is repeated ``--repeat`` times, the
rows taken in turn, and its minimum and median are printed (machines here are shared and noisy:
compare rows of one run):

* ``python -c pass``: the interpreter's floor (its site-packages' .pth files included);
* ``tflint-gpu --version``, ``tflint-gpu rules``, ``tflint-gpu rule TFG103``;
* ``flake8 --version``, for comparison (it imports every installed plugin's module, ours too);
* a cold run over installed ``keras/src`` (copied to a temporary folder, whose root holds the cache;
  ``--cold-repeat`` times, the cache removed before each) and a warm one (every result from the cache);
* reading the cache alone: a child that loads the results and the project summaries the warm run
  reads (``engine.cache``), less the floor.

Then the targets of issue 38, as figures: ``--version`` at most 0.1 s of CPU; a warm run at most
twice the start-up (``--version``) plus reading the cache.

The commands run as an installed package does, from compiled bytecode: the children write theirs to
a temporary ``PYTHONPYCACHEPREFIX`` (the working tree is left alone) and each command runs once before
it is measured. ``--no-bytecode`` keeps ``PYTHONDONTWRITEBYTECODE`` as the environment has it (set
here, every start then compiles the sources it imports). A warm run far above its minimum means the
cache was invalidated (the linter's sources changed during the run): run again. Figures are printed,
never asserted (tests/test_startup.py checks what each command imports).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

READ_CACHE = """
import sys
from pathlib import Path
from tflint_gpu.engine.cache import Cache, ProjectCache
folder = Path(sys.argv[1])
ProjectCache(folder)
for path in folder.glob("*.json"):
    Cache._load(path.read_bytes())
"""


def cpu(command: Sequence[str], cwd: str, env: Dict[str, str]) -> float:
    """The user + system CPU seconds of ``command``'s process and the children it waited for."""
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)}: exit {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def tool(name: str, module: str) -> List[str]:
    """The console script installed beside this interpreter (not a version manager's shim, which would
    add its own start), else the module run by this interpreter."""
    beside = Path(sys.executable).parent / name
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", module]


def default_corpus() -> Optional[Path]:
    spec = importlib.util.find_spec("keras")
    if spec is None or not spec.submodule_search_locations:
        return None
    src = Path(list(spec.submodule_search_locations)[0]) / "src"
    return src if src.is_dir() else None


def row(name: str, times: List[float]) -> str:
    return f"{name:<34} {min(times):7.3f} {statistics.median(times):7.3f}  ({len(times)} runs)"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each start-up row (default: 7)")
    parser.add_argument("--cold-repeat", type=int, default=1, help="cold runs over the corpus (default: 1)")
    parser.add_argument("--corpus", type=Path, default=None, help="a folder to run over (default: keras/src)")
    parser.add_argument("--no-bytecode", action="store_true", help="keep PYTHONDONTWRITEBYTECODE as it is")
    args = parser.parse_args(argv)
    corpus = args.corpus or default_corpus()
    tflint = tool("tflint-gpu", "tflint_gpu")
    with tempfile.TemporaryDirectory(prefix="tflint-startup-") as temp:
        env = dict(os.environ)
        if not args.no_bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = os.path.join(temp, "pycache")
        work = os.path.join(temp, "work")
        os.makedirs(work)
        starts = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "tflint-gpu --version": tflint + ["--version"],
            "tflint-gpu rules": tflint + ["rules"],
            "tflint-gpu rule TFG103": tflint + ["rule", "TFG103"],
            "flake8 --version": tool("flake8", "flake8") + ["--version"],
        }
        times: Dict[str, List[float]] = {name: [] for name in starts}
        for command in starts.values():  # compile and cache the bytecode first
            cpu(command, work, env)
        for _ in range(args.repeat):
            for name, command in starts.items():
                times[name].append(cpu(command, work, env))
        if corpus is not None:
            copy = os.path.join(work, "src")
            shutil.copytree(corpus, copy, ignore=shutil.ignore_patterns("__pycache__"))
            cache = os.path.join(work, ".tflint_gpu_cache")
            check = tflint + ["-q", "src"]
            times["cold run"] = []
            for _ in range(max(1, args.cold_repeat)):
                shutil.rmtree(cache, ignore_errors=True)
                times["cold run"].append(cpu(check, work, env))
            read = [sys.executable, "-c", READ_CACHE, cache]
            floor = [sys.executable, "-c", "pass"]
            times["warm run"], times["reading the cache"] = [], []
            for _ in range(args.repeat):
                times["warm run"].append(cpu(check, work, env))
                times["reading the cache"].append(cpu(read, work, env) - cpu(floor, work, env))
        files = sum(1 for _ in Path(corpus).rglob("*.py")) if corpus is not None else 0
    print(f"CPU seconds (user + system) of one process{'' if args.no_bytecode else ', from bytecode'}"
          f"{f'; corpus: {corpus} ({files} Python files)' if corpus else ''}")
    print(f"{'':<34} {'min':>7} {'median':>7}")
    for name, values in times.items():
        print(row(name, values))
    floor_cpu = min(times["python -c pass"])
    version = min(times["tflint-gpu --version"])
    print(f"\n--version: {version:.3f} s (target: at most 0.1 s), {version - floor_cpu:+.3f} s over the interpreter; "
          f"flake8 --version {min(times['flake8 --version']):.3f} s")
    if corpus is not None:
        warm, read_cache = min(times["warm run"]), min(times["reading the cache"])
        bound = 2 * version + read_cache
        print(f"warm run: {warm:.3f} s; twice --version plus reading the cache: {bound:.3f} s "
              f"({warm / bound:.2f} of it); the cold run {min(times['cold run']) / warm:.0f}x the warm one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
