import Foundation
import HeraldAMQP
import HeraldCore
import HeraldDelivery
import HeraldHTTP
import HeraldPostgres
import HeraldSandbox
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// Issue 5 at the worker level: the worker delivers through the real APNs and FCM senders
/// (a `RoutingSender`) to a sandbox started in the test.
@Suite("Provider delivery", .timeLimit(.minutes(3)))
struct ProviderDeliveryTests {
    static let topic = "com.example.herald"

    /// A sandbox and a routing sender pointed at it.
    static func withSandbox<T>(_ body: (RunningSandbox, RoutingSender) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-worker-sandbox-\(UUID().uuidString)")
        let sandbox = try await Sandbox.start(SandboxConfiguration(directory: directory, topics: [topic]))
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let http = HTTPClientConfiguration(requestTimeout: .seconds(20), tls: .init(caFile: sandbox.files.caCertificate.path))
            let apns = try APNsSender(
                configuration: .token(
                    topics: [topic], keyFile: sandbox.files.apnsKey.path, keyID: sandbox.credentials.keyID, teamID: sandbox.credentials.teamID,
                    environment: .sandbox, baseURL: sandbox.apnsURL, http: http
                ))
            let fcm = try FCMSender(configuration: .serviceAccounts([sandbox.files.serviceAccount.path], baseURL: sandbox.fcmURL, http: http))
            let result = try await body(sandbox, RoutingSender(ios: apns, android: fcm))
            await sandbox.shutdown()
            return result
        } catch {
            await sandbox.shutdown()
            throw error
        }
    }

    @Test func iOSAndAndroidDevicesReceiveTheRenderedSeedEvent() async throws {
        try await WorkerFixture.with { fixture in
            try await Self.withSandbox { sandbox, sender in
                let iosToken = TestEvents.apnsToken(1)
                try await fixture.store.devices.importDevices([
                    TestEvents.device("iphone", user: "119973638970", platform: .ios, token: iosToken, zone: "w1", branch: "101"),
                    TestEvents.device("pixel", user: "119973638971", platform: .android, token: "fcm-token-pixel", zone: "yessplay", branch: "101"),
                ])
                try await fixture.withWorker(sender: sender) { worker in
                    try await fixture.publish(Data(TestEvents.seedSample.utf8))
                    try await waitUntil("both pushes", timeout: .seconds(30)) { worker.statistics.acked == 1 }
                    #expect(worker.statistics.delivered == 2)
                }
                let pushes = sandbox.pushes
                #expect(pushes.count == 2)
                let apns = try #require(pushes.first { $0.provider == .apns })
                #expect(apns.token == iosToken)
                #expect(apns.headers["apns-topic"] == Self.topic)
                #expect(apns.headers["apns-push-type"] == "alert")
                let key = DeliveryKey(messageKey: DeliveryKey.messageKey(forBody: Data(TestEvents.seedSample.utf8)), deviceId: "iphone", userId: "119973638970")
                #expect(apns.headers["apns-collapse-id"] == key.rawValue)
                let aps = try #require(apns.json?["aps"] as? [String: Any])
                #expect(aps["alert"] as? String == "Перевод v1: v2 из v3")
                #expect(aps["acme_userid"] as? String == "119973638970")
                let fcm = try #require(pushes.first { $0.provider == .fcm })
                let message = try #require(fcm.json?["message"] as? [String: Any])
                #expect(message["token"] as? String == "fcm-token-pixel")
                let data = try #require(message["data"] as? [String: String])
                #expect(data["msg"] == "Перевод v1: v2 из v3")
                #expect(data["eid"] == "EVENT 006")
                #expect(fcm.headers["authorization"]?.hasPrefix("Bearer") == true)
            }
        }
    }

    /// The unread badge as the providers receive it (the sandbox records the requests): APNs
    /// `aps.badge`, FCM `data.badge`, counting down after a read.
    @Test func theBadgeReachesTheProviders() async throws {
        try await WorkerFixture.with { fixture in
            try await Self.withSandbox { sandbox, sender in
                try await fixture.store.devices.importDevices([
                    TestEvents.device("iphone", user: "u1", platform: .ios, token: TestEvents.apnsToken(7)),
                    TestEvents.device("pixel", user: "u1", platform: .android, token: "fcm-token-pixel-badge"),
                ])
                var configuration = fixture.configuration()
                configuration.payloadBuilder = PayloadBuilder(profile: .modern)
                try await fixture.withWorker(sender: sender, configuration: configuration) { worker in
                    try await fixture.publish((1...2).map { TestEvents.xml(users: ["u1"], sequence: $0) })
                    try await waitUntil("two events", timeout: .seconds(30)) { worker.statistics.acked == 2 }
                    _ = try await fixture.store.devices.markRead(deviceId: "iphone", userId: "u1", position: 2)
                    try await fixture.publish(TestEvents.xml(users: ["u1"], sequence: 3))
                    try await waitUntil("the third event", timeout: .seconds(30)) { worker.statistics.acked == 3 }
                }
                let apns = sandbox.pushes.filter { $0.provider == .apns }.compactMap { ($0.json?["aps"] as? [String: Any])?["badge"] as? Int }
                let fcm = sandbox.pushes.filter { $0.provider == .fcm }.compactMap {
                    (($0.json?["message"] as? [String: Any])?["data"] as? [String: Any])?["badge"] as? String
                }
                #expect(apns.sorted() == [1, 1, 2], "1, 2, then 1 after reading up to 2 (the sandbox may record out of order)")
                #expect(fcm.sorted() == ["1", "2", "3"])
            }
        }
    }

    @Test func aTokenAnswering410IsMarkedDeadAndNeverTriedAgain() async throws {
        try await WorkerFixture.with { fixture in
            try await Self.withSandbox { sandbox, sender in
                let dead = TestEvents.apnsToken(410)
                let healthy = TestEvents.apnsToken(200)
                sandbox.setBehavior(.unregistered, for: dead)
                try await fixture.store.devices.importDevices([
                    TestEvents.device("old-phone", user: "u1", platform: .ios, token: dead),
                    TestEvents.device("new-phone", user: "u1", platform: .ios, token: healthy),
                ])
                try await fixture.withWorker(sender: sender) { worker in
                    try await fixture.publish(TestEvents.xml(users: ["u1"], parameters: ["1"], sequence: 1))
                    try await waitUntil("the first event", timeout: .seconds(30)) { worker.statistics.acked == 1 }
                    #expect(worker.statistics.tokenDead == 1)
                    #expect(try await fixture.store.devices.device(id: "old-phone")?.tokenState == .dead)
                    try await fixture.publish(TestEvents.xml(users: ["u1"], parameters: ["2"], sequence: 2))
                    try await waitUntil("the second event", timeout: .seconds(30)) { worker.statistics.acked == 2 }
                }
                #expect(sandbox.counters(for: dead).requests == 1, "the dead token is not tried again")
                #expect(sandbox.counters(for: healthy).accepted == 2)
            }
        }
    }

    @Test func throttledAndUnavailableTokensAreRetriedAndDeliveredInOrder() async throws {
        try await WorkerFixture.with { fixture in
            try await Self.withSandbox { sandbox, sender in
                let flaky = TestEvents.apnsToken(503)
                let throttled = TestEvents.apnsToken(429)
                sandbox.setBehavior(.flaky(failures: 2), for: flaky)
                sandbox.setBehavior(.throttled(retryAfter: 1), for: throttled)
                try await fixture.store.devices.importDevices([
                    TestEvents.device("flaky", user: "u1", platform: .ios, token: flaky),
                    TestEvents.device("throttled", user: "u2", platform: .ios, token: throttled),
                ])
                try await fixture.withWorker(sender: sender) { worker in
                    for n in 0..<3 {
                        try await fixture.publish(TestEvents.xml(users: ["u1"], parameters: ["\(n)"], sequence: n))
                        try await fixture.publish(TestEvents.xml(users: ["u2"], parameters: ["\(n)"], sequence: 10 + n))
                    }
                    try await waitUntil("the throttled token is asked again", timeout: .seconds(30)) { sandbox.counters(for: throttled).requests >= 2 }
                    sandbox.setBehavior(nil, for: throttled)
                    try await waitUntil("all six", timeout: .seconds(60)) { worker.statistics.acked == 6 }
                    #expect(worker.statistics.delivered == 6)
                    #expect(worker.statistics.retries >= 3)
                }
                #expect(sandbox.counters(for: flaky).requests == 5, "two 503s, then three accepted")
                for token in [flaky, throttled] {
                    let order = sandbox.pushes.filter { $0.token == token }.compactMap { push in
                        ((push.json?["aps"] as? [String: Any])?["acme_params"] as? [[String: String]])?.first?["value"]
                    }
                    #expect(order == ["0", "1", "2"], "per-user order kept through retries")
                }
            }
        }
    }

    /// Issue 11 §2 through the real senders: APNs answering 503 to every push opens its circuit
    /// breaker; the FCM pushes are not held, no iPhone push is given up, and once APNs answers
    /// again every iPhone gets its push exactly once, within seconds.
    @Test func anAPNsOutageDoesNotHoldFCMAndLosesNothing() async throws {
        try await WorkerFixture.with { fixture in
            try await Self.withSandbox { sandbox, sender in
                let users = (0..<20).map { "user-\($0)" }
                try await fixture.store.devices.importDevices(
                    users.enumerated().flatMap { n, user in
                        [
                            TestEvents.device("iphone-\(n)", user: user, platform: .ios, token: TestEvents.apnsToken(1_000 + n)),
                            TestEvents.device("pixel-\(n)", user: user, platform: .android, token: "fcm-token-\(n)"),
                        ]
                    })
                sandbox.setFault(ProviderFault(status: 503), for: .apns)
                var configuration = fixture.configuration(lanes: 4)
                // Retries alone would give up within the outage (3 attempts); deferred deliveries
                // spend none.
                configuration.retryPolicy = RetryPolicy(
                    initialDelay: .milliseconds(100), maxDelay: .milliseconds(200), jitter: 0, maxAttempts: 3, maxElapsed: .seconds(60))
                configuration.circuitBreaker = CircuitBreaker.Policy(minimumFailures: 5, initialOpen: .milliseconds(500), maximumOpen: .seconds(1))
                try await fixture.withWorker(sender: sender, configuration: configuration) { worker in
                    let started = ContinuousClock.now
                    try await fixture.publish(TestEvents.onePerUser(users))
                    try await waitUntil("every FCM push", timeout: .seconds(15)) { sandbox.pushes.filter { $0.provider == .fcm }.count == 20 }
                    #expect(ContinuousClock.now - started < .seconds(8), "FCM held by the APNs outage")
                    try await waitUntil("every message acknowledged", timeout: .seconds(15)) { worker.statistics.acked >= 20 }
                    #expect(worker.statistics.deferred > 0)
                    sandbox.setFault(nil, for: .apns)
                    let recovered = ContinuousClock.now
                    try await waitUntil("every APNs push", timeout: .seconds(30)) { sandbox.pushes.filter { $0.provider == .apns }.count >= 20 }
                    // Queued in the backlog, they go once a probe succeeds: within `maximumOpen` (1 s).
                    #expect(ContinuousClock.now - recovered < .seconds(5), "the iPhones got their pushes late after APNs came back")
                    try await fixture.waitUntilSettled(worker)
                    #expect(worker.statistics.failed == 0, "nothing given up")
                }
                let apns = sandbox.pushes.filter { $0.provider == .apns }
                #expect(apns.count == 20 && Set(apns.map(\.token)).count == 20, "each iPhone once")
            }
        }
    }
}
