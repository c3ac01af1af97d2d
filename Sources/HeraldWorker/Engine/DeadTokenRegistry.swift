import HeraldCore
import Synchronization

/// Tokens the provider refused for good, remembered in this process so that deliveries already
/// selected for the device (before the store's change notification emptied the subscription
/// cache) are not sent. Bounded: when full it starts again empty (the store still knows).
final class DeadTokenRegistry: Sendable {
    private let capacity: Int
    private let tokens = Mutex<Set<String>>([])
    private let known = Atomic<Int>(0)

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    func markDead(_ target: PushTarget) {
        let key = Self.key(target)
        tokens.withLock { tokens in
            if tokens.count >= capacity { tokens.removeAll(keepingCapacity: true) }
            tokens.insert(key)
            known.store(tokens.count, ordering: .relaxed)
        }
    }

    /// No token refused yet: the hot path skips ``isDead(_:)`` (and its key) altogether.
    var isEmpty: Bool { known.load(ordering: .relaxed) == 0 }

    func isDead(_ target: PushTarget) -> Bool {
        let key = Self.key(target)
        return tokens.withLock { $0.contains(key) }
    }

    private static func key(_ target: PushTarget) -> String {
        "\(target.platform.rawValue)\u{0}\(target.app ?? "")\u{0}\(target.token)"
    }
}
