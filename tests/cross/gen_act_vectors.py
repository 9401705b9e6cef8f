"""Regenerates tests/vectors/act/*.json. CBOR bytes come from cbor2
(canonical), expectations are written by hand from spec/004 — neither is
produced by the Rust code the vectors check.

    python tests/cross/gen_act_vectors.py
"""

import json
import pathlib

import cbor2

OUT = pathlib.Path(__file__).resolve().parents[1] / "vectors" / "act"

TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def c(v):
    return cbor2.dumps(v, canonical=True).hex()


def err(key, code):
    return {"key": key, "code": code, "severity": "error"}


def warn(key, code):
    return {"key": key, "code": code, "severity": "warning"}


example = cbor2.dumps({"query": "shoes", "limit": 5}, canonical=True)
tool_def = {
    "std:read-only": True,
    "std:idempotent": True,
    "std:destructive": False,
    "std:timeout-ms": 5000,
    "std:usage-hints": {"en": "Search orders", "de": "Bestellungen suchen"},
    "std:anti-usage-hints": "Not for refunds",
    "std:examples": [example],
    "std:tags": ["orders", "search"],
    "acme:priority": 3,
    "std:traceparent": TP,
}

METADATA = [
    ("tool definition, ten keys, valid", "tool-definition", False, c(tool_def), []),
    ("foreign namespaces pass through anywhere", "tool-call", False,
     c({"acme:priority": 3, "pg:sslcert": b"\x01\x02", "x:y": {"nested": [1, 2]}}), []),
    ("cross-cutting keys on a tool call", "tool-call", False,
     c({"std:session-id": "s1", "std:traceparent": TP, "std:tracestate": "a=1", "std:request-id": "r",
        "std:progress-token": "p", "std:agent-id": "agent-7", "std:on-behalf-of": {"user": "u1"}}), []),
    ("cross-cutting keys on a content part with progress", "content-part", False,
     c({"std:progress": 3, "std:progress-total": 10, "std:request-id": "r"}), []),
    ("progress on a tool call is not allowed", "tool-call", False, c({"std:progress": 3}),
     [err("std:progress", "NOT_ALLOWED_HERE")]),
    ("tool hints are not per-call metadata", "tool-call", False, c({"std:read-only": True}),
     [err("std:read-only", "NOT_ALLOWED_HERE")]),
    ("unknown std key", "tool-definition", False, c({"std:readonly": True}),
     [err("std:readonly", "UNKNOWN_STD_KEY")]),
    ("wrong types, every one reported", "tool-definition", False,
     c({"std:read-only": "yes", "std:timeout-ms": -1, "std:tags": ["a", 1], "std:examples": ["notbytes"]}),
     [err("std:read-only", "WRONG_TYPE"), err("std:timeout-ms", "WRONG_TYPE"), err("std:tags", "WRONG_TYPE"),
      err("std:examples", "WRONG_TYPE")]),
    ("timeout as float is the wrong type", "tool-definition", False, c({"std:timeout-ms": 1.5}),
     [err("std:timeout-ms", "WRONG_TYPE")]),
    ("example that is not an argument map", "tool-definition", False,
     c({"std:examples": [cbor2.dumps([1, 2])]}), [err("std:examples", "INVALID_VALUE")]),
    ("example with a non-text key", "tool-definition", False,
     c({"std:examples": [cbor2.dumps({1: "x"})]}), [err("std:examples", "INVALID_VALUE")]),
    ("example with a duplicate key", "tool-definition", False,
     c({"std:examples": [bytes.fromhex("a2616101616102")]}), [err("std:examples", "INVALID_VALUE")]),
    ("localized map with duplicate tags differing in case", "tool-definition", False,
     c({"std:usage-hints": {"en": "a", "EN": "b"}}), [err("std:usage-hints", "INVALID_VALUE")]),
    ("session-op values", "tool-definition", False, c({"std:session-op": "reopen"}),
     [err("std:session-op", "INVALID_VALUE")]),
    ("session-op open", "tool-definition", False, c({"std:session-op": "open"}), []),
    ("bad traceparent", "tool-call", False, c({"std:traceparent": TP.upper()}),
     [err("std:traceparent", "INVALID_VALUE")]),
    ("bad localized tag", "tool-definition", False, c({"std:usage-hints": {"en_US": "x"}}),
     [err("std:usage-hints", "INVALID_VALUE")]),
    ("credential in per-call metadata warns", "tool-call", False, c({"std:api-key": "k"}),
     [warn("std:api-key", "CREDENTIAL_IN_METADATA")]),
    ("credential in per-call metadata fails strict", "tool-call", True, c({"std:password": "p"}),
     [err("std:password", "CREDENTIAL_IN_METADATA")]),
    ("credentials in open-session args", "open-session-args", True,
     c({"std:username": "u", "std:password": "p", "database": "prod"}), []),
    ("cross-cutting keys are not session args", "open-session-args", False, c({"std:session-id": "s"}),
     [err("std:session-id", "NOT_ALLOWED_HERE")]),
    ("stored credential fields mean nothing", "credential-material", True,
     c({"std:username": 42, "std:bogus": True}), []),
    ("forward on a tool call", "tool-call", False, c({"std:forward": {"std:request-id": "inner"}}), []),
    ("forward must be a map", "tool-call", False, c({"std:forward": "blob"}), [err("std:forward", "WRONG_TYPE")]),
    ("component keys", "component", False,
     c({"name": "pg-tools", "version": "1.0.0", "description": {"en": "x"}, "default-language": "en",
        "capabilities": {"wasi:http": {}}, "acme:team": "data"}), []),
    ("component requires name and version", "component", False, c({"description": "x"}),
     [err("name", "MISSING_KEY"), err("version", "MISSING_KEY")]),
    ("component version must be SemVer", "component", False, c({"name": "x", "version": "1.0"}),
     [err("version", "INVALID_VALUE")]),
    ("component unknown bare key", "component", False, c({"name": "x", "version": "1.0.0", "nmae": "y"}),
     [err("nmae", "UNKNOWN_STD_KEY")]),
    ("component wildcard class", "component", False,
     c({"name": "x", "version": "1.0.0", "capabilities": {"db:*": {}}}), [err("capabilities", "INVALID_VALUE")]),
    ("component keys are not tool metadata", "component", False,
     c({"name": "x", "version": "1.0.0", "std:read-only": True}), [err("std:read-only", "NOT_ALLOWED_HERE")]),
    ("component: unknown std-prefixed key", "component", False,
     c({"name": "x", "version": "1.0.0", "std:nope": 1}), [err("std:nope", "UNKNOWN_STD_KEY")]),
]

DECODE_ERRORS = [
    ("not a map", "83010203", "NOT_A_MAP"),
    ("non-text key", "a10102", "NON_TEXT_KEY"),
    ("duplicate key", "a2616101616102", "DUPLICATE_KEY"),
    ("truncated: value missing", "a16161", "TRUNCATED"),
    ("truncated: integer head cut", "a161611a0001", "TRUNCATED"),
    ("declared entries beyond input", "a26161", "LENGTH_BEYOND_INPUT"),
    ("declared length beyond input", "bb00000000ffffffff", "LENGTH_BEYOND_INPUT"),
    ("text length beyond input", "a1617a7bffffffffffffffff", "LENGTH_BEYOND_INPUT"),
    ("indefinite map", "bf6161f5ff", "INDEFINITE_LENGTH"),
    ("indefinite text value", "a161617f6161ff", "INDEFINITE_LENGTH"),
    ("invalid UTF-8 key", "a162c328f5", "INVALID_UTF8"),
    ("nesting deeper than 64", "a16161" + "81" * 64 + "00", "TOO_DEEP"),
    ("trailing bytes", "a0a0", "TRAILING_BYTES"),
    ("reserved additional information", "a161611c", "MALFORMED"),
    ("undefined value", "a16161f7", "UNSUPPORTED_SIMPLE"),
]

TRACEPARENT = [
    (TP, None),
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", None),
    ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", None),
    ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "TRACEPARENT_VERSION"),
    ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", "TRACEPARENT_ZERO_ID"),
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "TRACEPARENT_ZERO_ID"),
    ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "TRACEPARENT_FIELD"),
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x", "TRACEPARENT_FIELD"),
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", "TRACEPARENT_LENGTH"),
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "TRACEPARENT_LENGTH"),
    ("", "TRACEPARENT_LENGTH"),
]

# (value, validation error, kept): `kept` is the tracestate a receiver keeps
# beside a valid traceparent (None: dropped; SAME: the value as written).
# Key grammar: Trace Context Level 2 (key = (lcalpha / DIGIT) 0*255 keychar,
# "@" a keychar), as the w3c/trace-context harness tests it since #584; a
# repeated key is a sender's error, a receiver keeps the leftmost entry.
SAME = object()
TRACESTATE = [
    ("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7", None, SAME),
    ("congo=t61rcWkgMzE , rojo=00f067aa0ba902b7", None, SAME),
    ("tenant@vendor=x", None, SAME),
    ("a=1,,b=2", None, SAME),
    (",".join(f"k{i}=v" for i in range(32)), None, SAME),
    (",".join(f"k{i}=v" for i in range(33)), "TRACESTATE_TOO_MANY_MEMBERS", None),
    ("Upper=1", "TRACESTATE_MEMBER", None),
    ("a=1,a=2", "TRACESTATE_DUPLICATE_KEY", "a=1"),
    ("novalue", "TRACESTATE_MEMBER", None),
    ("a=has,comma", "TRACESTATE_MEMBER", None),
    ("a=trailing ", None, "a=trailing"),  # trailing OWS is list syntax, trimmed
    # Level 2 keys: "@" anywhere after the first character, any number of times.
    ("foo@=1,bar=2", None, SAME),
    ("foo@@bar=1,bar=2", None, SAME),
    ("foo@bar@baz=1,bar=2", None, SAME),
    ("@foo=1,bar=2", "TRACESTATE_MEMBER", None),
    ("1special=1", None, SAME),
    ("foo.bar=1", "TRACESTATE_MEMBER", None),
    ("foo =1", "TRACESTATE_MEMBER", None),
    # Lengths: 256 characters in all, wherever the "@" is (Level 1's 241/14
    # tenant/system limits no longer apply).
    ("z" * 256 + "=1", None, SAME),
    ("z" * 257 + "=1", "TRACESTATE_MEMBER", None),
    ("t" * 241 + "@" + "v" * 14 + "=1", None, SAME),
    ("t" * 242 + "@v=1", None, SAME),
    ("t@" + "v" * 15 + "=1", None, SAME),
    ("t" * 200 + "@" + "v" * 55 + "=1", None, SAME),
    ("t" * 200 + "@" + "v" * 56 + "=1", "TRACESTATE_MEMBER", None),
    # Repeated keys: the whole header is never dropped for them.
    ("foo=1,foo=1", "TRACESTATE_DUPLICATE_KEY", "foo=1"),
    ("foo=1,foo=2", "TRACESTATE_DUPLICATE_KEY", "foo=1"),
    ("a=1, b=2,\ta=3,,c=4", "TRACESTATE_DUPLICATE_KEY", "a=1,b=2,c=4"),
    (",".join(["a=1"] * 32), "TRACESTATE_DUPLICATE_KEY", "a=1"),
    (",".join(["a=1"] * 33), "TRACESTATE_TOO_MANY_MEMBERS", None),
    # Nothing to keep.
    (" , ,", None, None),
    ("foo=,bar=3", "TRACESTATE_MEMBER", None),
]

LOCALIZED = [
    ("plain string uses the default language", "Search", "fr", "en", "Search", "en"),
    ("exact tag", {"en": "Search", "de": "Suchen"}, "de", "en", "Suchen", "de"),
    ("tags compare case-insensitively", {"en": "Search", "de": "Suchen"}, "DE", None, "Suchen", "de"),
    ("requested tag falls back to its prefix", {"en": "Search", "pt": "Buscar"}, "pt-BR", "en", "Buscar", "pt"),
    ("unknown language falls back to the default", {"en": "Search", "de": "Suchen"}, "fr", "de", "Suchen", "de"),
    ("default language falls back to its prefix", {"en": "Search", "de": "Suchen"}, "fr", "de-AT", "Suchen", "de"),
    ("no match: first entry", {"de": "Suchen", "en": "Search"}, "fr", "ja", "Suchen", "de"),
]
LOCALIZED_INVALID = [
    ("not text or map", 5, "WRONG_TYPE"),
    ("bad tag", {"en_US": "x"}, "BAD_TAG"),
    ("non-text translation", {"en": 1}, "NOT_TEXT"),
    ("empty map", {}, "EMPTY"),
]


def write(name, doc):
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def main():
    write("metadata.json", {
        "suite": "act",
        "description": "Metadata maps per position (spec/004) and the problems validation must report, compared as (key, code, severity) sets. Format: tests/vectors/README.md, section act/.",
        "cases": [
            {"name": n, "position": p, "strict": s, "cbor": h, "problems": probs}
            for n, p, s, h, probs in METADATA
        ],
    })
    write("decode.json", {
        "suite": "act",
        "description": "Bytes a metadata-map decoder must reject, with the error code.",
        "cases": [{"name": n, "cbor": h, "error": e} for n, h, e in DECODE_ERRORS],
    })
    write("trace.json", {
        "suite": "act",
        "description": "W3C trace context header values, the error code validation gives (null: valid) and, for tracestate, what a receiver keeps beside a valid traceparent (null: dropped). Format: tests/vectors/README.md, section act/.",
        "cases": [{"name": f"traceparent {i}", "header": "traceparent", "value": v, "error": e}
                  for i, (v, e) in enumerate(TRACEPARENT)]
        + [{"name": f"tracestate {i}", "header": "tracestate", "value": v, "error": e,
            "kept": v if k is SAME else k}
           for i, (v, e, k) in enumerate(TRACESTATE)],
    })
    write("localized.json", {
        "suite": "act",
        "description": "Localized strings: value as CBOR hex, requested language, default-language, and the resolved text and language; or the error code of an invalid value.",
        "cases": [
            {"name": n, "cbor": c(v), "requested": r, "default_language": d, "text": t, "language": l}
            for n, v, r, d, t, l in LOCALIZED
        ] + [{"name": n, "cbor": c(v), "error": e} for n, v, e in LOCALIZED_INVALID],
    })
    print(f"wrote vectors to {OUT}")


if __name__ == "__main__":
    main()
