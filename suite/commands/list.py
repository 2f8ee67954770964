"""`suite list`: the workloads and the backends, with what is available here and why not.

`suite list --models torchvision` / `--models timm [PATTERN]` lists the models that can be named as
`torchvision:NAME` / `timm:NAME` workloads.

Plain `suite list` stays quick: parameter counts are kept in the suite's cache (keyed by the workload's
full definition and the torch version), and a backend is asked whether it is available from files where
they settle it (backends/presence.py), so a listing after the first imports no torch on a machine without a
GPU or a Gaudi.
"""

from __future__ import annotations

LIBRARIES = ("torchvision", "timm")
CACHE_KIND = "parameters"  # parameters.json in the suite's cache folder (suite/measurement/counts_cache.py)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "list",
        help="list workloads and backends",
        description="List the workloads and backends; with --models, the models a library can build.",
    )
    p.add_argument(
        "--models",
        metavar="LIBRARY",
        help="list the models of a library that name a workload: torchvision, or timm (the `timm` extra)",
    )
    p.add_argument("pattern", nargs="?", help="with --models: a wildcard filter, e.g. 'vit_*' or '*resnet*'")
    p.set_defaults(func=list_command)


def list_command(args) -> int:
    from suite.inputs.errors import UserError, one_of

    if args.models is not None:
        if args.models not in LIBRARIES:
            raise one_of("--models library", args.models, LIBRARIES)
        return list_models(args.models, args.pattern)
    if args.pattern is not None:
        raise UserError(f"a pattern ({args.pattern!r}) filters --models LIBRARY: give --models too")
    return list_workloads()


def list_models(library: str, pattern: str | None) -> int:
    import fnmatch

    from suite.workloads.named import timm_names, torchvision_names

    names = torchvision_names() if library == "torchvision" else timm_names()
    if pattern:
        names = [name for name in names if fnmatch.fnmatchcase(name, pattern)]
    for name in names:
        print(f"{library}:{name}")
    found = f"{len(names)} {library} model(s)" + (f" matching {pattern!r}" if pattern else "")
    print(f"\n{found}; run one with `suite run --workload {library}:NAME` (random weights)")
    return 0


def _installed_workload(name: str, path: str):
    """(workload, its parameter counts) for a third-party package's workload, or None after one warning
    naming the plugin and its error: a broken plugin must not hide the rest of the listing."""
    from suite.inputs import errors
    from suite.inputs.errors import UserError
    from suite.workloads import get_workload
    from suite.workloads.named import user_code

    try:
        with user_code(f"workload {name!r}"):
            workload = get_workload(name)
            # A package's model may change under the same name: counted afresh every time.
            return workload, workload.parameter_counts()
    except UserError as error:
        errors.warn(f"installed workload {name!r} ({path}) not listed: {error}")
        return None


def list_workloads() -> int:
    from tabulate import tabulate

    from suite.backends import availability
    from suite.workloads import get_workload, installed_workload_names, workload_names

    installed = installed_workload_names()
    rows = []
    for name in workload_names() + sorted(installed):
        if name in installed:
            listed = _installed_workload(name, installed[name])
            if listed is None:
                continue
            workload, counts = listed
        else:
            workload = get_workload(name)
            counts = cached_parameter_counts(workload)
        description = workload.description + (f" (installed: {installed[name]})" if name in installed else "")
        rows.append(
            [
                name,
                workload.sample_text(),
                workload.default_batch_size,
                "\n".join(f"{part}: {count:,}" for part, count in counts.items()),
                f"{sum(counts.values()):,}",
                description,
            ]
        )
    print(
        tabulate(
            rows,
            headers=["workload", "sample", "default batch", "parameters", "total", "description"],
            colalign=("left", "right", "right", "right", "right", "left"),
        )
    )
    print(
        "\nAlso: torchvision:NAME, timm:NAME (see `suite list --models torchvision|timm`), "
        "module.path:factory (your own nn.Module), and hf:PATH/config.json or hf:MODEL_TYPE "
        "(a causal language model from a Hugging Face config, e.g. hf:gpt2; the `hf` extra)."
    )
    print()
    backend_rows = [
        [name, "available" if ok else "unavailable", reason] for name, (ok, reason) in availability().items()
    ]
    print(tabulate(backend_rows, headers=["backend", "status", "detail"]))
    from suite.vendors import optional_modules

    for line in optional_modules.describe():
        print(f"warning: {line}")
    return 0


def cached_parameter_counts(workload) -> dict[str, int]:
    """The workload's parameter counts, from the cache when its definition and torch are unchanged."""
    from suite.measurement import counts_cache

    key = counts_cache.key(workload)
    cached = counts_cache.read(CACHE_KIND).get(key)
    if isinstance(cached, dict):
        return cached
    counts = workload.parameter_counts()
    counts_cache.write(CACHE_KIND, key, counts)
    return counts
