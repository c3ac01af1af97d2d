import DequeModule

/// The unsettled delivery tags of one channel, in delivery order, and the ack coalescing built on
/// them.
///
/// Why: an ack for a tag the broker does not consider outstanding closes the channel with 406
/// PRECONDITION_FAILED, which would kill a consumer over a double ack. The driver checks every
/// settlement here first. And when the acks gathered in one turn of the connection thread cover
/// the oldest outstanding tags, one `basic.ack(multiple: true)` replaces them (the consumer's
/// throughput rose by more than half: docs/performance.md, "Acks coalesced").
///
/// Thread rule: owned by the connection thread.
struct DeliveryLedger {
    /// Tags in delivery order, with when each arrived; entries no longer in `unsettled` are dead
    /// and skipped (the front is kept live by ``compact()``).
    private var order = Deque<(tag: UInt64, arrived: ContinuousClock.Instant)>()
    private var unsettled: Set<UInt64> = []

    var isEmpty: Bool { unsettled.isEmpty }
    var count: Int { unsettled.count }

    /// When the oldest outstanding delivery arrived.
    var oldestArrival: ContinuousClock.Instant? { order.first?.arrived }
    /// Since when the oldest outstanding delivery has been the oldest (its arrival, or when the
    /// older ones were settled).
    private(set) var frontSince: ContinuousClock.Instant?

    /// Records a new delivery. Tags grow monotonically on a channel.
    mutating func record(_ tag: UInt64, arrived: ContinuousClock.Instant = .now) {
        if order.isEmpty { frontSince = arrived }
        order.append((tag, arrived))
        unsettled.insert(tag)
    }

    func contains(_ tag: UInt64) -> Bool {
        unsettled.contains(tag)
    }

    /// Settles one tag; false when it was not outstanding.
    @discardableResult
    mutating func settle(_ tag: UInt64) -> Bool {
        guard unsettled.remove(tag) != nil else { return false }
        compact()
        return true
    }

    /// Settles every outstanding tag up to and including `tag` (a `multiple` settlement); returns
    /// how many were settled.
    @discardableResult
    mutating func settle(through tag: UInt64) -> Int {
        var settled = 0
        for (outstanding, _) in order {
            guard outstanding <= tag else { break }
            if unsettled.remove(outstanding) != nil { settled += 1 }
        }
        compact()
        return settled
    }

    /// Takes from `acks` the longest run of the oldest outstanding tags and settles them. Returns
    /// the last tag of that run and its length: one `basic.ack(last, multiple: true)` acknowledges
    /// exactly them. The tags left in `acks` are not at the front and must be acked one by one.
    mutating func takeAckPrefix(from acks: inout Set<UInt64>) -> (last: UInt64, count: Int)? {
        var last: UInt64?
        var count = 0
        for (tag, _) in order where unsettled.contains(tag) {
            guard acks.remove(tag) != nil else { break }
            unsettled.remove(tag)
            last = tag
            count += 1
        }
        compact()
        return last.map { ($0, count) }
    }

    /// Forgets everything (the channel closed: the broker requeued what was outstanding).
    mutating func removeAll() {
        order.removeAll()
        unsettled.removeAll()
        frontSince = nil
    }

    private mutating func compact() {
        var frontMoved = false
        while let first = order.first, !unsettled.contains(first.tag) {
            order.removeFirst()
            frontMoved = true
        }
        if frontMoved { frontSince = order.isEmpty ? nil : .now }
    }
}
