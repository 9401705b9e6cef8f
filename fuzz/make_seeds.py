#!/usr/bin/env python3
"""Regenerates fuzz/seeds/<target>/ from tests/vectors/ (external/ holds the RFC 8949 corpus).

Each seed is one file named by the SHA-256 of its bytes (libFuzzer's own
naming), so re-running is idempotent. Run from the repository root:
    python3 fuzz/make_seeds.py [--shared DIR-WITH-rfc8949-appendix-a.json]
"""
import base64, glob, hashlib, json, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(ROOT, "fuzz", "seeds")
shared = sys.argv[sys.argv.index("--shared") + 1] if "--shared" in sys.argv else os.path.join(ROOT, "tests", "vectors", "external")


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(SEEDS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha256(data).hexdigest()[:40]), "wb") as f:
        f.write(data)


def cases(path):
    with open(path) as f:
        return json.load(f).get("cases", [])


vec = os.path.join(ROOT, "tests", "vectors")
# CBOR: metadata maps, decoder cases, hash preimages, RFC 8949 Appendix A.
for c in cases(os.path.join(vec, "act", "metadata.json")) + cases(os.path.join(vec, "act", "decode.json")):
    if isinstance(c.get("cbor"), str):
        b = bytes.fromhex(c["cbor"])
        put("cbor_meta", b)
        put("cbor_roundtrip", b)
for c in cases(os.path.join(vec, "hash", "input_hash.json")):
    if isinstance(c.get("cbor"), str):
        put("cbor_roundtrip", bytes.fromhex(c["cbor"]))
    if "input" in c:
        put("input_hash", c["capability"] + "\n" + json.dumps(c["input"]))
rfc = os.path.join(shared, "rfc8949-appendix-a.json")
if os.path.exists(rfc):
    for item in json.load(open(rfc)):
        b = base64.b64decode(item["cbor"])
        put("cbor_roundtrip", b)
        put("cbor_meta", b)
        if "decoded" in item:
            put("input_hash", "x.y\n" + json.dumps(item["decoded"]))
# Trace context: arbitrary's encoding of (&str, Option<&str>, Option<&str>)
# takes a length-prefixed first string; a plain header value still seeds
# the byte patterns the validator walks.
for c in cases(os.path.join(vec, "act", "trace.json")):
    put("trace_context", c["value"])
# Manifests and declarations.
for p in glob.glob(os.path.join(ROOT, "examples", "act", "*.toml")) + glob.glob(os.path.join(ROOT, "cli", "tests", "**", "*.toml"), recursive=True):
    put("manifest_toml", open(p, "rb").read())
for p in glob.glob(os.path.join(ROOT, "examples", "declarations", "*")):
    data = open(p, "rb").read()
    put("declaration", (b"\x00" if p.endswith(".json") else b"\x01") + data)
for c in cases(os.path.join(vec, "registry", "valid.json")) + cases(os.path.join(vec, "registry", "rules.json")):
    doc = {"capabilities": c.get("capabilities", {})}
    if "options" in c:
        doc.update({k: v for k, v in c["options"].items() if k in ("defaults", "policies", "approverMustDiffer")})
    put("declaration", b"\x00" + json.dumps(doc).encode())
    decls = [{"id": k, "meta": v} for k, v in c.get("capabilities", {}).items()]
    put("descriptor_json", json.dumps([decls, c.get("options", {})]))
# Descriptors: the ones the example declarations give (written by the CLI
# tests); a hand-written one keeps the seed set non-empty.
put("descriptor_json", json.dumps({
    "id": "orders.search", "toolNames": {"aiSdk": "orders_search", "mcp": "orders_search"},
    "description": "Search orders.", "sideEffect": "read", "risk": "low", "tags": ["orders"],
    "idempotent": False, "timeoutMs": 30000, "approval": {"required": False, "expiresInMs": 900000},
    "discovery": "discoverable", "mcpAnnotations": {"readOnlyHint": True}}))
# Wasm: the preamble, a module with a type and a custom section.
module = b"\0asm\x01\0\0\0" + bytes([1, 4, 1, 0x60, 0, 0]) + bytes([0, 5, 4]) + b"name"
put("wasm_section", module)
put("wasm_section", b"\0asm\x01\0\0\0")
# Pipeline: a few byte strings; arbitrary reads any bytes.
for s in [b"\x00" * 64, b"\x01\x00\x02\x00" * 32, bytes(range(256))]:
    put("pipeline_answers", s)
# Input limits: small JSON documents, deep and wide ones at the limits.
for c in cases(os.path.join(vec, "hash", "input_hash.json")):
    if "input" in c:
        put("input_limits", json.dumps(c["input"]))
put("input_limits", '{"v":' + "[" * 63 + "]" * 63 + "}")
put("input_limits", '{"v":' + "[" * 64 + "]" * 64 + "}")
put("input_limits", json.dumps({f"k{i}": 0 for i in range(1025)}))
print("seeds:", {t: len(os.listdir(os.path.join(SEEDS, t))) for t in sorted(os.listdir(SEEDS))})
