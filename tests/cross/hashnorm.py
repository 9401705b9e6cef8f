"""DESIGN §5 number normalisation and the hash envelope, written in Python
on top of cbor2 — an implementation independent of the Rust core — so the
vectors in tests/vectors/hash/ are checked by code that shares nothing with
the encoder they pin.

cbor2 and RFC 8949 §4.2.1 differ in one respect: cbor2's ``canonical=True``
sorts map keys length-first, then bytewise (the RFC 7049 §3.9 "canonical"
rule), while §4.2.1 sorts by the encoded key bytes alone. For keys of one
major type whose heads are in shortest form — which is all the hash ever
sees, since the JSON data model has text keys only — the two orders are the
same: a shorter text key has a smaller head byte (or a smaller length byte
after the same head byte), so it sorts first either way, and keys of equal
length compare by their bytes. ``check_text_keys`` asserts that precondition
instead of assuming it. Floats: cbor2 canonical writes the shortest of
half/single/double that keeps the value, which is exactly §4.2.1.
"""

import hashlib
import math

import cbor2

MAX_HASH_DEPTH = 256
SAFE_INTEGER = 2**53
U64_MAX = 2**64 - 1
I64_MIN = -(2**63)


class Rejected(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def normalise(v, depth=0):
    """Reads ``v`` in the JSON data model as DESIGN §5 prescribes."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        # An integer is an integer: within what the core holds exactly
        # (i64 or u64) it is a CBOR integer, beyond it refused — never
        # silently a float the handler would not have been given.
        if I64_MIN <= v <= U64_MAX:
            return v
        raise Rejected("UNREPRESENTABLE_NUMBER")
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            raise Rejected("NON_FINITE_NUMBER")
        if v.is_integer() and abs(v) <= SAFE_INTEGER:
            return int(v)
        return v
    if isinstance(v, list):
        if depth >= MAX_HASH_DEPTH:
            raise Rejected("TOO_DEEP")
        return [normalise(x, depth + 1) for x in v]
    if isinstance(v, dict):
        if depth >= MAX_HASH_DEPTH:
            raise Rejected("TOO_DEEP")
        out = {}
        for k, x in v.items():
            if not isinstance(k, str):
                raise Rejected("NON_TEXT_KEY")
            out[k] = normalise(x, depth + 1)
        return out
    # bytes, tags, undefined, simple values: outside the JSON data model.
    raise Rejected("NOT_JSON_VALUE")


def check_text_keys(v):
    """Every map key is text (the precondition under which cbor2's
    length-first order equals §4.2.1's bytewise order)."""
    if isinstance(v, dict):
        assert all(isinstance(k, str) for k in v), "non-text key reached the encoder"
        for x in v.values():
            check_text_keys(x)
    elif isinstance(v, list):
        for x in v:
            check_text_keys(x)


def preimage(capability, value):
    norm = normalise(value)
    check_text_keys(norm)
    return cbor2.dumps({"capability": capability, "input": norm}, canonical=True)


def input_hash(capability, value):
    return hashlib.sha256(preimage(capability, value)).hexdigest()
