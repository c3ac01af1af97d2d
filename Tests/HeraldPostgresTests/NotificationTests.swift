import HeraldPostgres
import HeraldTesting
import Testing

/// Collects a listener's events on a background task so tests can wait with a timeout.
actor EventLog {
    private(set) var events: [PostgresNotificationEvent] = []

    func append(_ event: PostgresNotificationEvent) { events.append(event) }

    func count(where predicate: (PostgresNotificationEvent) -> Bool) -> Int { events.filter(predicate).count }

    var payloads: [String] {
        events.compactMap { if case .notification(let notification) = $0 { notification.payload } else { nil } }
    }

    static func consume(_ notifications: PostgresNotifications) -> (EventLog, Task<Void, Never>) {
        let log = EventLog()
        let task = Task {
            for await event in notifications { await log.append(event) }
        }
        return (log, task)
    }
}

extension PostgresNotificationEvent {
    var isListening: Bool { if case .listening = self { true } else { false } }
    var isReconnected: Bool { if case .reconnected = self { true } else { false } }
    var isDisconnected: Bool { if case .disconnected = self { true } else { false } }
}

@Suite("LISTEN/NOTIFY")
struct NotificationTests {
    @Test func deliversAUnicodeNotification() async throws {
        try await TestDatabase.with { client, _ in
            let channel = "herald.test-Ch\"an nel ü \(UInt32.random(in: 0...UInt32.max))"
            let (log, consumer) = EventLog.consume(client.listen(channel: channel))
            defer { consumer.cancel() }
            try await waitUntil("listening", timeout: .seconds(10)) { await log.count { $0.isListening } == 1 }

            let payload = "Привет 🚀 \"json\": {'a': 1}; NOTIFY x; -- 日本 e\u{301}"
            let start = ContinuousClock.now
            try await client.notify(channel: channel, payload: payload)
            try await client.notify(channel: "some other channel", payload: "not for us")
            try await waitUntil("the notification", timeout: .seconds(5)) { await log.payloads.contains(payload) }
            print("notify → listener latency: \(ContinuousClock.now - start)")

            let events = await log.events
            guard case .notification(let notification) = events.last else {
                Issue.record("expected a notification, got \(events)")
                return
            }
            #expect(notification.channel == channel)
            #expect(notification.payload == payload)
            #expect(notification.backendPID > 0)
            #expect(await log.payloads == [payload])
        }
    }

    @Test func reconnectsAfterTheBackendIsTerminated() async throws {
        try await TestDatabase.with { client, database in
            var configuration = database.configuration
            configuration.reconnectInitialDelay = .milliseconds(50)
            let channel = "herald_reconnect_\(UInt32.random(in: 0...UInt32.max))"
            let listenerClient = try PostgresClient(configuration: configuration)
            let (log, consumer) = EventLog.consume(listenerClient.listen(channel: channel))
            defer { consumer.cancel() }
            try await waitUntil("listening", timeout: .seconds(10)) { await log.count { $0.isListening } == 1 }
            try await client.notify(channel: channel, payload: "before")
            try await waitUntil("first notification", timeout: .seconds(5)) { await log.payloads == ["before"] }

            let listeners = try await database.backendPIDs(applicationName: "herald-tests listener")
            #expect(listeners.count == 1)
            for pid in listeners { try await database.terminate(pid) }

            try await waitUntil("disconnected and reconnected", timeout: .seconds(10)) {
                let disconnected = await log.count { $0.isDisconnected }
                let reconnected = await log.count { $0.isReconnected }
                return disconnected == 1 && reconnected == 1
            }
            let newListeners = try await database.backendPIDs(applicationName: "herald-tests listener")
            #expect(newListeners.count == 1 && newListeners != listeners)

            try await client.notify(channel: channel, payload: "after")
            try await waitUntil("notification after reconnect", timeout: .seconds(5)) {
                await log.payloads == ["before", "after"]
            }
            await listenerClient.close()
        }
    }

    @Test func listenerStopsWhenTheConsumerIsCancelled() async throws {
        try await TestDatabase.with { client, database in
            let (log, consumer) = EventLog.consume(client.listen(channel: "herald_stop"))
            try await waitUntil("listening", timeout: .seconds(10)) { await log.count { $0.isListening } == 1 }
            #expect(try await database.backendPIDs(applicationName: "herald-tests listener").count == 1)
            consumer.cancel()
            await consumer.value
            try await waitUntil("listener backend gone", timeout: .seconds(5)) {
                try await database.backendPIDs(applicationName: "herald-tests listener").isEmpty
            }
        }
    }
}
