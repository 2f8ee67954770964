"""`suite list`: the workloads and the backends, with what is available here and why not."""

from __future__ import annotations


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("list", help="list workloads and backends")
    p.set_defaults(func=list_command)


def list_command(args) -> int:
    from tabulate import tabulate

    from suite.backends import availability
    from suite.workloads import get_workload, workload_names

    rows = []
    for name in workload_names():
        workload = get_workload(name)
        counts = workload.parameter_counts()
        rows.append(
            [
                name,
                f"{workload.image_size} px",
                workload.default_batch_size,
                "\n".join(f"{part}: {count:,}" for part, count in counts.items()),
                f"{sum(counts.values()):,}",
                workload.description,
            ]
        )
    print(
        tabulate(
            rows,
            headers=["workload", "image", "default batch", "parameters", "total", "description"],
            colalign=("left", "right", "right", "right", "right", "left"),
        )
    )
    print()
    backend_rows = [
        [name, "available" if ok else "unavailable", reason] for name, (ok, reason) in availability().items()
    ]
    print(tabulate(backend_rows, headers=["backend", "status", "detail"]))
    from suite import optional_modules

    for line in optional_modules.describe():
        print(f"warning: {line}")
    return 0
