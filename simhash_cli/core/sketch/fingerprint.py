"""Weighted feature vectors -> SimHash fingerprints, bit-identical to the reference implementation.

The specification's reference implementation hashes ``feature + ':' + seed``
with 32-bit FNV-1a over UTF-16 code units, seeds xorshift32 (13/17/5) with that hash, and takes
the generator's output words least-significant bit first as the feature's b sign bits.  Each
feature adds its weight to the slots whose bit is 1 and subtracts it from the others; slot ``i``
of the fingerprint is 1 exactly when its float64 sum is ``> 0``, so a tie (or an empty vector)
gives 0.

Fingerprints of a corpus travel as ``NDArray[uint64]`` of shape ``(n_docs, n_words)`` with
``n_words = ceil(bits / 64)``: word ``k`` holds slots ``64k .. 64k + 63``, slot ``i`` at bit
``i % 64``.  As one Python ``int``, slot ``i`` is bit ``i`` (the reference's BigInt).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ...errors import InputError, ParameterError
from ..config import DEFAULT_BITS, DEFAULT_SEED, MAX_BITS
from ..threads import threaded

__all__ = [
    "DEFAULT_BITS",
    "DEFAULT_SEED",
    "MAX_BITS",
    "as_fingerprint_array",
    "estimate_cosine",
    "estimate_cosine_rows",
    "feature_hashes",
    "feature_keys",
    "feature_signs",
    "fingerprint",
    "fingerprint_matrix",
    "fnv1a",
    "from_hex",
    "from_int",
    "hamming",
    "hamming_rows",
    "n_words",
    "reference_order",
    "reference_positions",
    "to_hex",
    "to_int",
    "validate_bits",
    "validate_seed",
]


_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_MASK32 = 0xFFFFFFFF
# Below this many features still being hashed, finishing them one by one in Python is cheaper
# than one numpy call per code unit (a single 1 MB token would otherwise cost 1M numpy calls).
_SCALAR_TAIL = 4
# JavaScript's Object.entries lists "array index" keys (canonical decimal integers below
# 2**32 - 1) first, in ascending numeric order, and every other key after them in insertion
# order.  Float sums depend on order, so bit-identity with the reference needs the same order.
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,9}")
_MAX_ARRAY_INDEX = 2**32 - 2


def validate_bits(bits: int) -> int:
    """Return ``bits`` if it is a multiple of 8 from 8 to 4096, else raise ParameterError."""
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)):
        raise ParameterError(f"bits must be an integer, not {type(bits).__name__}")
    if not (8 <= bits <= MAX_BITS and bits % 8 == 0):
        raise ParameterError(f"bits must be a multiple of 8 from 8 to {MAX_BITS}, not {bits}")
    return int(bits)


def validate_seed(seed: int) -> int:
    """Return ``seed`` if it is an integer from 0 to 2**32 - 1, else raise ParameterError."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ParameterError(f"seed must be an integer, not {type(seed).__name__}")
    if not 0 <= seed <= _MASK32:
        raise ParameterError(f"seed must be an integer from 0 to {_MASK32}, not {seed}")
    return int(seed)


def n_words(bits: int) -> int:
    """Number of uint64 words that hold a ``bits``-bit fingerprint."""
    return (bits + 63) // 64


def reference_order(keys: Sequence[str]) -> list[int]:
    """Positions of ``keys`` in the order JavaScript's ``Object.entries`` would list them.

    Integer-like keys ("0", "17", not "017" or "-1") come first in numeric order, then the
    rest in their given order.  With integer weights the order never matters; with float
    weights it decides how the sums round, and so the bits of near-zero slots.
    """
    order: list[int] = reference_positions(keys).tolist()
    return order


def reference_positions(keys: Sequence[str] | NDArray[np.object_]) -> NDArray[np.intp]:
    """:func:`reference_order` as an array, with a Python step only for the keys made of
    digits (``str.isdigit`` runs over the others in C; it also takes non-ASCII digits, which
    the pattern then refuses)."""
    n = len(keys)
    digits = np.flatnonzero(np.fromiter(map(str.isdigit, keys), dtype=bool, count=n))
    indexed = sorted(
        (int(keys[p]), p)
        for p in digits.tolist()
        if _ARRAY_INDEX.fullmatch(keys[p]) and int(keys[p]) <= _MAX_ARRAY_INDEX
    )
    if not indexed:
        return np.arange(n)
    lifted = np.fromiter((p for _, p in indexed), dtype=np.intp, count=len(indexed))
    rest = np.ones(n, dtype=bool)
    rest[lifted] = False
    return np.concatenate((lifted, np.flatnonzero(rest)))


def fnv1a(text: str) -> int:
    """32-bit FNV-1a of ``text``'s UTF-16 code units, as the reference's ``fnv1a``."""
    h = _FNV_OFFSET
    for unit in _utf16_units(text).tolist():
        h = ((h ^ unit) * _FNV_PRIME) & _MASK32
    return h


def _utf16_units(text: str) -> NDArray[np.uint16]:
    # surrogatepass: a lone surrogate (valid in a JS string and in JSON) is its own code unit.
    return np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype="<u2")


def feature_hashes(features: Sequence[str], *, seed: int = DEFAULT_SEED) -> NDArray[np.uint32]:
    """FNV-1a of ``feature + ':' + seed`` for every feature, vectorized over features.

    Args:
        features: n feature strings.
        seed: the global seed, written in decimal after the colon.

    Returns:
        uint32 array of shape (n,).
    """
    seed = validate_seed(seed)
    h = _fnv1a_many(features, _FNV32)
    prime = np.uint32(_FNV_PRIME)
    for unit in _utf16_units(f":{seed}").tolist():
        h ^= np.uint32(unit)
        h *= prime
    return h


def feature_keys(features: Sequence[str]) -> NDArray[np.uint64]:
    """64-bit FNV-1a of every feature's UTF-16 code units: a name for a feature that needs no
    shared vocabulary (vectors made on different machines compared by key). Two of a million
    distinct features share a key with odds about 3 in 10^8."""
    return _fnv1a_many(features, _FNV64)


class _Fnv(NamedTuple):
    dtype: type[np.unsignedinteger[Any]]
    offset: int
    prime: int
    mask: int


_FNV32 = _Fnv(np.uint32, _FNV_OFFSET, _FNV_PRIME, _MASK32)
_FNV64 = _Fnv(np.uint64, 0xCBF29CE484222325, 0x100000001B3, 2**64 - 1)


def _fnv1a_many(texts: Sequence[str], fnv: _Fnv) -> NDArray[Any]:
    """FNV-1a of each text's UTF-16 code units, one position of every text at a time."""
    n = len(texts)
    h = np.full(n, fnv.offset, dtype=fnv.dtype)
    if n == 0:
        return h
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    joined = "".join(texts)
    units = _utf16_units(joined)
    if units.size != int(lengths.sum()):
        # A character outside the BMP is two UTF-16 units: each text's are counted again.
        codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        astral = np.flatnonzero(codes > 0xFFFF)
        lengths += np.bincount(
            np.searchsorted(np.cumsum(lengths), astral, side="right"), minlength=n
        )[:n]
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])

    # Longest first, so that the texts still being hashed at position p are a prefix.
    order = np.argsort(-lengths, kind="stable")
    sorted_lengths = lengths[order]
    sorted_starts = starts[order]
    sorted_h = h[order]
    prime = fnv.dtype(fnv.prime)
    max_len = int(sorted_lengths[0])
    # active[p] = how many texts are longer than p.
    active_counts = np.searchsorted(-sorted_lengths, -np.arange(max_len), side="left")
    for p in range(max_len):
        active = int(active_counts[p])
        if active <= _SCALAR_TAIL:
            _finish_scalar(sorted_h, sorted_starts, sorted_lengths, units, p, active, fnv)
            break
        sorted_h[:active] ^= units[sorted_starts[:active] + p].astype(fnv.dtype)
        sorted_h[:active] *= prime
    h[order] = sorted_h
    return h


def _finish_scalar(
    h: NDArray[Any],
    starts: NDArray[np.int64],
    lengths: NDArray[np.int64],
    units: NDArray[np.uint16],
    position: int,
    active: int,
    fnv: _Fnv,
) -> None:
    for k in range(active):
        value = int(h[k])
        start, stop = int(starts[k]) + position, int(starts[k] + lengths[k])
        for unit in units[start:stop].tolist():
            value = ((value ^ unit) * fnv.prime) & fnv.mask
        h[k] = value


def _xorshift_words(hashes: NDArray[np.uint32], count: int) -> NDArray[np.uint32]:
    """The first ``count`` outputs of xorshift32 seeded with each hash (0 becomes 1)."""
    state = hashes.astype(np.uint32, copy=True)
    state[state == 0] = 1
    words = np.empty((state.size, count), dtype="<u4")
    for k in range(count):
        state ^= state << np.uint32(13)
        state ^= state >> np.uint32(17)
        state ^= state << np.uint32(5)
        words[:, k] = state
    return words


def _sign_bits(hashes: NDArray[np.uint32], bits: int) -> NDArray[np.uint8]:
    """Feature bits of shape (n, bits): bit i is bit i % 32 of xorshift output i // 32."""
    words = _xorshift_words(hashes, (bits + 31) // 32)
    unpacked = np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")
    return unpacked[:, :bits]


def feature_signs(
    features: Sequence[str], *, bits: int = DEFAULT_BITS, seed: int = DEFAULT_SEED
) -> NDArray[np.float64]:
    """The reference's ``featureBits`` as +1.0 / -1.0, one row per feature.

    Args:
        features: n feature strings.
        bits: fingerprint width b.
        seed: global seed.

    Returns:
        float64 array of shape (n, bits); entry (f, i) is +1 where feature f's bit i is 1.
    """
    bits = validate_bits(bits)
    signs = _signs_from_hashes(feature_hashes(features, seed=seed), bits)
    return signs.astype(np.float64, copy=False)


def _signs_from_hashes(
    hashes: NDArray[np.uint32], bits: int, dtype: type[np.floating[Any]] = np.float64
) -> NDArray[np.floating[Any]]:
    signs = _sign_bits(hashes, bits).astype(dtype)
    signs *= 2
    signs -= 1
    return signs


# Integers of magnitude below 2**24 are exact in float32, and so is every partial sum of a row
# whose absolute weights add up to less than that.
_FLOAT32_EXACT = 2**24


def _exact_in_float32(batch: sp.csr_array) -> bool:
    """Whether ``batch @ signs`` computes the same sums in float32 as in float64: integer
    weights (term counts) whose absolute sum in every row is below 2**24, so that no sum
    along the way is ever rounded, in either precision."""
    data = batch.data
    if data.size == 0 or not np.array_equal(data, np.rint(data)):
        return False
    if np.max(np.abs(data)) >= _FLOAT32_EXACT:  # (and a sum of 1e308s would overflow)
        return False
    totals = sp.csr_array((np.abs(data), batch.indices, batch.indptr), shape=batch.shape).sum(1)
    return bool(np.max(totals) < _FLOAT32_EXACT)


def _pack(positive: NDArray[np.bool_]) -> NDArray[np.uint64]:
    """Pack (n, bits) booleans into (n, n_words) uint64, slot i at bit i % 64 of word i // 64."""
    n, bits = positive.shape
    packed = np.packbits(positive, axis=1, bitorder="little")
    padded = np.zeros((n, n_words(bits) * 8), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return padded.view("<u8").astype(np.uint64)


def fingerprint(
    features: Mapping[str, float], *, bits: int = DEFAULT_BITS, seed: int = DEFAULT_SEED
) -> int:
    """SimHash fingerprint of one weighted feature vector, as the reference's ``fingerprint``.

    Weights are summed in float64 in the order JavaScript would iterate the same object
    (see :func:`reference_order`), so even sums that land next to zero agree bit for bit.

    Args:
        features: feature -> finite weight (zero and negative weights are allowed).
        bits: fingerprint width, a multiple of 8 from 8 to 4096.
        seed: global seed, 0 to 2**32 - 1.

    Returns:
        The fingerprint as a non-negative int whose bit i is slot i (0 for an empty mapping).

    Raises:
        ParameterError: bits or seed out of range.
        InputError: a weight that is not a finite number.
    """
    bits = validate_bits(bits)
    seed = validate_seed(seed)
    keys = list(features)
    if not keys:
        return 0
    order = reference_order(keys)
    names = [keys[i] for i in order]
    weights = _finite_weights([features[name] for name in names])
    contributions = feature_signs(names, bits=bits, seed=seed)
    contributions *= weights[:, None]
    # cumsum accumulates strictly left to right, like the reference's loop (a plain sum
    # would use pairwise summation and could round a near-zero slot differently).
    totals = np.cumsum(contributions, axis=0)[-1]
    return to_int(_pack((totals > 0)[None, :])[0])


def _finite_weights(values: Sequence[float]) -> NDArray[np.float64]:
    try:
        weights = np.array(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"weights must be finite numbers ({exc})") from None
    if weights.ndim != 1:
        raise InputError("weights must be numbers, not sequences")
    if not np.all(np.isfinite(weights)):
        bad = values[int(np.flatnonzero(~np.isfinite(weights))[0])]
        raise InputError(f"weights must be finite numbers, got {bad!r}")
    return weights


def fingerprint_matrix(
    weights: sp.csr_array | sp.csr_matrix,
    features: Sequence[str],
    *,
    bits: int = DEFAULT_BITS,
    seed: int = DEFAULT_SEED,
    batch_rows: int = 8192,
    approximate: bool = False,
) -> NDArray[np.uint64]:
    """Fingerprints of every row of a sparse weight matrix: ``sign(W @ S)``, in row batches.

    Each distinct feature is hashed once; a batch multiplies only by the sign rows of the
    features it uses, so memory is bounded by the batch, not by the vocabulary.  Within a row,
    entries are summed in their stored order (scipy's CSR product accumulates left to right),
    which is what makes float weights agree bit for bit with :func:`fingerprint`.

    Args:
        weights: CSR (n_docs, n_features) float64 weights (or float32 counts, which are exact
            in it); entries in each row in the order the reference would iterate them.
        features: the n_features column names.
        bits: fingerprint width.
        seed: global seed.
        batch_rows: documents per batch.
        approximate: sum in float32 whatever the weights, for a sketch that only estimates
            cosines (:func:`~simhash_cli.core.verify.cosines.sketch`): a slot whose sum lands next
            to zero
            may then differ from the reference's.

    Returns:
        uint64 array of shape (n_docs, ceil(bits / 64)).

    Raises:
        InputError: a non-finite weight, or a column count that does not match ``features``.
    """
    bits = validate_bits(bits)
    seed = validate_seed(seed)
    csr = sp.csr_array(weights)
    if csr.shape[1] != len(features):
        raise InputError(f"{csr.shape[1]} weight columns but {len(features)} feature names")
    data = csr.data  # float32 counts stay float32 (each batch is cast as it is summed)
    if not np.all(np.isfinite(data)):
        raise InputError("weights must be finite numbers")
    hashes = feature_hashes(features, seed=seed)
    n_docs = csr.shape[0]
    out = np.zeros((n_docs, n_words(bits)), dtype=np.uint64)
    indptr = csr.indptr.astype(np.int64)

    def batch_prints(lo: int) -> tuple[int, int, NDArray[np.uint64]]:
        hi = min(lo + batch_rows, n_docs)
        start, stop = int(indptr[lo]), int(indptr[hi])
        columns = csr.indices[start:stop]
        place = np.bincount(columns, minlength=len(features))
        used = np.flatnonzero(place)
        # Each used column's place among them, looked up (a search of each entry took as
        # long as the products: 1.7 s of 100,000 prose records' 17 million entries).
        place[used] = np.arange(used.size)
        # Built from raw arrays (never column-sliced) so that each row keeps its entry order.
        batch = sp.csr_array(
            (data[start:stop], place[columns], indptr[lo : hi + 1] - start),
            shape=(hi - lo, used.size),
        )
        # Term counts are summed in float32 (about three times faster): bit for bit the same.
        dtype = np.float32 if approximate or _exact_in_float32(batch) else np.float64
        totals = _signed_sums(batch.astype(dtype), hashes[used], bits, dtype)
        return lo, hi, _pack(totals > 0)

    # Batches side by side: each row's sums are its own, whichever thread takes it.
    for lo, hi, packed in threaded(batch_prints, range(0, n_docs, batch_rows)):
        out[lo:hi] = packed
    return out


SIGN_ENTRIES = 1 << 18
"""Entries of a row summed against one block of sign rows: a document of more distinct
features is summed a block of its entries at a time, so that the sign rows in memory are at
most about this many (64 MB at 64 bits in float32), not one per distinct feature (a document
of 10,000,000 distinct words would need 2.5 GB of them)."""


def _signed_sums(
    batch: sp.csr_array, hashes: NDArray[np.uint32], bits: int, dtype: type[np.floating[Any]]
) -> NDArray[np.floating[Any]]:
    """``batch @ signs``, each row summed left to right over its entries in stored order.

    Rows longer than :data:`SIGN_ENTRIES` are summed a block of entries at a time. Each block
    after the first carries the row's running total as its first entry (weight 1, against a
    sign row that is that total), so the sum goes on from exactly where it stopped, in the
    same order and with the same rounding as one product over the whole row.
    """
    sizes = np.diff(batch.indptr)
    if batch.nnz == 0 or int(sizes.max()) <= SIGN_ENTRIES:
        return np.asarray(batch @ _signs_from_hashes(hashes, bits, dtype))
    n = batch.shape[0]
    position = np.arange(batch.nnz) - np.repeat(batch.indptr[:-1], sizes)
    row_of = np.repeat(np.arange(n), sizes)
    totals = np.zeros((n, bits), dtype=dtype)
    for block in range(-(-int(sizes.max()) // SIGN_ENTRIES)):
        taken = np.flatnonzero(position // SIGN_ENTRIES == block)
        features, local = np.unique(batch.indices[taken], return_inverse=True)
        rows = row_of[taken]
        counts = np.bincount(rows, minlength=n)
        if block == 0:
            part = sp.csr_array(
                (batch.data[taken], local.ravel(), _indptr(counts)), shape=(n, features.size)
            )
            totals = np.asarray(part @ _signs_from_hashes(hashes[features], bits, dtype))
            continue
        going = np.flatnonzero(counts)  # rows with entries in this block, the others are done
        # Each going row: its running total first (column features.size + j), then its entries.
        with_total = counts[going] + 1
        indptr = _indptr(with_total)
        entries = np.empty(int(indptr[-1]), dtype=np.int64)
        weights = np.empty(int(indptr[-1]), dtype=dtype)
        firsts = indptr[:-1]
        entries[firsts] = features.size + np.arange(going.size)
        weights[firsts] = 1
        rest = np.ones(entries.size, dtype=bool)
        rest[firsts] = False
        entries[rest] = local.ravel()  # taken is in row order, and so are the going rows
        weights[rest] = batch.data[taken]
        part = sp.csr_array(
            (weights, entries, indptr), shape=(going.size, features.size + going.size)
        )
        signs = np.vstack((_signs_from_hashes(hashes[features], bits, dtype), totals[going]))
        totals[going] = np.asarray(part @ signs)
    return totals


def _indptr(counts: NDArray[np.int64]) -> NDArray[np.int64]:
    indptr = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr


def to_int(row: NDArray[np.uint64]) -> int:
    """One fingerprint row of uint64 words -> int (slot i = bit i)."""
    return int.from_bytes(np.asarray(row, dtype="<u8").tobytes(), "little")


def from_int(value: int, bits: int) -> NDArray[np.uint64]:
    """int fingerprint -> row of ceil(bits / 64) uint64 words (inverse of :func:`to_int`)."""
    if value < 0 or value >> bits:
        raise InputError(f"fingerprint {value:#x} does not fit in {bits} bits")
    raw = value.to_bytes(n_words(bits) * 8, "little")
    return np.frombuffer(raw, dtype="<u8").astype(np.uint64)


def to_hex(value: int, bits: int) -> str:
    """Fingerprint as lower-case hex, zero-padded to bits / 4 digits."""
    return format(value, f"0{bits // 4}x")


def from_hex(text: str, bits: int) -> int:
    """Parse a fingerprint written by :func:`to_hex` (exactly bits / 4 hex digits)."""
    digits = text[2:] if text[:2].lower() == "0x" else text
    if len(digits) != bits // 4 or not re.fullmatch(r"[0-9a-fA-F]+", digits):
        raise InputError(f"fingerprint {text!r} is not {bits // 4} hex digits ({bits} bits)")
    return int(digits, 16)


def hamming(a: int, b: int) -> int:
    """Number of slots in which two int fingerprints differ."""
    return (a ^ b).bit_count()


def hamming_rows(a: NDArray[np.uint64], b: NDArray[np.uint64]) -> NDArray[np.int64]:
    """Row-wise Hamming distance of two (n, n_words) uint64 arrays -> int64 (n,)."""
    counts = np.bitwise_count(np.bitwise_xor(a, b))
    distances: NDArray[np.int64] = counts.sum(axis=-1, dtype=np.int64)
    return distances


def estimate_cosine_rows(hamming: ArrayLike, bits: int) -> NDArray[np.float64]:
    """cos(pi * hamming / bits), element-wise: the estimate of the true cosine from a Hamming
    distance, the one place the formula is written (the same bits as the reference's
    ``Math.cos(Math.PI * d / b)`` for every distance at every width, 8 to 4096)."""
    result: NDArray[np.float64] = np.cos(np.pi * np.asarray(hamming, dtype=np.float64) / bits)
    return result


def estimate_cosine(a: int, b: int, bits: int) -> float:
    """The reference's ``estimateCosine``: cos(pi * hamming(a, b) / bits)."""
    return float(estimate_cosine_rows(hamming(a, b), validate_bits(bits)))


def as_fingerprint_array(
    fingerprints: Sequence[int] | NDArray[np.uint64], bits: int
) -> NDArray[np.uint64]:
    """Fingerprints as ints, a (n,) uint64 array (bits <= 64) or (n, n_words) -> (n, n_words).

    Raises:
        ParameterError: bits out of range, or an array whose shape does not fit ``bits``.
        InputError: an int fingerprint wider than ``bits``.
    """
    bits = validate_bits(bits)
    words = n_words(bits)
    if isinstance(fingerprints, np.ndarray):
        array = np.asarray(fingerprints, dtype=np.uint64)
        if array.ndim == 1 and words == 1:
            array = array[:, None]
        if array.ndim != 2 or array.shape[1] != words:
            raise ParameterError(
                f"fingerprints of shape {fingerprints.shape} do not hold {bits}-bit values"
            )
        if bits % 64 and np.any(array[:, -1] >> np.uint64(bits % 64)):
            raise InputError(f"a fingerprint does not fit in {bits} bits")
        return array
    out = np.zeros((len(fingerprints), words), dtype=np.uint64)
    for row, value in enumerate(fingerprints):
        out[row] = from_int(int(value), bits)
    return out
