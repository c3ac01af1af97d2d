/// Gathers items from concurrent callers into batches, so that many callers cost one store call.
///
/// A caller's ``submit(_:)`` returns once the batch holding its item was flushed (with the
/// flush's answer). A batch is at most `maxBatch` items. When a flush slot is free, the first
/// item waits at most `window` for company, then the batch goes; while `maxConcurrent` flushes
/// are running, new items gather and go as soon as a slot frees (so batches grow with load and
/// shrink to one item when idle). Items are flushed in submission order.
///
/// An actor; the flush closure runs off the actor, so submitting never waits for a flush in
/// progress.
actor Batcher<Item: Sendable> {
    typealias Flush = @Sendable ([Item]) async -> Bool

    private let maxBatch: Int
    private let window: Duration
    private let maxConcurrent: Int
    private let flush: Flush
    private var pending: [(item: Item, continuation: CheckedContinuation<Bool, Never>)] = []
    private var running = 0
    /// Flushes made so far (for tests and statistics).
    private(set) var flushes = 0

    init(maxBatch: Int, window: Duration, maxConcurrent: Int, flush: @escaping Flush) {
        self.maxBatch = max(1, maxBatch)
        self.window = window
        self.maxConcurrent = max(1, maxConcurrent)
        self.flush = flush
    }

    /// Adds `item` to the next batch and returns the flush's answer for that batch.
    func submit(_ item: Item) async -> Bool {
        await withCheckedContinuation { continuation in
            pending.append((item, continuation))
            if running < maxConcurrent {
                running += 1
                let wait = pending.count < maxBatch ? window : .zero
                Task { await self.flushLoop(waitFirst: wait) }
            }
        }
    }

    private func flushLoop(waitFirst: Duration) async {
        if waitFirst > .zero { try? await Task.sleep(for: waitFirst) }
        while !pending.isEmpty {
            let count = min(maxBatch, pending.count)
            let batch = Array(pending.prefix(count))
            pending.removeFirst(count)
            flushes += 1
            let answer = await flush(batch.map(\.item))
            for entry in batch { entry.continuation.resume(returning: answer) }
        }
        running -= 1
    }
}
