import Foundation
import HTTPTypes
import HeraldAMQP
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Synchronization
import Testing

/// `herald serve` end to end: the API and the worker in one process, a real broker and
/// database, the log sender's file as the providers. What an app does through the API changes
/// what the worker delivers next: culture, settings, the `none` token, two users on a device,
/// a user switch; the worker's pushes are then listed as missed notifications and resent.
@Suite("herald serve (spawned)", .serialized, .timeLimit(.minutes(5)))
struct HeraldServeTests {
    @Test(.requires(.rabbitMQ)) func whatAnAppSetsThroughTheAPIDecidesWhatTheWorkerDelivers() async throws {
        try await ServeFixture.with { serve in
            try await serve.server.withClient { client in
                // Ready once the worker consumes (it connects after the API listens).
                try await waitUntil("herald serve to be ready", timeout: .seconds(20)) {
                    try await client.send(.get, "/readyz").status == 200
                }
                let ready = try await client.send(.get, "/readyz")
                #expect(ready.json["checks"] as? [String: String] == ["database": "ok", "worker": "ok"])

                let alice = try await TestTokens.token("alice")
                let bob = try await TestTokens.token("bob")
                let phone = PushTokens.apns("alice's phone")
                func subscribe(_ token: String, user: String, uri: String, culture: String = "ru-ru") async throws {
                    try await serve.afterChange(of: user) {
                        let reply = try await client.send(
                            .post, "/Subscribe.ashx", token: token,
                            json: #"{"os":"ios","culture":"\#(culture)","id":"phone-a","uri":"\#(uri)","tags":[]}"#)
                        #expect(reply.status == 200, "\(reply.text)")
                    }
                }

                // Subscribed in Russian: the push is rendered in Russian.
                try await subscribe(alice, user: "alice", uri: phone)
                var pushes = try await serve.publish(users: ["alice"])
                #expect(pushes.map(\.device) == ["phone-a"])
                #expect(pushes.first?.body == "Вам поступил перевод.")

                // Culture changed: the next push is in English.
                try await serve.afterChange(of: "alice") {
                    let put = try await client.send(
                        .put, "/v1/devices/phone-a", token: alice, json: #"{"platform":"ios","token":"\#(phone)","culture":"en-us"}"#)
                    #expect(put.status == 200, "\(put.text)")
                }
                pushes = try await serve.publish(users: ["alice"])
                #expect(pushes.map(\.body) == ["You received a transfer"])

                // All pushes off: nothing; on again: delivered.
                try await serve.afterChange(of: "alice") {
                    let off = try await client.send(.put, "/v1/me/settings", token: alice, json: #"{"pushesEnabled":false}"#)
                    #expect(off.status == 200)
                }
                #expect(try await serve.publish(users: ["alice"]).isEmpty)
                try await serve.afterChange(of: "alice") {
                    let on = try await client.send(.put, "/v1/me/settings", token: alice, json: #"{"pushesEnabled":true}"#)
                    #expect(on.status == 200)
                }
                #expect(try await serve.publish(users: ["alice"]).count == 1)

                // Two users on one device (same token): each user's events reach it.
                try await subscribe(bob, user: "bob", uri: phone, culture: "en-us")
                pushes = try await serve.publish(users: ["alice", "bob"])
                #expect(pushes.map(\.user).sorted() == ["alice", "bob"])
                #expect(Set(pushes.map(\.device)) == ["phone-a"])

                // What the worker sent is the device's numbered log (each user sees their own):
                // missed after N, then resent.
                let missed = try await client.send(.get, "/v1/devices/phone-a/notifications?after=0", token: alice)
                #expect((missed.json["notifications"] as? [[String: Any]])?.compactMap { $0["position"] as? Int } == [1, 2, 3, 4], "\(missed.text)")
                let before = try serve.pushes().count
                let resend = try await client.send(.post, "/v1/devices/phone-a/notifications/resend", token: alice, json: #"{"after":3}"#)
                #expect(resend.json["sent"] as? Int == 1, "\(resend.text)")
                let resent = try serve.pushes().dropFirst(before)
                #expect(resent.map(\.user) == ["alice"])
                #expect(resent.map(\.body) == ["You received a transfer"])

                // `none`: the device stays known but receives nothing.
                try await subscribe(bob, user: "bob", uri: "none", culture: "en-us")
                #expect(try await serve.publish(users: ["alice", "bob"]).isEmpty)

                // A user switch: carol logs in with a new token and alone gets the device's pushes.
                let carol = try await TestTokens.token("carol")
                try await subscribe(carol, user: "carol", uri: PushTokens.apns("carol's phone"))
                pushes = try await serve.publish(users: ["alice", "bob", "carol"])
                #expect(pushes.map(\.user) == ["carol"])

                let metrics = try await client.send(.get, "/metrics")
                #expect(metrics.text.contains("herald_messages_acked_total"))
                #expect(metrics.text.contains("hb_requests"))
            }
        }
    }
}

extension HeraldServeTests {
    /// The API's settings are checked like the worker's: a missing token check is a
    /// configuration error (exit status 78), named, before anything is consumed.
    @Test func refusesToStartWithoutATokenCheck() async throws {
        try await TestDatabase.with { _, database in
            let store = try Store(configuration: StoreConfiguration(database: database.configuration))
            try await store.migrate()
            await store.close()
            let result = try HeraldCLI.run(
                ["serve", "--listen", "127.0.0.1:0"],
                environment: [
                    "HERALD_DATABASE_URL": database.url, "HERALD_AMQP_URL": TestEnvironment.amqpURL,
                    "HERALD_AMQP_QUEUE": TestEnvironment.uniqueName("herald.serve.q"),
                    "HERALD_API_JWT_SECRET": "", "HERALD_API_INTROSPECTION_URL": "", "HERALD_LOG_LEVEL": "error",
                ], timeout: .seconds(60))
            #expect(result.status == 78, "\(result.stderr)")
            #expect(result.stderr.contains("herald serve: "))
            #expect(result.stderr.contains("no bearer-token check configured"))
        }
    }
}

/// A fresh database with the repository's templates, a unique queue, and `herald serve` on
/// them with the log sender; publishes events and reads the pushes back.
final class ServeFixture: Sendable {
    /// One line of the log sender's file.
    struct Push: Sendable {
        var device: String
        var user: String
        var body: String
    }

    let server: RunningAPI
    let amqp: AMQPConnection
    let topology: HeraldTopology
    let pushesPath: String
    let changes: UserChangeWatch
    private let published = Atomic<Int>(0)

    private init(server: RunningAPI, amqp: AMQPConnection, topology: HeraldTopology, pushesPath: String, changes: UserChangeWatch) {
        self.server = server
        self.amqp = amqp
        self.topology = topology
        self.pushesPath = pushesPath
        self.changes = changes
    }

    static func with(_ body: @escaping @Sendable (ServeFixture) async throws -> Void) async throws {
        try await TestDatabase.with { _, database in
            var storeConfiguration = StoreConfiguration(database: database.configuration)
            storeConfiguration.maintenanceInterval = nil
            let store = try Store(configuration: storeConfiguration)
            try await store.migrate()
            await store.close()
            let templates = TestEnvironment.packageRoot.appendingPathComponent("templates").path
            let imported = try HeraldCLI.run(
                ["templates", "import", templates], environment: ["HERALD_DATABASE_URL": database.url, "HERALD_LOG_LEVEL": "error"])
            try #require(imported.status == 0, "\(imported.stderr)")

            let topology = HeraldTopology(exchange: TestEnvironment.uniqueName("herald.serve.x"), queue: TestEnvironment.uniqueName("herald.serve.q"))
            let amqp = try await AMQPConnection.connect(try AMQPConfiguration(url: TestEnvironment.amqpURL))
            let pushesPath = FileManager.default.temporaryDirectory.appendingPathComponent("herald-serve-\(UUID().uuidString).jsonl").path
            let changes = try UserChangeWatch(database: database.configuration)
            var failure: (any Error)?
            do {
                try await changes.waitUntilListening()
                let server = try await RunningAPI.start(
                    command: "serve",
                    environment: [
                        "HERALD_DATABASE_URL": database.url,
                        "HERALD_AMQP_URL": TestEnvironment.amqpURL,
                        "HERALD_AMQP_QUEUE": topology.queue,
                        "HERALD_AMQP_EXCHANGE": topology.exchange,
                        "HERALD_API_JWT_SECRET": String(decoding: TestTokens.secret, as: UTF8.self),
                        "HERALD_API_RATE_LIMIT_PER_SECOND": "0",
                        "HERALD_WORKER_SENDER": "log",
                        "HERALD_WORKER_LOG_SENDER_FILE": pushesPath,
                        "HERALD_LOG_LEVEL": "warning",
                    ])
                let fixture = ServeFixture(server: server, amqp: amqp, topology: topology, pushesPath: pushesPath, changes: changes)
                do {
                    try await body(fixture)
                } catch {
                    failure = error
                }
                let status = try await server.stop()
                if failure == nil { #expect(status == 0, "herald serve exit status; log:\n\(server.log)") }
            } catch {
                failure = error
            }
            changes.stop()
            _ = try? await amqp.deleteQueue(topology.queue)
            _ = try? await amqp.deleteQueue(topology.deadLetterQueue)
            try? await amqp.deleteExchange(topology.exchange)
            try? await amqp.deleteExchange(topology.deadLetterExchange)
            await amqp.close()
            try? FileManager.default.removeItem(atPath: pushesPath)
            if let failure { throw failure }
        }
    }

    /// Runs `change` (an API call) and returns once the serving process has applied every
    /// change notification it caused (its `herald_subscription_changes_total` has counted as
    /// many as this test's own listener heard since), so that its next message sees the change.
    func afterChange(of user: String, _ change: () async throws -> Void) async throws {
        let seen = changes.count(for: user), heard = changes.total
        let applied = try await metric("herald_subscription_changes_total")
        try await change()
        try await waitUntil("a change notification for \(user)", timeout: .seconds(10)) { changes.count(for: user) > seen }
        let caused = changes.total - heard
        try await waitUntil("herald serve to apply \(caused) change notification(s)", timeout: .seconds(10)) {
            try await metric("herald_subscription_changes_total") >= applied + caused
        }
    }

    /// Publishes one `TransferIssued` event for `users`, waits until the worker acknowledged
    /// it, and returns the pushes it produced.
    func publish(users: [String]) async throws -> [Push] {
        let before = try pushes().count
        let sequence = published.add(1, ordering: .relaxed).newValue
        let filters = users.map { #"<Filter name="UserId" value="\#($0)" />"# }.joined()
        let body = """
            <PushNotification><EventId>TransferIssued</EventId><EventType>Message</EventType>\
            <EventDateTime>2015-04-30T17:32:47.\(String(format: "%07d", sequence))+03:00</EventDateTime>\
            <EventFilters>\(filters)</EventFilters><EventParams /></PushNotification>
            """
        try await amqp.publish(
            AMQPOutgoingMessage(
                exchange: topology.exchange, routingKey: topology.routingKey, body: Data(body.utf8),
                properties: AMQPProperties(contentType: "application/xml", deliveryMode: .persistent)
            ))
        try await waitUntil("the worker to acknowledge message \(sequence)", timeout: .seconds(20)) {
            try await acknowledged() >= sequence
        }
        return Array(try pushes().dropFirst(before))
    }

    /// Every push the log sender wrote so far.
    func pushes() throws -> [Push] {
        guard let text = try? String(contentsOfFile: pushesPath, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let payload = object["payload"] as? [String: Any]
            let alert = (payload?["aps"] as? [String: Any])?["alert"]
            let body = (alert as? String) ?? ((alert as? [String: Any])?["body"] as? String) ?? ""
            return Push(device: object["device_id"] as? String ?? "", user: object["user_id"] as? String ?? "", body: body)
        }
    }

    /// `herald_messages_acked_total` from the process' `/metrics`.
    private func acknowledged() async throws -> Int {
        try await metric("herald_messages_acked_total")
    }

    /// A counter from the process' `/metrics` (0 before it is first counted).
    private func metric(_ name: String) async throws -> Int {
        try await server.withClient { client in
            let text = try await client.send(.get, "/metrics").text
            return text.split(separator: "\n")
                .filter { $0.hasPrefix(name + " ") || $0.hasPrefix(name + "{") }
                .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
                .reduce(0) { $0 + Int($1) }
        }
    }
}

/// Counts `herald_devices` notifications per user id (the channel the subscription caches
/// listen on).
final class UserChangeWatch: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let client: PostgresClient

    init(database: PostgresConfiguration) throws {
        client = try PostgresClient(configuration: database)
        let notifications = client.listen(channel: "herald_devices")
        task.withLock {
            $0 = Task { [self] in
                for await event in notifications {
                    if case .notification(let notification) = event {
                        counts.withLock { $0[notification.payload, default: 0] += 1 }
                    }
                }
            }
        }
    }

    func count(for user: String) -> Int { counts.withLock { $0[user, default: 0] } }
    /// Every notification heard.
    var total: Int { counts.withLock { $0.values.reduce(0, +) } }

    /// Notifies a probe until the listener hears it.
    func waitUntilListening() async throws {
        try await waitUntil("the herald_devices listener", timeout: .seconds(10)) {
            try await self.client.notify(channel: "herald_devices", payload: "probe")
            try await Task.sleep(for: .milliseconds(50))
            return self.count(for: "probe") > 0
        }
    }

    func stop() {
        task.withLock { $0?.cancel() }
        Task { [client] in await client.close() }
    }
}
