//! Input limits (issue 10): how big, deep and wide an input a model or a
//! stranger may hand a capability. Exceeding one is a typed
//! `LIMIT_EXCEEDED` error whose message and details name the limit, never
//! the input (SI-10).
//!
//! Where they are enforced: the pipeline checks every input it holds as
//! JSON — a `Payload::Json` input when the invocation starts (before stage
//! 4, so no validator, policy or handler sees it), a validated input the
//! host returns as JSON when the raw one was host-held, and an input the
//! host exports (which is what an approval request stores and hashes).
//! A binding that keeps inputs host-side (`Payload::Host`) measures the raw
//! input itself — walking its own values through a [`Meter`], or with
//! [`check_json_text`] on JSON text — and hands the verdict to the
//! invocation as it starts (`Invocation::start_measured`), applied when
//! stage 4 begins;
//! `tests/vectors/limits/` pins the behaviour for every binding.
//! The CBOR decoder has its own bounds ([`crate::act::MAX_DEPTH`], lengths
//! checked against the bytes present), as do declaration files
//! ([`crate::declaration::MAX_DEPTH`]); pending approvals per actor are
//! bounded by the stores ([`crate::approval::MAX_PENDING_PER_ACTOR`]).

use serde_json::{Value, json};

use crate::error::{CapabilityError, ErrorCode};

/// Largest input, measured as its compact JSON text (UTF-8 bytes).
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;
/// Deepest nesting of arrays and objects (a top-level object is depth 1).
/// Equal to the CBOR decoder's limit, well under serde_json's 128 and the
/// input hash's 256, so an accepted input always hashes.
pub const MAX_INPUT_DEPTH: usize = 64;
/// Most keys in one object.
pub const MAX_OBJECT_KEYS: usize = 1024;
/// Longest string (and object key), in UTF-8 bytes.
pub const MAX_STRING_BYTES: usize = 64 * 1024;

/// Which limit an input exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    InputBytes,
    Depth,
    ObjectKeys,
    StringBytes,
}

impl Limit {
    /// The wire name used in error details and vectors.
    pub const fn as_str(self) -> &'static str {
        match self {
            Limit::InputBytes => "inputBytes",
            Limit::Depth => "depth",
            Limit::ObjectKeys => "objectKeys",
            Limit::StringBytes => "stringBytes",
        }
    }
}

/// The limits in force. [`InputLimits::DEFAULT`] is what the pipeline uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputLimits {
    pub max_bytes: usize,
    pub max_depth: usize,
    pub max_object_keys: usize,
    pub max_string_bytes: usize,
}

impl InputLimits {
    pub const DEFAULT: InputLimits = InputLimits {
        max_bytes: MAX_INPUT_BYTES,
        max_depth: MAX_INPUT_DEPTH,
        max_object_keys: MAX_OBJECT_KEYS,
        max_string_bytes: MAX_STRING_BYTES,
    };

    fn max(&self, limit: Limit) -> usize {
        match limit {
            Limit::InputBytes => self.max_bytes,
            Limit::Depth => self.max_depth,
            Limit::ObjectKeys => self.max_object_keys,
            Limit::StringBytes => self.max_string_bytes,
        }
    }
}

impl Default for InputLimits {
    fn default() -> Self {
        InputLimits::DEFAULT
    }
}

/// The `LIMIT_EXCEEDED` error for `limit`: message and details name the
/// limit and its maximum, nothing of the input.
pub fn limit_error(limit: Limit, limits: &InputLimits) -> CapabilityError {
    let max = limits.max(limit);
    let message = match limit {
        Limit::InputBytes => format!("The input is larger than {max} bytes."),
        Limit::Depth => format!("The input nests deeper than {max} levels."),
        Limit::ObjectKeys => format!("An object in the input has more than {max} keys."),
        Limit::StringBytes => format!("A string in the input is longer than {max} bytes."),
    };
    CapabilityError::new(ErrorCode::LimitExceeded, message)
        .with_details(json!({"limit": limit.as_str(), "max": max}))
}

/// Checks `input` against `limits`. Allocation-free; stops at the first
/// limit exceeded and never recurses deeper than `max_depth`.
pub fn check_with(input: &Value, limits: &InputLimits) -> Result<(), CapabilityError> {
    let mut meter = Meter::with_limits(*limits);
    walk(input, 1, &mut meter).map_err(|l| limit_error(l, limits))
}

/// Checks `input` against [`InputLimits::DEFAULT`].
pub fn check(input: &Value) -> Result<(), CapabilityError> {
    check_with(input, &InputLimits::DEFAULT)
}

/// Parses JSON text received from a transport and checks it: the size
/// first (before parsing), then the structure. Text that is not JSON is
/// `INVALID_INPUT`; text nested beyond serde_json's own recursion limit
/// (128) is `LIMIT_EXCEEDED` like any other too-deep input.
pub fn check_json_text(text: &str) -> Result<Value, CapabilityError> {
    let limits = InputLimits::DEFAULT;
    if text.len() > limits.max_bytes {
        return Err(limit_error(Limit::InputBytes, &limits));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        if e.to_string().contains("recursion limit") {
            limit_error(Limit::Depth, &limits)
        } else {
            CapabilityError::new(ErrorCode::InvalidInput, "The input is not valid JSON.")
        }
    })?;
    check_with(&value, &limits)?;
    Ok(value)
}

/// How much a handler's own `CapabilityError` may carry in `details`
/// (what a caller and a model are shown next to its code and message):
/// facts such as `{retryAfterMs}` or `{field, reason}`, not payloads.
/// Details beyond these limits are dropped; the error keeps its code,
/// message and `retryable`.
pub const ERROR_DETAILS: InputLimits = InputLimits {
    max_bytes: 16 * 1024,
    max_depth: 16,
    max_object_keys: 256,
    max_string_bytes: 4 * 1024,
};

/// A handler error's details as the core keeps them: `Some` when they are
/// within [`ERROR_DETAILS`], else `None` (dropped, not an error: the
/// handler's code and message still reach the caller). `null` details are
/// no details, whichever way a host spells "none".
pub fn error_details(details: Value) -> Option<Value> {
    let kept = !details.is_null() && check_with(&details, &ERROR_DETAILS).is_ok();
    kept.then_some(details)
}

/// Error details from the JSON text a host wrote, for the invocation to
/// judge with [`error_details`]: text over the size limit is not parsed,
/// and text that is not JSON is dropped like details over a limit.
pub fn error_details_text(text: &str) -> Option<Value> {
    if text.len() > ERROR_DETAILS.max_bytes {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// JSON text of at most this many characters cannot exceed any limit, in
/// any encoding whose ASCII characters are one code unit (UTF-8, UTF-16):
/// the tightest limit to reach is depth, which takes `max_depth + 1`
/// opening and as many closing brackets; every other limit needs far more.
/// A host that serializes inputs itself skips the crossing below it.
pub const SHORT_TEXT_CHARS: usize = 2 * MAX_INPUT_DEPTH + 1;

/// Checks JSON text a host serialized itself from a raw input it holds
/// (so the text is JSON): the same verdict as [`check_json_text`], but
/// text that cannot exceed any limit passes without being parsed — at most
/// `max_depth` opening brackets, at most `max_object_keys` colons, and no
/// longer than a string may be (each is necessary to exceed the limit it
/// stands for, strings included, so the shortcut never lets an input
/// through that the full check refuses).
pub fn check_serialized(text: &str) -> Result<(), CapabilityError> {
    let limits = InputLimits::DEFAULT;
    if text.len() <= limits.max_string_bytes {
        let (mut opening, mut colons) = (0usize, 0usize);
        for b in text.bytes() {
            opening += usize::from(b == b'[' || b == b'{');
            colons += usize::from(b == b':');
        }
        if opening <= limits.max_depth && colons <= limits.max_object_keys {
            return Ok(());
        }
    }
    match check_json_text(text) {
        Err(e) if e.code == ErrorCode::InvalidInput => {
            // Host text is JSON by construction; what serde refuses in it is
            // a lone surrogate escape (`"\ud800"`, which JavaScript's
            // `JSON.stringify` writes). Measured with those escapes made
            // replacement characters; text that is still not JSON is not a
            // limits matter (the validator judges the input).
            match check_json_text(&without_surrogate_escapes(text)) {
                Err(e) if e.code == ErrorCode::LimitExceeded => Err(e),
                _ => Ok(()),
            }
        }
        verdict => verdict.map(drop),
    }
}

/// `text` with every `\uD800`–`\uDFFF` escape written as `\ufffd` (same
/// length); other escapes, and backslashes that escape a backslash, are
/// left alone.
fn without_surrogate_escapes(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied) = (0, 0);
    while i + 1 < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        if bytes[i + 1] == b'u' {
            let code = bytes
                .get(i + 2..i + 6)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u16::from_str_radix(h, 16).ok());
            if code.is_some_and(|c| (0xD800..=0xDFFF).contains(&c)) {
                out.push_str(&text[copied..i]);
                out.push_str("\\ufffd");
                copied = i + 6;
            }
            i += 6;
        } else {
            i += 2; // `\\`, `\"`, `\n`…: the next byte is not an escape start
        }
    }
    out.push_str(&text[copied.min(text.len())..]);
    out
}

/// Measures an input against the limits while a host walks it in its own
/// types (a Python dict, a Swift value), so a binding that keeps inputs
/// host-side applies exactly the rule [`check`] applies to JSON: the host
/// only reports what it meets, the meter counts and decides. Depth is the
/// host's to pass (a top-level container is depth 1); the meter refuses a
/// container deeper than the limit before the host descends into it, so a
/// cyclic host value ends as a `depth` error, not an endless walk.
#[derive(Clone, Debug)]
pub struct Meter {
    limits: InputLimits,
    bytes: usize,
}

impl Default for Meter {
    fn default() -> Self {
        Meter::new()
    }
}

impl Meter {
    /// A meter for [`InputLimits::DEFAULT`].
    pub fn new() -> Meter {
        Meter::with_limits(InputLimits::DEFAULT)
    }

    pub fn with_limits(limits: InputLimits) -> Meter {
        Meter { limits, bytes: 0 }
    }

    /// The typed error for the limit a report exceeded.
    pub fn error(&self, limit: Limit) -> CapabilityError {
        limit_error(limit, &self.limits)
    }

    fn add(&mut self, n: usize) -> Result<(), Limit> {
        self.bytes = self.bytes.saturating_add(n);
        if self.bytes > self.limits.max_bytes {
            Err(Limit::InputBytes)
        } else {
            Ok(())
        }
    }

    /// `null` or `true` (4 bytes of JSON).
    pub fn null(&mut self) -> Result<(), Limit> {
        self.add(4)
    }

    pub fn bool(&mut self, b: bool) -> Result<(), Limit> {
        self.add(if b { 4 } else { 5 })
    }

    /// A number, by the length of its JSON text.
    pub fn number(&mut self, n: &serde_json::Number) -> Result<(), Limit> {
        if let Some(i) = n.as_i64() {
            return self.integer(i);
        }
        self.add(number_bytes(n))
    }

    /// A number whose JSON text is `len` bytes long (a host number with no
    /// `serde_json::Number` form, such as a big integer).
    pub fn number_text(&mut self, len: usize) -> Result<(), Limit> {
        self.add(len)
    }

    /// An integer: its decimal digits (and sign), counted without
    /// formatting it — the common number, on every call's hot path.
    pub fn integer(&mut self, i: i64) -> Result<(), Limit> {
        let sign = usize::from(i < 0);
        let digits = i
            .unsigned_abs()
            .checked_ilog10()
            .map_or(1, |d| d as usize + 1);
        self.add(sign + digits)
    }

    /// A string value.
    pub fn string(&mut self, s: &str) -> Result<(), Limit> {
        let n = string_bytes(s, &self.limits)?;
        self.add(n)
    }

    /// An array of `len` items at `depth`; the host reports the items next
    /// at `depth + 1`.
    pub fn array(&mut self, depth: usize, len: usize) -> Result<(), Limit> {
        if depth > self.limits.max_depth {
            return Err(Limit::Depth);
        }
        self.add(2 + len.saturating_sub(1))
    }

    /// An object of `len` entries at `depth`; the host reports each key
    /// ([`Self::key`]) and value (at `depth + 1`) next.
    pub fn object(&mut self, depth: usize, len: usize) -> Result<(), Limit> {
        if depth > self.limits.max_depth {
            return Err(Limit::Depth);
        }
        if len > self.limits.max_object_keys {
            return Err(Limit::ObjectKeys);
        }
        // Braces, commas, and a colon per entry.
        self.add(2 + len.saturating_sub(1) + len)
    }

    /// An object key.
    pub fn key(&mut self, k: &str) -> Result<(), Limit> {
        self.string(k)
    }
}

/// The compact JSON length of a string, quotes and escapes included.
fn string_bytes(s: &str, limits: &InputLimits) -> Result<usize, Limit> {
    if s.len() > limits.max_string_bytes {
        return Err(Limit::StringBytes);
    }
    // Most strings escape nothing: a scan for anything to escape decides,
    // and only strings with something to escape are priced.
    if !has_escapes(s.as_bytes()) {
        return Ok(s.len() + 2);
    }
    let escaped: usize = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum();
    Ok(escaped + 2)
}

/// Whether `bytes` hold a byte JSON escapes (a control character, `"` or
/// `\\`), eight bytes at a time: most strings on the hot path (keys, short
/// values) are a word or two, where a vectorized count's setup cost more
/// than the scan. Each test is exact as a yes/no: a byte's borrow can only
/// set a flag above a byte that already matched.
fn has_escapes(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Nonzero exactly when some byte of `w` is below `n` (n <= 0x80).
    let below = |w: u64, n: u64| w.wrapping_sub(ONES * n) & !w & HIGH;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut le = [0u8; 8];
        le.copy_from_slice(word);
        let w = u64::from_le_bytes(le);
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        if below(w, 0x20) | below(quote, 1) | below(backslash, 1) != 0 {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Length of a number's JSON text, counted without allocating.
fn number_bytes(n: &serde_json::Number) -> usize {
    struct Count(usize);
    impl std::fmt::Write for Count {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0 += s.len();
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = std::fmt::write(&mut c, format_args!("{n}"));
    c.0
}

/// [`check`]'s walk: a JSON value reported to a [`Meter`].
fn walk(v: &Value, depth: usize, meter: &mut Meter) -> Result<(), Limit> {
    match v {
        Value::Null => meter.null(),
        Value::Bool(b) => meter.bool(*b),
        Value::Number(n) => meter.number(n),
        Value::String(s) => meter.string(s),
        Value::Array(items) => {
            meter.array(depth, items.len())?;
            items.iter().try_for_each(|x| walk(x, depth + 1, meter))
        }
        Value::Object(map) => {
            meter.object(depth, map.len())?;
            map.iter().try_for_each(|(k, x)| {
                meter.key(k)?;
                walk(x, depth + 1, meter)
            })
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_word_scan_finds_every_byte_json_escapes_at_every_position() {
        let naive = |b: &[u8]| b.iter().any(|&c| c < 0x20 || c == b'"' || c == b'\\');
        for len in 1..=19 {
            for at in 0..len {
                for byte in 0..=255u8 {
                    // Around the probe: bytes just above and below each
                    // boundary, and UTF-8 continuation bytes.
                    for filler in [b'a', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x80, 0xff] {
                        let mut text = vec![filler; len];
                        text[at] = byte;
                        assert_eq!(has_escapes(&text), naive(&text), "{text:?}");
                    }
                }
            }
        }
        assert!(!has_escapes(b""));
    }
    use super::*;

    #[test]
    fn size_is_the_compact_json_length() {
        for v in [
            json!(null),
            json!({"a": [1, 2.5, -3, "x\"\n\u{1}é"], "b": {"c": true, "d": false}}),
            json!([]),
            json!({}),
            json!([1e300, 12345678901234567890u64]),
            json!([0, 9, 10, -1, -10, 99, i64::MIN, i64::MAX, u64::MAX]),
        ] {
            let mut meter = Meter::new();
            walk(&v, 1, &mut meter).unwrap();
            assert_eq!(meter.bytes, serde_json::to_string(&v).unwrap().len(), "{v}");
        }
    }

    #[test]
    fn each_limit_is_typed_and_names_no_data() {
        let small = InputLimits {
            max_bytes: 40,
            max_depth: 3,
            max_object_keys: 2,
            max_string_bytes: 8,
        };
        let code = |v: Value| {
            let e = check_with(&v, &small).unwrap_err();
            assert_eq!(e.code, ErrorCode::LimitExceeded);
            assert!(!e.message.contains("secret"), "{}", e.message);
            e.details.unwrap()["limit"].as_str().unwrap().to_owned()
        };
        assert_eq!(code(json!([[[["secret"]]]])), "depth");
        assert_eq!(code(json!({"a": 1, "b": 2, "secret": 3})), "objectKeys");
        assert_eq!(code(json!({"a": "secret-secret"})), "stringBytes");
        assert_eq!(code(json!({"secretkey": 1})), "stringBytes");
        assert_eq!(
            code(json!(["secret", "secret", "secret", "secret", "secret"])),
            "inputBytes"
        );
        assert!(check_with(&json!([[["ok"]]]), &small).is_ok());
        assert!(check_with(&json!({"a": 1, "b": "12345678"}), &small).is_ok());
    }

    #[test]
    fn json_text_is_checked_before_and_after_parsing() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        let e = check_json_text(&deep).unwrap_err();
        assert_eq!(e.details.unwrap()["limit"], "depth");
        let e = check_json_text("{nope").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        let big = format!("\"{}\"", "a".repeat(MAX_INPUT_BYTES));
        assert_eq!(
            check_json_text(&big).unwrap_err().details.unwrap()["limit"],
            "inputBytes"
        );
        assert_eq!(check_json_text("{\"a\": [1]}").unwrap(), json!({"a": [1]}));
    }
}
