/// A source of the bearer credential a provider's requests carry (``APNsTokenProvider``,
/// ``FCMAccessTokenProvider``): each says only how a new credential is made (``refresh()``);
/// caching, single flight and invalidation are its ``CachedCredential``'s, reached the same way
/// for both.
protocol ProviderCredential: Sendable {
    var cache: CachedCredential<String> { get }
    /// A new credential and when it stops being usable (signed, or fetched from the provider).
    func refresh() async throws -> CachedCredential<String>.Fresh
}

extension ProviderCredential {
    /// The credential to send now: the cached one, or a new one when it is too old or was
    /// refused; concurrent callers share one refresh.
    func value() async throws -> String {
        try await cache.value { try await self.refresh() }
    }

    /// The current credential if it may be sent now, else nil (then ``value()`` makes one): one
    /// lock, no hop, for the senders' batch path.
    func cachedValue() -> String? { cache.cachedValue() }

    /// The provider refused `value`: the next ``value()`` makes a new one, unless `value` is no
    /// longer current (another caller handled the refusal) or a forced refresh is not due yet.
    /// Returns whether this call invalidated it.
    @discardableResult
    func invalidate(_ value: String) -> Bool { cache.invalidate(value) }

    /// Credentials made so far.
    var refreshes: Int { cache.refreshes }
}
