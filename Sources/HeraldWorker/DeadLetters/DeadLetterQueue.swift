import Foundation
import HeraldAMQP
import HeraldStore
import Logging

/// The operator's tools on the dead-letter queue (`herald dlq list|replay|purge`).
///
/// - ``list(limit:)`` is non-destructive: it takes messages without acknowledging them, reads
///   their headers, then returns them all with `nack(requeue: true)`, which puts them back in
///   their places (order and count kept).
/// - ``replay(ids:)`` publishes the chosen dead letters back to the main exchange with the main
///   routing key (Herald's `x-herald-*` headers and the broker's `x-death` removed), waits for
///   each confirm, then acknowledges the dead letter and marks it replayed in the store. The
///   others are returned untouched.
/// - ``purge()`` empties the dead-letter queue.
///
/// Thread rules: `Sendable`; run one tool at a time per connection. Throws ``WorkerError``.
public struct DeadLetterQueue: Sendable {
    public let connection: AMQPConnection
    public let topology: HeraldTopology
    /// Where replays are recorded; nil skips that.
    public let store: Store?

    public init(connection: AMQPConnection, topology: HeraldTopology, store: Store?) {
        self.connection = connection
        self.topology = topology
        self.store = store
    }

    /// The first `limit` dead letters, oldest first.
    public func list(limit: Int) async throws(WorkerError) -> [DeadLetterEntry] {
        var held: [AMQPDelivery] = []
        defer { requeue(held) }
        do {
            while held.count < limit, let delivery = try await connection.get(queue: topology.deadLetterQueue) {
                held.append(delivery)
            }
        } catch {
            throw WorkerError(code: .broker, message: "cannot read \(topology.deadLetterQueue)", underlying: error)
        }
        return held.map(Self.entry)
    }

    /// What ``replay(ids:)`` did.
    public struct ReplayResult: Sendable, Hashable {
        /// Dead-letter ids replayed (or message ids, for broker dead letters without one).
        public var replayed: [String] = []
        /// Requested ids not found in the queue.
        public var notFound: [String] = []
    }

    /// Replays the dead letters with the given ids, or every one with `nil`.
    public func replay(ids: Set<String>?) async throws(WorkerError) -> ReplayResult {
        var result = ReplayResult()
        var held: [AMQPDelivery] = []
        defer { requeue(held) }
        var wanted = ids
        let total: UInt32
        do {
            total = try await connection.queueState(topology.deadLetterQueue).messageCount
        } catch {
            throw WorkerError(code: .broker, message: "cannot read \(topology.deadLetterQueue)", underlying: error)
        }
        // At most the messages there were at the start: replayed ones go to the main queue, and
        // a message that fails again comes back behind them.
        for _ in 0..<total {
            if let wanted, wanted.isEmpty { break }
            let delivery: AMQPDelivery
            do {
                guard let next = try await connection.get(queue: topology.deadLetterQueue) else { break }
                delivery = next
            } catch {
                throw WorkerError(code: .broker, message: "cannot read \(topology.deadLetterQueue)", underlying: error)
            }
            let id = delivery.properties.headers[DeadLetterHeaders.id]?.stringValue ?? delivery.properties.messageID ?? ""
            guard wanted == nil || wanted!.contains(id) else {
                held.append(delivery)
                continue
            }
            let message = AMQPOutgoingMessage(
                exchange: topology.exchange, routingKey: topology.routingKey, body: delivery.body,
                properties: DeadLetterHeaders.replayProperties(delivery.properties), mandatory: true
            )
            do {
                try await connection.publish(message)
            } catch {
                held.append(delivery)
                throw WorkerError(code: .broker, message: "cannot publish dead letter \(id) back to \(topology.exchange)", underlying: error)
            }
            do {
                try connection.ack(delivery)
            } catch {
                throw WorkerError(
                    code: .broker, message: "dead letter \(id) was replayed but could not be removed from \(topology.deadLetterQueue)", underlying: error)
            }
            if let store, !id.isEmpty {
                do {
                    try await store.deadLetters.markReplayed(id: id)
                } catch {
                    throw WorkerError(code: .store, message: "dead letter \(id) was replayed but not marked replayed", underlying: error)
                }
            }
            result.replayed.append(id)
            wanted?.remove(id)
        }
        result.notFound = wanted.map { Array($0).sorted() } ?? []
        return result
    }

    /// Removes every dead letter; returns how many.
    public func purge() async throws(WorkerError) -> Int {
        do {
            return Int(try await connection.purgeQueue(topology.deadLetterQueue))
        } catch {
            throw WorkerError(code: .broker, message: "cannot purge \(topology.deadLetterQueue)", underlying: error)
        }
    }

    private func requeue(_ deliveries: [AMQPDelivery]) {
        for delivery in deliveries { try? connection.nack(delivery, requeue: true) }
    }

    static func entry(_ delivery: AMQPDelivery) -> DeadLetterEntry {
        let headers = delivery.properties.headers
        let death = delivery.properties.deathRecords.first
        var failedAt = headers[DeadLetterHeaders.failedAtMilliseconds]?.intValue.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        failedAt = failedAt ?? headers[DeadLetterHeaders.failedAt]?.dateValue ?? death?.time
        return DeadLetterEntry(
            id: headers[DeadLetterHeaders.id]?.stringValue,
            code: headers[DeadLetterHeaders.error]?.stringValue ?? death.map { "broker:\($0.reason ?? "dead-lettered")" },
            reason: headers[DeadLetterHeaders.reason]?.stringValue,
            eventId: headers[DeadLetterHeaders.event]?.stringValue,
            failedAt: failedAt,
            messageId: delivery.properties.messageID,
            contentType: delivery.properties.contentType,
            bodySize: delivery.body.count
        )
    }
}
