"""Human-readable output: one line a finding, then a summary, as Ruff prints it."""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from tflint_gpu.findings import FileProblem, Finding, Safety


def line(finding: Finding, unsafe_fixes: bool) -> str:
    fixable = finding.fix is not None and (finding.fix.safety is Safety.SAFE or unsafe_fixes)
    marker = "[*] " if fixable else ""
    cell = getattr(finding, "cell", None)  # a notebook finding: its row is a line of that code cell
    where = f"cell {cell}:" if cell else ""
    return f"{finding.path}:{where}{finding.row}:{finding.col + 1}: {finding.code} {marker}{finding.message}"


def render(findings: Sequence[Finding], errors: List[str], *, fixed: int = 0, unsafe_fixes: bool = False,
           fix_mode: bool = False, problems: Sequence[FileProblem] = (), **_: object) -> str:
    out = [line(f, unsafe_fixes) for f in findings]
    out += summary(findings, errors, fixed=fixed, unsafe_fixes=unsafe_fixes, fix_mode=fix_mode, problems=problems)
    return "".join(item + "\n" for item in out)


def unchecked(problems: Sequence[FileProblem]) -> str:
    """``N files could not be checked`` when some could not be (read or parsed, or their analysis
    failed), else nothing."""
    count = len({p.path for p in problems})
    return f"{count} file{'s' if count != 1 else ''} could not be checked" if count else ""


def hidden_fixes(findings: Sequence[Finding], unsafe_fixes: bool) -> int:
    """How many unsafe fixes the findings hold that ``--unsafe-fixes`` would show (0 when it is on)."""
    if unsafe_fixes:
        return 0
    return sum(1 for f in findings if f.fix is not None and f.fix.safety is Safety.UNSAFE)


def summary(findings: Sequence[Finding], errors: List[str], *, fixed: int = 0, unsafe_fixes: bool = False,
            fix_mode: bool = False, problems: Sequence[FileProblem] = ()) -> List[str]:
    """The lines after the findings. A file's syntax or read error counts as an error (as in Ruff:
    ``invalid-syntax``, ``io-error``), and a file that could not be checked is never "All checks passed!"."""
    remaining = len(findings) + sum(1 for p in problems if p.code)
    out: List[str] = []
    notes = [f"{fixed} fixed, {remaining} remaining"] if fixed else []
    if unchecked(problems):
        notes.append(unchecked(problems))
    if remaining == 0 and not notes:
        return [] if errors else ["All checks passed!"]
    total = fixed + remaining
    out.append(f"Found {total} error{'s' if total != 1 else ''}" + (f" ({'; '.join(notes)})." if notes else "."))
    safe = sum(1 for f in findings if f.fix is not None and f.fix.safety is Safety.SAFE)
    unsafe = hidden_fixes(findings, False)  # every unsafe fix, shown or not
    fixable = safe + (unsafe if unsafe_fixes else 0)
    if fixable and not fix_mode:
        options = "--fix --unsafe-fixes" if unsafe_fixes and unsafe else "--fix"
        out.append(f"[*] {fixable} fixable with the `{options}` option.")
    if unsafe and not unsafe_fixes:
        out.append(f"({unsafe} hidden fix{'es' if unsafe != 1 else ''} can be enabled with the "
                   "`--unsafe-fixes` option.)")
    return out


def statistics_rows(findings: Sequence[Finding], unsafe_fixes: bool) -> List[Tuple[str, str, int, bool]]:
    """(code, name, count, fixable) by rule, most frequent first, as Ruff's ``--statistics``."""
    counts: Dict[str, list] = {}
    for finding in findings:
        entry = counts.setdefault(finding.code, [finding.name, 0, False])
        entry[1] += 1
        if finding.fix is not None and (finding.fix.safety is Safety.SAFE or unsafe_fixes):
            entry[2] = True
    rows = [(code, name, count, fixable) for code, (name, count, fixable) in counts.items()]
    return sorted(rows, key=lambda row: (-row[2], row[0]))


def statistics(findings: Sequence[Finding], unsafe_fixes: bool) -> str:
    rows = statistics_rows(findings, unsafe_fixes)
    width = max((len(str(count)) for _, _, count, _ in rows), default=1)
    return "".join(
        f"{count:>{width}}\t{code}\t{'[*]' if fixable else '[ ]'} {name}\n" for code, name, count, fixable in rows
    )
