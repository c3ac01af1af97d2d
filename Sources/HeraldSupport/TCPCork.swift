#if canImport(Glibc)
    import Glibc
#endif

/// `TCP_CORK` on a socket: while set, the kernel holds what is written and sends it as full
/// segments when it is cleared (or after 200 ms at most).
///
/// Why one place: the drivers that write bursts of small frames (libcurl's HTTP/2 frames, the
/// broker connection's acks) pay the loopback's whole transmit and receive path per segment,
/// and on the receiving side a wake-up and a read; corked, a burst leaves as one segment. A
/// socket that is not TCP refuses the option, and then writes as it would have: failures are
/// ignored on purpose.
public enum TCPCork {
    public static func set(_ socket: Int32, corked: Bool) {
        var value: Int32 = corked ? 1 : 0
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Whether the socket holds its writes now (false when it cannot say).
    public static func isCorked(_ socket: Int32) -> Bool {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &value, &length) == 0 && value != 0
    }
}
