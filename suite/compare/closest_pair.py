"""The closest pair of two lists of identities ({field: value}), counted in fields that differ (a field
one lacks differs from every value), the first in order among equals: the pair `suite compare` names when no
configuration is on both sides.

Comparing every pair grows with the product of the sides (a thousand configurations a side are a million
pairs of some fifty fields). Most fields cannot tell pairs apart: one that holds one value everywhere, or
one value on each side, adds the same to every pair. Over the fields left, the pairs that differ in d of
them are found by leaving out each choice of d fields and matching what remains by hash, for d = 0, 1, 2…
until a pair is found; where that would cost more than comparing the pairs, the pairs are compared, in
order, stopping at the first one as close as the search has shown possible.
"""

from __future__ import annotations

import itertools
import math

_MISSING = object()  # a field an identity lacks: unequal to every value


def closest(ours: list[dict], theirs: list[dict]) -> tuple[int, int] | None:
    """(i, j): the pair ours[i], theirs[j] that differs in the fewest fields, the smallest i and then the
    smallest j among equals (as comparing every pair in order would choose); None when a side is empty."""
    if not ours or not theirs:
        return None
    names = sorted({name for identity in (*ours, *theirs) for name in identity})
    left = [tuple(identity.get(name, _MISSING) for name in names) for identity in ours]
    right = [tuple(identity.get(name, _MISSING) for name in names) for identity in theirs]
    telling = [
        k
        for k in range(len(names))
        if len({row[k] for row in left}) > 1 or len({row[k] for row in right}) > 1
    ]
    # The first of each distinct projection: a later copy ties with it and loses by its place.
    left_first = _firsts([tuple(row[k] for k in telling) for row in left])
    right_first = _firsts([tuple(row[k] for k in telling) for row in right])
    return _search(left_first, right_first, len(telling))


def _firsts(rows: list[tuple]) -> list[tuple[int, tuple]]:
    seen: dict[tuple, int] = {}
    for index, row in enumerate(rows):
        seen.setdefault(row, index)
    return [(index, row) for row, index in seen.items()]


def _search(left: list, right: list, width: int) -> tuple[int, int]:
    pairwise = len(left) * len(right) * max(width, 1)
    spent = 0
    for distance in range(width + 1):
        spent += math.comb(width, distance) * (len(left) + len(right)) * max(width, 1)
        if spent > pairwise:
            return _compare_pairs(left, right, distance)
        found = _within(left, right, width, distance)
        if found is not None:
            return found
    raise AssertionError("two rows of one width differ in at most all of it")


def _within(left: list, right: list, width: int, distance: int) -> tuple[int, int] | None:
    """The first pair that agrees on all fields but some `distance` of them (None: no such pair)."""
    best = None
    for dropped in itertools.combinations(range(width), distance):
        kept = [k for k in range(width) if k not in dropped]
        firsts: dict[tuple, int] = {}
        for index, row in right:
            key = tuple(row[k] for k in kept)
            if index < firsts.get(key, index + 1):
                firsts[key] = index
        for index, row in left:
            match = firsts.get(tuple(row[k] for k in kept))
            if match is not None and (best is None or (index, match) < best):
                best = (index, match)
    return best


def _compare_pairs(left: list, right: list, floor: int) -> tuple[int, int]:
    """Every pair in order; stops at the first that differs in only `floor` fields (none differs in fewer)."""
    best, fewest = None, math.inf
    for i, ours in sorted(left):
        for j, theirs in sorted(right):
            differ = sum(a is not b and a != b for a, b in zip(ours, theirs))
            if differ < fewest:
                best, fewest = (i, j), differ
                if differ <= floor:
                    return best
    return best
