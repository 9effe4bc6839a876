"""The upgrade set end to end, one command: per project, the breaking lines found / fixed / left by
hand, and whether its driver runs under Keras 3 after ``tflint-gpu upgrade --fix``.

For each project of projects.csv (``--only`` to narrow):

1. the original is unpacked at its commit into WORK/orig/<owner>+<name> (from ``--mirror``, where the
   ``fetch`` tool puts repositories; an existing folder is used as it is);
2. found: labels (labels.csv) a migration finding stands on (score.py's matching);
3. a copy, WORK/fixed/<owner>+<name> (a git repository), gets ``tflint-gpu upgrade --fix``
   (``--unsafe-fixes`` too with ``--unsafe-fixes``); fixed: labels whose line the fixes rewrote (in a
   notebook: whose finding the fixes removed);
4. the driver (drivers/, ``RUNS`` below) runs the original under tf_keras (``--legacy``: the Keras 2
   baseline), the original under Keras 3, and the fixed copy under Keras 3; each run records
   ``DRIVER: OK`` or its first crash (the innermost frame in the project), and the losses of each
   ``fit`` from the same initial weights (drivers/_run.py): the loss of the first batch in
   inference mode at those weights, and the losses fit logs.

    python benchmarks/upgrade/run.py --work /tmp/upgrade [--python PY] [--tool-path TREE]
        [--unsafe-fixes] [--only REPO,...] [--no-drivers] [--json FILE]

``--python``: the interpreter for the drivers (they need TensorFlow, tf_keras and what each
project imports; README.md says which). The tool runs from ``--tool-path`` (a source tree) or as
installed. Nothing here is timed; the figures go to stdout (a Markdown table) and ``--json``.
"""
from __future__ import annotations

import argparse
import ast
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Set

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import score  # noqa: E402  (the label matching and the tool's command line)

# repo -> the driver runs (driver file, extra arguments); a project's runs all must pass.
RUNS: Dict[str, List[List[str]]] = {
    "emla2805/vision-transformer": [["vit.py"]],
    "beresandras/contrastive-classification-keras": [["contrastive.py", "--algorithms", "SimCLR"]],
    "bubbliiiing/unet-tf2": [["unet.py"]],
    "calmisential/TensorFlow2.0_ResNet": [["resnet.py"]],
    "zzh8829/yolov3-tf2": [["yolov3.py"]],
    "MorvanZhou/NLP-Tutorials": [["nlp_tutorials.py"]],
}
# The optimizers of their TF pins (2.2, 2.5): tf.keras.optimizers.Adam took lr= before TF 2.11.
LEGACY_EXTRA = {"bubbliiiing/unet-tf2": ["--legacy-optimizers"], "zzh8829/yolov3-tf2": ["--legacy-optimizers"]}
TIMEOUT = 1200


def unpack(repo: str, commit: str, dest: Path, mirror: Path) -> None:
    if dest.exists():
        return
    key = repo.replace("/", "+")
    candidates = [p for p in (mirror / key).glob("**/HEAD") if (p.parent / "objects").is_dir()]
    if not candidates:
        raise SystemExit(f"{repo}: no git directory under {mirror / key}; fetch github:{repo} first")
    git_dir = candidates[0].parent
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", commit], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


def changed_lines(root: Path) -> Dict[str, Set[int]]:
    """Lines of the original each file's fixes rewrote (git diff -U0 against the first commit)."""
    diff = subprocess.run(["git", "-C", str(root), "diff", "-U0"], capture_output=True, text=True).stdout
    changed: Dict[str, Set[int]] = defaultdict(set)
    path = None
    for line in diff.splitlines():
        if line.startswith("--- a/"):
            path = line[6:]
        match = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
        if match and path:
            start, count = int(match.group(1)), int(match.group(2) if match.group(2) is not None else 1)
            changed[path].update(range(start, start + max(count, 1)))
    return changed


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef)


def statement_lines(path: Path, line: int) -> range:
    """The lines of the simple statement that starts at ``line`` of ``path`` (an assignment whose call
    spans three lines), or ``line`` alone (a compound statement's header, a file that does not parse)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return range(line, line + 1)
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, _COMPOUND) and node.lineno == line:
            return range(line, (node.end_lineno or line) + 1)
    return range(line, line + 1)


def where(label: dict) -> str:
    """``path:line`` of a label (``path:cell:line`` in a notebook)."""
    return f"{label['path']}:{label['cell'] + ':' if label['cell'] else ''}{label['line']}"


def _at(finding: dict, label: dict, slack: int) -> bool:
    return os.path.normpath(finding["filename"]).endswith(os.path.normpath(label["path"])) \
        and finding.get("cell") in (None, int(label["cell"]) if label["cell"] else None) \
        and abs(finding["location"]["row"] - int(label["line"])) <= slack


def matches(labels: List[dict], results: List[dict], slack: int = 1) -> List[bool]:
    relevant = [f for f in results if f["code"].startswith(score.CODES)]
    used: Set[int] = set()
    found = []
    for label in labels:
        hit = next((i for i, f in enumerate(relevant) if i not in used and _at(f, label, slack)), None)
        if hit is not None:
            used.add(hit)
        found.append(hit is not None)
    return found


def fix_offered(label: dict, results: List[dict], unsafe: bool, slack: int = 1) -> bool:
    """A migration finding on the label's line offers a fix the run applies (safe; unsafe with
    ``--unsafe-fixes``): one that may edit elsewhere (casts put first in the function)."""
    return any(f["code"].startswith(score.CODES) and _at(f, label, slack) and f.get("fix")
               and (unsafe or f["fix"]["applicability"] == "safe") for f in results)


def fix_copy(orig: Path, dest: Path, tool: List[str], env: Dict[str, str], unsafe: bool) -> str:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(orig, dest)
    git = ["git", "-C", str(dest), "-c", "user.name=run", "-c", "user.email=run@localhost"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "original"], check=True)
    command = tool + ["upgrade", "--fix", "--no-cache", "--exit-zero", "."] + (["--unsafe-fixes"] if unsafe else [])
    done = score.ran(subprocess.run(command, cwd=dest, capture_output=True, text=True, env=env), tool, dest)
    return done.stdout + done.stderr


def first_crash(output: str, project: Path) -> Optional[str]:
    """``path:line: Error: message`` of the innermost traceback frame in the project's files."""
    if "DRIVER: OK" in output:
        return None
    frames = re.findall(r'File "([^"]+)", line (\d+)', output)
    inside = [(f, n) for f, n in frames if os.path.abspath(f).startswith(str(project.resolve()) + os.sep)]
    errors = [line for line in output.splitlines() if re.match(r"^[A-Za-z_.]*(Error|Exception|Exit)\b.*", line)]
    where = f"{os.path.relpath(inside[-1][0], project)}:{inside[-1][1]}" if inside else "?"
    last = errors[-1] if errors else (output.strip().splitlines() or ["no output"])[-1]
    return f"{where}: {last[:160]}"


def _drivers_changed() -> float:
    """When a driver last changed: a log older than that is not reused (the drivers decide what a run does,
    the same initial weights among it)."""
    return max(p.stat().st_mtime for p in (HERE / "drivers").glob("*.py"))


def drive(python: str, repo: str, project: Path, work: Path, legacy: bool, label: str, reuse: bool = False) -> dict:
    """Every run of the project's driver; ok when all print DRIVER: OK. ``reuse``: read a run's log and
    losses from an earlier run with the same label where there are some (the Keras 2 baseline of an
    original that did not change: the Keras 2 baseline, Keras 3 before the fixes)."""
    outcome = {"ok": True, "crash": None, "losses": []}
    for number, run in enumerate(RUNS.get(repo, [])):
        losses = work / f"losses-{label}-{number}.jsonl"
        log = work / f"log-{label}-{number}.txt"
        if reuse and log.exists() and log.stat().st_mtime > _drivers_changed():
            output = log.read_text(encoding="utf-8")
        else:
            losses.unlink(missing_ok=True)
            folder = work / f"work-{label}-{number}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            command = [python, str(HERE / "drivers" / run[0]), str(project), str(folder)] + run[1:]
            if legacy:
                command += ["--legacy"] + LEGACY_EXTRA.get(repo, [])
            env = dict(os.environ, UPGRADE_LOSSES=str(losses), TF_CPP_MIN_LOG_LEVEL="2")
            env.pop("TF_USE_LEGACY_KERAS", None)
            try:
                done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=TIMEOUT)
                output = done.stdout + done.stderr
            except subprocess.TimeoutExpired as error:
                output = f"{error.stdout or ''}{error.stderr or ''}\nTimeoutError: over {TIMEOUT} s"
            log.write_text(output, encoding="utf-8")
        if losses.exists():
            outcome["losses"] += [json.loads(line) for line in losses.read_text().splitlines() if line.strip()]
        if "DRIVER: OK" not in output:
            outcome["ok"] = False
            outcome["crash"] = outcome["crash"] or first_crash(output, project)
    return outcome


def same_losses(before: List[dict], after: List[dict]) -> Optional[str]:
    """The initial (inference) losses of the Keras 2 and Keras 3 runs, fit by fit: 'same' (within
    1e-4 relative), 'differ' or None when neither run recorded one."""
    pairs = [(b.get("initial_loss"), a.get("initial_loss")) for b, a in zip(before, after)]
    pairs = [(b, a) for b, a in pairs if b is not None and a is not None]
    if not pairs:
        return None
    return "same" if all(abs(b - a) <= 1e-4 * max(1.0, abs(b)) for b, a in pairs) else "differ"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True, help="folder for the originals, the fixed copies and the logs")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the drivers")
    parser.add_argument("--tool-path", default="", help="run tflint-gpu from this source tree")
    parser.add_argument("--mirror", default="/work/.mirror", help="where fetched repositories are")
    parser.add_argument("--unsafe-fixes", action="store_true", help="upgrade --fix --unsafe-fixes")
    parser.add_argument("--only", default="", help="comma-separated repositories")
    parser.add_argument("--no-drivers", action="store_true", help="static figures only")
    parser.add_argument("--runs", default="keras2,keras3_before,keras3_after",
                        help="which driver runs (keras2: the baseline; keras3_before: the original under Keras 3; "
                             "keras3_after: the fixed copy under Keras 3)")
    parser.add_argument("--reuse-originals", "--reuse-keras2", dest="reuse_originals", action="store_true",
                        help="read the runs of the unchanged originals (the Keras 2 baseline and Keras 3 before the "
                             "fixes) from an earlier run in WORK where there are some newer than the drivers")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    work = Path(args.work).resolve()
    tool, env = score._tool(args.tool_path), score._env(args.tool_path)
    with (HERE / "projects.csv").open(newline="", encoding="utf-8") as handle:
        projects = list(csv.DictReader(handle))
    with (HERE / "labels.csv").open(newline="", encoding="utf-8") as handle:
        labels = list(csv.DictReader(handle))
    only = {r for r in args.only.split(",") if r}
    rows = []
    for project in projects:
        repo = project["repo"]
        if only and repo not in only:
            continue
        key = repo.replace("/", "+")
        orig = work / "orig" / key
        unpack(repo, project["commit"], orig, Path(args.mirror))
        mine = [label for label in labels if label["repo"] == repo]
        before = score.findings(tool, env, orig)
        found = matches(mine, before)
        fixed_dir = work / ("fixed-unsafe" if args.unsafe_fixes else "fixed") / key
        fix_log = fix_copy(orig, fixed_dir, tool, env, args.unsafe_fixes)
        changed = changed_lines(fixed_dir)
        after = matches(mine, score.findings(tool, env, fixed_dir))
        fixed = []
        for label, was, still in zip(mine, found, after):
            gone = was and not still and bool(changed.get(label["path"]))
            if label["cell"]:
                fixed.append(gone)
            else:
                # its line rewritten; or its finding gone, the file rewritten, and either another line of the
                # statement it starts rewritten or its finding's own fix applied (it may edit other lines)
                line, rewritten = int(label["line"]), changed.get(label["path"], set())
                span = statement_lines(orig / label["path"], line)
                fixed.append(line in rewritten or (gone and (any(n in rewritten for n in span)
                                                             or fix_offered(label, before, args.unsafe_fixes))))
        row = {"repo": repo, "labels": len(mine), "found": sum(found), "fixed": sum(fixed),
               "by_hand": len(mine) - sum(fixed), "fix_output": fix_log.strip().splitlines()[-3:],
               "missed": [f"{where(label)} {label['kind']}" for label, f in zip(mine, found) if not f],
               "fixed_lines": [f"{label['path']}:{label['line']}" for label, f in zip(mine, fixed) if f]}
        if not args.no_drivers and repo in RUNS:
            logs = work / "logs" / key
            logs.mkdir(parents=True, exist_ok=True)
            wanted = set(args.runs.split(","))
            for name, folder, legacy in (("keras2", orig, True), ("keras3_before", orig, False),
                                         ("keras3_after", fixed_dir, False)):
                if name in wanted:
                    row[name] = drive(args.python, repo, folder, logs, legacy, name.replace("_", "-"),
                                      reuse=args.reuse_originals and folder == orig)
            if "keras2" in row and "keras3_after" in row:
                row["losses"] = same_losses(row["keras2"]["losses"], row["keras3_after"]["losses"])
        rows.append(row)
        print(f"{repo}: {row['found']}/{row['labels']} found, {row['fixed']} fixed", file=sys.stderr, flush=True)
    print(table(rows, args.unsafe_fixes))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


def _run_cell(outcome: Optional[dict]) -> str:
    if outcome is None:
        return "-"
    return "runs" if outcome["ok"] else f"fails ({outcome['crash']})"


def table(rows: List[dict], unsafe: bool) -> str:
    fix = "upgrade --fix" + (" --unsafe-fixes" if unsafe else "")
    out = [f"| project | breaking lines | found | fixed by `{fix}` | by hand | Keras 2 baseline | "
           f"Keras 3, original | Keras 3, after the fixes | same initial loss |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['repo']} | {r['labels']} | {r['found']} | {r['fixed']} | {r['by_hand']} | "
                   f"{_run_cell(r.get('keras2'))} | {_run_cell(r.get('keras3_before'))} | "
                   f"{_run_cell(r.get('keras3_after'))} | {r.get('losses') or '-'} |")
    labels = sum(r["labels"] for r in rows)
    found = sum(r["found"] for r in rows)
    fixed = sum(r["fixed"] for r in rows)
    failing = [r for r in rows if not (r.get("keras3_before") or {"ok": False})["ok"]]
    now_run = [r for r in failing if (r.get("keras3_after") or {}).get("ok")]
    out.append(f"| **all** | **{labels}** | **{found} ({100 * found / max(labels, 1):.0f}%)** | "
               f"**{fixed} ({100 * fixed / max(labels, 1):.0f}%)** | **{labels - fixed}** | | "
               f"{len(failing)} fail | {len(now_run)} of {len(failing)} now run | |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
