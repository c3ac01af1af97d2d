/// A consumer's state on the connection thread: its stream and where it is in its life.
///
/// Life: `active` (deliveries flow) → after `basic.cancel-ok`, `draining` (deliveries the broker
/// sent before its cancel-ok were queued by librabbitmq while the cancel waited; they still reach
/// the stream, which finishes once that queue is empty) → `finished` (stream ended; the channel
/// stays open until every delivery is settled, so in-flight acks still count, then closes). A broker-side cancel, a closed channel, a lost
/// connection or an abandoned iteration finish the stream at once.
///
/// Thread rule: owned by the connection thread.
final class ConsumerRecord {
    enum Phase {
        case active
        case draining
        case finished
    }

    let id: UInt64
    let queue: String
    let tag: String
    private let continuation: AsyncThrowingStream<AMQPDelivery, any Error>.Continuation
    private(set) var phase: Phase = .active

    init(id: UInt64, queue: String, tag: String, continuation: AsyncThrowingStream<AMQPDelivery, any Error>.Continuation) {
        self.id = id
        self.queue = queue
        self.tag = tag
        self.continuation = continuation
    }

    var acceptsDeliveries: Bool { phase != .finished }

    func yield(_ delivery: AMQPDelivery) {
        continuation.yield(delivery)
    }

    func startDraining() {
        if phase == .active { phase = .draining }
    }

    /// Ends the stream, normally (`nil`) or by throwing `error`. Idempotent.
    func finish(throwing error: AMQPError?) {
        guard phase != .finished else { return }
        phase = .finished
        if let error {
            continuation.finish(throwing: error)
        } else {
            continuation.finish()
        }
    }
}
