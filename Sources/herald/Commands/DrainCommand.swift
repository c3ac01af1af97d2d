import ArgumentParser
import Foundation
import HeraldStore
import HeraldWorker

/// `herald drain`: seed 000's procedure before a message-format change (stop the producers
/// first): consume until the queue is empty and every delivery in flight is terminal, showing
/// progress, then print a summary and exit 0; exit 1 with what remains after `--timeout`.
struct DrainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drain",
        abstract: "Deliver everything in the queue, then stop.",
        discussion: """
            Runs the same pipeline as herald worker (same configuration keys), plus a monitor of \
            the queue depth and of the deliveries in flight. On a terminal the progress is one \
            updating line; otherwise a line every 5 seconds. With partitions (worker.partitions) the \
            drain waits for the main queue and every partition queue; stop the other workers \
            first, or it may own none of the partitions and only watch ready-message counts.
            """
    )

    @Option(help: "Give up after this long (e.g. 90s, 10m).")
    var timeout: String = "10m"

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var options: WorkerOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        guard let limit = Settings.parseDuration(timeout) else { throw ValidationError("--timeout '\(timeout)' is not a duration such as 90s or 10m") }
        let (settings, logger) = try global.settings(connection, options, logger: "herald.drain")
        let (worker, store) = try await WorkerCommand.prepare(settings: settings, logger: logger, name: "herald drain")
        let terminal = Console.isTerminal
        let throttle = ProgressThrottle()
        let final = await QueueDrain.run(worker: worker, timeout: limit, logger: logger) { progress in
            let line = Self.progressLine(progress)
            if terminal {
                Console.status(line)
            } else if throttle.due(every: .seconds(5)) {
                Console.error(line)
            }
        }
        await store.close()
        if terminal { Console.error("") }
        let s = final.statistics
        Console.out(
            """
            Drain \(final.isComplete ? "complete" : "NOT complete after \(timeout)") in \(Console.duration(final.elapsed)): \
            consumed \(s.consumed), delivered \(s.delivered), skipped as duplicates \(s.skipped + s.duplicatesDropped), \
            dead-lettered \(s.deadLettered), failed \(s.failed), token dead \(s.tokenDead), no recipients \(s.noRecipients).
            """)
        if !final.isComplete {
            Console.error(
                "herald drain: \(final.queueDepth.map { "\($0) message(s) still queued" } ?? "queue depth unknown"), "
                    + "\(final.queuedInBacklog.map { "\($0) delivery(ies) in the backlog" } ?? "backlog unknown"), "
                    + "\(final.broadcastsUnderWay.map { "\($0) broadcast(s) under way" } ?? "broadcasts unknown"), "
                    + "\(s.messagesInFlight) message(s) were in flight"
            )
            throw ExitCode.failure
        }
    }

    static func progressLine(_ p: DrainProgress) -> String {
        let s = p.statistics
        return "draining \(Console.duration(p.elapsed)): queue \(p.queueDepth.map(String.init) ?? "?"), "
            + "backlog \(p.queuedInBacklog.map(String.init) ?? "?"), broadcasts \(p.broadcastsUnderWay.map(String.init) ?? "?"), in flight \(s.messagesInFlight), "
            + "consumed \(s.consumed), delivered \(s.delivered), dead-lettered \(s.deadLettered), failed \(s.failed)"
    }
}
