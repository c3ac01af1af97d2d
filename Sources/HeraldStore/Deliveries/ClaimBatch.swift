/// What ``DeliveryJournal/claim(_:)`` takes: the messages of a chunk, in arrival order, and
/// the deliveries each of them makes, in the order they are to be numbered.
public struct ClaimBatch: Sendable {
    /// One delivery: the index of its message in ``messages``, the store id of its device, and
    /// the user it is addressed to (`"0"` for a broadcast; only read with ``countsUnread``).
    public struct Delivery: Sendable, Hashable {
        public var message: Int
        public var deviceRef: Int64
        public var userId: String

        public init(message: Int, deviceRef: Int64, userId: String = "0") {
            self.message = message
            self.deviceRef = deviceRef
            self.userId = userId
        }
    }

    public var messages: [MessageKey]
    /// The event id of each message (same order), kept with the message; empty: none known.
    public var eventIds: [String?]
    public var deliveries: [Delivery]
    /// Also answer each new delivery's unread count (``ClaimAnswer/unread``), for the app
    /// badge: the same statement reads the devices' read positions, no extra round trip.
    public var countsUnread: Bool
    /// Some message may be in the journal already (a redelivery, a replayed dead letter, a copy
    /// back from the wait queue): claim at once with the statement that skips known keys. When
    /// false the claim first tries the cheaper plain insert, and falls back if a key is known
    /// after all (a producer's repeat).
    public var mayHoldKnown: Bool

    public init(
        messages: [MessageKey] = [], eventIds: [String?] = [], deliveries: [Delivery] = [], countsUnread: Bool = false, mayHoldKnown: Bool = false
    ) {
        self.messages = messages
        self.eventIds = eventIds
        self.deliveries = deliveries
        self.countsUnread = countsUnread
        self.mayHoldKnown = mayHoldKnown
    }
}

/// The journal's answer to a ``ClaimBatch``.
public struct ClaimAnswer: Sendable, Hashable {
    /// Per message: the id of the row the claim created, or `nil` when the journal already
    /// knew the message (redelivered, replayed, repeated): ask ``DeliveryJournal/history(of:)``.
    /// A key repeated within the batch is new once, at its first place.
    public var messageIds: [Int64?]
    /// Per delivery: the device position reserved for it (consecutive per device, in batch
    /// order), or `nil` when its message was not new or its device no longer exists.
    public var positions: [Int64?]
    /// With ``ClaimBatch/countsUnread``, per delivery that got a position: how many pushes its
    /// user has not read on its device, this one included (the app badge; see
    /// ``DeliveryJournal/claim(_:)``). Empty otherwise.
    public var unread: [Int?] = []
}
