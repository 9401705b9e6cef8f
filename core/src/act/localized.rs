//! Localized strings (spec/004 `localized-string`): a plain text string,
//! which is in the component's `default-language`, or a map of BCP 47 tag →
//! text. Resolution follows RFC 4647 "lookup": the requested tag, then ever
//! shorter prefixes of it, then the default language the same way, then the
//! first entry, so a reader always gets *some* text when there is any.

use ciborium::Value as Cbor;

/// A localized string as it travels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Localized {
    /// Text in the component's `default-language` (or unknown language).
    Plain(String),
    /// Language tag → text, in the order given.
    Tagged(Vec<(String, String)>),
}

/// Why a value is not a localized string.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LocalizedError {
    #[error("expected text or a map of language tag to text")]
    WrongType,
    #[error("language tag {0:?} is not a well-formed BCP 47 tag")]
    BadTag(String),
    #[error("the text for language {0:?} is not a string")]
    NotText(String),
    #[error("language tag {0:?} appears twice")]
    DuplicateTag(String),
    #[error("a localized map needs at least one language")]
    Empty,
}

/// A light BCP 47 well-formedness check (RFC 5646 §2.1 syntax, not the
/// registry): subtags of 1–8 ASCII letters/digits joined by `-`, the first
/// one 2–8 letters, or a private-use `x-…` tag.
pub fn is_language_tag(tag: &str) -> bool {
    is_language_tag_bytes(tag.as_bytes())
}

/// [`is_language_tag`] on raw bytes (a well-formed tag is ASCII).
pub fn is_language_tag_bytes(tag: &[u8]) -> bool {
    let mut parts = tag.split(|b| *b == b'-');
    let Some(first) = parts.next() else {
        return false;
    };
    let first_ok = ((2..=8).contains(&first.len()) && first.iter().all(u8::is_ascii_alphabetic))
        || first.eq_ignore_ascii_case(b"x")
        || first.eq_ignore_ascii_case(b"i");
    let mut count = 0;
    let rest_ok = parts.all(|p| {
        count += 1;
        !p.is_empty() && p.len() <= 8 && p.iter().all(u8::is_ascii_alphanumeric)
    });
    first_ok && rest_ok && (count > 0 || first.len() >= 2)
}

impl LocalizedError {
    /// Stable code for vectors.
    pub const fn code(&self) -> &'static str {
        match self {
            LocalizedError::WrongType => "WRONG_TYPE",
            LocalizedError::BadTag(_) => "BAD_TAG",
            LocalizedError::NotText(_) => "NOT_TEXT",
            LocalizedError::DuplicateTag(_) => "DUPLICATE_TAG",
            LocalizedError::Empty => "EMPTY",
        }
    }
}

impl Localized {
    /// Reads and checks a CBOR value.
    pub fn from_cbor(v: &Cbor) -> Result<Localized, LocalizedError> {
        match v {
            Cbor::Text(s) => Ok(Localized::Plain(s.clone())),
            Cbor::Map(entries) => {
                if entries.is_empty() {
                    return Err(LocalizedError::Empty);
                }
                let mut out: Vec<(String, String)> = Vec::with_capacity(entries.len());
                for (k, text) in entries {
                    let Cbor::Text(tag) = k else {
                        return Err(LocalizedError::WrongType);
                    };
                    if !is_language_tag(tag) {
                        return Err(LocalizedError::BadTag(tag.clone()));
                    }
                    let Cbor::Text(text) = text else {
                        return Err(LocalizedError::NotText(tag.clone()));
                    };
                    if out.iter().any(|(t, _)| t.eq_ignore_ascii_case(tag)) {
                        return Err(LocalizedError::DuplicateTag(tag.clone()));
                    }
                    out.push((tag.clone(), text.clone()));
                }
                Ok(Localized::Tagged(out))
            }
            _ => Err(LocalizedError::WrongType),
        }
    }

    pub fn to_cbor(&self) -> Cbor {
        match self {
            Localized::Plain(s) => Cbor::Text(s.clone()),
            Localized::Tagged(m) => Cbor::Map(
                m.iter()
                    .map(|(t, s)| (Cbor::Text(t.clone()), Cbor::Text(s.clone())))
                    .collect(),
            ),
        }
    }

    /// The text for `requested` (falling back as the module says), and the
    /// language it is in when known.
    pub fn resolve<'a>(
        &'a self,
        requested: Option<&str>,
        default_language: Option<&'a str>,
    ) -> Resolved<'a> {
        match self {
            Localized::Plain(s) => Resolved {
                text: s,
                language: default_language,
            },
            Localized::Tagged(m) => {
                let by_tag = |want: &str| -> Option<&'a (String, String)> {
                    let mut want = want;
                    loop {
                        if let Some(e) = m.iter().find(|(t, _)| t.eq_ignore_ascii_case(want)) {
                            return Some(e);
                        }
                        // RFC 4647 §3.4: drop the last subtag (and a
                        // single-letter one left dangling before it).
                        let cut = want.rfind('-')?;
                        want = &want[..cut];
                        if want.len() >= 2 && want.as_bytes()[want.len() - 2] == b'-' {
                            want = &want[..want.len() - 2];
                        }
                    }
                };
                let found = requested
                    .and_then(by_tag)
                    .or_else(|| default_language.and_then(by_tag))
                    .or(m.first());
                match found {
                    Some((tag, text)) => Resolved {
                        text,
                        language: Some(tag),
                    },
                    None => Resolved {
                        text: "",
                        language: None,
                    },
                }
            }
        }
    }
}

/// A resolved localized string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved<'a> {
    pub text: &'a str,
    pub language: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tagged() -> Localized {
        Localized::Tagged(vec![
            ("en".into(), "Search orders".into()),
            ("de".into(), "Bestellungen suchen".into()),
            ("pt-BR".into(), "Buscar pedidos".into()),
        ])
    }

    #[test]
    fn resolution_and_fallback() {
        let l = tagged();
        assert_eq!(l.resolve(Some("de"), None).text, "Bestellungen suchen");
        assert_eq!(l.resolve(Some("DE-ch"), None).text, "Bestellungen suchen");
        assert_eq!(l.resolve(Some("pt-BR-x-foo"), None).language, Some("pt-BR"));
        assert_eq!(
            l.resolve(Some("fr"), Some("de")).text,
            "Bestellungen suchen"
        );
        assert_eq!(l.resolve(Some("fr"), Some("ja")).text, "Search orders");
        assert_eq!(l.resolve(None, None).language, Some("en"));
        let p = Localized::Plain("hi".into());
        assert_eq!(
            p.resolve(Some("fr"), Some("en")),
            Resolved {
                text: "hi",
                language: Some("en")
            }
        );
    }

    #[test]
    fn checks() {
        assert!(
            is_language_tag("en") && is_language_tag("zh-Hant-TW") && is_language_tag("x-klingon")
        );
        assert!(
            !is_language_tag("e")
                && !is_language_tag("en_US")
                && !is_language_tag("en-")
                && !is_language_tag("")
        );
        let bad = Cbor::Map(vec![(Cbor::Text("en_US".into()), Cbor::Text("x".into()))]);
        assert_eq!(
            Localized::from_cbor(&bad),
            Err(LocalizedError::BadTag("en_US".into()))
        );
        assert_eq!(
            Localized::from_cbor(&Cbor::Map(vec![])),
            Err(LocalizedError::Empty)
        );
        assert_eq!(
            Localized::from_cbor(&Cbor::Bool(true)),
            Err(LocalizedError::WrongType)
        );
        let l = tagged();
        assert_eq!(Localized::from_cbor(&l.to_cbor()).unwrap(), l);
    }
}
