// swift-tools-version: 6.1
// Herald: push-notification delivery. The module layout and the direction of imports are
// described in docs/architecture.md; arrows point down that table only.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Herald",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "herald", targets: ["herald"]),
        // For the fuzz package in Fuzz/ (a package can only import another's products); not a
        // supported library interface.
        .library(name: "HeraldCore", targets: ["HeraldCore"]),
        .library(name: "HeraldAMQP", targets: ["HeraldAMQP"]),
        .library(name: "HeraldPostgres", targets: ["HeraldPostgres"]),
        .library(name: "HeraldStore", targets: ["HeraldStore"]),
        .library(name: "HeraldAPI", targets: ["HeraldAPI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.36.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.29.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.1.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
    ],
    targets: [
        // System libraries: a module map and one shim header each. Only the wrapper module
        // directly above imports them.
        .systemLibrary(
            name: "CRabbitMQ",
            pkgConfig: "librabbitmq",
            providers: [.apt(["librabbitmq-dev"])]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),

        // Plumbing below everything else: `Shared`, the one-reference storage of the structs the
        // hot path copies (in HeraldCore and HeraldAMQP alike), `TCPCork` (the AMQP and HTTP
        // drivers' bursts of frames) and `ErrorCode`, every error's extensible code.
        .target(name: "HeraldSupport", swiftSettings: strict),

        // Pure logic: Foundation, swift-collections, and swift-crypto's SHA-256 (message and
        // delivery keys).
        .target(
            name: "HeraldCore",
            dependencies: [
                "HeraldSupport",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),

        // Wrappers over the C libraries.
        .target(
            name: "HeraldAMQP",
            dependencies: [
                "CRabbitMQ", "HeraldSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldPostgres",
            dependencies: [
                "CLibPQ", "HeraldSupport", .product(name: "Logging", package: "swift-log"),
                // Migration checksums (SHA-256).
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldHTTP",
            dependencies: [
                "CCurl", "HeraldSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),

        // Push senders: the PushSender protocol, log and null senders, APNs and FCM.
        // JWTKit signs provider tokens (ES256, RS256); NIOSSL reads APNs certificates (PEM and
        // PKCS#12) at start-up to refuse expired ones; SwiftASN1 reads a PKCS#12 file's outline
        // first (NIOSSL crashes on a bundle without a key).
        .target(
            name: "HeraldDelivery",
            dependencies: [
                "HeraldCore", "HeraldHTTP", "HeraldSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),

        // Devices, templates, dedupe keys, the delivery journal and caches over PostgreSQL.
        .target(
            name: "HeraldStore",
            dependencies: [
                "HeraldCore", "HeraldPostgres", "HeraldSupport", .product(name: "Logging", package: "swift-log"),
                // Message keys of the journal (SHA-256).
                .product(name: "Crypto", package: "swift-crypto"),
                // The change listener counts the subscription changes it applied.
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            resources: [
                .embedInCode("Migrations/0001_initial.sql"), .embedInCode("Migrations/0002_journal.sql"), .embedInCode("Migrations/0003_support.sql"),
                .embedInCode("Migrations/0004_journal_message_index.sql"),
                .embedInCode("Migrations/0005_shared_payloads.sql"),
                .embedInCode("Migrations/0006_device_positions_fillfactor.sql"),
                .embedInCode("Migrations/0007_event_android_channel.sql"),
                .embedInCode("Migrations/0008_backlog.sql"),
                .embedInCode("Migrations/0009_backlog_holder.sql"),
                .embedInCode("Migrations/0010_broadcasts.sql"),
            ],
            swiftSettings: strict
        ),

        // The pipeline: RabbitMQ → decode → dedupe → recipients → per-user lanes → sender → ack.
        .target(
            name: "HeraldWorker",
            dependencies: [
                "HeraldCore", "HeraldAMQP", "HeraldStore", "HeraldDelivery", "HeraldSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // Local HTTP/2 TLS stand-ins for Apple and Google (`herald sandbox`), and the generic
        // HTTP/2 server they are built on.
        .target(
            name: "HeraldSandbox",
            dependencies: [
                "HeraldCore", "HeraldSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),

        // The REST API: legacy Subscribe.ashx/Unsubscribe.ashx, /v1, health and metrics routes,
        // bearer authentication (JWTKit, or OAuth2 introspection through an injected transport).
        .target(
            name: "HeraldAPI",
            dependencies: [
                "HeraldCore", "HeraldStore",
                // SHA-256: token fingerprints, the introspection cache, constant-time comparison.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),

        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldCore", "HeraldAMQP", "HeraldPostgres", "HeraldHTTP", "HeraldDelivery", "HeraldSandbox",
                "HeraldStore", "HeraldAPI", "HeraldWorker",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict,
            // jemalloc replaces glibc's malloc for the whole process (the Swift runtime's
            // allocations included): ~13 % less worker CPU per delivery (docs/performance.md).
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]
        ),

        // Test support shared by the test targets; no production target depends on it.
        .target(
            name: "HeraldTesting",
            dependencies: [
                "HeraldPostgres", "HeraldStore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        .testTarget(
            name: "HeraldCoreTests",
            dependencies: ["HeraldCore", "HeraldTesting", .product(name: "PropertyBased", package: "swift-property-based")],
            exclude: ["Golden"],
            swiftSettings: strict
        ),
        .testTarget(name: "HeraldAMQPTests", dependencies: ["HeraldAMQP", "HeraldTesting"], swiftSettings: strict),
        .testTarget(name: "HeraldPostgresTests", dependencies: ["HeraldPostgres", "HeraldTesting"], swiftSettings: strict),
        .testTarget(name: "HeraldStoreTests", dependencies: ["HeraldStore", "HeraldTesting"], swiftSettings: strict),
        .testTarget(
            name: "HeraldHTTPTests",
            dependencies: ["HeraldHTTP", "HeraldSandbox", "HeraldTesting", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldDeliveryTests",
            dependencies: [
                "HeraldDelivery", "HeraldSandbox", "HeraldTesting", .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldSandboxTests",
            dependencies: [
                "HeraldSandbox", "HeraldHTTP", "HeraldTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldAPITests",
            dependencies: [
                "HeraldAPI", "HeraldStore", "HeraldAMQP", "HeraldPostgres", "HeraldTesting", "herald",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldWorkerTests",
            dependencies: [
                "HeraldWorker", "HeraldTesting", "HeraldSandbox", "HeraldHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The crash and drain tests run the built `herald` binary.
                "herald",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "HeraldCLITests", dependencies: ["herald", "HeraldTesting"], swiftSettings: strict),
    ]
)
