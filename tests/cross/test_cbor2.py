"""Cross-checks of tests/vectors/hash/, two of them:

1. ``test_vector_matches_cbor2``: hashnorm.py's normalisation followed by
   ``cbor2.dumps(..., canonical=True)`` gives exactly the vector's bytes and
   SHA-256, or rejects with the vector's code. This is the code that
   *wrote* the vectors (gen_hash_vectors.py imports hashnorm), so it only
   shows the file is still what the generator makes.
2. ``test_vector_matches_an_encoder_written_apart``: a second normaliser and
   a deterministic CBOR encoder written in this file from the text of
   tests/vectors/README.md and RFC 8949 §4.2.1 (shortest heads, shortest
   float that keeps the value, map keys sorted by their encoded bytes),
   sharing no code with hashnorm.py and not using cbor2's encoder, give the
   same bytes, SHA-256 and rejection codes. cbor2 is used here only to
   *decode* ``input_cbor``. Besides, ``cbor2.dumps(canonical=True)`` of this
   file's normalised value must give the same bytes: cbor2's encoder against
   this file's one.

Neither involves the Rust encoder the vectors pin (core/tests/hash_vectors.rs
runs it against the same file).

Run: python -m pytest tests/cross   (needs: pip install cbor2 pytest)
"""

import hashlib
import json
import math
import pathlib
import struct

import cbor2
import pytest

from hashnorm import Rejected, normalise, preimage

VECTORS = pathlib.Path(__file__).resolve().parents[1] / "vectors" / "hash"
FILES = sorted(VECTORS.glob("*.json"))
CASES = [(f.name, c) for f in FILES for c in json.loads(f.read_text())["cases"]]


def test_vectors_exist():
    # Fail loudly rather than pass an empty parametrisation.
    assert FILES, f"no vector files in {VECTORS}"
    assert len(CASES) >= 40


def input_of(case):
    if "input_cbor" in case:
        return cbor2.loads(bytes.fromhex(case["input_cbor"]))
    return case["input"]


@pytest.mark.parametrize("file,case", CASES, ids=[c["name"] for _, c in CASES])
def test_vector_matches_cbor2(file, case):
    value = input_of(case)
    if "error" in case:
        with pytest.raises(Rejected) as e:
            preimage(case["capability"], value)
        assert e.value.code == case["error"]
        assert case["error_code"] == "INVALID_INPUT"
        return
    got = preimage(case["capability"], value)
    assert got.hex() == case["cbor"]
    assert hashlib.sha256(got).hexdigest() == case["sha256"]
    # The vector's bytes are themselves canonical: cbor2 re-encodes them unchanged.
    assert cbor2.dumps(cbor2.loads(got), canonical=True) == got


def test_same_hash_for_one_and_one_point_zero():
    by_name = {c["name"]: c for _, c in CASES}
    assert by_name["integer one"]["sha256"] == by_name["float one hashes as integer one"]["sha256"]
    assert by_name["zero"]["sha256"] == by_name["negative zero is zero"]["sha256"]


def test_normalisation_rules():
    assert normalise(1.0) == 1 and isinstance(normalise(1.0), int)
    assert isinstance(normalise(float(2**53 + 2)), float)
    with pytest.raises(Rejected):
        normalise(2**64)  # an integer beyond what the core holds: refused, not a float
    with pytest.raises(Rejected):
        normalise(-(2**64))
    with pytest.raises(Rejected):
        normalise(float("nan"))


def test_cbor2_orders_text_keys_like_rfc8949():
    # Length-first (cbor2) and bytewise-on-encoded-keys (§4.2.1) agree for
    # text keys; they would differ for mixed key types, which the hash
    # never encodes (NON_TEXT_KEY).
    keys = ["b", "aa", "a", "é", "z" * 24, "y" * 23, "😀"]
    encoded = sorted(cbor2.dumps(k) for k in keys)
    via_cbor2 = cbor2.dumps({k: 0 for k in keys}, canonical=True)
    assert via_cbor2 == bytes([0xA0 + len(keys)]) + b"".join(e + b"\x00" for e in encoded)


# ----- a second implementation, written apart from hashnorm.py ----------
#
# From tests/vectors/README.md (`hash/`): integral numbers within ±2^53 are
# integers; other host integers stay integers while they fit CBOR's 64-bit
# argument (-2^64 … 2^64-1); any other number is the shortest of half /
# single / double that keeps its value (none: UNREPRESENTABLE_NUMBER);
# NaN/±inf are NON_FINITE_NUMBER, non-text map keys NON_TEXT_KEY, byte
# strings, tags and other simple values NOT_JSON_VALUE, more than 256
# nested arrays/maps TOO_DEEP.
#
# Key order: RFC 8949 §4.2.1 (core deterministic encoding) sorts a map's
# keys by their deterministically encoded bytes, lexicographically. cbor2's
# ``canonical=True`` sorts length-first, then bytewise — RFC 7049 §3.9
# "canonical", kept by RFC 8949 §4.2.3 as "length-first map key ordering".
# The two differ for keys of mixed types (see
# test_cbor2_canonical_is_length_first_not_rfc8949_bytewise), never for
# text keys alone, the only keys a hash encodes. ``encode_apart`` sorts by
# the encoded bytes itself, so it follows §4.2.1 whatever cbor2 does.


class RefusedApart(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


TWO_53 = 1 << 53
TWO_64 = 1 << 64
MAX_LEVELS = 256


def _shortest_float(f):
    """The bytes of the shortest of half / single / double equal to ``f``."""
    for fmt, head in ((">e", 0xF9), (">f", 0xFA)):
        try:
            packed = struct.pack(fmt, f)
        except (OverflowError, struct.error):
            continue
        if struct.unpack(fmt, packed)[0] == f:
            return bytes([head]) + packed
    return bytes([0xFB]) + struct.pack(">d", f)


def normalise_apart(v, levels=0):
    """The value a hash encodes; ``levels`` counts the arrays/maps around ``v``."""
    if v is True or v is False or v is None or type(v) is str:
        return v
    if type(v) is int:
        # README: a host integer is a CBOR integer while the core can hold
        # it exactly (-2^63 … 2^64-1), else refused.
        if -(2**63) <= v < TWO_64:
            return v
        raise RefusedApart("UNREPRESENTABLE_NUMBER")
    if type(v) is float:
        if v != v or v in (math.inf, -math.inf):
            raise RefusedApart("NON_FINITE_NUMBER")
        if v == int(v) and -TWO_53 <= v <= TWO_53:
            return int(v)  # 1.0 is 1, -0.0 is 0
        return v
    if type(v) in (list, dict):
        if levels + 1 > MAX_LEVELS:
            raise RefusedApart("TOO_DEEP")
        if type(v) is list:
            return [normalise_apart(x, levels + 1) for x in v]
        out = {}
        for k, x in v.items():
            if type(k) is not str:
                raise RefusedApart("NON_TEXT_KEY")
            out[k] = normalise_apart(x, levels + 1)
        return out
    raise RefusedApart("NOT_JSON_VALUE")  # bytes, tags, undefined, simple values


def _head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for extra, width in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if n < 1 << (8 * width):
            return bytes([major << 5 | extra]) + n.to_bytes(width, "big")
    raise ValueError(f"{n} does not fit a CBOR argument")


def encode_apart(v):
    """RFC 8949 §4.2.1 deterministic CBOR of a normalised value."""
    if v is False:
        return b"\xf4"
    if v is True:
        return b"\xf5"
    if v is None:
        return b"\xf6"
    if type(v) is int:
        return _head(0, v) if v >= 0 else _head(1, -1 - v)
    if type(v) is float:
        return _shortest_float(v)
    if type(v) is str:
        b = v.encode("utf-8")
        return _head(3, len(b)) + b
    if type(v) is list:
        return _head(4, len(v)) + b"".join(encode_apart(x) for x in v)
    if type(v) is dict:
        pairs = sorted((encode_apart(k), encode_apart(x)) for k, x in v.items())
        return _head(5, len(pairs)) + b"".join(k + x for k, x in pairs)
    raise TypeError(f"not a normalised value: {v!r}")


def preimage_apart(capability, value):
    return encode_apart({"capability": capability, "input": normalise_apart(value)})


def check_case_apart(case):
    """Asserts the vector ``case`` against the implementation above."""
    value = input_of(case)
    if "error" in case:
        with pytest.raises(RefusedApart) as e:
            preimage_apart(case["capability"], value)
        assert e.value.code == case["error"], case["name"]
        assert case["error_code"] == "INVALID_INPUT", case["name"]
        return
    got = preimage_apart(case["capability"], value)
    assert got.hex() == case["cbor"], case["name"]
    assert hashlib.sha256(got).hexdigest() == case["sha256"], case["name"]
    # cbor2's encoder over this file's normalised value: the same bytes
    # (text keys only, so its length-first order is §4.2.1's order here).
    envelope = {"capability": case["capability"], "input": normalise_apart(value)}
    assert cbor2.dumps(envelope, canonical=True) == got, case["name"]


@pytest.mark.parametrize("file,case", CASES, ids=[c["name"] for _, c in CASES])
def test_vector_matches_an_encoder_written_apart(file, case):
    check_case_apart(case)


def test_the_check_written_apart_catches_a_wrong_vector():
    # Mutants of real vectors: one byte of the expected CBOR changed, the
    # expected hash changed, a rejection given another code. Each must fail.
    by_name = {c["name"]: c for _, c in CASES}
    good = by_name["realistic refund"]
    check_case_apart(good)
    flipped = good["cbor"][:-2] + ("00" if good["cbor"][-2:] != "00" else "01")
    for wrong in (
        {**good, "cbor": flipped},
        {**good, "sha256": hashlib.sha256(bytes.fromhex(flipped)).hexdigest()},
        {**by_name["key order: length first then bytes"], "cbor": by_name["booleans and null"]["cbor"]},
        {**by_name["rejected: integer key"], "error": "NOT_JSON_VALUE"},
    ):
        with pytest.raises(AssertionError):
            check_case_apart(wrong)


def test_the_encoder_written_apart_on_rfc8949_appendix_a_examples():
    # Independent of the vectors: RFC 8949 Appendix A encodings.
    for value, hexed in [
        (0, "00"), (23, "17"), (24, "1818"), (1000, "1903e8"), (1000000, "1a000f4240"),
        (18446744073709551615, "1bffffffffffffffff"), (-1, "20"), (-1000, "3903e7"),
        (-18446744073709551616, "3bffffffffffffffff"),
        (1.5, "f93e00"), (65504.0, "f97bff"), (100000.0, "fa47c35000"), (3.4028234663852886e38, "fa7f7fffff"),
        (1.1, "fb3ff199999999999a"), (1.0e300, "fb7e37e43c8800759c"), (5.960464477539063e-8, "f90001"),
        (-4.1, "fbc010666666666666"), (False, "f4"), (True, "f5"), (None, "f6"), ("", "60"), ("IETF", "6449455446"),
        ("\u00fc", "62c3bc"), ("\u6c34", "63e6b0b4"), ("\U00010151", "64f0908591"), ([], "80"),
        ([1, [2, 3], [4, 5]], "8301820203820405"), ({}, "a0"), ({"a": 1, "b": [2, 3]}, "a26161016162820203"),
    ]:
        assert encode_apart(value).hex() == hexed, value


def test_normalisation_written_apart():
    assert normalise_apart(1.0) == 1 and type(normalise_apart(1.0)) is int
    assert type(normalise_apart(-0.0)) is int
    assert type(normalise_apart(float(2**53))) is int
    assert type(normalise_apart(float(2**53 + 2))) is float
    for bad, code in [(2**64, "UNREPRESENTABLE_NUMBER"), (-(2**63) - 1, "UNREPRESENTABLE_NUMBER"),
                      (2**64 + 1, "UNREPRESENTABLE_NUMBER"), (10**400, "UNREPRESENTABLE_NUMBER"),
                      (math.nan, "NON_FINITE_NUMBER"), ({1: 2}, "NON_TEXT_KEY"), (b"x", "NOT_JSON_VALUE")]:
        with pytest.raises(RefusedApart) as e:
            normalise_apart(bad)
        assert e.value.code == code
    deep = []
    for _ in range(255):
        deep = [deep]
    normalise_apart(deep)  # 256 levels: allowed
    with pytest.raises(RefusedApart) as e:
        normalise_apart([deep])
    assert e.value.code == "TOO_DEEP"


def test_cbor2_canonical_is_length_first_not_rfc8949_bytewise():
    # Where the two orders part: "a" encodes as 61 61 (2 bytes), 1000 as
    # 19 03 e8 (3 bytes). Length-first (cbor2 canonical) puts "a" first;
    # §4.2.1's bytewise order puts 1000 first (0x19 < 0x61). Should cbor2
    # ever switch orders, this says so (and the text-key argument above
    # stops mattering).
    mixed = {"a": 0, 1000: 0}
    assert cbor2.dumps(mixed, canonical=True).hex() == "a2" "616100" "1903e800"
    assert encode_apart(mixed).hex() == "a2" "1903e800" "616100"
