"""The command line: ``tflint-gpu [check] PATH...``, ``rule CODE``, ``rules``, ``verify``.

Exit codes, as Ruff's: 0 no findings remain, 1 findings remain (or ``--diff``
has changes to show), a file's syntax or read error counting as one
(``invalid-syntax``, ``io-error``), 2 a usage or configuration error, or a file
the analysis failed on (the other files are still checked).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import TYPE_CHECKING, List, Optional, Sequence

import tflint_gpu

# Each command imports what it uses, in the function that runs it: `--version`, `rules`, `rule CODE`
# and a check answered from the cache import neither LibCST nor a rule module (benchmarks/startup.py).
if TYPE_CHECKING:
    from tflint_gpu import config
    from tflint_gpu.engine import run


def __getattr__(name: str):
    """``cli.config`` and ``cli.run``, the modules the commands import, for whoever reads them here."""
    modules = {"config": "tflint_gpu.config", "run": "tflint_gpu.engine.run"}
    if name in modules:
        import importlib

        return importlib.import_module(modules[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

COMMANDS = ("check", "rule", "rules", "verify", "upgrade", "server")
OFF_LEGEND = "off: off by default; turn it on with --extend-select CODE (or extend-select in [tool.tflint-gpu])"


CONFIG_HELP = ("the configuration file for every file: a pyproject.toml ([tool.tflint-gpu]) or a standalone "
               "TOML file (the same keys at its top level); default: each file's nearest .tflint-gpu.toml, "
               "tflint-gpu.toml or pyproject.toml with [tool.tflint-gpu], the first of these in a folder")


def _check_parser(sub) -> None:
    from tflint_gpu.report import FORMATS

    p = sub.add_parser("check", help="check files (the default command)", description="Check files for findings.")
    p.add_argument("paths", nargs="*", default=None, help="files or directories (default: .); - reads stdin")
    p.add_argument("--fix", action="store_true", default=None, help="apply safe fixes")
    p.add_argument("--no-fix", dest="fix", action="store_false", help="do not fix (overrides `fix = true`)")
    p.add_argument("--fix-only", action="store_true", default=None,
                   help="apply the fixes and report nothing of what is left (implies --fix; exit 0 unless "
                        "--exit-non-zero-on-fix and a fix was written)")
    p.add_argument("--no-fix-only", dest="fix_only", action="store_false", help="overrides `fix-only = true`")
    p.add_argument("--unsafe-fixes", action="store_true", default=None, help="also apply and show unsafe fixes")
    p.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false")
    p.add_argument("--diff", action="store_true", help="show the fixes as a diff; write nothing")
    p.add_argument("--add-noqa", action="store_true",
                   help="add `# noqa: CODE` to every line with a finding (as --fix writes files) and exit 0")
    p.add_argument("--select", action="append", metavar="CODES", help="rule code prefixes, comma-separated, or ALL")
    p.add_argument("--extend-select", action="append", metavar="CODES", help="add to the selection")
    p.add_argument("--ignore", action="append", metavar="CODES", help="rule code prefixes to leave out")
    p.add_argument("--fixable", action="append", metavar="CODES",
                   help="rule code prefixes whose fixes may be applied (default: ALL)")
    p.add_argument("--unfixable", action="append", metavar="CODES",
                   help="rule code prefixes never fixed: reported without [*], left alone by --fix, --diff and editors")
    p.add_argument("--extend-fixable", action="append", metavar="CODES", help="add to the fixable rules")
    p.add_argument("--per-file-ignores", action="append", metavar="GLOB:CODES", help="e.g. 'tests/*:TFG2'")
    p.add_argument("--exclude", action="append", metavar="PATTERNS", help="replace the default excludes")
    p.add_argument("--extend-exclude", action="append", metavar="PATTERNS", help="add to the excludes")
    p.add_argument("--extend-include", action="append", metavar="PATTERNS",
                   help="also check these files in directories (default: *.py, *.ipynb)")
    p.add_argument("--force-exclude", action="store_true", default=None,
                   help="apply excludes (and .gitignore) to files named explicitly and to --stdin-filename too "
                        "(default: force-exclude in the configuration, else off)")
    p.add_argument("--no-force-exclude", dest="force_exclude", action="store_false")
    p.add_argument("--respect-gitignore", action="store_true", default=None,
                   help="skip the files .gitignore ignores in directories (the default)")
    p.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false")
    p.add_argument("--format", "--output-format", dest="format", choices=sorted(FORMATS), default="text",
                   help="text (or concise: one line a finding, the default), full (with the source lines and "
                        "a preview of each fix), json, sarif, github, gitlab (Code Quality), junit")
    p.add_argument("--output-file", "-o", metavar="PATH", help="write the report to PATH instead of stdout")
    p.add_argument("--statistics", action="store_true", help="count findings by rule")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    p.add_argument("--exit-non-zero-on-fix", action="store_true",
                   help="exit 1 when --fix changed a file, even with no finding left (as Ruff)")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)")
    p.add_argument("--config", metavar="FILE", help=CONFIG_HELP)
    p.add_argument("--stdin-filename", metavar="PATH", help="the name of the file read from stdin")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    p.add_argument("--cache-dir", metavar="DIR", help="where the cache lives (default: .tflint_gpu_cache)")
    p.add_argument("--file-timeout", metavar="SECONDS",
                   help="stop the analysis of one file after SECONDS and report it (default: 60; 0: no limit)")
    p.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
    p.add_argument("--target-version", metavar="TARGET",
                   help="the TensorFlow/Keras the code runs under: tf2.15 (Keras 2), tf2.16 (Keras 3), "
                        "tf2.16-keras2 (tf_keras), latest (default: read from the project's pins)")
    p.add_argument("--show-settings", action="store_true",
                   help="print the settings used for each path (configuration files, target and why, rules, "
                        "per-file ignores) and exit")
    p.add_argument("--show-files", action="store_true", help="list the files that would be checked and exit")


def build_parser(verify_arguments: bool = True) -> argparse.ArgumentParser:
    """The parser; ``verify_arguments=False`` leaves out the options of ``verify``, whose module
    (``verify.command``) the other commands need not import."""
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
    if verify_arguments:
        from tflint_gpu.verify import command as verify_command

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
                                   "and the command that applies them (--fix). Exit 1 when something would "
                                   "break (after --fix: when something is left).")
    p.add_argument("paths", nargs="*", default=None, help="files or directories (default: .)")
    p.add_argument("--target-version", metavar="TARGET", default="latest",
                   help="the target to upgrade to (a Keras 3 one; default: latest)")
    p.add_argument("--select", action="append", metavar="CODES",
                   help="only these migration rules (default: every migration rule)")
    p.add_argument("--format", "--output-format", dest="format", choices=("text", "json"), default="text")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when something would break")
    p.add_argument("--fix", action="store_true", help="apply the safe fixes, then report what is left")
    p.add_argument("--unsafe-fixes", action="store_true", help="with --fix: apply the unsafe fixes too")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)")
    p.add_argument("--config", metavar="FILE", help=CONFIG_HELP)
    p.add_argument("--exclude", action="append", metavar="PATTERNS", help="replace the default excludes")
    p.add_argument("--extend-exclude", action="append", metavar="PATTERNS", help="add to the excludes")
    p.add_argument("--extend-include", action="append", metavar="PATTERNS", help="also check these files")
    p.add_argument("--force-exclude", action="store_true", default=None,
                   help="apply excludes to files named explicitly too")
    p.add_argument("--no-force-exclude", dest="force_exclude", action="store_false")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    p.add_argument("--cache-dir", metavar="DIR", help="where the cache lives (default: .tflint_gpu_cache)")


def _unknown_command(first: str) -> bool:
    """A first argument that reads as a command (a bare lower-case word, as ``explain``) and is neither one
    of ``COMMANDS`` nor a path that exists: argparse's usage error, not a missing file to check."""
    return first not in COMMANDS and re.fullmatch(r"[a-z][a-z-]*", first) is not None \
        and not os.path.exists(first)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["--version"]:  # what argparse prints, without building the parser
        print(f"tflint-gpu {tflint_gpu.__version__}")
        return 0
    if args_list and _unknown_command(args_list[0]):
        print(f"tflint-gpu: error: unknown command '{args_list[0]}' (commands: {', '.join(COMMANDS)}; "
              f"a path to check must exist)", file=sys.stderr)
        return 2
    if not args_list or (args_list[0] not in COMMANDS and args_list[0] not in ("-h", "--help", "--version")):
        args_list.insert(0, "check")
    parser = build_parser(verify_arguments=args_list[0] == "verify")
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
            from tflint_gpu.verify import command as verify_command

            return verify_command.run(args)
        if args.command == "server":
            return _server()
        if args.command == "upgrade":
            from tflint_gpu import upgrade

            return upgrade.main(args)
        return _check(args)
    except KeyboardInterrupt:  # Ctrl-C: the worker processes are ended (engine.run); no traceback
        print("tflint-gpu: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    except Exception as error:  # a configuration or usage error (config.ConfigError): one line, exit 2
        from tflint_gpu.config import ConfigError

        if not isinstance(error, ConfigError):
            raise
        print(f"tflint-gpu: error: {error}", file=sys.stderr)
        return 2


def _server() -> int:
    try:
        from tflint_gpu import server
    except ImportError as error:
        print(f"tflint-gpu: error: the language server needs pygls ({error}); "
              f"install it with: pip install 'tflint-gpu[server]'", file=sys.stderr)
        return 2
    return server.main()


def _check(args: argparse.Namespace) -> int:
    from tflint_gpu import config
    from tflint_gpu.engine import run
    from tflint_gpu.files import discover
    from tflint_gpu.findings import IO_ERROR, FileProblem
    from tflint_gpu.progress import Progress
    from tflint_gpu.report import STATISTICS, render
    from tflint_gpu.report.full import Sources
    from tflint_gpu.report import text as text_report

    paths: List[str] = args.paths or ["."]
    stdin = paths == ["-"]
    if "-" in paths and not stdin:
        raise config.ConfigError("`-` (stdin) cannot be combined with other paths")
    if args.statistics and args.format not in STATISTICS:
        raise config.ConfigError(f"--statistics: unsupported with --format {args.format} (use text or json)")
    resolver = config.Resolver(
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
            respect_gitignore=args.respect_gitignore,
            file_timeout=args.file_timeout,
            fixable=args.fixable,
            unfixable=args.unfixable,
            extend_fixable=args.extend_fixable,
        ),
    )
    # Each file has its own (``run_by_settings``); the first path's decide the run's `fix` and
    # how unsafe fixes are shown.
    settings = resolver.settings_for(args.stdin_filename if stdin and args.stdin_filename else paths[0])
    if args.show_settings:
        return _show_settings(args, resolver, paths)
    if args.show_files:
        return _show_files(args, resolver, paths)
    fix = args.fix if args.fix is not None else settings.fix
    # As in Ruff: `fix-only` implies `fix` (`--no-fix` does not undo it), `--diff` shows what it would write.
    fix_only = args.fix_only if args.fix_only is not None else settings.fix_only
    mode = run.DIFF if args.diff else (run.FIX if fix or fix_only else run.CHECK)
    if args.add_noqa:
        if args.fix or args.diff or args.fix_only:
            raise config.ConfigError("--add-noqa cannot be combined with --fix, --fix-only or --diff")
        if stdin:
            raise config.ConfigError("--add-noqa writes files: name them (it does not read stdin)")
        mode = run.NOQA
    fmt = "text" if args.format == "concise" else args.format
    errors: List[str] = []
    problems: List[FileProblem] = []
    no_files = False
    if stdin:
        results = [_stdin(args, settings, mode)]
    else:
        origins: dict = {}
        files, missing = discover(paths, resolver, args.force_exclude, origins)
        errors.extend(f"{path}: no such file or directory" for path in missing)
        problems.extend(FileProblem(IO_ERROR, path, "no such file or directory") for path in missing)
        with Progress(len(files), enabled=None if len(files) > 1 and not args.quiet else False) as progress:
            results = run_by_settings(resolver, files, origins, mode, jobs=max(1, args.jobs), no_cache=args.no_cache,
                                      progress=progress)
        if fmt in ("text", "full") and not args.quiet:
            for group_settings, group in by_settings(resolver, files):
                _target_notes(group_settings, group)
        # As in Ruff: a warning, exit 0, and no "All checks passed!" (nothing was checked).
        no_files = not files and not missing
        if no_files and not args.quiet:
            print("tflint-gpu: warning: No Python files found under the given path(s)", file=sys.stderr)
    findings = sorted((f for r in results for f in r.findings), key=lambda f: f.sort_key())
    errors.extend(r.error for r in results if r.error)
    problems.extend(p for r in results for p in r.problems)
    # A syntax or read error is a diagnostic, as in Ruff (exit 1); any other error line (an analysis
    # that failed, a fix that could not be written) is one of ours (exit 2).
    diagnostics = [p for p in problems if p.code]
    failures = [r.error for r in results if r.error and not (r.problems and all(p.code for p in r.problems))]
    fixed = sum(r.fixed for r in results)
    if mode == run.NOQA:  # as Ruff: the count on stderr, exit 0 (2 if a file could not be analysed or written)
        if not args.quiet:
            print(f"Added {fixed} noqa directive{'s' if fixed != 1 else ''}.", file=sys.stderr)
        _print_errors(errors)
        return 2 if failures else 0
    out = sys.stdout
    if stdin and mode == run.FIX:
        out = sys.stderr  # stdout carries the fixed source

    if mode == run.DIFF:
        diff = "".join(r.diff for r in results)
        would = sum(r.fixed for r in results)
        if not _report(args, sys.stdout, diff):
            return 2
        if not args.quiet and not no_files:
            unchecked = text_report.unchecked(problems)
            notes = f" ({unchecked})" if unchecked else ""
            hidden = text_report.hidden_fixes(findings, settings.unsafe_fixes)
            if would:
                summary = f"Would fix {would} error{'s' if would != 1 else ''}{notes}."
            elif hidden:  # as Ruff: the unsafe fixes the diff left out
                summary = (f"No errors would be fixed ({hidden} fix{'es' if hidden != 1 else ''} available with "
                           f"`--unsafe-fixes`){notes}.")
            else:
                summary = f"No fixes available{notes}."
            print(summary, file=sys.stderr)
        _print_errors(errors)
        if failures:
            return 2
        return 1 if (diff or diagnostics) and not args.exit_zero else 0

    if fix_only and mode == run.FIX and not args.statistics:
        return _fix_only(args, out, fmt, findings, errors, failures, fixed, settings.unsafe_fixes, no_files)
    if args.statistics:
        report = STATISTICS[fmt](findings, settings.unsafe_fixes)
    elif fmt == "text" and (args.quiet or no_files):
        report = "".join(text_report.line(f, settings.unsafe_fixes) + "\n" for f in findings)
    else:
        report = render(fmt, findings, errors, fixed=fixed, unsafe_fixes=settings.unsafe_fixes,
                        fix_mode=mode == run.FIX, problems=problems, failures=failures,
                        sources=Sources(getattr(args, "stdin_text", None)), summary=not (args.quiet or no_files))
    if not _report(args, out, report):
        return 2
    _print_errors(errors)
    if failures:
        return 2
    if (findings or diagnostics) and not args.exit_zero:
        return 1
    if fixed and mode == run.FIX and getattr(args, "exit_non_zero_on_fix", False) and not args.exit_zero:
        return 1  # --exit-zero wins, as Ruff's does (and as --fix-only's exit does)
    return 0


def _fix_only(args: argparse.Namespace, out, fmt: str, findings: Sequence, errors: List[str], failures: List[str],
              fixed: int, unsafe_fixes: bool, no_files: bool) -> int:
    """``--fix-only``, as Ruff's: the fixes are written, the findings left are not reported (the text
    formats say how many were fixed, the others print nothing); exit 0 unless a file failed (2) or
    ``--exit-non-zero-on-fix`` and a fix was written (1, but 0 with ``--exit-zero``)."""
    from tflint_gpu.report.text import hidden_fixes

    report = ""
    if fmt in ("text", "full") and not args.quiet and not no_files:
        hidden = hidden_fixes(findings, unsafe_fixes)
        errors_ = f"error{'s' if fixed != 1 else ''}"
        more = f"fix{'es' if hidden != 1 else ''}"
        if hidden and fixed:
            report = f"Fixed {fixed} {errors_} ({hidden} additional {more} available with `--unsafe-fixes`).\n"
        elif hidden:
            report = f"No errors fixed ({hidden} {more} available with `--unsafe-fixes`).\n"
        elif fixed:
            report = f"Fixed {fixed} {errors_}.\n"
    if not _report(args, out, report):
        return 2
    _print_errors(errors)
    if failures:
        return 2
    return 1 if fixed and args.exit_non_zero_on_fix and not args.exit_zero else 0


def _report(args: argparse.Namespace, out, report: str) -> bool:
    """Write ``report`` to ``--output-file`` (its folder made if need be, as Ruff does), else to ``out``;
    False (and one error line) when the file cannot be written."""
    if not args.output_file:
        out.write(report)
        return True
    try:
        folder = os.path.dirname(args.output_file)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(args.output_file, "w", encoding="utf-8", newline="") as handle:
            handle.write(report)
    except OSError as error:
        _print_errors([f"--output-file {args.output_file}: cannot write: {error.strerror or error}"])
        return False
    return True


def by_settings(resolver: config.Resolver, files: Sequence[str]) -> List[tuple]:
    """``files`` grouped by their settings (each file's nearest configuration's): (settings, files)
    pairs, in the order the groups are first met."""
    groups: dict = {}
    for path in files:
        settings = resolver.settings_for_folder(os.path.dirname(os.path.abspath(path)))
        groups.setdefault(id(settings), (settings, []))[1].append(path)
    return list(groups.values())


def run_by_settings(resolver: config.Resolver, files: Sequence[str], origins: dict, mode: str, *, jobs: int,
                    no_cache: bool, progress=None, adapt=None) -> List[run.FileResult]:
    """Each configuration's files run with its settings: its rules and per-file ignores, the
    targets, its cache and its project index (the configuration's folder; for the files of no
    configuration, the paths given they came from, ``origins``). ``adapt(settings)``: the
    settings to run with instead. Results in the order of ``files``."""
    from tflint_gpu.engine import run

    results: dict = {}
    done = 0
    for settings, group in by_settings(resolver, files):
        settings = adapt(settings) if adapt is not None else settings
        folder = cache_folder(settings, no_cache)
        prepare_targets(settings, group, folder)
        given = list(dict.fromkeys(origins.get(path, path) for path in group))
        extra = {"tree_for": lambda path: fix_tree(origins.get(path, path))}
        if progress is not None:
            extra["progress"] = lambda count, before=done: progress(before + count)
        found = run.run_files(group, settings.rules_for, mode, unsafe=settings.unsafe_fixes, jobs=jobs,
                              unfixable=settings.unfixable,
                              cache_dir=folder, cache_key=settings.fingerprint(),
                              project_root=settings.project_root(given), target_for=settings.target_for,
                              budget=settings.file_timeout, **extra)
        results.update(zip(group, found))
        done += len(group)
    return [results[path] for path in files]


def cache_folder(settings: config.Settings, no_cache: bool) -> Optional[os.PathLike]:
    """The cache folder of ``settings`` to use (None: no cache), each reason to use another or
    none said on one warning line: a project's ``cache-dir`` outside it (the default folder is
    used), a cache folder that is a symbolic link (none is)."""
    from tflint_gpu.engine.cache import refused_folder

    if no_cache or settings.cache_dir is None:
        return None
    refused = refused_folder(settings.cache_dir)
    for warning in (settings.cache_warning, refused):
        if warning:
            print(f"tflint-gpu: warning: {warning}", file=sys.stderr)
    return None if refused else settings.cache_dir


def fix_tree(given: str) -> str:
    """The tree a file found from the path ``given`` on the command line belongs to: ``--fix``
    writes through a symbolic link only to a file inside it (a folder given; else the file's folder)."""
    return given if os.path.isdir(given) else (os.path.dirname(given) or os.curdir)


def prepare_targets(settings: config.Settings, files: Sequence[str], cache_dir: Optional[os.PathLike] = None) -> None:
    """Read every file's target before the run (``TF_USE_LEGACY_KERAS`` set in them
    included), so that the cache key tells the targets apart. ``cache_dir``: where the files
    known not to mention the variable are kept (``engine.cache.Mentions``), None: every file is read."""
    if cache_dir is not None and settings.target_version is None:
        from pathlib import Path

        from tflint_gpu.engine.cache import Mentions

        mentions = Mentions(Path(cache_dir))
        settings.scan_code(files, mentions.read)
        mentions.save()
    else:
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


def _globs(items: Sequence[tuple], root: str) -> List[str]:
    """Globs as ``--show-settings`` shows them: each with the folder it is relative to, where that
    is not the root."""
    return [pattern if os.path.abspath(anchor) == os.path.abspath(root) or "/" not in pattern.rstrip("/")
            else f"{pattern} (in {anchor})" for pattern, anchor in items]


def _with_fixes(rules: Sequence) -> List:
    """The rules that offer a fix (``Rule.fix_safety``)."""
    return [r for r in rules if getattr(r, "fix_safety", None)]


def settings_report(settings: config.Settings, path: str) -> dict:
    """What ``--show-settings`` prints for ``path``."""
    from tflint_gpu.files import force_excluded

    target = settings.target_for(path)
    root = str(settings.root)
    return {
        "path": path,
        "config-file": str(settings.config_file) if settings.config_file else None,
        "extends": [str(p) for p in settings.config_files[1:]],
        "root": root,
        "target-version": target.spelling,
        "target": target.describe(),
        "target-source": target.source,
        "target-why": list(target.why),
        "target-folder": settings.target_folder(path) if settings.target_version is None else None,
        "rules": [r.code for r in settings.rules_for(path)],
        "silenced-by-target": [r.code for r in settings.silenced_for(path)],
        "per-file-ignored": sorted(r.code for r in set(settings.rules) - set(settings._ignoring(path))),
        "per-file-ignores": [{"pattern": pattern, "relative-to": anchor, "codes": list(codes)}
                             for pattern, anchor, codes in settings.per_file_ignores_for(path)],
        "excluded": force_excluded(path, settings),  # as a walk would skip it (git-ignored too)
        "unsafe-fixes": settings.unsafe_fixes,
        "fix": settings.fix,
        "fix-only": settings.fix_only,
        # The selected rules that have fixes, by whether --fix applies them (``fixable``/``unfixable``).
        "fixable": [r.code for r in _with_fixes(settings.rules) if r.code not in settings.unfixable],
        "unfixable": [r.code for r in _with_fixes(settings.rules) if r.code in settings.unfixable],
        "respect-gitignore": settings.respect_gitignore,
        "force-exclude": settings.force_exclude,
        "include": _globs(settings.include, root),
        "exclude": _globs(settings.exclude, root),
        "cache-dir": str(settings.cache_dir) if settings.cache_dir else None,
    }


def _show_settings(args: argparse.Namespace, resolver: config.Resolver, paths: List[str]) -> int:
    from tflint_gpu.files import discover

    shown = []
    for path in paths:
        if path == "-":
            path = args.stdin_filename or os.path.join(os.getcwd(), "-")
        settings = resolver.settings_for(path)
        if os.path.isfile(path):
            settings.scan_code([path])
        elif os.path.isdir(path):
            files, _ = discover([path], resolver, args.force_exclude)
            settings.scan_code(files)
            path = os.path.join(path, "")  # a folder: its own target, not its parent's
        shown.append(settings_report(settings, path))
    if args.format == "json":
        print(json.dumps(shown, indent=2))
        return 0
    for item in shown:
        why = item["target-why"] or ["(no reason recorded)"]
        lines = [f"Settings for: {item['path']}",
                 f"  config file     : {item['config-file'] or '(none: defaults)'}"]
        lines += [f"    extends       : {base}" for base in item["extends"]]
        lines += [f"  root            : {item['root']}",
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
        lines += [f"    by            : {entry['pattern']} = {', '.join(entry['codes'])} (in {entry['relative-to']})"
                  for entry in item["per-file-ignores"]]
        if item["excluded"]:
            lines.append("  excluded        : yes (checked only when named, without --force-exclude)")
        lines += [f"  unsafe-fixes    : {str(item['unsafe-fixes']).lower()}",
                  f"  fix             : {str(item['fix']).lower()}",
                  f"  fix-only        : {str(item['fix-only']).lower()}",
                  f"  fixable         : {', '.join(item['fixable']) or '(none)'}",
                  f"  unfixable       : {', '.join(item['unfixable']) or '(none)'}",
                  f"  respect-gitignore: {str(item['respect-gitignore']).lower()}",
                  f"  force-exclude   : {str(item['force-exclude']).lower()}",
                  f"  include         : {', '.join(item['include'])}",
                  f"  exclude         : {', '.join(item['exclude'])}",
                  f"  cache-dir       : {item['cache-dir']}"]
        print("\n".join(lines))
    return 0


def _show_files(args: argparse.Namespace, resolver: config.Resolver, paths: List[str]) -> int:
    """``--show-files``: the files a check of ``paths`` would read, one a line (``--format json``:
    a list), sorted; exit 0 (2 when a path does not exist)."""
    from tflint_gpu import config
    from tflint_gpu.files import discover

    if paths == ["-"]:
        raise config.ConfigError("--show-files: lists files found under paths, not stdin (`-`)")
    files, missing = discover(paths, resolver, args.force_exclude)
    files = sorted(files)
    if args.format == "json":
        print(json.dumps(files, indent=2))
    else:
        sys.stdout.write("".join(f"{path}\n" for path in files))
    _print_errors([f"{path}: no such file or directory" for path in missing])
    return 2 if missing else 0


def _stdin_excluded(args: argparse.Namespace, settings: config.Settings) -> bool:
    """``--force-exclude`` (or ``force-exclude``) with a ``--stdin-filename`` that a walk would skip
    (``files.force_excluded``: excluded or git-ignored, as in Ruff)."""
    forced = settings.force_exclude if args.force_exclude is None else args.force_exclude
    if not (forced and args.stdin_filename):
        return False
    from tflint_gpu.files import force_excluded

    return force_excluded(args.stdin_filename, settings, is_dir=False)


def _stdin(args: argparse.Namespace, settings: config.Settings, mode: str) -> run.FileResult:
    from tflint_gpu.engine import run

    from tflint_gpu.engine.lint import using_fixable, using_target

    if _stdin_excluded(args, settings):  # no findings; with --fix the text goes through unchanged
        data = sys.stdin.buffer.read()
        if mode == run.FIX:
            sys.stdout.buffer.write(data)
        return run.FileResult(args.stdin_filename)
    with using_target(settings.target_for(args.stdin_filename or os.path.join(os.getcwd(), "-"))), \
            using_fixable(settings.unfixable):
        return _stdin_run(args, settings, mode)


def _stdin_run(args: argparse.Namespace, settings: config.Settings, mode: str) -> run.FileResult:
    from tflint_gpu.engine import run
    from tflint_gpu.findings import IO_ERROR, is_notebook

    from tflint_gpu.files import decode

    data = sys.stdin.buffer.read()
    name = args.stdin_filename or "-"
    project, store = _stdin_project(args, settings)
    if is_notebook(name):
        outcome = run.within_budget(name, settings.file_timeout, run.process_notebook_data, data, name,
                                    settings.rules_for(name), mode, settings.unsafe_fixes, project)
        result, new = outcome if isinstance(outcome, tuple) else (outcome, None)  # over budget: no new text
        if store is not None:
            store.save()
        kept = new if new is not None and not result.error else data
        if mode == run.FIX:  # the fixed notebook (or the input, unchanged) goes to stdout
            sys.stdout.buffer.write(kept)
        args.stdin_text = {name: kept.decode("utf-8-sig", "replace")}  # what the findings are in (full output)
        result.output = None
        return result
    try:
        source = decode(data).text
    except (UnicodeDecodeError, LookupError) as error:
        if mode == run.FIX:  # the fixed code goes to stdout: pass the input through unchanged
            sys.stdout.buffer.write(data)
        return run.failed(name, f"{name}: cannot read: {error}", IO_ERROR)
    result = run.within_budget(name, settings.file_timeout, run.process_text, source, name, settings.rules_for(name),
                               mode, settings.unsafe_fixes, project)
    if store is not None:
        store.save()
    if mode == run.FIX:
        sys.stdout.write(result.output if result.output is not None else source)
    args.stdin_text = {name: result.output if mode == run.FIX and result.output is not None else source}
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
    store = ProjectCache(cache_folder(settings, args.no_cache))
    index = ProjectIndex(root, loader=store.load, by_text=store.of_text)
    return ProjectFile(index, os.path.abspath(args.stdin_filename)), store


def _print_errors(errors: List[str]) -> None:
    for error in errors:
        print(f"tflint-gpu: error: {error}", file=sys.stderr)


def _rules(fmt: str) -> int:
    from tflint_gpu import catalogue

    rules = catalogue.all_infos()  # the rules and the engine's own codes (TFG001), from the table: no rule imported
    if fmt == "json":
        data = [
            {
                "code": r.code,
                "name": r.name,
                "summary": r.summary(),
                "default": r.default_enabled,
                "fix": r.fix_label(),
                "migration": getattr(r, "migration", False) or False,
            }
            for r in rules
        ]
        print(json.dumps(data, indent=2))
        return 0
    width = max((len(r.name) for r in rules), default=0)
    for r in rules:
        fix = f"fix: {r.fix_label()}" if r.fix_safety else "no fix"
        off = "   " if r.default_enabled else "off"
        migration = "  (Keras 3 migration)" if getattr(r, "migration", False) else ""
        print(f"{r.code} {off} {r.name:<{width}}  {fix:<20} {r.summary()}{migration}")
    if not all(r.default_enabled for r in rules):
        print(f"\n{OFF_LEGEND}")
    return 0


def _rule(code: str) -> int:
    from tflint_gpu.catalogue import describe
    from tflint_gpu.rules.docs import page

    rule = describe(code.upper())
    if rule is None:
        print(f"tflint-gpu: error: unknown rule `{code}`", file=sys.stderr)
        return 2
    sys.stdout.write(page(rule))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
