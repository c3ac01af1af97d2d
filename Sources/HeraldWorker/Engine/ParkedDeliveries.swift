import HeraldCore

/// Deliveries waiting for their retry, by due time (a binary min-heap; ties in insertion
/// order). Not thread-safe: the engine loop's own.
struct ParkedDeliveries {
    private struct Entry {
        let due: ContinuousClock.Instant
        let sequence: UInt64
        let delivery: Delivery

        func precedes(_ other: Entry) -> Bool { (due, sequence) < (other.due, other.sequence) }
    }

    private var heap: [Entry] = []
    private var sequence: UInt64 = 0
    /// Parked deliveries per platform (the waiting gauge).
    private var perPlatform: [Platform: Int] = [:]

    var count: Int { heap.count }
    func count(_ platform: Platform) -> Int { perPlatform[platform] ?? 0 }
    var earliest: ContinuousClock.Instant? { heap.first?.due }

    mutating func insert(_ delivery: Delivery, due: ContinuousClock.Instant) {
        sequence += 1
        perPlatform[delivery.recipient.subscription.platform, default: 0] += 1
        heap.append(Entry(due: due, sequence: sequence, delivery: delivery))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the deliveries due at `now`, earliest first.
    mutating func popDue(now: ContinuousClock.Instant) -> [Delivery] {
        var due: [Delivery] = []
        while let first = heap.first, first.due <= now {
            due.append(first.delivery)
            removeFirst()
        }
        return due
    }

    /// Removes and returns every delivery, earliest first.
    mutating func removeAll() -> [Delivery] {
        var all: [Delivery] = []
        while let first = heap.first {
            all.append(first.delivery)
            removeFirst()
        }
        return all
    }

    /// Removes and returns the deliveries that match, earliest first.
    mutating func removeAll(where matches: (Delivery) -> Bool) -> [Delivery] {
        guard heap.contains(where: { matches($0.delivery) }) else { return [] }
        // A sorted array is a valid heap, and so is what stays of it: sort once, split it.
        let sorted = heap.sorted { $0.precedes($1) }
        var removed: [Delivery] = []
        heap.removeAll(keepingCapacity: true)
        perPlatform = [:]
        for entry in sorted {
            if matches(entry.delivery) {
                removed.append(entry.delivery)
            } else {
                heap.append(entry)
                perPlatform[entry.delivery.recipient.subscription.platform, default: 0] += 1
            }
        }
        return removed
    }

    private mutating func removeFirst() {
        perPlatform[heap[0].delivery.recipient.subscription.platform, default: 1] -= 1
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < heap.count, heap[left].precedes(heap[first]) { first = left }
            if right < heap.count, heap[right].precedes(heap[first]) { first = right }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }
}
