import Foundation
import HTTPTypes
import HeraldCore
import HeraldDelivery
import HeraldHTTP
import HeraldSandbox
import HeraldTesting
import Testing

@Suite struct APNsSenderTests {
    @Test(arguments: [PayloadProfile.legacy, .modern])
    func iosPayloadsArriveWithTheirHeadersAndBodies(profile: PayloadProfile) async throws {
        try await DeliveryFixture.with { fixture in
            let sender = try fixture.apnsSender()
            let alert = try DeliveryFixture.delivery(1, platform: .ios, profile: profile)
            let second = try DeliveryFixture.delivery(2, platform: .ios, profile: profile, app: DeliveryFixture.otherTopic)
            #expect(await sender.send(alert) == .sent)
            #expect(await sender.send(second) == .sent)
            var deliveries = [alert, second]
            if profile == .modern {
                let silent = try DeliveryFixture.delivery(3, platform: .ios, profile: .modern, silent: true)
                #expect(await sender.send(silent) == .sent)
                deliveries.append(silent)
            }
            await sender.shutdown()

            let pushes = fixture.sandbox.pushes
            #expect(pushes.count == deliveries.count)
            for delivery in deliveries {
                let push = try #require(pushes.first { $0.token == delivery.target.token })
                let options = try #require(delivery.payload.apns)
                #expect(push.body == delivery.payload.body)
                #expect(push.path == "/3/device/\(delivery.target.token)")
                #expect(push.app == (delivery.target.app ?? DeliveryFixture.topic))
                #expect(push.headers["apns-topic"] == push.app)
                #expect(push.headers["apns-push-type"] == options.pushType.rawValue)
                #expect(push.headers["apns-priority"] == String(options.priority))
                #expect(push.headers["apns-expiration"] == options.expiration.map(String.init))
                #expect(push.headers["apns-collapse-id"] == delivery.deliveryKey.rawValue)
                #expect(push.headers["apns-id"] == delivery.deliveryKey.apnsID)
                #expect(push.headers["authorization"]?.hasPrefix("bearer ey") == true)
            }
            #expect(pushes.first { $0.token == DeliveryFixture.apnsToken(3) }?.headers["apns-push-type"] == (profile == .modern ? "background" : nil))
        }
    }

    @Test func providerAnswersAreClassifiedOnce() async throws {
        try await DeliveryFixture.with { fixture in
            let sender = try fixture.apnsSender()
            fixture.sandbox.setBehavior(.unregistered, for: DeliveryFixture.apnsToken(10))
            fixture.sandbox.setBehavior(.throttled(retryAfter: 5), for: DeliveryFixture.apnsToken(11))
            fixture.sandbox.setBehavior(.flaky(failures: 1), for: DeliveryFixture.apnsToken(12))
            fixture.sandbox.setBehavior(.belongs(toTopic: DeliveryFixture.otherTopic), for: DeliveryFixture.apnsToken(13))

            #expect(await sender.send(try DeliveryFixture.delivery(10, platform: .ios)) == .tokenDead(reason: "Unregistered"))
            #expect(await sender.send(try DeliveryFixture.delivery(11, platform: .ios)) == .retryAfter(.seconds(5), reason: "TooManyRequests"))
            #expect(await sender.send(try DeliveryFixture.delivery(12, platform: .ios)) == .retryAfter(nil, reason: "ServiceUnavailable", providerFault: true))
            #expect(await sender.send(try DeliveryFixture.delivery(12, platform: .ios)) == .sent)
            #expect(await sender.send(try DeliveryFixture.delivery(13, platform: .ios)) == .tokenDead(reason: "DeviceTokenNotForTopic"))
            #expect(await sender.send(try DeliveryFixture.delivery(14, platform: .ios, token: "not-hex")) == .tokenDead(reason: "BadDeviceToken"))
            let huge = try DeliveryFixture.delivery(15, platform: .ios, body: String(repeating: "x", count: 6000))
            var tooLarge = huge
            // Bypass the builder's shortening to make Apple refuse the size.
            tooLarge.payload = PushPayload(
                platform: .ios, profile: .modern, json: .object(["aps": .object(["alert": .string(String(repeating: "x", count: 5000))])]),
                apns: huge.payload.apns, deliveryKey: huge.deliveryKey, wasShortened: false
            )
            #expect(await sender.send(tooLarge) == .permanentFailure(reason: "PayloadTooLarge"))
            #expect(
                await sender.send(try DeliveryFixture.delivery(16, platform: .ios, app: "com.example.unknown"))
                    == .permanentFailure(reason: "no APNs app configured for 'com.example.unknown'"))
            let stats = await sender.statistics
            #expect(stats.sent == 1 && stats.tokenDead == 3 && stats.retryLater == 2 && stats.permanentFailures == 2)
            await sender.shutdown()
        }
    }

    /// Apple rejects the token every request carries; 500 concurrent sends make exactly one new
    /// token and all succeed on their single retry.
    @Test func anExpiredProviderTokenIsRenewedExactlyOnceUnder500ConcurrentSends() async throws {
        try await DeliveryFixture.with { fixture in
            let clock = ManualClock()
            let sender = try fixture.apnsSender(clock: clock)
            #expect(await sender.send(try DeliveryFixture.delivery(0, platform: .ios)) == .sent)
            #expect(await sender.statistics.credentialsIssued == 1)
            // Apple now considers that token expired (as if an hour had passed on its side).
            fixture.sandbox.apns.expireProviderTokens(issuedBefore: clock.now().addingTimeInterval(1))
            clock.advance(by: 5)
            let outcomes = try await withThrowingTaskGroup(of: DeliveryOutcome.self) { group in
                for n in 1...500 {
                    let delivery = try DeliveryFixture.delivery(n, platform: .ios)
                    group.addTask { await sender.send(delivery) }
                }
                return try await group.reduce(into: [DeliveryOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.count == 500)
            #expect(outcomes.allSatisfy { $0 == .sent }, "\(Set(outcomes))")
            let stats = await sender.statistics
            #expect(stats.credentialsIssued == 2)
            #expect(fixture.sandbox.apns.providerTokensSeen == 2)
            #expect(fixture.sandbox.pushes.count == 501)
            await sender.shutdown()
        }
    }

    @Test func theProviderTokenIsReusedForTwentyToSixtyMinutes() async throws {
        let clock = ManualClock()
        try await DeliveryFixture.with(clock: clock) { fixture in
            let sender = try fixture.apnsSender(clock: clock)
            #expect(await sender.send(try DeliveryFixture.delivery(1, platform: .ios)) == .sent)
            clock.advance(by: 25 * 60)
            #expect(await sender.send(try DeliveryFixture.delivery(2, platform: .ios)) == .sent)
            #expect(await sender.statistics.credentialsIssued == 1)
            clock.advance(by: 26 * 60)  // 51 minutes: past the 50-minute refresh, before Apple's hour.
            #expect(await sender.send(try DeliveryFixture.delivery(3, platform: .ios)) == .sent)
            #expect(await sender.statistics.credentialsIssued == 2)
            // The sandbox (Apple) accepted the change on the same connection: not too often.
            #expect(fixture.sandbox.apns.providerTokensSeen == 2)
            await sender.shutdown()
        }
    }

    /// One HTTP/2 connection carries at least 100 streams at once (from the sandbox's ledger).
    @Test func oneConnectionCarriesAtLeast100ConcurrentStreams() async throws {
        try await DeliveryFixture.with { fixture in
            let sender = try fixture.apnsSender { $0.http.maxConnectionsPerHost = 1 }
            for n in 1...300 { fixture.sandbox.setBehavior(.delay(milliseconds: 2_000), for: DeliveryFixture.apnsToken(n)) }
            #expect(await sender.send(try DeliveryFixture.delivery(0, platform: .ios)) == .sent)
            let outcomes = try await withThrowingTaskGroup(of: DeliveryOutcome.self) { group in
                for n in 1...300 {
                    let delivery = try DeliveryFixture.delivery(n, platform: .ios)
                    group.addTask { await sender.send(delivery) }
                }
                return try await group.reduce(into: [DeliveryOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .sent })
            let ledger = fixture.sandbox.apnsConnections
            #expect(ledger.establishedConnectionCount == 1)
            #expect(ledger.maxConcurrentStreams >= 100, "\(ledger)")
            #expect(ledger.totalRequestsServed == 301)
            await sender.shutdown()
        }
    }

    @Test func inFlightRequestsAreBounded() async throws {
        try await DeliveryFixture.with { fixture in
            let sender = try fixture.apnsSender { $0.maxInFlight = 8 }
            for n in 1...40 { fixture.sandbox.setBehavior(.delay(milliseconds: 100), for: DeliveryFixture.apnsToken(n)) }
            let outcomes = try await withThrowingTaskGroup(of: DeliveryOutcome.self) { group in
                for n in 1...40 {
                    let delivery = try DeliveryFixture.delivery(n, platform: .ios)
                    group.addTask { await sender.send(delivery) }
                }
                return try await group.reduce(into: [DeliveryOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .sent })
            let maxStreams = fixture.sandbox.apnsConnections.connections.map(\.maxConcurrentStreams).reduce(0, +)
            #expect(maxStreams <= 8)
            #expect(maxStreams >= 2)
            await sender.shutdown()
        }
    }

    @Test func sendsThroughAnAuthenticatingProxy() async throws {
        try await DeliveryFixture.with { fixture in
            let proxy = try await ConnectProxy.start(credentials: .init(user: "herald", password: "p@ss w0rd"))
            do {
                let sender = try fixture.apnsSender { $0.http.proxy = .init(url: proxy.url, user: "herald", password: "p@ss w0rd") }
                #expect(await sender.send(try DeliveryFixture.delivery(1, platform: .ios)) == .sent)
                await sender.shutdown()
                let statistics = proxy.statistics
                #expect(statistics.tunnelsOpened >= 1)
                #expect(statistics.targets.allSatisfy { $0.hasSuffix(":\(fixture.sandbox.apnsPort)") })
                #expect(fixture.sandbox.pushes.count == 1)
            } catch {
                await proxy.shutdown()
                throw error
            }
            await proxy.shutdown()
        }
    }

    @Test func transportFailuresAreTransient() async throws {
        try await DeliveryFixture.with { fixture in
            let sender = try fixture.apnsSender { $0.baseURL = "https://127.0.0.1:1" }
            let outcome = await sender.send(try DeliveryFixture.delivery(1, platform: .ios))
            guard case .retryAfter(nil, let reason, _) = outcome else {
                Issue.record("expected a retry, got \(outcome)")
                return
            }
            #expect(reason.hasPrefix("transport: "))
            await sender.shutdown()
        }
    }

    /// Certificate authentication: the sandbox's client certificate as PEM and as a .p12; no
    /// bearer token travels, and the certificate only serves its own topic.
    @Test func certificateAuthenticationWithPEMAndPKCS12() async throws {
        try await DeliveryFixture.with { fixture in
            let files = fixture.sandbox.files
            let p12 = fixture.directory.appendingPathComponent("apns.p12").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = [
                "pkcs12", "-export", "-in", files.apnsCertificate.path, "-inkey", files.apnsCertificateKey.path, "-out", p12, "-passout", "pass:p12-secret",
            ]
            try process.run()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0)

            for (n, certificate) in [
                APNsCertificate.pem(certificateFile: files.apnsCertificate.path, keyFile: files.apnsCertificateKey.path),
                .pkcs12(file: p12, password: "p12-secret"),
            ].enumerated() {
                var configuration = fixture.apnsConfiguration
                configuration.tokenKey = nil
                configuration.apps = [
                    APNsApp(topic: DeliveryFixture.topic, certificate: certificate), APNsApp(topic: DeliveryFixture.otherTopic, certificate: certificate),
                ]
                let sender = try APNsSender(configuration: configuration)
                let outcome = await sender.send(try DeliveryFixture.delivery(n, platform: .ios))
                #expect(outcome == .sent, "\(certificate): \(outcome)")
                // The certificate is for the first topic only.
                #expect(
                    await sender.send(try DeliveryFixture.delivery(10 + n, platform: .ios, app: DeliveryFixture.otherTopic))
                        == .permanentFailure(reason: "TopicDisallowed"))
                await sender.shutdown()
            }
            let pushes = fixture.sandbox.pushes
            #expect(pushes.count == 2)
            #expect(pushes.allSatisfy { $0.headers["authorization"] == nil })
            #expect(fixture.sandbox.apns.providerTokensSeen == 0)
        }
    }
}
