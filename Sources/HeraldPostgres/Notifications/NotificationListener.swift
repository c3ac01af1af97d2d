internal import CLibPQ
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The thread behind ``PostgresNotifications``: owns one `PGconn*` (freed once, on this
/// thread), `LISTEN`s, and waits with `poll` on the connection's socket and on a wake-up pipe;
/// reads with `PQconsumeInput` and drains `PQnotifies`. On a lost connection it reports
/// `.disconnected`, reconnects with backoff (sleeping on the pipe, so ``stop()`` is immediate),
/// re-LISTENs and reports `.reconnected`.
final class NotificationListener: Sendable {
    private let configuration: PostgresConfiguration
    private let channel: String
    private let logger: Logger
    private let continuation: AsyncStream<PostgresNotificationEvent>.Continuation
    private let stopped = Atomic<Bool>(false)
    /// The self-pipe: `stop()` writes one byte to `wakeWrite`; the thread polls `wakeRead`.
    /// Closed in `deinit`, when no thread or handle can use them any more.
    private let wakeRead: Int32
    private let wakeWrite: Int32

    init(
        configuration: PostgresConfiguration, channel: String, logger: Logger,
        continuation: AsyncStream<PostgresNotificationEvent>.Continuation
    ) {
        self.configuration = configuration
        self.channel = channel
        self.logger = logger
        self.continuation = continuation
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
            _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        }
        self.wakeRead = fds[0]
        self.wakeWrite = fds[1]
    }

    deinit {
        if wakeRead >= 0 { close(wakeRead) }
        if wakeWrite >= 0 { close(wakeWrite) }
    }

    func start() {
        NamedThread.start { [self] in self.run() }
    }

    /// Makes the thread close its connection and exit; safe to call more than once, from any
    /// thread.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private var isStopped: Bool { stopped.load(ordering: .acquiring) }

    private func run() {
        var connection: OpaquePointer?
        var everListened = false
        var failures = 0
        var reportedOutage = false

        func lost(_ error: PostgresError) {
            if let handle = connection { PQfinish(handle) }
            connection = nil
            if !reportedOutage {
                logger.warning(
                    "PostgreSQL listener disconnected",
                    metadata: ["herald.pg.channel": "\(channel)", "error": "\(error)"]
                )
                continuation.yield(.disconnected(error))
                reportedOutage = true
            }
        }

        while !isStopped {
            guard let handle = connection else {
                if failures > 0 {
                    let exponent = min(failures - 1, 16)
                    let delay = min(configuration.reconnectInitialDelay * (1 << exponent), configuration.reconnectMaxDelay)
                    if sleepUntilWoken(delay) { break }
                }
                do {
                    connection = try connectAndListen()
                } catch {
                    failures += 1
                    lost(error)
                    continue
                }
                failures = 0
                reportedOutage = false
                continuation.yield(everListened ? .reconnected : .listening)
                everListened = true
                if let connection { drainNotifications(connection) }
                continue
            }

            var descriptors = [
                pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, 30_000)
            if isStopped { break }
            if ready < 0 {
                if errno == EINTR { continue }
                lost(PostgresError(code: .clientError, message: "poll failed: errno \(errno)", call: "poll"))
                failures = 1
                continue
            }
            if descriptors[0].revents != 0 {
                if PQconsumeInput(handle) == 0 || PQstatus(handle) != CONNECTION_OK {
                    lost(LibPQ.connectionError(handle, call: "PQconsumeInput", code: .connectionLost))
                    continue
                }
                drainNotifications(handle)
            }
        }
        if let connection { PQfinish(connection) }
        continuation.finish()
    }

    /// Connects and runs `LISTEN "channel"` (the name quoted by `PQescapeIdentifier`).
    private func connectAndListen() throws(PostgresError) -> OpaquePointer {
        let handle = LibPQSession.openConnection(configuration, applicationNameSuffix: " listener")
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            let error = LibPQ.connectionError(handle, call: "PQconnectdbParams", code: .connectionFailed)
            if let handle { PQfinish(handle) }
            throw error
        }
        guard let quoted = PQescapeIdentifier(handle, channel, channel.utf8.count) else {
            let error = LibPQ.connectionError(handle, call: "PQescapeIdentifier", code: .invalidParameter)
            PQfinish(handle)
            throw error
        }
        let sql = "LISTEN " + String(cString: quoted)
        PQfreemem(quoted)
        do {
            PQclear(try LibPQ.check(PQexec(handle, sql), connection: handle, call: "PQexec", query: sql))
        } catch {
            PQfinish(handle)
            throw error
        }
        return handle
    }

    private func drainNotifications(_ handle: OpaquePointer) {
        while let notify = PQnotifies(handle) {
            let event = PostgresNotification(
                channel: String(cString: notify.pointee.relname),
                payload: notify.pointee.extra.map { String(cString: $0) } ?? "",
                backendPID: notify.pointee.be_pid
            )
            PQfreemem(notify)
            continuation.yield(.notification(event))
        }
    }

    /// Sleeps up to `delay`; returns true if woken by ``stop()``.
    private func sleepUntilWoken(_ delay: Duration) -> Bool {
        let milliseconds = Int32(clamping: delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
        var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, max(1, milliseconds))
        return isStopped
    }
}
