import Foundation
import UnixSignals

/// SIGINT and SIGTERM for commands that must tidy up before they exit (`herald sandbox` stops
/// its servers; `herald bench` deletes its queues and devices), where the default action would
/// end the process on the spot. While ``next()`` waits, the signals reach it instead; once it has
/// returned they kill the process again, so that a second Ctrl-C during a slow clean-up works.
enum TerminationSignals {
    /// The name of the first SIGINT or SIGTERM to arrive, or nil when the calling task is
    /// cancelled first.
    static func next() async -> String? {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        // UnixSignalsSequence leaves the signals caught when it ends.
        defer { for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) } }
        for await received in signals { return received.description }
        return nil
    }
}
