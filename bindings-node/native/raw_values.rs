//! Reading a raw Node-API callback's arguments and returning its result,
//! for the hot-path functions of [`crate::raw`]: argument handles, numbers
//! and strings in, a double out or the error's JSON thrown. Kept apart from
//! the callbacks so `raw.rs` holds only the crossings themselves; like
//! `raw.rs`, this module is allowed `unsafe` (raw Node-API calls) and keeps
//! no pointer or JS value beyond the running callback. Release builds are
//! one optimization unit (fat LTO, `codegen-units = 1`), so the module
//! boundary does not change what inlines into the callbacks.

use std::ptr;

use napi::sys;
use orpc_agent_core::CapabilityError;

use crate::errors::internal;

/// The callback's first `N` argument handles (missing ones stay null,
/// which every `napi_get_value_*` rejects).
///
/// # Safety
/// `env` and `info` must be the ones Node passed to the running callback.
pub(crate) unsafe fn handles<const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> [sys::napi_value; N] {
    let mut argc = N;
    let mut argv: [sys::napi_value; N] = [ptr::null_mut(); N];
    // SAFETY: argv has room for argc values; Node fills at most argc.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok {
        return [ptr::null_mut(); N];
    }
    argv
}

/// Reads up to `N` arguments as f64 (non-numbers read as 0).
///
/// # Safety
/// `env` and `info` must be the ones Node passed to the running callback.
pub(crate) unsafe fn args<const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> [f64; N] {
    // SAFETY: forwarded from the caller.
    let argv = unsafe { handles::<N>(env, info) };
    let mut out = [0f64; N];
    for (slot, v) in out.iter_mut().zip(argv.iter()) {
        if v.is_null() {
            continue;
        }
        let mut d = 0f64;
        // SAFETY: v is a live handle of this callback scope.
        if unsafe { sys::napi_get_value_double(env, *v, &mut d) } == sys::Status::napi_ok {
            *slot = d;
        }
    }
    out
}

/// A JS number argument; 0 for anything else.
///
/// # Safety
/// `env` must be the running callback's and `v` null or a handle of its scope.
pub(crate) unsafe fn number(env: sys::napi_env, v: sys::napi_value) -> f64 {
    let mut d = 0f64;
    // SAFETY: v is null (checked) or a live handle of this callback scope.
    if v.is_null() || unsafe { sys::napi_get_value_double(env, v, &mut d) } != sys::Status::napi_ok
    {
        return 0.0;
    }
    d
}

/// Reads a JS string; `None` for anything else.
///
/// # Safety
/// `env` must be the running callback's and `v` a handle of its scope.
pub(crate) unsafe fn string(env: sys::napi_env, v: sys::napi_value) -> Option<String> {
    if v.is_null() {
        return None;
    }
    let mut len = 0usize;
    // SAFETY: a null buffer asks for the length only.
    let status = unsafe { sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut len) };
    if status != sys::Status::napi_ok {
        return None;
    }
    let mut buf = vec![0u8; len + 1];
    let mut written = 0usize;
    // SAFETY: buf has room for len bytes and the NUL Node writes after them.
    let status = unsafe {
        sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr().cast(), len + 1, &mut written)
    };
    if status != sys::Status::napi_ok {
        return None;
    }
    buf.truncate(written);
    String::from_utf8(buf).ok()
}

/// Returns `r` as a JS number, or throws the error's JSON (as every export
/// of this crate does) and returns null.
///
/// # Safety
/// `env` must be the running callback's.
pub(crate) unsafe fn finish(
    env: sys::napi_env,
    r: std::thread::Result<Result<f64, CapabilityError>>,
) -> sys::napi_value {
    let e = match r {
        Ok(Ok(v)) => {
            let mut out = ptr::null_mut();
            // SAFETY: out receives a new handle in the current scope.
            unsafe { sys::napi_create_double(env, v, &mut out) };
            return out;
        }
        Ok(Err(e)) => e,
        Err(_) => internal("a panic in orpc-agent-node was caught"),
    };
    let text = serde_json::json!({"error": e.to_json()}).to_string();
    let msg = std::ffi::CString::new(text).unwrap_or_default();
    // SAFETY: msg is a valid NUL-terminated string for the duration of the call.
    unsafe { sys::napi_throw_error(env, ptr::null(), msg.as_ptr()) };
    ptr::null_mut()
}

pub(crate) fn int(x: f64) -> u32 {
    if x.is_finite() && x >= 0.0 && x <= f64::from(u32::MAX) {
        x as u32
    } else {
        u32::MAX
    }
}
