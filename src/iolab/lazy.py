"""A package's names resolved when first asked for (PEP 562), so that a command loads only
the modules it uses: `iolab --help` no use case, `iolab history` no runner nor importer.

A package gives `__getattr__ = lazy.resolver(__name__, {module: (name, ...)})` and imports
the same names under `if TYPE_CHECKING:` for the type checker. No name may also be one of
the package's modules: importing that module would put it in the name's place
(tests/test_imports.py holds it).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def resolver(package: str, homes: Mapping[str, tuple[str, ...]]) -> Callable[[str], object]:
    """The package's `__getattr__`: each name imported from its module the first time it is
    asked for, then kept in the package as if imported there."""
    home = {name: module for module, names in homes.items() for name in names}

    def resolve(name: str) -> object:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return resolve
