"""The token-file path: (inputs, targets) batches drawn from a file of token ids (read with pread, never
mapped: token_file.TokenReader).

Each sequence is `context + 1` consecutive tokens at a random offset, the inputs its first `context` and the
targets its last `context`, as nanoGPT's train.py `get_batch` draws them (`ix = torch.randint(len(data) -
block_size, ...)`, x = data[i : i + block_size], y = data[i + 1 : i + 1 + block_size]). The offsets come from
one seeded generator per process (seed, rank), so two runs with one seed read the same sequences, and two
ranks read different ones. The sequences are read and stacked in `torch.utils.data.DataLoader` workers, as
images are decoded: the loader's workers, pinned memory and prefetch apply unchanged.
"""

from __future__ import annotations

import numpy as np
import torch

from suite.data import LoaderData
from suite.data.imagefolder import LoaderFailed
from suite.data.loader_options import LoaderOptions
from suite.data.token_file import TokenFile, TokenFileShrank, out_of_range
from suite.data.worker_socket import check_worker_socket_fits

SAMPLING = "random offsets, seeded per rank (nanoGPT get_batch): context + 1 tokens a sequence"


class RandomOffsets(torch.utils.data.Sampler):
    """Endless sequence starts in [0, tokens - context), from one generator that goes on where it stopped
    when the loader is iterated again (the bottleneck probe's second pass draws new sequences)."""

    def __init__(self, tokens: int, context: int, seed: int, rank: int):
        self.high = tokens - context
        self.generator = np.random.default_rng([seed, rank])

    def __iter__(self):
        while True:
            yield from self.generator.integers(0, self.high, size=1024).tolist()


class TokenSequences(torch.utils.data.Dataset):
    """Item `start`: the (inputs, targets) of the sequence of `context + 1` tokens from `start`, int64."""

    def __init__(self, token_file: TokenFile, context: int, vocabulary: int, model: str):
        self.token_file, self.context, self.vocabulary, self.model = token_file, context, vocabulary, model
        self._tokens = None  # opened once per process, on first use (a spawned worker opens its own)

    def __getstate__(self) -> dict:
        # A worker started by spawn gets the path, never a pickled descriptor.
        return {**self.__dict__, "_tokens": None}

    def __getitem__(self, start: int):
        inputs, targets = self.__getitems__([start])
        return inputs[0], targets[0]

    def __getitems__(self, starts: list[int]):
        """A whole batch in one go (the DataLoader asks for it so where a dataset has this method): the
        sequences stacked once, no per-sequence tensors to collate."""
        if self._tokens is None:
            self._tokens = self.token_file.open()
        rows = np.empty((len(starts), self.context + 1), dtype=self._tokens.dtype)
        for row, start in zip(rows, starts):
            self._tokens.read_into(row, start)  # a file cut short under the run is named, never a SIGBUS
        if int(rows.max()) >= self.vocabulary:
            raise ValueError(f"{self.token_file.path}: {out_of_range(rows, self.vocabulary, self.model)}")
        sequences = torch.from_numpy(rows.astype(np.int64))
        return sequences[:, :-1].contiguous(), sequences[:, 1:].contiguous()


def whole_batch(batch):
    """The DataLoader's collate step: a batch TokenSequences stacked itself is kept as it is; a list of
    sequences (a torch that asks item by item, before `__getitems__`) is stacked here."""
    if isinstance(batch, tuple):
        return batch
    inputs, targets = zip(*batch)
    return torch.stack(inputs), torch.stack(targets)


class TokenFileData(LoaderData):
    kind = "tokens"

    def __init__(self, token_file: TokenFile, workload, backend, options: LoaderOptions, checked: str = ""):
        self.token_file, self.backend, self.checked = token_file, backend, checked
        self.context = workload.units_per_sample()
        self.workers, self.pin_memory, self.prefetch = options.workers, options.pin_memory, options.prefetch
        self.rank, self.world_size, self.batch_size = options.rank, options.world_size, options.batch_size
        check_worker_socket_fits(options.workers)
        dataset = TokenSequences(token_file, self.context, workload.vocabulary, workload.name)
        kwargs = dict(
            batch_size=options.batch_size,
            sampler=RandomOffsets(token_file.tokens, self.context, options.seed, options.rank),
            num_workers=options.workers,
            pin_memory=options.pin_memory,
            drop_last=True,  # fixed shapes (the sampler never ends, so no batch is ever short)
            collate_fn=whole_batch,
        )
        if options.workers > 0:
            # Persistent workers: the probe's second pass does not pay process start-up again.
            kwargs.update(prefetch_factor=options.prefetch, persistent_workers=True)
        self.loader, self.loader_info = backend.make_loader(dataset, **kwargs)
        self._iterators: list = []

    def host_batches(self):
        """Endless (inputs, targets) batches as the DataLoader hands them out, on the host."""

        def batches():
            while True:  # the sampler never ends; a loader that stops anyway is started again
                try:
                    yield from self.loader
                except Exception as error:
                    lines = str(error).strip().splitlines() or [type(error).__name__]
                    # A worker's error arrives with its traceback, whose last line is "module.Type: cause".
                    cause = lines[-1].split(f"{TokenFileShrank.__name__}: ", 1)[-1]
                    raise LoaderFailed(f"the token loader failed: {cause}") from error

        iterator = batches()
        self._iterators.append(iterator)
        return iterator

    def describe(self) -> dict:
        return {
            "source": self.kind,
            **self.token_file.describe(),
            "context": self.context,
            "sampling": SAMPLING,
            "vocabulary_check": self.checked,
            "workers": self.workers,
            "pin_memory": self.pin_memory,
            "prefetch": self.prefetch,
            "rank": self.rank,
            "world_size": self.world_size,
            **self.loader_info,
        }
