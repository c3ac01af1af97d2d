import HeraldAMQP
import HeraldCore
import Logging

/// The one reconnect loop of the worker's broker clients (the consumer of the work or partition
/// queues, and the partition ingest): connect and prepare (declare, consume) with backoff while
/// the broker cannot be used; run a session on the connection; close it; after a lost
/// connection wait the backoff and start again; until the worker stops.
struct BrokerSessions: Sendable {
    let amqp: AMQPConfiguration
    let initialDelay: Duration
    let maxDelay: Duration
    let stop: StopSignal
    let logger: Logger

    /// - Parameters:
    ///   - role: who reconnects, for the log lines ("Worker", "Ingest").
    ///   - prepare: readies a fresh connection; an error means the broker cannot be used yet.
    ///   - session: runs until the connection is lost (returns the error) or the worker stops
    ///     (returns nil); the connection is closed after it.
    func run<Prepared>(
        role: String, prepare: (AMQPConnection) async throws -> Prepared, session: (AMQPConnection, Prepared) async -> (any Error)?
    ) async {
        var backoff = Backoff(initial: initialDelay, maximum: maxDelay)
        while !stop.isStopping {
            let connection: AMQPConnection
            let prepared: Prepared
            do {
                connection = try await AMQPConnection.connect(amqp, logger: logger)
                do {
                    prepared = try await prepare(connection)
                } catch {
                    await connection.close()
                    throw error
                }
            } catch {
                let delay = backoff.next()
                logger.warning(
                    "\(role) cannot use the broker; retrying",
                    metadata: [
                        LogKey.error: "\(error)", LogKey.retryIn: "\(delay)", "herald.amqp": "\(amqp.redactedURL)",
                    ])
                _ = await stop.sleep(for: delay)
                continue
            }
            backoff.reset()
            let lost = await session(connection, prepared)
            await connection.close()
            if let lost {
                let delay = backoff.next()
                logger.warning("\(role) lost its broker connection; reconnecting", metadata: [LogKey.error: "\(lost)", LogKey.retryIn: "\(delay)"])
                _ = await stop.sleep(for: delay)
            }
        }
    }
}
