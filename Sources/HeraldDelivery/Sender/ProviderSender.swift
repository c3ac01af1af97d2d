import HTTPTypes
import HeraldCore
import HeraldHTTP
import Logging
import Synchronization

/// The sending path APNs and FCM share; ``APNsSender`` and ``FCMSender`` each hold one, and
/// their ``PushProvider`` says what differs.
///
/// One delivery: the provider prepares its request (or refuses it: counted and reported, never
/// sent); the request waits for a permit of the ``InFlightGate``; it is sent with the current
/// credential through the provider's client; the answer is classified by the provider, on the
/// HTTP client's driver thread, and counted. When the provider refuses the credential, it is
/// invalidated (once, however many requests saw the refusal) and the request tried once more
/// with a new one; nothing else is retried here — the worker applies its `RetryPolicy`.
///
/// Backpressure: at most ``concurrency`` requests in flight; further deliveries wait in the gate
/// (``PushSender/send(_:)`` suspends; ``PushSender/submit(_:timed:)`` returns at once and the
/// delivery starts when a permit frees). Until the first answer arrives only one request is
/// sent, so that a fresh connection learns the server's stream limit before a burst.
///
/// The cost per delivery, on ``PushSender/submit(_:timed:)``: no task, no actor hop, no
/// continuation. The credential is read from its cache under a lock, the request goes to the
/// HTTP client's driver thread through its queue, and the outcome is classified and reported on
/// that thread. A task is made only to make or fetch a credential the cache lacks.
///
/// Thread rules: a `Sendable` class, not an actor: everything it holds is immutable or behind
/// its own lock (the gate, the counters, the credential caches), so no call needs to hop onto
/// an executor; it may be called from anywhere, concurrently.
final class ProviderSender<Provider: PushProvider>: Sendable {
    let provider: Provider
    private let gate: InFlightGate
    /// ``PushSender/concurrency``, and the gate's bound: `maxInFlight`, or the streams the
    /// clients' connections open if fewer. A request beyond them waits at the gate, not in
    /// libcurl, where with libcurl 7.88 the wait would count in its answer time and could make
    /// the circuit breaker judge a fast provider slow.
    let concurrency: Int
    private let logger: Logger
    private let counters = Mutex(SenderStatistics())

    init(provider: Provider, maxInFlight: Int, logger: Logger) {
        self.provider = provider
        let streams = provider.clients.reduce(0) { $0 + $1.configuration.maxConnectionsPerHost * $1.configuration.maxConcurrentStreamsPerConnection }
        self.concurrency = min(maxInFlight, streams)
        self.gate = InFlightGate(limit: concurrency)
        self.logger = logger
    }

    /// ``PushSender/send(_:)``: one ``dispatch(_:abandoned:completion:)``, awaited.
    func send(_ delivery: PushDelivery) async -> DeliveryOutcome {
        await SingleSend.run { abandoned, completion in self.dispatch(delivery, abandoned: abandoned) { outcome, _ in completion(outcome) } }
    }

    /// ``PushSender/submit(_:timed:)``: every delivery dispatched at once, in order, its outcome
    /// and answer time reported with its index.
    func submit(_ deliveries: [PushDelivery], completion: @escaping @Sendable (Int, DeliveryOutcome, Duration?) -> Void) {
        for (index, delivery) in deliveries.enumerated() {
            dispatch(delivery, abandoned: nil) { completion(index, $0, $1) }
        }
    }

    /// Counters since the sender started, with the provider's credentials made and connections
    /// opened.
    var statistics: SenderStatistics {
        var snapshot = counters.withLock { $0 }
        snapshot.credentialsIssued = provider.credentials.reduce(0) { $0 + $1.refreshes }
        snapshot.connectionsOpened = provider.clients.reduce(0) { $0 + $1.statistics.connectionsOpened }
        return snapshot
    }

    /// Stops the provider's HTTP clients; sends in flight end with `.retryAfter`.
    func shutdown() async {
        for client in provider.clients { await client.shutdown() }
    }

    /// Sends `delivery` once a permit is free and reports its outcome to `completion`, once.
    /// `abandoned` (from ``PushSender/send(_:)``) says the caller stopped waiting before the
    /// permit came: the delivery is then not sent.
    func dispatch(
        _ delivery: PushDelivery, abandoned: (@Sendable () -> Bool)?, completion: @escaping @Sendable (DeliveryOutcome, Duration?) -> Void
    ) {
        let finish: @Sendable (DeliveryOutcome, Duration?) -> Void = { [self] outcome, answerTime in
            counters.withLock { $0.count(outcome) }
            if outcome != .sent { logger.debugRefusal(Provider.notAccepted, delivery: delivery, outcome: outcome) }
            completion(outcome, answerTime)
        }
        let prepared: ProviderRequest<Provider.Credential>
        switch provider.prepare(delivery) {
        case .ready(let ready): prepared = ready
        case .refused(let outcome):
            finish(outcome, nil)
            return
        }
        gate.acquire { [self] in
            if abandoned?() == true {
                gate.release()
                return
            }
            transmit(prepared, refreshedCredential: false) { [self] outcome, answerTime in
                gate.release()
                finish(outcome, answerTime)
            }
        }
    }

    /// Sends the prepared request with its credential and classifies the answer, on the HTTP
    /// client's driver thread. A refused credential is replaced once and the request sent again.
    private func transmit(
        _ prepared: ProviderRequest<Provider.Credential>, refreshedCredential: Bool,
        completion: @escaping @Sendable (DeliveryOutcome, Duration?) -> Void
    ) {
        var request = prepared.request
        let bearer: String?
        if let credential = prepared.credential {
            guard let value = credential.cachedValue() else {
                // None yet, or it is too old or was refused: make one (a task, once per refresh).
                Task { [self] in
                    do {
                        _ = try await credential.value()
                        transmit(prepared, refreshedCredential: refreshedCredential, completion: completion)
                    } catch {
                        completion(provider.outcome(credentialError: error, logger: logger), nil)
                    }
                }
                return
            }
            bearer = value
            request.headerFields[.authorization] = Provider.authorizationScheme + value
        } else {
            bearer = nil
        }
        counters.withLock { $0.requests += 1 }
        prepared.client.submit(request) { [self] result in
            let response: HTTPClientResponse
            switch result {
            case .success(let answer): response = answer
            case .failure(let error):
                completion(provider.outcome(of: error), nil)
                return
            }
            gate.open()
            if let bearer, let credential = prepared.credential, let refusal = provider.credentialRefusal(in: response) {
                if !refreshedCredential {
                    counters.withLock { $0.credentialRetries += 1 }
                    if credential.invalidate(bearer) { provider.logInvalidated(credential, after: refusal, logger: logger) }
                    transmit(prepared, refreshedCredential: true, completion: completion)
                    return
                }
                provider.logRefusedAgain(credential, refusal: refusal, logger: logger)
            }
            completion(provider.outcome(of: response), response.answerTime)
        }
    }
}
