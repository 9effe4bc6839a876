"""``tflint-gpu server``: a language server over stdio (pygls 2, lsprotocol).

It publishes diagnostics when a Python document is opened, changed (after a
short pause in typing) or saved, each with its rule code and severity, and
offers code actions: apply a finding's fix (safe; unsafe ones labelled as
such, only where the rule has one), fix every safe finding of the document
(``source.fixAll.tflint-gpu``), and add ``# noqa: CODE`` to the line. Hovering
over a finding shows the rule's summary and why it matters.

Settings are those of each document's nearest configuration (as the command
line and the flake8 plugin read them), read again when a ``pyproject.toml``
or ``tflint-gpu.toml`` changes. A document that does not parse gets one
diagnostic at the error, a broken configuration one diagnostic naming it; the
server goes on. Columns are converted to the client's position encoding.
"""
from __future__ import annotations

import asyncio
import re
from typing import Dict, List, Optional, Sequence, Tuple
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

import tflint_gpu
from tflint_gpu import config
from tflint_gpu.documents import Documents
from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import ParseError, file_noqa, lint_source
from tflint_gpu.findings import Edit, Finding, Safety
from tflint_gpu.rules.base import REGISTRY, all_rules

SOURCE = "tflint-gpu"
FIX_ALL = "source.fixAll.tflint-gpu"
CONFIG_FILES = ("pyproject.toml", "tflint-gpu.toml")
DEBOUNCE_SECONDS = 0.15
_NOQA = re.compile(r"#\s*noqa(?::\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def uri_path(uri: str) -> str:
    """The file system path of a ``file:`` URI (else the URI itself, as a name)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _utf16(line: str, column: int) -> int:
    return len(line[:column].encode("utf-16-le")) // 2


class Checked:
    """One document's findings at one version of its text."""

    def __init__(self, text: str, path: str, findings: Sequence[Finding], problem: Optional[types.Diagnostic]) -> None:
        self.text = text
        self.path = path
        self.lines = text.split("\n")
        self.findings = list(findings)
        self.problem = problem


class TflintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("tflint-gpu", tflint_gpu.__version__,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.documents = Documents()
        self.checked: Dict[str, Checked] = {}
        self.pending: Dict[str, asyncio.TimerHandle] = {}
        self.utf16 = True

    # -- positions ----------------------------------------------------------------
    def position(self, lines: List[str], row: int, col: int) -> types.Position:
        """An LSP position from a finding's 1-based row and 0-based code-point column."""
        line = lines[row - 1] if 0 < row <= len(lines) else ""
        return types.Position(line=max(row - 1, 0), character=_utf16(line, col) if self.utf16 else col)

    def range_of(self, lines: List[str], start: Tuple[int, int], end: Tuple[int, int]) -> types.Range:
        return types.Range(start=self.position(lines, *start), end=self.position(lines, *end))

    # -- checking -----------------------------------------------------------------
    def check(self, uri: str) -> Optional[Checked]:
        """Lint the document's current text; its findings are kept for code actions and hovers."""
        try:
            document = self.workspace.get_text_document(uri)
            text = document.source
        except Exception:  # closed meanwhile
            return None
        path = uri_path(uri)
        findings: List[Finding] = []
        problem = None
        try:
            settings = self.documents.settings_for(path)
            if not settings.is_excluded(path) and not file_noqa(text):
                findings = lint_source(text, path, settings.rules_for(path),
                                       project=self.documents.project_for(path, settings),
                                       target=settings.target_for(path)).findings
        except config.ConfigError as error:
            problem = types.Diagnostic(range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
                                       message=f"configuration error: {error}", source=SOURCE,
                                       severity=types.DiagnosticSeverity.Error)
        except ParseError as error:
            row, col = error.position or (1, 1)
            start = self.position(text.split("\n"), row, max(col - 1, 0))
            problem = types.Diagnostic(range=types.Range(start=start, end=start), message=error.reason,
                                       source=SOURCE, code="invalid-syntax",
                                       severity=types.DiagnosticSeverity.Error)
        except Exception as error:  # a crash of the analysis: a message, never the server's end
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error,
                message=f"tflint-gpu: the analysis of {path} crashed ({type(error).__name__}: {error})"))
            return None
        checked = Checked(text, path, findings, problem)
        self.checked[uri] = checked
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=getattr(document, "version", None), diagnostics=self.diagnostics(checked)))
        return checked

    def diagnostics(self, checked: Checked) -> List[types.Diagnostic]:
        found = [self.diagnostic(checked, f) for f in checked.findings]
        return ([checked.problem] if checked.problem else []) + found

    def diagnostic(self, checked: Checked, finding: Finding) -> types.Diagnostic:
        rule = REGISTRY.get(finding.code)
        fix = finding.fix
        return types.Diagnostic(
            range=self.range_of(checked.lines, (finding.row, finding.col), (finding.end_row, finding.end_col)),
            message=finding.message, source=SOURCE, code=finding.code,
            severity=types.DiagnosticSeverity.Warning,
            data={"name": rule.name if rule else finding.name,
                  "fix": fix.safety.value if fix is not None else None})

    def schedule(self, uri: str, delay: float) -> None:
        """Check ``uri`` after ``delay`` seconds, unless it changes again before."""
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self.pending[uri] = loop.call_later(delay, self._run_pending, uri)

    def _run_pending(self, uri: str) -> None:
        self.pending.pop(uri, None)
        self.check(uri)

    def current(self, uri: str) -> Optional[Checked]:
        """The findings of the document's current text (checked now if it changed since)."""
        checked = self.checked.get(uri)
        try:
            text = self.workspace.get_text_document(uri).source
        except Exception:
            return checked
        if checked is None or checked.text != text:
            if uri in self.pending:
                self.pending.pop(uri).cancel()
            checked = self.check(uri)
        return checked

    # -- edits --------------------------------------------------------------------
    def text_edits(self, checked: Checked, edits: Sequence[Edit]) -> List[types.TextEdit]:
        return [types.TextEdit(range=self.range_of(checked.lines, e.start, e.end), new_text=e.content)
                for e in edits]

    def workspace_edit(self, uri: str, edits: List[types.TextEdit]) -> types.WorkspaceEdit:
        return types.WorkspaceEdit(changes={uri: edits})

    def whole_document(self, checked: Checked, new_text: str) -> types.TextEdit:
        last = len(checked.lines)
        return types.TextEdit(range=self.range_of(checked.lines, (1, 0), (last, len(checked.lines[-1]))),
                              new_text=new_text)

    def noqa_edit(self, checked: Checked, finding: Finding) -> Optional[types.TextEdit]:
        """``# noqa: CODE`` at the end of the finding's first line, or the code added to the
        ``# noqa:`` already there; None where a blanket ``# noqa`` covers the line already."""
        line = checked.lines[finding.row - 1].rstrip("\r") if finding.row <= len(checked.lines) else ""
        match = _NOQA.search(line)
        if match is not None and not match.group("codes"):
            return None
        if match is not None:
            start = end = match.end("codes")
            text = f", {finding.code}"
        else:
            start, end = len(line.rstrip()), len(line)
            text = f"  # noqa: {finding.code}"
        return types.TextEdit(range=self.range_of(checked.lines, (finding.row, start), (finding.row, end)),
                              new_text=text)

    def fix_all(self, uri: str, checked: Checked) -> Optional[types.CodeAction]:
        if not any(f.fix is not None and f.fix.safety == Safety.SAFE for f in checked.findings):
            return None
        try:
            settings = self.documents.settings_for(checked.path)
            outcome = fix_source(checked.text, checked.path, settings.rules_for(checked.path), unsafe=False,
                                 project=self.documents.project_for(checked.path, settings))
        except (config.ConfigError, ParseError):
            return None
        if outcome.source == checked.text:
            return None
        return types.CodeAction(title="tflint-gpu: fix all safe findings", kind=FIX_ALL,
                                edit=self.workspace_edit(uri, [self.whole_document(checked, outcome.source)]))


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position):
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _kind_wanted(only: Optional[Sequence[str]], kind: str) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def build_server() -> TflintServer:
    server = TflintServer()
    list(all_rules())

    @server.feature(types.INITIALIZED)
    def initialized(ls: TflintServer, params: types.InitializedParams) -> None:
        encoding = ls.workspace.position_encoding if hasattr(ls.workspace, "position_encoding") else None
        ls.utf16 = encoding in (None, types.PositionEncodingKind.Utf16)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TflintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.check(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TflintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TflintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri_path(uri).endswith(CONFIG_FILES) or uri_path(uri).endswith(".py"):
            ls.documents.reload()  # a configuration, or a module other documents import
        if uri_path(uri).endswith(CONFIG_FILES):
            for other in list(ls.checked):
                ls.check(other)
        else:
            ls.check(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TflintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.checked.pop(uri, None)
        if uri in ls.pending:
            ls.pending.pop(uri).cancel()
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: TflintServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.documents.reload()
        if any(uri_path(change.uri).endswith(CONFIG_FILES) for change in params.changes):
            for uri in list(ls.checked):
                ls.check(uri)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False))
    def code_action(ls: TflintServer, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        checked = ls.current(uri)
        if checked is None:
            return []
        only = params.context.only
        actions: List[types.CodeAction] = []
        if _kind_wanted(only, types.CodeActionKind.QuickFix):
            for finding in checked.findings:
                diagnostic = ls.diagnostic(checked, finding)
                if not _overlaps(diagnostic.range, params.range):
                    continue
                if finding.fix is not None:
                    unsafe = finding.fix.safety == Safety.UNSAFE
                    label = " (unsafe)" if unsafe else ""
                    actions.append(types.CodeAction(
                        title=f"tflint-gpu: {finding.fix.message}{label} ({finding.code})",
                        kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], is_preferred=not unsafe,
                        edit=ls.workspace_edit(uri, ls.text_edits(checked, finding.fix.edits))))
                noqa = ls.noqa_edit(checked, finding)
                if noqa is not None:
                    actions.append(types.CodeAction(
                        title=f"tflint-gpu: add `# noqa: {finding.code}` to this line",
                        kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                        edit=ls.workspace_edit(uri, [noqa])))
        if _kind_wanted(only, FIX_ALL) or _kind_wanted(only, types.CodeActionKind.SourceFixAll):
            fix_all = ls.fix_all(uri, checked)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TflintServer, params: types.HoverParams) -> Optional[types.Hover]:
        checked = ls.current(params.text_document.uri)
        if checked is None:
            return None
        at = types.Range(start=params.position, end=params.position)
        parts = []
        for finding in checked.findings:
            diagnostic = ls.diagnostic(checked, finding)
            rule = REGISTRY.get(finding.code)
            if rule is not None and _overlaps(diagnostic.range, at):
                parts.append(hover_text(rule))
        if not parts:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value="\n\n---\n\n".join(dict.fromkeys(parts))))

    return server


def hover_text(rule) -> str:
    """The rule's name and code, and the first two sections of its docs (what it does, why)."""
    docs = rule.docs()
    sections = re.split(r"^## ", docs, flags=re.MULTILINE)
    kept = [s for s in sections if s.startswith(("What it does", "Why is this bad?"))]
    body = "\n".join("**" + s.replace("\n", "**\n", 1) for s in kept).strip() or rule.summary()
    fix = rule.fix_safety.value if rule.fix_safety else "none"
    return f"### {rule.code} {rule.name}\n\nFix: {fix}.\n\n{body}"


def main() -> int:
    build_server().start_io()
    return 0
