/// One `NOTIFY` received by a listener.
public struct PostgresNotification: Sendable, Hashable {
    public let channel: String
    public let payload: String
    /// The server process id of the session that sent it.
    public let backendPID: Int32
}
