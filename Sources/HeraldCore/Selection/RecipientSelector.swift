/// Decides who receives an event (seed 000 `EventFilters`).
///
/// Rules, in the order they are checked for each subscription:
/// 1. a disabled subscription receives nothing; a subscription that muted the event's tag, or
///    that lists tags without the event's tag, does not receive it (tags compare exactly; the
///    API stores them lowercase; an event without a tag is not restricted by tags);
/// 2. filters of one name are OR-ed, different names AND-ed, an absent name does not restrict;
///    names seed 000 does not define are ignored (the decoder reports them);
/// 3. `UserId`: the subscription's user must be one of the values, unless the event is a
///    broadcast (`UserId 0`, or no `UserId` on a `News` event; see ``SelectionPolicy`` for other
///    types without `UserId`);
/// 4. `CultureId`: ASCII case-insensitive; a language alone (`ru`) matches all its cultures;
/// 5. `ZoneId`, `BranchId`: exact; a subscription without a zone (branch) does not match an
///    event that names zones (branches).
///
/// A device subscribed for several users receives each selected user's event once per user; a
/// broadcast reaches each device once, addressed to user `"0"`. Output keeps the order of the
/// input. Pure and `Sendable`; throws only ``RecipientSelectionError``.
public struct RecipientSelector: Sendable {
    public var policy: SelectionPolicy

    public init(policy: SelectionPolicy = .default) {
        self.policy = policy
    }

    /// The recipients of `event` among `subscriptions`. `tag` is the event's tag from its
    /// ``EventMetadata`` (nil: no tag restriction).
    public func select(_ event: Event, tag: String?, from subscriptions: [Subscription]) throws(RecipientSelectionError) -> [Recipient] {
        try select(event, tag: tag, from: subscriptions[...])
    }

    /// ``select(_:tag:from:)`` of a slice (the worker's pools are slices of its audience). Not
    /// generic over the sequence: called from another module, a generic one ran unspecialized,
    /// through a protocol witness per subscription.
    public func select(_ event: Event, tag: String?, from subscriptions: ArraySlice<Subscription>) throws(RecipientSelectionError) -> [Recipient] {
        let criteria = try Criteria(event: event, policy: policy)
        var result: [Recipient] = []
        var seen = SmallSet<Seen>()
        // Most of the pool is selected (it holds the event's users' subscriptions, or a
        // broadcast's branch): one allocation each instead of one per growth.
        let expected = Swift.min(subscriptions.count, 1024)
        result.reserveCapacity(expected)
        seen.reserveCapacity(expected)
        for subscription in subscriptions where criteria.matches(subscription, tag: tag) {
            let userId = criteria.isBroadcast ? "0" : subscription.userId
            guard seen.insert(Seen(platform: subscription.platform, deviceId: subscription.deviceId, userId: userId)) else { continue }
            result.append(Recipient(subscription: subscription, addressedUserId: userId))
        }
        return result
    }

    /// A recipient already selected: a device (per platform) once per addressed user.
    private struct Seen: Hashable {
        let platform: Platform
        let deviceId: String
        let userId: String
    }

    /// Throws what ``select(_:tag:from:)`` would throw for `event` (it has no addressee, or a
    /// filter the policy refuses) without looking at any subscription: a broadcast sent in
    /// windows is checked so before it is acknowledged.
    public func validate(_ event: Event) throws(RecipientSelectionError) {
        _ = try Criteria(event: event, policy: policy)
    }

    /// Whether `subscription` would receive `event` (ignores the once-per-device rule of
    /// broadcasts).
    public func matches(_ event: Event, tag: String?, subscription: Subscription) throws(RecipientSelectionError) -> Bool {
        try Criteria(event: event, policy: policy).matches(subscription, tag: tag)
    }

    /// The event's filters, gathered once into sets.
    private struct Criteria {
        let isBroadcast: Bool
        let users: SmallSet<String>
        let cultures: SmallSet<String>
        let zones: SmallSet<String>
        let branches: SmallSet<String>

        init(event: Event, policy: SelectionPolicy) throws(RecipientSelectionError) {
            var users = SmallSet<String>()
            var cultures = SmallSet<String>()
            var zones = SmallSet<String>()
            var branches = SmallSet<String>()
            var broadcastUser = false
            for filter in event.filters {
                switch filter.name {
                case .userId:
                    users.insert(filter.value)
                    broadcastUser = broadcastUser || Event.isBroadcastUserId(filter.value)
                case .cultureId: cultures.insert(filter.value)
                case .zoneId: zones.insert(filter.value)
                case .branchId: branches.insert(filter.value)
                default: break
                }
            }
            if users.isEmpty && event.type != .news && !policy.broadcastNonNewsWithoutUserId {
                throw RecipientSelectionError(
                    code: .noAddressee, eventId: event.id,
                    reason: "a \(event.type.rawValue) event without a UserId filter is not a broadcast; only News may omit UserId"
                )
            }
            isBroadcast = users.isEmpty || broadcastUser
            self.users = users
            self.cultures = cultures
            self.zones = zones
            self.branches = branches
        }

        func matches(_ s: Subscription, tag: String?) -> Bool {
            guard s.isEnabled else { return false }
            if let tag {
                if s.mutedTags.contains(tag) { return false }
                if !s.tags.isEmpty && !s.tags.contains(tag) { return false }
            }
            if !isBroadcast && !users.contains(s.userId) { return false }
            if !cultures.isEmpty && !cultures.contains(where: { Criteria.culture($0, matches: s.culture) }) { return false }
            if !zones.isEmpty { guard let zone = s.zoneId, zones.contains(zone) else { return false } }
            if !branches.isEmpty { guard let branch = s.branchId, branches.contains(branch) else { return false } }
            return true
        }

        /// In any case: "ru-ru" matches "ru-RU"; "ru" matches "ru-RU" and "ru".
        static func culture(_ filter: String, matches culture: String) -> Bool {
            if filter.asciiCaseInsensitiveEquals(culture) { return true }
            let dash = UInt8(ascii: "-")
            guard !filter.utf8.contains(dash) else { return false }
            // The language: the culture up to its first "-" byte (no array of parts per
            // subscription; cultures are ASCII, the API checks them).
            let language = culture.utf8.firstIndex(of: dash).map { culture[..<$0] } ?? culture[...]
            return language.asciiCaseInsensitiveEquals(filter)
        }
    }
}
