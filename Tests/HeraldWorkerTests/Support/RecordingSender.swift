import Foundation
import HeraldAMQP
import HeraldCore
import HeraldDelivery
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Synchronization
import Testing

/// A `PushSender` for tests: records every delivery it accepts (key, user, device, token,
/// payload, time) and can be told how to treat a token: refuse it for good, fail it a number of
/// times first, fail it permanently, or answer slowly.
final class RecordingSender: PushSender {
    struct Sent: Sendable {
        let key: DeliveryKey
        let userId: String
        let deviceId: String
        let token: String
        let platform: Platform
        let eventId: String
        let position: Int64
        let body: [UInt8]
        let time: ContinuousClock.Instant

        /// The payload as JSON.
        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
    }

    enum Script: Sendable {
        case tokenDead
        case failFirst(Int, retryAfter: Duration?)
        case permanentFailure
    }

    private struct State {
        var sent: [Sent] = []
        var attempts: [String: Int] = [:]
        var scripts: [String: Script] = [:]
        var closedSources: Set<String> = []
        /// Platforms whose provider answers 503 to everything (its fault).
        var down: Set<Platform> = []
        /// Platforms whose provider answers this late.
        var slow: [Platform: Duration] = [:]
        /// Sends wait once this many were recorded, until ``release()`` (nil: never).
        var holdAt: Int?
    }

    /// This sender as seen by one worker of several (`name`): ``close(source:)`` makes that
    /// worker's sends fail from the instant it is called, as if its process had died, while a
    /// send recorded before stays visible to ``reconcile(_:)``.
    struct Source: PushSender {
        let sender: RecordingSender
        let name: String

        func send(_ delivery: PushDelivery) async -> DeliveryOutcome { await sender.send(delivery, source: name) }
        func reconcile(_ deliveryKey: DeliveryKey) async -> ReconcileAnswer { await sender.reconcile(deliveryKey) }
    }

    func source(_ name: String) -> Source { Source(sender: self, name: name) }

    /// Sends wait, unrecorded, once `count` sends were recorded (a provider frozen at a point
    /// the test chooses, so that a fault finds deliveries in flight however fast the worker
    /// is), until ``release()``; a closed source's sends and cancelled sends stop waiting.
    func hold(at count: Int) {
        state.withLock { $0.holdAt = count }
    }

    /// Held sends go on.
    func release() {
        state.withLock { $0.holdAt = nil }
    }

    /// Sends from worker `name` fail from now on.
    func close(source name: String) {
        state.withLock { _ = $0.closedSources.insert(name) }
    }

    private let state = Mutex(State())
    /// Every send waits this long first (a slow provider).
    let delay: Duration

    init(delay: Duration = .zero) {
        self.delay = delay
    }

    func script(_ script: Script?, token: String) {
        state.withLock { $0.scripts[token] = script }
    }

    /// The provider of `platform` fails every request (a 5xx: its fault), or answers again.
    func setDown(_ platform: Platform, _ down: Bool) {
        state.withLock { state in
            if down { state.down.insert(platform) } else { state.down.remove(platform) }
        }
    }

    /// The provider of `platform` answers after `delay` (nil: at once again).
    func setSlow(_ platform: Platform, _ delay: Duration?) {
        state.withLock { $0.slow[platform] = delay }
    }

    var sent: [Sent] { state.withLock { $0.sent } }
    var count: Int { state.withLock { $0.sent.count } }

    func attempts(token: String) -> Int { state.withLock { $0.attempts[token] ?? 0 } }

    /// Delivered when this sender recorded the key (two workers sharing one sender stand for
    /// one provider that remembers what it accepted, as the log sender's file does).
    func reconcile(_ deliveryKey: DeliveryKey) async -> ReconcileAnswer {
        state.withLock { state in state.sent.contains { $0.key == deliveryKey } } ? .delivered : .notDelivered
    }

    func send(_ delivery: PushDelivery) async -> DeliveryOutcome {
        await send(delivery, source: nil)
    }

    private func isHeld(source: String?) -> Bool {
        state.withLock { state in
            guard let holdAt = state.holdAt, state.sent.count >= holdAt else { return false }
            return source.map { !state.closedSources.contains($0) } ?? true
        }
    }

    func send(_ delivery: PushDelivery, source: String?) async -> DeliveryOutcome {
        if delay > .zero { try? await Task.sleep(for: delay) }
        if let slow = state.withLock({ $0.slow[delivery.platform] }) { try? await Task.sleep(for: slow) }
        while !Task.isCancelled, isHeld(source: source) { try? await Task.sleep(for: .milliseconds(1)) }
        return state.withLock { state in
            if let source, state.closedSources.contains(source) { return .retryAfter(nil, reason: "the process is gone") }
            let token = delivery.target.token
            state.attempts[token, default: 0] += 1
            if state.down.contains(delivery.platform) { return .retryAfter(nil, reason: "ServiceUnavailable", providerFault: true) }
            switch state.scripts[token] {
            case .tokenDead:
                return .tokenDead(reason: "Unregistered")
            case .failFirst(let n, let after) where state.attempts[token]! <= n:
                return .retryAfter(after, reason: "ServiceUnavailable")
            case .permanentFailure:
                return .permanentFailure(reason: "BadTopic")
            default:
                state.sent.append(
                    Sent(
                        key: delivery.deliveryKey, userId: delivery.userId, deviceId: delivery.deviceId, token: token, platform: delivery.platform,
                        eventId: delivery.eventId, position: delivery.position, body: delivery.payload.body, time: .now
                    ))
                return .sent
            }
        }
    }
}
