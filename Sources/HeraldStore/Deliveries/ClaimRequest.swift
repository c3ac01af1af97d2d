import Foundation
import HeraldPostgres

/// One ``ClaimBatch`` as the claim statement takes it (its parameters, distinct keys only) and
/// the reading of that statement's answer: shared by ``DeliveryJournal/claim(_:)`` and the
/// ``ClaimQueue``.
struct ClaimRequest: Sendable {
    let batch: ClaimBatch
    /// The batch's index of each distinct key, in first-seen order (a key repeated in the batch
    /// is new at its first place).
    let distinct: [Int]
    /// Per message of the batch, its 1-based place in `distinct`; 0 for a repeat.
    private let ordinals: [Int]
    /// The messages' columns (`$1`–`$5`), the same for either statement.
    private let messageColumns: [any PostgresBindable]
    /// The device of each delivery that takes a position if its message is new (planned, in
    /// batch order).
    private let plannedDevices: [Int]

    init(_ batch: ClaimBatch) {
        self.batch = batch
        var seen = Set<UUID>(minimumCapacity: batch.messages.count)
        var distinct: [Int] = []
        distinct.reserveCapacity(batch.messages.count)
        for (index, key) in batch.messages.enumerated() where seen.insert(key.digest).inserted {
            distinct.append(index)
        }
        var ordinals = [Int](repeating: 0, count: batch.messages.count)
        for (position, index) in distinct.enumerated() { ordinals[index] = position + 1 }
        var planned = [Int](repeating: 0, count: distinct.count)
        var plannedDevices: [Int] = []
        plannedDevices.reserveCapacity(batch.deliveries.count)
        for index in batch.deliveries.indices {
            let ord = ordinals[batch.deliveries[index].message], deviceRef = batch.deliveries[index].deviceRef
            guard ord > 0, deviceRef >= 0 else { continue }
            planned[ord - 1] += 1
            plannedDevices.append(Int(deviceRef))
        }
        let keys = distinct.map { batch.messages[$0].digest }
        let stored = distinct.map { batch.messages[$0].stored }
        let eventIds: [String?] = distinct.map { $0 < batch.eventIds.count ? batch.eventIds[$0] : nil }
        self.distinct = distinct
        self.ordinals = ordinals
        self.plannedDevices = plannedDevices
        self.messageColumns = [keys, stored.map(\.text), PostgresByteaArray(stored.map(\.hash)), eventIds, planned]
    }

    /// The parameters of ``sql(skippingKnown:)``: the messages' columns, then the deliveries'.
    /// Skipping known keys, each delivery's message ordinal and device, of which the statement
    /// counts those of new messages. Otherwise every distinct message is new (or the statement
    /// fails), so each device comes once, in ascending order (one lock order for concurrent
    /// claims), with the number of positions it takes.
    func parameters(skippingKnown: Bool) -> [any PostgresBindable] {
        let deliveries = batch.deliveries
        if skippingKnown {
            return messageColumns + [deliveries.indices.map { ordinals[deliveries[$0].message] }, deliveries.indices.map { Int(deliveries[$0].deviceRef) }]
        }
        let devices = plannedDevices.sorted()
        var refs: [Int] = [], counts: [Int] = []
        refs.reserveCapacity(devices.count)
        counts.reserveCapacity(devices.count)
        for device in devices {
            if refs.last == device {
                counts[counts.count - 1] += 1
            } else {
                refs.append(device)
                counts.append(1)
            }
        }
        return messageColumns + [refs, counts]
    }

    /// Claims through `send` (the claim statement on some connection, skipping known keys or
    /// not): the cheaper plain insert first, unless the batch may hold known keys; a plain claim
    /// that met a key the journal knows after all (a producer published it twice) changed
    /// nothing, and is sent again skipping known keys.
    func run<T>(_ send: (_ skippingKnown: Bool) async throws(StoreError) -> T) async throws(StoreError) -> T {
        guard !batch.mayHoldKnown else { return try await send(true) }
        do {
            return try await send(false)
        } catch let error where error.code == .conflict {
            return try await send(true)
        }
    }

    func sql(skippingKnown: Bool) -> String {
        DeliveryJournal.claimSQL(countingUnread: batch.countsUnread, skippingKnown: skippingKnown)
    }

    /// Whether the statement's answer created a row for every distinct key: nothing known, no
    /// second step.
    func isAllNew(_ rows: PostgresQueryResult) throws(PostgresError) -> Bool {
        var created = 0
        for row in rows where try row.decode(Int.self, at: 0) == 0 { created += 1 }
        return created == distinct.count
    }

    /// Reads the statement's answer (see ``DeliveryJournal/claimSQL(countingUnread:skippingKnown:)``).
    func answer(_ rows: PostgresQueryResult) throws(PostgresError) -> ClaimAnswer {
        var ids = [Int64?](repeating: nil, count: batch.messages.count)
        var next: [Int64: Int64] = [:]
        var reads: [Int64: [String: Int64]] = [:]
        for row in rows {
            let a = Int64(try row.decode(Int.self, at: 1)), b = try row.decode(Int.self, at: 2)
            switch try row.decode(Int.self, at: 0) {
            case 0: ids[distinct[b - 1]] = a
            case 1: next[a] = Int64(b)
            default: reads[a, default: [:]][try row.decode(String.self, at: 3)] = Int64(b)
            }
        }
        // By index: a `for delivery in` loop copies each delivery (its user id retained).
        let deliveries = batch.deliveries
        var positions = [Int64?](repeating: nil, count: deliveries.count)
        for index in deliveries.indices where ids[deliveries[index].message] != nil {
            guard let slot = next.index(forKey: deliveries[index].deviceRef) else { continue }  // one hash, read and bumped in place
            positions[index] = next.values[slot]
            next.values[slot] += 1
        }
        let unread = batch.countsUnread ? DeliveryJournal.unread(batch.deliveries, positions: positions, reads: reads) : []
        return ClaimAnswer(messageIds: ids, positions: positions, unread: unread)
    }
}
