"""Human-readable output: one line a finding, then a summary, as Ruff prints it."""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from tflint_gpu.findings import Finding, Safety


def line(finding: Finding, unsafe_fixes: bool) -> str:
    fixable = finding.fix is not None and (finding.fix.safety is Safety.SAFE or unsafe_fixes)
    marker = "[*] " if fixable else ""
    cell = getattr(finding, "cell", None)  # a notebook finding: its row is a line of that code cell
    where = f"cell {cell}:" if cell else ""
    return f"{finding.path}:{where}{finding.row}:{finding.col + 1}: {finding.code} {marker}{finding.message}"


def render(findings: Sequence[Finding], errors: List[str], *, fixed: int = 0, unsafe_fixes: bool = False,
           fix_mode: bool = False, **_: object) -> str:
    out = [line(f, unsafe_fixes) for f in findings]
    remaining = len(findings)
    if remaining == 0 and not fixed:
        if not errors:
            out.append("All checks passed!")
        return "".join(item + "\n" for item in out)
    if fixed:
        plural = "error" if fixed + remaining == 1 else "errors"
        out.append(f"Found {fixed + remaining} {plural} ({fixed} fixed, {remaining} remaining).")
    else:
        out.append(f"Found {remaining} error{'s' if remaining != 1 else ''}.")
    safe = sum(1 for f in findings if f.fix is not None and f.fix.safety is Safety.SAFE)
    unsafe = sum(1 for f in findings if f.fix is not None and f.fix.safety is Safety.UNSAFE)
    fixable = safe + (unsafe if unsafe_fixes else 0)
    if fixable and not fix_mode:
        options = "--fix --unsafe-fixes" if unsafe_fixes and unsafe else "--fix"
        out.append(f"[*] {fixable} fixable with the `{options}` option.")
    if unsafe and not unsafe_fixes:
        out.append(f"({unsafe} hidden fix{'es' if unsafe != 1 else ''} can be enabled with the "
                   "`--unsafe-fixes` option.)")
    return "\n".join(out) + "\n"


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
