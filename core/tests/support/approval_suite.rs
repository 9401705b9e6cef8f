//! The behaviour suite every `ApprovalStore` must pass, written against
//! `&dyn ApprovalStore`, and its helpers. Included (`#[path]`) by
//! `approval_store.rs` (memory, SQLite) and `approval_postgres.rs`
//! (PostgreSQL), so all stores are held to the same assertions.
//!
//! Times are fixed (`T0`), so a store on a database clock runs this suite
//! with the caller's clock (`PgClock::Caller`).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use orpc_agent_core::approval::{
    ApprovalRequest, ApprovalStatus, ApprovalStore, ConsumeRefusal, Decision, EffectiveStatus,
    ListFilter, MAX_APPROVER_BYTES, MAX_DECISION_REASON_BYTES, MAX_PENDING_PER_ACTOR, StoreError,
};
use orpc_agent_core::error::{CapabilityError, ErrorCode};
use orpc_agent_core::frame::Actor;
use orpc_agent_core::meta::Surface;
use serde_json::json;
// ---------------------------------------------------------------- helpers

pub const T0: u64 = 1_700_000_000_000;
pub const HOUR: u64 = 3_600_000;

pub fn actor(id: Option<&str>) -> Actor {
    Actor {
        id: id.map(str::to_owned),
        roles: vec!["support".into()],
        attributes: serde_json::Map::from_iter([("tenant".to_owned(), json!("acme"))]),
    }
}

/// The real approval input hash (DESIGN §5), as the pipeline computes it.
pub fn hash_of(cap: &str, input: &serde_json::Value) -> String {
    orpc_agent_core::act::input_hash(cap, input).unwrap()
}

pub fn request_at(cap: &str, actor_id: Option<&str>, now: u64, expires_in: u64) -> ApprovalRequest {
    let input = json!({"orderId": 42, "amount": 1500.5, "note": "refund ✓"});
    let hash = hash_of(cap, &input);
    ApprovalRequest::new(
        cap,
        input,
        hash,
        Surface::Mcp,
        actor(actor_id),
        Some("manager".into()),
        Some("amount over 1000".into()),
        now,
        expires_in,
    )
}

pub fn request(actor_id: Option<&str>) -> ApprovalRequest {
    request_at("orders.refund", actor_id, T0, HOUR)
}

pub async fn created(store: &dyn ApprovalStore, req: ApprovalRequest) -> ApprovalRequest {
    store.create(&req).await.unwrap();
    req
}

pub async fn approved(store: &dyn ApprovalStore, actor_id: Option<&str>) -> ApprovalRequest {
    let req = created(store, request(actor_id)).await;
    store
        .decide(
            &req.id,
            Decision::Approve,
            Some("manager-1"),
            None,
            T0 + 1,
            false,
        )
        .await
        .unwrap()
}

pub fn code(e: &StoreError) -> ErrorCode {
    CapabilityError::from(e.clone()).code
}

// ------------------------------------------------------- the shared suite

pub async fn create_then_get_returns_the_same_request(store: &dyn ApprovalStore) {
    let req = created(store, request(Some("alice"))).await;
    let got = store.get(&req.id).await.unwrap().unwrap();
    assert_eq!(got, req);
    assert_eq!(got.status, ApprovalStatus::Pending);
    assert_eq!(got.actor, actor(Some("alice")));
    assert_eq!(got.surface, Surface::Mcp);
    assert_eq!(got.input["note"], "refund ✓");
    assert_eq!(got.expires_at_ms, T0 + HOUR);

    let anon = created(store, request(None)).await;
    assert_eq!(store.get(&anon.id).await.unwrap().unwrap(), anon);

    assert_eq!(
        store
            .get("apr_00000000000000000000000000000000")
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.get("not an id").await.unwrap(), None);
}

pub async fn create_refuses_malformed_and_duplicate_requests(store: &dyn ApprovalStore) {
    let req = created(store, request(Some("alice"))).await;
    let dup = store.create(&req).await.unwrap_err();
    assert_eq!(dup, StoreError::Duplicate(req.id.clone()));

    let mut bad_id = request(Some("alice"));
    bad_id.id = "apr_XYZ".into();
    assert!(matches!(
        store.create(&bad_id).await,
        Err(StoreError::Invalid(_))
    ));

    let mut bad_hash = request(Some("alice"));
    bad_hash.input_hash = "ABC".into();
    assert!(matches!(
        store.create(&bad_hash).await,
        Err(StoreError::Invalid(_))
    ));

    let mut pre_approved = request(Some("alice"));
    pre_approved.status = ApprovalStatus::Approved;
    assert!(matches!(
        store.create(&pre_approved).await,
        Err(StoreError::Invalid(_))
    ));
    assert_eq!(store.get(&pre_approved.id).await.unwrap(), None);

    // Nothing refused was stored.
    let all = store.list(&ListFilter::default()).await.unwrap();
    assert_eq!(all, vec![req]);
}

pub async fn list_filters_orders_and_pages(store: &dyn ApprovalStore) {
    // Eight requests; two share a creation time, so creation order (not the
    // random id) breaks the tie.
    let specs = [
        ("orders.refund", Some("alice"), T0 + 5),
        ("orders.refund", Some("bob"), T0 + 1),
        ("users.delete", Some("alice"), T0 + 3),
        ("orders.refund", None, T0 + 3),
        ("users.delete", Some("bob"), T0 + 2),
        ("orders.refund", Some("alice"), T0 + 4),
        ("users.delete", Some("carol"), T0 + 6),
        ("orders.refund", Some("alice"), T0 + 7),
    ];
    let mut all = Vec::new();
    for (cap, who, at) in specs {
        let mut r = request_at(cap, who, at, HOUR);
        if at == T0 + 7 {
            r.surface = Surface::AiSdk; // the one request made elsewhere
        }
        all.push(created(store, r).await);
    }
    // Decide two so the status filter has something to tell apart.
    let a = &all[0].id.clone();
    store
        .decide(a, Decision::Approve, Some("m"), None, T0 + 10, false)
        .await
        .unwrap();
    let r = &all[4].id.clone();
    store
        .decide(r, Decision::Reject, Some("m"), None, T0 + 10, false)
        .await
        .unwrap();
    for x in all.iter_mut() {
        *x = store.get(&x.id).await.unwrap().unwrap();
    }
    // A stable sort: requests of one millisecond stay in creation order.
    all.sort_by_key(|x| x.created_at_ms);
    let ids = |v: &[ApprovalRequest]| v.iter().map(|r| r.id.clone()).collect::<Vec<_>>();

    let everything = store.list(&ListFilter::default()).await.unwrap();
    assert_eq!(everything, all, "default filter: all, in creation order");

    let f = ListFilter {
        capability_id: Some("users.delete".into()),
        ..ListFilter::default()
    };
    let want: Vec<_> = all
        .iter()
        .filter(|r| r.capability_id == "users.delete")
        .cloned()
        .collect();
    assert_eq!(want.len(), 3);
    assert_eq!(store.list(&f).await.unwrap(), want);

    let f = ListFilter {
        actor_id: Some("alice".into()),
        ..ListFilter::default()
    };
    let want: Vec<_> = all
        .iter()
        .filter(|r| r.actor_id() == Some("alice"))
        .cloned()
        .collect();
    assert_eq!(want.len(), 4);
    assert_eq!(store.list(&f).await.unwrap(), want);

    // The surface with the actor: exactly the requester's own requests
    // (`Requester::made_on`), as the gateway's list pages through them.
    for surface in [Surface::Mcp, Surface::AiSdk, Surface::Direct] {
        let f = ListFilter {
            actor_id: Some("alice".into()),
            surface: Some(surface),
            ..ListFilter::default()
        };
        let want: Vec<_> = all
            .iter()
            .filter(|r| r.actor_id() == Some("alice") && r.surface == surface)
            .cloned()
            .collect();
        assert_eq!(store.list(&f).await.unwrap(), want, "{surface:?}");
    }
    let f = ListFilter {
        surface: Some(Surface::AiSdk),
        ..ListFilter::default()
    };
    assert_eq!(store.list(&f).await.unwrap().len(), 1);

    let f = ListFilter {
        status: Some(EffectiveStatus::Pending),
        now_ms: T0 + 20,
        ..ListFilter::default()
    };
    assert_eq!(store.list(&f).await.unwrap().len(), 6);
    let f = ListFilter {
        status: Some(EffectiveStatus::Rejected),
        ..ListFilter::default()
    };
    assert_eq!(ids(&store.list(&f).await.unwrap()), vec![r.clone()]);

    let f = ListFilter {
        capability_id: Some("orders.refund".into()),
        actor_id: Some("alice".into()),
        status: Some(EffectiveStatus::Pending),
        now_ms: T0 + 20,
        ..ListFilter::default()
    };
    let got = store.list(&f).await.unwrap();
    assert_eq!(
        got.len(),
        2,
        "alice's pending refunds, the approved one excluded"
    );
    assert!(got.iter().all(|x| x.id != *a));

    // Paging by id and by cursor both walk the whole list exactly once.
    for by_cursor in [false, true] {
        let mut pages = Vec::new();
        let mut after = None;
        loop {
            let page = store
                .list(&ListFilter {
                    limit: 3,
                    after_id_or_cursor: after.clone(),
                    ..ListFilter::default()
                })
                .await
                .unwrap();
            assert!(page.len() <= 3);
            let Some(last) = page.last() else { break };
            after = Some(if by_cursor {
                last.cursor()
            } else {
                last.id.clone()
            });
            pages.push(page);
        }
        assert_eq!(pages.len(), 3, "8 items in pages of 3");
        assert_eq!(pages.concat(), all);
    }

    // A filtered page continues after the cursor, still filtered.
    let f = ListFilter {
        actor_id: Some("alice".into()),
        limit: 2,
        after_id_or_cursor: Some(all[2].id.clone()),
        ..ListFilter::default()
    };
    let want: Vec<_> = all[3..]
        .iter()
        .filter(|r| r.actor_id() == Some("alice"))
        .take(2)
        .cloned()
        .collect();
    assert_eq!(store.list(&f).await.unwrap(), want);

    for bad in [
        "apr_00000000000000000000000000000000",
        "garbage",
        "12:apr_nothex",
    ] {
        let f = ListFilter {
            after_id_or_cursor: Some(bad.into()),
            ..ListFilter::default()
        };
        let err = store.list(&f).await.unwrap_err();
        assert!(matches!(err, StoreError::BadCursor(_)), "{bad}: {err:?}");
        assert_eq!(code(&err), ErrorCode::InvalidInput);
    }
}

/// Requests created in the same millisecond list, and page, in the order
/// they were created, whatever their random ids (issue 23: paging broke
/// such ties by id, so "creation order" held by luck). Twenty requests in
/// one millisecond: ordered by id, they would come back in creation order
/// with probability 1/20!.
pub async fn list_keeps_creation_order_within_a_millisecond(store: &dyn ApprovalStore) {
    let mut made = Vec::new();
    for _ in 0..20 {
        made.push(
            created(store, request_at("orders.refund", Some("ana"), T0, HOUR))
                .await
                .id,
        );
    }
    // One request a millisecond earlier and one later frame the tie.
    let before = created(
        store,
        request_at("orders.refund", Some("ana"), T0 - 1, HOUR),
    )
    .await;
    let after = created(
        store,
        request_at("orders.refund", Some("ana"), T0 + 1, HOUR),
    )
    .await;
    let want: Vec<String> = std::iter::once(before.id.clone())
        .chain(made.iter().cloned())
        .chain(std::iter::once(after.id.clone()))
        .collect();
    let ids = |v: Vec<ApprovalRequest>| v.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let all = store.list(&ListFilter::default()).await.unwrap();
    assert_eq!(ids(all), want, "one page");
    let pending = ListFilter {
        actor_id: Some("ana".into()),
        status: Some(EffectiveStatus::Pending),
        now_ms: T0 + 2,
        ..ListFilter::default()
    };
    assert_eq!(ids(store.list(&pending).await.unwrap()), want, "filtered");
    // Pages of 3 split the millisecond; by id and by cursor alike.
    for by_cursor in [false, true] {
        let mut seen = Vec::new();
        let mut after_id_or_cursor = None;
        loop {
            let page = store
                .list(&ListFilter {
                    limit: 3,
                    after_id_or_cursor: after_id_or_cursor.clone(),
                    ..pending.clone()
                })
                .await
                .unwrap();
            let Some(last) = page.last() else { break };
            after_id_or_cursor = Some(if by_cursor {
                last.cursor()
            } else {
                last.id.clone()
            });
            seen.extend(ids(page));
            assert!(seen.len() <= want.len(), "paging must end");
        }
        assert_eq!(seen, want, "paged (by cursor: {by_cursor})");
    }
}

pub async fn decide_approves_and_rejects(store: &dyn ApprovalStore) {
    let a = created(store, request(Some("alice"))).await;
    let got = store
        .decide(
            &a.id,
            Decision::Approve,
            Some("manager-1"),
            Some("looks fine"),
            T0 + 10,
            false,
        )
        .await
        .unwrap();
    assert_eq!(got.status, ApprovalStatus::Approved);
    assert_eq!(got.decided_by.as_deref(), Some("manager-1"));
    assert_eq!(got.decided_at_ms, Some(T0 + 10));
    assert_eq!(got.decision_reason.as_deref(), Some("looks fine"));
    assert_eq!(store.get(&a.id).await.unwrap().unwrap(), got);
    // Nothing but the decision changed.
    let mut undecided = got.clone();
    undecided.status = ApprovalStatus::Pending;
    undecided.decided_by = None;
    undecided.decided_at_ms = None;
    undecided.decision_reason = None;
    assert_eq!(undecided, a);

    let r = created(store, request(Some("alice"))).await;
    let got = store
        .decide(&r.id, Decision::Reject, None, None, T0 + 20, false)
        .await
        .unwrap();
    assert_eq!(got.status, ApprovalStatus::Rejected);
    assert_eq!(got.decided_by, None);
    assert_eq!(got.decided_at_ms, Some(T0 + 20));
    assert_eq!(store.get(&r.id).await.unwrap().unwrap(), got);

    let err = store
        .decide(
            "apr_00000000000000000000000000000000",
            Decision::Approve,
            Some("m"),
            None,
            T0,
            false,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)));
    assert!(!err.is_backend());
    assert_eq!(code(&err), ErrorCode::ApprovalNotFound);
}

/// The same decision fields in every store: over their lengths or with a
/// NUL character (PostgreSQL's `text` refuses one) INVALID_INPUT, the
/// request unchanged; an empty approver is none.
pub async fn decision_fields_are_the_same_in_every_store(store: &dyn ApprovalStore) {
    let a = created(store, request(Some("alice"))).await;
    let long = |n| "x".repeat(n);
    let approver_too_long = long(MAX_APPROVER_BYTES + 1);
    let reason_too_long = long(MAX_DECISION_REASON_BYTES + 1);
    for (approver, reason) in [
        (Some("m\0"), None),
        (Some("m"), Some("fine\0")),
        (Some(approver_too_long.as_str()), None),
        (Some("m"), Some(reason_too_long.as_str())),
    ] {
        let err = store
            .decide(&a.id, Decision::Approve, approver, reason, T0 + 1, false)
            .await
            .unwrap_err();
        assert_eq!(code(&err), ErrorCode::InvalidInput, "{err}");
        assert!(!err.to_string().contains('\0'));
    }
    assert_eq!(store.get(&a.id).await.unwrap().unwrap(), a, "unchanged");
    let longest_reason = long(MAX_DECISION_REASON_BYTES);
    let decided = store
        .decide(
            &a.id,
            Decision::Reject,
            Some(""),
            Some(&longest_reason),
            T0 + 2,
            false,
        )
        .await
        .unwrap();
    assert_eq!(decided.decided_by, None, "an empty approver names nobody");
    assert_eq!(
        decided.decision_reason.as_deref(),
        Some(longest_reason.as_str())
    );
    assert_eq!(store.get(&a.id).await.unwrap().unwrap(), decided);
}

pub async fn decide_twice_is_refused(store: &dyn ApprovalStore) {
    let a = created(store, request(Some("alice"))).await;
    let first = store
        .decide(&a.id, Decision::Approve, Some("m1"), None, T0 + 1, false)
        .await
        .unwrap();
    for d in [Decision::Approve, Decision::Reject] {
        let err = store
            .decide(&a.id, d, Some("m2"), None, T0 + 2, false)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            StoreError::AlreadyDecided {
                id: a.id.clone(),
                status: ApprovalStatus::Approved
            }
        );
        assert_eq!(code(&err), ErrorCode::ApprovalInvalid);
    }
    assert_eq!(
        store.get(&a.id).await.unwrap().unwrap(),
        first,
        "first decision stands"
    );

    let r = created(store, request(Some("alice"))).await;
    store
        .decide(&r.id, Decision::Reject, Some("m1"), None, T0 + 1, false)
        .await
        .unwrap();
    let err = store
        .decide(&r.id, Decision::Approve, Some("m2"), None, T0 + 2, false)
        .await
        .unwrap_err();
    assert_eq!(code(&err), ErrorCode::ApprovalRejected);
    assert_eq!(
        store.get(&r.id).await.unwrap().unwrap().status,
        ApprovalStatus::Rejected
    );

    store.consume(&a.id, T0 + 3).await.unwrap().unwrap();
    let err = store
        .decide(&a.id, Decision::Reject, Some("m2"), None, T0 + 4, false)
        .await
        .unwrap_err();
    assert_eq!(code(&err), ErrorCode::ApprovalConsumed);
}

pub async fn approver_must_differ_from_actor(store: &dyn ApprovalStore) {
    let req = created(store, request(Some("alice"))).await;
    let err = store
        .decide(
            &req.id,
            Decision::Approve,
            Some("alice"),
            None,
            T0 + 1,
            true,
        )
        .await
        .unwrap_err();
    assert_eq!(err, StoreError::ApproverIsActor { id: req.id.clone() });
    assert_eq!(code(&err), ErrorCode::PolicyDenied);
    let err = store
        .decide(&req.id, Decision::Approve, None, None, T0 + 1, true)
        .await
        .unwrap_err();
    assert_eq!(err, StoreError::ApproverRequired { id: req.id.clone() });
    // An empty or blank name names nobody (issue 15).
    for blank in ["", "   "] {
        let err = store
            .decide(&req.id, Decision::Approve, Some(blank), None, T0 + 1, true)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            StoreError::ApproverRequired { id: req.id.clone() },
            "{blank:?}"
        );
    }
    assert_eq!(
        store.get(&req.id).await.unwrap().unwrap().status,
        ApprovalStatus::Pending,
        "a refused decision changes nothing"
    );
    // Rejecting one's own request is refused the same way: the rule is
    // about who decides, not which way.
    let err = store
        .decide(&req.id, Decision::Reject, Some("alice"), None, T0 + 1, true)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::ApproverIsActor { .. }));

    let ok = store
        .decide(&req.id, Decision::Approve, Some("bob"), None, T0 + 2, true)
        .await
        .unwrap();
    assert_eq!(ok.decided_by.as_deref(), Some("bob"));

    // Without the rule, self-approval is allowed.
    let own = created(store, request(Some("alice"))).await;
    store
        .decide(
            &own.id,
            Decision::Approve,
            Some("alice"),
            None,
            T0 + 2,
            false,
        )
        .await
        .unwrap();

    // An anonymous actor cannot be the named approver.
    let anon = created(store, request(None)).await;
    store
        .decide(&anon.id, Decision::Approve, Some("bob"), None, T0 + 2, true)
        .await
        .unwrap();
}

pub async fn expiry_boundary_is_exclusive(store: &dyn ApprovalStore) {
    // expires_at = T0 + 500: usable at T0 + 499, expired at T0 + 500.
    let req = created(store, request_at("orders.refund", Some("alice"), T0, 500)).await;
    assert_eq!(req.expires_at_ms, T0 + 500);
    assert_eq!(req.effective_status(T0 + 499), EffectiveStatus::Pending);
    assert_eq!(req.effective_status(T0 + 500), EffectiveStatus::Expired);

    let err = store
        .decide(&req.id, Decision::Approve, Some("m"), None, T0 + 500, false)
        .await
        .unwrap_err();
    assert_eq!(err, StoreError::Expired { id: req.id.clone() });
    assert_eq!(code(&err), ErrorCode::ApprovalExpired);
    let ok = store
        .decide(&req.id, Decision::Approve, Some("m"), None, T0 + 499, false)
        .await
        .unwrap();
    assert_eq!(ok.effective_status(T0 + 499), EffectiveStatus::Approved);
    assert_eq!(ok.effective_status(T0 + 500), EffectiveStatus::Expired);

    assert_eq!(
        store.consume(&req.id, T0 + 500).await.unwrap(),
        Err(ConsumeRefusal::Expired)
    );
    assert_eq!(
        store.get(&req.id).await.unwrap().unwrap().status,
        ApprovalStatus::Approved,
        "a refused consume changes nothing"
    );
    let used = store.consume(&req.id, T0 + 499).await.unwrap().unwrap();
    assert_eq!(used.status, ApprovalStatus::Consumed);
    // Once consumed, expiry does not hide how it ended.
    assert_eq!(
        used.effective_status(T0 + 10_000),
        EffectiveStatus::Consumed
    );
}

pub async fn consume_exactly_once(store: &dyn ApprovalStore) {
    let req = approved(store, Some("alice")).await;
    let used = store.consume(&req.id, T0 + 2).await.unwrap().unwrap();
    let mut want = req.clone();
    want.status = ApprovalStatus::Consumed;
    assert_eq!(
        used, want,
        "consume returns the request with its recorded actor and surface"
    );
    assert_eq!(used.actor, actor(Some("alice")));
    assert_eq!(used.surface, Surface::Mcp);
    assert_eq!(store.get(&req.id).await.unwrap().unwrap(), want);
    for t in [T0 + 3, T0 + 4] {
        assert_eq!(
            store.consume(&req.id, t).await.unwrap(),
            Err(ConsumeRefusal::AlreadyConsumed)
        );
    }
    // Still consumed (not expired) long after expiry.
    assert_eq!(
        store.consume(&req.id, T0 + 10 * HOUR).await.unwrap(),
        Err(ConsumeRefusal::AlreadyConsumed)
    );
}

pub async fn consume_refusals_have_distinct_codes(store: &dyn ApprovalStore) {
    let pending = created(store, request(Some("alice"))).await;
    let rejected = created(store, request(Some("alice"))).await;
    store
        .decide(
            &rejected.id,
            Decision::Reject,
            Some("m"),
            None,
            T0 + 1,
            false,
        )
        .await
        .unwrap();
    let expired_approved = approved(store, Some("alice")).await;
    let used = approved(store, Some("alice")).await;
    store.consume(&used.id, T0 + 2).await.unwrap().unwrap();

    let late = T0 + HOUR;
    let cases = [
        (
            pending.id.as_str(),
            T0 + 2,
            ConsumeRefusal::Pending,
            ErrorCode::ApprovalPending,
        ),
        (
            pending.id.as_str(),
            late,
            ConsumeRefusal::Expired,
            ErrorCode::ApprovalExpired,
        ),
        (
            rejected.id.as_str(),
            T0 + 2,
            ConsumeRefusal::Rejected,
            ErrorCode::ApprovalRejected,
        ),
        (
            rejected.id.as_str(),
            late,
            ConsumeRefusal::Rejected,
            ErrorCode::ApprovalRejected,
        ),
        (
            expired_approved.id.as_str(),
            late,
            ConsumeRefusal::Expired,
            ErrorCode::ApprovalExpired,
        ),
        (
            used.id.as_str(),
            T0 + 3,
            ConsumeRefusal::AlreadyConsumed,
            ErrorCode::ApprovalConsumed,
        ),
        (
            "apr_ffffffffffffffffffffffffffffffff",
            T0,
            ConsumeRefusal::NotFound,
            ErrorCode::ApprovalNotFound,
        ),
        (
            "",
            T0,
            ConsumeRefusal::NotFound,
            ErrorCode::ApprovalNotFound,
        ),
    ];
    for (id, now, refusal, want_code) in cases {
        assert_eq!(
            store.consume(id, now).await.unwrap(),
            Err(refusal),
            "{id} at {now}"
        );
        let e = CapabilityError::from(refusal);
        assert_eq!(e.code, want_code);
        assert_eq!(e.retryable, refusal == ConsumeRefusal::Pending);
    }
    // None of the refusals changed a stored status.
    assert_eq!(
        store.get(&pending.id).await.unwrap().unwrap().status,
        ApprovalStatus::Pending
    );
    assert_eq!(
        store
            .get(&expired_approved.id)
            .await
            .unwrap()
            .unwrap()
            .status,
        ApprovalStatus::Approved
    );
}

pub async fn pending_limit_per_actor_default(store: &dyn ApprovalStore) {
    // The documented default applies to both stores out of the box.
    for _ in 0..MAX_PENDING_PER_ACTOR {
        store.create(&request(Some("flood"))).await.unwrap();
    }
    let err = store.create(&request(Some("flood"))).await.unwrap_err();
    assert_eq!(
        err,
        StoreError::LimitExceeded {
            limit: MAX_PENDING_PER_ACTOR
        }
    );
    assert_eq!(code(&err), ErrorCode::LimitExceeded);
    store.create(&request(Some("someone-else"))).await.unwrap();
}

/// The limit counts pending, unexpired requests of one principal — an
/// actor id, or for actors without one a surface and session — and decided
/// and expired ones free a slot.
pub async fn pending_limit_counts_only_live_pending(store: &dyn ApprovalStore, limit: usize) {
    let mut alice = Vec::new();
    for _ in 0..limit {
        alice.push(created(store, request(Some("alice"))).await);
    }
    let err = store.create(&request(Some("alice"))).await.unwrap_err();
    assert_eq!(err, StoreError::LimitExceeded { limit });
    created(store, request(Some("bob"))).await;

    store
        .decide(
            &alice[0].id,
            Decision::Reject,
            Some("m"),
            None,
            T0 + 1,
            false,
        )
        .await
        .unwrap();
    created(store, request(Some("alice"))).await;
    assert!(store.create(&request(Some("alice"))).await.is_err());

    // After they expire, none of alice's pending requests count.
    let later = request_at("orders.refund", Some("alice"), T0 + HOUR, HOUR);
    store.create(&later).await.unwrap();

    for _ in 0..limit {
        created(store, request(None)).await;
    }
    let err = store.create(&request(None)).await.unwrap_err();
    assert!(matches!(err, StoreError::LimitExceeded { .. }));

    // An anonymous client in another session, or on another surface, is
    // not blocked by the one that filled its quota (issue 15, item 8); a
    // full session stays full.
    let in_session = |session: &str| request(None).with_session_id(Some(session.to_owned()));
    for _ in 0..limit {
        created(store, in_session("s-1")).await;
    }
    let err = store.create(&in_session("s-1")).await.unwrap_err();
    assert!(matches!(err, StoreError::LimitExceeded { .. }));
    let other = created(store, in_session("s-2")).await;
    let stored = store.get(&other.id).await.unwrap().unwrap();
    assert_eq!(
        stored.session_id.as_deref(),
        Some("s-2"),
        "the session is kept"
    );
    let mut direct = request(None);
    direct.surface = Surface::Direct;
    created(store, direct).await;
}

/// A status filter is the effective status at the filter's `now_ms`: a
/// pending or approved request past its expiry lists as `expired`, not as
/// what is stored; rejected and consumed ones keep their status.
pub async fn list_filters_by_effective_status(store: &dyn ApprovalStore) {
    let live = created(store, request_at("orders.refund", Some("alice"), T0, HOUR)).await;
    let short = created(store, request_at("orders.refund", Some("alice"), T0, 1_000)).await;
    let approved_short = created(store, request_at("orders.refund", Some("bob"), T0, 1_000)).await;
    store
        .decide(
            &approved_short.id,
            Decision::Approve,
            Some("m"),
            None,
            T0 + 1,
            false,
        )
        .await
        .unwrap();
    let rejected = created(store, request_at("orders.refund", Some("carol"), T0, 1_000)).await;
    store
        .decide(
            &rejected.id,
            Decision::Reject,
            Some("m"),
            None,
            T0 + 1,
            false,
        )
        .await
        .unwrap();
    let ids_for = |status: EffectiveStatus, now_ms: u64| {
        let filter = ListFilter {
            status: Some(status),
            now_ms,
            ..ListFilter::default()
        };
        async move {
            let mut ids: Vec<String> = store
                .list(&filter)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.id)
                .collect();
            ids.sort();
            ids
        }
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    // Before the short ones expire.
    let early = T0 + 10;
    assert_eq!(
        ids_for(EffectiveStatus::Pending, early).await,
        sorted(vec![live.id.clone(), short.id.clone()])
    );
    assert_eq!(
        ids_for(EffectiveStatus::Approved, early).await,
        vec![approved_short.id.clone()]
    );
    assert!(ids_for(EffectiveStatus::Expired, early).await.is_empty());
    // At the expiry instant (exclusive, as everywhere): expired.
    let late = T0 + 1_000;
    assert_eq!(
        ids_for(EffectiveStatus::Pending, late).await,
        vec![live.id.clone()]
    );
    assert!(ids_for(EffectiveStatus::Approved, late).await.is_empty());
    assert_eq!(
        ids_for(EffectiveStatus::Expired, late).await,
        sorted(vec![short.id.clone(), approved_short.id.clone()])
    );
    assert_eq!(
        ids_for(EffectiveStatus::Rejected, late).await,
        vec![rejected.id.clone()],
        "rejected stays rejected"
    );
    // The view a UI gets says the same.
    let got = store.get(&short.id).await.unwrap().unwrap();
    assert_eq!(got.to_json_at(late)["status"], "expired");
    assert_eq!(got.to_json_at(early)["status"], "pending");
}

/// A caller's earlier request is found however many other callers asked
/// for the same call before it (the stores read a bounded number of rows:
/// the caller's own, not the first of anyone's), for an actor with an id
/// and for one without, by its session.
pub async fn a_repeated_call_finds_its_request_behind_other_callers(store: &dyn ApprovalStore) {
    use orpc_agent_core::approval::Created;
    for i in 0..70 {
        let other = request(Some(&format!("other-{i}")));
        assert_eq!(store.create_or_repeat(&other).await.unwrap(), Created::New);
        let anonymous = request(None).with_session_id(Some(format!("s-{i}")));
        assert_eq!(
            store.create_or_repeat(&anonymous).await.unwrap(),
            Created::New
        );
    }
    let mine = request(Some("alice"));
    assert_eq!(store.create_or_repeat(&mine).await.unwrap(), Created::New);
    match store
        .create_or_repeat(&request(Some("alice")))
        .await
        .unwrap()
    {
        Created::Pending(r) => assert_eq!(r.id, mine.id),
        other => panic!("expected alice's pending request, got {other:?}"),
    }
    let session = request(None).with_session_id(Some("s-mine".into()));
    assert_eq!(
        store.create_or_repeat(&session).await.unwrap(),
        Created::New
    );
    let again = request(None).with_session_id(Some("s-mine".into()));
    match store.create_or_repeat(&again).await.unwrap() {
        Created::Pending(r) => assert_eq!(r.id, session.id),
        other => panic!("expected the session's pending request, got {other:?}"),
    }
}

/// A repeated call finds its earlier request (issue 18): the same
/// principal, capability, input hash and surface get the pending request
/// back, or the approved one to consume, and nothing is stored; anything
/// else is a new request. An approved request is preferred; a consumed one
/// is not found again.
pub async fn a_repeated_call_finds_its_request(store: &dyn ApprovalStore) {
    use orpc_agent_core::approval::Created;
    let first = request(Some("alice"));
    assert_eq!(store.create_or_repeat(&first).await.unwrap(), Created::New);
    let again = request(Some("alice"));
    match store.create_or_repeat(&again).await.unwrap() {
        Created::Pending(r) => assert_eq!(r.id, first.id),
        other => panic!("expected the pending request, got {other:?}"),
    }
    assert!(
        store.get(&again.id).await.unwrap().is_none(),
        "nothing stored"
    );

    let bob = request(Some("bob"));
    assert_eq!(store.create_or_repeat(&bob).await.unwrap(), Created::New);
    let mut other_input = request(Some("alice"));
    other_input.input = json!({"orderId": 43});
    other_input.input_hash = hash_of("orders.refund", &other_input.input);
    assert_eq!(
        store.create_or_repeat(&other_input).await.unwrap(),
        Created::New
    );
    let mut other_surface = request(Some("alice"));
    other_surface.surface = Surface::Direct;
    assert_eq!(
        store.create_or_repeat(&other_surface).await.unwrap(),
        Created::New
    );
    let other_capability = request_at("orders.cancel", Some("alice"), T0, HOUR);
    assert_eq!(
        store.create_or_repeat(&other_capability).await.unwrap(),
        Created::New
    );

    store
        .decide(&first.id, Decision::Approve, Some("m"), None, T0 + 1, false)
        .await
        .unwrap();
    match store
        .create_or_repeat(&request(Some("alice")))
        .await
        .unwrap()
    {
        Created::Approved(r) => assert_eq!(r.id, first.id),
        other => panic!("expected the approved request, got {other:?}"),
    }
    assert!(store.consume(&first.id, T0 + 2).await.unwrap().is_ok());
    assert_eq!(
        store
            .create_or_repeat(&request(Some("alice")))
            .await
            .unwrap(),
        Created::New,
        "a consumed request is not found again"
    );

    // Actors without an id: the same session repeats, another does not.
    let anon = request(None).with_session_id(Some("s-1".into()));
    assert_eq!(store.create_or_repeat(&anon).await.unwrap(), Created::New);
    match store
        .create_or_repeat(&request(None).with_session_id(Some("s-1".into())))
        .await
        .unwrap()
    {
        Created::Pending(r) => assert_eq!(r.id, anon.id),
        other => panic!("expected the session's pending request, got {other:?}"),
    }
    let other_session = request(None).with_session_id(Some("s-2".into()));
    assert_eq!(
        store.create_or_repeat(&other_session).await.unwrap(),
        Created::New
    );
}
