//! Raw Node-API functions for the three crossings every invocation makes
//! (start, input valid, handler ok: the last two are `answer`) and the two
//! an audit subscriber adds (audit row, audited). DESIGN §4 measured napi-derive's
//! per-call glue at 2–4× a raw Node-API function with integer arguments;
//! on the hot path that difference is most of the binding's overhead.
//!
//! This is the only `unsafe` in the crate. Each callback reads a fixed
//! number of numeric arguments with `napi_get_cb_info` into a stack array
//! (missing arguments read as `undefined`, which `napi_get_value_*` rejects:
//! the value stays 0 and the call fails cleanly as "no such invocation"),
//! runs the same safe Rust as the napi-derive exports inside
//! `catch_unwind`, and returns a double or throws. No pointer outlives the
//! call and no JS value is stored.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use napi::bindgen_prelude::{Env, Object};
use napi::sys;
use napi_derive::napi;
use orpc_agent_core::CapabilityError;

use crate::errors::{internal, invalid};
use crate::invoke::coded_answer_in;
use crate::start::{start_actor_in, start_in};
use crate::step::audit_row_in;

/// The callback's first `N` argument handles (missing ones stay null,
/// which every `napi_get_value_*` rejects).
///
/// # Safety
/// `env` and `info` must be the ones Node passed to the running callback.
unsafe fn handles<const N: usize>(
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
unsafe fn args<const N: usize>(env: sys::napi_env, info: sys::napi_callback_info) -> [f64; N] {
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

/// Returns `r` as a JS number, or throws the error's JSON (as every export
/// of this crate does) and returns null.
///
/// # Safety
/// `env` must be the running callback's.
unsafe fn finish(
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

fn int(x: f64) -> u32 {
    if x.is_finite() && x >= 0.0 && x <= f64::from(u32::MAX) {
        x as u32
    } else {
        u32::MAX
    }
}

/// `start(reg, capabilityIndex, surfaceIndex, inputText, now)`:
/// `invokeStart` for a frame that is only a surface. Every crossing takes
/// the caller's `Date.now()`: one clock for the whole binding, so the
/// deadline the core sets and the times it judges a result by agree, and
/// tests can drive them with a mocked `Date`.
unsafe extern "C" fn raw_start(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: env/info are this callback's.
    let argv = unsafe { handles::<5>(env, info) };
    // SAFETY: as above; each handle is null or a live one of this scope.
    let (reg, cap, surface, now) = unsafe {
        (
            number(env, argv[0]),
            number(env, argv[1]),
            number(env, argv[2]),
            number(env, argv[4]),
        )
    };
    // SAFETY: as above.
    let input_text = unsafe { string(env, argv[3]) };
    let r = catch_unwind(|| {
        start_in(
            int(reg),
            int(cap),
            int(surface),
            None,
            input_text.as_deref(),
            now,
        )
    });
    // SAFETY: as above.
    unsafe { finish(env, r) }
}

/// A JS number argument; 0 for anything else.
///
/// # Safety
/// `env` must be the running callback's and `v` null or a handle of its scope.
unsafe fn number(env: sys::napi_env, v: sys::napi_value) -> f64 {
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
unsafe fn string(env: sys::napi_env, v: sys::napi_value) -> Option<String> {
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

/// `startActor(reg, capabilityIndex, surfaceIndex, actorId, inputText, now)`:
/// `invokeStart` for a frame that is a surface and an actor with only an
/// id, the frame every authenticated adapter call has; the general frame
/// goes through JSON.
unsafe extern "C" fn raw_start_actor(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: env/info are this callback's.
    let argv = unsafe { handles::<6>(env, info) };
    // SAFETY: as above; each handle is null or a live one of this scope.
    let (reg, cap, surface, now) = unsafe {
        (
            number(env, argv[0]),
            number(env, argv[1]),
            number(env, argv[2]),
            number(env, argv[5]),
        )
    };
    // SAFETY: as above.
    let (actor_id, input_text) = unsafe { (string(env, argv[3]), string(env, argv[4])) };
    let r = catch_unwind(|| match actor_id {
        Some(id) => start_actor_in(
            int(reg),
            int(cap),
            int(surface),
            id,
            input_text.as_deref(),
            now,
        ),
        None => Err(invalid("invalid frame: the actor id is not a string")),
    });
    // SAFETY: as above.
    unsafe { finish(env, r) }
}

/// `answer(reg, h, code, now)`: the native `answer` with no text and no
/// flag (`ffi::answer`), for the answers every call makes: input valid,
/// handler ok, audited. The clock is the caller's `Date.now()`, the one
/// clock of the binding: the core compares it with the deadline (a
/// validator or subscriber may have spent it; a result at or after it is
/// TIMEOUT), and tests drive deadlines with a mocked `Date`.
unsafe extern "C" fn raw_answer(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: env/info are this callback's.
    let [reg, h, code, now] = unsafe { args::<4>(env, info) };
    let r = catch_unwind(AssertUnwindSafe(|| {
        coded_answer_in(int(reg), int(h), int(code), now, None, false)
    }));
    // SAFETY: as above.
    unsafe { finish(env, r) }
}

/// `auditRow(reg, h)`: `invokeAuditRow`, the record of an `Audit` step as
/// row JSON (`"null"` on any other step).
unsafe extern "C" fn raw_audit_row(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: env/info are this callback's.
    let [reg, h] = unsafe { args::<2>(env, info) };
    let r = catch_unwind(AssertUnwindSafe(|| audit_row_in(int(reg), int(h))));
    let text = match r {
        Ok(Ok(text)) => text,
        Ok(Err(e)) => return unsafe { finish(env, Ok(Err(e))) },
        // SAFETY: as above.
        Err(p) => return unsafe { finish(env, Err(p)) },
    };
    let mut out = ptr::null_mut();
    // SAFETY: text outlives the call, which copies its bytes into a new
    // JS string in the current scope.
    let status = unsafe {
        sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, &mut out)
    };
    if status != sys::Status::napi_ok {
        // SAFETY: as above.
        return unsafe { finish(env, Ok(Err(internal("creating a string failed")))) };
    }
    out
}

type RawCallback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// `{start, startActor, answer, auditRow}`: raw Node-API functions for
/// the hot path, with the same semantics as `invokeStart` (surface-only
/// frame, or surface and actor id), `answer` without text or flag, and
/// `invokeAuditRow` (every call with an audit subscriber).
#[napi(
    catch_unwind,
    ts_return_type = "{ start(reg: number, capability: number, surface: number, inputText: string | undefined, now: number): number; startActor(reg: number, capability: number, surface: number, actorId: string, inputText: string | undefined, now: number): number; answer(reg: number, h: number, code: number, now: number): number; auditRow(reg: number, h: number): string }"
)]
pub fn hot_path(env: &Env) -> napi::Result<Object<'_>> {
    let raw = env.raw();
    let mut obj = ptr::null_mut();
    // SAFETY: raw is the live env of this call; obj receives a new handle.
    let status = unsafe { sys::napi_create_object(raw, &mut obj) };
    if status != sys::Status::napi_ok {
        return Err(napi::Error::from_reason("napi_create_object failed"));
    }
    let fns: [(&std::ffi::CStr, RawCallback); 4] = [
        (c"start", raw_start),
        (c"startActor", raw_start_actor),
        (c"answer", raw_answer),
        (c"auditRow", raw_audit_row),
    ];
    for (name, cb) in fns {
        let mut f = ptr::null_mut();
        // SAFETY: name is NUL-terminated and static; cb has the callback ABI.
        let ok = unsafe {
            sys::napi_create_function(
                raw,
                name.as_ptr(),
                name.to_bytes().len() as isize,
                Some(cb),
                ptr::null_mut(),
                &mut f,
            ) == sys::Status::napi_ok
                && sys::napi_set_named_property(raw, obj, name.as_ptr(), f) == sys::Status::napi_ok
        };
        if !ok {
            return Err(napi::Error::from_reason(
                "creating a hot-path function failed",
            ));
        }
    }
    Ok(Object::from_raw(raw, obj))
}
