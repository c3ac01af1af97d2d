import Foundation
import HeraldCore
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// What an SRE reads when pushes slow down: how long each provider took to answer, as the
/// worker saw it (`herald_provider_answer_seconds{provider}`, and in ``WorkerStatistics``).
@Suite("Provider answer times", .timeLimit(.minutes(1)))
struct ProviderAnswerTimeTests {
    @Test func eachProviderReportsItsOwnAnswerTimes() async throws {
        try await WorkerFixture.with { fixture in
            let users = (0..<6).map { "user-\($0)" }
            try await fixture.store.devices.importDevices(TestEvents.phonePairs(for: users))
            let sender = RecordingSender()
            // Lower bounds only (a busy host delays answers, never hastens them): each provider's
            // own delay shows in its own histogram.
            sender.setSlow(.ios, .milliseconds(200))
            sender.setSlow(.android, .milliseconds(600))
            try await fixture.withWorker(sender: sender, configuration: fixture.configuration(lanes: 16)) { worker in
                try await fixture.publish(TestEvents.onePerUser(users))
                try await fixture.waitUntilSettled(worker)
                let answers = worker.statistics.providerAnswers
                let apns = try #require(answers[.ios])
                let fcm = try #require(answers[.android])
                #expect(apns.count == 6 && fcm.count == 6, "one answer per delivery and provider: \(answers)")
                #expect(try #require(apns.p50) >= .milliseconds(200), "APNs answered after 200 ms: \(apns)")
                #expect(try #require(fcm.p50) >= .milliseconds(600), "FCM answered after 600 ms: \(fcm)")
                #expect(worker.providerAnswerDistribution.reduce(0) { $0 + $1.count } == 12)
            }
        }
    }
}
