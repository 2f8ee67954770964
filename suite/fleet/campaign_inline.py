"""A campaign given on `suite fleet`'s command line instead of in a file: the options as the same plain
settings campaign_file.py reads from a file; `campaign.build` prices and checks them.
"""

from __future__ import annotations

from dataclasses import dataclass

from suite.fleet.campaign import check_bucket, check_option
from suite.inputs.errors import UserError


@dataclass(frozen=True)
class InlineCampaign:
    """A campaign as `suite fleet` options give it, without a campaign file."""

    instances: list[str]  # --instances, each "TYPE[,TYPE...]"
    workload: str
    options: list[str]  # --set OPTION=VALUE
    hours: float | None
    spot: bool
    max_cost_usd: float | None
    prices: str | None
    bucket: str | None
    name: str | None
    host_images: list[str] = ()  # --host-image REGION=AMI
    habana_image: str | None = None


def from_inline(inline: InlineCampaign) -> dict:
    """`--instances g6e.xlarge,g5.xlarge --workload dcgan64 --set batch-size=64` as settings;
    `--host-image REGION=AMI` (repeatable) is the Gaudi instances' host image."""
    settings: dict = {"workload": inline.workload, "spot": inline.spot, "options": {}}
    for text in inline.options:
        option, sep, value = text.partition("=")
        option = option.strip().replace("_", "-")
        if not sep or not option:
            raise UserError(f"--set takes OPTION=VALUE (e.g. batch-size=64), got {text!r}")
        check_option(option, "--set")
        settings["options"][option] = value.strip()
    for key, value in (
        ("hours", inline.hours), ("max_cost_usd", inline.max_cost_usd), ("prices", inline.prices),
        ("name", inline.name), ("habana_image", inline.habana_image),
    ):  # fmt: skip
        if value is not None:
            settings[key] = value
    if inline.bucket:
        check_bucket(inline.bucket, "--bucket")
        settings["bucket"] = inline.bucket.rstrip("/")
    if inline.host_images:
        settings["host_image"] = {}
        for text in inline.host_images:
            region, sep, ami = text.partition("=")
            if not sep or not region.strip() or not ami.strip():
                raise UserError(
                    f"--host-image takes REGION=AMI (e.g. us-east-1=ami-0123456789abcdef0), got {text!r}"
                )
            if region.strip() in settings["host_image"]:
                raise UserError(
                    f"--host-image names region {region.strip()!r} twice: give one AMI per region"
                )
            settings["host_image"][region.strip()] = ami.strip()
    settings["instances"] = [{"type": t.strip()} for t in ",".join(inline.instances).split(",") if t.strip()]
    if not settings["instances"]:
        raise UserError("no instances: give a campaign file or --instances TYPE[,TYPE...]")
    return settings
