import HeraldSupport

/// A run of frames the connection thread writes back to back (a channel's acks, a batch of
/// publishes), held together on the socket from its second frame on and sent when the run ends.
///
/// Why: librabbitmq-c sends each `basic.ack` as it is made, one segment each. When acks cannot
/// be coalesced into one `basic.ack(multiple: true)` (deliveries settled ahead of older ones,
/// which the real senders make common: a user's pushes wait for one another), a flush sends
/// hundreds of them, and every segment costs the loopback's transmit and receive path here and
/// a read at the broker (docs/performance.md, 27 November 2026). A run of one frame is left
/// alone: two `setsockopt` calls would cost more than they save.
///
/// Only for runs without a round trip: a frame that waits for the broker's answer must not sit
/// behind the cork. ``end()`` must follow the run's last write on the same turn.
struct CorkedWrites {
    private let socket: Int32
    private var writes = 0

    init(socket: Int32) {
        self.socket = socket
    }

    /// Call before each frame of the run; the second corks the socket.
    mutating func willWrite() {
        writes += 1
        if writes == 2 { TCPCork.set(socket, corked: true) }
    }

    /// Sends what the run held.
    func end() {
        if writes >= 2 { TCPCork.set(socket, corked: false) }
    }
}
