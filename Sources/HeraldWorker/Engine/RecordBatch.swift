import HeraldStore

/// Journal rows the engine has queued (or handed to one write), with the deliveries they are
/// for, in the same order: parallel arrays, so that a write takes them without copying rows
/// one by one.
struct RecordBatch: Sendable {
    private(set) var deliveries: [Delivery] = []
    var rows: [DeliveryRecord] = []

    var isEmpty: Bool { rows.isEmpty }
    var count: Int { rows.count }

    mutating func append(_ delivery: Delivery, _ row: DeliveryRecord) {
        deliveries.append(delivery)
        rows.append(row)
    }

    /// Removes and returns the first `limit` rows (all of them, without copying, when they fit).
    mutating func take(_ limit: Int) -> RecordBatch {
        if rows.count <= limit {
            defer { self = RecordBatch() }
            return self
        }
        let taken = RecordBatch(deliveries: Array(deliveries.prefix(limit)), rows: Array(rows.prefix(limit)))
        deliveries.removeFirst(limit)
        rows.removeFirst(limit)
        return taken
    }

    /// The deliveries whose row is their last in this process: terminal, or deferred.
    var settledDeliveries: [Delivery] {
        deliveries.indices.compactMap { rows[$0].state.settlesDelivery ? deliveries[$0] : nil }
    }
}

extension DeliveryState {
    /// Whether a row in this state ends the delivery's life in this process (its message may
    /// then be settled): terminal, or deferred to the wait queue.
    var settlesDelivery: Bool { self != .pending }
}
