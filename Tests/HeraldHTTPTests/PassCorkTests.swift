import Testing

@testable import HeraldHTTP

#if canImport(Glibc)
    import Glibc
#endif

@Suite("PassCork: a pass's writes held together")
struct PassCorkTests {
    /// A TCP socket, closed after `body`.
    private func withTCPSocket(_ body: (Int32) throws -> Void) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), Int32(IPPROTO_TCP))
        try #require(socket >= 0)
        defer { close(socket) }
        try body(socket)
    }

    private func isCorked(_ socket: Int32) -> Bool {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &value, &length) == 0 && value != 0
    }

    @Test func aPassStartingSeveralRequestsCorksEachSocketOnceUntilReleased() throws {
        try withTCPSocket { first in
            try withTCPSocket { second in
                let cork = PassCork(started: PassCork.minimumStarts, sockets: [first, nil, second, first])
                #expect(isCorked(first))
                #expect(isCorked(second))
                cork.release()
                #expect(!isCorked(first))
                #expect(!isCorked(second))
            }
        }
    }

    @Test func aPassStartingFewerRequestsLeavesTheSocketsAlone() throws {
        try withTCPSocket { socket in
            let cork = PassCork(started: PassCork.minimumStarts - 1, sockets: [socket])
            #expect(!isCorked(socket))
            cork.release()
            #expect(!isCorked(socket))
        }
    }
}
