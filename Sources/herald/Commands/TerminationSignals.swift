import Dispatch
import Foundation

/// SIGINT and SIGTERM for commands that must tidy up before they exit (`herald sandbox` stops
/// its servers; `herald bench` deletes its queues and devices), where the default action would
/// end the process on the spot. While ``next()`` waits, the signals reach it instead; once it has
/// returned they kill the process again, so that a second Ctrl-C during a slow clean-up works.
enum TerminationSignals {
    /// The name of the first SIGINT or SIGTERM to arrive, or nil when the calling task is
    /// cancelled first.
    static func next() async -> String? {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let signals = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")]
        var sources: [any DispatchSourceSignal] = []
        for (number, name) in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(name) }
            source.resume()
            sources.append(source)
        }
        defer {
            sources.forEach { $0.cancel() }
            for (number, _) in signals { signal(number, SIG_DFL) }
        }
        for await name in stream { return name }
        return nil
    }
}
