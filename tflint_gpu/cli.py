"""The command line: ``tflint-gpu [check] PATH...``, ``rule CODE``, ``rules``, ``verify``.

Exit codes: 0 no findings remain, 1 findings remain (or ``--diff`` has
changes to show), 2 a usage or configuration error, or a file that could not
be read or parsed (the other files are still checked).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import List, Optional, Sequence

import tflint_gpu
from tflint_gpu import config
from tflint_gpu.engine import run
from tflint_gpu.files import discover
from tflint_gpu.notebook import is_notebook
from tflint_gpu.report import FORMATS, STATISTICS, render
from tflint_gpu.report import text as text_report
from tflint_gpu.rules.base import REGISTRY, all_rules
from tflint_gpu.verify import command as verify_command
from tflint_gpu.verify.harness import default_examples_dir

COMMANDS = ("check", "rule", "rules", "verify", "upgrade", "server")


def _check_parser(sub) -> None:
    p = sub.add_parser("check", help="check files (the default command)", description="Check files for findings.")
    p.add_argument("paths", nargs="*", default=None, help="files or directories (default: .); - reads stdin")
    p.add_argument("--fix", action="store_true", default=None, help="apply safe fixes")
    p.add_argument("--no-fix", dest="fix", action="store_false", help="do not fix (overrides `fix = true`)")
    p.add_argument("--unsafe-fixes", action="store_true", default=None, help="also apply and show unsafe fixes")
    p.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false")
    p.add_argument("--diff", action="store_true", help="show the fixes as a diff; write nothing")
    p.add_argument("--select", action="append", metavar="CODES", help="rule code prefixes, comma-separated, or ALL")
    p.add_argument("--extend-select", action="append", metavar="CODES", help="add to the selection")
    p.add_argument("--ignore", action="append", metavar="CODES", help="rule code prefixes to leave out")
    p.add_argument("--per-file-ignores", action="append", metavar="GLOB:CODES", help="e.g. 'tests/*:TFG2'")
    p.add_argument("--exclude", action="append", metavar="PATTERNS", help="replace the default excludes")
    p.add_argument("--extend-exclude", action="append", metavar="PATTERNS", help="add to the excludes")
    p.add_argument("--extend-include", action="append", metavar="PATTERNS",
                   help="also check these files in directories (default: *.py, *.ipynb)")
    p.add_argument("--force-exclude", action="store_true", help="apply excludes to files named explicitly too")
    p.add_argument("--format", "--output-format", dest="format", choices=sorted(FORMATS), default="text")
    p.add_argument("--statistics", action="store_true", help="count findings by rule")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)")
    p.add_argument("--config", metavar="FILE", help="pyproject.toml (or tflint-gpu.toml) to use")
    p.add_argument("--stdin-filename", metavar="PATH", help="the name of the file read from stdin")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    p.add_argument("--cache-dir", metavar="DIR", help="where the cache lives (default: .tflint_gpu_cache)")
    p.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
    p.add_argument("--target-version", metavar="TARGET",
                   help="the TensorFlow/Keras the code runs under: tf2.15 (Keras 2), tf2.16 (Keras 3), "
                        "tf2.16-keras2 (tf_keras), latest (default: read from the project's pins)")
    p.add_argument("--show-settings", action="store_true",
                   help="print the settings used for each path (target and why, rules) and exit")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tflint-gpu",
        description="Find and fix TensorFlow 2 code that keeps the GPU idle.",
        epilog="`tflint-gpu PATH` is short for `tflint-gpu check PATH`.",
    )
    parser.add_argument("--version", action="version", version=f"tflint-gpu {tflint_gpu.__version__}")
    sub = parser.add_subparsers(dest="command")
    _check_parser(sub)
    p = sub.add_parser("rule", help="explain a rule")
    p.add_argument("code")
    p = sub.add_parser("rules", help="list the rules")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p = sub.add_parser("verify", help="run each rule's before/after examples under TensorFlow")
    verify_command.add_arguments(p)
    _upgrade_parser(sub)
    sub.add_parser("server", help="run the language server (LSP over stdio)",
                   description="Run the language server over stdio: diagnostics, quick fixes, fix all, "
                               "noqa and hovers for editors (needs the `server` extra: "
                               "pip install 'tflint-gpu[server]').")
    return parser


def _upgrade_parser(sub) -> None:
    p = sub.add_parser("upgrade", help="what an upgrade to TF 2.16+ / Keras 3 would break",
                       description="Report what an upgrade to TF 2.16+ / Keras 3 would break: the findings of "
                                   "the migration rules by rule and by file, the share safe fixes rewrite, "
                                   "and the command that applies them. Exit 1 when something would break.")
    p.add_argument("paths", nargs="*", default=None, help="files or directories (default: .)")
    p.add_argument("--target-version", metavar="TARGET", default="latest",
                   help="the target to upgrade to (a Keras 3 one; default: latest)")
    p.add_argument("--select", action="append", metavar="CODES",
                   help="only these migration rules (default: every migration rule)")
    p.add_argument("--format", "--output-format", dest="format", choices=("text", "json"), default="text")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when something would break")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)")
    p.add_argument("--config", metavar="FILE", help="pyproject.toml (or tflint-gpu.toml) to use")
    p.add_argument("--exclude", action="append", metavar="PATTERNS", help="replace the default excludes")
    p.add_argument("--extend-exclude", action="append", metavar="PATTERNS", help="add to the excludes")
    p.add_argument("--extend-include", action="append", metavar="PATTERNS", help="also check these files")
    p.add_argument("--force-exclude", action="store_true", help="apply excludes to files named explicitly too")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    p.add_argument("--cache-dir", metavar="DIR", help="where the cache lives (default: .tflint_gpu_cache)")


def main(argv: Optional[Sequence[str]] = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or (args_list[0] not in COMMANDS and args_list[0] not in ("-h", "--help", "--version")):
        args_list.insert(0, "check")
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exit_:
        return 2 if exit_.code not in (0, None) else 0
    try:
        if args.command == "rule":
            return _rule(args.code)
        if args.command == "rules":
            return _rules(args.format)
        if args.command == "verify":
            return verify_command.run(args)
        if args.command == "server":
            return _server()
        if args.command == "upgrade":
            from tflint_gpu import upgrade

            return upgrade.main(args)
        return _check(args)
    except config.ConfigError as error:
        print(f"tflint-gpu: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0


def _server() -> int:
    try:
        from tflint_gpu import server
    except ImportError as error:
        print(f"tflint-gpu: error: the language server needs pygls ({error}); "
              f"install it with: pip install 'tflint-gpu[server]'", file=sys.stderr)
        return 2
    return server.main()


def _check(args: argparse.Namespace) -> int:
    paths: List[str] = args.paths or ["."]
    stdin = paths == ["-"]
    if "-" in paths and not stdin:
        raise config.ConfigError("`-` (stdin) cannot be combined with other paths")
    if args.statistics and args.format not in STATISTICS:
        raise config.ConfigError(f"--statistics: unsupported with --format {args.format} (use text or json)")
    start = Path(args.stdin_filename if stdin and args.stdin_filename else paths[0])
    start = start if start.exists() else Path.cwd()
    settings = config.load_settings(
        config.Overrides(
            select=args.select,
            ignore=args.ignore,
            extend_select=args.extend_select,
            unsafe_fixes=args.unsafe_fixes,
            config=args.config,
            exclude=args.exclude,
            extend_exclude=args.extend_exclude,
            extend_include=args.extend_include,
            cache_dir=args.cache_dir,
            per_file_ignores=args.per_file_ignores,
            target_version=args.target_version,
        ),
        start,
    )
    if args.show_settings:
        return _show_settings(args, settings, paths)
    fix = args.fix if args.fix is not None else settings.fix
    mode = run.DIFF if args.diff else (run.FIX if fix else run.CHECK)
    errors: List[str] = []
    no_files = False
    if stdin:
        results = [_stdin(args, settings, mode)]
    else:
        files, missing = discover(paths, settings, args.force_exclude)
        errors.extend(f"{path}: no such file or directory" for path in missing)
        prepare_targets(settings, files)
        results = run.run_files(files, settings.rules_for, mode, unsafe=settings.unsafe_fixes,
                                jobs=max(1, args.jobs), cache_dir=None if args.no_cache else settings.cache_dir,
                                cache_key=settings.fingerprint(), project_root=settings.project_root(paths),
                                target_for=settings.target_for)
        if args.format == "text" and not args.quiet:
            _target_notes(settings, files)
        # As in Ruff: a warning, exit 0, and no "All checks passed!" (nothing was checked).
        no_files = not files and not missing
        if no_files and not args.quiet:
            print("tflint-gpu: warning: No Python files found under the given path(s)", file=sys.stderr)
    findings = sorted((f for r in results for f in r.findings), key=lambda f: f.sort_key())
    errors.extend(r.error for r in results if r.error)
    fixed = sum(r.fixed for r in results)
    out = sys.stdout
    if stdin and mode == run.FIX:
        out = sys.stderr  # stdout carries the fixed source

    if mode == run.DIFF:
        diff = "".join(r.diff for r in results)
        sys.stdout.write(diff)
        would = sum(r.fixed for r in results)
        if not args.quiet and not no_files:
            print(f"Would fix {would} error{'s' if would != 1 else ''}." if would else "No fixes available.",
                  file=sys.stderr)
        _print_errors(errors)
        return 2 if errors else (1 if diff else 0)

    if args.statistics:
        out.write(STATISTICS[args.format](findings, settings.unsafe_fixes))
    elif args.format == "text" and (args.quiet or no_files):
        out.write("".join(text_report.line(f, settings.unsafe_fixes) + "\n" for f in findings))
    else:
        out.write(render(args.format, findings, errors, fixed=fixed, unsafe_fixes=settings.unsafe_fixes,
                         fix_mode=mode == run.FIX))
    _print_errors(errors)
    if errors:
        return 2
    if findings and not args.exit_zero:
        return 1
    return 0


def prepare_targets(settings: config.Settings, files: Sequence[str]) -> None:
    """Read every file's target before the run (``TF_USE_LEGACY_KERAS`` set in them
    included), so that the cache key tells the targets apart."""
    settings.scan_code(files)
    for path in files:
        settings.target_for(path)


def _target_notes(settings: config.Settings, files: Sequence[str]) -> None:
    """One line on stderr for each target read from a project that silenced migration rules."""
    seen = {}
    for path in files:
        silenced = settings.silenced_for(path)
        target = settings.target_for(path)
        if silenced and target.source == "project":
            seen.setdefault((target.spelling, target.why), (target, set()))[1].update(r.code for r in silenced)
    for target, codes in seen.values():
        print(f"tflint-gpu: note: target {target.spelling} ({target.describe()}: {'; '.join(target.why)}): "
              f"the Keras 3 migration rules ({', '.join(sorted(codes))}) are silent; `tflint-gpu upgrade` lists "
              f"what TF 2.16+ would break", file=sys.stderr)


def settings_report(settings: config.Settings, path: str) -> dict:
    """What ``--show-settings`` prints for ``path``."""
    target = settings.target_for(path)
    return {
        "path": path,
        "config-file": str(settings.config_file) if settings.config_file else None,
        "root": str(settings.root),
        "target-version": target.spelling,
        "target": target.describe(),
        "target-source": target.source,
        "target-why": list(target.why),
        "target-folder": settings.target_folder(path) if settings.target_version is None else None,
        "rules": [r.code for r in settings.rules_for(path)],
        "silenced-by-target": [r.code for r in settings.silenced_for(path)],
        "per-file-ignored": sorted(r.code for r in set(settings.rules) - set(settings._ignoring(path))),
        "unsafe-fixes": settings.unsafe_fixes,
        "fix": settings.fix,
        "include": list(settings.include),
        "exclude": list(settings.exclude),
        "cache-dir": str(settings.cache_dir) if settings.cache_dir else None,
    }


def _show_settings(args: argparse.Namespace, settings: config.Settings, paths: List[str]) -> int:
    shown = []
    for path in paths:
        if path == "-":
            path = args.stdin_filename or os.path.join(os.getcwd(), "-")
        if os.path.isfile(path):
            settings.scan_code([path])
        elif os.path.isdir(path):
            files, _ = discover([path], settings, args.force_exclude)
            settings.scan_code(files)
            path = os.path.join(path, "")  # a folder: its own target, not its parent's
        shown.append(settings_report(settings, path))
    if args.format == "json":
        print(json.dumps(shown, indent=2))
        return 0
    for item in shown:
        why = item["target-why"] or ["(no reason recorded)"]
        lines = [f"Settings for: {item['path']}",
                 f"  config file     : {item['config-file'] or '(none: defaults)'}",
                 f"  root            : {item['root']}",
                 f"  target-version  : {item['target-version']} ({item['target']}; {item['target-source']})"]
        lines += [f"    because       : {reason}" for reason in why]
        if item["target-folder"]:
            lines.append(f"    read from     : {item['target-folder']}")
        lines.append(f"  rules ({len(item['rules'])})      : {', '.join(item['rules']) or '(none)'}")
        if item["silenced-by-target"]:
            lines.append(f"  off for target  : {', '.join(item['silenced-by-target'])} (Keras 3 migration rules; "
                         f"see `tflint-gpu upgrade` or --target-version latest)")
        if item["per-file-ignored"]:
            lines.append(f"  per-file ignored: {', '.join(item['per-file-ignored'])}")
        lines += [f"  unsafe-fixes    : {str(item['unsafe-fixes']).lower()}",
                  f"  fix             : {str(item['fix']).lower()}",
                  f"  include         : {', '.join(item['include'])}",
                  f"  exclude         : {', '.join(item['exclude'])}",
                  f"  cache-dir       : {item['cache-dir']}"]
        print("\n".join(lines))
    return 0


def _stdin(args: argparse.Namespace, settings: config.Settings, mode: str) -> run.FileResult:
    from tflint_gpu.engine.lint import using_target

    with using_target(settings.target_for(args.stdin_filename or os.path.join(os.getcwd(), "-"))):
        return _stdin_run(args, settings, mode)


def _stdin_run(args: argparse.Namespace, settings: config.Settings, mode: str) -> run.FileResult:
    from tflint_gpu.files import decode

    data = sys.stdin.buffer.read()
    name = args.stdin_filename or "-"
    project, store = _stdin_project(args, settings)
    if is_notebook(name):
        result, new = run.process_notebook_data(data, name, settings.rules_for(name), mode, settings.unsafe_fixes,
                                                project)
        if store is not None:
            store.save()
        if mode == run.FIX:  # the fixed notebook (or the input, unchanged) goes to stdout
            sys.stdout.buffer.write(new if new is not None and not result.error else data)
        result.output = None
        return result
    try:
        source = decode(data).text
    except (UnicodeDecodeError, LookupError) as error:
        if mode == run.FIX:  # the fixed code goes to stdout: pass the input through unchanged
            sys.stdout.buffer.write(data)
        return run.FileResult(name, error=f"{name}: cannot read: {error}")
    result = run.process_text(source, name, settings.rules_for(name), mode, settings.unsafe_fixes, project)
    if store is not None:
        store.save()
    if mode == run.FIX:
        sys.stdout.write(result.output if result.output is not None else source)
    return result


def _stdin_project(args: argparse.Namespace, settings: config.Settings):
    """The view of its project for the text read from stdin, named by ``--stdin-filename``
    (None without a name), and the summary cache it reads."""
    from tflint_gpu.engine.cache import ProjectCache
    from tflint_gpu.semantic.project import ProjectFile, ProjectIndex

    if not args.stdin_filename:
        return None, None
    root = settings.project_root([args.stdin_filename])
    if root is None:
        return None, None
    store = ProjectCache(None if args.no_cache else settings.cache_dir)
    index = ProjectIndex(root, loader=store.load, by_text=store.of_text)
    return ProjectFile(index, os.path.abspath(args.stdin_filename)), store


def _print_errors(errors: List[str]) -> None:
    for error in errors:
        print(f"tflint-gpu: error: {error}", file=sys.stderr)


def _rules(fmt: str) -> int:
    rules = list(all_rules())
    if fmt == "json":
        data = [
            {
                "code": r.code,
                "name": r.name,
                "summary": r.summary(),
                "default": r.default_enabled,
                "fix": r.fix_safety.value if r.fix_safety else None,
                "migration": getattr(r, "migration", False) or False,
            }
            for r in rules
        ]
        print(json.dumps(data, indent=2))
        return 0
    width = max((len(r.name) for r in rules), default=0)
    for r in rules:
        fix = f"fix: {r.fix_safety.value}" if r.fix_safety else "no fix"
        default = "" if r.default_enabled else "  (off by default)"
        if getattr(r, "migration", False):
            default += "  (Keras 3 migration)"
        print(f"{r.code}  {r.name:<{width}}  {fix:<12} {r.summary()}{default}")
    return 0


def _rule(code: str) -> int:
    list(all_rules())
    rule = REGISTRY.get(code.upper())
    if rule is None:
        print(f"tflint-gpu: error: unknown rule `{code}`", file=sys.stderr)
        return 2
    fix = rule.fix_safety.value if rule.fix_safety else "none"
    enabled = "yes" if rule.default_enabled else "no"
    header = f"# {rule.name} ({rule.code})\n\nFix: {fix}. Enabled by default: {enabled}."
    parts = [header, rule.docs()]
    examples = default_examples_dir()
    example = examples / rule.code
    if (example / "before.py").is_file() and (example / "after.py").is_file():
        for side in ("before", "after"):
            parts.append(f"## Example pair: examples/{rule.code}/{side}.py\n```python\n"
                         f"{(example / f'{side}.py').read_text(encoding='utf-8').rstrip()}\n```")
    results = examples / "RESULTS.md"
    if results.is_file():
        lines = results.read_text(encoding="utf-8").splitlines()
        rows = [line for line in lines if line.startswith((f"| {rule.code} ", f"| [{rule.code}]"))]
        if rows:
            heading = [line for line in lines if line.startswith("|")][:2]
            context = [line for line in lines if line and not line.startswith("|")][:3]
            table = "\n".join(context + [""] + heading + rows)
            parts.append("## Last recorded measurement (examples/RESULTS.md)\n" + table)
    print("\n\n".join(parts))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
