//! JSON text ↔ core values, and the frame Swift sends.
//!
//! The frame crosses as its surface index plus, only when it carries more
//! than a surface (actor, trace, ids), its JSON form: the common call pays
//! for one integer, not a string or a JSON parse.

use orpc_agent_core::{Frame, Surface};
use serde_json::Value;

use crate::{FfiError, invalid_input};

pub(crate) fn parse_json(text: &str) -> Result<Value, FfiError> {
    serde_json::from_str(text).map_err(|e| invalid_input(format!("not valid JSON: {e}")))
}

/// The surfaces in the order of their index (`Surface::ALL`), for the
/// Swift enum's drift test.
#[uniffi::export]
pub fn surface_names() -> Vec<String> {
    Surface::ALL.iter().map(|s| s.as_str().to_owned()).collect()
}

/// The frame from the surface index (position in `Surface::ALL`) and the
/// optional full frame JSON (its own `surface` is replaced by the index's).
pub(crate) fn frame(surface: u8, frame_json: Option<&str>) -> Result<Frame, FfiError> {
    let surface = Surface::from_index(surface)
        .ok_or_else(|| invalid_input(format!("unknown surface index {surface}")))?;
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
