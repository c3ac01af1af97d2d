import HeraldAMQP
import HeraldCore
import Logging

/// Acknowledges settled messages on the connection they came from: the one place that does, for
/// the pipeline and the partition ingest alike (a broadcast's window is reported to its runner
/// instead). An acknowledgement that
/// cannot be sent (the connection is gone) is dropped: the broker delivers the message again,
/// and the journal makes its deliveries skip.
struct Acknowledger: Sendable {
    let metrics: WorkerMetrics
    let logger: Logger

    /// Acknowledges messages, each run of them from one connection in one call (one command, at
    /// most one wake of its thread).
    func ack(_ messages: [TrackedMessage]) {
        guard !messages.contains(where: { $0.window != nil }) else {
            for message in messages where message.window != nil { message.window?.settled(deferredUntil: message.deferredUntil) }
            ack(messages.filter { $0.window == nil })
            return
        }
        var start = messages.startIndex
        while start < messages.endIndex {
            let connection = messages[start].connection
            var end = start + 1
            while end < messages.endIndex, messages[end].connection === connection { end += 1 }
            send(end - start, counted: true) { () throws(AMQPError) in try connection.ack(messages[start..<end].lazy.map(\.delivery)) }
            start = end
        }
    }

    /// Acknowledges one message; false when the acknowledgement could not be sent. `counted`:
    /// counts it in `herald_messages_acked_total` (the ingest counts its originals as ingested
    /// instead).
    @discardableResult
    func ack(_ message: TrackedMessage, counted: Bool = true) -> Bool {
        if let window = message.window {
            window.settled(deferredUntil: message.deferredUntil)
            return true
        }
        return send(1, counted: counted) { () throws(AMQPError) in try message.connection.ack(message.delivery) }
    }

    /// Hands `count` acknowledgements to the connection through `body`, counting them or noting
    /// that they were not sent.
    @discardableResult
    private func send(_ count: Int, counted: Bool, _ body: () throws(AMQPError) -> Void) -> Bool {
        do {
            try body()
            if counted { metrics.acked(count) }
            return true
        } catch {
            logger.debug(
                "Acknowledgements not sent; the broker will deliver the messages again",
                metadata: [LogKey.error: "\(error)", LogKey.count: "\(count)"])
            return false
        }
    }
}
