//! traceparent / tracestate: any pair of header values is validated
//! without panicking; a context that `sanitize` accepts survives HTTP
//! headers, MCP `_meta` and `std:` metadata unchanged, and re-validates.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use orpc_agent_core::act::MetaMap;
use orpc_agent_core::act::trace::{
    from_http_headers, from_mcp_meta, from_metadata, sanitize, to_http_headers, to_mcp_meta,
    to_metadata, validate, validate_traceparent, validate_tracestate,
};

#[derive(Arbitrary, Debug)]
struct Case<'a> {
    traceparent: &'a str,
    tracestate: Option<&'a str>,
    extra_tracestate: Option<&'a str>,
}

fuzz_target!(|case: Case<'_>| {
    let _ = validate_traceparent(case.traceparent);
    if let Some(ts) = case.tracestate {
        let _ = validate_tracestate(ts);
    }
    let mut headers = vec![("traceparent", case.traceparent)];
    headers.extend(case.tracestate.map(|t| ("TraceState", t)));
    headers.extend(case.extra_tracestate.map(|t| ("tracestate", t)));
    let _ = from_http_headers(headers.iter().copied());
    let Ok(Some(tc)) = sanitize(Some(case.traceparent), case.tracestate) else {
        return;
    };
    validate(&tc).expect("a sanitized context validates");
    let sent = to_http_headers(&tc);
    let back = from_http_headers(sent.iter().map(|(k, v)| (*k, v.as_str())))
        .expect("own headers read back");
    assert_eq!(back.as_ref(), Some(&tc), "HTTP header round trip");
    let mut meta = serde_json::Map::new();
    to_mcp_meta(&tc, &mut meta);
    assert_eq!(
        from_mcp_meta(&meta).expect("own _meta").as_ref(),
        Some(&tc),
        "MCP _meta round trip"
    );
    let mut map = MetaMap::new();
    to_metadata(&tc, &mut map);
    let bytes = map.encode().expect("encodes");
    let decoded = MetaMap::decode(&bytes).expect("decodes");
    assert_eq!(
        from_metadata(&decoded).expect("own metadata").as_ref(),
        Some(&tc),
        "std: round trip"
    );
});
