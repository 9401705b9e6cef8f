// swift-tools-version:5.9
// An app embedding OrpcAgent: two capabilities, one plain invocation, one
// approval round trip. Run it with `make demo-swift`. ReadmeQuickStart is
// bindings-swift/README.md's quick start, character for character (make
// test-swift-readme checks both and runs it).
import PackageDescription

let package = Package(
    name: "SwiftCLI",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "OrpcAgent", path: "../../bindings-swift")],
    targets: [
        .executableTarget(
            name: "SwiftCLI", dependencies: [.product(name: "OrpcAgent", package: "OrpcAgent")],
            path: "Sources/SwiftCLI"),
        .executableTarget(
            name: "ReadmeQuickStart", dependencies: [.product(name: "OrpcAgent", package: "OrpcAgent")],
            path: "Sources/ReadmeQuickStart"),
    ]
)
