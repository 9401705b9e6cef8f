"""Regenerates tests/vectors/hash/input_hash.json from the case list below,
computing every expected byte string and hash with cbor2 (see hashnorm.py),
never with the Rust encoder the vectors check.

    python tests/cross/gen_hash_vectors.py
"""

import json
import pathlib

import cbor2

from hashnorm import Rejected, input_hash, preimage

OUT = pathlib.Path(__file__).resolve().parents[1] / "vectors" / "hash" / "input_hash.json"

deep_array = "81" * 257 + "00"

CASES = [
    # name, capability, input (JSON) or None, input_cbor hex or None, note
    ("integer one", "orders.search", 1, None, "JS 1, Python 1"),
    ("float one hashes as integer one", "orders.search", 1.0, None, "Python 1.0"),
    ("zero", "c", 0, None, ""),
    ("negative zero is zero", "c", -0.0, None, "integral, within 2^53: the integer 0"),
    ("2^53 integer", "c", 2**53, None, "largest safe integer + 1, still exact"),
    ("2^53 as float becomes integer", "c", float(2**53), None, "integral and within ±2^53"),
    ("-2^53 as float becomes integer", "c", -float(2**53), None, ""),
    ("2^53+1 host integer stays integer", "c", 2**53 + 1, None, "host integer beyond 2^53: CBOR integer while it fits 64 bits"),
    ("2^53+2 float stays float", "c", float(2**53 + 2), None, "integral float beyond 2^53: shortest float (double)"),
    ("2^60 float is a single", "c", float(2**60), None, "shortest float keeping the value: single"),
    ("2^60 host integer", "c", 2**60, None, ""),
    ("u64 max", "c", 2**64 - 1, None, "largest CBOR unsigned integer"),
    ("i64 min", "c", -(2**63), None, ""),
    ("2^64 float", "c", float(2**64), None, "past 64 bits: a float (single holds it)"),
    ("rejected: -2^64 as CBOR integer", "c", None, "3bffffffffffffffff", "smallest CBOR negative integer, below what the core holds exactly (i64): refused, never read as a float"),
    ("rejected: -2^63-1 as CBOR integer", "c", None, "3b8000000000000000", "one below i64, the least integer the core holds exactly: refused in every binding (as CBOR: a JSON parser without big integers would read a float)"),
    ("half float 1.5", "c", 1.5, None, "f93e00"),
    ("half float 0.5 negative", "c", -0.5, None, ""),
    ("half subnormal", "c", 5.960464477539063e-08, None, "smallest half subnormal"),
    ("half max 65504", "c", 65504.5, None, "65504.5 needs more mantissa than a half: single"),
    ("half 0.25", "c", 0.25, None, ""),
    ("single 100000.5", "c", 100000.5, None, ""),
    ("single max", "c", 3.4028234663852886e38, None, ""),
    ("double 0.1", "c", 0.1, None, ""),
    ("double 1e300", "c", 1e300, None, ""),
    ("double -4.1", "c", -4.1, None, ""),
    ("float 1.0 from CBOR half", "c", None, "f93c00", "a CBOR float 1.0 is the integer 1"),
    ("float 1.0 from CBOR double", "c", None, "fb3ff0000000000000", ""),
    ("null", "c", None, "f6", "JSON null (given as CBOR so it is not mistaken for an absent input)"),
    ("booleans and null", "c", [True, False, None], None, ""),
    ("empty object", "c", {}, None, ""),
    ("empty array", "c", [], None, ""),
    ("empty string", "c", "", None, ""),
    ("key order: length first then bytes", "c", {"b": 1, "aa": 2, "a": 3, "B": 4, "ab": 5}, None, ""),
    ("key order: nested maps", "c", {"z": {"y": 1, "x": {"d": [], "c": {}}}, "a": [{"k2": 1, "k1": 2}]}, None, ""),
    ("key order: unicode keys", "c", {"é": 1, "z": 2, "日本": 3, "😀": 4, "e": 5}, None, "é is 2 UTF-8 bytes, so it sorts after z"),
    ("key order: 23 vs 24 byte keys", "c", {"k" * 24: 1, "k" * 23: 2, "j" * 24: 3}, None, "text heads 0x77 and 0x7818"),
    ("unicode capability id and text", "ordres.réserver", {"note": "naïve café 水 𐅑"}, None, ""),
    ("long string", "c", {"s": "x" * 300}, None, "two-byte text length head"),
    ("long array", "c", list(range(30)), None, "one-byte array length head"),
    ("realistic refund", "orders.refund", {
        "orderId": "A-10023",
        "amount": 1250.5,
        "currency": "EUR",
        "reason": "damaged",
        "items": [{"sku": "X-1", "qty": 2, "price": 600.25}, {"sku": "Y-9", "qty": 1, "price": 50.0}],
        "notify": True,
        "meta": {"ticket": None, "priority": 3},
    }, None, ""),
    # Rejected inputs: CBOR can hold them, the JSON data model cannot.
    ("rejected: NaN", "c", None, "f97e00", ""),
    ("rejected: +infinity", "c", None, "f97c00", ""),
    ("rejected: -infinity in a map", "c", None, "a16178f9fc00", ""),
    ("rejected: integer key", "c", None, "a10102", ""),
    ("rejected: byte string", "c", None, "a161614401020304", ""),
    ("rejected: tag", "c", None, "c11a514b67b0", ""),
    ("rejected: nesting deeper than 256", "c", None, deep_array, "257 nested arrays"),
]


# The refusal's text, where it does not depend on how a host names a value:
# every binding words it as the core does (HashError), whether the core met
# the value in CBOR or the binding met it converting its own value.
MESSAGES = {
    "rejected: NaN": "input at / is NaN or infinite; only finite numbers can be hashed",
    "rejected: +infinity": "input at / is NaN or infinite; only finite numbers can be hashed",
    "rejected: -infinity in a map": "input at /x is NaN or infinite; only finite numbers can be hashed",
    "rejected: integer key": "input at / has a map key that is not text; the JSON data model has text keys only",
}


def main():
    cases = []
    for name, cap, value, cbor_hex, note in CASES:
        case = {"name": name, "capability": cap}
        if note:
            case["note"] = note
        if cbor_hex is not None:
            case["input_cbor"] = cbor_hex
            value = cbor2.loads(bytes.fromhex(cbor_hex))
        else:
            case["input"] = value
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
            case["host_integer"] = True
        try:
            case["cbor"] = preimage(cap, value).hex()
            case["sha256"] = input_hash(cap, value)
        except Rejected as e:
            case["error"] = e.code
            case["error_code"] = "INVALID_INPUT"
            if name in MESSAGES:
                case["message"] = MESSAGES[name]
        cases.append(case)
    doc = {
        "suite": "hash",
        "description": "Approval input hash (DESIGN §5): lowercase hex SHA-256 of the RFC 8949 §4.2.1 deterministic CBOR of {\"capability\": id, \"input\": input} after number normalisation. Format: tests/vectors/README.md, section hash/. Generated by tests/cross/gen_hash_vectors.py with cbor2.",
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
