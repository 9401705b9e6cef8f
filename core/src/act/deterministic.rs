//! RFC 8949 §4.2.1 core-deterministic CBOR and the approval input hash
//! (DESIGN §5).
//!
//! Two encoders share the primitives here:
//!
//! * [`input_hash`] / [`hash_cbor_input`] read the input in the JSON data
//!   model first (integral numbers within ±2^53 become CBOR integers, so JS
//!   `1`, Python `1` and Python `1.0` hash alike) and then write
//!   deterministic CBOR straight from `serde_json::Value` into a reused
//!   buffer — no intermediate `ciborium::Value`, which is what keeps a 1 KB
//!   input under the 3 µs target.
//! * [`encode_deterministic`] writes any `ciborium::Value` as §4.2.1
//!   prescribes without changing its data model (a float stays a float),
//!   for metadata maps and the RFC 8949 Appendix A corpus.

use std::cell::RefCell;
use std::cmp::Ordering;

use ciborium::Value as Cbor;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use crate::error::{CapabilityError, ErrorCode};

/// Deepest nesting the hash encoder follows. serde_json's own parser stops
/// at 128, so every parsed input fits; the limit only guards values built
/// in code (or passed by a binding) against stack exhaustion.
pub const MAX_HASH_DEPTH: usize = 256;

/// The smallest and largest integers a JSON value holds exactly (as
/// `serde_json::Number`'s `i64` and `u64`): what the hash binds, the store
/// keeps and a resumed handler gets. A host integer outside them is
/// INVALID_INPUT `UNREPRESENTABLE_NUMBER`, never a rounded float. Python
/// and Swift meet the range in their conversions to `i64`/`u64`; Node's
/// BigInts are compared against these (generated into `protocol.ts`).
pub const MIN_EXACT_INTEGER: i64 = i64::MIN;
/// See [`MIN_EXACT_INTEGER`].
pub const MAX_EXACT_INTEGER: u64 = u64::MAX;

/// 2^53: the largest magnitude up to which every integer is exact in an
/// IEEE 754 double, hence in every host's number type.
const SAFE_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Why an input cannot be hashed. Every variant is an invalid input
/// ([`ErrorCode::InvalidInput`]); [`HashError::code`] is the stable
/// sub-code the vectors in `tests/vectors/hash/` pin.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HashError {
    /// NaN or ±infinity: JSON has no such numbers, so no host agrees on them.
    #[error("input at {path} is NaN or infinite; only finite numbers can be hashed")]
    NonFinite { path: String },
    /// An integer beyond 64 bits that no float holds exactly either.
    #[error("input at {path} is an integer no CBOR integer or IEEE 754 float holds exactly")]
    Unrepresentable { path: String },
    /// A map key that is not text (possible only on the CBOR path).
    #[error(
        "input at {path} has a map key that is not text; the JSON data model has text keys only"
    )]
    NonTextKey { path: String },
    /// Two keys equal after decoding (possible only on the CBOR path).
    #[error("input at {path} has the key {key:?} twice")]
    DuplicateKey { path: String, key: String },
    /// Byte strings, tags, undefined: outside the JSON data model.
    #[error("input at {path} holds a CBOR {what}, which the JSON data model has no place for")]
    NotJson { path: String, what: &'static str },
    /// Nesting deeper than [`MAX_HASH_DEPTH`].
    #[error("input nests deeper than {limit} levels at {path}")]
    TooDeep { path: String, limit: usize },
    /// A host value outside the JSON data model (a set, a date, a function),
    /// met by a binding's conversion and named in the host's words.
    #[error("input at {path} is {kind}, which the JSON data model has no place for")]
    HostValue { path: String, kind: String },
}

impl HashError {
    /// Stable sub-code, e.g. `NON_FINITE_NUMBER`.
    pub const fn code(&self) -> &'static str {
        match self {
            HashError::NonFinite { .. } => "NON_FINITE_NUMBER",
            HashError::Unrepresentable { .. } => "UNREPRESENTABLE_NUMBER",
            HashError::NonTextKey { .. } => "NON_TEXT_KEY",
            HashError::DuplicateKey { .. } => "DUPLICATE_KEY",
            HashError::NotJson { .. } | HashError::HostValue { .. } => "NOT_JSON_VALUE",
            HashError::TooDeep { .. } => "TOO_DEEP",
        }
    }

    /// The error for a value a binding's conversion could not hand over as
    /// JSON, by the sub-code it met (`path` a JSON pointer, `""` the root;
    /// `kind` what the host calls the value, for `NOT_JSON_VALUE`): the one
    /// wording every binding's refusal uses. An unknown sub-code is
    /// `NOT_JSON_VALUE`.
    pub fn of_host_value(reason: &str, path: &str, kind: &str) -> HashError {
        let path = if path.is_empty() {
            "/".to_owned()
        } else {
            path.to_owned()
        };
        match reason {
            "NON_FINITE_NUMBER" => HashError::NonFinite { path },
            "UNREPRESENTABLE_NUMBER" => HashError::Unrepresentable { path },
            "NON_TEXT_KEY" => HashError::NonTextKey { path },
            "TOO_DEEP" => HashError::TooDeep {
                path,
                limit: MAX_HASH_DEPTH,
            },
            _ => HashError::HostValue {
                path,
                kind: kind.to_owned(),
            },
        }
    }
}

impl From<HashError> for CapabilityError {
    fn from(e: HashError) -> Self {
        CapabilityError::new(ErrorCode::InvalidInput, e.to_string())
            .with_details(serde_json::json!({ "reason": e.code() }))
    }
}

// ---------------------------------------------------------------- primitives

/// Writes a head (major type + argument) in its shortest form (§4.2.1).
#[inline(always)]
pub(crate) fn write_head(buf: &mut Vec<u8>, major: u8, arg: u64) {
    let m = major << 5;
    if arg < 24 {
        buf.push(m | arg as u8);
    } else if arg <= 0xff {
        buf.extend_from_slice(&[m | 24, arg as u8]);
    } else if arg <= 0xffff {
        buf.push(m | 25);
        buf.extend_from_slice(&(arg as u16).to_be_bytes());
    } else if arg <= 0xffff_ffff {
        buf.push(m | 26);
        buf.extend_from_slice(&(arg as u32).to_be_bytes());
    } else {
        buf.push(m | 27);
        buf.extend_from_slice(&arg.to_be_bytes());
    }
}

#[inline(always)]
fn write_text(buf: &mut Vec<u8>, s: &str) {
    write_head(buf, 3, s.len() as u64);
    buf.extend_from_slice(s.as_bytes());
}

/// Writes an integer in `[-2^64, 2^64 - 1]`; `None` if it does not fit.
fn write_int(buf: &mut Vec<u8>, i: i128) -> Option<()> {
    if i >= 0 {
        write_head(buf, 0, u64::try_from(i).ok()?);
    } else {
        write_head(buf, 1, u64::try_from(-1 - i).ok()?);
    }
    Some(())
}

/// The half-precision bits of `f`, if a half holds it exactly.
fn to_half_exact(f: f64) -> Option<u16> {
    let single = f as f32;
    if f64::from(single) != f && !f.is_nan() {
        return None;
    }
    let bits = single.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let mant = bits & 0x7f_ffff;
    if exp == 0xff {
        // Infinities keep their sign; every NaN is written as the one
        // canonical quiet NaN, as §4.2.2 suggests for deterministic output.
        return Some(if mant == 0 { sign | 0x7c00 } else { 0x7e00 });
    }
    if exp == 0 {
        // Zero, or a single-precision subnormal (far below half's range).
        return (mant == 0).then_some(sign);
    }
    let e = exp - 127;
    if (-14..=15).contains(&e) {
        return (mant & 0x1fff == 0)
            .then(|| sign | (((e + 15) as u16) << 10) | (mant >> 13) as u16);
    }
    if (-24..-14).contains(&e) {
        // Half subnormal: value = m × 2^-24 with m = significand × 2^(e+1).
        let significand = mant | 0x80_0000;
        let shift = (-1 - e) as u32;
        return (significand & ((1 << shift) - 1) == 0)
            .then(|| sign | (significand >> shift) as u16);
    }
    None
}

/// Writes `f` as the shortest IEEE 754 float (half, single, double) that
/// keeps its value — §4.2.1's rule for floats.
pub(crate) fn write_float(buf: &mut Vec<u8>, f: f64) {
    if let Some(h) = to_half_exact(f) {
        buf.push(0xf9);
        buf.extend_from_slice(&h.to_be_bytes());
    } else if f64::from(f as f32) == f {
        buf.push(0xfa);
        buf.extend_from_slice(&(f as f32).to_bits().to_be_bytes());
    } else {
        buf.push(0xfb);
        buf.extend_from_slice(&f.to_bits().to_be_bytes());
    }
}

/// Text keys in §4.2.1 order: by encoded bytes, which for text heads in
/// shortest form is shorter key first, then bytewise.
#[inline(always)]
fn text_key_order(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

// ---------------------------------------------------------- JSON data model

/// A JSON number as DESIGN §5 normalises it.
fn write_json_float(buf: &mut Vec<u8>, f: f64, path: &Path<'_>) -> Result<(), HashError> {
    if !f.is_finite() {
        return Err(HashError::NonFinite {
            path: path.render(),
        });
    }
    if f.fract() == 0.0 && f.abs() <= SAFE_INTEGER {
        // Exact: |f| ≤ 2^53 and integral. -0.0 becomes 0.
        let i = f as i64;
        if i >= 0 {
            write_head(buf, 0, i as u64);
        } else {
            write_head(buf, 1, !(i as u64));
        }
    } else {
        write_float(buf, f);
    }
    Ok(())
}

/// Where in a value a walk is, rendered as a JSON pointer (RFC 6901) only
/// when something is refused there (so the hot path allocates nothing for
/// it): the core's hash walks and a binding's conversion of host values
/// name a place the same way.
pub enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    /// A JSON pointer (RFC 6901); the root shows as `/`.
    pub fn render(&self) -> String {
        let s = self.pointer();
        if s.is_empty() { "/".into() } else { s }
    }

    /// A JSON pointer (RFC 6901); the root is the empty string.
    pub fn pointer(&self) -> String {
        match self {
            Path::Root => String::new(),
            Path::Key(p, k) => format!(
                "{}/{}",
                p.pointer(),
                k.replace('~', "~0").replace('/', "~1")
            ),
            Path::Index(p, i) => format!("{}/{i}", p.pointer()),
        }
    }
}

/// Object entries being written, as one stack shared by every level: each
/// object pushes its entries, sorts that tail and pops it when done, so a
/// whole input costs one allocation instead of one per object.
type Scratch<'a> = Vec<(&'a str, &'a Json)>;

fn write_json<'a>(
    buf: &mut Vec<u8>,
    v: &'a Json,
    path: &Path<'_>,
    depth: usize,
    scratch: &mut Scratch<'a>,
) -> Result<(), HashError> {
    match v {
        Json::Null => buf.push(0xf6),
        Json::Bool(false) => buf.push(0xf4),
        Json::Bool(true) => buf.push(0xf5),
        Json::Number(n) => {
            if let Some(u) = n.as_u64() {
                write_head(buf, 0, u);
            } else if let Some(i) = n.as_i64() {
                // Negative (non-negative ones are u64 above): -1 - i = !i.
                write_head(buf, 1, !(i as u64));
            } else if let Some(f) = n.as_f64() {
                write_json_float(buf, f, path)?;
            } else {
                return Err(HashError::Unrepresentable {
                    path: path.render(),
                });
            }
        }
        Json::String(s) => write_text(buf, s),
        Json::Array(items) => {
            check_depth(depth, path)?;
            write_head(buf, 4, items.len() as u64);
            for (i, item) in items.iter().enumerate() {
                write_json(buf, item, &Path::Index(path, i), depth + 1, scratch)?;
            }
        }
        Json::Object(map) => {
            check_depth(depth, path)?;
            write_head(buf, 5, map.len() as u64);
            let start = scratch.len();
            scratch.extend(map.iter().map(|(k, v)| (k.as_str(), v)));
            scratch[start..].sort_unstable_by(|a, b| text_key_order(a.0, b.0));
            for i in start..start + map.len() {
                let (k, item) = scratch[i];
                write_text(buf, k);
                write_json(buf, item, &Path::Key(path, k), depth + 1, scratch)?;
            }
            scratch.truncate(start);
        }
    }
    Ok(())
}

fn check_depth(depth: usize, path: &Path<'_>) -> Result<(), HashError> {
    if depth >= MAX_HASH_DEPTH {
        return Err(HashError::TooDeep {
            path: path.render(),
            limit: MAX_HASH_DEPTH,
        });
    }
    Ok(())
}

/// Writes the envelope `{"capability": id, "input": …}`. "input" sorts
/// before "capability" (5 < 10 bytes).
fn write_envelope<F>(buf: &mut Vec<u8>, capability_id: &str, input: F) -> Result<(), HashError>
where
    F: FnOnce(&mut Vec<u8>) -> Result<(), HashError>,
{
    buf.push(0xa2);
    write_text(buf, "input");
    input(buf)?;
    write_text(buf, "capability");
    write_text(buf, capability_id);
    Ok(())
}

/// The deterministic CBOR of `{"capability": id, "input": input}` after
/// DESIGN §5's number normalisation: the bytes [`input_hash`] digests.
pub fn hash_preimage(capability_id: &str, input: &Json) -> Result<Vec<u8>, HashError> {
    let mut buf = Vec::with_capacity(256);
    write_envelope(&mut buf, capability_id, |b| {
        write_json(b, input, &Path::Root, 0, &mut Vec::new())
    })?;
    Ok(buf)
}

/// The same bytes for an input that arrived as CBOR (a binding passing a
/// host value as CBOR). The value is read in the JSON data model: text
/// keys only, no byte strings or tags, no NaN or infinities.
pub fn hash_preimage_cbor(capability_id: &str, input: &Cbor) -> Result<Vec<u8>, HashError> {
    let mut buf = Vec::with_capacity(256);
    write_envelope(&mut buf, capability_id, |b| {
        write_cbor_as_json(b, input, &Path::Root, 0)
    })?;
    Ok(buf)
}

thread_local! {
    /// One buffer per thread, reused across hashes: the encoder never
    /// reallocates once it has seen an input of a given size.
    static BUFFER: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(4096));
}

fn digest_hex(bytes: &[u8]) -> String {
    hex_lower(&Sha256::digest(bytes))
}

/// Lowercase hex without a dependency on `hex` for one hot call.
fn hex_lower(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

fn with_buffer<F>(f: F) -> Result<String, HashError>
where
    F: FnOnce(&mut Vec<u8>) -> Result<(), HashError>,
{
    BUFFER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            f(&mut buf)?;
            Ok(digest_hex(&buf))
        }
        // Re-entered (cannot happen today): use a fresh buffer.
        Err(_) => {
            let mut buf = Vec::new();
            f(&mut buf)?;
            Ok(digest_hex(&buf))
        }
    })
}

/// The approval input hash of DESIGN §5: lowercase hex SHA-256 of the
/// RFC 8949 §4.2.1 deterministic CBOR of `{"capability": id, "input":
/// input}`, numbers normalised so every host hashes the same input alike.
pub fn input_hash(capability_id: &str, input: &Json) -> Result<String, HashError> {
    with_buffer(|buf| {
        write_envelope(buf, capability_id, |b| {
            write_json(b, input, &Path::Root, 0, &mut Vec::with_capacity(32))
        })
    })
}

/// [`input_hash`] for an input given as a CBOR value.
pub fn hash_cbor_input(capability_id: &str, input: &Cbor) -> Result<String, HashError> {
    with_buffer(|buf| {
        write_envelope(buf, capability_id, |b| {
            write_cbor_as_json(b, input, &Path::Root, 0)
        })
    })
}

fn write_cbor_as_json(
    buf: &mut Vec<u8>,
    v: &Cbor,
    path: &Path<'_>,
    depth: usize,
) -> Result<(), HashError> {
    match v {
        Cbor::Null => buf.push(0xf6),
        Cbor::Bool(false) => buf.push(0xf4),
        Cbor::Bool(true) => buf.push(0xf5),
        // The range the core holds an integer in exactly (an i64 or a u64,
        // as serde_json does): below -2^63 CBOR could still write it, but
        // no stored input, approval view or handler could carry it, so it
        // is refused here as every binding refuses it (issue 14).
        Cbor::Integer(i) => {
            let i = i128::from(*i);
            if i < i128::from(i64::MIN) || i > i128::from(u64::MAX) {
                return Err(HashError::Unrepresentable {
                    path: path.render(),
                });
            }
            write_int(buf, i).ok_or_else(|| HashError::Unrepresentable {
                path: path.render(),
            })?
        }
        Cbor::Float(f) => write_json_float(buf, *f, path)?,
        Cbor::Text(s) => write_text(buf, s),
        Cbor::Bytes(_) => {
            return Err(HashError::NotJson {
                path: path.render(),
                what: "byte string",
            });
        }
        Cbor::Tag(..) => {
            return Err(HashError::NotJson {
                path: path.render(),
                what: "tag",
            });
        }
        Cbor::Array(items) => {
            check_depth(depth, path)?;
            write_head(buf, 4, items.len() as u64);
            for (i, item) in items.iter().enumerate() {
                write_cbor_as_json(buf, item, &Path::Index(path, i), depth + 1)?;
            }
        }
        Cbor::Map(entries) => {
            check_depth(depth, path)?;
            let mut sorted = Vec::with_capacity(entries.len());
            for (k, item) in entries {
                match k {
                    Cbor::Text(k) => sorted.push((k.as_str(), item)),
                    _ => {
                        return Err(HashError::NonTextKey {
                            path: path.render(),
                        });
                    }
                }
            }
            sorted.sort_unstable_by(|a, b| text_key_order(a.0, b.0));
            if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(HashError::DuplicateKey {
                    path: path.render(),
                    key: w[0].0.to_owned(),
                });
            }
            write_head(buf, 5, sorted.len() as u64);
            for (k, item) in sorted {
                write_text(buf, k);
                write_cbor_as_json(buf, item, &Path::Key(path, k), depth + 1)?;
            }
        }
        _ => {
            return Err(HashError::NotJson {
                path: path.render(),
                what: "value of an unknown kind",
            });
        }
    }
    Ok(())
}

// ------------------------------------------------- generic deterministic CBOR

/// Why a value cannot be written deterministically.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// §4.2.1 forbids two equal keys in one map.
    #[error("a map holds the same key twice ({key})")]
    DuplicateKey { key: String },
    /// Nesting deeper than [`MAX_HASH_DEPTH`].
    #[error("value nests deeper than {limit} levels")]
    TooDeep { limit: usize },
}

/// Writes `v` as RFC 8949 §4.2.1 core-deterministic CBOR: shortest heads,
/// shortest floats that keep the value, definite lengths, map keys sorted
/// by their encoded bytes. Unlike the hash encoder it keeps the data model
/// as it is: a float stays a float, tags and byte strings stay.
pub fn encode_deterministic(v: &Cbor) -> Result<Vec<u8>, EncodeError> {
    let mut buf = Vec::with_capacity(64);
    write_deterministic(&mut buf, v, 0)?;
    Ok(buf)
}

/// Appends the deterministic encoding of `v` to `buf`.
pub fn write_deterministic(buf: &mut Vec<u8>, v: &Cbor, depth: usize) -> Result<(), EncodeError> {
    if depth > MAX_HASH_DEPTH {
        return Err(EncodeError::TooDeep {
            limit: MAX_HASH_DEPTH,
        });
    }
    match v {
        Cbor::Null => buf.push(0xf6),
        Cbor::Bool(false) => buf.push(0xf4),
        Cbor::Bool(true) => buf.push(0xf5),
        // ciborium's Integer spans exactly [-2^64, 2^64 - 1], so it fits.
        Cbor::Integer(i) => {
            let _ = write_int(buf, i128::from(*i));
        }
        Cbor::Float(f) => write_float(buf, *f),
        Cbor::Text(s) => write_text(buf, s),
        Cbor::Bytes(b) => {
            write_head(buf, 2, b.len() as u64);
            buf.extend_from_slice(b);
        }
        Cbor::Tag(t, inner) => {
            write_head(buf, 6, *t);
            write_deterministic(buf, inner, depth + 1)?;
        }
        Cbor::Array(items) => {
            write_head(buf, 4, items.len() as u64);
            for item in items {
                write_deterministic(buf, item, depth + 1)?;
            }
        }
        Cbor::Map(entries) => {
            // Encode each key once, sort by the encoded bytes, write.
            let mut keyed: Vec<(Vec<u8>, &Cbor)> = Vec::with_capacity(entries.len());
            for (k, item) in entries {
                let mut kb = Vec::new();
                write_deterministic(&mut kb, k, depth + 1)?;
                keyed.push((kb, item));
            }
            keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            if let Some(w) = keyed.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(EncodeError::DuplicateKey {
                    key: hex_lower(&w[0].0),
                });
            }
            write_head(buf, 5, keyed.len() as u64);
            for (kb, item) in keyed {
                buf.extend_from_slice(&kb);
                write_deterministic(buf, item, depth + 1)?;
            }
        }
        // ciborium::Value is non-exhaustive in spirit only; nothing else exists.
        #[allow(unreachable_patterns)]
        _ => buf.push(0xf7),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pre(v: &Json) -> String {
        hex_lower(&hash_preimage("c", v).unwrap())
    }

    #[test]
    fn integral_floats_hash_as_integers() {
        assert_eq!(
            input_hash("x", &json!(1)).unwrap(),
            input_hash("x", &json!(1.0)).unwrap()
        );
        assert_eq!(pre(&json!(-0.0)), pre(&json!(0)));
        assert_eq!(
            pre(&json!(9007199254740992.0)),
            pre(&json!(9007199254740992u64))
        );
        // 2^53 + 2 as a float is past the safe range: it stays a float.
        assert_ne!(
            pre(&json!(9007199254740994.0)),
            pre(&json!(9007199254740994u64))
        );
    }

    #[test]
    fn floats_are_shortest() {
        let mut b = Vec::new();
        write_float(&mut b, 1.5);
        assert_eq!(b, [0xf9, 0x3e, 0x00]);
        b.clear();
        write_float(&mut b, 100000.0);
        assert_eq!(b, [0xfa, 0x47, 0xc3, 0x50, 0x00]);
        b.clear();
        write_float(&mut b, 1.1);
        assert_eq!(b[0], 0xfb);
        b.clear();
        write_float(&mut b, 5.960464477539063e-8);
        assert_eq!(b, [0xf9, 0x00, 0x01]);
        b.clear();
        write_float(&mut b, 65504.0);
        assert_eq!(b, [0xf9, 0x7b, 0xff]);
        b.clear();
        write_float(&mut b, 65520.0); // rounds to inf in half: must not be half
        assert_eq!(b[0], 0xfa);
        b.clear();
        write_float(&mut b, f64::NAN);
        assert_eq!(b, [0xf9, 0x7e, 0x00]);
        b.clear();
        write_float(&mut b, f64::NEG_INFINITY);
        assert_eq!(b, [0xf9, 0xfc, 0x00]);
    }

    #[test]
    fn keys_sort_length_first() {
        // "b" (1 byte) before "aa" (2 bytes); "capability" after "input".
        assert_eq!(
            pre(&json!({"aa": 1, "b": 2})),
            "a265696e707574a2616202626161016a6361706162696c6974796163"
        );
    }

    #[test]
    fn cbor_path_rejects_what_json_cannot_hold() {
        let nan = Cbor::Float(f64::NAN);
        assert_eq!(
            hash_cbor_input("c", &nan).unwrap_err().code(),
            "NON_FINITE_NUMBER"
        );
        let m = Cbor::Map(vec![(Cbor::Integer(1.into()), Cbor::Null)]);
        assert_eq!(hash_cbor_input("c", &m).unwrap_err().code(), "NON_TEXT_KEY");
        let d = Cbor::Map(vec![
            (Cbor::Text("a".into()), Cbor::Null),
            (Cbor::Text("a".into()), Cbor::Bool(true)),
        ]);
        let e = hash_cbor_input("c", &d).unwrap_err();
        assert_eq!(e.code(), "DUPLICATE_KEY");
        let ce: CapabilityError = e.into();
        assert_eq!(ce.code, ErrorCode::InvalidInput);
        assert_eq!(
            hash_cbor_input("c", &Cbor::Float(1.0)).unwrap(),
            input_hash("c", &json!(1)).unwrap()
        );
    }

    #[test]
    fn depth_is_bounded() {
        let mut v = json!(0);
        for _ in 0..MAX_HASH_DEPTH + 1 {
            v = json!([v]);
        }
        assert_eq!(input_hash("c", &v).unwrap_err().code(), "TOO_DEEP");
    }
}
