"""Score a tflint-gpu run against the labelled real-code set.

The labels (``labels.csv``) were written by reading public TF2/Keras files
line by line, before the tool ran on them; ``files.csv`` lists every file read
in full (with or without pitfalls). Neither holds any of their code: fetch
each repository at the commit given and point ``--repos`` at the folder
holding the checkouts, one per repository, named ``owner+name``.

    python benchmarks/realcode/score.py --repos /path/to/checkouts
    python benchmarks/realcode/score.py --repos ... --tool-path /old/checkout   # another version of the tool

For each repository the tool runs once on the whole checkout (so it sees the
project around each file), with the default rules and with ``--select ALL``;
only findings in the files read count. A label is found when a finding of a
rule for its kind lies on its line (a notebook: in its code cell), give or
take ``--slack`` lines (a pitfall spans a statement; the tool and the reader
may name different lines of it). Each finding and each label is matched once.

Recall: labels found / labels, over all labels and over the labels of kinds
some rule covers. Precision per rule: matched findings / findings; findings
no label names are listed (``--unmatched``) to be read, and the verdicts of
that reading (``adjudicated.csv``: a finding's repo, path, cell, line, code,
verdict true|false, note) give the adjudicated precision: (matched + true) /
findings. Verdicts never become labels: recall stays measured against what
was written down before the run.

Labels of kind ``other`` named no kind when they were written. ``other_kinds.csv``
beside the labels names one for each, read from the label's own note (not from
any finding), so a rule built later for that kind can be scored on it. Recall is
also given per effect (wrong results, crashes, slowness, cosmetic).
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
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent

# Kinds named after no single rule, and the rules that report them.
OTHER_KINDS: Dict[str, Tuple[str, ...]] = {
    "keras3-removed-import": ("TFG9",),
    # Keras 3 breakage the graph rules report: a variable tested as a bool, a tensor `training` (TFG102);
    # and the TF 2.11+ optimizers' (shared by Keras 3): one optimizer for two models (TFG602), a
    # schedule's int64 step (TFG603).
    "keras3-other-breakage": ("TFG9", "TFG102", "TFG602", "TFG603"),
    "tf1-api-removed": ("TFG9",),
    # A positional argument that lands on another parameter: `tf.gather(p, i, 1)` (TFG905), Keras 3's
    # reordered signatures (`compile(opt, loss, metrics)`: TFG921), `add_weight("w", ...)` (TFG916).
    "positional-argument-trap": ("TFG905", "TFG916", "TFG921"),
    # Probabilities given to a loss that applies softmax itself (`tf.nn.*_with_logits`, `from_logits=True`).
    "softmax-with-from-logits": ("TFG606",),
    # A GAN generator's loss computed without the generator (`D(real)`, or fakes made before the tape):
    # its gradients are all None (TFG616). Other wrong targets (a wrong label for the loss) no rule reads.
    "gan-generator-loss-wrong-target": ("TFG616",),
    # A model holding BatchNormalization/dropout run with training=True in an evaluation step (TFG617).
    "eval-step-training-true": ("TFG617",),
}
# Kinds named after a rule that other rules may report too: a "removed method" such as
# `tf.losses.mean_squared_error` is a removed name to the derived table (TFG903).
ALSO: Dict[str, Tuple[str, ...]] = {
    "removed-keras-method": ("TFG9",),
    "removed-keras-argument": ("TFG9",),
    "deprecated-tf-alias": ("TFG918",),  # a deprecated argument (`from_generator(output_types=)`)
    "predict-in-loop": ("TFG407",),  # an eager `model(x)` per item, not `predict`
    # `get_scaled_loss` on a LossScaleOptimizer object: TFG902 reads it from the derived table
    # (TFG909 reports it on a model's `optimizer`, whose class cannot be read).
    "keras3-optimizer-api": ("TFG902",),
}


def rule_codes(tool: List[str], env: Dict[str, str]) -> Dict[str, str]:
    """Rule name -> code, as the tool lists them."""
    out = subprocess.run(tool + ["rules"], capture_output=True, text=True, env=env, check=True).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith("TFG"):
            table[parts[1]] = parts[0]
    return table


def codes_for(kind: str, names: Dict[str, str]) -> Tuple[str, ...]:
    if kind in names:
        return (names[kind],) + ALSO.get(kind, ())
    return OTHER_KINDS.get(kind, ())


def read_csv(path: Path) -> List[dict]:
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def run_tool(tool: List[str], env: Dict[str, str], root: Path, select_all: bool) -> List[dict]:
    command = tool + ["check", ".", "--format", "json", "--exit-zero", "--no-cache", "--quiet"]
    if select_all:
        command += ["--select", "ALL"]
    # The labels name what breaks under the newest TF (Keras 3), whatever a project pins: a tool
    # that reads the project's target (migration rules silent for TF 2.15 pins) is told so.
    help_text = subprocess.run(tool + ["check", "--help"], capture_output=True, text=True, env=env).stdout
    if "--target-version" in help_text:
        command += ["--target-version", "latest"]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env)
    errors = [line for line in done.stderr.splitlines() if line.startswith("tflint-gpu: error:")]
    if errors:
        sys.stderr.write(f"{root.name}: {len(errors)} file(s) or cell(s) the tool could not read\n")
    try:
        return json.loads(done.stdout or "[]")
    except json.JSONDecodeError:
        sys.stderr.write(f"{root}: no JSON output\n{done.stderr}\n")
        return []


def key(path: str, cell) -> Tuple[str, int]:
    return path, int(cell) if cell not in (None, "") else 0


def match(labels: List[dict], findings: List[dict], names: Dict[str, str], slack: int):
    """Pairs (label index, finding index), nearest lines first."""
    candidates = []
    for i, label in enumerate(labels):
        codes = codes_for(label["kind"], names)
        for j, finding in enumerate(findings):
            if key(label["path"], label["cell"]) != finding["_where"]:
                continue
            if not any(finding["code"].startswith(code) for code in codes):
                continue
            distance = abs(int(label["line"]) - finding["location"]["row"])
            if distance <= slack:
                candidates.append((distance, i, j))
    used_labels, used_findings, pairs = set(), set(), []
    for _, i, j in sorted(candidates):
        if i not in used_labels and j not in used_findings:
            used_labels.add(i)
            used_findings.add(j)
            pairs.append((i, j))
    return pairs


def with_kinds(labels: List[dict], kinds: List[dict]) -> List[dict]:
    """The labels, those of kind ``other`` given the kind their note names (``other_kinds.csv``)."""
    named = {(row["repo"], row["path"], row["cell"] or "", row["line"]): row["kind"] for row in kinds}
    out = []
    for label in labels:
        kind = named.get((label["repo"], label["path"], label["cell"] or "", label["line"]))
        out.append(dict(label, kind=kind) if label["kind"] == "other" and kind else label)
    return out


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", required=True, type=Path, help="folder of checkouts named owner+name")
    parser.add_argument("--labels", type=Path, default=HERE / "labels.csv")
    parser.add_argument("--files", type=Path, default=HERE / "files.csv")
    parser.add_argument("--adjudicated", type=Path, default=HERE / "adjudicated.csv")
    parser.add_argument("--kinds", type=Path,
                        help="kinds for the labels of kind other (default: other_kinds.csv beside the labels)")
    parser.add_argument("--tool-path", type=Path, help="run the tool from this source tree (PYTHONPATH)")
    parser.add_argument("--slack", type=int, default=2)
    parser.add_argument("--unmatched", type=Path, help="write findings no label names to this CSV")
    parser.add_argument("--missed", type=Path, help="write the labels no finding names (all rules) to this CSV")
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    args = parser.parse_args(argv)

    env = dict(os.environ)
    if args.tool_path:
        env["PYTHONPATH"] = str(args.tool_path.resolve())
    tool = [sys.executable, "-m", "tflint_gpu"]
    names = rule_codes(tool, env)
    labels = with_kinds(read_csv(args.labels), read_csv(args.kinds or args.labels.parent / "other_kinds.csv"))
    files = read_csv(args.files)
    verdicts = {(v["repo"], v["path"], v["cell"] or "", int(v["line"]), v["code"]): v["verdict"]
                for v in read_csv(args.adjudicated)}
    read = defaultdict(set)
    for row in files:
        path, _, cell = row["path"].partition("#")
        read[row["repo"]].add(path)
    results = {}
    unmatched_rows = []
    for selection in ("default", "all"):
        found_labels = []
        per_code = defaultdict(Counter)
        for repo in sorted(read):
            root = args.repos / repo.replace("/", "+")
            if not root.is_dir():
                sys.stderr.write(f"{root}: missing checkout; its labels count as not found\n")
                findings = []
            else:
                findings = run_tool(tool, env, root, selection == "all")
            kept = []
            for finding in findings:
                rel = os.path.relpath(os.path.join(root, finding["filename"]), root).replace(os.sep, "/")
                if rel in read[repo]:
                    finding["_rel"] = rel
                    finding["_where"] = key(rel, finding.get("cell"))
                    kept.append(finding)
            repo_labels = [label for label in labels if label["repo"] == repo]
            pairs = match(repo_labels, kept, names, args.slack)
            matched_findings = {j for _, j in pairs}
            found_labels.extend(repo_labels[i] for i, _ in pairs)
            for j, finding in enumerate(kept):
                code = finding["code"]
                per_code[code]["findings"] += 1
                if j in matched_findings:
                    per_code[code]["matched"] += 1
                    continue
                verdict = verdicts.get((repo, finding["_rel"], str(finding.get("cell") or ""),
                                        finding["location"]["row"], code))
                per_code[code][verdict or "unread"] += 1
                if selection == "all":
                    unmatched_rows.append({"repo": repo, "path": finding["_rel"], "cell": finding.get("cell") or "",
                                           "line": finding["location"]["row"], "code": code,
                                           "verdict": verdict or "", "message": finding["message"]})
        if selection == "all":
            missed_rows = [label for label in labels if not any(label is found for found in found_labels)]
        covered = [label for label in labels if codes_for(label["kind"], names)]
        by_kind = Counter(label["kind"] for label in labels)
        found_by_kind = Counter(label["kind"] for label in found_labels)
        results[selection] = {
            "labels": len(labels),
            "found": len(found_labels),
            "recall_all": len(found_labels) / len(labels) if labels else 0.0,
            "covered_labels": len(covered),
            "recall_covered": (sum(1 for label in found_labels if codes_for(label["kind"], names)) / len(covered)
                               if covered else 0.0),
            "by_kind": {kind: [found_by_kind[kind], count] for kind, count in by_kind.most_common()},
            "by_effect": {effect: [sum(1 for label in found_labels if label["effect"] == effect), count]
                          for effect, count in Counter(label["effect"] for label in labels).most_common()},
            "per_code": {code: dict(counts) for code, counts in sorted(per_code.items())},
        }
    print(f"{len(labels)} labels in {sum(len(v) for v in read.values())} files of {len(read)} repositories")
    for selection, figures in results.items():
        print(f"\n{selection} rules: found {figures['found']}/{figures['labels']} "
              f"(recall {figures['recall_all']:.0%}); of the {figures['covered_labels']} labels a rule covers, "
              f"{figures['recall_covered']:.0%}")
        print("  by effect: " + ", ".join(f"{effect} {found}/{count}"
                                           for effect, (found, count) in figures["by_effect"].items()))
        print(f"  {'kind':42} found/labels")
        for kind, (found, count) in figures["by_kind"].items():
            covered = "" if codes_for(kind, names) else "   (no rule)"
            print(f"  {kind:42} {found}/{count}{covered}")
        print(f"  {'rule':8} findings matched true false unread  precision strict / adjudicated")
        for code, counts in figures["per_code"].items():
            total, matched, true = counts["findings"], counts.get("matched", 0), counts.get("true", 0)
            print(f"  {code:8} {total:8} {matched:7} {true:4} {counts.get('false', 0):5} {counts.get('unread', 0):6}"
                  f"  {matched / total:9.0%} / {(matched + true) / total:.0%}")
    if args.unmatched:
        with args.unmatched.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, ["repo", "path", "cell", "line", "code", "verdict", "message"])
            writer.writeheader()
            writer.writerows(unmatched_rows)
    if args.missed:
        with args.missed.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, list(labels[0]) if labels else ["repo"])
            writer.writeheader()
            writer.writerows(missed_rows)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
