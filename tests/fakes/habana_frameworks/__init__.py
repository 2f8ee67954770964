"""A fake of Habana's `habana_frameworks` package for wiring tests: it runs on the CPU, records calls, and
behaves as the release it is installed as.

The release is the version in a `habana_torch_plugin-X.dist-info` next to this package (tests write it, as
the real wheel's installer does), looked up in suite.backends.habana_releases: the same table the backend
uses, so a test parametrised over releases exercises each release's mode values, default mode, autoload,
op-list names and HMP. Every call a test may check is appended to CALLS as (event, details). Tests put the
fakes on sys.path only inside the test and drop these modules from sys.modules afterwards.
"""

import importlib.metadata

from suite.backends import habana_releases

CALLS: list = []
try:
    VERSION = importlib.metadata.version("habana-torch-plugin")
except importlib.metadata.PackageNotFoundError:
    VERSION = None
RELEASE, _ = habana_releases.lookup(VERSION)
# The card's generation ("gaudi", "gaudi2", "gaudi3"), as utils.experimental._get_device_type() reports it.
# Here, not there: importing that module would import habana_frameworks.torch and fix the mode.
GENERATION = "gaudi"


def record(event: str, **details) -> None:
    CALLS.append((event, details))


def events(*names: str) -> list:
    """The recorded event names, keeping only `names` (all if none given)."""
    return [event for event, _ in CALLS if not names or event in names]
