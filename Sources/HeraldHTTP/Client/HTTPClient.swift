import Foundation
import Logging
import Synchronization

/// An asynchronous HTTP/2 client over the libcurl multi interface, for sending many requests
/// to a few hosts over a few multiplexed connections (APNs, FCM).
///
/// Thread rules: `HTTPClient` is `Sendable`; call ``execute(_:)`` from any task, and
/// ``submit(_:completion:)`` from any thread, as often and as concurrently as you like. Each
/// client starts ONE driver thread that owns the libcurl multi handle and every easy handle;
/// requests reach it through a locked queue and `curl_multi_wakeup` (one wakeup per driver
/// turn, however many requests arrive), and it calls completions (which resume `execute`'s
/// continuations) itself. No libcurl call runs on the Swift cooperative pool.
///
/// Lifetime: call ``shutdown()`` when done (it is idempotent). A client that is dropped without
/// it stops its thread too, failing what was in flight.
///
/// Errors: ``execute(_:)`` throws ``HTTPClientError`` for transport failures (never for an HTTP
/// status) and `CancellationError` when its task is cancelled.
public final class HTTPClient: Sendable {
    public let configuration: HTTPClientConfiguration
    private let mailbox: DriverMailbox
    private let counters = ClientCounters()
    private let nextID = Atomic<UInt64>(0)

    /// Validates `configuration` and starts the driver thread.
    ///
    /// - Throws: ``HTTPClientError`` `.invalidConfiguration` (missing file, bad value; `file` names
    ///   the file) or `.internalFailure` if libcurl cannot make its handles.
    public init(configuration: HTTPClientConfiguration = HTTPClientConfiguration(), logger: Logger = Logger(label: "herald.http")) throws {
        let resolved = try configuration.resolve()
        let driver = try CurlDriver(configuration: resolved, counters: counters, logger: logger)
        self.configuration = configuration
        self.mailbox = driver.mailbox
        let handOff = DriverHandOff(driver: driver)
        let thread = Thread { handOff.driver.run() }
        thread.name = "herald.http.driver"
        thread.start()
    }

    deinit {
        mailbox.requestShutdown(waiter: nil)
    }

    /// Sends `request` and returns the complete response, whatever its status.
    ///
    /// - Throws: ``HTTPClientError`` (`.timeout`, `.couldNotConnect`, `.tlsFailure`,
    ///   `.proxyFailure`, `.invalidRequest`, `.shutdown`, …) or `CancellationError` if the task is
    ///   cancelled, in which case the request is removed from its connection at once.
    public func execute(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        try Self.validate(request)
        let pending = PendingRequest(id: nextID.add(1, ordering: .relaxed).newValue, request: request)
        counters.inFlight.add(1, ordering: .relaxed)
        defer { counters.inFlight.subtract(1, ordering: .relaxed) }
        do {
            let response = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    guard pending.install({ continuation.resume(with: $0) }) else {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    if !mailbox.submit(pending) {
                        pending.finish(.failure(Self.shutdownError(request)))
                    }
                }
            } onCancel: {
                if pending.finish(.failure(CancellationError())) {
                    mailbox.cancel(pending.id)
                }
            }
            counters.requestsCompleted.add(1, ordering: .relaxed)
            return response
        } catch {
            counters.requestsFailed.add(1, ordering: .relaxed)
            throw error
        }
    }

    /// Sends `request` without a task: `completion` is called exactly once with the response
    /// (whatever its status) or the error, on the client's driver thread, or at once on the
    /// caller's thread when the request is refused before it is queued (invalid, or the
    /// client is shut down). For callers that keep many requests in flight (the senders' batch
    /// path): no task, continuation or actor hop per request.
    ///
    /// `completion` runs on the thread that drives every transfer of this client: it must be
    /// quick and must never block or wait for another request of the same client.
    public func submit(_ request: HTTPClientRequest, completion: @escaping @Sendable (Result<HTTPClientResponse, HTTPClientError>) -> Void) {
        do {
            try Self.validate(request)
        } catch {
            counters.requestsFailed.add(1, ordering: .relaxed)
            completion(.failure(error))
            return
        }
        let counters = self.counters
        counters.inFlight.add(1, ordering: .relaxed)
        let pending = PendingRequest(id: nextID.add(1, ordering: .relaxed).newValue, request: request) { result in
            counters.inFlight.subtract(1, ordering: .relaxed)
            switch result {
            case .success(let response):
                counters.requestsCompleted.add(1, ordering: .relaxed)
                completion(.success(response))
            case .failure(let error):
                counters.requestsFailed.add(1, ordering: .relaxed)
                completion(.failure(error as? HTTPClientError ?? Self.unexpected(error, request)))
            }
        }
        if !mailbox.submit(pending) {
            pending.finish(.failure(Self.shutdownError(request)))
        }
    }

    /// Counters since the client was made.
    public var statistics: HTTPClientStatistics {
        counters.snapshot
    }

    /// Stops taking requests, fails those pending or in flight with `.shutdown`, frees every
    /// libcurl handle and stops the driver thread; returns when it has stopped. Idempotent: later
    /// calls return once the first has finished.
    public func shutdown() async {
        await withCheckedContinuation { continuation in
            mailbox.requestShutdown(waiter: continuation)
        }
    }

    private static func shutdownError(_ request: HTTPClientRequest) -> HTTPClientError {
        HTTPClientError(code: .shutdown, call: "HTTPClient.execute", detail: "the HTTP client was shut down", url: request.url)
    }

    /// The driver reports only ``HTTPClientError``s (cancellation is for `execute`'s tasks).
    private static func unexpected(_ error: any Error, _ request: HTTPClientRequest) -> HTTPClientError {
        HTTPClientError(code: .internalFailure, call: "HTTPClient.submit", detail: "\(error)", url: request.url)
    }

    /// Rejects a URL that libcurl would send wrongly or refuse: empty, or with a space, CR, LF
    /// or NUL. (Method and header fields are valid by construction: swift-http-types.)
    static func validate(_ request: HTTPClientRequest) throws(HTTPClientError) {
        guard !request.url.isEmpty, !request.url.utf8.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 || $0 == 32 }) else {
            throw HTTPClientError(
                code: .invalidRequest, call: "HTTPClient.execute", detail: "the URL is empty or contains spaces or control characters", url: request.url
            )
        }
    }
}

/// Carries the driver into its thread's closure.
///
/// `@unchecked Sendable` is sound because ownership moves exactly once: the initialiser makes
/// the driver, wraps it, and never touches it again after `Thread.start()` (which orders every
/// write before it against the new thread). From then on only the driver thread uses it.
private final class DriverHandOff: @unchecked Sendable {
    let driver: CurlDriver

    init(driver: CurlDriver) {
        self.driver = driver
    }
}
