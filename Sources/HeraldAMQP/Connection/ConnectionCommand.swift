/// Work handed from any task to the connection thread through ``ConnectionCore``.
///
/// Each command is either run by the thread or failed (when the connection ends first), never both
/// and never neither: every continuation behind it is resumed exactly once.
enum ConnectionCommand: Sendable {
    /// A synchronous operation run on the thread with the driver.
    case operation(run: @Sendable (ConnectionDriver) -> Void, fail: @Sendable (AMQPError) -> Void)
    /// One message to publish; completes on its confirm.
    case publish(AMQPOutgoingMessage, completion: @Sendable (Result<Void, AMQPError>) -> Void)
    /// Many messages; completes when all are confirmed or failed.
    case publishBatch([AMQPOutgoingMessage], completion: @Sendable (Result<Void, AMQPError>) -> Void)
    /// ack / nack / reject, fire-and-forget.
    case settle(Settlement)
    /// Many settlements in their order: one command, so one lock and at most one wake.
    case settleBatch([Settlement])
    /// Graceful close requested by `close()` or `deinit`.
    case close

    struct Settlement: Sendable {
        enum Kind: Sendable {
            case ack
            case nack(requeue: Bool)
            case reject(requeue: Bool)
        }

        let session: UInt64
        let deliveryTag: UInt64
        let multiple: Bool
        let kind: Kind
    }

    /// Completes the command with `error` without running it.
    func fail(_ error: AMQPError) {
        switch self {
        case .operation(_, let fail): fail(error)
        case .publish(_, let completion): completion(.failure(error))
        case .publishBatch(let messages, let completion):
            var failed = error
            failed.failedMessageIndices = Array(messages.indices)
            completion(.failure(failed))
        case .settle, .settleBatch, .close: break
        }
    }
}
