"""Origins: the download a path comes from."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse


def _facts(source: str):
    ctx = analyse(cst.parse_module(textwrap.dedent(source).lstrip("\n")), [])
    return ctx, ctx.model.root


def _arguments(ctx, func_name: str):
    """The first argument of each call of ``func_name`` (its last attribute), with its scope."""
    found = []
    for call, scope in ctx.model.index["Call"]:
        func = call.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        if name == func_name:
            found.append((call.args[0].value, scope))
    return found


def test_download_through_results_names_and_literal_paths():
    ctx, _root = _facts("""
        import urllib.request
        import keras
        from huggingface_hub import hf_hub_download

        a = keras.utils.get_file("w.h5", origin="https://x/w.h5")
        use(a)
        use(hf_hub_download("org/model", "model.keras"))
        urllib.request.urlretrieve(url, "net.hdf5")
        use("net.hdf5")
        use("other.h5")
        a = "local.h5"
        use(a)

        def inner():
            path = keras.utils.get_file(origin="https://x/y.weights.h5?raw=1")
            use(path)
        """)
    origins = ctx.origins
    got = []
    for expr, scope in _arguments(ctx, "use"):
        download = origins.download(expr, scope, at=expr)
        got.append(None if download is None else (ctx.resolver.qualname(download.func, scope),
                                                  origins.suffix(download)))
    assert got == [("keras.utils.get_file", ".h5"), ("huggingface_hub.hf_hub_download", ".keras"),
                   ("urllib.request.urlretrieve", ".hdf5"), None, None, ("keras.utils.get_file", ".h5")]
