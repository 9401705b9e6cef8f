// Host policies: what one decides, what it is asked, and how a
// capability's list joins the metadata's declared policies (`PolicyList`).

import Foundation

/// A host policy's answer.
public enum PolicyDecision: Sendable, Hashable {
    case allow
    /// Stops the call (when enforced). Write the reason for a model.
    case deny(reason: String? = nil)
    case requireApproval(type: String? = nil, reason: String? = nil, expiresInMs: UInt64? = nil)
    /// No opinion.
    case abstain
}

/// What a host policy sees: the validated input (SI-5) and the frozen frame.
public struct PolicyRequest: Sendable {
    public let capabilityId: String
    public let input: JSONValue
    public let frame: Frame
}

/// A policy implemented in Swift. The core decides when it runs, in which
/// order, and what its decision means; throwing or running past the
/// capability's timeout denies (fail closed).
public struct HostPolicy: Sendable {
    public let name: String?
    /// `"enforce"` (default) or `"shadow"` (recorded in audit, not enforced).
    public let mode: String?
    public let evaluate: @Sendable (PolicyRequest) async throws -> PolicyDecision
    /// The declaration as read from a file, when it came from one.
    var declared: JSONValue?

    public init(
        name: String? = nil, mode: String? = nil,
        evaluate: @escaping @Sendable (PolicyRequest) async throws -> PolicyDecision
    ) {
        self.name = name
        self.mode = mode
        self.evaluate = evaluate
    }

    /// The declared-present marker the core reads.
    var marker: JSONValue {
        if let declared { return declared }
        var o = JSONObject()
        if let name { o["name"] = .string(name) }
        if let mode { o["mode"] = .string(mode) }
        o["host"] = .bool(true)
        return .object(o)
    }
}

/// A policy in a list: declarative (evaluated natively by the core) or a
/// Swift closure.
public enum Policy: Sendable {
    case rule(JSONValue)
    case host(HostPolicy)

    /// What the core reads: the rule, or the host policy's marker.
    var wire: JSONValue {
        switch self {
        case .rule(let j): return j
        case .host(let p): return p.marker
        }
    }
}

/// A list of policies as the core runs them (its policy indexes are
/// positions in `policies`): the declared ones first, in their order — a
/// declared host marker (`{"host": true, "name": n}`, as a file declares
/// one) implemented by the given host policy named `n`, in the marker's
/// place — then the given ones no marker took, in theirs. Both lists apply:
/// a declared deny stays whatever host policies are given.
struct PolicyList: Sendable {
    let policies: [Policy]
    /// Positions of declared host markers no given host policy implements
    /// (a `MISSING_HOOK` build problem).
    let unbound: [Int]
    /// The declared `policies` is not a list: it goes to the core as is,
    /// which reports it.
    let declaredInvalid: Bool

    /// Positions of the host policies implemented here: what the core is
    /// told it holds (`hostHooks.policies`, `hostPolicies`), so a declared
    /// marker without one is the core's MISSING_HOOK.
    static func held(_ policies: [Policy]) -> JSONValue {
        .array(
            policies.enumerated().compactMap { i, p in
                if case .host = p { return .int(Int64(i)) }
                return nil
            })
    }

    init(declared: JSONValue?, given: [Policy]) {
        guard let declared else {
            (policies, unbound, declaredInvalid) = (given, [], false)
            return
        }
        guard let list = declared.arrayValue else {
            (policies, unbound, declaredInvalid) = (given, [], true)
            return
        }
        var rest = given
        var out: [Policy] = []
        var unbound: [Int] = []
        for (i, d) in list.enumerated() {
            guard d["host"] == .bool(true) else {
                out.append(.rule(d))
                continue
            }
            let name = d["name"]?.stringValue
            let j = name.flatMap { n in
                rest.firstIndex { if case .host(let p) = $0 { return p.name == n } else { return false } }
            }
            if let j, case .host(var p) = rest.remove(at: j) {
                p.declared = d
                out.append(.host(p))
            } else {
                unbound.append(i)
                out.append(.rule(d))
            }
        }
        (policies, self.unbound, declaredInvalid) = (out + rest, unbound, false)
    }

    /// The list the core builds from, when there is one to send.
    var wire: JSONValue? { declaredInvalid || policies.isEmpty ? nil : .array(policies.map(\.wire)) }
}
