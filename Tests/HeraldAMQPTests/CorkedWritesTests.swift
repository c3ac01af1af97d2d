import HeraldSupport
import HeraldTesting
import Testing

@testable import HeraldAMQP

@Suite("CorkedWrites: a run of frames held together")
struct CorkedWritesTests {
    @Test func aRunCorksAtItsSecondFrameAndSendsWhenItEnds() throws {
        try withTCPSocket { socket in
            var run = CorkedWrites(socket: socket)
            run.willWrite()
            #expect(!TCPCork.isCorked(socket), "one frame goes out as it is written")
            run.willWrite()
            #expect(TCPCork.isCorked(socket))
            run.willWrite()
            #expect(TCPCork.isCorked(socket))
            run.end()
            #expect(!TCPCork.isCorked(socket))
        }
    }

    @Test func aRunOfOneFrameLeavesTheSocketAlone() throws {
        try withTCPSocket { socket in
            TCPCork.set(socket, corked: true)  // someone else's cork is not ours to release
            var run = CorkedWrites(socket: socket)
            run.willWrite()
            run.end()
            #expect(TCPCork.isCorked(socket))
        }
    }
}
