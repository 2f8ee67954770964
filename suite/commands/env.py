"""`suite env`: this machine's devices and software versions."""

from __future__ import annotations

import json


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("env", help="show this machine's devices and software versions")
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.set_defaults(func=env_command)


def env_command(args) -> int:
    from suite import context
    from suite.backends import availability, backend_class
    from suite.spec import RunSpec

    info = {"context": context.collect(), "backends": {}}
    for name, (ok, reason) in availability().items():
        entry = {"available": ok, "detail": reason}
        if ok:
            try:
                entry["device"] = backend_class(name)(RunSpec(backend=name)).describe()
            except Exception as error:  # noqa: BLE001 - one broken backend must not hide the others
                last = str(error).strip().splitlines()[-1:] or [""]
                entry.update(available=False, detail=f"set-up failed: {type(error).__name__}: {last[0]}")
        info["backends"][name] = entry
    from suite.vendors import optional_modules

    info["broken_modules"] = dict(optional_modules.BROKEN)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
        return 0
    for key, value in info["context"].items():
        print(f"{key:20} {value}")
    print()
    for name, entry in info["backends"].items():
        state = "available" if entry["available"] else f"unavailable: {entry['detail']}"
        print(f"{name:20} {state}")
        for key, value in entry.get("device", {}).items():
            print(f"  {key:18} {value}")
    for line in optional_modules.describe():
        print(f"warning: {line}")
    return 0
