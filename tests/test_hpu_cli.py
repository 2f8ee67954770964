"""Without Gaudi software (this machine): `suite run --backend hpu` says in one line what is missing and how
to get it, and `suite list` shows hpu as unavailable with the same reason."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from suite.backends.hpu import HPUBackend

from suite.cli import main

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("habana_frameworks") is not None, reason="Habana software is installed here"
)


def test_run_on_hpu_without_habana_software_exits_2_in_one_line(capsys):
    # The real import path: no Habana fake is loaded (the wiring tests' fakes are undone after each test).
    assert not [name for name in sys.modules if name.split(".")[0] == "habana_frameworks"]
    assert main(["run", "--backend", "hpu"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("suite: error: backend 'hpu' is not available: Habana software not installed")
    assert "habana_frameworks" in err and "Habana's PyTorch container" in err
    assert "habana_frameworks" not in sys.modules


def test_list_shows_hpu_unavailable_with_the_reason(capsys):
    ok, reason = HPUBackend.is_available()
    assert not ok
    assert main(["list"]) == 0
    hpu_line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("hpu "))
    assert "unavailable" in hpu_line and reason in hpu_line
