"""How a whole tflint-gpu run compares with the bare LibCST parse of the same files.

    python benchmarks/speed.py [PATH ...] [--limit N] [--providers]

Without paths it uses real TensorFlow-using code that the test extra
installs: Keras's own sources and TensorFlow's Python ops. Every figure is
measured in this one run and printed as a ratio to the bare parse (machines
here are noisy; compare ratios, not seconds). ``--providers`` also times
LibCST's generic Scope/QualifiedName/Position providers, the approach this
engine avoids.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import List

import libcst as cst

from tflint_gpu.config import Overrides, load_settings
from tflint_gpu.engine.lint import ParseError, lint_source, prefilter
from tflint_gpu.engine.run import CHECK, run_files
from tflint_gpu.files import decode

FRAMEWORK_TEXT = ("tensorflow", "keras")


def run(paths, settings, jobs: int, cached: bool):
    """The CLI's check run over ``paths`` with ``settings``."""
    return run_files(paths, settings.rules_for, CHECK, unsafe=settings.unsafe_fixes, jobs=jobs,
                     cache_dir=settings.cache_dir if cached else None, cache_key=settings.fingerprint())


def default_corpus() -> List[Path]:
    roots = []
    for package, sub in (("keras", "src"), ("tensorflow", "python/ops"), ("tensorflow", "python/data")):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            roots.append(Path(list(spec.submodule_search_locations)[0]) / sub)
    return roots


def collect(paths: List[Path], limit: int) -> List[Path]:
    files = []
    for root in paths:
        candidates = [root] if root.is_file() else sorted(root.rglob("*.py"))
        for path in candidates:
            text = path.read_bytes()
            if any(t.encode() in text for t in FRAMEWORK_TEXT) and b"\0" not in text:
                files.append(path)
    return files[:limit] if limit else files


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--limit", type=int, default=400, help="at most this many files (0: all)")
    parser.add_argument("--providers", action="store_true", help="also time LibCST's generic providers")
    args = parser.parse_args()
    roots = args.paths or default_corpus()
    if not roots:
        sys.exit("no corpus: give paths, or install the test extra (keras, tensorflow-cpu)")
    files = collect(roots, args.limit)
    work = Path(tempfile.mkdtemp(prefix="tflint-bench-"))
    try:
        # Copy, so the cache and any relative-path logic see an ordinary project.
        copies = []
        for i, path in enumerate(files):
            target = work / f"f{i:05d}_{path.name}"
            shutil.copyfile(path, target)
            copies.append(str(target))
        sources = [decode(Path(p).read_bytes()).text for p in copies]
        size = sum(len(s) for s in sources) / 1e6
        where = ", ".join(map(str, roots))
        print(f"corpus: {len(files)} files that mention tensorflow/keras, {size:.1f} MB, from {where}")

        def parse_all():
            for source in sources:
                try:
                    cst.parse_module(source)
                except Exception:
                    pass

        parse = timed(parse_all)
        settings = load_settings(Overrides(select=["ALL"]), work)
        default_settings = load_settings(Overrides(), work)
        serial = timed(lambda: run(copies, settings, 1, cached=False))
        serial_default = timed(lambda: run(copies, default_settings, 1, cached=False))
        jobs = os.cpu_count() or 1
        parallel = timed(lambda: run(copies, settings, jobs, cached=False))
        run(copies, settings, 1, cached=True)
        cached = timed(lambda: run(copies, settings, 1, cached=True))
        findings = sum(len(r.findings) for r in run(copies, settings, 1, cached=False))
        parsed = sum(1 for source in sources if prefilter(source, settings.rules))

        def lint_everything():
            for source in sources:
                try:
                    lint_source(source, "f.py", settings.rules, prefilter_text=False)
                except ParseError:
                    pass

        forced = timed(lint_everything)
        print(f"bare LibCST parse of every file (the floor): {parse:.2f} s = 1.00")
        print(f"tflint-gpu, all rules, 1 process:   {serial / parse:.2f}x the parse ({findings} findings)")
        print(f"  (files with some rule's text, hence parsed: {parsed} of {len(sources)})")
        print(f"tflint-gpu, default rules, 1 process: {serial_default / parse:.2f}x")
        print(f"every file parsed, walked and checked by all rules (no text prefilter): {forced / parse:.2f}x")
        print(f"tflint-gpu, all rules, {jobs} processes: {parallel / parse:.2f}x")
        print(f"tflint-gpu, all rules, cached re-run: {cached / parse:.3f}x")
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

            print(f"parse + LibCST Scope/QualifiedName/Position providers: {timed(providers) / parse:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
