//! A bounded CBOR decoder for bytes that arrive from other processes.
//!
//! Why not `ciborium::from_reader`: it has a recursion limit and (checked
//! in its source) does not pre-allocate from declared lengths — it reads
//! strings through a scratch buffer and serde caps size hints — but it
//! cannot reject duplicate map keys or indefinite lengths where definite
//! ones are required, cannot represent simple values, reports no stable
//! error codes, and is 2.45 µs for a 10-key map (DESIGN §11) where this
//! path is well under half that. This decoder works on a byte slice and
//! checks every declared length against the bytes that remain *before*
//! using it, so nothing is ever allocated for a length the input does not
//! back (an array element takes at least one byte, a map entry two).
//! Errors carry the byte offset and a stable code.

use ciborium::Value as Cbor;

use super::deterministic::encode_deterministic;

/// Deepest nesting accepted (arrays, maps and tags each add a level).
/// Metadata is shallow; 64 leaves room for `std:forward` chains and
/// nested argument maps while keeping recursion far from the stack limit.
pub const MAX_DEPTH: usize = 64;

/// What the decoder accepts beyond the definite-length, text-keyed core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Nesting limit; see [`MAX_DEPTH`].
    pub max_depth: usize,
    /// Accept indefinite-length strings, arrays and maps (RFC 8949 §3.2.2).
    /// Off for metadata: `std:` values are definite (deterministic) CBOR.
    pub allow_indefinite: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_depth: MAX_DEPTH,
            allow_indefinite: false,
        }
    }
}

impl DecodeOptions {
    /// Everything well-formed that `ciborium::Value` can hold.
    pub const LENIENT: DecodeOptions = DecodeOptions {
        max_depth: MAX_DEPTH,
        allow_indefinite: true,
    };
}

/// Why bytes are not an acceptable CBOR item. `offset` is where the
/// offending head starts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("CBOR ends early at byte {offset}: {needed} more byte(s) needed")]
    Truncated { offset: usize, needed: u64 },
    #[error(
        "CBOR item at byte {offset} declares {declared} byte(s)/item(s) but only {available} byte(s) remain"
    )]
    LengthBeyondInput {
        offset: usize,
        declared: u64,
        available: usize,
    },
    #[error("CBOR nests deeper than {limit} levels at byte {offset}")]
    TooDeep { offset: usize, limit: usize },
    #[error("indefinite-length item at byte {offset}: definite lengths are required here")]
    Indefinite { offset: usize },
    #[error("text string at byte {offset} is not valid UTF-8")]
    InvalidUtf8 { offset: usize },
    #[error("map at byte {offset} has the key {key} twice")]
    DuplicateKey { offset: usize, key: String },
    #[error("map at byte {offset} has a key that is not a text string; metadata keys are text")]
    NonTextKey { offset: usize },
    #[error("expected a CBOR map at byte {offset}, found {found}")]
    NotAMap { offset: usize, found: &'static str },
    #[error("malformed CBOR at byte {offset}: {reason}")]
    Malformed { offset: usize, reason: &'static str },
    #[error("simple value {value} at byte {offset} has no place in this data model")]
    UnsupportedSimple { offset: usize, value: u8 },
    #[error("{count} byte(s) after the CBOR item, from byte {offset}")]
    TrailingBytes { offset: usize, count: usize },
}

impl DecodeError {
    /// Stable code for vectors and bindings.
    pub const fn code(&self) -> &'static str {
        match self {
            DecodeError::Truncated { .. } => "TRUNCATED",
            DecodeError::LengthBeyondInput { .. } => "LENGTH_BEYOND_INPUT",
            DecodeError::TooDeep { .. } => "TOO_DEEP",
            DecodeError::Indefinite { .. } => "INDEFINITE_LENGTH",
            DecodeError::InvalidUtf8 { .. } => "INVALID_UTF8",
            DecodeError::DuplicateKey { .. } => "DUPLICATE_KEY",
            DecodeError::NonTextKey { .. } => "NON_TEXT_KEY",
            DecodeError::NotAMap { .. } => "NOT_A_MAP",
            DecodeError::Malformed { .. } => "MALFORMED",
            DecodeError::UnsupportedSimple { .. } => "UNSUPPORTED_SIMPLE",
            DecodeError::TrailingBytes { .. } => "TRAILING_BYTES",
        }
    }
}

/// A head's argument: a value, or "indefinite" (additional info 31).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arg {
    Value(u64),
    Indefinite,
}

/// One decoded head.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Head {
    pub major: u8,
    pub info: u8,
    pub arg: Arg,
    pub offset: usize,
}

/// A cursor over the input; every read is bounds-checked.
pub(crate) struct Reader<'a> {
    pub(crate) buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// `n` bytes, or `Truncated` without touching anything.
    pub fn take(&mut self, n: u64) -> Result<&'a [u8], DecodeError> {
        let available = self.remaining();
        match usize::try_from(n) {
            Ok(n) if n <= available => {
                let s = &self.buf[self.pos..self.pos + n];
                self.pos += n;
                Ok(s)
            }
            _ => Err(DecodeError::Truncated {
                offset: self.pos,
                needed: n - available as u64,
            }),
        }
    }

    pub fn head(&mut self) -> Result<Head, DecodeError> {
        let offset = self.pos;
        let b = self.take(1)?[0];
        let (major, info) = (b >> 5, b & 0x1f);
        let arg = match info {
            0..=23 => Arg::Value(u64::from(info)),
            24..=27 => {
                let n = 1u64 << (info - 24);
                let bytes = self.take(n).map_err(|_| DecodeError::Truncated {
                    offset,
                    needed: n - self.remaining() as u64,
                })?;
                Arg::Value(bytes.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
            }
            28..=30 => {
                return Err(DecodeError::Malformed {
                    offset,
                    reason: "reserved additional information 28-30",
                });
            }
            _ => {
                if matches!(major, 0 | 1 | 6) {
                    return Err(DecodeError::Malformed {
                        offset,
                        reason: "indefinite length on an integer or tag",
                    });
                }
                Arg::Indefinite
            }
        };
        Ok(Head {
            major,
            info,
            arg,
            offset,
        })
    }

    /// Errors unless `n` items of at least `min_size` bytes each fit in the
    /// rest of the input: the guard that makes `with_capacity(n)` safe.
    pub fn check_items(&self, offset: usize, n: u64, min_size: u64) -> Result<(), DecodeError> {
        let available = self.remaining();
        if n.saturating_mul(min_size) > available as u64 {
            return Err(DecodeError::LengthBeyondInput {
                offset,
                declared: n,
                available,
            });
        }
        Ok(())
    }

    /// Consumes a break byte (0xff) if one is next.
    pub fn eat_break(&mut self) -> bool {
        if self.peek() == Some(0xff) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
}

/// Decodes exactly one item filling `bytes`.
pub fn decode(bytes: &[u8], opts: DecodeOptions) -> Result<Cbor, DecodeError> {
    let mut r = Reader::new(bytes);
    let v = decode_item(&mut r, opts, 0)?;
    end(&r)?;
    Ok(v)
}

/// Errors if bytes remain after the item.
pub(crate) fn end(r: &Reader<'_>) -> Result<(), DecodeError> {
    if r.remaining() > 0 {
        return Err(DecodeError::TrailingBytes {
            offset: r.pos(),
            count: r.remaining(),
        });
    }
    Ok(())
}

/// Reads a text string whose head is already read.
pub(crate) fn read_text<'a>(
    r: &mut Reader<'a>,
    h: Head,
    opts: DecodeOptions,
) -> Result<String, DecodeError> {
    match h.arg {
        Arg::Value(n) => {
            let bytes = r.take(n).map_err(|_| length_error(r, h, n))?;
            std::str::from_utf8(bytes)
                .map(str::to_owned)
                .map_err(|_| DecodeError::InvalidUtf8 { offset: h.offset })
        }
        Arg::Indefinite => {
            let bytes = read_chunks(r, h, opts)?;
            String::from_utf8(bytes).map_err(|_| DecodeError::InvalidUtf8 { offset: h.offset })
        }
    }
}

fn length_error(r: &Reader<'_>, h: Head, n: u64) -> DecodeError {
    DecodeError::LengthBeyondInput {
        offset: h.offset,
        declared: n,
        available: r.remaining(),
    }
}

/// The chunks of an indefinite-length byte or text string (§3.2.3): each a
/// definite string of the same major type. A text chunk must itself be
/// valid UTF-8, so a character split across chunks is an error.
fn read_chunks(r: &mut Reader<'_>, h: Head, opts: DecodeOptions) -> Result<Vec<u8>, DecodeError> {
    if !opts.allow_indefinite {
        return Err(DecodeError::Indefinite { offset: h.offset });
    }
    let mut out = Vec::new();
    loop {
        if r.eat_break() {
            return Ok(out);
        }
        let c = r.head()?;
        match (c.major == h.major, c.arg) {
            (true, Arg::Value(n)) => {
                let bytes = r.take(n).map_err(|_| length_error(r, c, n))?;
                if h.major == 3 && std::str::from_utf8(bytes).is_err() {
                    return Err(DecodeError::InvalidUtf8 { offset: c.offset });
                }
                out.extend_from_slice(bytes);
            }
            _ => {
                return Err(DecodeError::Malformed {
                    offset: c.offset,
                    reason: "an indefinite-length string chunk must be a definite string of the same type",
                });
            }
        }
    }
}

/// Decodes one item at `depth`.
pub(crate) fn decode_item(
    r: &mut Reader<'_>,
    opts: DecodeOptions,
    depth: usize,
) -> Result<Cbor, DecodeError> {
    let h = r.head()?;
    decode_with_head(r, h, opts, depth)
}

fn decode_with_head(
    r: &mut Reader<'_>,
    h: Head,
    opts: DecodeOptions,
    depth: usize,
) -> Result<Cbor, DecodeError> {
    match (h.major, h.arg) {
        (0, Arg::Value(n)) => Ok(Cbor::Integer(n.into())),
        (1, Arg::Value(n)) => {
            // -1 - n fits ciborium's Integer for every u64 n.
            Ok(Cbor::Integer(
                ciborium::value::Integer::try_from(-1 - i128::from(n)).map_err(|_| {
                    DecodeError::Malformed {
                        offset: h.offset,
                        reason: "negative integer out of range",
                    }
                })?,
            ))
        }
        (2, Arg::Value(n)) => Ok(Cbor::Bytes(
            r.take(n).map_err(|_| length_error(r, h, n))?.to_vec(),
        )),
        (2, Arg::Indefinite) => Ok(Cbor::Bytes(read_chunks(r, h, opts)?)),
        (3, _) => Ok(Cbor::Text(read_text(r, h, opts)?)),
        (4, arg) => {
            let depth = nest(h, opts, depth)?;
            match arg {
                Arg::Value(n) => {
                    r.check_items(h.offset, n, 1)?;
                    let mut items = Vec::with_capacity(n as usize);
                    for _ in 0..n {
                        items.push(decode_item(r, opts, depth)?);
                    }
                    Ok(Cbor::Array(items))
                }
                Arg::Indefinite => {
                    indefinite_allowed(h, opts)?;
                    let mut items = Vec::new();
                    while !r.eat_break() {
                        items.push(decode_item(r, opts, depth)?);
                    }
                    Ok(Cbor::Array(items))
                }
            }
        }
        (5, arg) => {
            let depth = nest(h, opts, depth)?;
            let entries = match arg {
                Arg::Value(n) => {
                    r.check_items(h.offset, n, 2)?;
                    let mut entries = Vec::with_capacity(n as usize);
                    for _ in 0..n {
                        let k = decode_item(r, opts, depth)?;
                        let v = decode_item(r, opts, depth)?;
                        entries.push((k, v));
                    }
                    entries
                }
                Arg::Indefinite => {
                    indefinite_allowed(h, opts)?;
                    let mut entries = Vec::new();
                    while !r.eat_break() {
                        let k = decode_item(r, opts, depth)?;
                        let v = decode_item(r, opts, depth)?;
                        entries.push((k, v));
                    }
                    entries
                }
            };
            if let Some(k) = find_duplicate_cbor(&entries, |e| &e.0) {
                return Err(DecodeError::DuplicateKey {
                    offset: h.offset,
                    key: describe_key(k),
                });
            }
            Ok(Cbor::Map(entries))
        }
        (6, Arg::Value(tag)) => {
            let depth = nest(h, opts, depth)?;
            Ok(Cbor::Tag(tag, Box::new(decode_item(r, opts, depth)?)))
        }
        (7, arg) => decode_simple(r, h, arg),
        _ => Err(DecodeError::Malformed {
            offset: h.offset,
            reason: "invalid head",
        }),
    }
}

/// Checks one item exactly as [`decode_item`] would — same limits, same
/// errors — without building a value: nothing is allocated for maps of up
/// to 16 text keys, which is what lets metadata validation run on borrowed
/// bytes ([`super::validate::MetaView`]).
pub(crate) fn skim_item(
    r: &mut Reader<'_>,
    opts: DecodeOptions,
    depth: usize,
) -> Result<(), DecodeError> {
    skim(r, opts, depth, false)
}

/// Walks one item of bytes that were already checked by [`skim_item`] (or
/// written by this crate's encoder): structure and limits only, no UTF-8
/// or duplicate-key checks the first pass already made.
pub(crate) fn skip_trusted(r: &mut Reader<'_>) -> Result<(), DecodeError> {
    skim(r, DecodeOptions::LENIENT, 0, true)
}

fn skim(
    r: &mut Reader<'_>,
    opts: DecodeOptions,
    depth: usize,
    trusted: bool,
) -> Result<(), DecodeError> {
    let h = r.head()?;
    match (h.major, h.arg) {
        (0 | 1, _) => Ok(()),
        (2, Arg::Value(n)) => r.take(n).map(|_| ()).map_err(|_| length_error(r, h, n)),
        (3, Arg::Value(n)) if trusted => r.take(n).map(|_| ()).map_err(|_| length_error(r, h, n)),
        (3, Arg::Value(n)) => {
            let bytes = r.take(n).map_err(|_| length_error(r, h, n))?;
            std::str::from_utf8(bytes)
                .map(|_| ())
                .map_err(|_| DecodeError::InvalidUtf8 { offset: h.offset })
        }
        (2 | 3, Arg::Indefinite) => read_chunks(r, h, opts).map(|_| ()),
        (4, arg) => {
            let depth = nest(h, opts, depth)?;
            match arg {
                Arg::Value(n) => {
                    r.check_items(h.offset, n, 1)?;
                    for _ in 0..n {
                        skim(r, opts, depth, trusted)?;
                    }
                }
                Arg::Indefinite => {
                    indefinite_allowed(h, opts)?;
                    while !r.eat_break() {
                        skim(r, opts, depth, trusted)?;
                    }
                }
            }
            Ok(())
        }
        (5, arg) => {
            let depth = nest(h, opts, depth)?;
            let n = match arg {
                Arg::Value(n) => {
                    r.check_items(h.offset, n, 2)?;
                    Some(n)
                }
                Arg::Indefinite => {
                    indefinite_allowed(h, opts)?;
                    None
                }
            };
            let mut keys = KeySet::default();
            let mut i = 0u64;
            loop {
                match n {
                    Some(n) if i == n => break,
                    None if r.eat_break() => break,
                    _ => {}
                }
                let start = r.pos();
                skim(r, opts, depth, trusted)?;
                let key = &r.buf[start..r.pos()];
                if !trusted && keys.insert(key)? {
                    let k = decode(key, DecodeOptions::LENIENT)
                        .map(|k| describe_key(&k))
                        .unwrap_or_default();
                    return Err(DecodeError::DuplicateKey {
                        offset: h.offset,
                        key: k,
                    });
                }
                skim(r, opts, depth, trusted)?;
                i += 1;
            }
            Ok(())
        }
        (6, Arg::Value(_)) => {
            let depth = nest(h, opts, depth)?;
            skim(r, opts, depth, trusted)
        }
        (7, arg) => decode_simple(r, h, arg).map(|_| ()),
        _ => Err(DecodeError::Malformed {
            offset: h.offset,
            reason: "invalid head",
        }),
    }
}

/// The keys of one map seen so far, for duplicate detection without
/// decoding: text keys compare by their text (so a non-shortest length head
/// cannot hide a duplicate), other keys by their decoded value.
#[derive(Default)]
struct KeySet<'a> {
    small: [Option<&'a [u8]>; 16],
    len: usize,
    more: Vec<&'a [u8]>,
}

impl<'a> KeySet<'a> {
    /// Adds `key` (well-formed encoded bytes); true if it was already there.
    fn insert(&mut self, key: &'a [u8]) -> Result<bool, DecodeError> {
        let seen = self.small[..self.len.min(16)]
            .iter()
            .flatten()
            .chain(self.more.iter());
        for k in seen {
            if same_key(k, key)? {
                return Ok(true);
            }
        }
        if self.len < 16 {
            self.small[self.len] = Some(key);
        } else {
            self.more.push(key);
        }
        self.len += 1;
        Ok(false)
    }
}

/// The text of an encoded definite text string, if `b` is one.
pub(crate) fn text_of(b: &[u8]) -> Option<&str> {
    let mut r = Reader::new(b);
    let h = r.head().ok()?;
    match (h.major, h.arg) {
        (3, Arg::Value(n)) => std::str::from_utf8(r.take(n).ok()?).ok(),
        _ => None,
    }
}

/// The content of an encoded definite text string, without a UTF-8 check.
fn text_content(b: &[u8]) -> Option<&[u8]> {
    let mut r = Reader::new(b);
    let h = r.head().ok()?;
    match (h.major, h.arg) {
        (3, Arg::Value(n)) => r.take(n).ok(),
        _ => None,
    }
}

fn same_key(a: &[u8], b: &[u8]) -> Result<bool, DecodeError> {
    if a == b {
        return Ok(true);
    }
    // Keys were UTF-8-checked when skimmed: compare text content as bytes.
    match (text_content(a), text_content(b)) {
        (Some(x), Some(y)) => Ok(x == y),
        (Some(_), None) | (None, Some(_))
            if a.first().map(|x| x >> 5) != b.first().map(|x| x >> 5) =>
        {
            Ok(false)
        }
        _ => Ok(decode(a, DecodeOptions::LENIENT)? == decode(b, DecodeOptions::LENIENT)?),
    }
}

fn decode_simple(r: &mut Reader<'_>, h: Head, arg: Arg) -> Result<Cbor, DecodeError> {
    let _ = r;
    match (h.info, arg) {
        (20, _) => Ok(Cbor::Bool(false)),
        (21, _) => Ok(Cbor::Bool(true)),
        (22, _) => Ok(Cbor::Null),
        (24, Arg::Value(v)) if v < 32 => Err(DecodeError::Malformed {
            offset: h.offset,
            reason: "two-byte simple value below 32 (RFC 8949 §3.3)",
        }),
        (25, Arg::Value(v)) => Ok(Cbor::Float(half_to_f64(v as u16))),
        (26, Arg::Value(v)) => Ok(Cbor::Float(f64::from(f32::from_bits(v as u32)))),
        (27, Arg::Value(v)) => Ok(Cbor::Float(f64::from_bits(v))),
        (_, Arg::Indefinite) => Err(DecodeError::Malformed {
            offset: h.offset,
            reason: "break (0xff) outside an indefinite-length item",
        }),
        (_, Arg::Value(v)) => Err(DecodeError::UnsupportedSimple {
            offset: h.offset,
            value: v as u8,
        }),
    }
}

/// IEEE 754 half → f64 (RFC 8949 Appendix D).
pub(crate) fn half_to_f64(h: u16) -> f64 {
    let exp = (h >> 10) & 0x1f;
    let mant = f64::from(h & 0x3ff);
    let v = match exp {
        0 => mant * 2f64.powi(-24),
        31 if mant == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (mant + 1024.0) * 2f64.powi(i32::from(e) - 25),
    };
    if h & 0x8000 != 0 { -v } else { v }
}

fn nest(h: Head, opts: DecodeOptions, depth: usize) -> Result<usize, DecodeError> {
    if depth >= opts.max_depth {
        return Err(DecodeError::TooDeep {
            offset: h.offset,
            limit: opts.max_depth,
        });
    }
    Ok(depth + 1)
}

fn indefinite_allowed(h: Head, opts: DecodeOptions) -> Result<(), DecodeError> {
    if opts.allow_indefinite {
        Ok(())
    } else {
        Err(DecodeError::Indefinite { offset: h.offset })
    }
}

/// The first key that occurs twice. Pairwise for small maps (no
/// allocation), sorted copy of references for larger ones. Keys must be
/// totally ordered (text keys): see [`find_duplicate_cbor`] for any key.
pub(crate) fn find_duplicate<T, K: Ord>(items: &[T], key: impl Fn(&T) -> &K) -> Option<&K> {
    if items.len() <= 16 {
        for (i, a) in items.iter().enumerate() {
            if items[i + 1..].iter().any(|b| key(a) == key(b)) {
                return Some(key(a));
            }
        }
        return None;
    }
    let mut keys: Vec<&K> = items.iter().map(&key).collect();
    keys.sort_unstable();
    keys.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
}

/// [`find_duplicate`] for keys of any CBOR type. `ciborium::Value` is only
/// partially ordered (NaN, mixed types), and sorting with a comparator that
/// is not a total order panics (fuzz finding, docs/fuzzing.md), so larger
/// maps sort by each key's deterministic encoding, a total order on bytes
/// under which equal keys are adjacent.
pub(crate) fn find_duplicate_cbor<T>(items: &[T], key: impl Fn(&T) -> &Cbor) -> Option<&Cbor> {
    if items.len() <= 16 {
        return find_duplicate_pairwise(items, key);
    }
    let mut keys: Vec<(Vec<u8>, &Cbor)> = items
        .iter()
        .map(|item| {
            let k = key(item);
            (encode_deterministic(k).unwrap_or_default(), k)
        })
        .collect();
    keys.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(w) = keys.windows(2).find(|w| w[0].1 == w[1].1) {
        return Some(w[0].1);
    }
    // A key the encoder refused sorts first with an empty encoding; compare
    // those (if any) pairwise.
    let refused = keys.iter().take_while(|(e, _)| e.is_empty()).count();
    let refused = &keys[..refused];
    refused
        .iter()
        .enumerate()
        .find(|(i, a)| refused[i + 1..].iter().any(|b| a.1 == b.1))
        .map(|(_, a)| a.1)
}

fn find_duplicate_pairwise<T>(items: &[T], key: impl Fn(&T) -> &Cbor) -> Option<&Cbor> {
    items
        .iter()
        .enumerate()
        .find(|(i, a)| items[i + 1..].iter().any(|b| key(a) == key(b)))
        .map(|(_, a)| key(a))
}

fn describe_key(k: &Cbor) -> String {
    match k {
        Cbor::Text(s) => format!("{s:?}"),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(hex: &str) -> &'static str {
        decode(&hex_bytes(hex), DecodeOptions::default())
            .unwrap_err()
            .code()
    }

    pub(crate) fn hex_bytes(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn hostile_inputs_get_typed_errors() {
        assert_eq!(err(""), "TRUNCATED");
        assert_eq!(err("1901"), "TRUNCATED");
        assert_eq!(err("9bffffffffffffffff"), "LENGTH_BEYOND_INPUT"); // 2^64-1 items
        assert_eq!(err("5bffffffffffffffff"), "LENGTH_BEYOND_INPUT");
        assert_eq!(err("bbffffffffffffffff"), "LENGTH_BEYOND_INPUT");
        assert_eq!(err("9f01ff"), "INDEFINITE_LENGTH");
        assert_eq!(err("62c328"), "INVALID_UTF8");
        assert_eq!(err("a2616101616102"), "DUPLICATE_KEY");
        assert_eq!(err("1c"), "MALFORMED");
        assert_eq!(err("ff"), "MALFORMED");
        assert_eq!(err("f818"), "MALFORMED");
        assert_eq!(err("f7"), "UNSUPPORTED_SIMPLE");
        assert_eq!(err("0000"), "TRAILING_BYTES");
        let deep = "81".repeat(MAX_DEPTH + 1) + "00";
        assert_eq!(err(&deep), "TOO_DEEP");
        let ok = "81".repeat(MAX_DEPTH) + "00";
        assert!(decode(&hex_bytes(&ok), DecodeOptions::default()).is_ok());
    }

    #[test]
    fn lenient_accepts_indefinite() {
        let v = decode(
            &hex_bytes("7f657374726561646d696e67ff"),
            DecodeOptions::LENIENT,
        )
        .unwrap();
        assert_eq!(v, Cbor::Text("streaming".into()));
        // A chunk of the wrong type is malformed.
        let e = decode(&hex_bytes("7f4100ff"), DecodeOptions::LENIENT).unwrap_err();
        assert_eq!(e.code(), "MALFORMED");
        // An unterminated indefinite array is truncated.
        let e = decode(&hex_bytes("9f01"), DecodeOptions::LENIENT).unwrap_err();
        assert_eq!(e.code(), "TRUNCATED");
    }
}
