//! Stage 4's message for the model: written here, once, from the issues a
//! host's input validator reported, so every binding tells the model the
//! same thing in the same words (issue 14: Node, Python and Swift formatted
//! it three ways, and Swift quoted the thrown error's text).
//!
//! The message names where each problem is (a JSON pointer) and the
//! validator's own description of it. It never carries the rejected value
//! — a host reports issues, not values — and a validator that threw
//! instead of answering is told apart with a fixed text
//! ([`VALIDATOR_FAILED`]): an exception's message may quote the input (a
//! getter's thrown text, a card number).

/// One problem a host's validator found in the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputIssue {
    /// Where: the keys and array indices from the input's root, as text.
    pub path: Vec<String>,
    /// What, in the validator's words (e.g. "Expected number").
    pub message: String,
}

/// At most this many issues are listed; the rest are counted.
pub const MAX_LISTED_ISSUES: usize = 10;
/// A validator's message longer than this (in characters) is cut.
pub const MAX_ISSUE_CHARS: usize = 200;

/// What the model is told when the validator threw instead of answering.
pub const VALIDATOR_FAILED: &str = "The input could not be validated, so the call did not run.";

/// The INVALID_INPUT message for `issues`: `The input is invalid: /items/0/qty:
/// Expected number; /email: Invalid email.` Paths are JSON pointers (RFC
/// 6901: `~` and `/` in a key are escaped); at most [`MAX_LISTED_ISSUES`]
/// are listed, each message at most [`MAX_ISSUE_CHARS`] characters, with
/// line breaks and other control characters made spaces.
pub fn invalid_input_message(issues: &[InputIssue]) -> String {
    if issues.is_empty() {
        return "The input is invalid.".to_owned();
    }
    let mut out = String::from("The input is invalid: ");
    for (i, issue) in issues.iter().take(MAX_LISTED_ISSUES).enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        out.push_str(&pointer(&issue.path));
        out.push_str(": ");
        let mut chars = issue.message.chars();
        for c in chars.by_ref().take(MAX_ISSUE_CHARS) {
            out.push(if c.is_control() { ' ' } else { c });
        }
        if chars.next().is_some() {
            out.push('…');
        }
    }
    let more = issues.len().saturating_sub(MAX_LISTED_ISSUES);
    if more > 0 {
        out.push_str(&format!("; and {more} more"));
    }
    out.push('.');
    out
}

/// The JSON pointer of `path` (`/` for the root).
fn pointer(path: &[String]) -> String {
    if path.is_empty() {
        return "/".to_owned();
    }
    let mut out = String::new();
    for segment in path {
        out.push('/');
        out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(path: &[&str], message: &str) -> InputIssue {
        InputIssue {
            path: path.iter().map(|s| (*s).to_owned()).collect(),
            message: message.to_owned(),
        }
    }

    #[test]
    fn issues_become_one_message_with_pointers() {
        assert_eq!(
            invalid_input_message(&[
                issue(&["items", "0", "qty"], "Expected number"),
                issue(&[], "Required"),
                issue(&["a/b", "~c"], "Bad")
            ]),
            "The input is invalid: /items/0/qty: Expected number; /: Required; /a~1b/~0c: Bad."
        );
        assert_eq!(invalid_input_message(&[]), "The input is invalid.");
    }

    #[test]
    fn the_message_is_bounded() {
        let many: Vec<InputIssue> = (0..25).map(|i| issue(&[&i.to_string()], "x")).collect();
        let m = invalid_input_message(&many);
        assert!(m.ends_with("; and 15 more."), "{m}");
        let long = invalid_input_message(&[issue(&["k"], &"y\n".repeat(500))]);
        assert!(long.chars().count() < MAX_ISSUE_CHARS + 40, "{long}");
        assert!(!long.contains('\n'));
    }
}
