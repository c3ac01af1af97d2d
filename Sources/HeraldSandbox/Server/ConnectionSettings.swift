/// Fixed per-connection protocol settings, from ``HTTP2ServerConfiguration``.
struct ConnectionSettings: Sendable {
    let maxConcurrentStreams: Int
    let allowHTTP1: Bool
    let resetFrameLimit: Int
}
