internal import CCurl
import DequeModule
import Foundation
import Logging
import Synchronization

/// The loop on an ``HTTPClient``'s one driver thread. It owns the libcurl multi handle and every
/// easy handle; nothing else touches them.
///
/// Each turn: take what callers posted to the ``DriverMailbox`` (new requests, cancellations,
/// shutdown), queue the new requests and hand libcurl as many as the connections can carry
/// (the rest wait here, not in libcurl: see ``maxActive``), remove cancelled handles,
/// `curl_multi_perform` (each TLS connection's writes held until the pass ends:
/// ``TLSWriteBatch``; where that does not apply, corked when the pass starts several requests:
/// ``PassCork``), hand finished transfers back to their callers (`curl_multi_info_read`), send
/// what the pass held, then sleep in `curl_multi_poll` until a socket is ready, a libcurl timer
/// is due, a second passes, or a caller wakes it (`curl_multi_wakeup`).
///
/// Completions resume the callers' continuations from this thread. Resuming only enqueues the
/// caller's task on its executor; no caller code runs on the driver's stack, and the driver
/// holds no lock while resuming, so a caller can never block the driver.
final class CurlDriver {
    let mailbox: DriverMailbox
    private let multi: UnsafeMutableRawPointer
    private let configuration: ResolvedConfiguration
    private let counters: ClientCounters
    private let logger: Logger
    /// Transfers in the multi handle, by easy-handle key.
    private var active: [Int: Transfer] = [:]
    /// Easy-handle key by request id, to find a transfer to cancel.
    private var activeKeys: [UInt64: Int] = [:]
    /// Requests taken from the mailbox that wait for room on the connections, oldest first.
    private var waiting = Deque<PendingRequest>()
    /// The most transfers handed to libcurl at once: what the connections can carry
    /// (connections per host × streams per connection). The rest wait in ``waiting``.
    ///
    /// Why not hand libcurl everything: libcurl 7.88 visits every transfer it holds on every
    /// `curl_multi_perform` and `curl_multi_poll` (one pollfd per transfer), and transfers
    /// waiting for a stream cost it as well: CPU per request for nothing (docs/performance.md,
    /// "Transfers handed to libcurl").
    private let maxActive: Int
    /// Reset easy handles kept for the next requests.
    private var idleHandles: [EasyHandle] = []
    private let maxIdleHandles: Int
    private let viaProxy: Bool
    /// Each TLS connection's records of a pass leave together (nil where that does not apply).
    private let writeBatch: TLSWriteBatch?

    /// Makes the multi handle on the caller's thread; ``run()`` then takes it over for good.
    init(configuration: ResolvedConfiguration, counters: ClientCounters, logger: Logger) throws {
        try Curl.initializeOnce()
        guard let multi = curl_multi_init() else {
            throw HTTPClientError(code: .internalFailure, call: "curl_multi_init", detail: "returned NULL")
        }
        let settings = configuration.configuration
        do {
            try Curl.check(
                herald_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX)),
                call: "curl_multi_setopt(CURLMOPT_PIPELINING)"
            )
            try Curl.check(
                herald_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, settings.maxConnectionsPerHost),
                call: "curl_multi_setopt(CURLMOPT_MAX_HOST_CONNECTIONS)"
            )
            try Curl.check(
                herald_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, settings.maxTotalConnections ?? 0),
                call: "curl_multi_setopt(CURLMOPT_MAX_TOTAL_CONNECTIONS)"
            )
            try Curl.check(
                herald_curl_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, settings.maxConcurrentStreamsPerConnection),
                call: "curl_multi_setopt(CURLMOPT_MAX_CONCURRENT_STREAMS)"
            )
        } catch {
            curl_multi_cleanup(multi)
            throw error
        }
        self.multi = multi
        self.mailbox = DriverMailbox(multi: multi)
        self.configuration = configuration
        self.counters = counters
        self.logger = logger
        self.viaProxy = settings.proxy != nil
        self.writeBatch = TLSWriteBatch(configuration: settings)
        // Enough for every stream the connections can carry, so that a steady load reuses
        // configured handles instead of making new ones.
        self.maxIdleHandles = min(1024, settings.maxConcurrentStreamsPerConnection * settings.maxConnectionsPerHost)
        self.maxActive = max(1, settings.maxConcurrentStreamsPerConnection * settings.maxConnectionsPerHost)
    }

    /// The driver thread's body; returns after shutdown, with every handle freed.
    func run() {
        mailbox.driverThreadStarted()
        while true {
            let batch = mailbox.take()
            if batch.shutdownRequested {
                fail(batch.submissions, with: shutdownError(call: "HTTPClient.shutdown"))
                break
            }
            waiting.append(contentsOf: batch.submissions)
            for id in batch.cancellations { cancel(id) }
            let started = startWaiting()

            var running: Int32 = 0
            // Batched connections hold their writes until the pass ends anyway.
            let cork = writeBatch == nil ? PassCork(started: started, sockets: active.values.lazy.map(\.easy.socket)) : nil
            let performed = curl_multi_perform(multi, &running)
            cork?.release()
            if let writeBatch {
                // Before the completions below: a caller that got its answer sees its connection.
                counters.connectionsBatched.store(writeBatch.connectionsBatched, ordering: .relaxed)
                counters.batchedWrites.store(writeBatch.sends, ordering: .relaxed)
            }
            if performed != CURLM_OK {
                failActive(with: Curl.error(multiCode: performed, call: "curl_multi_perform"))
            }
            collectFinished()

            // Completions run on this thread and may have queued requests (a freed in-flight
            // permit starts the next delivery) without waking it, and finished transfers made
            // room for waiting ones: then do not sleep.
            let mustRunAgain = mailbox.hasWork || (!waiting.isEmpty && active.count < maxActive)
            let timeout: Int32 = mustRunAgain ? 0 : 1000
            let polled = writeBatch?.flushAndPoll(multi, timeoutMilliseconds: timeout) ?? curl_multi_poll(multi, nil, 0, timeout, nil)
            if polled != CURLM_OK {
                let error = Curl.error(multiCode: polled, call: "curl_multi_poll")
                logger.error("libcurl multi poll failed", metadata: ["error": "\(error)"])
                failActive(with: error)
                Thread.sleep(forTimeInterval: 0.01)  // never spin if polling keeps failing
            }
        }
        stop()
    }

    // MARK: Starting, finishing, cancelling

    /// Hands waiting requests to libcurl while the connections have room; returns how many.
    private func startWaiting() -> Int {
        var started = 0
        while active.count < maxActive, let request = waiting.popFirst() {
            start(request)
            started += 1
        }
        return started
    }

    private func start(_ request: PendingRequest) {
        guard !request.isFinished else { return }  // cancelled before the driver saw it
        let easy: EasyHandle
        do {
            easy = try idleHandles.popLast() ?? EasyHandle()
        } catch {
            finish(request, .failure(error))
            return
        }
        let transfer = Transfer(
            pending: request, easy: easy, bodyLimit: configuration.configuration.maxResponseBodySize, writeBatch: writeBatch)
        do {
            try transfer.configure(configuration)
            try Curl.check(curl_multi_add_handle(multi, easy.raw), call: "curl_multi_add_handle")
        } catch var error as HTTPClientError {
            error.url = request.request.url
            recycle(easy)
            finish(request, .failure(error))
            return
        } catch {
            recycle(easy)
            finish(request, .failure(error))
            return
        }
        active[easy.key] = transfer
        activeKeys[request.id] = easy.key
    }

    private func collectFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            // Copy what is needed: the message is invalid after curl_multi_remove_handle.
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let result = message.pointee.data.result
            guard let transfer = remove(key: Int(bitPattern: handle)) else { continue }
            let opened = transfer.connectionsOpened
            let outcome: Result<HTTPClientResponse, any Error> =
                result == CURLE_OK ? .success(transfer.response(connectionsOpened: opened)) : .failure(transfer.failure(result, viaProxy: viaProxy))
            counters.connectionsOpened.add(opened, ordering: .relaxed)
            recycle(transfer.easy)
            finish(transfer.pending, outcome)
        }
    }

    private func cancel(_ id: UInt64) {
        guard let key = activeKeys[id], let transfer = remove(key: key) else { return }
        counters.connectionsOpened.add(transfer.connectionsOpened, ordering: .relaxed)
        recycle(transfer.easy)
        // The caller was resumed with CancellationError by its cancellation handler already.
        finish(transfer.pending, .failure(CancellationError()))
    }

    /// Takes a transfer out of the multi handle and the driver's tables.
    private func remove(key: Int) -> Transfer? {
        guard let transfer = active.removeValue(forKey: key) else { return nil }
        activeKeys.removeValue(forKey: transfer.pending.id)
        let removed = curl_multi_remove_handle(multi, transfer.easy.raw)
        if removed != CURLM_OK {
            logger.warning("curl_multi_remove_handle failed", metadata: ["error": "\(Curl.error(multiCode: removed, call: "curl_multi_remove_handle"))"])
        }
        return transfer
    }

    private func recycle(_ easy: EasyHandle) {
        guard idleHandles.count < maxIdleHandles else { return }  // freed by EasyHandle.deinit
        easy.recycle()
        idleHandles.append(easy)
    }

    private func finish(_ request: PendingRequest, _ result: Result<HTTPClientResponse, any Error>) {
        request.finish(result)
    }

    private func fail(_ requests: [PendingRequest], with error: HTTPClientError) {
        for request in requests {
            var error = error
            error.url = request.request.url
            finish(request, .failure(error))
        }
    }

    private func failActive(with error: HTTPClientError) {
        for key in Array(active.keys) {
            guard let transfer = remove(key: key) else { continue }
            var error = error
            error.url = transfer.pending.request.url
            recycle(transfer.easy)
            finish(transfer.pending, .failure(error))
        }
    }

    private func shutdownError(call: String) -> HTTPClientError {
        HTTPClientError(code: .shutdown, call: call, detail: "the HTTP client was shut down")
    }

    /// Fails what is left, frees every handle once, then lets `shutdown()` callers go.
    private func stop() {
        failActive(with: shutdownError(call: "HTTPClient.shutdown"))
        fail(Array(waiting), with: shutdownError(call: "HTTPClient.shutdown"))
        waiting.removeAll()
        fail(mailbox.close(), with: shutdownError(call: "HTTPClient.shutdown"))
        idleHandles.removeAll()  // curl_easy_cleanup in EasyHandle.deinit
        curl_multi_cleanup(multi)
        logger.debug("HTTP client driver stopped")
        mailbox.markFinished()
    }
}
