/// What a ``PostgresNotifications`` sequence yields.
///
/// Why more than notifications: NOTIFY is not queued for absent listeners, so anything sent
/// while the listener was disconnected is lost. ``reconnected`` tells a cache that it must
/// reload (or flush) because it may have missed invalidations.
public enum PostgresNotificationEvent: Sendable {
    /// `LISTEN` succeeded for the first time; notifications sent from now on are delivered.
    case listening
    /// A notification on the channel.
    case notification(PostgresNotification)
    /// The listener's connection failed or broke; it keeps retrying with backoff.
    case disconnected(PostgresError)
    /// `LISTEN` succeeded again after a disconnection: notifications may have been missed.
    case reconnected
}
