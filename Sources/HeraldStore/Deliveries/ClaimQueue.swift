import HeraldPostgres
import Synchronization

/// Claims (``DeliveryJournal/claim(_:)``) in arrival order on one connection of their own, each
/// sent the moment its chunk is planned.
///
/// Why: sent through the pool, a chunk's claim could only go once the previous claim's answer
/// had come back to the worker and been fanned out, which took longer than the claim itself
/// (docs/performance.md, "Claims on a session of their own"); queued on one session, claims run
/// back to back in the database, in submission order, so positions still follow arrival order.
///
/// The order also holds across a claim that needs a second step: one that failed, or found a
/// known message (its resumed deliveries reserve positions in another statement), holds the
/// line: the claims queued behind it are skipped on the connection's thread, and sent again by
/// ``PendingClaim/answer()`` once ``pass(_:)`` has released the line. A claim that created a row
/// for every message releases it at once. Callers take the answers in submission order and
/// pass every claim once done with it, whatever became of it.
public final class ClaimQueue: Sendable {
    private struct Line {
        /// The only claim that may run now.
        var next = 0
        var issued = 0
    }

    let connection: PostgresConnection
    private let line = Mutex(Line())

    init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Sends the claim of `batch` behind those submitted before it; the answer comes with
    /// ``PendingClaim/answer()``.
    public func submit(_ batch: ClaimBatch) -> PendingClaim {
        let sequence = line.withLock { line in
            defer { line.issued += 1 }
            return line.issued
        }
        let claim = PendingClaim(request: ClaimRequest(batch), sequence: sequence, queue: self)
        claim.send(skippingKnown: batch.mayHoldKnown)
        return claim
    }

    /// The caller is done with `claim` (and its second step): the claims behind it may run.
    public func pass(_ claim: PendingClaim) {
        pass(claim.sequence)
    }

    func pass(_ sequence: Int) {
        line.withLock { $0.next = max($0.next, sequence + 1) }
    }

    func mayRun(_ sequence: Int) -> Bool {
        line.withLock { $0.next == sequence }
    }

    /// Closes the connection (claims still queued run first).
    public func close() async {
        await connection.close()
    }
}

/// A claim sent by a ``ClaimQueue``, its answer to come.
public final class PendingClaim: Sendable {
    private struct State {
        var result: Result<PostgresQueryResult?, PostgresError>?
        var waiter: CheckedContinuation<Result<PostgresQueryResult?, PostgresError>, Never>?
        var taken = false
    }

    let request: ClaimRequest
    let sequence: Int
    private let queue: ClaimQueue
    private let state = Mutex(State())

    init(request: ClaimRequest, sequence: Int, queue: ClaimQueue) {
        self.request = request
        self.sequence = sequence
        self.queue = queue
    }

    /// The claim's answer, waiting for it; known keys are handled as by
    /// ``DeliveryJournal/claim(_:)``. Called again after it threw (a retry), it sends the claim
    /// again.
    /// - Throws: ``StoreError``, as ``DeliveryJournal/claim(_:)``.
    public func answer() async throws(StoreError) -> ClaimAnswer {
        var sentBySubmit = !state.withLock { $0.taken }  // the claim submit sent, its answer not taken yet
        return try await request.run { (skippingKnown) async throws(StoreError) in
            if !sentBySubmit { send(skippingKnown: skippingKnown) }
            sentBySubmit = false
            return try await answer(skippingKnown: skippingKnown)
        }
    }

    /// The answer of the claim sent last. One skipped because a claim before it held the line is
    /// sent again: that claim has passed since (answers are taken in order).
    private func answer(skippingKnown: Bool) async throws(StoreError) -> ClaimAnswer {
        var resent = false
        while true {
            do {
                if let rows = try await result().get() { return try request.answer(rows) }
            } catch {
                throw StoreError(error, operation: "DeliveryJournal.claim")
            }
            guard !resent else {
                throw StoreError(code: .misuse, message: "claims answered out of order", operation: "DeliveryJournal.claim")
            }
            resent = true
            send(skippingKnown: skippingKnown)
        }
    }

    func send(skippingKnown: Bool) {
        state.withLock { $0 = State() }
        let queue = self.queue, sequence = self.sequence, request = self.request
        queue.connection.submit(
            request.sql(skippingKnown: skippingKnown), request.parameters(skippingKnown: skippingKnown), proceed: { queue.mayRun(sequence) }
        ) {
            [self] result in
            // On the connection's thread, before the next claim is asked whether it may run.
            if case .success(let rows?) = result, (try? request.isAllNew(rows)) == true { queue.pass(sequence) }
            deliver(result)
        }
    }

    private func deliver(_ result: Result<PostgresQueryResult?, PostgresError>) {
        let waiter = state.withLock { state in
            guard let waiter = state.waiter.take() else {
                state.result = result
                return nil as CheckedContinuation<Result<PostgresQueryResult?, PostgresError>, Never>?
            }
            state.taken = true
            return waiter
        }
        waiter?.resume(returning: result)
    }

    private func result() async -> Result<PostgresQueryResult?, PostgresError> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                guard let result = state.result.take() else {
                    state.waiter = continuation
                    return nil as Result<PostgresQueryResult?, PostgresError>?
                }
                state.taken = true
                return result
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
