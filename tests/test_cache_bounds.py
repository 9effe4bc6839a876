"""The caches are bounded (issue 34): entries of files that no longer exist are dropped when the
cache is written, and at most ``MAX_ENTRIES`` (about ``MAX_BYTES``) of the most recently used are kept."""
from __future__ import annotations

import json

from tflint_gpu.engine import cache as caches
from tflint_gpu.engine.cache import Cache, ProjectCache
from tflint_gpu.findings import Finding
from tflint_gpu.semantic.project import content_digest, summarize_source


def _finding(path: str) -> Finding:
    return Finding("TFG201", "message " * 20, path, 1, 0, 1, 4)


def _files(tmp_path, count: int):
    paths = []
    for i in range(count):
        path = tmp_path / f"f{i}.py"
        path.write_text(f"x = {i}\n")
        paths.append(str(path))
    return paths


def _saved_paths(cache: Cache):
    return list(json.loads(cache.path.read_text())["entries"])


def test_entries_of_deleted_files_are_dropped(tmp_path):
    a, b, c = _files(tmp_path, 3)
    cache = Cache(tmp_path / "cache", "key")
    for path in (a, b):
        cache.put(path, [_finding(path)])
    cache.save()
    assert _saved_paths(cache) == [a, b]
    (tmp_path / "f0.py").unlink()
    again = Cache(tmp_path / "cache", "key")
    again.put(c, [])
    again.save()
    assert _saved_paths(again) == [b, c]
    assert Cache(tmp_path / "cache", "key").get(b) == [_finding(b)]


def test_the_cache_keeps_the_most_recently_used_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(caches, "MAX_ENTRIES", 3)
    paths = _files(tmp_path, 5)
    cache = Cache(tmp_path / "cache", "key")
    for path in paths:
        cache.put(path, [])
    cache.save()
    assert _saved_paths(cache) == paths[2:]
    again = Cache(tmp_path / "cache", "key")
    assert again.get(paths[2]) == []  # read now: the most recent
    again.put(paths[0], [])
    again.save()
    assert _saved_paths(again) == [paths[4], paths[2], paths[0]]


def test_the_cache_is_bounded_in_bytes(tmp_path, monkeypatch):
    paths = _files(tmp_path, 40)
    cache = Cache(tmp_path / "cache", "key")
    for path in paths:
        cache.put(path, [_finding(path)] * 10)
    cache.save()
    whole = cache.path.stat().st_size
    monkeypatch.setattr(caches, "MAX_BYTES", whole // 4)
    cache.dirty = True
    cache.save()
    kept = _saved_paths(cache)
    assert cache.path.stat().st_size <= whole // 4 + 100
    assert 5 < len(kept) < 12 and kept == paths[-len(kept):]


def test_the_project_cache_drops_deleted_files_and_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(caches, "MAX_ENTRIES", 2)
    paths = _files(tmp_path, 4)
    store = ProjectCache(tmp_path / "cache")
    for path in paths:
        text = open(path).read()
        store.add(path, content_digest(text.encode()), summarize_source(text, path))
    (tmp_path / "f3.py").unlink()
    store.save()
    data = json.loads(store.path.read_text())
    assert list(data["files"]) == paths[1:3]
    assert len(data["summaries"]) == 2
