import Foundation

extension BenchResult {
    /// `herald bench --burst`: busy users' bursts published first, then the quiet users' pushes,
    /// through the real senders to the sandbox answering after a delay. "Sent" is the journal's
    /// `recorded_at` of the push's `sent` row (written once the provider answered), "published"
    /// the bench's clock just before the batch holding the push went to the broker (the same
    /// host's clock).
    struct Burst: Codable, Sendable {
        /// The issue's targets: every quiet push out within 2 s; a busy user's burst within
        /// 10 % of the round-trip floor.
        static let quietTargetMilliseconds = 2_000.0
        static let floorTolerance = 0.10

        var shape: BurstShape
        var lanes: Int
        var prefetch: Int
        /// `worker.backlog` and `worker.backlog_after` of the run's worker.
        var backlog: Bool
        var backlogAfter: Int
        var seconds = 0.0
        var deliveries = 0

        /// Publish→sent of the quiet users' pushes.
        var quietP50Milliseconds: Double?
        var quietP99Milliseconds: Double?
        var quietMaxMilliseconds: Double?
        var quietWithinTarget = 0
        var quietPass: Bool?

        /// One busy user: from its first push published to its last push sent.
        struct Busy: Codable, Sendable {
            var user: String
            var seconds: Double
            /// `seconds` ÷ ``BurstShape/floorSeconds`` (nil when the providers answer at once).
            var ratio: Double?
        }
        var busy: [Busy] = []
        var floorSeconds = 0.0
        /// Nil when not judged: more busy users than lanes share the lanes, so the floor of one
        /// round trip per push cannot be reached by all of them at once.
        var busyPass: Bool?

        var peakRSSMegabytes: Double?
        /// Pushes the sandbox accepted, and what its record and the journal show wrong (order,
        /// duplicates, counts, backlog left, dead letters): any fails the bench.
        var accepted = 0
        var differences: [String] = []

        /// Fills the quiet users' figures from their publish→sent milliseconds.
        mutating func judgeQuiet(_ milliseconds: [Double]) {
            let sorted = milliseconds.sorted()
            quietP50Milliseconds = Self.percentile(0.50, of: sorted)
            quietP99Milliseconds = Self.percentile(0.99, of: sorted)
            quietMaxMilliseconds = sorted.last
            quietWithinTarget = sorted.filter { $0 <= Self.quietTargetMilliseconds }.count
            quietPass = sorted.isEmpty ? nil : quietWithinTarget == shape.quietUsers
        }

        /// Fills the busy users' figures from their first-publish→last-sent seconds.
        mutating func judgeBusy(_ seconds: [(user: String, seconds: Double)]) {
            floorSeconds = shape.floorSeconds
            busy = seconds.map { Busy(user: $0.user, seconds: $0.seconds, ratio: floorSeconds > 0 ? $0.seconds / floorSeconds : nil) }
            guard !busy.isEmpty, floorSeconds > 0, shape.busyUsers <= lanes else {
                busyPass = nil
                return
            }
            busyPass = busy.count == shape.busyUsers && busy.allSatisfy { abs(($0.ratio ?? 0) - 1) <= Self.floorTolerance }
        }

        /// The value at rank ⌈`fraction` × n⌉ of `sorted` (nearest rank), nil when empty.
        static func percentile(_ fraction: Double, of sorted: [Double]) -> Double? {
            guard !sorted.isEmpty else { return nil }
            let rank = min(sorted.count, max(1, Int((Double(sorted.count) * fraction).rounded(.up))))
            return sorted[rank - 1]
        }

        var lines: [String] {
            let s = shape
            var lines = [
                "  burst: \(s.busyUsers) busy user\(s.busyUsers == 1 ? "" : "s") × \(s.busyPushes) pushes published first, then \(s.quietUsers) quiet users × 1; real APNs/FCM senders → herald sandbox answering after \(Self.format(s.delayMilliseconds, 0)) ms",
                "    \(lanes) lanes, prefetch \(prefetch), backlog \(backlog ? "after \(backlogAfter) waiting" : "off"); \(deliveries) deliveries in \(Self.format(seconds, 2)) s; peak RSS \(peakRSSMegabytes.map { Self.format($0, 0) + " MB" } ?? "-")",
            ]
            if s.quietUsers > 0 {
                let ms = { (value: Double?) in value.map { Self.format($0, 0) + " ms" } ?? "-" }
                lines.append(
                    "    quiet users, publish→sent: p50 \(ms(quietP50Milliseconds)), p99 \(ms(quietP99Milliseconds)), max \(ms(quietMaxMilliseconds)); \(quietWithinTarget) of \(s.quietUsers) within \(Self.format(Self.quietTargetMilliseconds / 1000, 0)) s: \(Self.verdict(quietPass))"
                )
            }
            if !busy.isEmpty {
                let floor = "floor \(s.busyPushes) × \(Self.format(s.delayMilliseconds, 0)) ms = \(Self.format(floorSeconds, 2)) s"
                let judged = Self.verdict(busyPass, unjudged: "not judged: \(s.busyUsers) busy users share \(lanes) lanes")
                if busy.count <= 5 {
                    for user in busy {
                        lines.append(
                            "    busy user \(user.user): first publish → last sent \(Self.format(user.seconds, 2)) s, \(user.ratio.map { Self.format($0, 3) } ?? "-")× the \(floor)"
                        )
                    }
                    lines.append("    busy users within \(Self.format(Self.floorTolerance * 100, 0)) % of the floor: \(judged)")
                } else {
                    let sorted = busy.map(\.seconds).sorted()
                    let (p50, slowest) = (Self.percentile(0.5, of: sorted) ?? 0, sorted.last ?? 0)
                    lines.append(
                        "    busy users, first publish → last sent: p50 \(Self.format(p50, 2)) s, max \(Self.format(slowest, 2)) s (\(floorSeconds > 0 ? Self.format(slowest / floorSeconds, 2) : "-")× the \(floor)); \(judged)"
                    )
                }
            }
            lines.append(
                "    checked: \(accepted) pushes accepted by the sandbox, each device's in publication order, journaled sent, none in the backlog: \(differences.isEmpty ? "yes" : "NO (\(differences.count) differences)")"
            )
            return lines
        }

        private static func verdict(_ pass: Bool?, unjudged: String = "-") -> String {
            pass.map { $0 ? "PASS" : "MISSED" } ?? unjudged
        }

        private static func format(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }
    }
}
