//! The `act:component` custom section of a WebAssembly binary (core module
//! or component): read it, and write or replace it while keeping every
//! other section byte for byte.
//!
//! Only the framing is parsed — preamble, then (id, LEB128 size, payload)
//! per section — which is all that is needed and all that is trusted. Every
//! size is checked against the bytes that remain before it is used.

/// The custom section name spec/004 stores component metadata under.
pub const SECTION_NAME: &str = "act:component";

const MAGIC: [u8; 4] = *b"\0asm";

/// Why bytes are not a WebAssembly binary we can work on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WasmError {
    #[error("not a WebAssembly binary: the file does not start with \\0asm")]
    BadMagic,
    #[error("WebAssembly preamble is shorter than 8 bytes")]
    ShortPreamble,
    #[error("LEB128 at byte {offset} is longer than 5 bytes or overflows 32 bits")]
    OverlongLeb { offset: usize },
    #[error("LEB128 at byte {offset} ends with the file")]
    TruncatedLeb { offset: usize },
    #[error("section {id} at byte {offset} declares {size} bytes but only {available} remain")]
    TruncatedSection {
        offset: usize,
        id: u8,
        size: u32,
        available: usize,
    },
    #[error(
        "custom section at byte {offset} has a name that is not valid UTF-8 or overruns the section"
    )]
    BadCustomName { offset: usize },
    #[error("the binary has {0} act:component sections; at most one is allowed")]
    DuplicateSection(usize),
}

impl WasmError {
    pub const fn code(&self) -> &'static str {
        match self {
            WasmError::BadMagic => "WASM_BAD_MAGIC",
            WasmError::ShortPreamble => "WASM_TRUNCATED",
            WasmError::OverlongLeb { .. } => "WASM_OVERLONG_LEB128",
            WasmError::TruncatedLeb { .. } => "WASM_TRUNCATED",
            WasmError::TruncatedSection { .. } => "WASM_TRUNCATED",
            WasmError::BadCustomName { .. } => "WASM_BAD_CUSTOM_NAME",
            WasmError::DuplicateSection(_) => "WASM_DUPLICATE_SECTION",
        }
    }
}

/// One section as it lies in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section<'a> {
    pub id: u8,
    /// Start of the section (its id byte) in the file.
    pub offset: usize,
    /// The whole section, id and size included, as in the file.
    pub raw: &'a [u8],
    /// The payload after the size.
    pub payload: &'a [u8],
}

impl<'a> Section<'a> {
    /// For a custom section (id 0): its name and the data after it.
    pub fn custom(&self) -> Result<Option<(&'a str, &'a [u8])>, WasmError> {
        if self.id != 0 {
            return Ok(None);
        }
        let bad = WasmError::BadCustomName {
            offset: self.offset,
        };
        let (len, used) = read_u32(self.payload, 0).map_err(|_| bad.clone())?;
        let end = used
            .checked_add(len as usize)
            .filter(|e| *e <= self.payload.len())
            .ok_or(bad.clone())?;
        let name = std::str::from_utf8(&self.payload[used..end]).map_err(|_| bad)?;
        Ok(Some((name, &self.payload[end..])))
    }
}

/// Reads an unsigned LEB128 u32 at `pos`: at most 5 bytes, no bits past
/// 32 (the WebAssembly rule). Returns (value, bytes used).
pub fn read_u32(bytes: &[u8], pos: usize) -> Result<(u32, usize), WasmError> {
    let mut value: u32 = 0;
    for i in 0..5 {
        let b = *bytes
            .get(pos + i)
            .ok_or(WasmError::TruncatedLeb { offset: pos })?;
        let bits = u32::from(b & 0x7f);
        if i == 4 && bits > 0x0f {
            return Err(WasmError::OverlongLeb { offset: pos });
        }
        value |= bits << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(WasmError::OverlongLeb { offset: pos })
}

fn write_u32(out: &mut Vec<u8>, mut v: u32) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Splits a binary into its preamble (magic + version/layer) and sections.
pub fn sections(bytes: &[u8]) -> Result<(&[u8], Vec<Section<'_>>), WasmError> {
    if bytes.len() >= 4 && bytes[..4] != MAGIC {
        return Err(WasmError::BadMagic);
    }
    if bytes.len() < 8 {
        return Err(
            if bytes.starts_with(&MAGIC[..bytes.len().min(4)]) && bytes.len() < 4 {
                WasmError::BadMagic
            } else {
                WasmError::ShortPreamble
            },
        );
    }
    let mut out = Vec::new();
    let mut pos = 8;
    while pos < bytes.len() {
        let offset = pos;
        let id = bytes[pos];
        let (size, used) = read_u32(bytes, pos + 1)?;
        let start = pos + 1 + used;
        let available = bytes.len() - start;
        if size as usize > available {
            return Err(WasmError::TruncatedSection {
                offset,
                id,
                size,
                available,
            });
        }
        let end = start + size as usize;
        out.push(Section {
            id,
            offset,
            raw: &bytes[offset..end],
            payload: &bytes[start..end],
        });
        pos = end;
    }
    Ok((&bytes[..8], out))
}

/// The data of the `act:component` section, if the binary has one.
pub fn read_component_section(bytes: &[u8]) -> Result<Option<&[u8]>, WasmError> {
    let (_, secs) = sections(bytes)?;
    let mut found = Vec::new();
    for s in &secs {
        if let Some((SECTION_NAME, data)) = s.custom()? {
            found.push(data);
        }
    }
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        n => Err(WasmError::DuplicateSection(n)),
    }
}

/// A custom section `name` holding `data`, framed.
pub fn custom_section(name: &str, data: &[u8]) -> Vec<u8> {
    let mut payload = Vec::with_capacity(name.len() + data.len() + 5);
    write_u32(&mut payload, name.len() as u32);
    payload.extend_from_slice(name.as_bytes());
    payload.extend_from_slice(data);
    let mut out = Vec::with_capacity(payload.len() + 6);
    out.push(0);
    write_u32(&mut out, payload.len() as u32);
    out.extend_from_slice(&payload);
    out
}

/// Writes `data` as the `act:component` section: an existing one is
/// replaced in place, otherwise the section is appended (custom sections
/// may go anywhere). Every other byte is copied unchanged.
pub fn write_component_section(bytes: &[u8], data: &[u8]) -> Result<Vec<u8>, WasmError> {
    let (preamble, secs) = sections(bytes)?;
    let new = custom_section(SECTION_NAME, data);
    let mut out = Vec::with_capacity(bytes.len() + new.len());
    out.extend_from_slice(preamble);
    let mut replaced = false;
    for s in &secs {
        if matches!(s.custom()?, Some((SECTION_NAME, _))) {
            if replaced {
                return Err(WasmError::DuplicateSection(2));
            }
            out.extend_from_slice(&new);
            replaced = true;
        } else {
            out.extend_from_slice(s.raw);
        }
    }
    if !replaced {
        out.extend_from_slice(&new);
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests_support {
    /// A minimal core module: preamble, a type section, a custom "name".
    pub(crate) fn module() -> Vec<u8> {
        let mut m = b"\0asm\x01\0\0\0".to_vec();
        m.extend_from_slice(&[1, 4, 1, 0x60, 0, 0]); // type section: one () -> ()
        m.extend_from_slice(&super::custom_section("name", &[0, 1, 2]));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::module;
    use super::*;

    #[test]
    fn write_read_replace() {
        let m = module();
        assert_eq!(read_component_section(&m).unwrap(), None);
        let w = write_component_section(&m, b"one").unwrap();
        assert!(w.starts_with(&m), "other sections kept byte for byte");
        assert_eq!(read_component_section(&w).unwrap(), Some(&b"one"[..]));
        let w2 = write_component_section(&w, b"two!").unwrap();
        assert_eq!(read_component_section(&w2).unwrap(), Some(&b"two!"[..]));
        assert_eq!(&w2[..m.len()], &m[..]);
    }

    #[test]
    fn malformed() {
        let code = |b: &[u8]| sections(b).unwrap_err().code();
        assert_eq!(code(b"\x7fELF\x01\0\0\0"), "WASM_BAD_MAGIC");
        assert_eq!(code(b"\0as"), "WASM_BAD_MAGIC");
        assert_eq!(code(b"\0asm\x01"), "WASM_TRUNCATED");
        let mut t = module();
        t.truncate(t.len() - 1);
        assert_eq!(code(&t), "WASM_TRUNCATED");
        let mut o = b"\0asm\x01\0\0\0\x00".to_vec();
        o.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
        assert_eq!(code(&o), "WASM_OVERLONG_LEB128");
        let mut o = b"\0asm\x01\0\0\0\x00".to_vec();
        o.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x7f]); // > 32 bits
        assert_eq!(code(&o), "WASM_OVERLONG_LEB128");
        let mut d = write_component_section(&module(), b"a").unwrap();
        d.extend_from_slice(&custom_section(SECTION_NAME, b"b"));
        assert_eq!(
            read_component_section(&d).unwrap_err().code(),
            "WASM_DUPLICATE_SECTION"
        );
    }
}
