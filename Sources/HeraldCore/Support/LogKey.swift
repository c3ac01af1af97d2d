/// The metadata keys of Herald's log lines, defined once for every module, so that every line about
/// the same thing uses the same name (a log search for `herald.user_id=…` finds them all).
public enum LogKey {
    /// The event's id.
    public static let eventId = "herald.event_id"
    /// The user a delivery or request is for.
    public static let userId = "herald.user_id"
    /// A device's id (seed 000's DeviceId).
    public static let deviceId = "herald.device_id"
    /// Ios or android.
    public static let platform = "herald.platform"
    /// The app (APNs topic / FCM project alias).
    public static let app = "herald.app"
    /// A device token, always through shortToken.
    public static let token = "herald.token"
    /// A delivery's collapse id.
    public static let deliveryKey = "herald.delivery_key"
    /// A message's key (message-id or body hash).
    public static let messageKey = "herald.message_key"
    /// A broker queue.
    public static let queue = "herald.queue"
    /// What went wrong.
    public static let error = "herald.error"
    /// A stable error or dead-letter code.
    public static let code = "herald.code"
    /// Attempts made.
    public static let attempts = "herald.attempts"
    /// The wait before the next try.
    public static let retryIn = "herald.retry_in"
    /// How many.
    public static let count = "herald.count"
    /// The last device a broadcast is done with (its windows resume after it).
    public static let cursor = "herald.cursor"
    /// A dead letter's id.
    public static let deadLetterId = "herald.dead_letter_id"
    /// The broker URL, redacted.
    public static let amqp = "herald.amqp"
    /// The broker's answer.
    public static let brokerError = "herald.broker_error"
    /// Worker.partitions of a copy's maker.
    public static let copyPartitions = "herald.copy_partitions"
    /// An APNs signing key's id.
    public static let keyId = "herald.key_id"
    /// An Apple team id.
    public static let teamId = "herald.team_id"
    /// Worker.threads.
    public static let lanes = "herald.lanes"
    /// A listening address.
    public static let listen = "herald.listen"
    /// A store call.
    public static let operation = "herald.operation"
    /// A delivery's outcome.
    public static let outcome = "herald.outcome"
    /// One partition (a scope of the backlog).
    public static let partition = "herald.partition"
    /// Worker.partitions.
    public static let partitions = "herald.partitions"
    /// Which partitions a worker claimed, comma-separated (the campaign's evidence of an owner
    /// change).
    public static let partitionsOwned = "herald.partitions_owned"
    /// The consumer prefetch.
    public static let prefetch = "herald.prefetch"
    /// An FCM project id.
    public static let project = "herald.project"
    /// A provider's reason.
    public static let reason = "herald.reason"
    /// A retry interval.
    public static let retryEvery = "herald.retry_every"
    /// Deliveries running.
    public static let running = "herald.running"
    /// A journal state.
    public static let state = "herald.state"
    /// A worker's counters.
    public static let statistics = "herald.statistics"
    /// A provider URL.
    public static let url = "herald.url"
    /// Configured apps.
    public static let apps = "herald.apps"
    /// An HTTP status.
    public static let status = "herald.status"
    /// Messages requeued.
    public static let requeued = "herald.requeued"

    /// A device token shortened for logs and operator output: its first and last four characters,
    /// enough to find a device, never the whole token.
    public static func shortToken(_ token: String) -> String {
        guard token.count > 12 else { return String(repeating: "*", count: token.count) }
        return "\(token.prefix(4))…\(token.suffix(4))"
    }
}
