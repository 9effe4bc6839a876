"""``tflint-gpu upgrade PATH...``: what an upgrade to TF 2.16+ / Keras 3 would break.

Runs the migration rules (``Rule.migration``) with the target set to a Keras 3
one (``latest`` unless ``--target-version`` names another), whatever the
project pins now, and reports: the target each project has now and why (the
pins to change), the findings per rule, the share safe fixes rewrite, the
files to touch, and the command that applies those fixes; ``--fix`` applies them
(``--unsafe-fixes`` adds the unsafe ones) and reports what is left by hand. It
also names the path that needs no code change (``tf_keras`` with
``TF_USE_LEGACY_KERAS=1``). The configuration's
``select``/``ignore`` do not hide a breakage here (a project that turned a
migration rule off still learns what the upgrade breaks); its per-file
ignores and ``# noqa`` comments still apply.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import sys
from typing import Dict, List, Optional, Sequence

from tflint_gpu import config
from tflint_gpu.engine import run as runner
from tflint_gpu.files import discover
from tflint_gpu.findings import Finding, Safety
from tflint_gpu.rules.base import all_rules


def migration_rules(select: Sequence[str] = ()) -> tuple:
    """The migration rules, narrowed to the ``select`` prefixes if any."""
    rules = [r for r in all_rules() if getattr(r, "migration", False)]
    if not select:
        return tuple(rules)
    prefixes = config._selectors(list(select), "--select") or []
    chosen = tuple(r for r in rules if any(config._prefix_matches(p, r.code) for p in prefixes))
    if not chosen:
        raise config.ConfigError(f"--select: no migration rule matches {', '.join(prefixes)} "
                                 f"(migration rules: {', '.join(r.code for r in rules)})")
    return chosen


def main(args: argparse.Namespace) -> int:
    """The ``upgrade`` command (``args`` from ``cli``'s parser)."""
    from tflint_gpu.cli import by_settings, prepare_targets, run_by_settings

    paths: List[str] = args.paths or ["."]
    if "-" in paths:
        raise config.ConfigError("upgrade: stdin (`-`) is not supported; name the files or folders")
    overrides = config.Overrides(config=args.config, exclude=args.exclude, extend_exclude=args.extend_exclude,
                                 extend_include=args.extend_include, cache_dir=args.cache_dir)
    resolver = config.Resolver(overrides)  # each file's settings: the targets the projects have now
    destination = config.target_setting(args.target_version, "--target-version", "--target-version")
    if not destination.keras3:
        raise config.ConfigError(f"--target-version: `{args.target_version}` keeps Keras 2; upgrade reports what "
                                 f"Keras 3 breaks (use tf2.16 or later, or latest)")
    # Keras 3 everywhere: a file's own TF_USE_LEGACY_KERAS is one more pin to change, not a reason for silence.
    destination = dataclasses.replace(destination, file_settings=False)
    rules = migration_rules(args.select or ())
    origins: Dict[str, str] = {}
    files, missing = discover(paths, resolver, args.force_exclude, origins)
    errors = [f"{path}: no such file or directory" for path in missing]
    for settings, group in by_settings(resolver, files):
        prepare_targets(settings, group)
    fix, unsafe = args.fix, args.unsafe_fixes
    mode = runner.FIX if fix else runner.CHECK
    results = run_by_settings(resolver, files, origins, mode, jobs=max(1, args.jobs), no_cache=args.no_cache,
                              adapt=lambda s: dataclasses.replace(s, rules=rules, target_version=destination,
                                                                  unsafe_fixes=unsafe, _targets={}))
    now = _Now(resolver)
    errors.extend(r.error for r in results if r.error)
    findings = sorted((f for r in results for f in r.findings), key=lambda f: f.sort_key())
    report = build_report(findings, files, now, destination, paths, errors, select=args.select or (),
                          fixed=sum(r.fixed for r in results) if fix else None, unsafe_applied=fix and unsafe)
    if args.format == "json":
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(report))
    for error in errors:
        print(f"tflint-gpu: error: {error}", file=sys.stderr)
    if errors:
        return 2
    return 1 if findings and not args.exit_zero else 0


class _Now:
    """The targets each file has now, from its own settings (``build_report`` asks ``target_for``
    and ``target_folder``)."""

    def __init__(self, resolver: config.Resolver) -> None:
        self.resolver = resolver

    def target_for(self, path: str):
        return self.resolver.settings_for(path).target_for(path)

    def target_folder(self, path: str):
        return self.resolver.settings_for(path).target_folder(path)


# Keras's own advice for TF 2.16+ code that stays on Keras 2 (keras.io/getting_started: "Using Keras 2").
KERAS2_PATH = ("Pin tf_keras to TensorFlow's version (tf_keras~=2.X.0 beside tensorflow==2.X) and give the "
               "program the environment variable TF_USE_LEGACY_KERAS=1 before TensorFlow is imported; the Keras 3 "
               "breakages then do not apply (NumPy 2 and tensorflow-addons ones still do).")


def _fixable(finding: Finding, safety: Safety) -> bool:
    return finding.fix is not None and finding.fix.safety is safety


def build_report(findings: Sequence[Finding], files: Sequence[str], now: config.Settings, destination,
                 paths: Sequence[str], errors: Sequence[str] = (), select: Sequence[str] = (),
                 fixed: Optional[int] = None, unsafe_applied: bool = False) -> Dict:
    """The upgrade report as data (the JSON output; the text is made from it). ``fixed``: the number
    of fixes ``--fix`` applied (None: nothing was fixed, ``findings`` are what would break); after a
    fix, ``findings`` are what is left."""
    current: Dict[str, Dict] = {}
    for path in files:
        target = now.target_for(path)
        key = now.target_folder(path) or ""
        entry = current.setdefault(key, {"folder": key or None, "target-version": target.spelling,
                                         "target": target.describe(), "source": target.source,
                                         "why": list(target.why), "files": 0,
                                         "keras2": not target.keras3})
        entry["files"] += 1
    rules: Dict[str, Dict] = {}
    by_file: Dict[str, Dict] = {}
    for finding in findings:
        rule = rules.setdefault(finding.code, {"code": finding.code, "name": finding.name, "count": 0,
                                               "safe_fixes": 0, "unsafe_fixes": 0})
        entry = by_file.setdefault(finding.path, {"path": os.path.normpath(finding.path), "count": 0, "safe_fixes": 0,
                                                  "unsafe_fixes": 0, "codes": []})
        for item in (rule, entry):
            item["count"] += 1
            item["safe_fixes"] += _fixable(finding, Safety.SAFE)
            item["unsafe_fixes"] += _fixable(finding, Safety.UNSAFE)
        if finding.code not in entry["codes"]:
            entry["codes"].append(finding.code)
    total = len(findings)
    safe = sum(_fixable(f, Safety.SAFE) for f in findings)
    unsafe = sum(_fixable(f, Safety.UNSAFE) for f in findings)
    command = unsafe_command = None
    # The commands that apply them: only ones that would change something.
    base = ["tflint-gpu", "upgrade", "--fix"]
    if destination.spelling != "latest":
        base += ["--target-version", destination.spelling]
    for selected in select:
        base += ["--select", selected]
    where = [shlex.quote(p) for p in paths]
    if safe:
        command = " ".join(base + where)
    if unsafe:
        unsafe_command = " ".join(base + ["--unsafe-fixes"] + where)
    return {
        "to": {"target-version": destination.spelling, "target": destination.describe()},
        "from": sorted(current.values(), key=lambda e: e["folder"] or ""),
        # What says Keras 2 now: the project's pins, or a target-version setting.
        "pins": sorted({w for e in current.values() if e["keras2"] and e["source"] != "default" for w in e["why"]}),
        "total": total,
        "safe_fixes": safe,
        "unsafe_fixes": unsafe,
        "by_hand": total - safe,
        "fixable_share": round(safe / total, 3) if total else None,
        "rules": sorted(rules.values(), key=lambda r: (-r["count"], r["code"])),
        "files": sorted(by_file.values(), key=lambda e: (-e["count"], e["path"])),
        "checked_files": len(files),
        "command": command,
        "unsafe_command": unsafe_command,
        "fixed": fixed,
        "unsafe_fixes_applied": bool(unsafe_applied),
        "keras2": KERAS2_PATH,
        "errors": list(errors),
    }


def render_text(report: Dict) -> str:
    to = report["to"]
    out = [f"Upgrade to {to['target-version']} ({to['target']})"]
    for entry in report["from"]:
        where = f" in {entry['folder']}" if entry["folder"] and len(report["from"]) > 1 else ""
        out.append(f"  now{where}: {entry['target-version']} ({entry['target']}), {entry['files']} "
                   f"file{'s' if entry['files'] != 1 else ''}: {'; '.join(entry['why'])}")
    total = report["total"]
    fixed = report.get("fixed")
    if fixed is not None:
        kind = "safe and unsafe" if report.get("unsafe_fixes_applied") else "safe"
        out.append(f"Fixed {fixed} breakage{'s' if fixed != 1 else ''} ({kind} fixes).")
    if not total:
        left = "is left that " if fixed is not None else ""
        out.append(f"Nothing {left}the migration rules know of would break "
                   f"({report['checked_files']} file{'s' if report['checked_files'] != 1 else ''} checked).")
        if report["pins"]:
            out.append("Pins to change: " + "; ".join(report["pins"]))
        return "\n".join(out) + "\n"
    out.append("")
    out.append("Left to fix, by rule:" if fixed is not None else "Breakages by rule:")
    width = max(len(str(r["count"])) for r in report["rules"])
    name_width = max(len(r["name"]) for r in report["rules"])
    for rule in report["rules"]:
        fixes = f"{rule['safe_fixes']} safe fix{'es' if rule['safe_fixes'] != 1 else ''}"
        if rule["unsafe_fixes"]:
            fixes += f", {rule['unsafe_fixes']} unsafe"
        out.append(f"  {rule['count']:>{width}}  {rule['code']}  {rule['name']:<{name_width}}  {fixes}")
    files = report["files"]
    share = f"{100 * report['safe_fixes'] / total:.0f}%"
    unsafe = f" ({report['unsafe_fixes']} of them with an unsafe fix)" if report["unsafe_fixes"] else ""
    out.append(f"{total} breakage{'s' if total != 1 else ''} in {len(files)} file{'s' if len(files) != 1 else ''}"
               f" ({report['checked_files']} checked); {report['safe_fixes']} fixable by safe fixes ({share}), "
               f"{report['by_hand']} by hand" + unsafe + ".")
    out.append("")
    out.append("Files to touch:")
    path_width = max(len(f["path"]) for f in files)
    for entry in files:
        out.append(f"  {entry['path']:<{path_width}}  {entry['count']:>{width}}  ({entry['safe_fixes']} fixable; "
                   f"{', '.join(entry['codes'])})")
    if report["pins"]:
        out.append("Pins to change: " + "; ".join(report["pins"]))
    out.append("")
    if report["command"]:
        out.append(f"Apply the safe fixes: {report['command']}")
    elif fixed is None:
        also = ", or by the unsafe fixes" if report["unsafe_command"] else ""
        out.append(f"No safe fixes: what is listed is fixed by hand{also}.")
    if report["unsafe_command"]:
        out.append(f"With the unsafe fixes too (read the diff): {report['unsafe_command']}")
    out.append(f"Not moving to Keras 3 yet? {report['keras2']}")
    return "\n".join(out) + "\n"
