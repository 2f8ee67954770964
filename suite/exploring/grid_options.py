"""The `suite run` options that the commands starting a grid of child runs (sweep, scale, batch-size,
diagnose) pass through to them, declared once: a command's own copy of a run option (`--workload`) and
`--set OPTION=VALUE` for any other, both read onto one `Spec` (fixed options and a grid).

A value a command takes for its children is checked by `suite run`'s own option parser as it is typed
(`--batch-size 0` is refused before anything runs), and kept as typed (a byte size stays `2GiB` in what
the command says); a point's options are parsed once, in the parent, into the RunSpec its child is given
(child.request_of). Nothing here imports torch: each command's `--help` is built from this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from suite.inputs.errors import UserError

# The help of a run option a command passes through unchanged.
AS_FOR_RUN = "as for `suite run`"


def add_passed(parser, name: str, help: str, **settings):
    """Declare `--NAME`, a `suite run` option passed through to every child run: checked as `suite run`
    checks it, kept as typed. SETTINGS are argparse's (a default, a metavar)."""
    return parser.add_argument(f"--{name}", type=_as_run_takes(name), help=help, **settings)


def add_set(parser, help: str):
    """Declare `--set OPTION=VALUE` (repeatable): any other `suite run` option for every child run."""
    return parser.add_argument(
        "--set", dest="fixed", action="append", default=[], metavar="OPTION=VALUE", help=help
    )


def given(args, names: tuple[str, ...]) -> dict[str, object]:
    """The passed-through options NAMES as parsed from ARGS, by their `suite run` names (None: not given)."""
    return {name: getattr(args, name.replace("-", "_")) for name in names}


def _as_run_takes(name: str):
    """argparse's `type=` for the run option NAME: `suite run`'s own check of the text, which is returned as
    typed (a byte size stays `2GiB`, for the child and for what the command says)."""

    def check(text: str) -> str:
        from suite.run_options import check_text, run_options

        check_text(run_options()[name], text)
        return text

    return check


@dataclass
class Spec:
    """What a grid's child runs are given: fixed options and the grid, each value kept as `suite run` text."""

    fixed: dict[str, list[str]] = field(default_factory=dict)  # option -> its values (repeatable options)
    grid: dict[str, list[str]] = field(default_factory=dict)  # option -> the values to sweep
    source: str = "command line"
    given: dict[str, str] = field(default_factory=dict)  # an option's dest -> where it was given, as spelt

    def claim(self, spelt: str, name: str, options: dict, where: str) -> None:
        """Each option is given once across the file and the command line, whatever its spelling
        (batch_size, batch-size, --nproc-per-node for --nproc): a second would silently replace the first.
        Repeatable options (--model-override KEY=VALUE) may be given again."""
        from suite.run_options import OverrideAction

        action = options[name]
        if action.dest in self.given and not isinstance(action, OverrideAction):
            raise UserError(
                f"option {name!r} is given twice: {self.given[action.dest]} and {spelt!r} ({where}); give it once"
            )
        self.given.setdefault(action.dest, f"{spelt!r} ({where})")


def check_option(name: str, options: dict, where: str) -> None:
    from suite.launching.child import RESERVED

    if name in RESERVED:
        raise UserError(f"option {name!r} ({where}) is set by the sweep itself")
    if name not in options:
        raise UserError(
            f"unknown option {name!r} ({where}); a sweep takes `suite run` options: "
            f"{', '.join(sorted(options))}"
        )


def own_options(values: dict[str, object], options: dict) -> Spec:
    """A spec holding a command's own options (`suite diagnose --workload X`: {"workload": "X"}), those
    given, so that a `--set` of the same option is refused naming both."""
    spec = Spec()
    for name, value in values.items():
        if value is not None:
            spec.claim(name, name, options, f"--{name}")
            spec.fixed[name] = [value]
    return spec


def parse_inline(
    grid: list[str], fixed: list[str], options: dict, spec: Spec | None = None, require_grid: bool = True
) -> Spec:
    """`--grid batch-size=16,32 precision=fp32,bf16` and `--set workload=dcgan64` onto a spec."""
    spec = spec or Spec()
    for text in grid:
        spelt, sep, values = text.partition("=")
        name = spelt.strip().replace("_", "-")
        if not sep or not values.strip():
            raise UserError(f"--grid takes OPTION=V1,V2,... (e.g. batch-size=16,32), got {text!r}")
        check_option(name, options, "--grid")
        spec.claim(spelt.strip(), name, options, "--grid")
        spec.grid[name] = [v.strip() for v in values.split(",") if v.strip()]
    for text in fixed:
        spelt, sep, value = text.partition("=")
        name = spelt.strip().replace("_", "-")
        if not sep:
            raise UserError(f"--set takes OPTION=VALUE (e.g. workload=dcgan64), got {text!r}")
        check_option(name, options, "--set")
        spec.claim(spelt.strip(), name, options, "--set")
        spec.fixed.setdefault(name, []).append(value.strip())
    if require_grid and not spec.grid:
        raise UserError("nothing to sweep: give a sweep file or --grid OPTION=V1,V2 ...")
    return spec


def set_names(fixed: list[str]) -> dict[str, str]:
    """`--set` items by the option each names (as `suite run` spells it): {"data": "photos"}; read before
    anything else is, where a command must know one at once (`suite diagnose` refuses synthetic data)."""
    found = {}
    for item in fixed:
        name, sep, value = item.partition("=")
        if sep:
            found[name.strip().replace("_", "-")] = value.strip()
    return found
