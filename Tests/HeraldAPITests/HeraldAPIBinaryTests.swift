import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Hummingbird
import Testing

/// HTTP tests against a running `herald api` process with a real (fresh, migrated) database:
/// the issue's end-to-end list, as far as it goes without the worker (see docs/api.md).
@Suite("herald api (spawned)", .serialized, .timeLimit(.minutes(5)))
struct HeraldAPIBinaryTests {
    /// Runs `herald api` on a fresh migrated database; `body` gets the process, a store on the
    /// same database, and the log sender's file.
    static func withServer(
        extraEnvironment: [String: String] = [:], _ body: @escaping @Sendable (RunningAPI, Store, String) async throws -> Void
    ) async throws {
        try await TestDatabase.with { _, database in
            var storeConfiguration = StoreConfiguration(database: database.configuration)
            storeConfiguration.maintenanceInterval = nil
            let store = try Store(configuration: storeConfiguration)
            try await store.migrate()
            let pushes = FileManager.default.temporaryDirectory.appendingPathComponent("herald-api-\(UUID().uuidString).jsonl").path
            var environment = [
                "HERALD_DATABASE_URL": database.url,
                "HERALD_API_JWT_SECRET": String(decoding: TestTokens.secret, as: UTF8.self),
                "HERALD_AMQP_URL": TestEnvironment.amqpURL,
                "HERALD_WORKER_SENDER": "log",
                "HERALD_WORKER_LOG_SENDER_FILE": pushes,
                "HERALD_API_RATE_LIMIT_PER_SECOND": "0",
                "HERALD_API_RESEND_SUMMARY_THRESHOLD": "3",
            ]
            environment.merge(extraEnvironment) { $1 }
            let server = try await RunningAPI.start(environment: environment)
            var failure: (any Error)?
            do {
                try await body(server, store, pushes)
            } catch {
                failure = error
            }
            let status = try await server.stop()
            await store.close()
            try? FileManager.default.removeItem(atPath: pushes)
            if let failure { throw failure }
            #expect(status == 0, "herald api exit status; log:\n\(server.log)")
        }
    }

    @Test(.requires(.rabbitMQ)) func subscriptionLifecycle() async throws {
        try await Self.withServer { server, store, _ in
            try await server.withClient { client in
                let ready = try await client.send(.get, "/readyz")
                #expect(ready.status == 200, "\(ready.text)")
                #expect(ready.json["checks"] as? [String: String] == ["broker": "ok", "database": "ok"])

                let alice = try await TestTokens.token("alice", zone: "w1")
                let bob = try await TestTokens.token("bob")
                let first = PushTokens.apns("phone-1")
                func subscribe(_ token: String, uri: String, culture: String = "ru-ru", tags: [String] = []) async throws -> Int {
                    let list = tags.map { "\"\($0)\"" }.joined(separator: ",")
                    return try await client.send(
                        .post, "/Subscribe.ashx", token: token,
                        json: #"{"os":"ios","culture":"\#(culture)","id":"phone-1","uri":"\#(uri)","tags":[\#(list)]}"#
                    ).status
                }
                // Subscribe, tags replace.
                #expect(try await subscribe(alice, uri: first, tags: ["account", "t1"]) == 200)
                #expect(try await subscribe(alice, uri: first, tags: ["t2"]) == 200)
                var subscription = try #require(try await store.devices.subscriptions(forUsers: ["alice"]).first)
                #expect(subscription.tags == ["t2"])
                #expect(subscription.zoneId == "w1")

                // Refresh token (v1) and change culture.
                let second = PushTokens.apns("phone-1 refreshed")
                let put = try await client.send(
                    .put, "/v1/devices/phone-1", token: alice, json: #"{"platform":"ios","token":"\#(second)","culture":"en-us","tags":["t2"]}"#)
                #expect(put.status == 200)
                subscription = try #require(try await store.devices.subscriptions(forUsers: ["alice"]).first)
                #expect(subscription.token == second)
                #expect(subscription.culture == "en-US")

                // Two users on one device (same token), then unsubscribe some / all.
                #expect(try await subscribe(bob, uri: second, culture: "en-us", tags: ["a", "b"]) == 200)
                #expect(Set(try await store.devices.subscriptions(forUsers: ["alice", "bob"]).map(\.userId)) == ["alice", "bob"])
                #expect(try await client.send(.post, "/Unsubscribe.ashx", token: bob, json: #"{"os":"ios","id":"phone-1","tags":["a"]}"#).status == 200)
                #expect(try await store.devices.subscriptions(forUsers: ["bob"]).first?.tags == ["b"])
                #expect(try await client.send(.post, "/Unsubscribe.ashx", token: bob, json: #"{"os":"ios","id":"phone-1","tags":[]}"#).status == 200)
                #expect(try await store.devices.subscriptions(forUsers: ["bob"]).isEmpty)

                // User switch: another user with another token takes the device alone.
                let carol = try await TestTokens.token("carol")
                let third = PushTokens.apns("carol's token")
                #expect(try await subscribe(carol, uri: third) == 200)
                #expect(try await store.devices.device(id: "phone-1")?.users.map(\.userId) == ["carol"])
                #expect(try await store.devices.subscriptions(forUsers: ["alice"]).isEmpty)

                // `none`: known device, no pushes; the app sees it on GET (seed 003).
                #expect(try await subscribe(carol, uri: "none") == 200)
                let device = try await client.send(.get, "/v1/devices/phone-1", token: carol)
                #expect(device.json["hasToken"] as? Bool == false)
                #expect(try await store.devices.subscriptions(forUsers: ["carol"]).isEmpty)

                // Settings off, then on.
                #expect(try await subscribe(carol, uri: third) == 200)
                #expect(try await client.send(.put, "/v1/me/settings", token: carol, json: #"{"pushesEnabled":false}"#).status == 200)
                #expect(try await store.devices.subscriptions(forUsers: ["carol"]).first?.isEnabled == false)
                #expect(try await client.send(.put, "/v1/me/settings", token: carol, json: #"{"pushesEnabled":true}"#).status == 200)
                #expect(try await store.devices.subscriptions(forUsers: ["carol"]).first?.isEnabled == true)

                let metrics = try await client.send(.get, "/metrics")
                #expect(metrics.status == 200)
                #expect(metrics.text.contains("hb_requests"))
            }
        }
    }

    @Test func missedNotificationsAndResend() async throws {
        try await Self.withServer { server, store, pushes in
            try await server.withClient { client in
                let user = try await TestTokens.token("u1")
                let token = PushTokens.apns("resend")
                #expect(
                    try await client.send(.put, "/v1/devices/r1", token: user, json: #"{"platform":"ios","token":"\#(token)","culture":"ru-RU"}"#).status == 201
                )
                // What the worker records when it sends (claim, then record with the payload).
                try await JournalSeed.record(
                    store, deviceId: "r1", userId: "u1", messageKeys: (1...5).map { "m\($0)" },
                    payload: { n in
                        #"{"aps":{"alert":"push \#(n)"}}"#
                    })

                let missed = try await client.send(.get, "/v1/devices/r1/notifications?after=3", token: user)
                #expect((missed.json["notifications"] as? [[String: Any]])?.compactMap { $0["position"] as? Int } == [4, 5])
                #expect(missed.json["lastPosition"] as? Int == 5)

                let resend = try await client.send(.post, "/v1/devices/r1/notifications/resend", token: user, json: #"{"after":3}"#)
                #expect(resend.json["sent"] as? Int == 2)
                let lines = try String(contentsOfFile: pushes, encoding: .utf8).split(separator: "\n")
                #expect(lines.count == 2)
                #expect(lines.first?.contains(#""alert":"push 4""#) == true)
                #expect(lines.first?.contains(#""position":4"#) == true)

                // More than the threshold (3): one summary push in Russian (the device's culture).
                let summary = try await client.send(.post, "/v1/devices/r1/notifications/resend", token: user, json: #"{"after":0}"#)
                #expect(summary.json["summary"] as? Bool == true)
                let all = try String(contentsOfFile: pushes, encoding: .utf8).split(separator: "\n")
                #expect(all.count == 3)
                #expect(all.last?.contains("Пропущено уведомлений: 5") == true)
            }
        }
    }

    /// Missing/expired/forged tokens, a 1 MB body, and 2,000 mixed invalid requests against the
    /// real server: all refused in the error format, the database unchanged, the server healthy.
    @Test func securityUnderInvalidTraffic() async throws {
        try await Self.withServer { server, store, _ in
            try await server.withClient { client in
                let user = try await TestTokens.token("u1")
                #expect(
                    try await client.send(.put, "/v1/devices/keep", token: user, json: #"{"platform":"ios","token":"none","culture":"ru-RU"}"#).status == 201)
                let before = try await store.devices.list()

                #expect(try await client.send(.get, "/v1/me/settings").errorCode == "unauthorized")
                #expect(try await client.send(.get, "/v1/me/settings", token: try await TestTokens.token("u1", expiresIn: -3600)).errorCode == "token_expired")
                #expect(
                    try await client.send(
                        .get, "/v1/me/settings", token: try await TestTokens.token("u1", secret: Array("x-forged-secret-of-at-least-32-bytes!".utf8))
                    ).errorCode == "invalid_token")
                #expect(try await client.send(.get, "/v1/devices/keep", token: try await TestTokens.token("u2")).errorCode == "device_not_found")

                let invalid = try await InvalidRequests.make(count: 2000, validToken: user)
                for request in invalid {
                    let reply = try await client.send(request.method, request.path, json: request.body, headers: request.headers)
                    #expect((400..<500).contains(reply.status), "\(request.method) \(request.path)")
                    #expect(!reply.errorCode.isEmpty)
                }
                #expect(try await store.devices.list() == before)
                #expect(try await client.send(.get, "/healthz").status == 200)
            }
            // A 1 MB body on its own connection (the server may close it after answering 413).
            try await server.withClient { client in
                let big = #"{"platform":"ios","token":"none","culture":"ru-RU","tags":["\#(String(repeating: "a", count: 1 << 20))"]}"#
                let reply = try await client.send(.put, "/v1/devices/big", token: try await TestTokens.token("u1"), json: big)
                #expect(reply.status == 413)
                #expect(reply.errorCode == "body_too_large")
            }
            try await server.withClient { client in
                let health = try await client.send(.get, "/healthz")
                #expect(health.status == 200)
            }
            #expect(try await store.devices.device(id: "big") == nil)
            #expect(!server.log.contains("Fatal error"))
        }
    }

    @Test func refusesToStartWithoutATokenCheck() throws {
        let result = try HeraldCLI.run(
            ["api", "--listen", "127.0.0.1:0"],
            environment: [
                "HERALD_DATABASE_URL": TestEnvironment.databaseURL, "HERALD_API_JWT_SECRET": "", "HERALD_API_INTROSPECTION_URL": "",
            ], timeout: .seconds(60))
        #expect(result.status != 0)
        #expect(result.stderr.contains("no bearer-token check configured"))
    }
}
