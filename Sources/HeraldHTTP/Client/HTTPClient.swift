import Foundation
import Logging
import Synchronization

/// An asynchronous HTTP/2 client over the libcurl multi interface, for sending many requests
/// to a few hosts over a few multiplexed connections (APNs, FCM).
///
/// Thread rules: `HTTPClient` is `Sendable`; call ``execute(_:)`` from any task, as often and as
/// concurrently as you like. Each client starts ONE driver thread that owns the libcurl multi
/// handle and every easy handle; requests reach it through a locked queue and
/// `curl_multi_wakeup`, and its completions resume the callers' continuations. No libcurl call
/// runs on the Swift cooperative pool.
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
    public func execute(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Self.validate(request)
        let pending = PendingRequest(id: nextID.add(1, ordering: .relaxed).newValue, request: request)
        counters.inFlight.add(1, ordering: .relaxed)
        defer { counters.inFlight.subtract(1, ordering: .relaxed) }
        do {
            let response = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    guard pending.install(continuation) else {
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

    private static func shutdownError(_ request: HTTPRequest) -> HTTPClientError {
        HTTPClientError(code: .shutdown, call: "HTTPClient.execute", detail: "the HTTP client was shut down", url: request.url)
    }

    /// Rejects what libcurl would send wrongly or refuse: CR, LF or NUL in the URL or a header
    /// (header injection), header names that are not HTTP tokens.
    static func validate(_ request: HTTPRequest) throws {
        func invalid(_ detail: String) -> HTTPClientError {
            HTTPClientError(code: .invalidRequest, call: "HTTPClient.execute", detail: detail, url: request.url)
        }
        let forbidden: (UInt8) -> Bool = { $0 == 0 || $0 == 10 || $0 == 13 }
        guard !request.url.isEmpty, !request.url.utf8.contains(where: { forbidden($0) || $0 == 32 }) else {
            throw invalid("the URL is empty or contains spaces or control characters")
        }
        guard !request.method.rawValue.isEmpty, request.method.rawValue.utf8.allSatisfy(isTokenByte) else {
            throw invalid("the method is not an HTTP token")
        }
        for field in request.headers {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(isTokenByte) else {
                throw invalid("header name \"\(field.name)\" is not an HTTP token")
            }
            guard !field.value.utf8.contains(where: forbidden) else {
                throw invalid("the value of header \"\(field.name)\" contains CR, LF or NUL")
            }
        }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
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
