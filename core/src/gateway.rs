//! The rules of the agent gateway: a registry's capabilities served to
//! remote agents as an oRPC router (Node's `createAgentGateway`) and
//! presented by its client (`presentBound`). Written once, so the gateway
//! and its client only convert transport to frames and outcomes to
//! responses:
//!
//! - which surfaces a gateway may serve ([`surface_refusal`]): the core's
//!   surface names, never `direct` (a model action must not bypass a
//!   surface's exposure and approvals);
//! - what a caller who may not see or decide a request is told
//!   ([`NOT_VISIBLE_MESSAGE`], [`MAY_NOT_DECIDE_MESSAGE`]);
//! - how much of the store one list reads for the requests an
//!   application's `canDecide` shows ([`LIST_SCAN_PAGES`]);
//! - what the model reads of a capability presented with fixed arguments
//!   ([`bound_description`]).

use crate::meta::Surface;

/// Whether a gateway may serve `surface`: every surface but `direct`.
pub fn may_serve(surface: Surface) -> bool {
    surface != Surface::Direct
}

/// Why a gateway cannot be made for the surface named `name` (`None`: not
/// a text), or `None` when it can: only the core's surface names, and not
/// `direct`.
pub fn surface_refusal(name: Option<&str>) -> Option<String> {
    if name.and_then(Surface::parse).is_some_and(may_serve) {
        return None;
    }
    let served: Vec<&str> = Surface::ALL
        .iter()
        .filter(|s| may_serve(**s))
        .map(|s| s.as_str())
        .collect();
    let got = name.map_or_else(
        || "a value that is not a surface name".to_owned(),
        |n| format!("{n:?}"),
    );
    Some(format!(
        "An agent gateway serves one of the surfaces {}, never direct (a model's actions go \
         through a governed surface); got {got}.",
        served.join(", ")
    ))
}

/// APPROVAL_NOT_FOUND's message for a request the caller neither made (on
/// this surface) nor may decide: the same as for a request that does not
/// exist, so nothing about other callers' requests leaks.
pub const NOT_VISIBLE_MESSAGE: &str = "No approval request with this id is visible to you.";

/// The refusal of a decision by a caller the application's `canDecide`
/// did not allow (a missing hook, a throw, or anything but `true`).
pub const MAY_NOT_DECIDE_MESSAGE: &str = "You may not decide this approval request.";

/// Store pages one list reads at most for the requests an application's
/// `canDecide` lets the caller see (the caller's own come from an exact
/// store query and need no scan): a list's work stays bounded whatever the
/// store holds; decidable requests past that many pages of others are not
/// listed.
pub const LIST_SCAN_PAGES: u32 = 10;

/// The description the model reads of a capability presented with some
/// arguments fixed (`fixed_json`, their JSON text), when the application
/// gives none of its own.
pub fn bound_description(description: &str, fixed_json: &str) -> String {
    format!("{description} (Bound to {fixed_json}; those arguments are fixed.)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gateway_serves_every_surface_but_direct_and_nothing_else() {
        for s in Surface::ALL {
            assert_eq!(
                surface_refusal(Some(s.as_str())).is_none(),
                *s != Surface::Direct,
                "{s:?}"
            );
        }
        for bogus in [
            Some("constructor"),
            Some("__proto__"),
            Some(""),
            Some("MCP"),
            None,
        ] {
            let why = surface_refusal(bogus).expect("refused");
            assert!(
                why.contains("aiSdk, mcp") && !why.contains("direct,"),
                "{why}"
            );
        }
        assert!(
            surface_refusal(Some("direct"))
                .unwrap()
                .ends_with("got \"direct\".")
        );
    }

    #[test]
    fn a_bound_description_names_the_fixed_arguments() {
        assert_eq!(
            bound_description("Refunds an order.", r#"{"orderId":"o-1"}"#),
            r#"Refunds an order. (Bound to {"orderId":"o-1"}; those arguments are fixed.)"#
        );
    }
}
