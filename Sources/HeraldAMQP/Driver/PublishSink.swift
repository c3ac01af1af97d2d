/// Where the outcome of one publish goes: a single caller's continuation, or one slot of a batch.
///
/// Thread rule: completed on the connection thread, exactly once per publish.
enum PublishSink {
    case single(@Sendable (Result<Void, AMQPError>) -> Void)
    case batch(PublishBatch, index: Int)

    func complete(_ error: AMQPError?) {
        switch self {
        case .single(let completion):
            completion(error.map { .failure($0) } ?? .success(()))
        case .batch(let batch, let index):
            batch.settle(index: index, error: error)
        }
    }
}

/// The shared state of one ``AMQPConnection/publishBatch(_:)`` call: it completes when every
/// message is confirmed or failed, with the indices of the failed ones.
///
/// Thread rule: owned by the connection thread.
final class PublishBatch {
    private var remaining: Int
    private var failed: [Int] = []
    private var firstError: AMQPError?
    private let completion: @Sendable (Result<Void, AMQPError>) -> Void

    init(count: Int, completion: @escaping @Sendable (Result<Void, AMQPError>) -> Void) {
        remaining = count
        self.completion = completion
    }

    func settle(index: Int, error: AMQPError?) {
        if let error {
            failed.append(index)
            if firstError == nil { firstError = error }
        }
        remaining -= 1
        guard remaining == 0 else { return }
        if var error = firstError {
            error.failedMessageIndices = failed.sorted()
            completion(.failure(error))
        } else {
            completion(.success(()))
        }
    }
}

/// A message waiting to be published and its sink.
struct OutboundPublish {
    let message: AMQPOutgoingMessage
    let sink: PublishSink
}
