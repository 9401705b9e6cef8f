//! `orpc-agent policy eval`: one request against a Cedar policy set, with
//! the core's own evaluation (the decision every binding makes).
//!
//! The request file is JSON:
//!
//! ```json
//! {"capability": "orders.refund",
//!  "frame": {"surface": "mcp", "actor": {"id": "ann", "roles": ["manager"]}},
//!  "input": {"order": "o-1", "cents": 250000},
//!  "now": "2026-12-07T09:30:00Z"}
//! ```
//!
//! `now` (Cedar's `context.now`) is the current time when left out.
//!
//! `capability` names a capability of the `--declarations` file (its side
//! effect, risk, tags, discovery and input schema are the declared ones),
//! or is an object `{"id", "sideEffect", "risk", "tags"?, "discovery"?,
//! "inputSchema"?}`. The policy is type-checked first, as a registry would
//! check it for that capability: problems exit 1 without evaluating.

use orpc_agent_core::policy::{CedarCall, CedarDecisionKind, CedarRule};
use orpc_agent_core::{CapabilityRegistry, Discovery, Frame, Risk, SideEffect};
use serde_json::{Value, json};

use crate::declarations_cmd::{load, report_for};

const USAGE: &str = "usage: orpc-agent policy eval POLICY.cedar REQUEST.json [--declarations FILE] [--actor-attributes SCHEMA.json] [--json]";

pub fn run(args: &[String]) -> u8 {
    match args.split_first() {
        Some((sub, rest)) if sub == "eval" => match Eval::parse(rest) {
            Ok(eval) => eval.run(),
            Err(message) => {
                eprintln!("orpc-agent policy eval: {message}\n{USAGE}");
                2
            }
        },
        _ => {
            eprintln!("{USAGE}");
            2
        }
    }
}

struct Eval {
    policy: String,
    request: String,
    declarations: Option<String>,
    actor_attributes: Option<String>,
    json: bool,
}

/// The capability's facts a Cedar policy sees, and its input schema.
struct Facts {
    id: String,
    side_effect: SideEffect,
    risk: Risk,
    discovery: Discovery,
    tags: Vec<String>,
    input_schema: Option<Value>,
}

impl Eval {
    fn parse(args: &[String]) -> Result<Eval, String> {
        let mut files = Vec::new();
        let (mut declarations, mut actor_attributes, mut json) = (None, None, false);
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--json" => json = true,
                "--declarations" | "--actor-attributes" => {
                    let value = it.next().ok_or(format!("`{a}` needs a file"))?.clone();
                    if a == "--declarations" {
                        declarations = Some(value);
                    } else {
                        actor_attributes = Some(value);
                    }
                }
                flag if flag.starts_with('-') => return Err(format!("unknown option `{flag}`")),
                file => files.push(file.to_owned()),
            }
        }
        let [policy, request] = <[String; 2]>::try_from(files)
            .map_err(|_| "expected a policy file and a request file".to_owned())?;
        Ok(Eval {
            policy,
            request,
            declarations,
            actor_attributes,
            json,
        })
    }

    fn run(&self) -> u8 {
        match self.evaluate() {
            Ok(code) => code,
            Err((code, message)) => {
                if !message.is_empty() {
                    eprintln!("{message}");
                }
                code
            }
        }
    }

    fn evaluate(&self) -> Result<u8, (u8, String)> {
        let text = read(&self.policy)?;
        let mut rule = CedarRule::parse(&text).map_err(|problems| {
            let lines: Vec<String> = problems
                .iter()
                .map(|p| format!("{}: {}", self.policy, p.describe()))
                .collect();
            (1, lines.join("\n"))
        })?;
        if let Some(path) = &self.actor_attributes {
            let schema = read_json(path)?;
            rule = rule
                .with_actor_attributes(&schema)
                .map_err(|m| (1, format!("{path}: {m}")))?;
        }
        let request = read_json(&self.request)?;
        let bad = |m: String| (2, format!("{}: {m}", self.request));
        let facts = self.facts(&request["capability"])?;
        let frame: Frame =
            serde_json::from_value(request.get("frame").cloned().unwrap_or(json!({})))
                .map_err(|e| bad(format!("`frame`: {e}")))?;
        let input = request.get("input").cloned().unwrap_or(json!({}));
        let now_ms = match request.get("now") {
            None => orpc_agent_core::clock::unix_now_ms(),
            Some(now) => now
                .as_str()
                .and_then(orpc_agent_core::clock::parse_utc_rfc3339)
                .ok_or_else(|| {
                    bad("`now` must be a UTC time such as \"2026-12-07T09:30:00Z\"".into())
                })?,
        };

        let input_type =
            orpc_agent_core::policy::cedar_input_read_type(facts.input_schema.as_ref());
        let problems = rule.check(input_type.as_ref());
        if !problems.is_empty() {
            for p in &problems {
                eprintln!(
                    "{}: for capability `{}`: {}",
                    self.policy,
                    facts.id,
                    p.describe()
                );
            }
            return Ok(1);
        }
        let decision = rule.evaluate(&CedarCall {
            capability_id: &facts.id,
            side_effect: facts.side_effect,
            risk: facts.risk,
            discovery: facts.discovery,
            tags: &facts.tags,
            frame: &frame,
            input: &input,
            now_ms,
            input_type: input_type.as_ref(),
        });
        let (name, approval_type, reason) = match &decision.kind {
            CedarDecisionKind::Allow => ("allow", None, None),
            CedarDecisionKind::Deny { reason } => ("deny", None, reason.clone()),
            CedarDecisionKind::RequireApproval {
                approval_type,
                reason,
            } => ("requireApproval", approval_type.clone(), reason.clone()),
            CedarDecisionKind::Abstain => ("abstain", None, None),
            CedarDecisionKind::Failed => ("failed", None, None),
        };
        if self.json {
            let mut out = json!({"decision": name, "policies": decision.policies});
            if let Some(t) = approval_type {
                out["approvalType"] = json!(t);
            }
            if let Some(r) = reason {
                out["reason"] = json!(r);
            }
            outln!("{out}");
        } else {
            match approval_type {
                Some(t) => outln!("decision: {name} ({t})"),
                None => outln!("decision: {name}"),
            }
            if let Some(r) = reason {
                outln!("reason: {r}");
            }
            if decision.policies.is_empty() {
                let why = match decision.kind {
                    CedarDecisionKind::Failed => {
                        "(none: a policy could not be evaluated; the call is denied)"
                    }
                    _ => "(none)",
                };
                outln!("determining policies: {why}");
            } else {
                outln!("determining policies: {}", decision.policies.join(", "));
            }
        }
        Ok(0)
    }

    /// The capability's facts; `Err` with the exit code (2: the request
    /// or a file is unusable; 1: the declarations have problems) and why.
    fn facts(&self, capability: &Value) -> Result<Facts, (u8, String)> {
        let Some(id) = capability.as_str() else {
            return described(capability).map_err(|m| (2, format!("{}: {m}", self.request)));
        };
        let request = &self.request;
        let Some(path) = &self.declarations else {
            return Err((
                2,
                format!(
                    "{request}: `capability` names `{id}`: give --declarations FILE, or describe it as an object"
                ),
            ));
        };
        // `load` has said why it could not read the file.
        let (decls, files) = load(path).map_err(|code| (code, String::new()))?;
        let built = decls
            .registry_options()
            .and_then(|options| CapabilityRegistry::build(decls.capabilities.clone(), options));
        let Ok(registry) = built else {
            // The problems as `check` lists them (a policy file named).
            let report = report_for((decls, files));
            let lines: Vec<String> = report
                .problems
                .iter()
                .map(|p| format!("{path}: {p}"))
                .collect();
            return Err((1, lines.join("\n")));
        };
        let cap = registry.resolve(id).ok_or_else(|| {
            (
                2,
                format!("{request}: {path} declares no capability `{id}`"),
            )
        })?;
        Ok(Facts {
            id: cap.id.clone(),
            side_effect: cap.meta.side_effect,
            risk: cap.meta.risk,
            discovery: cap.meta.discovery,
            tags: cap.meta.tags.clone(),
            input_schema: cap.input_schema.clone(),
        })
    }
}

/// A capability described in the request itself.
fn described(capability: &Value) -> Result<Facts, String> {
    let field = |key: &str| capability.get(key).and_then(Value::as_str);
    let parse =
        |key: &str| field(key).ok_or_else(|| format!("`capability.{key}` must be a string"));
    Ok(Facts {
        id: parse("id")?.to_owned(),
        side_effect: SideEffect::parse(parse("sideEffect")?).ok_or_else(|| {
            format!(
                "`capability.sideEffect`: expected one of {}",
                SideEffect::expected()
            )
        })?,
        risk: Risk::parse(parse("risk")?)
            .ok_or_else(|| format!("`capability.risk`: expected one of {}", Risk::expected()))?,
        discovery: match field("discovery") {
            None => Discovery::Discoverable,
            Some(d) => Discovery::parse(d).ok_or_else(|| {
                format!(
                    "`capability.discovery`: expected one of {}",
                    Discovery::expected()
                )
            })?,
        },
        tags: serde_json::from_value(capability.get("tags").cloned().unwrap_or(json!([])))
            .map_err(|e| format!("`capability.tags`: {e}"))?,
        input_schema: capability.get("inputSchema").cloned(),
    })
}

fn read(path: &str) -> Result<String, (u8, String)> {
    std::fs::read_to_string(path).map_err(|e| (2, format!("orpc-agent: cannot read {path}: {e}")))
}

fn read_json(path: &str) -> Result<Value, (u8, String)> {
    serde_json::from_str(&read(path)?).map_err(|e| {
        // serde_json ends its message with the position, given here first.
        let message = e.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m);
        (
            2,
            format!("{path}:{}:{}: error: {message}", e.line(), e.column()),
        )
    })
}
