import HeraldCore

/// One page of every subscription (for a broadcast), from
/// ``DeviceRepository/allSubscriptions(after:limit:)``.
public struct SubscriptionPage: Sendable {
    public var subscriptions: [Subscription]
    /// Pass it to the next call; `nil` after the last page.
    public var next: Cursor?

    /// Where a page ended (keyset pagination: stable while devices change).
    public struct Cursor: Sendable, Hashable {
        let userId: String
        let deviceRef: Int
    }
}
