//! RFC 8949 §8 diagnostic notation for any well-formed CBOR item, including
//! what `ciborium::Value` cannot hold (undefined, simple values, the
//! indefinite-length framing). Used to show bytes to people (`orpc-agent
//! meta decode --diag`) and to check the RFC 8949 Appendix A corpus item by
//! item. Same bounds as the decoder: depth limit, lengths checked first.

use super::decode::{Arg, DecodeError, Head, MAX_DEPTH, Reader, end, half_to_f64};

/// The diagnostic notation of the one item filling `bytes`.
pub fn diagnostic(bytes: &[u8]) -> Result<String, DecodeError> {
    let mut r = Reader::new(bytes);
    let mut out = String::new();
    item(&mut r, &mut out, 0)?;
    end(&r)?;
    Ok(out)
}

fn item(r: &mut Reader<'_>, out: &mut String, depth: usize) -> Result<(), DecodeError> {
    let h = r.head()?;
    if depth >= MAX_DEPTH && matches!(h.major, 4..=6) {
        return Err(DecodeError::TooDeep {
            offset: h.offset,
            limit: MAX_DEPTH,
        });
    }
    match (h.major, h.arg) {
        (0, Arg::Value(n)) => out.push_str(&n.to_string()),
        (1, Arg::Value(n)) => out.push_str(&(-1 - i128::from(n)).to_string()),
        (2 | 3, Arg::Value(n)) => string(r, h, n, out)?,
        (2 | 3, Arg::Indefinite) => {
            out.push_str("(_ ");
            let mut first = true;
            while !r.eat_break() {
                let c = r.head()?;
                let Arg::Value(n) = c.arg else {
                    return Err(bad_chunk(c));
                };
                if c.major != h.major {
                    return Err(bad_chunk(c));
                }
                if !first {
                    out.push_str(", ");
                }
                first = false;
                string(r, c, n, out)?;
            }
            out.push(')');
        }
        (4, arg) => {
            out.push('[');
            if arg == Arg::Indefinite {
                out.push_str("_ ");
            }
            seq(r, out, arg, h, 1, depth)?;
            out.push(']');
        }
        (5, arg) => {
            out.push('{');
            if arg == Arg::Indefinite {
                out.push_str("_ ");
            }
            seq(r, out, arg, h, 2, depth)?;
            out.push('}');
        }
        (6, Arg::Value(t)) => {
            out.push_str(&format!("{t}("));
            item(r, out, depth + 1)?;
            out.push(')');
        }
        (7, arg) => simple(h, arg, out)?,
        _ => {
            return Err(DecodeError::Malformed {
                offset: h.offset,
                reason: "invalid head",
            });
        }
    }
    Ok(())
}

fn bad_chunk(c: Head) -> DecodeError {
    DecodeError::Malformed {
        offset: c.offset,
        reason: "an indefinite-length string chunk must be a definite string of the same type",
    }
}

/// Items of an array (`per` = 1) or map (`per` = 2).
fn seq(
    r: &mut Reader<'_>,
    out: &mut String,
    arg: Arg,
    h: Head,
    per: u64,
    depth: usize,
) -> Result<(), DecodeError> {
    let mut i = 0u64;
    let next = |r: &mut Reader<'_>, out: &mut String, i: u64| -> Result<(), DecodeError> {
        if i > 0 {
            out.push_str(if per == 2 && i % 2 == 1 { ": " } else { ", " });
        }
        item(r, out, depth + 1)
    };
    match arg {
        Arg::Value(n) => {
            r.check_items(h.offset, n, per)?;
            while i < n * per {
                next(r, out, i)?;
                i += 1;
            }
        }
        Arg::Indefinite => loop {
            if i % per == 0 && r.eat_break() {
                break;
            }
            next(r, out, i)?;
            i += 1;
        },
    }
    Ok(())
}

fn string(r: &mut Reader<'_>, h: Head, n: u64, out: &mut String) -> Result<(), DecodeError> {
    let available = r.remaining();
    let bytes = r.take(n).map_err(|_| DecodeError::LengthBeyondInput {
        offset: h.offset,
        declared: n,
        available,
    })?;
    if h.major == 2 {
        out.push_str("h'");
        for b in bytes {
            out.push_str(&format!("{b:02x}"));
        }
        out.push('\'');
    } else {
        let s = std::str::from_utf8(bytes)
            .map_err(|_| DecodeError::InvalidUtf8 { offset: h.offset })?;
        // JSON string escaping is what §8 uses for text.
        out.push_str(&serde_json::Value::String(s.to_owned()).to_string());
    }
    Ok(())
}

fn simple(h: Head, arg: Arg, out: &mut String) -> Result<(), DecodeError> {
    let Arg::Value(v) = arg else {
        return Err(DecodeError::Malformed {
            offset: h.offset,
            reason: "break (0xff) outside an indefinite-length item",
        });
    };
    let text = match (h.info, v) {
        (20, _) => "false".to_owned(),
        (21, _) => "true".to_owned(),
        (22, _) => "null".to_owned(),
        (23, _) => "undefined".to_owned(),
        (24, v) if v < 32 => {
            return Err(DecodeError::Malformed {
                offset: h.offset,
                reason: "two-byte simple value below 32 (RFC 8949 §3.3)",
            });
        }
        (0..=19 | 24, v) => format!("simple({v})"),
        (25, v) => float(half_to_f64(v as u16)),
        (26, v) => float(f64::from(f32::from_bits(v as u32))),
        (_, v) => float(f64::from_bits(v)),
    };
    out.push_str(&text);
    Ok(())
}

/// Floats always show a fraction or exponent, as §8 requires.
fn float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else {
        let s = format!("{f:?}");
        if s.contains(['.', 'e', 'E']) {
            s
        } else {
            format!("{s}.0")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(hex: &str) -> String {
        let b: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        diagnostic(&b).unwrap()
    }

    #[test]
    fn notation() {
        assert_eq!(d("5f42010243030405ff"), "(_ h'0102', h'030405')");
        assert_eq!(d("bf61610161629f0203ffff"), "{_ \"a\": 1, \"b\": [_ 2, 3]}");
        assert_eq!(d("c1fb41d452d9ec200000"), "1(1363896240.5)");
        assert_eq!(d("f7"), "undefined");
        assert_eq!(d("f8ff"), "simple(255)");
        assert_eq!(d("fa7fc00000"), "NaN");
        assert_eq!(d("a201020304"), "{1: 2, 3: 4}");
    }
}
