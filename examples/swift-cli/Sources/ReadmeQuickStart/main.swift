import OrpcAgent

struct Refund: Codable, Sendable {
    let orderId: String
    let amount: Int
}
struct Receipt: Codable, Sendable { let refundId: String }

let registry = try CapabilityRegistry(capabilities: [
    Capability(
        "orders.refund",
        meta: AgentMeta(
            description: "Refund an order.", expose: [.mcp: true], sideEffect: .external, risk: .high,
            approval: .init(required: true))
    ) { (refund: Refund, cx: HandlerContext) in Receipt(refundId: "rf-\(refund.orderId)") }
])
let frame = Frame(surface: .mcp, actor: Actor(id: "agent-7"))  // from your authenticated transport
let refund = Refund(orderId: "o-1", amount: 10)
switch try await registry.invoke("orders.refund", input: refund, frame: frame, as: Receipt.self) {
case .ok(let receipt):
    print("ran without an approval:", receipt.refundId)
case .approvalRequired(let request):
    print(request.status)  // pending
    try registry.approve(request.id, approver: "manager-1")
    let done: Outcome<Receipt> = try await registry.resume(request.id, frame: frame)
    print(done.value?.refundId ?? "not run")  // rf-o-1
}
do {
    _ = try await registry.invoke("orders.refund", input: refund, frame: Frame(surface: .aiSdk), as: Receipt.self)
} catch let error as CapabilityError {
    print(error.code.rawValue)  // NOT_FOUND
}
