"""A campaign as SkyPilot task YAML files: one task per instance type, and the `sky` commands for them.

Each task is plain data in SkyPilot's task format (https://docs.skypilot.co/en/latest/reference/yaml-spec.html):

- resources: the instance type, `use_spot`, and a cloud/region only when the campaign names them. Leaving
  the cloud out keeps the file checkable offline: `sky.Task.from_yaml` checks a cloud + instance type pair
  against SkyPilot's catalog, which it downloads at that moment.
- workdir: this checkout (synced to ~/sky_workdir), or {url, ref} of a git repository.
- setup: install the suite; on Gaudi inside Habana's container image, with `--no-deps` so Habana's torch
  build stays (pip would otherwise replace its `2.x.0a0+git...` pre-release with a stock torch).
- Gaudi: SkyPilot starts that container on the VM image `image_id` names besides it. Left alone, SkyPilot
  picks its own AWS image (sky/clouds/aws.py, AWS._get_default_ami: the NVIDIA one for any accelerator),
  which has no Habana driver nor `habana` Docker runtime, so `--runtime=habana` could not start. The
  campaign therefore names the host AMI per region (`host_image`), and the task pins the cloud to AWS.
- run: one `suite run` command line, with `--instance` so the report prices it.
- records: written to a bucket mounted with file_mounts (it outlives the cluster), or to a folder that
  `fleet run` copies home with rsync through the SSH config SkyPilot writes for each cluster.

Nothing here imports `sky`: `suite fleet plan` works without SkyPilot installed.
"""

from __future__ import annotations

import os
import shlex

import yaml

from suite.fleet import sky_catalog
from suite.inputs.errors import UserError

# The catalog's accelerator text -> the suite backend that drives it. First match wins.
ACCELERATOR_BACKENDS = (("nvidia", "cuda"), ("gaudi", "hpu"), ("none", "cpu"))

# Habana's PyTorch container (https://docs.habana.ai/en/latest/shared/Pull_Prebuilt_Containers.html) and
# the `docker run` options Habana documents for it; SkyPilot passes them through `config.docker.run_options`
# (sky/provision/docker_utils.py, docker_start_cmds). The container's release must match the Habana
# driver on the host image (`host_image`); 1.21.0 is a default.
HABANA_IMAGE = "vault.habana.ai/gaudi-docker/1.21.0/ubuntu22.04/habanalabs/pytorch-installer-2.6.0:latest"
HABANA_RUN_OPTIONS = ["--runtime=habana", "-e HABANA_VISIBLE_DEVICES=all", "--cap-add=sys_nice", "--ipc=host"]

# How each backend's machine installs the suite (run in the workdir, i.e. the suite's checkout).
BACKEND_SETUP = {
    "cuda": {"install": "pip install -e '.[cuda]'"},
    # --no-deps: the container's torch is Habana's own build; only the suite's light deps are added.
    "hpu": {
        "install": "pip install --no-deps -e . && pip install pyyaml tabulate psutil habana-pyhlml",
        "container": HABANA_IMAGE,
        "run_options": HABANA_RUN_OPTIONS,
    },
    "cpu": {"install": "pip install -e ."},
}

RECORDS_MOUNT = "/suite-records"  # where a bucket is mounted on the cluster
RECORDS_FOLDER = "suite-records"  # without a bucket: under ~/sky_workdir, copied home by rsync
PRICES_MOUNT = "/tmp/suite-prices.yaml"  # a campaign's own catalog file, copied to the cluster

# Commands that copy a bucket's records home, by URL scheme (the cloud's own CLI).
SYNC_COMMANDS = {"s3": ["aws", "s3", "sync"], "gs": ["gsutil", "-m", "rsync", "-r"]}


def backend_for(target) -> str:
    return backend_of(target.backend, target.accelerator, target.accelerator_count, target.instance_type)


def backend_of(backend: str | None, accelerator: str, accelerator_count: int, instance_type: str) -> str:
    """The suite backend for an instance: the one it names, else the one its catalog accelerator needs."""
    if backend:
        return backend
    text = accelerator.lower() if accelerator_count else "none"
    for needle, found in ACCELERATOR_BACKENDS:
        if needle in text:
            return found
    raise UserError(
        f"no suite backend drives {accelerator} ({instance_type}): give the instance a "
        f"'backend:' ({', '.join(BACKEND_SETUP)}) or leave it out of the campaign"
    )


def cluster_name(campaign, target) -> str:
    """Deterministic, so a resumed campaign finds (and reuses) a cluster it left up."""
    return f"{campaign.name}-{target.instance_type.replace('.', '-').replace('+', '-')}".lower()[:63]


def records_dir(campaign, target) -> str:
    """Where the run writes its records, relative to the workdir (~/sky_workdir) on the cluster."""
    return f"{RECORDS_FOLDER}/{target.instance_type}"


def run_script(campaign, target, argv: list[str]) -> str:
    script = f"suite run {shlex.join(argv)}\n"
    if campaign.bucket:
        # A plain copy into the mounted bucket: a record is written atomically by a rename, which a bucket
        # mount may not support. The run's exit status is kept: an out-of-memory record is copied too.
        bucket_dir = f"{RECORDS_MOUNT}/{target.instance_type}"
        script = (
            f"suite run {shlex.join(argv)}\n"
            "status=$?\n"
            f"mkdir -p {bucket_dir} && cp -r {records_dir(campaign, target)}/. {bucket_dir}/\n"
            "exit $status\n"
        )
    return script


def run_argv(campaign, target) -> list[str]:
    """`suite run` options for one instance (the words after `suite run`), through the suite's one builder of
    `suite run` command lines (suite.launching.child.run_argv), so a task runs what a sweep would."""
    from suite.launching import child

    prices = PRICES_MOUNT if os.path.isfile(campaign.prices) else campaign.prices
    options = {
        "backend": backend_for(target),
        "workload": campaign.workload,
        "instance": target.instance_type,
        "prices": prices,
        **target.options,
        "out": records_dir(campaign, target),
    }
    try:
        return child.run_argv(options)
    except UserError as error:
        raise UserError(
            f"instance {target.instance_type}: the run command would be refused: {error}"
        ) from None


def check_run_argv(argv: list[str], where: str) -> None:
    """The run line must be one `suite run` accepts: parse it with the suite's own parser."""
    from suite.cli import build_parser

    try:
        build_parser(["run"]).parse_args(["run", *argv])
    except UserError as error:
        raise UserError(f"{where}: the run command would be refused: {error}") from None


def local_checkout() -> str:
    """The repository this suite runs from (synced to the cluster as SkyPilot's workdir)."""
    import suite

    root = os.path.dirname(os.path.dirname(os.path.abspath(suite.__file__)))
    if not os.path.isfile(os.path.join(root, "pyproject.toml")):
        raise UserError(
            "this suite is not run from a checkout, so there is nothing to sync: give the campaign "
            "'source: {git: URL, ref: REF}'"
        )
    return root


def task(campaign, target) -> dict:
    backend = backend_for(target)
    recipe = BACKEND_SETUP[backend]
    argv = run_argv(campaign, target)
    check_run_argv(argv, f"instance {target.instance_type}")
    # A GCP row such as n1-standard-8+1xT4 is the VM plus its attached GPUs: SkyPilot names them apart.
    resources: dict = {**sky_catalog.sky_resources(target.instance_type), "use_spot": target.spot}
    if target.cloud or target.region:
        resources["infra"] = f"{target.cloud or '*'}/{target.region}" if target.region else target.cloud
    if target.spot:
        # Managed jobs relaunch a preempted spot instance; a failing benchmark is not retried forever.
        resources["job_recovery"] = {"strategy": "EAGER_NEXT_REGION", "max_restarts_on_errors": 1}
    if "container" in recipe:
        # SkyPilot 0.14.1 reads image_id {REGION: AMI, docker: IMAGE} as "this container on that VM image"
        # (sky/resources.py, Resources.__init__); an AMI needs the cloud named (the regions are its keys).
        resources["infra"] = f"aws/{target.region}" if target.region else "aws"
        container = campaign.habana_image or recipe["container"]  # its release must match the AMI's driver
        resources["image_id"] = {**target.host_image, "docker": container}
    spec: dict = {
        "name": cluster_name(campaign, target),
        "workdir": {"url": campaign.git, "ref": campaign.ref or "main"} if campaign.git else local_checkout(),
        "resources": resources,
        "setup": f"set -e\n{recipe['install']}\n",
        "run": run_script(campaign, target, argv),
    }
    if "run_options" in recipe:
        spec["config"] = {"docker": {"run_options": list(recipe["run_options"])}}
    mounts = {}
    if campaign.bucket:
        mounts[RECORDS_MOUNT] = {"source": campaign.bucket, "mode": "MOUNT"}
    if os.path.isfile(campaign.prices):
        mounts[PRICES_MOUNT] = os.path.abspath(campaign.prices)
    if mounts:
        spec["file_mounts"] = mounts
    return spec


class _TaskDumper(yaml.SafeDumper):
    """Multi-line text (setup, run) as YAML block scalars, so the files read like SkyPilot's examples."""


_TaskDumper.add_representer(
    str,
    lambda dumper, text: dumper.represent_scalar(
        "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None
    ),
)


def dump(spec: dict) -> str:
    return yaml.dump(spec, Dumper=_TaskDumper, sort_keys=False, width=1000)


def task_path(folder: str, campaign, target) -> str:
    return os.path.join(folder, f"{cluster_name(campaign, target)}.yaml")


def write_tasks(campaign, folder: str) -> list[str]:
    """One YAML file per instance in `folder`; returns their paths. Every task is built (and its run line
    checked) before the first file is written."""
    from suite.run_record import write_text

    specs = [(target, task(campaign, target)) for target in campaign.targets]
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as error:
        raise UserError(f"--tasks {folder!r} cannot be made: {error.strerror or error}") from None
    paths = []
    for target, spec in specs:
        path = task_path(folder, campaign, target)
        header = f"# SkyPilot task: {target.instance_type} for campaign {campaign.name} (suite fleet plan)\n"
        write_text(path, header + dump(spec), option="--tasks")
        paths.append(path)
    return paths


def sky_command(campaign, target, path: str) -> str:
    """What `fleet run` does for this instance, as the `sky` command a person would type."""
    if target.spot:
        return f"sky jobs launch -y -n {cluster_name(campaign, target)} {shlex.quote(path)}"
    return f"sky launch -y -c {cluster_name(campaign, target)} {shlex.quote(path)} && sky down -y {cluster_name(campaign, target)}"


def sync_command(bucket: str, destination: str) -> list[str]:
    scheme = bucket.split("://", 1)[0]
    return [*SYNC_COMMANDS[scheme], bucket, destination]


def rsync_command(campaign, target, destination: str) -> list[str]:
    """Copy one cluster's records home through the SSH alias SkyPilot writes for it."""
    source = f"{cluster_name(campaign, target)}:~/sky_workdir/{records_dir(campaign, target)}/"
    return ["rsync", "-a", source, os.path.join(destination, target.instance_type) + "/"]
