import HeraldSupport
import HeraldTesting
import Testing

@testable import HeraldHTTP

@Suite("PassCork: a pass's writes held together")
struct PassCorkTests {
    @Test func aPassStartingSeveralRequestsCorksEachSocketOnceUntilReleased() throws {
        try withTCPSocket { first in
            try withTCPSocket { second in
                let cork = PassCork(started: PassCork.minimumStarts, sockets: [first, nil, second, first])
                #expect(TCPCork.isCorked(first))
                #expect(TCPCork.isCorked(second))
                cork.release()
                #expect(!TCPCork.isCorked(first))
                #expect(!TCPCork.isCorked(second))
            }
        }
    }

    @Test func aPassStartingFewerRequestsLeavesTheSocketsAlone() throws {
        try withTCPSocket { socket in
            let cork = PassCork(started: PassCork.minimumStarts - 1, sockets: [socket])
            #expect(!TCPCork.isCorked(socket))
            cork.release()
            #expect(!TCPCork.isCorked(socket))
        }
    }
}
