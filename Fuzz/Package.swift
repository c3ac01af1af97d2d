// swift-tools-version: 5.4
// libFuzzer targets for Herald's parsers of untrusted input. A package of its own so that the
// sanitizer flags never touch the main package's build; run it with `scripts/fuzz.sh`, which
// builds with `swift build -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library`.
// Each target is one file exporting `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`. Linux only.
//
// Tools version 5.4 on purpose: from 5.5 on, SwiftPM links an executable's entry point as
// `<Module>_main` (so that tests can import executables), which a fuzz target does not have.
import PackageDescription

func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzSupport"] + dependencies)
}

let package = Package(
    name: "HeraldFuzz",
    dependencies: [
        .package(name: "Herald", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
    ],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "HeraldCore", package: "Herald")]),
        fuzzTarget("FuzzEventXML", [.product(name: "HeraldCore", package: "Herald")]),
        fuzzTarget("FuzzEventJSON", [.product(name: "HeraldCore", package: "Herald")]),
        fuzzTarget("FuzzResx", [.product(name: "HeraldCore", package: "Herald")]),
        fuzzTarget("FuzzEventMetadata", [.product(name: "HeraldCore", package: "Herald")]),
        fuzzTarget("FuzzAMQPURL", [.product(name: "HeraldAMQP", package: "Herald")]),
        fuzzTarget("FuzzPostgresURL", [.product(name: "HeraldPostgres", package: "Herald")]),
        fuzzTarget(
            "FuzzAPIBody",
            [
                .product(name: "HeraldAPI", package: "Herald"),
                .product(name: "HeraldCore", package: "Herald"),
                .product(name: "HeraldStore", package: "Herald"),
                .product(name: "HeraldPostgres", package: "Herald"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
    ]
)
