import OrpcAgentFFI

// The core's records (frames, actors, redaction info, approval requests,
// audit records) arrive as typed uniffi records (`bindings-swift/src/records.rs`):
// these initializers only move fields. What is open-ended JSON in the core
// (an actor's attributes, a request's input, a record's `json`) is parsed
// strictly (`CoreJSON`): text the core wrote that does not parse is
// INTERNAL, never a default.

extension Surface {
    init(_ s: FfiSurface) {
        switch s {
        case .direct: self = .direct
        case .aiSdk: self = .aiSdk
        case .mcp: self = .mcp
        case .workflow: self = .workflow
        case .test: self = .test
        }
    }
}

extension Actor {
    init(core a: FfiActor) throws {
        guard let attributes = try CoreJSON.parse("actor attributes", a.attributesJson).objectValue else {
            throw CoreJSON.malformed("actor", field: "attributes", expected: "an object")
        }
        var dict: [String: JSONValue] = [:]
        for (k, v) in attributes { dict[k] = v }
        self.init(id: a.id, roles: a.roles, attributes: dict)
    }

    /// The actor as the core takes it (attributes in key order), and where
    /// its attributes hold a NaN or infinite number, which JSON has not
    /// (written `null`; the core refuses the frame).
    var core: (actor: FfiActor, nonFiniteAt: String?) {
        var attrs = JSONObject()
        for k in attributes.keys.sorted() { attrs[k] = attributes[k] }
        var w = JSONWriter()
        w.write(.object(attrs))
        return (FfiActor(id: id, roles: roles, attributesJson: w.out), w.nonFiniteAt)
    }
}

extension TraceContext {
    init(core t: FfiTrace) {
        self.init(traceparent: t.traceparent, tracestate: t.tracestate)
    }

    var core: FfiTrace { FfiTrace(traceparent: traceparent, tracestate: tracestate) }
}

extension Frame {
    /// What the frame adds to its surface, for the core; `nil` when it
    /// carries only a surface (the common call then sends one integer).
    var coreDetails: FfiFrameDetails? {
        if actor == Actor(), trace == nil, requestId == nil, agentId == nil, sessionId == nil { return nil }
        let (coreActor, nonFiniteAt) = actor.core
        return FfiFrameDetails(
            actor: coreActor, attributesNonFiniteAt: nonFiniteAt, trace: trace?.core, requestId: requestId,
            agentId: agentId, sessionId: sessionId)
    }

    /// The frame the core holds (for a resumed call the request's recorded
    /// surface and actor, the caller's trace and ids), with this frame's
    /// context and progress sink (which never cross).
    func withRecorded(_ recorded: FfiFrame) throws -> Frame {
        var frame = self
        frame.surface = Surface(recorded.surface)
        frame.actor = try Actor(core: recorded.details.actor)
        frame.trace = recorded.details.trace.map(TraceContext.init(core:))
        frame.requestId = recorded.details.requestId
        frame.agentId = recorded.details.agentId
        frame.sessionId = recorded.details.sessionId
        return frame
    }
}

extension RedactionInfo {
    init(core i: FfiRedactionInfo, context: (any Sendable)?) throws {
        self.init(
            surface: Surface(i.surface), capabilityId: i.capabilityId, actor: try Actor(core: i.actor),
            context: context)
    }
}

extension ApprovalRequest {
    init(core r: FfiApprovalRequest) throws {
        self.init(
            id: r.id, capabilityId: r.capabilityId, input: try CoreJSON.parse("approval request input", r.inputJson),
            surface: Surface(r.surface), actor: try Actor(core: r.actor), type: r.approvalType, reason: r.reason,
            createdAt: r.createdAtMs, expiresAt: r.expiresAtMs, status: r.status, decidedBy: r.decidedBy,
            decidedAt: r.decidedAtMs, decisionReason: r.decisionReason, sessionId: r.sessionId,
            json: try CoreJSON.parse("approval request", r.json))
    }
}

extension AuditRecord.Policy {
    init(core p: FfiPolicyRecord) {
        self.init(
            scope: p.scope, index: Int(p.index), name: p.name, mode: p.mode, host: p.host, decision: p.decision,
            reason: p.reason, approvalType: p.approvalType, failed: p.failed)
    }
}

extension AuditRecord {
    init(core r: FfiAuditRecord) throws {
        self.init(
            json: try CoreJSON.parse("audit record", r.json), event: r.event, capabilityId: r.capabilityId,
            requested: r.requested, surface: Surface(r.surface), actorId: r.actorId, resumed: r.resumed,
            policies: r.policies.map(Policy.init(core:)), approvalId: r.approvalId, attempts: Int(r.attempts),
            startedAt: r.startedAtMs, durationMs: r.durationMs, outcome: r.outcome, stage: Int(r.stage),
            trace: r.trace.map(TraceContext.init(core:)), requestId: r.requestId, agentId: r.agentId,
            sessionId: r.sessionId, failure: r.failure)
    }
}
