"""Cross-device numerics on one random stream: the check's noise is drawn on the host from the seed and
copied, so a reference on one device and a candidate on another see the same numbers. Wiring test: a
backend whose device generator is its own stream stands in for a GPU (CUDA's Philox differs from the CPU's)."""

from __future__ import annotations

import torch
from conftest import TINY
from suite.backends.cpu import CPUBackend
from suite.workloads import get_workload

from suite.numerics import training
from suite.spec import RunSpec


class OwnDeviceStream(CPUBackend):
    """A device whose global generator moves on its own: it draws a number every time a step enters autocast,
    as a second device's generator would differ from the host's."""

    def autocast(self):
        torch.rand(3)
        return super().autocast()


def losses(backend_class) -> torch.Tensor:
    config = RunSpec().replace(
        backend="cpu", workload="dcgan64", batch_size=2, precision="fp32", model_overrides=TINY["dcgan64"]
    )
    workload = get_workload("dcgan64").with_overrides(**TINY["dcgan64"])
    batches = [workload.synthetic_batch(2, "cpu", seed=i) for i in range(2)]
    return training.run(backend_class(config), workload, 3, batches, [0, 1], noise_seed=0, seed=0)["losses"]


def test_a_dcgan_check_draws_its_noise_from_one_host_stream_wiring():
    assert torch.equal(losses(CPUBackend), losses(OwnDeviceStream))


def test_outside_the_check_a_step_draws_on_its_device():
    workload = get_workload("dcgan64").with_overrides(**TINY["dcgan64"])
    config = RunSpec().replace(
        backend="cpu", workload="dcgan64", batch_size=2, model_overrides=TINY["dcgan64"]
    )
    backend = CPUBackend(config)
    backend.setup()
    training = workload.build(backend)
    assert training.host_generator is None  # the measured steps never pay for a host draw and a copy
