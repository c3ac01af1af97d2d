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
    /// TLS connections whose writes the driver holds until its pass ends (from their first
    /// response on; 0 where batching does not apply: see the client's driver).
    public var connectionsBatched: Int
    /// `send(2)` calls that carried those connections' held writes: far fewer than their requests
    /// when many go at once.
    public var batchedWrites: Int
}
