"""A fake of Habana's `habana_frameworks` package for wiring tests: it runs on the CPU, records calls, and
behaves as the release it is installed as.

The release is the version in a `habana_torch_plugin-X.dist-info` next to this package (tests write it, as
the real wheel's installer does), looked up in suite.backends.habana_releases: the same table the backend
uses, so a test parametrised over releases exercises each release's mode values, default mode, autoload,
op-list names and HMP. Where the table does not know a release's default mode, the install says which
default this bridge has (the backend must then find it out from the bridge, as on a real one). Every call a test may check is appended to CALLS as (event, details). Tests put the
fakes on sys.path only inside the test and drop these modules from sys.modules afterwards.
"""

import importlib.metadata
import os

from suite.backends import habana_releases

CALLS: list = []
try:
    VERSION = importlib.metadata.version("habana-torch-plugin")
except importlib.metadata.PackageNotFoundError:
    VERSION = None
RELEASE, _ = habana_releases.lookup(VERSION)
# The torch build this install runs with. The real bridge reads torch.__version__; here a stand-in written by
# tests/habana_fakes.install (torch_version.txt) lets the CPU torch of the tests play Habana's fork
# ("2.5.1a0+git...") or a stock build, in the test process and in the detection child alike.
_TORCH_VERSION_FILE = os.path.join(os.path.dirname(__file__), "torch_version.txt")
if os.path.isfile(_TORCH_VERSION_FILE):
    with open(_TORCH_VERSION_FILE) as version_file:
        TORCH_VERSION = version_file.read().strip()
else:
    import torch

    TORCH_VERSION = torch.__version__
# The card's generation ("gaudi", "gaudi2", "gaudi3"), as utils.experimental._get_device_type() reports it.
# Here, not there: importing that module would import habana_frameworks.torch and fix the mode. The card is
# the one tests/habana_fakes.install put on the fake PCI bus (card.txt); tests change it with set_generation.
_HERE = os.path.dirname(__file__)


def _installed(name: str, default: str) -> str:
    path = os.path.join(_HERE, name)
    if not os.path.isfile(path):
        return default
    with open(path) as handle:
        return handle.read().strip()


GENERATION = _installed("card.txt", "gaudi")
# What PT_HPU_LAZY_MODE means when unset: the literal of the bridge's os.getenv("PT_HPU_LAZY_MODE", ...) in
# utils/internal.py and autoload/__init__.py, "1" in bridge v1.19.0. The release's default where the table
# knows it; elsewhere the install says which bridge it plays (unset_lazy_mode.txt).
UNSET_LAZY_MODE = _installed(
    "unset_lazy_mode.txt", RELEASE.lazy_value if RELEASE.default_mode != "eager" else RELEASE.eager_value
)


def record(event: str, **details) -> None:
    CALLS.append((event, details))


def events(*names: str) -> list:
    """The recorded event names, keeping only `names` (all if none given)."""
    return [event for event, _ in CALLS if not names or event in names]
