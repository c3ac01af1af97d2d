import HeraldCore
import HeraldStore

/// Writes notification-log entries the way the worker does, for tests of what reads them (the
/// missed-notifications API, device deletion, retention).
public enum JournalSeed {
    /// One delivery to one device per message key, in order: claimed (the device's positions
    /// are reserved), then recorded with `state` (`.sent` with the payload `payload(n)`, `n`
    /// counting from 1). Returns the positions.
    @discardableResult
    public static func record(
        _ store: Store, deviceId: String, app: String? = nil, userId: String, messageKeys: [String], eventId: String = "TransferIssued",
        state: (Int) -> DeliveryState = { _ in .sent }, payload: (Int) -> String = { _ in "{}" }
    ) async throws -> [Int64] {
        guard let deviceRef = try await store.devices.storeId(deviceId: deviceId, app: app) else {
            throw TestEnvironmentError("no device \(deviceId) to record deliveries for")
        }
        let keys = messageKeys.map { MessageKey(text: $0) }
        let answer = try await store.journal.claim(
            ClaimBatch(
                messages: keys, eventIds: keys.map { _ in eventId }, deliveries: keys.indices.map { ClaimBatch.Delivery(message: $0, deviceRef: deviceRef) }
            ))
        var records: [DeliveryRecord] = []
        var positions: [Int64] = []
        for (index, id) in answer.messageIds.enumerated() {
            guard let id, let position = answer.positions[index] else { throw TestEnvironmentError("message \(messageKeys[index]) was known already") }
            let n = index + 1
            let outcome = state(n)
            records.append(
                DeliveryRecord(
                    deviceRef: deviceRef, position: position, messageId: id, userId: userId, state: outcome, attempts: 1,
                    lastError: outcome == .sent ? nil : "test", payload: outcome == .sent ? Array(payload(n).utf8) : nil
                ))
            positions.append(position)
        }
        try await store.journal.record(records)
        return positions
    }
}
