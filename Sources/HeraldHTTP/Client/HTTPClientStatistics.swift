/// A snapshot of an ``HTTPClient``'s counters since it was made.
public struct HTTPClientStatistics: Sendable, Hashable {
    /// Connections libcurl opened (the sum of `CURLINFO_NUM_CONNECTS` over finished transfers).
    /// With HTTP/2 multiplexing this stays near the connection limit however many requests run.
    public var connectionsOpened: Int
    /// Requests that received a response (any HTTP status).
    public var requestsCompleted: Int
    /// Requests that ended with an ``HTTPClientError`` or were cancelled.
    public var requestsFailed: Int
    /// Requests submitted and not yet finished.
    public var inFlight: Int

    public init(connectionsOpened: Int, requestsCompleted: Int, requestsFailed: Int, inFlight: Int) {
        self.connectionsOpened = connectionsOpened
        self.requestsCompleted = requestsCompleted
        self.requestsFailed = requestsFailed
        self.inFlight = inFlight
    }
}
