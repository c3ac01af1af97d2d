import Synchronization

/// Lock-free counters behind ``HTTPClient/statistics``, updated by callers and the driver.
final class ClientCounters: Sendable {
    let connectionsOpened = Atomic<Int>(0)
    let requestsCompleted = Atomic<Int>(0)
    let requestsFailed = Atomic<Int>(0)
    let inFlight = Atomic<Int>(0)
    let connectionsBatched = Atomic<Int>(0)
    let batchedWrites = Atomic<Int>(0)

    var snapshot: HTTPClientStatistics {
        HTTPClientStatistics(
            connectionsOpened: connectionsOpened.load(ordering: .relaxed),
            requestsCompleted: requestsCompleted.load(ordering: .relaxed),
            requestsFailed: requestsFailed.load(ordering: .relaxed),
            inFlight: inFlight.load(ordering: .relaxed),
            connectionsBatched: connectionsBatched.load(ordering: .relaxed),
            batchedWrites: batchedWrites.load(ordering: .relaxed)
        )
    }
}
