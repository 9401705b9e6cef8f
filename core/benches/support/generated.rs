//! The generated declarations the registry benchmarks build: shared by
//! `core/benches/registry.rs` and `bench/memory` so both measure the same mix.

use orpc_agent_core::CapabilityDecl;
use serde_json::json;

/// A realistic mix: reads with retries, writes behind approval, externals
/// behind a declarative policy, some with overrides and redaction.
pub fn generated(n: usize) -> Vec<CapabilityDecl> {
    (0..n)
        .map(|i| {
            let meta = match i % 4 {
                0 => json!({"description": "Search orders by customer email or order number.",
                    "expose": {"aiSdk": true, "mcp": true, "direct": true},
                    "sideEffect": "read", "risk": "low", "tags": ["orders"],
                    "retry": {"maxAttempts": 2, "backoffMs": 100}}),
                1 => json!({"description": "Cancel an order that has not shipped.",
                    "expose": {"aiSdk": true}, "sideEffect": "destructive", "risk": "medium",
                    "approval": {"required": true, "type": "human-confirmation"}}),
                2 => json!({"description": "Refund an order.", "expose": {"mcp": true},
                    "sideEffect": "external", "risk": "high", "tags": ["billing"],
                    "policies": [{"name": "big", "when": {"input": ["/amount > 1000"]},
                                  "decision": "requireApproval", "approvalType": "manager"}],
                    "adapters": {"mcp": {"toolName": format!("refund.v{i}")}}}),
                _ => json!({"description": "Read a customer profile.", "expose": {"aiSdk": true},
                    "sideEffect": "read", "risk": "high", "redact": {"output": true},
                    "discovery": "contextual"}),
            };
            CapabilityDecl::new(format!("module{}.capability{i}", i % 100), meta)
        })
        .collect()
}
