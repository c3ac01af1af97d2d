import Crypto
import Foundation

/// The payload columns of one record batch: a body that several deliveries of one message share
/// (a broadcast's, the same for every device of a platform when it carries no badge and no
/// per-device field) is written once, to `message_payloads`, keyed by its digest, and the
/// journal rows of those deliveries name the digest instead of repeating the body (schema
/// version 5). A broadcast to 100,000 devices writes its body a handful of times, not 100,000.
///
/// Only messages with at least ``minimumGroup`` payloads in the batch are compared, so the common
/// record (one delivery of its message) is never hashed. Deliveries of one message recorded in
/// different batches share through the same digest (the row is written once per message).
struct SharedPayloads {
    /// Smaller groups cost more than they save: a `message_payloads` row and its index entry
    /// (~420 bytes of WAL for a 270-byte body) against ~250 bytes per journal row.
    static let minimumGroup = 3
    /// Distinct bodies of one message compared, at most: beyond, they are per device (a modern
    /// payload carries its delivery key), and its other bodies stay in their rows.
    static let distinctLimit = 8

    /// Per record: its body for the journal row, nil when the row names a digest instead.
    private(set) var payloads: [[UInt8]?]
    /// Per record: the digest (UUID text) its journal row names, or nil.
    private(set) var digests: [String?]
    /// The `message_payloads` rows: one per group (message, digest, body).
    private(set) var shared: [(messageId: Int64, digest: String, body: [UInt8])] = []
    /// Whether any record names a digest.
    var isSharing: Bool { !shared.isEmpty }

    init(_ records: [DeliveryRecord]) {
        // Fields read in place (`records[index].…`): a loop over the records would copy each one.
        payloads = records.indices.map { records[$0].payload }
        digests = Array(repeating: nil, count: records.count)
        var perMessage = [Int64: Int](minimumCapacity: records.count)  // one table, not one per growth
        for index in records.indices where payloads[index] != nil { perMessage[records[index].messageId, default: 0] += 1 }
        guard perMessage.values.contains(where: { $0 >= Self.minimumGroup }) else { return }
        // Per message, its distinct bodies (one per platform, typically), compared byte for byte:
        // hashing every body of a broadcast cost more than the few comparisons.
        var groups: [Int64: [(payload: [UInt8], members: [Int])]] = [:]
        for index in records.indices {
            let message = records[index].messageId
            guard let payload = payloads[index], perMessage[message, default: 0] >= Self.minimumGroup else { continue }
            groups[message, default: []].appendMember(index, payload: payload)
        }
        for (message, bodies) in groups {
            for (payload, members) in bodies where members.count >= Self.minimumGroup {
                let digest = UUID(prefixOf: SHA256.hash(data: payload)).uuidString
                shared.append((message, digest, payload))
                for index in members {
                    digests[index] = digest
                    payloads[index] = nil
                }
            }
        }
    }
}

extension [(payload: [UInt8], members: [Int])] {
    fileprivate mutating func appendMember(_ index: Int, payload: [UInt8]) {
        if let group = firstIndex(where: { $0.payload == payload }) {
            self[group].members.append(index)
        } else if count < SharedPayloads.distinctLimit {
            append((payload, [index]))
        }
    }
}
