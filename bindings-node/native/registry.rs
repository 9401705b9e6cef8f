//! Registries: built from the façade's JSON declarations, held in a slab,
//! addressed by an integer handle.

use std::cell::RefCell;

use napi_derive::napi;
use orpc_agent_core::ffi::{
    AuditRoute, BindingRegistry, BuildError, StoreConfig, registry_error_json,
};
use orpc_agent_core::{CapabilityError, Invocation, Surface};
use serde_json::{Value, json};

use crate::errors::{internal, invalid, parse_json, throw, throw_json};
use crate::slab::Slab;

/// One registry, its store, and its in-flight invocations.
pub struct Registry {
    pub host: BindingRegistry,
    pub invocations: Slab<Invocation>,
    /// Audit records are read (a subscriber, telemetry or the PostgreSQL
    /// sink): the machine emits `Audit` steps.
    pub audit: bool,
    /// Audit records carry the (redacted) output.
    pub audit_payloads: bool,
    /// Spans carry the (redacted) output (`telemetry: {payloads: true}`).
    pub span_payloads: bool,
    /// Where the records go: the PostgreSQL sink straight from here
    /// (`registryAttachAuditSink`), and whether the façade sees them.
    pub route: AuditRoute,
}

impl Registry {
    pub fn new(host: BindingRegistry, audit: bool, audit_payloads: bool) -> Registry {
        Registry {
            host,
            invocations: Slab::default(),
            audit,
            audit_payloads,
            span_payloads: false,
            route: AuditRoute {
                sink: None,
                to_host: audit,
            },
        }
    }
}

thread_local! {
    static REGISTRIES: RefCell<Slab<Registry>> = RefCell::new(Slab::default());
}

fn gone() -> CapabilityError {
    internal("this registry was closed")
}

/// Runs `f` with registry `reg`, or fails with INTERNAL if it is gone.
pub fn with_registry<T>(
    reg: u32,
    f: impl FnOnce(&mut Registry) -> Result<T, CapabilityError>,
) -> Result<T, CapabilityError> {
    REGISTRIES.with(|cell| {
        let mut slab = cell.borrow_mut();
        match slab.get_mut(reg) {
            Some(r) => f(r),
            None => Err(gone()),
        }
    })
}

/// Spans of this registry's calls carry the redacted output
/// (`telemetry: {payloads: true}`); audit records are not changed by it.
#[napi(catch_unwind)]
pub fn registry_span_payloads(reg: u32, on: bool) -> napi::Result<()> {
    registry_call(reg, |r| {
        r.span_payloads = on;
        Ok(())
    })
}

/// Like [`with_registry`] for calls that throw to JavaScript.
pub fn registry_call<T>(
    reg: u32,
    f: impl FnOnce(&mut Registry) -> Result<T, CapabilityError>,
) -> napi::Result<T> {
    with_registry(reg, f).map_err(|e| throw(&e))
}

/// Builds a registry from `declarations` (a JSON array of
/// `{id, meta, inputSchema?, outputSchema?, validateInput?, validateOutput?}`),
/// `options` (`{defaults, policies, approverMustDiffer}`), the approval
/// store (`"memory"` or `{"sqlite": path}`) and the audit flags. Returns the
/// registry handle. Throws `{"problems": [...]}` (every problem at once,
/// SI-4) or `{"error": CapabilityError}`.
#[napi(catch_unwind)]
pub fn registry_build(
    declarations: String,
    options: String,
    store: String,
    audit: bool,
    audit_payloads: bool,
) -> napi::Result<u32> {
    let setup = |e: CapabilityError| throw(&e);
    let decls = parse_json(&declarations, "declarations").map_err(setup)?;
    let options = parse_json(&options, "options").map_err(setup)?;
    let store = parse_json(&store, "approvalStore").map_err(setup)?;
    let config = StoreConfig::from_json(&store).map_err(setup)?;
    if !config.is_sync() {
        return Err(setup(invalid(
            "this approval store needs the asynchronous registry factory",
        )));
    }
    let opened = config.open_sync().map_err(setup)?;
    let host = match BindingRegistry::build(&decls, &options, opened) {
        Ok(h) => h,
        Err(BuildError::Invalid(e)) => return Err(throw_json(&registry_error_json(&e))),
        Err(BuildError::Setup(e)) => return Err(setup(e)),
    };
    Ok(REGISTRIES.with(|cell| {
        cell.borrow_mut()
            .insert(Registry::new(host, audit, audit_payloads))
    }))
}

/// Adds a built registry to this thread's slab and returns its handle
/// (registries whose store was opened asynchronously, `postgres.rs`).
pub fn insert_registry(r: Registry) -> u32 {
    REGISTRIES.with(|cell| cell.borrow_mut().insert(r))
}

/// Drops a registry (and any invocation still in flight in it).
#[napi(catch_unwind)]
pub fn registry_close(reg: u32) {
    REGISTRIES.with(|cell| cell.borrow_mut().remove(reg));
}

/// The capabilities in index order, for the façade's name → index cache
/// and hook tables: `[{index, id, toolNames: {aiSdk, mcp}}]`.
#[napi(catch_unwind)]
pub fn registry_capabilities(reg: u32) -> napi::Result<String> {
    registry_call(reg, |r| {
        let list: Vec<Value> = r
            .host
            .registry()
            .capabilities()
            .iter()
            .map(|c| {
                json!({
                    "index": c.index,
                    "id": c.id,
                    "toolNames": {
                        "aiSdk": c.tool_name(orpc_agent_core::Adapter::AiSdk),
                        "mcp": c.tool_name(orpc_agent_core::Adapter::Mcp),
                    },
                })
            })
            .collect();
        Ok(Value::Array(list).to_string())
    })
}

/// The inspect() report as JSON.
#[napi(catch_unwind)]
pub fn registry_inspect(reg: u32) -> napi::Result<String> {
    registry_call(reg, |r| {
        Ok(r.host.registry().inspect().to_json().to_string())
    })
}

/// Portable descriptors of the capabilities exposed on `surface`, as JSON.
#[napi(catch_unwind)]
pub fn registry_descriptors(reg: u32, surface: String) -> napi::Result<String> {
    registry_call(reg, |r| {
        let s = Surface::parse(&surface)
            .ok_or_else(|| invalid(format!("unknown surface `{surface}`")))?;
        let list: Vec<Value> = r
            .host
            .registry()
            .descriptors(s)
            .iter()
            .map(orpc_agent_core::Descriptor::to_json)
            .collect();
        Ok(Value::Array(list).to_string())
    })
}

/// Invocations still in flight (tests check none leak).
#[napi(catch_unwind)]
pub fn registry_in_flight(reg: u32) -> napi::Result<u32> {
    registry_call(reg, |r| {
        Ok(u32::try_from(r.invocations.len()).unwrap_or(u32::MAX))
    })
}
