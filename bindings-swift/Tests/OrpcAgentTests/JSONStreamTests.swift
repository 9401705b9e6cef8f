import Foundation
import XCTest

@testable import OrpcAgent

/// `JSONStream`, the one-walk text of a raw input: it writes the same JSON
/// as the exact path (probe, then `JSONEncoder`) or declines, never
/// something else.
final class JSONStreamTests: XCTestCase {
    struct Address: Codable, Equatable {
        let city: String
        let zip: String?
    }
    enum Kind: Codable, Equatable {
        case person(age: Int)
        case company(String, employees: [Int])
        case none
    }
    struct Everything: Codable {
        let name: String
        let quote: String
        let flag: Bool
        let small: Int8
        let big: UInt64
        let negative: Int64
        let ratio: Double
        let whole: Double
        let single: Float
        let missing: String?
        let present: Int?
        let address: Address
        let tags: [String]
        let matrix: [[Int]]
        let byName: [String: Int]
        let byNumber: [Int: String]
        let kinds: [Kind]
        let empty: [Int]
        let emptyObject: [String: Bool]
    }

    /// The same JSON as `JSONEncoder` writes, and as many bytes: the core's
    /// input limits read the text's length as well as its parse.
    func assertSameJSON<T: Encodable>(_ value: T, file: StaticString = #filePath, line: UInt = #line) throws {
        guard let text = JSONStream.text(of: value, maxDepth: CoreDepth.input) else {
            return XCTFail("declined \(value)", file: file, line: line)
        }
        let exact = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        XCTAssertEqual(
            try JSONValue(parsing: text), try JSONValue(parsing: exact), "\(text) vs \(exact)", file: file, line: line)
        XCTAssertEqual(text.utf8.count, exact.utf8.count, "\(text) vs \(exact)", file: file, line: line)
    }

    func testOrdinaryValuesStreamAsJSONEncoderWritesThem() throws {
        try assertSameJSON(
            Everything(
                name: "Ana \u{1F600} ünïcode", quote: "a \"quoted\" \\ line\nbreak\ttab\u{1}/slash", flag: true,
                small: -8,
                big: UInt64.max, negative: Int64.min, ratio: 0.1, whole: 2, single: 1.5, missing: nil, present: 7,
                address: Address(city: "Lisbon", zip: nil), tags: ["a", "b"], matrix: [[1, 2], [], [3]],
                byName: ["x": 1, "y": 2], byNumber: [1: "one", 2: "two"],
                kinds: [.person(age: 30), .company("Acme", employees: [1, 2]), .none], empty: [], emptyObject: [:]))
        try assertSameJSON(42)
        try assertSameJSON("just a string")
        try assertSameJSON([true, false])
        try assertSameJSON([Address(city: "Porto", zip: "4000")])
        try assertSameJSON(Optional<Int>.none)
        try assertSameJSON([2.0, 0.1, 1e20, -0.0, 5e-324, 1e15, 123_456_789_012_345_678.0, 1.5e300, -2.5, 1e-7])
        try assertSameJSON([Float(0.1), 2, 1e20, 3.402_823_5e38, 1e-7, -0.0])
        try assertSameJSON(["a/b\"c\\d\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}é\u{2028}😀": "\u{0}/"])
    }

    /// Writes to a nested container after its parent moved on.
    struct Interleaved: Encodable {
        enum K: String, CodingKey { case a, b }
        enum N: String, CodingKey { case x }
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: K.self)
            var n = c.nestedContainer(keyedBy: N.self, forKey: .a)
            try c.encode(1, forKey: .b)
            try n.encode(2, forKey: .x)
        }
    }
    /// Two containers from one encoder.
    struct TwoContainers: Encodable {
        enum K: String, CodingKey { case a, b }
        func encode(to encoder: Encoder) throws {
            var c1 = encoder.container(keyedBy: K.self)
            try c1.encode(1, forKey: .a)
            var c2 = encoder.container(keyedBy: K.self)
            try c2.encode(2, forKey: .b)
        }
    }
    struct WritesNothing: Encodable {
        func encode(to encoder: Encoder) throws {}
    }
    struct Super: Encodable {
        enum K: String, CodingKey { case a }
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: K.self)
            try c.encode(1, forKey: .a)
            try 2.encode(to: c.superEncoder())
        }
    }
    struct Throws: Encodable {
        struct Nope: Error {}
        func encode(to encoder: Encoder) throws { throw Nope() }
    }
    /// A NaN the value's own `encode(to:)` swallows (`try?`).
    struct SwallowsNaN: Encodable {
        enum K: String, CodingKey { case score, next }
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: K.self)
            try? c.encode(Double.nan, forKey: .score)
            try c.encode(1, forKey: .next)
        }
    }
    /// One key twice (`JSONEncoder` keeps the last).
    struct RepeatedKey: Encodable {
        enum K: String, CodingKey { case a }
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: K.self)
            try c.encode(1, forKey: .a)
            try c.encode(2, forKey: .a)
        }
    }
    /// Writes into its parent's container, kept from outside.
    final class Stash: @unchecked Sendable {
        var container: KeyedEncodingContainer<Outer.K>?
    }
    struct Inner: Encodable {
        let stash: Stash
        func encode(to encoder: Encoder) throws {
            if var parent = stash.container { try parent.encode(5, forKey: .x) }
            var c = encoder.singleValueContainer()
            try c.encode(1)
        }
    }
    struct Outer: Encodable {
        enum K: String, CodingKey { case a, x }
        let stash = Stash()
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: K.self)
            stash.container = c
            try c.encode(Inner(stash: stash), forKey: .a)
        }
    }
    struct WithData: Encodable { let d: Data }
    struct WithDate: Encodable { let d: Date }
    struct WithJSON: Encodable { let j: JSONValue }
    struct WithNaN: Encodable { let x: Double }
    indirect enum Deep: Encodable {
        case leaf
        case node([Deep])
        func encode(to encoder: Encoder) throws {
            var c = encoder.unkeyedContainer()
            if case .node(let children) = self { for child in children { try c.encode(child) } }
        }
    }

    func testWhatCannotStreamTakesTheExactPath() {
        var deep = Deep.leaf
        for _ in 0...CoreDepth.input { deep = .node([deep]) }
        let declined: [(String, Encodable)] = [
            ("interleaved", Interleaved()), ("two containers", TwoContainers()), ("writes nothing", WritesNothing()),
            ("superEncoder", Super()), ("throws", Throws()), ("Data", WithData(d: Data([1, 2]))),
            ("Date", WithDate(d: Date(timeIntervalSince1970: 0))), ("JSONValue", WithJSON(j: .int(1))),
            ("NaN", WithNaN(x: .nan)), ("infinity", WithNaN(x: -.infinity)), ("too deep", deep),
            ("a swallowed NaN", SwallowsNaN()), ("a repeated key", RepeatedKey()),
            ("a parent's container", Outer()),
        ]
        for (what, value) in declined {
            XCTAssertNil(JSONStream.text(of: value, maxDepth: CoreDepth.input), what)
        }
        // The exact path still says what it met.
        guard case .deeper = HostJSON.input(deep) else { return XCTFail("\(HostJSON.input(deep))") }
        guard case .json(_, let at) = HostJSON.input(WithNaN(x: .nan)), at == "/x" else {
            return XCTFail("\(HostJSON.input(WithNaN(x: .nan)))")
        }
    }

    /// As deep as the core accepts still streams.
    func testTheDeepestAcceptedInputStreams() throws {
        var deep = Deep.leaf
        for _ in 1..<CoreDepth.input { deep = .node([deep]) }
        XCTAssertNotNil(JSONStream.text(of: deep, maxDepth: CoreDepth.input))
    }
}
