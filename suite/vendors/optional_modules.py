"""Optional vendor modules that are installed but broken must not take down the suite.

`import torch` imports `pynvml` when it is installed (torch/cuda/__init__.py) and catches only ImportError:
a pynvml that raises anything else at import (a broken install, a library that throws while loading)
ends every command that imports torch, `suite list` and the CPU path included. So before torch is
imported, each such module is imported once here; one that raises something other than ImportError is
replaced by a `None` entry in sys.modules, which makes every later `import` of it an ImportError: torch
and the suite's backends then treat it as absent, and `suite list` / `suite env` say what was broken.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

# Modules imported as a side effect of `import torch`, or by the suite's gauges, whose failure is optional.
GUARDED = ("pynvml",)

BROKEN: dict[str, str] = {}  # module name -> what its import raised


def quarantine_broken(names=GUARDED) -> dict[str, str]:
    """Import each of `names` once; a broken one is recorded in BROKEN and hidden. Returns BROKEN."""
    for name in names:
        if name in sys.modules or name in BROKEN:
            continue
        try:
            if importlib.util.find_spec(name) is None:
                continue  # not installed: torch and the backends already handle that
            importlib.import_module(name)
        except ImportError:
            continue  # the ordinary "not usable" every importer already expects
        except Exception as error:  # noqa: BLE001 - anything a broken install raises while importing
            sys.modules[name] = None  # later imports raise ImportError (see the module docstring)
            BROKEN[name] = f"{type(error).__name__}: {error}".strip()
    return BROKEN


def describe() -> list[str]:
    """One line per broken module, for `suite list` and `suite env`."""
    return [
        f"{name} is installed but broken ({why}); treated as not installed" for name, why in BROKEN.items()
    ]
