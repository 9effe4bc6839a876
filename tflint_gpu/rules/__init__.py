"""The rule catalogue: one module a rule, named for what it finds.

Each rule class registers itself (``rules.base.REGISTRY``) by its code when its module
is imported. Importing this package imports no rule module: the first read of
``REGISTRY`` (or ``all_rules``, ``all_codes``, ``describe``) imports them all
(``load_all``), so that ``rules.docs`` and the command line's start (``--version``,
``rules``, a run answered from the cache) load neither LibCST nor the rules
(``tflint_gpu.catalogue`` describes them).
"""
import importlib
import pkgutil

_LOADED = False


def load_all() -> None:
    """Import every rule module (once)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True  # first: a rule module that reads the registry while it loads gets what is there so far
    try:
        for _module in pkgutil.iter_modules(__path__):
            if _module.name not in ("base", "docs"):
                importlib.import_module(f"{__name__}.{_module.name}")
    except BaseException:
        _LOADED = False
        raise
