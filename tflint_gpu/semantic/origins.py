"""Where a file path comes from: a download.

``Origins.download(expr, scope, at)`` answers, for an expression used as a
path (``load_model(path)``), the call that downloaded the file it names, if
the file says so:

* the path is a download call's result: ``keras.utils.get_file(...)``,
  ``huggingface_hub.hf_hub_download(...)``, ``gdown.download(...)``,
  ``wget.download(...)``; directly or through a name whose binding live at the
  read (``at``) is one;
* the path is a string literal that a download call of the module writes to:
  ``urllib.request.urlretrieve(url, "model.h5")`` then
  ``load_model("model.h5")`` (also ``gdown.download(url, "model.h5")``).

``suffix(call)``: the file suffix (``".h5"``, ``".keras"``...) a download
call's string arguments name (its file name, else its URL), or None.
"""
from __future__ import annotations

import os
from typing import Optional

import libcst as cst

from tflint_gpu.semantic.model import ASSIGNED, ScopeInfo, assigned

DOWNLOADS = frozenset({
    "keras.utils.get_file", "huggingface_hub.hf_hub_download", "gdown.download", "wget.download",
    "urllib.request.urlretrieve",
})
# Those whose result is the downloaded file's path (urlretrieve returns a tuple).
_RETURN_PATH = DOWNLOADS - {"urllib.request.urlretrieve"}
_DEPTH = 3


def _strings(call: cst.Call):
    for arg in call.args:
        if isinstance(arg.value, cst.SimpleString):
            value = arg.value.evaluated_value
            if isinstance(value, str):
                yield value


class Origins:
    def __init__(self, model, resolver) -> None:
        self.model = model
        self.resolver = resolver
        self._downloads = None

    def _qualname(self, call: cst.Call, scope: ScopeInfo) -> Optional[str]:
        return self.resolver.qualname(call.func, scope)

    def download(self, expr: Optional[cst.BaseExpression], scope: ScopeInfo,
                 at: Optional[cst.CSTNode] = None, depth: int = 0) -> Optional[cst.Call]:
        if expr is None or depth > _DEPTH:
            return None
        if isinstance(expr, cst.Call):
            return expr if self._qualname(expr, scope) in _RETURN_PATH else None
        if isinstance(expr, cst.Name):
            found = assigned(expr.value, scope, at if at is not None else expr)
            if found is None or found.kind != ASSIGNED:
                return None
            value = found.single_value
            if isinstance(value, cst.BaseExpression):
                return self.download(value, found.scope, value, depth + 1)
            return None
        if isinstance(expr, cst.SimpleString):
            path = expr.evaluated_value
            if not isinstance(path, str) or not path:
                return None
            for call, where in self._all_downloads():
                if path in _strings(call):
                    return call
        return None

    def _all_downloads(self):
        if self._downloads is None:
            self._downloads = [(call, scope) for call, scope in self.model.index.get("Call", ())
                               if self._qualname(call, scope) in DOWNLOADS]
        return self._downloads

    @staticmethod
    def suffix(call: cst.Call) -> Optional[str]:
        names = [os.path.splitext(text.split("?")[0])[1].lower() for text in _strings(call)]
        found = [name for name in names if name]
        return found[-1] if found else None


__all__ = ["Origins", "DOWNLOADS"]
