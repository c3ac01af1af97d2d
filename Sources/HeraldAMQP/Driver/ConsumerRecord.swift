/// A consumer's state on the connection thread: its stream and where it is in its life.
///
/// Life: `active` (deliveries flow) → after `basic.cancel-ok`, `draining` (deliveries the broker
/// sent before its cancel-ok were queued by librabbitmq while the cancel waited; they still reach
/// the stream, which finishes once that queue is empty) → `finished` (stream ended; the channel
/// stays open until every delivery is settled, so in-flight acks still count, then closes). A broker-side cancel, a closed channel, a lost
/// connection or an abandoned iteration finish the stream at once.
///
/// Deliveries reach the stream in batches: those of one read turn go as one element, so the
/// iterating task is resumed once per turn, not once per message (a resumption is a wake-up
/// of a cooperative thread: at tens of thousands of messages a second that was a measurable
/// share of the worker's CPU).
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
    private let continuation: AsyncThrowingStream<[AMQPDelivery], any Error>.Continuation
    private(set) var phase: Phase = .active
    /// Read this turn, not yet handed to the stream (``flush()``).
    private var pending: [AMQPDelivery] = []

    init(id: UInt64, queue: String, tag: String, continuation: AsyncThrowingStream<[AMQPDelivery], any Error>.Continuation) {
        self.id = id
        self.queue = queue
        self.tag = tag
        self.continuation = continuation
    }

    var acceptsDeliveries: Bool { phase != .finished }

    /// Buffers `delivery`; returns true when it is the first of this turn (the driver then
    /// remembers to flush this record).
    func buffer(_ delivery: AMQPDelivery) -> Bool {
        pending.append(delivery)
        return pending.count == 1
    }

    /// Hands the turn's deliveries to the stream as one element.
    func flush() {
        guard !pending.isEmpty else { return }
        continuation.yield(pending)
        pending = []
    }

    func startDraining() {
        if phase == .active { phase = .draining }
    }

    /// Ends the stream, normally (`nil`) or by throwing `error`. Idempotent.
    func finish(throwing error: AMQPError?) {
        guard phase != .finished else { return }
        // What was read before the end is still handed out, ahead of it.
        flush()
        phase = .finished
        if let error {
            continuation.finish(throwing: error)
        } else {
            continuation.finish()
        }
    }
}
