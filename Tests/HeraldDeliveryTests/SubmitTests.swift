import Foundation
import HeraldCore
import HeraldDelivery
import HeraldHTTP
import HeraldSandbox
import Synchronization
import Testing

/// The senders' batch path (`submit(_:completion:)`), which the worker uses.
@Suite struct SubmitTests {
    /// Collects `submit`'s outcomes by index and waits until every index has one.
    final class Outcomes: Sendable {
        private let state = Mutex<[Int: [DeliveryOutcome]]>([:])

        func add(_ index: Int, _ outcome: DeliveryOutcome) {
            state.withLock { $0[index, default: []].append(outcome) }
        }

        var byIndex: [Int: [DeliveryOutcome]] { state.withLock { $0 } }

        func wait(for count: Int) async -> Bool {
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(30)
            while state.withLock({ $0.count }) < count, clock.now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
            return state.withLock { $0.count } == count
        }
    }

    /// A mixed batch through the routing sender: every index gets exactly one outcome, each
    /// provider received its own deliveries, and a delivery neither provider takes is refused
    /// at once.
    @Test func everyDeliveryOfABatchGetsOneOutcome() async throws {
        try await DeliveryFixture.with { fixture in
            let apns = try fixture.apnsSender { $0.maxInFlight = 16 }
            let fcm = try fixture.fcmSender { $0.maxInFlight = 16 }
            let sender = RoutingSender(ios: apns, android: fcm)
            fixture.sandbox.setBehavior(.unregistered, for: DeliveryFixture.apnsToken(6))
            var deliveries: [PushDelivery] = []
            for n in 0..<200 { deliveries.append(try DeliveryFixture.delivery(n, platform: n.isMultiple(of: 2) ? .ios : .android)) }
            deliveries.append(try DeliveryFixture.delivery(500, platform: .ios, app: "com.example.unknown"))
            let outcomes = Outcomes()
            sender.submit(deliveries) { index, outcome in outcomes.add(index, outcome) }
            #expect(await outcomes.wait(for: deliveries.count))
            let byIndex = outcomes.byIndex
            #expect(byIndex.values.allSatisfy { $0.count == 1 })
            #expect(byIndex[6] == [.tokenDead(reason: "Unregistered")])
            #expect(byIndex[200] == [.permanentFailure(reason: "no APNs app configured for 'com.example.unknown'")])
            #expect(byIndex.values.filter { $0 == [.sent] }.count == 199)
            #expect(fixture.sandbox.pushes.filter { $0.provider == .apns }.count == 99)
            #expect(fixture.sandbox.pushes.filter { $0.provider == .fcm }.count == 100)
            let apnsStatistics = await apns.statistics
            #expect(apnsStatistics.sent == 99 && apnsStatistics.tokenDead == 1 && apnsStatistics.permanentFailures == 1)
            #expect(await fcm.statistics.sent == 100)
            await sender.shutdown()
        }
    }

    /// What a sender carries at once (the worker's default lanes): the in-flight bound, or the
    /// streams its connections open if fewer; the routing sender adds its two; the null sender
    /// has no bound.
    @Test func concurrencyIsWhatTheConnectionsCarryWithinTheInFlightBound() async throws {
        try await DeliveryFixture.with { fixture in
            let apns = try fixture.apnsSender {
                $0.maxInFlight = 500
                $0.http.maxConnectionsPerHost = 2
                $0.http.maxConcurrentStreamsPerConnection = 100
            }
            let fcm = try fixture.fcmSender { $0.maxInFlight = 16 }
            #expect(apns.concurrency == 200, "2 connections × 100 streams, fewer than 500")
            #expect(fcm.concurrency == 16)
            let both = RoutingSender(ios: apns, android: fcm)
            #expect(both.concurrency == 216)
            #expect(RoutingSender(ios: nil, android: fcm).concurrency == 16)
            #expect(NullSender().concurrency == nil)
            await both.shutdown()
        }
    }

    /// The gate bounds what `submit` puts on the wire as it bounds `send`.
    @Test func submitRespectsTheInFlightLimit() async throws {
        try await DeliveryFixture.with { fixture in
            let sender = try fixture.apnsSender { $0.maxInFlight = 8 }
            for n in 1...40 { fixture.sandbox.setBehavior(.delay(milliseconds: 100), for: DeliveryFixture.apnsToken(n)) }
            let deliveries = try (1...40).map { try DeliveryFixture.delivery($0, platform: .ios) }
            let outcomes = Outcomes()
            sender.submit(deliveries) { index, outcome in outcomes.add(index, outcome) }
            #expect(await outcomes.wait(for: 40))
            #expect(outcomes.byIndex.values.allSatisfy { $0 == [.sent] })
            let maxStreams = fixture.sandbox.apnsConnections.connections.map(\.maxConcurrentStreams).reduce(0, +)
            #expect(maxStreams <= 8)
            #expect(maxStreams >= 2)
            await sender.shutdown()
        }
    }

    /// A refused credential is replaced once on the submit path too, and the deliveries go out.
    @Test func submitRefreshesARefusedCredential() async throws {
        let clock = ManualClock()
        try await DeliveryFixture.with(clock: clock) { fixture in
            let apns = try fixture.apnsSender(clock: clock)
            let fcm = try fixture.fcmSender(clock: clock)
            let first = Outcomes()
            apns.submit([try DeliveryFixture.delivery(0, platform: .ios)]) { first.add($0, $1) }
            fcm.submit([try DeliveryFixture.delivery(1, platform: .android)]) { first.add($0 + 1, $1) }
            #expect(await first.wait(for: 2))
            // Apple considers the token expired, Google forgets the access token.
            fixture.sandbox.apns.expireProviderTokens(issuedBefore: clock.now().addingTimeInterval(1))
            fixture.sandbox.fcm.oauth.revokeAccessTokens()
            clock.advance(by: 5)
            let second = Outcomes()
            apns.submit([try DeliveryFixture.delivery(2, platform: .ios)]) { second.add($0, $1) }
            fcm.submit([try DeliveryFixture.delivery(3, platform: .android)]) { second.add($0 + 1, $1) }
            #expect(await second.wait(for: 2))
            #expect(second.byIndex.values.allSatisfy { $0 == [.sent] }, "\(second.byIndex)")
            #expect(await apns.statistics.credentialRetries == 1)
            #expect(await fcm.statistics.credentialRetries == 1)
            await apns.shutdown()
            await fcm.shutdown()
        }
    }
}
