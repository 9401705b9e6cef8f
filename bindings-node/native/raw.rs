//! Raw Node-API functions for the three crossings every invocation makes
//! (start, input valid, handler ok: the last two are `answer`) and the two
//! an audit subscriber adds (audit row, audited). DESIGN §4 measured napi-derive's
//! per-call glue at 2–4× a raw Node-API function with integer arguments;
//! on the hot path that difference is most of the binding's overhead.
//!
//! This module and `raw_values` (the argument and result helpers of its
//! callbacks) are the only `unsafe` in the crate. Each callback reads a fixed
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

use crate::errors::{internal, invalid};
use crate::invoke::coded_answer_in;
use crate::raw_values::{args, finish, handles, int, number, string};
use crate::start::{start_actor_in, start_in};
use crate::step::audit_row_in;
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
