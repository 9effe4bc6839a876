"""How a whole tflint-gpu run compares with the bare LibCST parse of the same files.

    python benchmarks/speed.py [PATH ...] [--limit N] [--jobs N] [--providers]

Without paths it uses Keras's own sources (``keras/src``, which the test extra
installs), copied with their folders so that the project index sees a real
project. Every figure is measured in this one run and printed as a ratio
(machines here are noisy; compare ratios, not seconds), each against the bare
parse at the same number of processes; the cold rows are each the best of
``--repeat`` runs, taken in turn:

* cold runs with all rules and with the default rules, with the project index
  (as the command line runs) and without it (each file read alone), at 1 and at
  ``--jobs`` processes;
* the project index alone (its summaries, built in parallel);
* a warm run (every result from the cache) against the cold one;
* one file inside the project (as stdin with ``--stdin-filename`` and the
  flake8 plugin check it, the index's summaries cached) against that file alone.

``--providers`` also times LibCST's generic Scope/QualifiedName/Position
providers, the approach this engine avoids.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import List, Sequence

import libcst as cst

from tflint_gpu.config import Overrides, load_settings
from tflint_gpu.engine.cache import ProjectCache
from tflint_gpu.engine.lint import ParseError, lint_source, prefilter
from tflint_gpu.engine.run import CHECK, build_index, run_files
from tflint_gpu.files import decode
from tflint_gpu.semantic.project import ProjectFile, ProjectIndex

FRAMEWORK_TEXT = ("tensorflow", "keras")


def run(paths, settings, jobs: int, cached: bool, root=None):
    """The CLI's check run over ``paths`` with ``settings`` (``root``: the project index's root)."""
    return run_files(paths, settings.rules_for, CHECK, unsafe=settings.unsafe_fixes, jobs=jobs,
                     cache_dir=settings.cache_dir if cached else None, cache_key=settings.fingerprint(),
                     project_root=root)


def default_corpus() -> List[Path]:
    spec = importlib.util.find_spec("keras")
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(list(spec.submodule_search_locations)[0]) / "src"]


def copy_corpus(roots: List[Path], work: Path, limit: int) -> List[str]:
    """Copy each root with its folders under ``work``; the Python files to check (at most ``limit``)."""
    files: List[str] = []
    for number, root in enumerate(roots):
        # Under its parent's name (keras/src stays keras/src), so the project's own imports resolve.
        target = work / f"{root.parent.name or 'r'}{number or ''}" / root.name
        if root.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root, target)
        else:
            shutil.copytree(root, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for path in sorted(target.rglob("*.py")) if target.is_dir() else [target]:
            data = path.read_bytes()
            if b"\0" not in data:
                files.append(str(path))
    return files[:limit] if limit else files


def _parse_files(paths: Sequence[str]) -> int:
    for path in paths:
        try:
            cst.parse_module(decode(Path(path).read_bytes()).text)
        except Exception:
            pass
    return len(paths)


def parse_all(paths: List[str], jobs: int) -> None:
    """The bare LibCST parse of every file (read and decoded), in ``jobs`` processes."""
    if jobs <= 1:
        _parse_files(paths)
        return
    import multiprocessing

    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    chunk = max(1, min(16, len(paths) // (jobs * 4)))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        list(pool.map(_parse_files, [paths[i:i + chunk] for i in range(0, len(paths), chunk)]))


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def best(fn, repeat: int = 1) -> float:
    return min(timed(fn) for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--limit", type=int, default=0, help="at most this many files (0: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes of the parallel rows")
    parser.add_argument("--serial", action="store_true", help="also the 1-process rows")
    parser.add_argument("--repeat", type=int, default=3, help="each cold row is the best of this many runs")
    parser.add_argument("--providers", action="store_true", help="also time LibCST's generic providers")
    args = parser.parse_args()
    roots = [p.resolve() for p in args.paths] or default_corpus()
    if not roots:
        sys.exit("no corpus: give paths, or install the test extra (keras)")
    work = Path(tempfile.mkdtemp(prefix="tflint-bench-"))
    try:
        files = copy_corpus(roots, work, args.limit)
        (work / "pyproject.toml").write_text("[tool.tflint-gpu]\n")
        sources = [decode(Path(p).read_bytes()).text for p in files]
        size = sum(len(s) for s in sources) / 1e6
        mention = sum(1 for s in sources if any(t in s for t in FRAMEWORK_TEXT))
        print(f"corpus: {len(files)} files ({mention} mention tensorflow/keras), {size:.1f} MB, "
              f"from {', '.join(map(str, roots))}")
        settings = load_settings(Overrides(select=["ALL"]), work)
        default_settings = load_settings(Overrides(), work)
        root = settings.project_root([str(work)])
        jobs = max(1, args.jobs)
        counts = sorted({1, jobs}) if args.serial else [jobs]
        for n in counts:
            # Interleaved, best of --repeat: a noisy machine slows one measurement, not every one.
            times: dict = {}
            for _ in range(max(1, args.repeat)):
                for key, fn in (("parse", lambda: parse_all(files, n)),
                                ("cold", lambda: run(files, settings, n, cached=False, root=root)),
                                ("alone", lambda: run(files, settings, n, cached=False, root=None)),
                                ("default", lambda: run(files, default_settings, n, cached=False, root=root)),
                                ("index", lambda: build_index(root, files, n))):
                    times[key] = min(times.get(key, float("inf")), timed(fn))
            parse, cold = times["parse"], times["cold"]
            print(f"-- {n} process{'es' if n > 1 else ''}: bare LibCST parse of every file (the floor): "
                  f"{parse:.2f} s = 1.00 (each row: best of {max(1, args.repeat)}, interleaved)")
            print(f"tflint-gpu, all rules, cold, with the project index: {cold / parse:.2f}x the parse")
            print(f"tflint-gpu, all rules, cold, each file alone (no index): {times['alone'] / parse:.2f}x the parse")
            print(f"tflint-gpu, default rules, cold, with the index: {times['default'] / parse:.2f}x the parse")
            print(f"the project index alone (summaries of every file): {times['index'] / parse:.3f}x the parse")
        findings = run(files, settings, jobs, cached=True, root=root)  # fills the cache
        warm = best(lambda: run(files, settings, jobs, cached=True, root=root), repeat=3)
        print(f"tflint-gpu, all rules, cached re-run (warm): {warm / parse:.3f}x the parse, "
              f"{cold / warm:.0f}x faster than cold ({sum(len(r.findings) for r in findings)} findings)")
        parsed = sum(1 for source in sources if prefilter(source, settings.rules))
        print(f"  (files with some rule's text: {parsed} of {len(sources)})")

        # One file inside the project (stdin, flake8), once the index's summaries are cached.
        store = ProjectCache(settings.cache_dir)
        target = max(files, key=lambda p: len(Path(p).read_bytes()) if "layers" in p else 0)
        text = decode(Path(target).read_bytes()).text

        def inside():
            view = ProjectFile(ProjectIndex(root, loader=store.load, by_text=store.of_text), target)
            lint_source(text, target, settings.rules, project=view)

        def by_itself():
            lint_source(text, target, settings.rules)

        inside()
        single = best(inside, repeat=5)
        solo = best(by_itself, repeat=5)
        print(f"one file inside the project ({Path(target).name}, cached index), "
              f"against that file alone: {single / solo:.2f}x")
        if args.providers:
            from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider, ScopeProvider

            def providers():
                for source in sources:
                    try:
                        MetadataWrapper(cst.parse_module(source)).resolve_many(
                            [ScopeProvider, QualifiedNameProvider, PositionProvider]
                        )
                    except Exception:
                        pass

            serial_parse = timed(lambda: parse_all(files, 1))
            print(f"parse + LibCST Scope/QualifiedName/Position providers, 1 process: "
                  f"{timed(providers) / serial_parse:.2f}x")

        def lint_everything():
            for source in sources:
                try:
                    lint_source(source, "f.py", settings.rules, prefilter_text=False)
                except ParseError:
                    pass

        if args.serial:
            print(f"every file parsed, walked and checked by all rules (no text prefilter), 1 process: "
                  f"{timed(lint_everything) / timed(lambda: parse_all(files, 1)):.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
