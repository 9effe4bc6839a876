"""Apply fixes: collect their text edits, apply them to the text, repeat until stable.

A fix is applied as the text edits the finding reports (the same ones an
editor gets), so lines no fix touches come out byte for byte as they went in.
Fixes whose nodes overlap an already accepted fix, or the nodes an accepted
fix was judged safe on (``Fix.depends_on``), wait for the next round: the
file is linted again, so the rules see the new text. A round whose output
does not parse is refused and the source stays as it was.

A text made of segments (a notebook's cells joined into one module) is fixed
with ``segments``, the row each segment starts on: a fix whose edits do not
all lie inside one segment is never applied (it would move text from one
segment into another, or join two), and the rows are carried through every
round, so the fixed text is cut back into its segments exactly
(``FixOutcome.segments``), whatever the lines look like.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from tflint_gpu.engine.imports import missing_imports
from tflint_gpu.engine.lint import LintResult, ParseError, RuleClass, lint_source
from tflint_gpu.engine.noqa import UNUSED_NOQA, NoqaIndex, add_edits
from tflint_gpu.engine.positions import LINE_END
from tflint_gpu.findings import Edit, Finding, Fix, Safety

MAX_ROUNDS = 10

Span = Tuple[Tuple[int, int], Tuple[int, int]]


@dataclass
class FixOutcome:
    source: str
    applied: int = 0
    findings: List[Finding] = field(default_factory=list)  # what remains after fixing
    applied_codes: List[str] = field(default_factory=list)
    refused: bool = False  # a round produced code that does not parse
    converged: bool = False  # a round found nothing left to apply (not stopped by MAX_ROUNDS)
    segments: Optional[List[int]] = None  # with ``segments``: the row each segment starts on in ``source``


def segment_of(edit: Edit, starts: Sequence[int], above: bool = False) -> Optional[int]:
    """The segment (index into ``starts``, the sorted 1-based rows segments start on) that holds
    ``edit``, or None where it reaches into the next segment (its end past the newline that
    separates them, unless it writes a newline of its own there: a statement replaced with
    the line break after it). An insertion at the start of a segment is the segment's, or
    with ``above`` the one before it's (an import put after the last import line above)."""
    (row, col), (end_row, end_col) = edit.start, edit.end
    segment = bisect.bisect_right(starts, row) - 1
    if above and segment > 0 and (row, col) == (end_row, end_col) == (starts[segment], 0):
        return segment - 1
    last = bisect.bisect_right(starts, end_row) - 1
    if last == segment:
        return segment
    if last == segment + 1 and (end_row, end_col) == (starts[last], 0) and edit.content.endswith("\n"):
        return segment
    return None


def _segment_of_fix(edits: Sequence[Edit], starts: Sequence[int]) -> Optional[int]:
    """The one segment every edit of a fix lies in, else None."""
    found = {segment_of(edit, starts) for edit in edits}
    return found.pop() if len(found) == 1 and None not in found else None


def _shift(starts: List[int], placed: Sequence[Tuple[Edit, int]]) -> List[int]:
    """The segments' start rows after applying edits, each with the segment it lies in."""
    moved = list(starts)
    for edit, segment in placed:
        delta = len(LINE_END.findall(edit.content)) - (edit.end[0] - edit.start[0])
        for k in range(segment + 1, len(moved)):
            moved[k] += delta
    return moved


def applicable(fix: Fix, unsafe: bool) -> bool:
    return fix.safety is Safety.SAFE or unsafe


def _overlaps(a: Span, b: Span) -> bool:
    return not (a[1] <= b[0] or b[1] <= a[0])


def _choose(result: LintResult, unsafe: bool, starts: Optional[Sequence[int]] = None) -> List[int]:
    """The findings whose fixes this round applies: none replaces text another
    replaces, or text another was judged safe on; with ``starts`` (segments), each
    inside one segment."""
    accepted: List[int] = []
    replaced: List[Span] = []
    judged: List[Span] = []
    for i, fix in enumerate(result.fixes):
        if fix is None or not applicable(fix, unsafe):
            continue
        if starts is not None and _segment_of_fix(result.replacement_edits[i], starts) is None:
            continue
        # A fix of text alone (TFG001's, on a comment) is placed by its edits.
        spans = [result.positions[node] for node in fix.replacements] or \
            [(edit.start, edit.end) for edit in result.replacement_edits[i]]
        depends = [result.positions[node] for node in fix.depends_on]
        if any(_overlaps(s, t) for s in spans for t in replaced + judged) or \
                any(_overlaps(d, t) for d in depends for t in replaced):
            continue
        accepted.append(i)
        replaced.extend(spans)
        judged.extend(depends)
    return accepted


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """``source`` with the non-overlapping ``edits`` applied (an insertion at
    the start of a replaced range goes before the replacement)."""
    starts = [0] + [m.end() for m in LINE_END.finditer(source)]

    def offset(position: Tuple[int, int]) -> int:
        row, col = position
        return starts[row - 1] + col if row - 1 < len(starts) else len(source)

    ordered = sorted(((offset(e.start), offset(e.end), e.content) for e in edits), reverse=True)
    for start, end, content in ordered:
        source = source[:start] + content + source[end:]
    return source


def fix_source(source: str, path: str, rules: Sequence[RuleClass], *, unsafe: bool = False,
               project=None, segments: Optional[Sequence[int]] = None) -> FixOutcome:
    """Apply every applicable fix until nothing changes; return the final text.
    ``project``: the file's view of the project index (``lint_source``). ``segments``:
    the sorted 1-based rows the text's segments start on (the first is 1); no fix
    crosses one, and ``FixOutcome.segments`` says where they start in the result."""
    outcome = FixOutcome(source, segments=None if segments is None else list(segments))
    result = lint_source(source, path, rules, project=project)
    for _ in range(MAX_ROUNDS):
        starts = outcome.segments
        accepted = _choose(result, unsafe, starts)
        if not accepted:
            outcome.converged = True
            break
        edits: List[Edit] = [edit for i in accepted for edit in result.replacement_edits[i]]
        imports = [text for i in accepted for text in result.fixes[i].imports]
        missing = missing_imports(result.module, imports) if imports else []
        if missing:
            edits.append(result.import_edit(missing))
        placed = []
        if starts is not None:
            placed = [(edit, segment_of(edit, starts, above=k == len(edits) - 1 and bool(missing)))
                      for k, edit in enumerate(edits)]
            if any(segment is None for _, segment in placed):  # pragma: no cover - an import edit inserts
                outcome.converged = True
                break
        new_source = apply_edits(outcome.source, edits)
        if new_source == outcome.source:
            outcome.converged = True
            break
        try:
            # parses the output: a refused round raises
            new_result = lint_source(new_source, path, rules, project=project)
        except ParseError:
            outcome.refused = True
            break
        outcome.source = new_source
        if starts is not None:
            outcome.segments = _shift(starts, placed)
        outcome.applied += len(accepted)
        outcome.applied_codes.extend(result.findings[i].code for i in accepted)
        result = new_result
    outcome.findings = result.findings
    return outcome


def add_noqa(source: str, path: str, rules: Sequence[RuleClass], *, project=None) -> FixOutcome:
    """``source`` with ``# noqa: CODE`` on every line Python reads a comment on for a finding (as
    Ruff's ``--add-noqa``): added to the ``# noqa:`` list there, none where a blanket ``# noqa`` is;
    ``applied``: how many lines got one. TFG001 findings get none. The result is parsed again."""
    result = lint_source(source, path, rules, project=project)
    wanted = [(f.row, f.code) for f in result.findings if f.code != UNUSED_NOQA]
    outcome = FixOutcome(source, findings=result.findings, converged=True)
    edits = add_edits(NoqaIndex(source), wanted) if wanted else []
    if not edits:
        return outcome
    new_source = apply_edits(source, edits)
    try:
        outcome.findings = lint_source(new_source, path, rules, project=project).findings
    except ParseError:  # pragma: no cover - a comment at a line's end cannot break it
        outcome.refused = True
        return outcome
    outcome.source, outcome.applied = new_source, len(edits)
    outcome.applied_codes = sorted({code for _, code in wanted})
    return outcome
