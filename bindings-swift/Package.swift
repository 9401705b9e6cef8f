// swift-tools-version:5.9
// The Swift package OrpcAgent: governed capabilities for AI agents, over the
// orpc-agent Rust core (uniffi).
//
// Linking: the Rust static library `liborpc_agent_swift.a` is built by cargo
// (`make build-swift`), hard-linked alone into target/swift-lib/<profile>/, and
// found through LIBRARY_PATH (honoured by the clang driver swiftc links
// with). No `unsafeFlags`, so packages that depend on this one (the example
// CLI) build too. scripts/swift.sh and mk/swift.mk set LIBRARY_PATH.
import PackageDescription

let package = Package(
    name: "OrpcAgent",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "OrpcAgent", targets: ["OrpcAgent"])
    ],
    targets: [
        // The C header and module map uniffi generates (committed).
        .target(
            name: "orpc_agent_swiftFFI",
            path: "Sources/orpc_agent_swiftFFI",
            linkerSettings: [
                .linkedLibrary("orpc_agent_swift"),
                // What Rust's std needs from the system on Linux.
                .linkedLibrary("m", .when(platforms: [.linux])),
                .linkedLibrary("dl", .when(platforms: [.linux])),
                .linkedLibrary("pthread", .when(platforms: [.linux])),
                .linkedLibrary("gcc_s", .when(platforms: [.linux])),
            ]
        ),
        // The Swift uniffi generates (committed; a test fails on drift).
        .target(name: "OrpcAgentFFI", dependencies: ["orpc_agent_swiftFFI"], path: "Sources/OrpcAgentFFI"),
        // The idiomatic API apps use.
        .target(name: "OrpcAgent", dependencies: ["OrpcAgentFFI"], path: "Sources/OrpcAgent"),
        .testTarget(
            name: "OrpcAgentTests", dependencies: ["OrpcAgent", "OrpcAgentFFI"], path: "Tests/OrpcAgentTests"),
        .executableTarget(name: "OrpcAgentBench", dependencies: ["OrpcAgent", "OrpcAgentFFI"], path: "Bench"),
    ]
)
