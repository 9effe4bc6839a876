"""Score tflint-gpu's upgrade findings against the upgrade set's labels (labels.csv).

For each project in projects.csv, checked out under --projects (``<owner>+<name>``), the tool runs
as a user would before upgrading: ``tflint-gpu upgrade --format json`` (the breakages an upgrade to
the newest TF / Keras 3 would meet) and ``check --target-version latest --select ALL --format json``
(every finding). A label is found when a finding of a migration or optimizer rule (TFG9xx, TFG102,
TFG602, TFG603) stands on its file within ``--slack`` lines. Prints recall per project and kind, the
findings no label names (to be read), and the upgrade report's counts.

    python benchmarks/upgrade/score.py --projects /work/upgrade [--tool-path /work/main] [--unmatched F]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
CODES = ("TFG9", "TFG102", "TFG602", "TFG603")


def _tool(tool_path: str) -> List[str]:
    return [sys.executable, "-m", "tflint_gpu"] if tool_path else ["tflint-gpu"]


def _env(tool_path: str) -> Dict[str, str]:
    env = dict(os.environ)
    if tool_path:
        env["PYTHONPATH"] = os.path.abspath(tool_path) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def findings(tool: List[str], env: Dict[str, str], root: Path) -> List[dict]:
    help_text = subprocess.run(tool + ["check", "--help"], cwd=root, capture_output=True, text=True, env=env).stdout
    target = ["--target-version", "latest"] if "--target-version" in help_text else []  # an older tool has none
    done = subprocess.run(tool + ["check", "."] + target + ["--select", "ALL", "--format", "json",
                                                            "--exit-zero", "--no-cache", "--quiet"],
                          cwd=root, capture_output=True, text=True, env=env)
    return json.loads(ran(done, tool, root).stdout or "[]")


def ran(done: "subprocess.CompletedProcess", tool: List[str], root: Path) -> "subprocess.CompletedProcess":
    """The tool's run, or SystemExit naming why it did not run (a tool that cannot start would score 0)."""
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(tool)} failed in {root} (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    return done


def upgrade(tool: List[str], env: Dict[str, str], root: Path) -> dict:
    done = subprocess.run(tool + ["upgrade", ".", "--format", "json", "--no-cache"], cwd=root,
                          capture_output=True, text=True, env=env)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {"error": done.stderr.strip()[-300:]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", required=True, help="folder holding <owner>+<name> checkouts")
    parser.add_argument("--tool-path", default="", help="run the tool from this source tree")
    parser.add_argument("--slack", type=int, default=1)
    parser.add_argument("--unmatched", help="write the findings no label names here")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    tool, env = _tool(args.tool_path), _env(args.tool_path)
    with (HERE / "labels.csv").open(newline="", encoding="utf-8") as handle:
        labels = list(csv.DictReader(handle))
    by_repo: Dict[str, List[dict]] = defaultdict(list)
    for label in labels:
        by_repo[label["repo"]].append(label)
    found_by_kind: Counter = Counter()
    labels_by_kind: Counter = Counter()
    unmatched: List[str] = []
    report = {}
    for repo, rows in sorted(by_repo.items()):
        root = Path(args.projects) / repo.replace("/", "+")
        results = findings(tool, env, root)
        relevant = [f for f in results if f["code"].startswith(CODES)]
        used = set()
        hits = 0
        for label in rows:
            labels_by_kind[label["kind"]] += 1
            line = int(label["line"])
            match = next((i for i, f in enumerate(relevant) if i not in used
                          and os.path.normpath(f["filename"]).endswith(os.path.normpath(label["path"]))
                          and abs(f["location"]["row"] - line) <= args.slack), None)
            if match is not None:
                used.add(match)
                hits += 1
                found_by_kind[label["kind"]] += 1
        for i, f in enumerate(relevant):
            if i not in used:
                unmatched.append(f"{repo},{f['filename']},{f['location']['row']},{f['code']},{f['message']}")
        summary = upgrade(tool, env, root)
        if not isinstance(summary, dict) or "error" in summary:
            upgrade_counts = None  # an older tool has no upgrade report
        else:
            upgrade_counts = {k: summary.get(k) for k in ("total", "safe_fixes", "unsafe_fixes", "by_hand",
                                                          "fixable_share")}
        report[repo] = {"labels": len(rows), "found": hits, "findings": len(relevant),
                        "unmatched": len(relevant) - len(used), "upgrade": upgrade_counts}
        print(f"{repo}: {hits}/{len(rows)} labels found; {len(relevant)} findings, {len(relevant) - len(used)} "
              f"name no label; upgrade report: {upgrade_counts}")
    total = sum(labels_by_kind.values())
    print(f"\nall: {sum(found_by_kind.values())}/{total} labels found")
    for kind, count in labels_by_kind.most_common():
        print(f"  {kind:20} {found_by_kind[kind]}/{count}")
    if args.unmatched:
        Path(args.unmatched).write_text("\n".join(unmatched) + "\n", encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps({"projects": report, "kinds": {k: [found_by_kind[k], v] for k, v in
                                                                             labels_by_kind.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
