"""Of which of the project's classes an object is an instance, across its modules.

``Instances.classes(expr, scope)`` answers, for an object read in ``scope``
(``model`` in ``model.build(...)``), the classes it may have been made from,
when every value the flow finds for it (``semantic.flow``: every binding that
reaches the read, through the module's own functions) is a call that makes an
instance of one of the project's classes:

* a call of a class of the module (``Net()``);
* a call of a class of another project module, or of a top-level def of one
  whose every ``return`` is such a call, through such defs
  (``model = resnet_50()`` where ``models/resnet.py`` has ``def resnet_50():
  return ResNetTypeII(...)``: ``ProjectIndex.made_classes``).

None when one value is anything else (a library call, a parameter no call
gives, a method's result) or the object may be something the module does not
show. A ``None`` binding is set aside (``model = None`` before the branches
that make it).

Each class comes as a ``MadeClass``: its name, the names its body and the
bodies of its project bases bind (its own methods, ``build`` among them:
``Summary.members`` for another module's class), and its outside bases (raw
qualified names as imported, ``tensorflow.keras.Model``), depth first.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.model import CLASS, ScopeInfo, lookup


@dataclass(frozen=True)
class MadeClass:
    name: str  # the class's name (a class of another module: its absolute name)
    members: FrozenSet[str]  # names bound by its body and by its project bases' bodies
    bases: Tuple[str, ...]  # its bases outside the project (raw qualified names), depth first
    local: Optional[ScopeInfo] = None  # the class, when it is the module's own


class Instances:
    def __init__(self, graphs, resolver) -> None:
        self.graphs = graphs
        self.resolver = resolver
        self._classes: Dict[int, Tuple[cst.BaseExpression, Optional[List[MadeClass]]]] = {}

    def classes(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[List[MadeClass]]:
        """The project classes ``expr`` may be an instance of (see the module's text), or None."""
        kept = self._classes.get(id(expr))
        if kept is not None and kept[0] is expr:
            return kept[1]
        found = self._read(expr, scope)
        self._classes[id(expr)] = (expr, found)
        return found

    def _read(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[List[MadeClass]]:
        sources = self.graphs.flow.sources(expr, scope)
        values = sources.values()
        if sources.unknown or not values:
            return None
        found: List[MadeClass] = []
        for value, where in values:
            made = self._made(value, where)
            if made is None:
                return None
            found.extend(c for c in made if all(c.name != f.name for f in found))
        return found

    def _made(self, value: cst.BaseExpression, where: ScopeInfo) -> Optional[List[MadeClass]]:
        if not isinstance(value, cst.Call):
            return None
        func = value.func
        if isinstance(func, cst.Name):
            bound = lookup(func.value, where)
            if bound is not None and bound.kind == CLASS:
                return [self._local(bound.target)]
        raw = self.resolver.raw_qualname(func, where)
        project = self.resolver.project
        if raw is None or project is None:
            return None
        made = project.made_classes(raw)
        if made is None:
            return None
        return [self._project(name) for name in made]

    def _local(self, cls: ScopeInfo) -> MadeClass:
        members = set()
        for current in self.graphs.objects.mro(cls):
            members.update(current.defs)
            members.update(current.classes)
            members.update(current.assigned)
        outside = []
        for raw in self.graphs.class_bases(cls):  # a project base's own bases follow it
            project_members = self._project_members(raw)
            if project_members is None:
                outside.append(raw)
            else:
                members.update(project_members)
        return MadeClass(cls.name, frozenset(members), tuple(outside), cls)

    def _project(self, absolute: str) -> MadeClass:
        members = set()
        outside = []
        for raw in self.resolver.class_bases(absolute):  # itself, then its bases across modules
            project_members = self._project_members(raw)
            if project_members is None:
                outside.append(raw)
            else:
                members.update(project_members)
        return MadeClass(absolute, frozenset(members), tuple(outside))

    def _project_members(self, raw: str) -> Optional[Tuple[str, ...]]:
        project = self.resolver.project
        return project.class_members(raw) if project is not None else None
