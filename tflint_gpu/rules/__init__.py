"""The rule catalogue: one module a rule, named for what it finds.

Importing this package imports every rule module, and each rule class
registers itself (``rules.base.REGISTRY``) by its code.
"""
import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")
