"""Cross-check of tests/vectors/hash/ against cbor2, an independent CBOR
implementation: for every vector, the same number normalisation
(hashnorm.py) followed by ``cbor2.dumps(..., canonical=True)`` must give
exactly the vector's bytes and SHA-256, or reject with the vector's code.

Run: python -m pytest tests/cross   (needs: pip install cbor2 pytest)
"""

import hashlib
import json
import pathlib

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
    assert normalise(2**64) == float(2**64)
    with pytest.raises(Rejected):
        normalise(2**64 + 1)  # no float keeps it, and it does not fit 64 bits
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
