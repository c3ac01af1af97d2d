import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore
import HeraldWorker

/// `herald deliveries show MESSAGE-ID` and `herald deliveries list --user U [--since T]`: the
/// support desk's "did user X get the push for transfer Y?", from the journal and the
/// dead-letter record (``HeraldStore/DeliveryLookup``). The same answers as the operators'
/// `GET /v1/admin/…` routes; `--json` prints the same JSON.
struct DeliveriesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliveries", abstract: "What became of a message, or a user's recent deliveries.", subcommands: [Show.self, List.self]
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what became of one message: its deliveries, a dead letter, or dropped repeats.",
            discussion: """
                MESSAGE-ID is the message key: the AMQP message-id the producer set, or the SHA-256 \
                (64 hex digits) of the body when it set none. With worker.partitions the partition \
                copies are shown too. Exit status 0 when the message is known, 3 when it is unknown \
                (never received within the journal's retention, and no dead letter of it).
                """
        )

        @Argument(help: "The message key (AMQP message-id, or the body's SHA-256).")
        var messageId: String

        @Flag(help: "Print JSON (as GET /v1/admin/messages/{messageId} answers).")
        var json = false

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let (settings, logger) = try global.settings(database, logger: "herald.deliveries")
            let partitions = try RuntimeSettings.partitions(settings)
            let report: MessageReport
            do {
                report = try await RuntimeSettings.withStore(settings, logger: logger) { store in
                    try await store.lookup.message(key: messageId, partitions: partitions)
                }
            } catch {
                Console.error("herald deliveries show: \(error)")
                throw ExitCode.failure
            }
            if json {
                Console.out(report.json.serializedString())
            } else {
                DeliveriesCommand.print(report)
            }
            if report.isUnknown { throw ExitCode(3) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the deliveries to a user's devices (to the user, or broadcast), newest first.",
            discussion: "Through the user's current devices. --since takes a duration back from now (90m, 24h, 7d) or an RFC 3339 date-time."
        )

        @Option(help: "The user id.")
        var user: String

        @Option(help: "Since when: a duration back from now (90m, 24h, 7d) or an RFC 3339 date-time (default 24h).")
        var since: String = "24h"

        @Option(help: "Most deliveries to show.")
        var limit: Int = 100

        @Flag(help: "Print JSON (as GET /v1/admin/users/{userId}/deliveries answers).")
        var json = false

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 10000") }
            guard DeliveriesCommand.date(since, now: Date()) != nil else {
                throw ValidationError("--since must be a duration (90m, 24h, 7d) or an RFC 3339 date-time")
            }
        }

        func run() async throws {
            let (settings, logger) = try global.settings(database, logger: "herald.deliveries")
            let from = DeliveriesCommand.date(since, now: Date())!
            let report: UserDeliveriesReport
            do {
                report = try await RuntimeSettings.withStore(settings, logger: logger) { store in
                    try await store.lookup.deliveries(userId: user, since: from, limit: limit)
                }
            } catch {
                Console.error("herald deliveries list: \(error)")
                throw ExitCode.failure
            }
            if json {
                Console.out(report.json.serializedString())
                return
            }
            DeliveriesCommand.table(report.deliveries, withMessage: true)
            Console.out(
                "\(report.deliveries.count) deliveries to user \(user) since \(DeliveriesCommand.time(from))\(report.hasMore ? " (limit reached; --limit shows more)" : "")"
            )
        }
    }

    /// `90m`, `24h`, `7d`, `30s` back from `now`, or an RFC 3339 date-time.
    static func date(_ text: String, now: Date) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        guard let unit = text.last, let amount = Double(text.dropLast()), amount >= 0 else { return nil }
        let seconds: Double
        switch unit {
        case "s": seconds = amount
        case "m": seconds = amount * 60
        case "h": seconds = amount * 3600
        case "d": seconds = amount * 86_400
        default: return nil
        }
        return now.addingTimeInterval(-seconds)
    }

    static func time(_ date: Date) -> String { date.formatted(.iso8601) }

    static func print(_ report: MessageReport) {
        Console.out("Message \(report.messageKey): \(report.summary.replacingOccurrences(of: "_", with: " "))")
        if report.isUnknown {
            Console.out("Not received within the journal's retention, and not dead-lettered (or its dead-letter record is gone).")
            return
        }
        for copy in report.copies {
            var line = "  received and claimed \(time(copy.receivedAt))"
            if !copy.partition.isEmpty { line += " (partition copy \(copy.partition))" }
            if let eventId = copy.eventId { line += ", event \(eventId)" }
            if let planned = copy.planned { line += ", \(planned) deliveries planned" }
            Console.out(line)
            if copy.claimedWithoutOutcome > 0 {
                Console.out(
                    "  \(copy.claimedWithoutOutcome) claimed, no outcome recorded yet (in flight, or its worker stopped: sent again when the message comes back)"
                )
            }
            if let broadcast = copy.broadcast {
                Console.out(
                    "  broadcast sent in windows, \(broadcast.done ? "done" : "under way"): \(broadcast.selected) device(s) selected\(broadcast.done ? "" : " so far"), "
                        + "\(broadcast.sent) sent, \(broadcast.waiting) waiting, \(broadcast.failed) failed")
            }
            if copy.repeats > 0 {
                Console.out("  \(copy.repeats) repeat(s) dropped (AvoidDublication), the last at \(copy.lastRepeatAt.map(time) ?? "?")")
            }
        }
        for letter in report.deadLetters {
            Console.out(
                "  dead-lettered \(time(letter.createdAt)): \(letter.errorCode): \(letter.reason)\(letter.replayedAt.map { " (replayed \(time($0)))" } ?? "") [id \(letter.id)]"
            )
        }
        if !report.deliveries.isEmpty {
            Console.out("")
            table(report.deliveries, withMessage: false)
        }
    }

    /// One line per delivery, tab-separated under a header.
    static func table(_ deliveries: [SupportDelivery], withMessage: Bool) {
        var header = ["USER", "DEVICE", "TOKEN", "PLATFORM", "APP", "POS", "STATE", "ATTEMPTS", "PROVIDER-ID", "RECEIVED", "RECORDED", "LAST-ERROR"]
        if withMessage { header.insert(contentsOf: ["MESSAGE", "EVENT"], at: 0) }
        Console.out(header.joined(separator: "\t"))
        for delivery in deliveries {
            let status = delivery.status
            var fields = [
                status.userId, status.deviceId ?? "(gone)", delivery.shortToken ?? "-", status.platform?.rawValue ?? "-", status.app ?? "-",
                String(status.position), delivery.stateName, String(status.attempts), status.providerId ?? "-", time(status.receivedAt),
                time(status.recordedAt), status.lastError ?? "-",
            ]
            if withMessage { fields.insert(contentsOf: [status.messageKey.isEmpty ? "-" : status.messageKey, status.eventId ?? "-"], at: 0) }
            Console.out(fields.joined(separator: "\t"))
        }
    }
}
