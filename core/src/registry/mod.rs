//! `CapabilityRegistry`: every capability validated at build (SI-4), ids and
//! tool names resolved to small integers once, defaults applied.

mod cedar_check;
mod inspect;
pub mod names;

pub use inspect::{CapabilityReport, InspectReport, inspect_declarations};
pub use names::{Adapter, derive_tool_name};

use std::collections::HashMap;

use serde_json::Value;

use crate::meta::parse::read_agent_meta;
use crate::meta::problem::{ProblemCode, Problems};
use crate::meta::read::ObjReader;
use crate::meta::{AgentMeta, Defaults, Problem, RegistryError, Surface};
use crate::policy::{PolicySpec, parse_policy_list};

/// One capability as a host declares it: its id, its `AgentMeta` as JSON
/// (host hooks as declared-present markers), and the JSON Schemas of its
/// input and output when the host has them (for descriptors).
#[derive(Clone, Debug, PartialEq)]
pub struct CapabilityDecl {
    pub id: String,
    pub meta: Value,
    pub input_schema: Option<Value>,
    pub output_schema: Option<Value>,
    /// The host validates input at stage 4 (it has a schema or validator).
    /// When false the pipeline skips the step and the raw input is used.
    pub validate_input: bool,
    /// The host validates output at stage 12.
    pub validate_output: bool,
    /// The host hooks the binding holds for this capability, when it says:
    /// a hook the metadata declares (`redact.output: true`, `retry.retryOn:
    /// true`, a `{"host": true}` policy) that is not among them is a
    /// MISSING_HOOK problem at build, with the others (SI-4), instead of a
    /// failure at the first call. `None`: the host does not say (a
    /// declaration file read on its own).
    pub host_hooks: Option<HostHooks>,
    /// The JSON Schema of the input as policies read it: the value the
    /// host's validation made, as the host exports it to the core. It can
    /// differ from `input_schema` (what a caller sends): pydantic aliases,
    /// zod transforms. Cedar policies are type-checked against it and read
    /// the input through it.
    pub validated_input_schema: ValidatedInputSchema,
}

/// What the input policies read looks like (see
/// [`CapabilityDecl::validated_input_schema`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ValidatedInputSchema {
    /// The validated input is described by `input_schema`.
    #[default]
    SameAsInput,
    /// The host cannot describe it: policies read it untyped.
    Unknown,
    /// It is described by this JSON Schema.
    Schema(Value),
}

/// The host hooks a binding holds for one capability (see
/// [`CapabilityDecl::host_hooks`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostHooks {
    pub redact_output: bool,
    pub redact_approval_input: bool,
    pub retry_on: bool,
    /// Positions in `meta.policies` of the host policies it holds.
    pub policies: Vec<u32>,
}

impl HostHooks {
    /// Every hook `meta` declares that is not held: `(path, what)`.
    fn missing(&self, meta: &AgentMeta) -> Vec<(String, &'static str)> {
        let mut out = Vec::new();
        if meta.redact.output && !self.redact_output {
            out.push(("redact.output".to_owned(), "output redactor"));
        }
        if meta.redact.approval_input && !self.redact_approval_input {
            out.push(("redact.approvalInput".to_owned(), "approval-input redactor"));
        }
        if meta.retry.as_ref().is_some_and(|r| r.retry_on) && !self.retry_on {
            out.push(("retry.retryOn".to_owned(), "retryOn predicate"));
        }
        for (i, policy) in meta.policies.iter().enumerate() {
            let held = u32::try_from(i).is_ok_and(|i| self.policies.contains(&i));
            if matches!(policy.rule, crate::policy::PolicyRule::Host) && !held {
                out.push((format!("policies[{i}]"), "host policy function"));
            }
        }
        out
    }
}

impl CapabilityDecl {
    /// A declaration whose host validates both input and output.
    pub fn new(id: impl Into<String>, meta: Value) -> Self {
        CapabilityDecl {
            id: id.into(),
            meta,
            input_schema: None,
            output_schema: None,
            validate_input: true,
            validate_output: true,
            host_hooks: None,
            validated_input_schema: ValidatedInputSchema::SameAsInput,
        }
    }
}

/// Runtime-level options: `{defaults, policies, approverMustDiffer}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RegistryOptions {
    pub defaults: Defaults,
    /// Runtime-level policies, evaluated before capability policies (SI-6).
    pub policies: Vec<PolicySpec>,
    /// An approver may not approve their own request.
    pub approver_must_differ: bool,
}

impl RegistryOptions {
    /// Reads options from JSON, recording problems with capability `None`.
    pub(crate) fn read(v: &Value, list: &mut Vec<Problem>) -> RegistryOptions {
        let mut p = Problems {
            capability: None,
            list,
        };
        let mut out = RegistryOptions::default();
        let Some(mut r) = ObjReader::new(v, "", &mut p) else {
            return out;
        };
        if let Some(d) = r.get("defaults") {
            out.defaults = crate::meta::parse::read_defaults(d, &mut p);
        }
        if let Some(pol) = r.get("policies") {
            out.policies = parse_policy_list(pol, "policies", &mut p);
        }
        out.approver_must_differ = r.bool_opt("approverMustDiffer", &mut p).unwrap_or(false);
        // `hostPolicies`: positions in `policies` of the host policies the
        // binding holds; a `{"host": true}` marker not among them is a
        // MISSING_HOOK problem (see [`CapabilityDecl::host_hooks`]).
        if let Some(held) = r.get("hostPolicies") {
            match held.as_array().and_then(|a| {
                a.iter()
                    .map(|i| i.as_u64().and_then(|i| u32::try_from(i).ok()))
                    .collect::<Option<Vec<u32>>>()
            }) {
                Some(held) => {
                    for (i, policy) in out.policies.iter().enumerate() {
                        let is_held = u32::try_from(i).is_ok_and(|i| held.contains(&i));
                        if matches!(policy.rule, crate::policy::PolicyRule::Host) && !is_held {
                            p.push(
                                format!("policies[{i}]"),
                                ProblemCode::MissingHook,
                                format!("`policies[{i}]` is declared, but no host policy function is given for it"),
                            );
                        }
                    }
                }
                None => p.push(
                    "hostPolicies",
                    ProblemCode::WrongType,
                    "`hostPolicies` must be an array of policy positions",
                ),
            }
        }
        r.finish(&mut p);
        out
    }

    /// Parses options from JSON; `Err` lists every problem.
    pub fn from_json(v: &Value) -> Result<RegistryOptions, RegistryError> {
        let mut problems = Vec::new();
        let o = RegistryOptions::read(v, &mut problems);
        if problems.is_empty() {
            Ok(o)
        } else {
            Err(RegistryError { problems })
        }
    }
}

/// A validated capability with everything resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Capability {
    /// Position in the registry; bindings key host hooks by it.
    pub index: u32,
    pub id: String,
    pub meta: AgentMeta,
    pub input_schema: Option<Value>,
    pub output_schema: Option<Value>,
    /// See [`CapabilityDecl::validate_input`].
    pub validate_input: bool,
    /// See [`CapabilityDecl::validate_output`].
    pub validate_output: bool,
    pub ai_sdk_tool_name: String,
    pub mcp_tool_name: String,
    /// `timeoutMs`, else `defaults.timeoutMs`.
    pub timeout_ms: u64,
    /// `retry.backoffMs`, else `defaults.backoffMs`.
    pub backoff_ms: u64,
    /// `approval.expiresInMs`, else `defaults.approvalExpiresInMs`.
    pub approval_expires_in_ms: u64,
    /// SI-11 eligibility, decided once here.
    pub retry_eligible: bool,
    /// The declaration's `validated_input_schema` (see
    /// [`Capability::policy_input_schema`]).
    pub validated_input_schema: ValidatedInputSchema,
    /// The Cedar type a Cedar policy reads this capability's input through
    /// (`policy::cedar_input_read_type` of `policy_input_schema`); set at
    /// build when the registry has Cedar policies, `None` otherwise or when
    /// the input is untyped.
    pub cedar_input: Option<Value>,
}

impl Capability {
    /// The JSON Schema of the input as policies read it: the validated
    /// input's, else the input's; `None` when the host cannot describe it.
    pub fn policy_input_schema(&self) -> Option<&Value> {
        match &self.validated_input_schema {
            ValidatedInputSchema::SameAsInput => self.input_schema.as_ref(),
            ValidatedInputSchema::Unknown => None,
            ValidatedInputSchema::Schema(s) => Some(s),
        }
    }

    pub fn tool_name(&self, adapter: Adapter) -> &str {
        match adapter {
            Adapter::AiSdk => &self.ai_sdk_tool_name,
            Adapter::Mcp => &self.mcp_tool_name,
        }
    }

    /// Exposed on `surface`? Only a literal `true` exposes (SI-1).
    pub fn exposed_on(&self, surface: Surface) -> bool {
        self.meta.expose.contains(surface)
    }
}

/// The registry: immutable once built.
#[derive(Debug)]
pub struct CapabilityRegistry {
    capabilities: Vec<Capability>,
    /// Every id and tool name → capability index. Build guarantees one name
    /// names one capability across all namespaces, so lookup is one probe.
    names: NameIndex,
    options: RegistryOptions,
}

impl CapabilityRegistry {
    /// Validates every declaration and the options; on any problem returns
    /// ONE error listing all of them (SI-4).
    pub fn build(
        decls: Vec<CapabilityDecl>,
        options: RegistryOptions,
    ) -> Result<CapabilityRegistry, RegistryError> {
        let analysis = analyse(decls, options);
        if !analysis.problems.is_empty() {
            return Err(RegistryError {
                problems: analysis.problems,
            });
        }
        let names = NameIndex::new(&analysis.capabilities);
        Ok(CapabilityRegistry {
            capabilities: analysis.capabilities,
            names,
            options: analysis.options,
        })
    }

    /// Builds from JSON options (`{defaults, policies, approverMustDiffer}`).
    pub fn build_with_json_options(
        decls: Vec<CapabilityDecl>,
        options: &Value,
    ) -> Result<CapabilityRegistry, RegistryError> {
        let mut problems = Vec::new();
        let opts = RegistryOptions::read(options, &mut problems);
        match CapabilityRegistry::build(decls, opts) {
            Ok(r) if problems.is_empty() => Ok(r),
            Ok(_) => Err(RegistryError { problems }),
            Err(mut e) => {
                problems.append(&mut e.problems);
                Err(RegistryError { problems })
            }
        }
    }

    pub fn options(&self) -> &RegistryOptions {
        &self.options
    }

    pub fn capabilities(&self) -> &[Capability] {
        &self.capabilities
    }

    pub fn get(&self, index: u32) -> Option<&Capability> {
        self.capabilities.get(index as usize)
    }

    /// Stage 1: a capability id or any adapter tool name → capability.
    pub fn resolve(&self, id_or_tool_name: &str) -> Option<&Capability> {
        self.names
            .find(&self.capabilities, id_or_tool_name)
            .and_then(|i| self.get(i))
    }

    /// Stages 1–2 together: resolved *and* exposed on `surface`, else
    /// `None` — an unexposed capability is indistinguishable from a missing
    /// one (SI-8).
    pub fn resolve_exposed(&self, id_or_tool_name: &str, surface: Surface) -> Option<&Capability> {
        self.resolve(id_or_tool_name)
            .filter(|c| c.exposed_on(surface))
    }

    /// The inspect() report of this (valid) registry.
    pub fn inspect(&self) -> InspectReport {
        inspect::report(&self.capabilities, &self.options, Vec::new())
    }
}

/// Name → capability index without copying a name: entries are
/// `(capability index, which name)` and compare against the capability's
/// own strings.
#[derive(Debug, Default)]
struct NameIndex {
    table: hashbrown::HashTable<(u32, u8)>,
    hasher: hashbrown::DefaultHashBuilder,
}

fn name_at(caps: &[Capability], (index, which): (u32, u8)) -> &str {
    caps.get(index as usize).map_or("", |c| match which {
        0 => c.id.as_str(),
        1 => c.ai_sdk_tool_name.as_str(),
        _ => c.mcp_tool_name.as_str(),
    })
}

impl NameIndex {
    fn new(caps: &[Capability]) -> NameIndex {
        use std::hash::BuildHasher;
        let mut index = NameIndex {
            table: hashbrown::HashTable::with_capacity(caps.len() * 3),
            hasher: hashbrown::DefaultHashBuilder::default(),
        };
        for c in caps {
            for which in 0..3u8 {
                let name = name_at(caps, (c.index, which));
                let hash = index.hasher.hash_one(name);
                let hasher = &index.hasher;
                if let hashbrown::hash_table::Entry::Vacant(slot) = index.table.entry(
                    hash,
                    |e| name_at(caps, *e) == name,
                    |e| hasher.hash_one(name_at(caps, *e)),
                ) {
                    slot.insert((c.index, which));
                }
            }
        }
        index
    }

    fn find(&self, caps: &[Capability], name: &str) -> Option<u32> {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one(name);
        self.table
            .find(hash, |e| name_at(caps, *e) == name)
            .map(|e| e.0)
    }
}

/// The result of reading declarations: what parsed, and every problem.
pub(crate) struct Analysis {
    pub capabilities: Vec<Capability>,
    pub problems: Vec<Problem>,
    pub options: RegistryOptions,
}

pub(crate) fn analyse(decls: Vec<CapabilityDecl>, options: RegistryOptions) -> Analysis {
    let mut problems = Vec::new();

    // 1. Ids: well-formed and unique. `usable[i]` says whether decl i goes on.
    let mut usable = vec![false; decls.len()];
    let mut claimed: HashMap<&str, usize, hashbrown::DefaultHashBuilder> =
        HashMap::with_capacity_and_hasher(decls.len() * 3, Default::default());
    for (i, decl) in decls.iter().enumerate() {
        let mut p = Problems {
            capability: Some(&decl.id),
            list: &mut problems,
        };
        if let Some(reason) = names::id_reject_reason(&decl.id) {
            p.push("", ProblemCode::InvalidId, reason);
        } else if claimed.contains_key(decl.id.as_str()) {
            p.push(
                "",
                ProblemCode::DuplicateId,
                format!("capability `{}` is declared more than once", decl.id),
            );
        } else {
            claimed.insert(&decl.id, i);
            usable[i] = true;
        }
    }

    // 2. Metadata and tool names, every problem recorded. Names are kept
    //    even when the metadata has problems, so collisions are still found.
    let mut metas: Vec<Option<AgentMeta>> = Vec::with_capacity(decls.len());
    let mut tool_names: Vec<Option<[String; 2]>> = Vec::with_capacity(decls.len());
    for (i, decl) in decls.iter().enumerate() {
        let mut p = Problems {
            capability: Some(&decl.id),
            list: &mut problems,
        };
        if !usable[i] {
            // A bad or duplicate id does not hide the declaration's other
            // problems: its metadata is still checked, so one pass reports
            // them all. It has no tool names (they derive from the id).
            let _ = read_agent_meta(&decl.meta, &mut p);
            metas.push(None);
            tool_names.push(None);
            continue;
        }
        let meta = read_agent_meta(&decl.meta, &mut p);
        if let (Some(meta), Some(hooks)) = (&meta, &decl.host_hooks) {
            for (path, what) in hooks.missing(meta) {
                p.push(
                    &path,
                    ProblemCode::MissingHook,
                    format!("`{path}` is declared, but no {what} is given for it"),
                );
            }
        }
        metas.push(meta);
        let derived = derive_tool_name(&decl.id);
        let ai = tool_name_for(decl, &derived, Adapter::AiSdk, &mut p);
        let mcp = tool_name_for(decl, &derived, Adapter::Mcp, &mut p);
        tool_names.push(ai.zip(mcp).map(|(a, b)| [a, b]));
    }

    // 3. Collisions across ids and both adapters' names, in declaration order.
    let mut collided = vec![false; decls.len()];
    for (i, names) in tool_names.iter().enumerate() {
        let Some(names) = names else {
            continue;
        };
        for (adapter, name) in Adapter::ALL.into_iter().zip(names.iter()) {
            match claimed.get(name.as_str()) {
                Some(&owner) if owner != i => {
                    Problems {
                        capability: Some(&decls[i].id),
                        list: &mut problems,
                    }
                    .push(
                        tool_name_path(adapter),
                        ProblemCode::ToolNameCollision,
                        format!(
                            "{} tool name `{name}` is already taken by capability `{}`",
                            adapter.as_str(),
                            decls[owner].id
                        ),
                    );
                    collided[i] = true;
                }
                Some(_) => {}
                None => {
                    claimed.insert(name, i);
                }
            }
        }
    }
    drop(claimed);

    // 4. Resolve defaults and move everything into place.
    let d = options.defaults;
    let mut capabilities = Vec::with_capacity(decls.len());
    let mut spent = Vec::with_capacity(decls.len());
    let entries = decls.into_iter().zip(metas).zip(tool_names).zip(collided);
    for (((mut decl, meta), names), collided) in entries {
        spent.push(std::mem::take(&mut decl.meta));
        let (Some(meta), Some([ai, mcp]), false) = (meta, names, collided) else {
            continue;
        };
        let index = u32::try_from(capabilities.len()).unwrap_or(u32::MAX);
        capabilities.push(Capability {
            index,
            timeout_ms: meta.timeout_ms.unwrap_or(d.timeout_ms),
            backoff_ms: meta
                .retry
                .as_ref()
                .and_then(|r| r.backoff_ms)
                .unwrap_or(d.backoff_ms),
            approval_expires_in_ms: meta
                .approval
                .as_ref()
                .and_then(|a| a.expires_in_ms)
                .unwrap_or(d.approval_expires_in_ms),
            retry_eligible: meta.retry_eligible(),
            validated_input_schema: decl.validated_input_schema,
            id: decl.id,
            meta,
            input_schema: decl.input_schema,
            output_schema: decl.output_schema,
            validate_input: decl.validate_input,
            validate_output: decl.validate_output,
            ai_sdk_tool_name: ai,
            mcp_tool_name: mcp,
            cedar_input: None,
        });
    }
    drop_in_background(spent);

    // 5. Cedar policies type-checked against the capabilities they apply to.
    cedar_check::check(&mut capabilities, &options.policies, &mut problems);

    Analysis {
        capabilities,
        problems,
        options,
    }
}

/// Frees the declarations' JSON trees. Freeing ten thousand small trees
/// costs about as much as reading them, so large registries hand them to a
/// short-lived thread and the build returns without waiting; small ones
/// (the usual case) free inline.
fn drop_in_background(spent: Vec<Value>) {
    const BACKGROUND_FROM: usize = 1024;
    if spent.len() >= BACKGROUND_FROM {
        // If no thread can be spawned the closure (and the trees) drop here.
        let _ = std::thread::Builder::new()
            .name("orpc-agent-free".into())
            .spawn(move || drop(spent));
    }
}

const fn tool_name_path(adapter: Adapter) -> &'static str {
    match adapter {
        Adapter::AiSdk => "adapters.aiSdk.toolName",
        Adapter::Mcp => "adapters.mcp.toolName",
    }
}

/// Resolves one adapter's tool name (override or derived) and checks it
/// against the protocol, recording a problem if it would be rejected.
fn tool_name_for(
    decl: &CapabilityDecl,
    derived: &str,
    adapter: Adapter,
    p: &mut Problems,
) -> Option<String> {
    let override_name = decl
        .meta
        .get("adapters")
        .and_then(|a| a.get(adapter.as_str()))
        .and_then(|a| a.get("toolName"))
        .and_then(Value::as_str);
    let name = match override_name {
        Some(n) => n.to_owned(),
        None => derived.to_owned(),
    };
    if let Some(reason) = adapter.reject_reason(&name) {
        let message = if override_name.is_some() {
            reason
        } else {
            format!(
                "derived tool name: {reason}; set {}",
                tool_name_path(adapter)
            )
        };
        p.push(
            tool_name_path(adapter),
            ProblemCode::ToolNameInvalid,
            message,
        );
        return None;
    }
    Some(name)
}
