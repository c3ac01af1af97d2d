import Foundation

/// A broadcast sent in windows of devices (migration 10): what a worker needs to render it again
/// after a restart, and how far it went. See ``BroadcastRepository``.
public struct Broadcast: Sendable, Hashable {
    /// Its journal message row: its deliveries' rows name it, as any message's.
    public var messageId: Int64
    public var key: MessageKey
    /// The message as received, and its content type: decoded again by a worker that resumes it.
    public var body: [UInt8]
    public var contentType: String?
    /// For a partition copy: its partition and the partition count.
    public var partition: Int?
    public var partitions: Int?
    /// Every device up to this one (``Subscription/deviceRef``) is done.
    public var cursor: Int64
    /// Windows were started up to this device: those after ``cursor`` may have sent some of
    /// their deliveries.
    public var claimed: Int64
    /// Devices selected in the windows done so far.
    public var selected: Int64

    public init(
        messageId: Int64, key: MessageKey, body: [UInt8], contentType: String?, partition: Int?, partitions: Int?, cursor: Int64 = 0,
        claimed: Int64 = 0, selected: Int64 = 0
    ) {
        self.messageId = messageId
        self.key = key
        self.body = body
        self.contentType = contentType
        self.partition = partition
        self.partitions = partitions
        self.cursor = cursor
        self.claimed = claimed
        self.selected = selected
    }
}

/// What became of a broadcast so far, for support (`herald deliveries`, the admin API).
public struct BroadcastProgress: Sendable, Hashable, Codable {
    public var done: Bool
    /// Devices selected in the windows done so far (the whole audience once done).
    public var selected: Int64
    public var sent: Int64
    /// Retrying, deferred, or queued behind the user's earlier push.
    public var waiting: Int64
    /// Failed for good, or the token is dead.
    public var failed: Int64
}
