"""The package's optional compiled extensions (setup.py builds them at install; without a C
compiler they are absent and their callers' numpy paths decide): found, imported and held to the
calling convention the package speaks."""
from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType


def load_extension(module: str, abi: int, what: str) -> ModuleType | None:
    """The compiled `module` (dotted name), or None when this install did not build it. Raises
    `ImportError` for a build of another calling convention (its `ABI` ≠ `abi`: a stale build left
    by an older `pip install -e .`), naming its file and the fix; `what` names it in that message
    ("the compiled contact read"). A build that does not load raises its own import error."""
    if importlib.util.find_spec(module) is None:
        return None
    extension = importlib.import_module(module)
    found = getattr(extension, "ABI", None)
    if found != abi:
        raise ImportError(f"{extension.__file__}: a stale build of {what} (ABI {found}, this package needs {abi}): "
                          "rebuild it with `pip install -e .`")
    return extension


__all__ = ["load_extension"]
