#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` with a fresh, unconnected TCP socket, closed afterwards: for tests of socket
/// options (the drivers' `TCP_CORK`), which need a TCP socket but no peer.
public func withTCPSocket(_ body: (Int32) throws -> Void) throws {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), Int32(IPPROTO_TCP))
    guard socket >= 0 else { throw TestEnvironmentError("socket(AF_INET, SOCK_STREAM) failed: errno \(errno)") }
    defer { close(socket) }
    try body(socket)
}
