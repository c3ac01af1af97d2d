import Foundation
import Logging

/// One AMQP 0-9-1 connection to RabbitMQ, over librabbitmq-c.
///
/// ## Thread rules
/// librabbitmq is not thread-safe, so each connection owns one dedicated thread (`herald-amqp`)
/// that alone touches the C connection. Every method here may be called from any task, any
/// number at once: calls are queued (under a lock) for that thread, which runs them in order and
/// resumes the caller. Blocking C calls never run on the Swift cooperative pool. The thread keeps
/// heartbeats going by never leaving the library for more than 50 ms.
///
/// ## Channels
/// Synchronous operations share a control channel; publishes go through one channel in confirm
/// mode; each consumer gets its own channel (its own `basic.qos` and delivery tags). A channel the
/// broker closes (404, 406, …) is reopened on next use; only the calls on it fail.
///
/// ## Failure and re-establishing
/// When the connection dies (socket closed, heartbeat missed, broker `connection.close`), every
/// consumer sequence throws ``AMQPError/Code/connectionLost``, every pending publish and call fails
/// with it, the thread frees the C connection and ends. The object is then finished for good:
/// re-establish by calling ``connect(_:logger:)`` again (with a backoff of your choice), declare
/// the topology again and restart consumers. ``waitUntilClosed()`` tells a supervisor when.
///
/// ## Closing
/// ``close()`` is graceful and idempotent: it lets queued work (acks included) go out, waits up to
/// `closeTimeout` for outstanding publisher confirms, then closes the connection. Dropping the last
/// reference also closes it (without waiting). A consumer keeps its connection alive while it is
/// referenced.
public final class AMQPConnection: Sendable {
    let core: ConnectionCore

    /// The configuration this connection was opened with.
    public var configuration: AMQPConfiguration { core.configuration }

    private init(core: ConnectionCore) {
        self.core = core
    }

    deinit {
        core.requestClose()
    }

    /// Connects, logs in and returns an open connection. Call it again to re-establish after a
    /// connection was lost.
    /// - Throws: ``AMQPError`` with ``AMQPError/Code/connectionFailed`` (unreachable, refused,
    ///   unknown vhost), ``AMQPError/Code/authenticationFailed``, ``AMQPError/Code/tlsFailed`` or
    ///   ``AMQPError/Code/timeout`` (after `connectTimeout`).
    public static func connect(
        _ configuration: AMQPConfiguration,
        logger: Logger = Logger(label: "herald.amqp")
    ) async throws(AMQPError) -> AMQPConnection {
        AMQPConnection(core: try await ConnectionDriver.start(configuration: configuration, logger: logger))
    }

    /// True until the connection is closed or lost.
    public var isOpen: Bool { core.isOpen }

    /// Closes gracefully: queued work runs, outstanding confirms get up to `closeTimeout`, consumer
    /// sequences end normally, then `connection.close`. Idempotent; returns once the connection
    /// thread has ended. Publishes still unconfirmed fail with ``AMQPError/Code/connectionClosed``.
    public func close() async {
        core.requestClose()
        _ = await core.waitUntilEnded()
    }

    /// Suspends until the connection has ended. Returns the error that ended it, or `nil` after
    /// ``close()``.
    public func waitUntilClosed() async -> AMQPError? {
        await core.waitUntilEnded()
    }

    // MARK: Running work on the connection thread

    /// Runs `body` on the connection thread and returns its result.
    func perform<Value: Sendable>(
        _ body: @escaping @Sendable (ConnectionDriver) throws(AMQPError) -> Value
    ) async throws(AMQPError) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, AMQPError>, Never>) in
            let command = ConnectionCommand.operation(
                run: { driver in
                    do throws(AMQPError) {
                        continuation.resume(returning: .success(try body(driver)))
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                },
                fail: { continuation.resume(returning: .failure($0)) }
            )
            do throws(AMQPError) {
                try core.submit(command)
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }
}
