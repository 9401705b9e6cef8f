//! Portable descriptors (DESIGN §7): everything a remote process needs to
//! present a capability as a tool without the registry's code. JSON here;
//! the CBOR form with `std:` keys lives in `act::tool_meta`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::meta::mcp_annotations;
use crate::meta::{Discovery, Risk, SideEffect};
use crate::registry::{Capability, CapabilityRegistry};
use crate::vocab::Surface;

/// Tool names per adapter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolNames {
    pub ai_sdk: String,
    pub mcp: String,
}

/// The approval gate as a descriptor states it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DescriptorApproval {
    pub required: bool,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub expires_in_ms: u64,
}

/// One capability, portable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub id: String,
    pub tool_names: ToolNames,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    pub side_effect: SideEffect,
    pub risk: Risk,
    #[serde(default)]
    pub tags: Vec<String>,
    pub idempotent: bool,
    pub timeout_ms: u64,
    pub approval: DescriptorApproval,
    pub discovery: Discovery,
    /// MCP tool annotations: derived hints, then `adapters.mcp.annotations`.
    #[serde(default)]
    pub annotations: Map<String, Value>,
}

impl Descriptor {
    /// The descriptor of a registered capability.
    pub fn of(c: &Capability) -> Descriptor {
        let m = &c.meta;
        let approval = m.approval.clone().unwrap_or_default();
        Descriptor {
            id: c.id.clone(),
            tool_names: ToolNames {
                ai_sdk: c.ai_sdk_tool_name.clone(),
                mcp: c.mcp_tool_name.clone(),
            },
            description: m.description.clone(),
            // Every tool needs an input schema: a capability that declares
            // none takes any object (one default for every adapter and
            // binding, not one per adapter). So does one whose schema is
            // the empty schema, which constrains nothing (Python's `Any`
            // gives it): tool arguments are always an object, and MCP
            // clients refuse a tool whose input schema has no `type`.
            input_schema: Some(
                c.input_schema
                    .clone()
                    .filter(|s| s.as_object().is_none_or(|o| !o.is_empty()))
                    .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
            ),
            output_schema: c.output_schema.clone(),
            side_effect: m.side_effect,
            risk: m.risk,
            tags: m.tags.clone(),
            idempotent: m.idempotent.unwrap_or(false),
            timeout_ms: c.timeout_ms,
            approval: DescriptorApproval {
                required: approval.required,
                kind: approval.kind,
                expires_in_ms: c.approval_expires_in_ms,
            },
            discovery: m.discovery,
            annotations: mcp_annotations(m),
        }
    }

    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Parses a descriptor received from a gateway.
    pub fn from_json(text: &str) -> Result<Descriptor, serde_json::Error> {
        serde_json::from_str(text)
    }
}

impl CapabilityRegistry {
    /// Portable descriptors of the capabilities exposed on `surface`
    /// (here, not in `registry`: a descriptor is a view of the registry,
    /// which does not depend on its views).
    pub fn descriptors(&self, surface: Surface) -> Vec<Descriptor> {
        self.capabilities()
            .iter()
            .filter(|c| c.exposed_on(surface))
            .map(Descriptor::of)
            .collect()
    }
}
