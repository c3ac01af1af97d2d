import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

@Suite("DeliveryJournal")
struct DeliveryJournalTests {
    static func claim(_ message: String, _ device: String, user: String = "u1", app: String? = nil) -> DeliveryClaim {
        DeliveryClaim(
            deliveryKey: DeliveryKey(messageKey: message, deviceId: device, userId: user), messageKey: message, userId: user,
            deviceId: device, app: app
        )
    }

    @Test func freshThenInDoubtThenTerminal() async throws {
        try await StoreFixture.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            try await store.devices.subscribe(StoreFixture.registration("d2", user: "u1"))
            let a = Self.claim("m1", "d1"), b = Self.claim("m1", "d2"), c = Self.claim("m2", "d1")
            #expect(try await store.journal.claim([]) == [])
            #expect(try await store.journal.claim([a, b]) == [.fresh(position: 1), .fresh(position: 1)])
            // Redelivery before any outcome: in doubt, same position.
            #expect(try await store.journal.claim([a, c]) == [.inDoubt(position: 1, attempts: 0), .fresh(position: 2)])

            #expect(try await store.journal.record([.retrying(a.deliveryKey, attempts: 1, reason: "503")]) == 1)
            #expect(try await store.journal.claim([a]) == [.inDoubt(position: 1, attempts: 1)])
            #expect(try await store.journal.record([
                .sent(a.deliveryKey, attempts: 2, eventId: "TransferIssued", payload: #"{"aps":{"alert":"1"}}"#),
                .failed(b.deliveryKey, attempts: 1, reason: "PayloadTooLarge"),
            ]) == 2)
            #expect(try await store.journal.claim([a, b, c]) == [.alreadySent, .alreadyTerminal(.failed), .inDoubt(position: 2, attempts: 0)])

            let status = try #require(try await store.journal.status(of: a.deliveryKey))
            #expect(status.state == .sent && status.attempts == 2 && status.position == 1 && status.messageKey == "m1")
            #expect(try await store.journal.status(of: DeliveryKey(rawValue: "nope")) == nil)

            // Terminal is final: a late record changes nothing and logs nothing twice.
            #expect(try await store.journal.record([.failed(a.deliveryKey, attempts: 9, reason: "late")]) == 0)
            #expect(try await store.journal.record([.sent(a.deliveryKey, attempts: 9, eventId: nil, payload: "again")]) == 0)
            #expect(try await store.journal.status(of: a.deliveryKey)?.state == .sent)
            let log = try await store.notificationLog.entries(deviceId: "d1", after: 0)
            #expect(log.map(\.position) == [1])
            #expect(log.first?.payload == #"{"aps":{"alert":"1"}}"#)
            #expect(log.first?.eventId == "TransferIssued")
            #expect(log.first?.deliveryKey == a.deliveryKey)
        }
    }

    @Test func consecutivePositionsPerDeviceInClaimOrder() async throws {
        try await StoreFixture.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            try await store.devices.subscribe(StoreFixture.registration("d2", user: "u2"))
            let claims = [
                Self.claim("m1", "d1"), Self.claim("m1", "d2", user: "u2"), Self.claim("m2", "d1"), Self.claim("m1", "d1", user: "u9"),
                Self.claim("m3", "d1"), Self.claim("m2", "d1"), Self.claim("m1", "ghost"),
            ]
            // A key repeated in the batch is fresh once; a device that does not exist is reported.
            #expect(try await store.journal.claim(claims) == [
                .fresh(position: 1), .fresh(position: 1), .fresh(position: 2), .fresh(position: 3),
                .fresh(position: 4), .inDoubt(position: 2, attempts: 0), .unknownDevice,
            ])
            #expect(try await store.journal.claim([Self.claim("m4", "d1"), Self.claim("m2", "d2", user: "u2")]) == [.fresh(position: 5), .fresh(position: 2)])
            #expect(try await store.devices.device(id: "d1")?.nextPosition == 6)
        }
    }

    @Test func concurrentClaimsOfOneKeyAreFreshExactlyOnce() async throws {
        try await StoreFixture.with(configure: { $0.database.poolSize = 4 }) { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            for round in 0..<25 {
                let claims = (0..<20).map { Self.claim("m\(round)-\($0)", "d1") }
                let results = try await withThrowingTaskGroup(of: [ClaimResult].self) { group in
                    group.addTask { try await store.journal.claim(claims) }
                    group.addTask { try await store.journal.claim(claims.reversed()) }
                    var all: [ClaimResult] = []
                    for try await batch in group { all += batch }
                    return all
                }
                let fresh = results.compactMap { if case .fresh(let p) = $0 { p } else { nil } }
                let inDoubt = results.compactMap { if case .inDoubt(let p, _) = $0 { p } else { nil } }
                #expect(fresh.count == claims.count, "round \(round)")
                #expect(inDoubt.count == claims.count, "round \(round)")
                #expect(Set(fresh) == Set(inDoubt))
                #expect(Set(fresh).count == claims.count, "positions never repeat")
            }
            #expect(try await store.devices.device(id: "d1")?.nextPosition == 25 * 20 + 1)
        }
    }

    /// Batches over the same devices in opposite orders: devices are locked in one global
    /// order, so neither deadlocks, and every device's positions stay contiguous.
    @Test func concurrentBatchesOverSharedDevicesNeitherDeadlockNorSkipPositions() async throws {
        try await StoreFixture.with(configure: { $0.database.poolSize = 4 }) { store, database in
            let devices = (0..<40).map { "d\($0)" }
            try await store.devices.importDevices(devices.map { StoreFixture.registration($0, user: "u-\($0)") })
            let rounds = 15
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<3 {
                    group.addTask {
                        for round in 0..<rounds {
                            var claims = devices.map { Self.claim("lane\(lane)-round\(round)", $0) }
                            if lane % 2 == 1 { claims.reverse() }
                            let results = try await store.journal.claim(claims)
                            #expect(results.allSatisfy { if case .fresh = $0 { true } else { false } })
                        }
                    }
                }
                try await group.waitForAll()
            }
            for device in devices {
                #expect(try await store.devices.device(id: device)?.nextPosition == 3 * rounds + 1)
            }
            let irregular = try await database.admin.query(
                """
                SELECT count(*) FROM (
                    SELECT count(DISTINCT position) AS n, min(position) AS low, max(position) AS high FROM deliveries GROUP BY device_ref
                ) p WHERE n <> $1 OR low <> 1 OR high <> $1
                """,
                [3 * rounds]
            )
            #expect(try irregular.first?.decode(Int.self, at: 0) == 0)
        }
    }

    @Test func tokenDeadRecordKillsOnlyTheSameToken() async throws {
        try await StoreFixture.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1", token: "T1"))
            try await store.devices.subscribe(StoreFixture.registration("d2", user: "u1", token: "T2"))
            let a = Self.claim("m1", "d1"), b = Self.claim("m1", "d2")
            _ = try await store.journal.claim([a, b])
            try await store.devices.setToken("T2-refreshed", deviceId: "d2")
            try await store.journal.record([
                .tokenDead(a.deliveryKey, attempts: 1, token: "T1", reason: "Unregistered"),
                .tokenDead(b.deliveryKey, attempts: 1, token: "T2", reason: "Unregistered"),
            ])
            #expect(try await store.devices.device(id: "d1")?.tokenState == .dead)
            #expect(try await store.devices.device(id: "d1")?.tokenDeadReason == "Unregistered")
            #expect(try await store.devices.device(id: "d2")?.tokenState == .active)
            #expect(try await store.journal.status(of: b.deliveryKey)?.state == .tokenDead)
            #expect(try await store.journal.status(of: b.deliveryKey)?.lastError == "Unregistered")
            #expect(try await store.devices.subscriptions(forUsers: ["u1"]).map(\.deviceId) == ["d2"])
        }
    }

    @Test func expireForgetsOldDeliveries() async throws {
        try await StoreFixture.with { store, database in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            let old = Self.claim("old", "d1"), young = Self.claim("young", "d1")
            _ = try await store.journal.claim([old, young])
            try await database.admin.execute("UPDATE deliveries SET claimed_at = now() - interval '30 days' WHERE message_key = 'old'")
            #expect(try await store.journal.expire() == 1)
            #expect(try await store.journal.status(of: old.deliveryKey) == nil)
            #expect(try await store.journal.status(of: young.deliveryKey) != nil)
        }
    }
}
