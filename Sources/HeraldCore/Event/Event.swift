import HeraldSupport

/// An event as producers publish it to `w1.pushnotification` (seed 000), in either bus format.
/// The XML and JSON forms of one event decode to equal values.
///
/// A plain value: `Sendable`, `Codable` (for the store and dead-letter tooling) and `Hashable`.
public struct Event: SharedStorage, Sendable, Codable, Hashable {
    /// The event's properties, read and written as its own (``HeraldSupport/SharedStorage``);
    /// coded as they are, with the same keys.
    public struct Fields: Sendable, Codable, Hashable {
        /// `EventId`: picks the template (seed 000 table 2 names, e.g. `TransferIssued`).
        public var id: String
        public var type: EventType
        /// `EventDateTime`: when the event happened, with the producer's UTC offset.
        public var dateTime: EventTimestamp
        /// `EventFilters`, in document order; names may repeat.
        public var filters: [EventFilter]
        /// `EventParams`, in document order: order matters, names are ignored for substitution.
        public var params: [EventParameter]
    }

    /// Shared by every copy (``HeraldSupport/Shared``).
    public var storage: Shared<Fields>

    public init(id: String, type: EventType, dateTime: EventTimestamp, filters: [EventFilter] = [], params: [EventParameter] = []) {
        storage = Shared(
            Fields(
                id: id,
                type: type,
                dateTime: dateTime,
                filters: filters,
                params: params
            ))
    }

    /// The parameter values in order: what `{0}`, `{1}`, … refer to.
    public var parameterValues: [String] { self.params.map(\.value) }

    /// The values of every filter called `name`, in document order.
    public func filterValues(_ name: FilterName) -> [String] {
        self.filters.compactMap { $0.name == name ? $0.value : nil }
    }

    /// The `UserId` filter values.
    public var userIds: [String] { filterValues(.userId) }

    /// Names of filters that seed 000 does not define, each once, in first-seen order. They are
    /// kept on the event and reported, not dropped: recipient selection ignores them.
    public var unknownFilterNames: [String] {
        var seen: [String] = []
        for filter in self.filters where !filter.name.isKnown && !seen.contains(filter.name.rawValue) {
            seen.append(filter.name.rawValue)
        }
        return seen
    }

    /// True when the event is for everybody: a `UserId` of `0`, or no `UserId` at all on a
    /// `News` event. (A non-News event without `UserId` is not a broadcast; recipient selection
    /// refuses it unless configured otherwise.)
    public var isBroadcast: Bool {
        // Over the filters in place: asked for every message, and ``userIds`` makes an array.
        var hasUsers = false
        for filter in self.filters where filter.name == .userId {
            if Event.isBroadcastUserId(filter.value) { return true }
            hasUsers = true
        }
        return !hasUsers && self.type == .news
    }

    /// `"0"` (also written `"00"`, `" 0 "`) is the broadcast user.
    static func isBroadcastUserId(_ value: String) -> Bool {
        // Spaces, zeros, spaces: one pass over the bytes, no views of the string to hold.
        var sawZero = false
        var trailing = false
        for byte in value.utf8 {
            switch byte {
            case 0x20: trailing = sawZero
            case UInt8(ascii: "0") where !trailing: sawZero = true
            default: return false
            }
        }
        return sawZero
    }

    public init(from decoder: any Decoder) throws { storage = try Shared(from: decoder) }

    public func encode(to encoder: any Encoder) throws { try storage.encode(to: encoder) }
}
