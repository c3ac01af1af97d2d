import Foundation
import Testing

@testable import herald

/// `herald bench`'s check of its own work (``BenchCheck``) and what its result makes of it.
@Suite struct BenchCheckTests {
    private let a = UUID(), b = UUID(), c = UUID()
    private var expected: [UUID: Int] { [a: 1, b: 3, c: 20] }

    private func journaled(_ counts: [UUID: (rows: Int, deliveries: Int)]) -> [UUID: BenchCheck.Journaled] {
        counts.mapValues { BenchCheck.Journaled(rows: $0.rows, deliveries: $0.deliveries, notSent: 0) }
    }

    @Test func aRunThatJournaledWhatTheWorkloadMakesPasses() {
        let outcome = BenchCheck.compare(
            expected: expected, journaled: journaled([a: (1, 1), b: (3, 3), c: (20, 20)]), deadLetters: 0, workerSent: 24)
        #expect(outcome == BenchCheck.Outcome(expectedDeliveries: 24, journaledDeliveries: 24, differences: []))
    }

    /// Equal totals do not hide a message short of a delivery and another with one too many.
    @Test func aMessageShortOfADeliveryFailsEvenWhenTheTotalMatches() {
        let outcome = BenchCheck.compare(
            expected: expected, journaled: journaled([a: (2, 2), b: (2, 2), c: (20, 20)]), deadLetters: 0, workerSent: 24)
        #expect(outcome.journaledDeliveries == 24)
        #expect(outcome.differences.count == 1)
        #expect(outcome.differences[0].hasPrefix("2 messages with other deliveries in the journal than the workload makes (24 journaled, 24 expected)"))
    }

    @Test func aMessageWithoutJournalRowsFails() {
        let outcome = BenchCheck.compare(expected: expected, journaled: journaled([a: (1, 1), b: (3, 3)]), deadLetters: 0, workerSent: 4)
        #expect(outcome.journaledDeliveries == 4)
        #expect(outcome.differences.count == 1)
        #expect(outcome.differences[0].contains("message \(c.uuidString.lowercased()): 0 of 20"))
    }

    @Test func aRepeatedDeliveryKeyADeadLetterAndAnUnsentRowEachFail() {
        var rows = journaled([a: (2, 1), b: (3, 3), c: (20, 20)])
        rows[b]?.notSent = 1
        let outcome = BenchCheck.compare(expected: expected, journaled: rows, deadLetters: 2, workerSent: 24)
        #expect(
            outcome.differences == [
                "1 journal rows repeat a delivery key", "1 journal rows are not sent", "2 messages dead-lettered",
            ])
    }

    @Test func theWorkersCountMustBeTheJournals() {
        let outcome = BenchCheck.compare(
            expected: expected, journaled: journaled([a: (1, 1), b: (3, 3), c: (20, 20)]), deadLetters: 0, workerSent: 23)
        #expect(outcome.differences == ["the worker counted 23 deliveries sent, the journal holds 24"])
    }

    @Test func theResultNamesTheRunOfEachDifferenceAndTakesTheBareMedian() {
        var result = BenchResult(
            build: "debug", date: "now", machine: .current(), events: 10, deliveriesPerRun: 10, users: 3, broadcastDevices: 1, queueType: "classic",
            prefetch: 1, lanes: 1)
        let costs = BenchProbe.Costs(workerCPUMicroseconds: 1, workerCores: 1)
        var round = BenchResult.Run(events: 10, deliveries: 9, seconds: 1, eventRate: 10, deliveryRate: 9, costs: costs)
        result.rounds = [round]
        round.differences = ["1 messages dead-lettered"]
        result.rounds.append(round)
        result.bareRounds = [3.0, 1.0, 2.0].map { BenchResult.Bare(seconds: 1, rate: $0) }
        result.summarize()
        #expect(result.differences == ["pipeline round 2: 1 messages dead-lettered"])
        #expect(result.bareRate == 2)
    }
}
