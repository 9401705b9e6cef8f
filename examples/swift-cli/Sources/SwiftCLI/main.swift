// The five-minute tour of OrpcAgent from Swift: declare capabilities with
// typed Codable inputs and outputs, invoke them on an authenticated frame,
// and take a gated call through approval and resume.
import Foundation
import OrpcAgent

struct OrderQuery: Codable, Sendable { let customer: String }
struct Order: Codable, Sendable {
    let id: String
    let total: Int
    let card: String
}
struct Refund: Codable, Sendable {
    let orderId: String
    let amount: Int
}
struct RefundReceipt: Codable, Sendable {
    let refundId: String
    let amount: Int
}

let searchOrders = Capability(
    "orders.search",
    meta: AgentMeta(
        description: "Find a customer's orders.", expose: [.mcp: true, .direct: true], sideEffect: .read,
        risk: .low, tags: ["orders"]),
    // Card numbers never reach the model, an audit log or an error.
    redactOutput: { (orders: [Order], _) in orders.map { Order(id: $0.id, total: $0.total, card: "****") } }
) { (q: OrderQuery, _) -> [Order] in
    [
        Order(id: "o-1", total: 4200, card: "4111-1111-1111-1111"),
        Order(id: "o-2", total: 990, card: "5500-0000-0000-0004"),
    ]
}

let refund = Capability(
    "orders.refund",
    meta: AgentMeta(
        description: "Refund an order. Needs a human's approval.", expose: [.mcp: true], sideEffect: .external,
        risk: .high, approval: .init(required: true, type: "refund", expiresInMs: 15 * 60_000))
) { (r: Refund, cx: HandlerContext) -> RefundReceipt in
    print(
        "  handler runs as \(cx.frame.actor.id ?? "anonymous") on \(cx.frame.surface.rawValue), attempt \(cx.attempt)")
    return RefundReceipt(refundId: "rf-77", amount: r.amount)
}

@main
struct SwiftCLI {
    static func main() async {
        do {
            let registry = try CapabilityRegistry(
                capabilities: [searchOrders, refund],
                options: RegistryOptions(audit: { record in
                    print(
                        "  audit: \(record.event) \(record.json["capabilityId"]?.stringValue ?? "") → \(record.outcome ?? "…")"
                    )
                }))
            let agent = Frame(surface: .mcp, actor: Actor(id: "agent-7", roles: ["support"]))

            print("== invoke orders.search (redacted output)")
            let orders: Outcome<[Order]> = try await registry.invoke(
                "orders_search", input: OrderQuery(customer: "c-1"), frame: agent)
            for o in orders.value ?? [] { print("  \(o.id): \(o.total) card \(o.card)") }

            print("\n== invoke orders.refund (gated)")
            let gated: Outcome<RefundReceipt> = try await registry.invoke(
                "orders.refund", input: Refund(orderId: "o-1", amount: 4200), frame: agent)
            guard case .approvalRequired(let request) = gated else { fatalError("expected an approval request") }
            print("  approval required: \(request.id) type=\(request.type ?? "-")")
            print("  pending: \(try registry.approvals(ApprovalFilter(status: "pending")).count)")

            print("\n== approve and resume")
            try registry.approve(request.id, approver: "manager-1", reason: "customer is right")
            let done: Outcome<RefundReceipt> = try await registry.resume(request.id, frame: Frame(surface: .mcp))
            print("  refunded: \(done.value.map { "\($0.refundId) \($0.amount)" } ?? "-")")

            print("\n== resume again (single use)")
            do {
                let _: Outcome<RefundReceipt> = try await registry.resume(request.id, frame: Frame(surface: .mcp))
            } catch let e as CapabilityError {
                print("  \(e.code.rawValue): \(e.message)")
            }

            print("\n== invoke from a surface the capability is not exposed on")
            do {
                let _: Outcome<RefundReceipt> = try await registry.invoke(
                    "orders.refund", input: Refund(orderId: "o-1", amount: 1), frame: Frame(surface: .aiSdk))
            } catch CapabilityError.notFound(let info) {
                print("  NOT_FOUND: \(info.message)")
            }
        } catch {
            print("error: \(error)")
            exit(1)
        }
    }
}
