import XCTest
@testable import OrpcAgent
import OrpcAgentFFI

/// The Swift error enum has exactly the core's codes, in the core's order.
final class ErrorCodeDriftTests: XCTestCase {
    func testErrorCodesEqualTheCore() {
        XCTAssertEqual(ErrorCode.allCases.map(\.rawValue), coreErrorCodes())
    }

    func testSurfacesEqualTheCoreInIndexOrder() {
        XCTAssertEqual(Surface.allCases.map(\.rawValue), surfaceNames())
        XCTAssertEqual(Surface.allCases.map(\.index), Array(0..<UInt8(Surface.allCases.count)))
    }

    func testEveryCodeRoundTripsThroughTheErrorEnum() {
        for code in ErrorCode.allCases {
            let e = CapabilityError(code, "m")
            XCTAssertEqual(e.code, code)
            XCTAssertTrue(code.kind.hasPrefix("std:"), "\(code) kind \(code.kind)")
        }
        XCTAssertEqual(ErrorCode.notFound.kind, "std:not-found")
        XCTAssertEqual(ErrorCode.invalidInput.kind, "std:invalid-args")
    }
}
