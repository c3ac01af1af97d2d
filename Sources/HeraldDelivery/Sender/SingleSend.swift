import HeraldCore
import Synchronization

/// ``PushSender/send(_:)`` on top of a provider sender's callback path: suspends until the
/// outcome arrives. When the task is cancelled it returns `.retryAfter` at once and marks the
/// delivery abandoned, so that one still waiting for a permit is never sent (one already sent
/// finishes in the background, its outcome dropped).
enum SingleSend {
    typealias Start = (_ abandoned: @escaping @Sendable () -> Bool, _ completion: @escaping @Sendable (DeliveryOutcome) -> Void) -> Void

    static func run(_ start: Start) async -> DeliveryOutcome {
        let waiter = OutcomeWaiter()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard waiter.install(continuation) else { return }
                start({ waiter.isAbandoned }, { waiter.resume($0) })
            }
        } onCancel: {
            waiter.cancel()
        }
    }
}

/// The one continuation of a ``SingleSend``, resumed once: by the outcome or by cancellation.
private final class OutcomeWaiter: Sendable {
    private enum Phase {
        case created
        case waiting(CheckedContinuation<DeliveryOutcome, Never>)
        case finished(abandoned: Bool)
    }

    private let phase = Mutex(Phase.created)

    /// Stores the continuation; false (having resumed it) when the task was cancelled first.
    func install(_ continuation: CheckedContinuation<DeliveryOutcome, Never>) -> Bool {
        let installed = phase.withLock { phase -> Bool in
            guard case .created = phase else { return false }
            phase = .waiting(continuation)
            return true
        }
        if !installed { continuation.resume(returning: .retryAfter(nil, reason: "cancelled before sending")) }
        return installed
    }

    func resume(_ outcome: DeliveryOutcome) {
        take(abandoned: false)?.resume(returning: outcome)
    }

    func cancel() {
        take(abandoned: true)?.resume(returning: .retryAfter(nil, reason: "cancelled"))
    }

    var isAbandoned: Bool {
        phase.withLock { phase in
            if case .finished(abandoned: true) = phase { return true }
            return false
        }
    }

    private func take(abandoned: Bool) -> CheckedContinuation<DeliveryOutcome, Never>? {
        phase.withLock { phase in
            switch phase {
            case .created:
                phase = .finished(abandoned: abandoned)
                return nil
            case .waiting(let continuation):
                phase = .finished(abandoned: abandoned)
                return continuation
            case .finished:
                return nil
            }
        }
    }
}
