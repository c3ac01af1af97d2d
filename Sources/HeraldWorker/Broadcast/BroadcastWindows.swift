import HeraldCore
import HeraldStore

/// How far one broadcast sent in windows has gone, as its driver decides it, with no I/O: the
/// windows under way (in device order), which of them are done or wait to be sent again, the
/// claimed mark, and where the cursor stands. The ``BroadcastRunner`` reads the devices, claims,
/// starts the windows and writes the row.
struct BroadcastWindows {
    /// A window started and not yet past the cursor.
    struct Open {
        var window: BroadcastWindow
        /// Its devices' recipients and texts: what it is sent again with.
        let recipients: [Recipient]
        let rendered: [RenderedNotification]
        var done = false
        /// Deferred deliveries (no backlog, a provider's breaker open): sent again then.
        var rerunAt: ContinuousClock.Instant?
    }

    /// The row as this driver knows it (cursor, claimed mark, devices selected).
    private(set) var broadcast: Broadcast
    private(set) var open: [Open] = []
    /// The last device of the last window started.
    private(set) var readCursor: Int64
    /// The end of the audience was seen.
    private(set) var exhausted = false
    /// When the row was last written.
    private var recorded: ContinuousClock.Instant
    /// Windows under way at most (``WorkerConfiguration/broadcastWindows``).
    let maxOpen: Int

    init(_ broadcast: Broadcast, maxOpen: Int, now: ContinuousClock.Instant) {
        self.broadcast = broadcast
        self.maxOpen = maxOpen
        readCursor = broadcast.cursor
        recorded = now
    }

    var isDone: Bool { exhausted && open.isEmpty }

    /// Another window may start.
    var wantsWindow: Bool { open.count < maxOpen && !exhausted }

    /// The audience has no device after ``readCursor``.
    mutating func audienceEnded() { exhausted = true }

    /// Whether the window of the devices after `after` may have been under way before (a
    /// takeover, a restart): it is then checked against the journal instead of claimed fresh.
    func isResumed(after: Int64) -> Bool { after < broadcast.claimed }

    /// Whether the claimed mark must move past `last` (with positions for a fresh window).
    func needsClaim(through last: Int64) -> Bool { last > broadcast.claimed }

    mutating func claimed(through last: Int64) { broadcast.claimed = last }

    /// The window ending at device `last` started.
    mutating func started(_ window: Open, through last: Int64) {
        open.append(window)
        readCursor = last
    }

    /// A window settled: done, or to be sent again at the instant returned (wake the driver then).
    mutating func settled(_ settled: BroadcastWindow.Settled) -> ContinuousClock.Instant? {
        guard let index = open.firstIndex(where: { $0.window === settled.window }) else { return nil }
        guard let until = settled.deferredUntil else {
            open[index].done = true
            return nil
        }
        open[index].rerunAt = until
        return until
    }

    /// The windows to send again at `now`, by index into ``open``.
    func dueReruns(now: ContinuousClock.Instant) -> [Int] {
        open.indices.filter { open[$0].rerunAt.map { $0 <= now } ?? false }
    }

    /// The window at `index` was sent again as `window`.
    mutating func restarted(_ window: Open, at index: Int) { open[index] = window }

    /// Moves the cursor past the oldest windows that are done. True when the row is to be
    /// written now: at most once a second, or at the end (a resume checks the windows after the
    /// written cursor against the journal anyway).
    mutating func advance(now: ContinuousClock.Instant) -> Bool {
        var moved = false
        while let first = open.first, first.done {
            broadcast.cursor = first.window.through
            broadcast.selected += Int64(first.recipients.count)
            open.removeFirst()
            moved = true
        }
        guard moved, isDone || now - recorded >= .seconds(1) else { return false }
        recorded = now
        return true
    }
}
