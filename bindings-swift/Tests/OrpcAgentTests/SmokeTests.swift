import XCTest
@testable import OrpcAgent
final class SmokeTests: XCTestCase { func testCodes() { XCTAssertEqual(coreErrorCodes().count, 18) } }
