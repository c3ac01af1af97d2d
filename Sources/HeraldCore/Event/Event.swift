/// An event as producers publish it to `w1.pushnotification` (seed 000), in either bus format.
/// The XML and JSON forms of one event decode to equal values.
///
/// A plain value: `Sendable`, `Codable` (for the store and dead-letter tooling) and `Hashable`.
public struct Event: Sendable, Codable, Hashable {
    /// `EventId`: picks the template (seed 000 table 2 names, e.g. `TransferIssued`).
    public var id: String
    public var type: EventType
    /// `EventDateTime`: when the event happened, with the producer's UTC offset.
    public var dateTime: EventTimestamp
    /// `EventFilters`, in document order; names may repeat.
    public var filters: [EventFilter]
    /// `EventParams`, in document order: order matters, names are ignored for substitution.
    public var params: [EventParameter]

    public init(id: String, type: EventType, dateTime: EventTimestamp, filters: [EventFilter] = [], params: [EventParameter] = []) {
        self.id = id
        self.type = type
        self.dateTime = dateTime
        self.filters = filters
        self.params = params
    }

    /// The parameter values in order: what `{0}`, `{1}`, … refer to.
    public var parameterValues: [String] { params.map(\.value) }

    /// The values of every filter called `name`, in document order.
    public func filterValues(_ name: FilterName) -> [String] {
        filters.compactMap { $0.name == name ? $0.value : nil }
    }

    /// The `UserId` filter values.
    public var userIds: [String] { filterValues(.userId) }

    /// Names of filters that seed 000 does not define, each once, in first-seen order. They are
    /// kept on the event and reported, not dropped: recipient selection ignores them.
    public var unknownFilterNames: [String] {
        var seen: [String] = []
        for filter in filters where !filter.name.isKnown && !seen.contains(filter.name.rawValue) {
            seen.append(filter.name.rawValue)
        }
        return seen
    }

    /// True when the event is for everybody: a `UserId` of `0`, or no `UserId` at all on a
    /// `News` event. (A non-News event without `UserId` is not a broadcast; recipient selection
    /// refuses it unless configured otherwise.)
    public var isBroadcast: Bool {
        let users = userIds
        if users.isEmpty { return type == .news }
        return users.contains(where: Event.isBroadcastUserId)
    }

    /// `"0"` (also written `"00"`, `" 0 "`) is the broadcast user.
    static func isBroadcastUserId(_ value: String) -> Bool {
        let trimmed = value.utf8.drop { $0 == 0x20 }.reversed().drop { $0 == 0x20 }
        return !trimmed.isEmpty && trimmed.allSatisfy { $0 == UInt8(ascii: "0") }
    }
}
