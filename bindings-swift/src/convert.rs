//! JSON text ↔ core values, and the frame Swift sends.
//!
//! The frame crosses as its surface name plus, only when it carries more
//! than a surface (actor, trace, ids), its JSON form: the common call pays
//! for one short string, not a JSON parse.

use orpc_agent_core::{Frame, Surface};
use serde_json::Value;

use crate::{FfiError, invalid_input};

pub(crate) fn parse_json(text: &str) -> Result<Value, FfiError> {
    serde_json::from_str(text).map_err(|e| invalid_input(format!("not valid JSON: {e}")))
}

/// The frame from `surface` and the optional full frame JSON (whose own
/// `surface` must agree: Swift sends both from one value).
pub(crate) fn frame(surface: &str, frame_json: Option<&str>) -> Result<Frame, FfiError> {
    let surface = Surface::parse(surface).ok_or_else(|| {
        invalid_input(format!(
            "unknown surface `{surface}` (expected one of {})",
            Surface::expected()
        ))
    })?;
    match frame_json {
        None => Ok(Frame::new(surface)),
        Some(text) => {
            let mut frame: Frame = serde_json::from_str(text)
                .map_err(|e| invalid_input(format!("not a valid frame: {e}")))?;
            frame.surface = surface;
            Ok(frame)
        }
    }
}
