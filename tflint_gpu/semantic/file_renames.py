"""Renaming the file a model is saved to, where its name is written: the string literal that ends
the path a save call is given (``path_literal``: in the call, or bound to a local name, as
``semantic.migration.path_ending`` reads it), rewritten to a new suffix (``semantic.path_text.renamed_file``: ``"ep{epoch:03d}.h5"`` ->
``"ep{epoch:03d}.weights.h5"``), together with every load of the same file in the module, so that
what is saved is still what is loaded. Refused, with the reason, when the name is also written
anywhere the rename would not reach: another string of the module, a load that reads it under
another path, or another checked file of the project (``ProjectIndex.naming``)."""
from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.api import exact_argument
from tflint_gpu.semantic.migration import _DEPTH, PERCENT_END, SAME_END, path_tail
from tflint_gpu.semantic.model import ASSIGNED, ScopeInfo, lookup
from tflint_gpu.semantic.path_text import format_tail, percent_tail, renamed_file
from tflint_gpu.semantic.project import _PATH_TEXT, FLAG_NAMED, file_name, mentioned_files


def path_literal(expr: Optional[cst.BaseExpression], scope: ScopeInfo, resolver,
                 depth: int = 0, hops: Optional[List[Tuple[str, ScopeInfo]]] = None
                 ) -> Optional[Tuple[cst.CSTNode, str]]:
    """The string literal of this module whose text ends the path ``expr`` gives, and that text, as
    ``path_ending`` reads it: the literal itself, the last string of ``"a" "b"``, the text that ends
    an f-string (a ``FormattedStringText``), the right of ``+``/``/``, the template of ``%`` and
    ``.format()``, the last part of ``os.path.join(...)``/``pathlib.Path(...)``, the argument of
    ``str(...)``/``os.fspath(...)``, through a local name bound once. None when the ending comes from
    elsewhere (another module's constant, a flag's default, a parameter, a loop) or is not text.
    Rewriting its end renames the file the path names (what a rename fix edits). ``hops`` gets the
    names read on the way, each with the scope that binds it (their other reads see the rename too)."""
    if expr is None or depth > _DEPTH:
        return None
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return (expr, value) if isinstance(value, str) and value else None
    step = path_tail(expr, scope, resolver)
    if step is not None:
        how, part = step
        found = path_literal(part, scope, resolver, depth + 1, hops)
        if how == SAME_END or found is None:
            return found
        return found if (percent_tail if how == PERCENT_END else format_tail)(found[1]) is not None else None
    if isinstance(expr, cst.FormattedString):
        last = expr.parts[-1] if expr.parts else None
        if isinstance(last, cst.FormattedStringText) and last.value and "\\" not in last.value \
                and "{" not in last.value and "}" not in last.value:
            return last, last.value
        return None
    if isinstance(expr, cst.Name):
        found = lookup(expr.value, scope, expr)
        if found is not None and found.kind == ASSIGNED and expr.value not in found.scope.globals:
            value = found.single_value
            if isinstance(value, cst.BaseExpression):
                if hops is not None:
                    hops.append((expr.value, found.scope))
                return path_literal(value, found.scope, resolver, depth + 1, hops)
    return None


def renamed_literal(node: cst.CSTNode, text: str, new_text: str) -> Optional[cst.CSTNode]:
    """``node`` (``path_literal``'s literal, whose value is ``text``) written to hold ``new_text``,
    which differs from ``text`` at its end only: its quotes, prefix and escapes kept; None when the
    changed end is not written plainly in the source (an escape, a line continuation)."""
    same = 0
    while same < min(len(text), len(new_text)) and text[same] == new_text[same]:
        same += 1
    old_end, new_end = text[same:], new_text[same:]
    if any(c in new_end for c in "\\'\"{}\n"):
        return None
    if isinstance(node, cst.FormattedStringText):
        if not node.value.endswith(old_end):
            return None
        return node.with_changes(value=node.value[:len(node.value) - len(old_end)] + new_end)
    if not isinstance(node, cst.SimpleString):
        return None
    raw = node.value
    quote = raw[len(node.prefix):][:3] if raw[len(node.prefix):][:3] in ('"""', "'''") else raw[len(node.prefix)]
    body = raw[len(node.prefix) + len(quote):len(raw) - len(quote)]
    if not body.endswith(old_end):
        return None
    return node.with_changes(value=raw[:len(node.prefix) + len(quote)] + body[:len(body) - len(old_end)] + new_end
                             + quote)


@dataclass
class Rename:
    """A rename: ``replacements`` (the literals, rewritten) when it can be made, else ``refused`` (why
    not); ``old``/``new``: the saved literal's text before and after; ``loads``: how many loads of the
    file in this module it rewrites too; ``saved``: the saved literal; ``direct``: written in the path
    expression itself (no name read on the way)."""

    old: str
    new: str
    replacements: Dict[cst.CSTNode, cst.CSTNode]
    loads: int = 0
    refused: str = ""
    saved: Optional[cst.CSTNode] = None
    direct: bool = False


class FileRenames:
    """The renames of one module (``ctx.file_renames``)."""

    def __init__(self, graphs) -> None:
        self.graphs = graphs
        self.model = graphs.model
        self.resolver = graphs.resolver
        self._mentions: Optional[Counter] = None

    def literal(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[Tuple[cst.CSTNode, str, bool]]:
        """``path_literal``: the literal of this module that ends the path ``expr``,
        when every name read on the way is read only as the path of a save or a load (a name also
        read elsewhere, ``print(path)`` or ``path + "_full.h5"``, would see the rename too); and whether
        the literal is written in ``expr`` itself (no name read on the way)."""
        hops: List[Tuple[str, ScopeInfo]] = []
        found = path_literal(expr, scope, self.resolver, hops=hops)
        if found is None:
            return None
        for name, binder in hops:
            for use in self.graphs.uses.uses_of(name, binder):
                if use.kind != "argument" or use.arg is None or use.arg.value is not use.name \
                        or not _save_or_load(use.call, use.scope, self.resolver):
                    return None
        return found[0], found[1], not hops

    def mentions(self, name: str) -> int:
        """How many times the module's strings name the file ``name``, the paths of weights saves left
        out (``semantic.project.mentioned_files``)."""
        if self._mentions is None:
            try:
                self._mentions = mentioned_files(ast.parse(self.model.source))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._mentions = Counter()
        return self._mentions[name]

    def rename(self, path: cst.BaseExpression, scope: ScopeInfo, old: Tuple[str, ...], new: str,
               load_methods: FrozenSet[str] = frozenset(), load_functions: FrozenSet[str] = frozenset(),
               call: Optional[cst.Call] = None) -> Optional[Rename]:
        """The rename of the file ``path`` names to end in ``new`` (its suffix among ``old``; ``""``:
        none), with the loads of the same literal text in this module: ``x.<load_methods>(p)`` and
        ``<load_functions>(p)`` (qualified names), ``p`` their first argument or ``filepath=``. None
        when the path does not end in a literal of this module, or the name needs no rename.
        ``call``: the call ``path`` is given to (a weights save's path written in it is left out of
        ``mentions``, as ``semantic.project.mentioned_files`` reads it)."""
        found = self.literal(path, scope)
        if found is None:
            return None
        node, text, direct = found
        new_text = renamed_file(text, old, new)
        name = file_name(text)
        if new_text is None or name is None:
            return None
        rewritten = renamed_literal(node, text, new_text)
        rename = Rename(text, new_text, {}, saved=node, direct=direct)
        if rewritten is None:
            rename.refused = "the name's end is not written plainly"
            return rename
        replacements: Dict[cst.CSTNode, cst.CSTNode] = {node: rewritten}
        loads = 0
        left_out = 1 if direct and _weights_save(call) else 0  # what ``mentioned_files`` does not count
        for load, where in self.model.index.get("Call", ()):
            func = load.func
            if isinstance(func, cst.Attribute) and func.attr.value in load_methods:
                argument = exact_argument(load, 0, "filepath")
            elif load_functions and self.resolver.qualname(func, where) in load_functions:
                argument = exact_argument(load, 0, "filepath")
            else:
                continue
            loaded = self.literal(argument, where) if argument is not None else None
            if loaded is None or file_name(loaded[1]) != name:
                continue
            if loaded[0] in replacements:  # the saved literal itself, through a name
                loads += 1
                continue
            if loaded[1] != text:
                rename.refused = f"a load in this module reads it as `{loaded[1]}`"
                return rename
            again = renamed_literal(loaded[0], text, new_text)
            if again is None:
                rename.refused = "a load's name is not written plainly"
                return rename
            replacements[loaded[0]] = again
            loads += 1
            if left_out and func.attr.value == "load_weights" and argument.deep_equals(path):
                left_out += 1  # a load of the save's very path: not counted either
        if self.mentions(name) != len(replacements) - left_out:
            rename.refused = f"`{name}` is also written elsewhere in this module"
            return rename
        project = self.resolver.project
        others = project.naming(name) if project is not None else ()
        if others:
            shown = ", ".join(f"`{_short(p, project)}`" for p in others[:3])
            rename.refused = f"`{name}` is also named in {shown}{' ...' if len(others) > 3 else ''}"
            return rename
        rename.replacements = replacements
        rename.loads = loads
        return rename


    def flag_default(self, key: str, literal: cst.BaseExpression, old: Tuple[str, ...], new: str,
                     reads: FrozenSet[str], readers: Tuple[Tuple[str, str], ...]) -> Optional[Rename]:
        """The rename of the file the default of the absl flag ``key`` this module defines names
        (``literal``, a plain string: ``flags.DEFINE_string("weights", "./checkpoints/yolov3.tf", ...)``)
        to end in ``new`` (its suffix among ``old``), where the flag's value is read only as the path of
        ``reads`` (``semantic.project.Summary.flag_reads``: ``WEIGHTS_SAVE``, ``WEIGHTS_LOAD``). None when
        the default is not such a literal or needs no rename.
        Refused, with the reason, unless every absl flag of the project whose default names the same
        file (``ProjectIndex.flag_files``: the writing side, ``convert.py``'s ``--output``, and the
        reading side, ``detect.py``'s ``--weights``) gives it the same text and is read only so (by its
        own module, and by the modules that read it without defining it: ``ProjectIndex.flag_readers``;
        ``readers``: this definition's, ``RuleContext.flag_readers``), and no other string of the
        project names the file (``ProjectIndex.naming``): every such default is renamed alike, each
        where it is written. (Notebooks are not in the project's index: a notebook's own default is
        renamed with the modules', theirs do not wait for it; a file checked alone is its own program.)"""
        project = self.resolver.project
        if not isinstance(literal, cst.SimpleString):
            return None
        text = literal.evaluated_value
        if not isinstance(text, str):
            return None
        new_text = renamed_file(text, old, new)
        name = file_name(text)
        if new_text is None or name is None:
            return None
        rename = Rename(text, new_text, {}, saved=literal, direct=True)
        rewritten = renamed_literal(literal, text, new_text)
        if rewritten is None:
            rename.refused = "the name's end is not written plainly"
            return rename
        own = project.own_name() if project is not None else None
        members = [(own or "this module", key, text[-_PATH_TEXT:], readers)] + [
            (module, flag, tail, project.index.flag_readers(module, flag, project.deps))
            for module, flag, tail in (project.flag_files(name) if project is not None else ())
            if (module, flag) != (own, key)]
        modules = {member[0] for member in members}
        for module, flag, tail, read in members:
            shown = f"`{module}`'s `--{flag.partition(':')[2]}`"
            if tail != text[-_PATH_TEXT:]:
                rename.refused = f"{shown} defaults to `{tail}`"
                return rename
            for how, reader in read:
                if how == FLAG_NAMED:
                    rename.refused = f"`{module}` also names `{name}` in another string"
                    return rename
                if how not in reads:
                    rename.refused = (f"`{reader}` reads `FLAGS.{flag.partition(':')[2]}` otherwise"
                                      f"{'' if reader == module else f' (the value of {shown})'}")
                    return rename
        strays = [p for p in (project.index.naming(name, project.deps) if project is not None else ())
                  if project.index.module_name(p) is None or project.index.module_name(p)[0] not in modules]
        if strays:
            shown = ", ".join(f"`{_short(p, project)}`" for p in strays[:3])
            rename.refused = f"`{name}` is also named in {shown}{' ...' if len(strays) > 3 else ''}"
            return rename
        stem = file_name(new_text)[:-len(new)]
        for other in sorted(({stem + suffix for suffix in old} | {stem + new}) - {name}):
            # a suffixless word (`name='yolov3'`, a model's) is a file only where a flag gives it as a path
            named = bool(project is not None and project.flag_files(other)) or (
                "." in other and bool(self.mentions(other) or (project is not None and project.naming(other))))
            if named:
                rename.refused = f"`{other}` is named too, and would be `{stem + new}` as well"
                return rename
        rename.replacements = {literal: rewritten}
        rename.loads = sum(1 for how, _ in readers if how == "load_weights")
        return rename


# Calls a path is read by when it names a saved model or its weights.
_SAVE_LOAD_METHODS = frozenset({"save", "save_weights", "load_weights"})
_SAVE_LOAD_FUNCTIONS = frozenset({"keras.models.load_model", "keras.saving.load_model", "keras.models.save_model",
                                  "keras.saving.save_model", "keras.callbacks.ModelCheckpoint"})


def _save_or_load(call: Optional[cst.Call], scope: ScopeInfo, resolver) -> bool:
    if call is None:
        return False
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in _SAVE_LOAD_METHODS:
        return True
    return resolver.qualname(call.func, scope) in _SAVE_LOAD_FUNCTIONS


def _weights_save(call: Optional[cst.Call]) -> bool:
    """Does ``semantic.project.mentioned_files`` leave the path given to ``call`` out (a weights save)?"""
    if call is None:
        return False
    func = call.func
    if (isinstance(func, cst.Attribute) and func.attr.value == "save_weights") \
            or (isinstance(func, cst.Name) and func.value == "save_weights"):
        return True
    return any(a.keyword is not None and a.keyword.value == "save_weights_only" and isinstance(a.value, cst.Name)
               and a.value.value == "True" for a in call.args)


def _short(path: str, project) -> str:
    import os

    try:
        return os.path.relpath(path, project.index.root)
    except ValueError:
        return path
