"""A run's project index answers ``locate`` from folder listings (``ProjectIndex.list_folders``): the same
answers as a ``stat`` per candidate, for every kind of entry."""
from __future__ import annotations

import os

import pytest

from tflint_gpu.semantic.project import FILE, NAMESPACE, PACKAGE, ProjectIndex

NAMES = ["pkg", "pkg.mod", "pkg.sub", "pkg.sub.deep", "pkg.missing", "top", "ns", "ns.inner", "src", "inside",
         "inside.leaf", "linked", "linkedpkg", "linkedpkg.x", "broken", "dirnoinit", "dirnoinit.m", "numpy", "os",
         "pkg.mod.attr", "top.x", "weird", "Pkg", "TOP", "fake", "fake.py"]


def build(root):
    files = {"pkg/__init__.py": "", "pkg/mod.py": "", "pkg/sub/__init__.py": "", "pkg/sub/deep.py": "",
             "top.py": "", "ns/inner.py": "", "src/inside/__init__.py": "", "src/inside/leaf.py": "",
             "real/linked_target.py": "", "realpkg/__init__.py": "", "realpkg/x.py": "", "dirnoinit/m.py": "",
             "weird/__init__.py/keep": ""}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "fake").mkdir()
    (root / "fake.py").mkdir()  # a folder named like a module: not a module file
    os.symlink(root / "real" / "linked_target.py", root / "linked.py")
    os.symlink(root / "realpkg", root / "linkedpkg")
    os.symlink(root / "nowhere.py", root / "broken.py")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
def test_listing_answers_as_stat_does(tmp_path):
    build(tmp_path)
    plain, listed = ProjectIndex(str(tmp_path)), ProjectIndex(str(tmp_path))
    listed.list_folders()
    answers = {name: plain.locate(name) for name in NAMES}
    assert {name: listed.locate(name) for name in NAMES} == answers
    assert listed._listings  # the listings answered
    assert answers["pkg"][0] == PACKAGE and answers["pkg.mod"][0] == FILE and answers["ns"][0] == NAMESPACE
    assert answers["linked"] is not None and answers["linkedpkg.x"] is not None and answers["broken"] is None
    assert answers["weird"] is not None and answers["weird"][0] == NAMESPACE  # __init__.py is a folder there


def test_an_unlistable_folder_falls_back_to_stat(tmp_path, monkeypatch):
    build(tmp_path)
    from tflint_gpu.semantic import project

    monkeypatch.setattr(project, "_listing", lambda folder: False)
    listed = ProjectIndex(str(tmp_path))
    listed.list_folders()
    assert listed.locate("pkg.mod") == ProjectIndex(str(tmp_path)).locate("pkg.mod") != None  # noqa: E711
