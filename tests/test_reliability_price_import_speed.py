"""`suite prices import` does work per distinct line of the catalog, not per scalar of every instance: the
catalog is written as `yaml.safe_dump` writes it, byte for byte, with PyYAML's emitter run once per
distinct (field, value) line instead of for every instance's eleven fields (minutes for a list of 200,000
rows), and a GPU's description is parsed once per text. The time itself is measured by
benchmarks/price_import.py, never asserted here: these tests count the work."""

from __future__ import annotations

import ast
import glob
import os
import sys

import pytest
import yaml
from conftest import ROOT

from suite.prices import importer as price_import

HOSTILE = [
    "yes",
    "null",
    "~",
    "1_0",
    "2026-01-01",
    "0x10",
    "1.5",
    ".inf",
    "a: b",
    "a #b",
    "-x",
    "'q'",
    '"d"',
    "x" * 127,
    "x" * 128,  # a complex key (`? ...`) from 128 characters
    "line\nbreak",
    "ünï",
    "",
    " lead",
    "[x]",
    "\u2028sep",
    "\x85nel",
    "a" * 300 + " " + "b" * 50,  # folded at width 120
    "n1-standard-8+1xT4",
    "---",
]


def _dump(catalog: dict) -> str:
    return yaml.safe_dump(catalog, sort_keys=False, allow_unicode=True, width=120)


@pytest.mark.parametrize("text", HOSTILE)
def test_the_catalog_written_is_what_safe_dump_writes_for_any_name_or_value(text):
    entry = {"provider": text, "n": 3, "price": 1e17, "small": -1e-05, "spot": None, "on": True, "one": 1.0}
    catalog = {
        "name": "c",
        "as_of": "2026-01-01",
        "instances": {"a": {"x": 1}, text: entry, "z": {"note": text}},
    }
    assert price_import.to_yaml(catalog) == _dump(catalog)


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "suite/prices/catalogs/*.yaml"))))
def test_the_shipped_catalogs_are_written_as_safe_dump_writes_them(path):
    with open(path, encoding="utf-8") as file:
        catalog = yaml.safe_load(file)
    assert price_import.to_yaml(catalog) == _dump(catalog)


def _catalog(instances: int) -> dict:
    """A catalog as the import makes one: instances alike but for their names and prices."""

    def entry(number: int) -> dict:
        return {
            "provider": "aws",
            "region": "us-east-1",
            "accelerator": "L4",
            "accelerator_count": 1,
            "accelerator_memory_gib": 24.0,
            "vcpus": 4,
            "ram_gib": 16.0,
            "on_demand_usd_per_hour": 0.5 + number / 1000,
            "spot_usd_per_hour": 0.2 + number / 1000,
            "note": "spot: mean of 6 zone quotes (0.3 … 0.35)",
        }

    instances = {f"x{n}.xlarge": entry(n) for n in range(instances)}
    return {"name": "big", "source": "s", "as_of": "2026-01-01", "currency": "USD", "instances": instances}


def test_writing_a_catalog_emits_each_distinct_line_once_not_each_instances_fields(monkeypatch):
    caches = [
        getattr(sys.modules.get("suite.prices.catalog_yaml"), name, None) for name in ("_line", "_prefix")
    ]
    events = []
    emit = yaml.emitter.Emitter.emit
    monkeypatch.setattr(
        yaml.emitter.Emitter, "emit", lambda self, event: (events.append(event), emit(self, event))
    )

    def emitted(instances: int) -> int:
        for cached in filter(None, caches):  # as if nothing had been written before
            cached.cache_clear()
        events.clear()
        price_import.to_yaml(_catalog(instances))
        return len(events)

    assert emitted(1_000) == emitted(10)  # 154 each; safe_dump alone: 23,017 against 247


def test_a_gpu_description_is_parsed_once_per_text_not_per_instance(tmp_path, monkeypatch):
    info = (
        "\"{'Gpus': [{'Name': 'L4', 'Count': 1}], 'TotalGpuMemoryInMiB': 24577}\""  # a text no other test has
    )
    rows = [f"x{n}.xlarge,L4,1.0,4.0,16.0,{info},0.8,0.3,us-east-1,use1-az1" for n in range(50)]
    source = tmp_path / "vms.csv"
    source.write_text("\n".join([",".join(price_import.SKYPILOT_COLUMNS), *rows]) + "\n")
    parsed = []
    literal_eval = ast.literal_eval
    monkeypatch.setattr(ast, "literal_eval", lambda text: (parsed.append(text), literal_eval(text))[1])
    catalog, _ = price_import.import_file(str(source))
    assert (
        len(catalog["instances"]) == 50
        and catalog["instances"]["x7.xlarge"]["accelerator_memory_gib"] == 24577 / 1024
    )
    assert len(parsed) <= 1  # was 50: ast.literal_eval compiles each text, a fifth of the import's time
