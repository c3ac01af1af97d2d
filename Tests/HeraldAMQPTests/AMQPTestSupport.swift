import Foundation
import HeraldAMQP
import HeraldTesting
import Synchronization
import Testing

/// Shared helpers of the HeraldAMQP integration tests: connecting to the real broker, unique
/// names, bounded waits.
enum AMQPTestSupport {
    static func configuration(_ url: String = TestEnvironment.amqpURL) throws -> AMQPConfiguration {
        var configuration = try AMQPConfiguration(url: url)
        configuration.connectTimeout = .seconds(5)
        configuration.rpcTimeout = .seconds(20)
        return configuration
    }

    /// Connects to the test broker; fails with the URL tried when it is unreachable (suites that
    /// connect declare `.requires(.rabbitMQ)`, which skips them where no broker runs at all).
    static func connect(
        _ configuration: AMQPConfiguration? = nil,
        name: String = "herald-amqp-tests"
    ) async throws -> AMQPConnection {
        var configuration = try configuration ?? self.configuration()
        if configuration.connectionName == nil { configuration.connectionName = name }
        do {
            return try await AMQPConnection.connect(configuration)
        } catch {
            Issue.record("RabbitMQ is not reachable at \(configuration.redactedURL): \(error)")
            throw error
        }
    }

    /// The test broker's configuration, reached through `proxy` (to cut the connection at will).
    static func configuration(through proxy: TCPProxy, name: String) throws -> AMQPConfiguration {
        var configuration = try self.configuration()
        configuration.host = "127.0.0.1"
        configuration.port = proxy.port
        configuration.connectionName = name
        return configuration
    }

    /// Host and port of the test broker, for the TCP proxy.
    static func brokerAddress() throws -> (host: String, port: Int) {
        let configuration = try self.configuration()
        return (configuration.host, configuration.port)
    }

    static func uniqueQueue(_ label: String) -> String {
        TestEnvironment.uniqueName("herald.test.amqp.\(label)")
    }

    /// A body of `size` bytes whose first eight bytes are `sequence`, big-endian.
    static func body(sequence: Int, size: Int = 508) -> Data {
        var data = Data(count: max(size, 8))
        let value = UInt64(sequence)
        for index in 0..<8 { data[index] = UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64(index))) }
        for index in 8..<data.count { data[index] = UInt8(ascii: "a") + UInt8(index % 26) }
        return data
    }

    static func sequence(of body: Data) -> Int {
        body.prefix(8).reduce(0) { $0 << 8 | Int($1) }
    }

    /// Polls `condition` every 50 ms until it holds or `limit` passes.
    static func eventually(
        within limit: Duration = .seconds(10),
        _ condition: @Sendable () async throws -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }
}

struct TimeoutError: Error, CustomStringConvertible {
    let what: String
    let limit: Duration
    var description: String { "\(what) did not finish within \(limit)" }
}

/// Runs `body` but gives up after `limit`, even if `body` waits on something that ignores
/// cancellation: the test then fails with a timeout instead of hanging.
func withTimeout<T: Sendable>(
    _ limit: Duration,
    _ what: String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = TimeoutRace<T>()
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        race.arm(continuation)
        let work = Task {
            do {
                race.finish(.success(try await body()))
            } catch {
                race.finish(.failure(error))
            }
        }
        Task {
            try? await Task.sleep(for: limit)
            if race.finish(.failure(TimeoutError(what: what, limit: limit))) { work.cancel() }
        }
    }
}

/// The continuation of ``withTimeout(_:_:_:)``, resumed by whichever side finishes first.
private final class TimeoutRace<T: Sendable>: Sendable {
    private let slot = Mutex<CheckedContinuation<T, any Error>?>(nil)

    func arm(_ continuation: CheckedContinuation<T, any Error>) {
        slot.withLock { $0 = continuation }
    }

    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let continuation = slot.withLock { slot -> CheckedContinuation<T, any Error>? in
            defer { slot = nil }
            return slot
        }
        continuation?.resume(with: result)
        return continuation != nil
    }
}

/// Deletes queues and exchanges at the end of a test, ignoring what is already gone.
func cleanUp(queues: [String] = [], exchanges: [String] = []) async {
    guard let connection = try? await AMQPConnection.connect(try AMQPTestSupport.configuration()) else { return }
    for queue in queues { _ = try? await connection.deleteQueue(queue) }
    for exchange in exchanges { try? await connection.deleteExchange(exchange) }
    await connection.close()
}

/// Runs `body`, then deletes the named queues and exchanges whether it succeeded or threw.
func withCleanup<T>(
    queues: [String] = [],
    exchanges: [String] = [],
    _ body: () async throws -> T
) async throws -> T {
    do {
        let result = try await body()
        await cleanUp(queues: queues, exchanges: exchanges)
        return result
    } catch {
        await cleanUp(queues: queues, exchanges: exchanges)
        throw error
    }
}

/// The error as ``AMQPError`` (nil for any other error type).
func asAMQPError(_ error: any Error) -> AMQPError? {
    error as? AMQPError
}
