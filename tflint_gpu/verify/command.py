"""The `tflint-gpu verify` command: options, running the harness, printing the table.

Exit code: 0 when every verdict is ok, 1 when any is ``failed``, 2 on a usage
error. Ratios (before/after median seconds) are reported, never asserted.
"""
from __future__ import annotations

import argparse
import importlib.util
import datetime
import json
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from tflint_gpu.progress import Progress
from tflint_gpu.verify import harness
from tflint_gpu.verify.harness import Record

MISSING_TENSORFLOW = ("verify runs the examples under TensorFlow, which is not installed: "
                      "pip install 'tflint-gpu[verify]' (in a checkout: pip install -e '.[verify]'; "
                      "with a GPU: '.[gpu]')")
_COLUMNS = ("rule", "verdict", "before s", "after s", "ratio", "traces", "evidence")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rule", action="append", default=[], metavar="CODE",
                        help="verify this rule's example (repeatable; default: every rule with an example dir)")
    parser.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto",
                        help="auto: a GPU when TensorFlow lists one, else the CPU; cpu hides GPUs")
    parser.add_argument("--size", choices=("small", "large"), default="small",
                        help="the size passed to each example's main()")
    parser.add_argument("--repeat", type=int, default=5, metavar="N", help="timed calls after the warm-up (default 5)")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text", dest="output_format")
    parser.add_argument("--write-results", action="store_true",
                        help="write examples/RESULTS.md (markdown, with device, TF version and date)")
    parser.add_argument("--examples", type=Path, default=None, metavar="DIR",
                        help="the examples directory (default: examples/ of this checkout)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="limit for each child process (default 300 small, 1800 large)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="examples verified at once (default 1: timings undisturbed)")


def run(args: argparse.Namespace) -> int:
    root = Path(args.examples) if getattr(args, "examples", None) else harness.default_examples_dir()
    output_format = getattr(args, "output_format", None) or getattr(args, "format", "text")
    if args.repeat < 1 or getattr(args, "jobs", 1) < 1:
        return _usage("--repeat and --jobs must be at least 1")
    if not root.is_dir():
        return _usage(f"no examples directory at {root}")
    if importlib.util.find_spec("numpy") is None or importlib.util.find_spec("tensorflow") is None:
        return _usage(MISSING_TENSORFLOW)
    rules = harness.registry()
    codes = [code.upper() for code in args.rule] or harness.example_codes(root)
    unknown = [code for code in codes if code not in rules and not (root / code).is_dir()]
    if unknown:
        return _usage(f"unknown rule {', '.join(unknown)}")
    if not codes:
        return _usage(f"no examples under {root}")
    if args.device == "gpu":
        found = harness.probe("gpu")
        if found.get("error"):
            return _usage(f"--device gpu: {found['error']}")
    codes = list(dict.fromkeys(codes))
    with Progress(len(codes), "examples", "verifying") as progress:  # on a terminal only
        records = harness.verify(codes, root, size=args.size, repeat=args.repeat,
                                 device=args.device, timeout=getattr(args, "timeout", None),
                                 jobs=getattr(args, "jobs", 1), progress=progress)
    if output_format == "json":
        print(json.dumps([r.as_dict() for r in records], indent=2))
    elif output_format == "markdown":
        print(markdown(records, args), end="")
    else:
        print(text(records, args))
    if args.write_results:
        target = root / "RESULTS.md"
        target.write_text(markdown(records, args), encoding="utf-8")
        print(f"wrote {target}", file=sys.stderr)
    return 1 if any(r.verdict == "failed" for r in records) else 0


def _usage(message: str) -> int:
    print(f"tflint-gpu verify: error: {message}", file=sys.stderr)
    return 2


def _seconds(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.4f}"


def _timed(median: Optional[float], low: Optional[float], high: Optional[float]) -> str:
    """The median of the timed calls with their range: ``0.0879 (0.0850-0.0901)``."""
    if median is None or low is None or high is None:
        return _seconds(median)
    return f"{median:.4f} ({low:.4f}-{high:.4f})"


def _row(record: Record) -> List[str]:
    ratio = "-" if record.ratio is None else f"{record.ratio:.2f}x"
    if record.ratio is not None and record.ratio_min is not None and record.ratio_max is not None:
        ratio += f" ({record.ratio_min:.2f}-{record.ratio_max:.2f})"
    if record.traces_before is None and record.traces_after is None:
        traces = "n/a"  # no tf.function was made or called (or neither file ran)
    else:
        traces = f"{_count(record.traces_before)}/{_count(record.traces_after)}"
    return [record.rule, record.verdict, _timed(record.before_seconds, record.before_min, record.before_max),
            _timed(record.after_seconds, record.after_min, record.after_max), ratio, traces, record.evidence]


def _count(value: Optional[int]) -> str:
    return "-" if value is None else str(value)


def _environment(records: Sequence[Record], args: argparse.Namespace) -> str:
    devices = sorted({r.device for r in records if r.device}) or ["unknown"]
    versions = sorted({r.tf_version for r in records if r.tf_version}) or ["unknown"]
    return (f"device: {', '.join(devices)} (--device {args.device}); TensorFlow {', '.join(versions)}; "
            f"size {args.size}; {args.repeat} timed call(s) after a warm-up")


def text(records: Sequence[Record], args: argparse.Namespace) -> str:
    rows = [list(_COLUMNS)] + [_row(r) for r in records]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS) - 1)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1] for row in rows]
    failed = sum(r.verdict == "failed" for r in records)
    lines.append("")
    lines.append(_environment(records, args))
    lines.append(f"{len(records)} example(s), {failed} failed")
    return "\n".join(lines)


def markdown(records: Sequence[Record], args: argparse.Namespace) -> str:
    today = datetime.date.today().isoformat()
    header = "| Rule | Verdict | Before (s) | After (s) | Before/after | Traces before/after | Evidence |"
    lines = [
        "# Example verification results",
        "",
        "Generated by `tflint-gpu verify` on " + today + "; regenerate it with `--write-results`, do not edit by hand.",
        "",
        "- " + _environment(records, args).replace("; ", "\n- "),
        "",
        header,
        "|" + "---|" * 7,
    ]
    for record in records:
        cells = [_escape(cell) for cell in _row(record)]
        cells[0] = f"[{record.rule}]({record.rule}/)"
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Verdicts: `equivalent` (same dtypes, shapes and values, or within the example's TOLERANCE), "
        "`fixes-error` (before raises, after runs; the evidence is the error), `fixes-behaviour` "
        "(both run and `behaviour_changed(before, after)` is true), `failed` (anything else, "
        "including an `after.py` that is not exactly the rule's fix of `before.py`, or, for a rule "
        "without a fix or an example its fix leaves alone, one that still has its finding). `equivalent` "
        "needs at least one compared "
        "tensor or array; `fixes-error` needs `before.py`'s `main` to raise the "
        "example's `EXPECT_ERROR` and `after.py`'s to return a result.",
        "",
        "Times are the median of the timed calls of `main(size)` in a fresh process, each including the "
        "conversion of the result to NumPy (which waits for the device), with the fastest and the slowest "
        "call in brackets; the warm-up call, which traces, is not timed. Before/after is the ratio of the "
        "medians, in brackets its bounds over the calls (before's fastest over after's slowest, before's "
        "slowest over after's fastest): where they straddle 1.00x the difference is within the noise. "
        "Ratios are measurements on the device named above, not guarantees. "
        "Traces: how many times `tf.function`s were traced over all calls, wherever they were made "
        "(module level, inside `main`, methods, Keras's `fit`/`predict`); `-` for a file that made or "
        "called none, `n/a` when neither did.",
        "",
    ]
    return "\n".join(lines)


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tflint_gpu.verify",
                                     description="Run every rule's before/after example under TensorFlow.")
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return run(args)
