import Foundation
import XCTest

@testable import OrpcAgent

/// Every case of tests/vectors/hash through `InputHash`: JSON inputs as
/// `JSONValue`, the rest as CBOR bytes; rejections compared by code.
final class HashVectorTests: XCTestCase {
    func testEveryHashVector() throws {
        let cases = try Vectors.cases("hash")
        XCTAssertGreaterThanOrEqual(cases.count, 40, "hash vectors missing")
        for (_, c) in cases {
            let name = c["name"]?.stringValue ?? "?"
            let capability = c["capability"]?.stringValue ?? ""
            do {
                let hash: String
                if let hex = c["input_cbor"]?.stringValue {
                    hash = try InputHash.of(capability: capability, cbor: Data(hexString: hex))
                } else {
                    hash = try InputHash.of(capability: capability, input: c["input"] ?? .null)
                }
                XCTAssertNil(c["error"], "\(name): expected \(c["error"]?.stringValue ?? ""), hashed fine")
                XCTAssertEqual(hash, c["sha256"]?.stringValue, name)
            } catch let e as CapabilityError {
                XCTAssertNotNil(c["error"], "\(name): unexpected \(e)")
                XCTAssertEqual(e.code.rawValue, c["error_code"]?.stringValue, name)
                // The rejection's sub-code, as the binding returned it.
                XCTAssertEqual(e.details?["reason"]?.stringValue, c["error"]?.stringValue, "\(name): sub-code")
                if let message = c["message"]?.stringValue {
                    XCTAssertEqual(e.message, message, "\(name): message")
                }
            }
        }
    }

    func testTypedInputsHashLikeTheirJSON() throws {
        struct Order: Codable {
            let id: Int
            let note: String
        }
        XCTAssertEqual(
            try InputHash.of(capability: "orders.get", encoding: Order(id: 1, note: "x")),
            try InputHash.of(capability: "orders.get", input: ["id": 1.0, "note": "x"]))
    }
}

extension Data {
    init(hexString: String) {
        var bytes: [UInt8] = []
        var it = hexString.utf8.makeIterator()
        while let a = it.next(), let b = it.next() {
            bytes.append(UInt8(String(decoding: [a, b], as: UTF8.self), radix: 16) ?? 0)
        }
        self.init(bytes)
    }
}
