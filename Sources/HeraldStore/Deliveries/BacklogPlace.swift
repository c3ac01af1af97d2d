/// A delivery's place in its user's backlog (``DeliveryBacklog``): whose order it keeps (a user
/// and a platform, `"<user id>/<platform>"`) and where in it.
public struct BacklogPlace: Sendable, Hashable {
    public let orderKey: String
    public let seq: Int64

    public init(orderKey: String, seq: Int64) {
        self.orderKey = orderKey
        self.seq = seq
    }
}

/// A delivery to queue (``DeliveryBacklog/enqueue(_:)``): its place, its journal row's fields, and
/// everything needed to send it later without its message (`delivery`, UTF-8 JSON the worker
/// writes and reads).
public struct BacklogRow: Sendable {
    public let place: BacklogPlace
    public let deviceRef: Int64
    public let position: Int64
    public let messageId: Int64
    public let userId: String
    public let attempts: Int
    public let delivery: [UInt8]

    public init(place: BacklogPlace, deviceRef: Int64, position: Int64, messageId: Int64, userId: String, attempts: Int, delivery: [UInt8]) {
        self.place = place
        self.deviceRef = deviceRef
        self.position = position
        self.messageId = messageId
        self.userId = userId
        self.attempts = attempts
        self.delivery = delivery
    }
}

/// One queued delivery read back (``DeliveryBacklog/window(of:after:limit:)``).
public struct BacklogEntry: Sendable {
    public let seq: Int64
    public let delivery: [UInt8]
}
