"""What makes a row different, in words, with the `suite run` flag that sets it: the precision as it ran
(`fp32+TF32`: fp32 math on TF32 tensor cores) and every non-default setting (`channels-last`,
`torch.compile`, `8 workers`, `a numerics check`), never `channels_last=True`. Each setting's words are
declared once, here; its flag is the run option's own (suite/run_options.py, and each backend's options in
backends/declared.py), so a renamed option renames it everywhere a report shows it.

The table's Precision and Settings columns, the CSV's and the JSON's fields, the plots' labels, the
opening answer (which names the winning setting and its flag) and `suite compare` read these.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from suite.rows.identity import LOADER_FIELDS, setting_values


@dataclass(frozen=True)
class Setting:
    """One non-default knob of a run: the record's field, what a row says, what a person types."""

    field: str
    words: str
    flag: str


def _count(value, one: str, many: str) -> str:
    return f"{value} {one if value == 1 else many}"


# Each setting as a row says it (a setting of the value given). Fields of the record's config, and the
# loader's three from its data section (what ran). tests/test_report_labels.py holds every setting the row
# key knows (identity.SETTING_FIELDS, LOADER_FIELDS) to having words here.
WORDS = {
    "tf32": lambda value: "TF32",
    "channels_last": lambda value: "channels-last",
    "compile": lambda value: "torch.compile",
    "compile_mode": lambda value: f"torch.compile mode {value}",
    "hpu_mode": lambda value: f"{value} mode",
    "hpu_fused": lambda value: "torch.optim optimizers (not fused)",
    "hpu_bf16_ops": lambda value: f"bf16 op list {value}",
    "hpu_fp32_ops": lambda value: f"fp32 op list {value}",
    "threads": lambda value: _count(value, "thread", "threads"),
    "nnodes": lambda value: _count(value, "node", "nodes"),
    "num_classes": lambda value: _count(value, "class", "classes"),
    "image_size": lambda value: f"{value} px images",
    "per_device": lambda value: f"{value} copies at once, one per device",
    "grad_accum": lambda value: f"grad-accum ×{value}",
    "activation_checkpointing": lambda value: "activation checkpointing",
    "fsdp": lambda value: "FSDP",
    "workers": lambda value: _count(value, "worker", "workers"),
    "pin_memory": lambda value: "pinned memory" if value else "no pinned memory",
    "prefetch": lambda value: f"prefetch {value}",
    "check_numerics": lambda value: "a numerics check",
}
# A row without the setting, where the answer names the one it beat ("1.96× the next, amp NCHW").
WITHOUT = {"channels_last": "NCHW", "compile": "eager"}
# The model's own changes are the Workload cell's ("resnet50 (modified)") and a note of their own.
NOT_A_SETTING = ("model_overrides",)
# In the Precision column (`fp32+TF32`), not among the settings.
IN_PRECISION = ("tf32",)
# A numerics check runs after the timed windows: a setting of the row's runs (their memory shows it), never
# of its rate, so never the setting an answer names as the winner's, nor a flag that reproduces the rate.
CHECK = "check_numerics"


def precision(config: dict) -> str | None:
    """The precision as it ran: `fp32+TF32` where TF32 tensor cores did the fp32 math (`--tf32`)."""
    value = config.get("precision")
    return f"{value}+TF32" if value and config.get("tf32") else value


@functools.cache  # the options are declared once; a report asks for a flag per row
def _options_by_field() -> dict:
    from suite import run_options

    found = {}
    for name, action in run_options.run_options().items():
        found.setdefault(action.dest, (name, action))  # --nproc before its alias --nproc-per-node
    return found


def flag(field: str, value) -> str:
    """The `suite run` option that gives a run this setting, as typed: `--channels-last`, `--workers 8`,
    `--no-pin-memory`."""
    from suite import run_options

    name, action = _options_by_field()[field]
    if action.nargs == 0:  # store_true / store_false: typing it is what gives the setting
        return f"--{name}"
    return " ".join(run_options.option_argv(name, value, action))


def _words(field: str, value) -> str:
    return WORDS[field](value) if field in WORDS else f"{field.replace('_', '-')} {value}"


def settings(group: list[dict]) -> list[Setting]:
    """The non-default settings of a row's runs (the first run's: they share them, being one row), and a
    numerics check, which is not part of the row's key (it runs after the timed windows), with how many of
    the runs made it. The loader's settings are named as they ran where the run asked for them (their
    defaults follow the data and the host: a row that differs from its look-alikes in one it did not ask
    for says so in a note, rows._name_what_differs)."""
    config = group[0]["config"]
    found = [
        Setting(name, _words(name, value), flag(name, value))
        for name, value in setting_values(group[0])
        if name not in NOT_A_SETTING and (name not in LOADER_FIELDS or config.get(name) is not None)
    ]
    checked = sum(1 for record in group if record["config"].get(CHECK))
    if checked:
        words = _words(CHECK, True)
        if checked < len(group):
            words += f" in {checked} of {len(group)} runs"
        found.append(Setting(CHECK, words, flag(CHECK, True)))
    return found


def flags(found: list[Setting]) -> list[str]:
    """The flags that give a run the rate of a row with these settings (a numerics check changes none)."""
    return [s.flag for s in found if s.field != CHECK]


def shown(found: list[Setting]) -> list[str]:
    """The words of the Settings column: every setting but those the Precision column says."""
    return [s.words for s in found if s.field not in IN_PRECISION]


def _rate_settings(row: dict) -> list[str]:
    """The words of a row's settings that make its rate (all but a numerics check)."""
    return [words for words in row.get("settings") or [] if not words.startswith(_words(CHECK, True))]


def configuration(row: dict, typed: bool = True) -> str:
    """What made a row's rate, in words, and the flags that set it:
    `amp + channels-last (`--channels-last`)`, `fp32+TF32 (`--tf32`)`."""
    text = " + ".join([str(row["precision"]), *_rate_settings(row)])
    given = row.get("setting_flags") or []
    return text + (f" (`{' '.join(given)}`)" if typed and given else "")


def contrast(top: dict, other: dict) -> str:
    """What `other` ran, said against `top` (the row it follows in a ranking): its precision and settings,
    where it lacks one of `top`'s switches what it ran instead (`amp NCHW` beside channels-last), and its
    batch where that differs (`batch 2`, in a batch-size sweep); empty where the two ran alike."""
    batch = [f"batch {other['batch_size']}"] if other.get("batch_size") != top.get("batch_size") else []
    if (top["precision"], _rate_settings(top)) == (other["precision"], _rate_settings(other)):
        return " ".join(batch)
    theirs = _rate_settings(other)
    instead = [
        words
        for field, words in WITHOUT.items()
        if _words(field, True) in _rate_settings(top) and _words(field, True) not in theirs
    ]
    return " ".join([configuration(other, typed=False), *instead, *batch])


# A field of the row key that no column shows, as a note says it where it tells two look-alike rows apart
# (rows._name_what_differs); any other field reads as its name and value.
FIELD_WORDS = {
    "context.torch": "torch {}",
    "context.torchvision": "torchvision {}",
    "context.python": "Python {}",
    "context.suite_version": "suite {}",
    "context.cpu_model": "CPU {}",
    "context.cpu_cores_logical": "{} logical CPUs",
    "context.cpu_cores_physical": "{} physical cores",
    "device.cores_logical": "{} logical cores for compute",
    "device.cores_physical": "{} physical cores for compute",
    "device.threads": "{} compute threads",
    "device.driver": "driver {}",
    "device.cuda": "CUDA {}",
    "device.cudnn": "cuDNN {}",
    "device.compute_capability": "compute capability {}",
    "device.execution_mode": "{} mode",
    "data.workers": "{} loader workers",
    "data.pin_memory": "pinned memory {}",
    "data.prefetch": "prefetch {}",
    "data.path": "data from {}",
    "data.images": "{} images",
    "data.cache.source_fingerprint": "a cache of source {}",
}


def field_words(name: str, value) -> str:
    """`context.torch`, "2.1.0" -> `torch 2.1.0`; `data.source_image_size`, [1920, 1080] -> `source images
    1920×1080`; a fingerprint shortened."""
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        text = "×".join(str(v) for v in value)
    elif isinstance(value, int) and not isinstance(value, bool):
        text = f"{value:,}"
    else:
        text = str(value)
        text = text[:12] + "…" if len(text) > 40 and " " not in text else text
    template = FIELD_WORDS.get(name) or name.split(".", 1)[-1].replace(".", " ").replace("_", " ") + " {}"
    return template.format(text)
