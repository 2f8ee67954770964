"""A file of token ids for the language models: which of the two public layouts it has, and whether it can
feed a model. Read while the run is planned (header, size, the ids' range); nothing is built here.

Two layouts, told apart by the file's first four bytes, never by its name:

- nanoGPT's `train.bin`: a flat array of uint16 token ids, no header. Written by karpathy/nanoGPT
  data/openwebtext/prepare.py (`np.memmap(filename, dtype=np.uint16, mode='w+', ...)`) and read by its
  train.py `get_batch` (`np.memmap(..., dtype=np.uint16, mode='r')`), commit 3adf61e.
- llm.c's headed `.bin`: 256 little-endian int32 (magic, version, token count, then zeros), then the tokens.
  karpathy/llm.c dev/data/data_common.py `write_datafile` (HEADERS_INFO) at commit f1e2ace writes magic
  20240520 version 1 with uint16 tokens ("gpt-2") and magic 20240801 version 7 with uint32 tokens
  ("llama-3"); its C reader llmc/dataloader.h (`dataloader_load_shard_`) accepts 20240520 version 1 and a
  file of exactly 1,024 + count × 2 bytes, and train_llama3.py reads 20240801 version 7. The eval files of
  the same header (magic 20240522, `write_evalfile`) hold examples, not a token stream, and are refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from suite.inputs.errors import UserError

NANOGPT = "nanogpt"
LLMC = "llm.c"
LLMC_HEADER_BYTES = 256 * 4
LLMC_EVAL_MAGIC = 20240522


@dataclass(frozen=True)
class LlmcHeader:
    """One header llm.c writes: its magic, the one version it carries, and the tokens' width."""

    magic: int
    version: int
    dtype: str
    model: str  # data_common.py's name for it


LLMC_HEADERS = {
    20240520: LlmcHeader(20240520, 1, "uint16", "gpt-2"),
    20240801: LlmcHeader(20240801, 7, "uint32", "llama-3"),
}
LLMC_ACCEPTED = ", ".join(
    f"magic {h.magic} version {h.version} ({h.model}, {h.dtype} tokens)" for h in LLMC_HEADERS.values()
)
ACCEPTED = (
    "synthetic, or a file of token ids: nanoGPT's raw uint16 train.bin, or llm.c's .bin with its "
    "256-int32 header"
)

# The ids are checked against the vocabulary in full up to this many bytes of tokens (np.max over 256 MiB
# takes well under a second); above it, SAMPLE_CHUNKS chunks of SAMPLE_CHUNK_TOKENS spread over the file,
# and the loader checks every sequence it draws (an id out of range is an error, never a silent wrap).
FULL_CHECK_BYTES = 256 * 1024**2
SAMPLE_CHUNKS = 256
SAMPLE_CHUNK_TOKENS = 64 * 1024
FULL_CHECK_CHUNK_TOKENS = 4 * 1024**2  # read a chunk at a time: 8 MiB of uint16 ids


@dataclass(frozen=True)
class TokenFile:
    """Where the tokens of one file lie: its layout, their width, the bytes before the first, their count."""

    path: str
    format: str  # NANOGPT or LLMC
    dtype: str
    offset: int
    tokens: int
    file_bytes: int
    header: LlmcHeader | None = None

    def open(self) -> TokenReader:
        """The tokens, read where a sequence asks (TokenReader): opened by the one bounded reader, so a
        FIFO or a kernel file put in the file's place is refused, never waited on."""
        return TokenReader(self)

    def describe(self) -> dict:
        described = {
            "format": self.format,
            "path": os.path.abspath(self.path),
            "tokens": self.tokens,
            "token_dtype": self.dtype,
            "header_bytes": self.offset,
            "dataset_bytes": self.file_bytes,
        }
        if self.header is not None:
            described["llmc_magic"], described["llmc_version"] = self.header.magic, self.header.version
        return described


class TokenFileShrank(ValueError):
    """The token file holds fewer tokens than when the run was planned: cut short under the run."""


class TokenReader:
    """The tokens of one file, read with pread(2) into the caller's array: never a memory map, whose
    pages end the process with SIGBUS (nothing printed, nothing written) when the file is truncated under
    the run. A read that comes back short is TokenFileShrank naming the file; the descriptor is a
    duplicate of the bounded reader's, kept for the reader's life (a forked loader worker shares it:
    pread has no file position to share)."""

    def __init__(self, token_file: TokenFile):
        from suite.inputs.files import open_regular

        with open_regular(token_file.path) as handle:
            self._fd = os.dup(handle.fileno())
        self.token_file = token_file
        self.dtype = np.dtype(token_file.dtype).newbyteorder("<")  # both layouts are little-endian

    def read_into(self, out: np.ndarray, start: int) -> np.ndarray:
        """OUT (contiguous, of this file's dtype) filled with the tokens from token START."""
        offset = self.token_file.offset + start * self.dtype.itemsize
        view, done = memoryview(out).cast("B"), 0
        while done < len(view):
            got = os.preadv(self._fd, [view[done:]], offset + done)
            if got == 0:
                raise TokenFileShrank(
                    f"{self.token_file.path}: the file holds fewer tokens than the {self.token_file.tokens:,} "
                    f"it held when the run was planned (token {start + done // self.dtype.itemsize:,} is "
                    "past its end): it was cut short or replaced while the run read it"
                )
            done += got
        return out

    def read(self, start: int, count: int) -> np.ndarray:
        return self.read_into(np.empty(count, self.dtype), start)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self):
        self.close()


def read_token_file(path: str) -> TokenFile:
    """The file's layout from its first bytes and its size, or a one-line UserError naming what is wrong."""
    from suite.inputs.files import NotAFile, open_regular

    where = f"--data {path!r}"
    if not os.path.exists(path):
        raise UserError(f"{where}: no such file (accepted: {ACCEPTED})")
    if os.path.isdir(path):
        raise UserError(f"{where} is a folder; a language model reads a file (accepted: {ACCEPTED})")
    try:
        with open_regular(path) as handle:  # a FIFO or a device is refused, never waited on
            size = os.fstat(handle.fileno()).st_size
            head = handle.read(LLMC_HEADER_BYTES)
    except (NotAFile, OSError) as error:
        raise UserError(f"{where} cannot be read: {error} (accepted: {ACCEPTED})") from None
    magic = int.from_bytes(head[:4], "little", signed=True) if len(head) >= 4 else None
    if magic == LLMC_EVAL_MAGIC:
        raise UserError(
            f"{where} is an llm.c eval file (magic {magic}: multiple-choice examples, not a token stream); "
            f"accepted llm.c headers: {LLMC_ACCEPTED}"
        )
    if magic in LLMC_HEADERS:
        return _llmc_file(path, where, size, head, LLMC_HEADERS[magic])
    if size % 2:
        raise UserError(
            f"{where} holds {size:,} bytes, an odd count: not nanoGPT's uint16 tokens, and no llm.c header "
            f"(accepted: {ACCEPTED})"
        )
    return TokenFile(path, NANOGPT, "uint16", 0, size // 2, size)


def _llmc_file(path: str, where: str, size: int, head: bytes, header: LlmcHeader) -> TokenFile:
    """A file that opens with one of llm.c's magics: its version, and a token count that agrees with its
    size (as llm.c's own reader insists)."""
    if len(head) < LLMC_HEADER_BYTES:
        raise UserError(
            f"{where} opens with llm.c's magic {header.magic} but holds {size:,} bytes, less than its "
            f"{LLMC_HEADER_BYTES:,}-byte header"
        )
    version, count = (int(v) for v in np.frombuffer(head, dtype="<i4", count=3)[1:])
    if version != header.version:
        raise UserError(
            f"{where}: llm.c header version {version} with magic {header.magic} is not one this suite reads "
            f"(accepted: {LLMC_ACCEPTED})"
        )
    width = np.dtype(header.dtype).itemsize
    after = size - LLMC_HEADER_BYTES
    if count <= 0 or after != count * width:
        raise UserError(
            f"{where}: its llm.c header says {count:,} tokens ({count * width:,} bytes of {header.dtype}) "
            f"but {after:,} bytes follow the header"
        )
    return TokenFile(path, LLMC, header.dtype, LLMC_HEADER_BYTES, count, size, header)


def sequence_host_bytes(context: int, dtype: str) -> int:
    """Host bytes one sequence of a batch takes while the batch is made (token_loader.TokenSequences): its
    context + 1 ids as read, widened to int64, then split into inputs and targets of `context` each."""
    return (context + 1) * (np.dtype(dtype).itemsize + 8) + 2 * context * 8


def check_token_file(token_file: TokenFile, context: int, vocabulary: int, model: str) -> str:
    """Refuse a file that cannot feed `model` (too short for one sequence, an id outside its vocabulary);
    returns how far the ids were checked, for the record."""
    where = f"--data {token_file.path!r}"
    if token_file.tokens < context + 1:
        raise UserError(
            f"{where} holds {token_file.tokens:,} tokens, too few for one sequence of {model}: it needs "
            f"{context + 1:,} (context {context:,} + 1 target)"
        )
    tokens = token_file.open()
    try:
        if token_file.tokens * tokens.dtype.itemsize <= FULL_CHECK_BYTES:
            checked = "every id checked against the vocabulary"
            spans = [
                (start, min(FULL_CHECK_CHUNK_TOKENS, token_file.tokens - start))
                for start in range(0, token_file.tokens, FULL_CHECK_CHUNK_TOKENS)
            ]
        else:
            starts = np.linspace(0, token_file.tokens - SAMPLE_CHUNK_TOKENS, SAMPLE_CHUNKS).astype(np.int64)
            spans = [(int(start), SAMPLE_CHUNK_TOKENS) for start in starts]
            checked = (
                f"{SAMPLE_CHUNKS} chunks of {SAMPLE_CHUNK_TOKENS:,} ids checked against the vocabulary; "
                "every sequence checked as it is drawn"
            )
        for start, count in spans:
            chunk = tokens.read(start, count)
            if len(chunk) and int(chunk.max()) >= vocabulary:
                raise UserError(f"{where}: {out_of_range(chunk, vocabulary, model)}")
    except TokenFileShrank as error:
        raise UserError(f"--data {error}") from None
    finally:
        tokens.close()
    return checked


def out_of_range(tokens, vocabulary: int, model: str) -> str:
    """What is wrong with ids at or above the vocabulary (their largest, and how many)."""
    tokens = np.asarray(tokens)
    high = int(tokens.max())
    count = int(np.count_nonzero(tokens >= vocabulary))
    return (
        f"token id {high:,} is not in {model}'s vocabulary of {vocabulary:,} (ids 0 to {vocabulary - 1:,}; "
        f"{count:,} such ids seen): a file made with another tokenizer, or not a token file"
    )
