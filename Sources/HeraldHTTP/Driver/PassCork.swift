import HeraldSupport

/// Holds back a driver pass's writes on the connections' sockets (`TCP_CORK`) and lets them go
/// together when the pass ends.
///
/// Why: libcurl 7.88 has nghttp2 write every frame to the socket as it makes it, so a pass that
/// starts several requests sends each one's HEADERS and DATA in separate system calls and
/// segments, and every segment costs the receiving side a wake-up and a read. Corked for the
/// pass, they leave as a few full segments when ``release()`` uncorks (more deliveries per
/// second against the sandbox: docs/performance.md, "A pass's writes corked together"). With a
/// provider's round trip a pass starts few requests, and two
/// `setsockopt` calls per connection would cost more than they save: so only passes that start
/// at least ``minimumStarts`` requests are corked.
///
/// Nothing waits longer than the pass: the driver uncorks right after `curl_multi_perform`,
/// and libcurl writes only inside its calls on the driver thread. The sockets are read from
/// transfers in the multi handle just before corking, so each is open and libcurl's; one that
/// libcurl closed during the pass may be uncorked after its number was reused, which is
/// harmless (uncorking an uncorked socket only pushes what it holds).
struct PassCork {
    static let minimumStarts = 2

    private var sockets: [Int32] = []

    /// Corks `sockets` (the connections of the transfers in the multi handle; nil for one
    /// without a connection yet) when `started` requests begin this pass.
    init(started: Int, sockets candidates: some Sequence<Int32?>) {
        guard started >= Self.minimumStarts else { return }
        for case let socket? in candidates where !sockets.contains(socket) {
            sockets.append(socket)
            TCPCork.set(socket, corked: true)
        }
    }

    /// Uncorks what ``init(started:sockets:)`` corked: the held writes leave now.
    func release() {
        for socket in sockets { TCPCork.set(socket, corked: false) }
    }
}
