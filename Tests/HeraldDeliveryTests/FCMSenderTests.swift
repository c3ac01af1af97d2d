import Foundation
import HTTPTypes
import HeraldCore
import HeraldDelivery
import HeraldSandbox
import Testing

@Suite struct FCMSenderTests {
    @Test(arguments: [PayloadProfile.legacy, .modern])
    func androidPayloadsArriveAsBuilt(profile: PayloadProfile) async throws {
        try await DeliveryFixture.with { fixture in
            let sender = try fixture.fcmSender()
            let deliveries = [
                try DeliveryFixture.delivery(1, platform: .android, profile: profile),
                try DeliveryFixture.delivery(2, platform: .android, profile: profile, app: fixture.sandbox.credentials.projectID),
                try DeliveryFixture.delivery(3, platform: .android, profile: profile, silent: true),
            ]
            for delivery in deliveries {
                #expect(await sender.send(delivery) == .sent)
            }
            await sender.shutdown()
            let pushes = fixture.sandbox.pushes
            #expect(pushes.count == 3)
            for delivery in deliveries {
                let push = try #require(pushes.first { $0.token == delivery.target.token })
                #expect(push.body == delivery.payload.body)
                #expect(push.path == "/v1/projects/herald-sandbox/messages:send")
                #expect(push.headers["authorization"]?.hasPrefix("Bearer ya29.") == true)
                #expect(push.headers["content-type"]?.hasPrefix("application/json") == true)
            }
        }
    }

    @Test func theAccessTokenIsFetchedOnceFor1000Sends() async throws {
        try await DeliveryFixture.with { fixture in
            let sender = try fixture.fcmSender()
            let outcomes = try await withThrowingTaskGroup(of: DeliveryOutcome.self) { group in
                for n in 1...1000 {
                    let delivery = try DeliveryFixture.delivery(n, platform: .android)
                    group.addTask { await sender.send(delivery) }
                }
                return try await group.reduce(into: [DeliveryOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.count == 1000)
            #expect(outcomes.allSatisfy { $0 == .sent }, "\(Set(outcomes))")
            #expect(fixture.sandbox.fcm.oauth.accessTokensIssued == 1)
            #expect(await sender.statistics.credentialsIssued == 1)
            #expect(fixture.sandbox.pushes.count == 1000)
            await sender.shutdown()
        }
    }

    @Test func a401RefreshesTheAccessTokenOnceThenSucceeds() async throws {
        try await DeliveryFixture.with { fixture in
            let sender = try fixture.fcmSender()
            #expect(await sender.send(try DeliveryFixture.delivery(0, platform: .android)) == .sent)
            fixture.sandbox.fcm.oauth.revokeAccessTokens()
            let outcomes = try await withThrowingTaskGroup(of: DeliveryOutcome.self) { group in
                for n in 1...100 {
                    let delivery = try DeliveryFixture.delivery(n, platform: .android)
                    group.addTask { await sender.send(delivery) }
                }
                return try await group.reduce(into: [DeliveryOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .sent }, "\(Set(outcomes))")
            #expect(fixture.sandbox.fcm.oauth.accessTokensIssued == 2)
            #expect(await sender.statistics.credentialsIssued == 2)
            await sender.shutdown()
        }
    }

    @Test func providerAnswersAreClassifiedOnce() async throws {
        try await DeliveryFixture.with { fixture in
            let sender = try fixture.fcmSender()
            fixture.sandbox.setBehavior(.unregistered, for: DeliveryFixture.fcmToken(10))
            fixture.sandbox.setBehavior(.throttled(retryAfter: 9), for: DeliveryFixture.fcmToken(11))
            fixture.sandbox.setBehavior(.flaky(failures: 1), for: DeliveryFixture.fcmToken(12))
            #expect(await sender.send(try DeliveryFixture.delivery(10, platform: .android)) == .tokenDead(reason: "UNREGISTERED"))
            #expect(await sender.send(try DeliveryFixture.delivery(11, platform: .android)) == .retryAfter(.seconds(9), reason: "QUOTA_EXCEEDED"))
            #expect(await sender.send(try DeliveryFixture.delivery(12, platform: .android)) == .retryAfter(nil, reason: "UNAVAILABLE", providerFault: true))
            #expect(await sender.send(try DeliveryFixture.delivery(12, platform: .android)) == .sent)
            #expect(
                await sender.send(try DeliveryFixture.delivery(13, platform: .android, token: "bad token!")) == .permanentFailure(reason: "INVALID_ARGUMENT"))
            #expect(
                await sender.send(try DeliveryFixture.delivery(14, platform: .android, app: "unknown-project"))
                    == .permanentFailure(reason: "no Firebase project configured for 'unknown-project'"))
            #expect(await sender.send(try DeliveryFixture.delivery(15, platform: .ios)) == .permanentFailure(reason: "not an FCM payload (platform ios)"))
            await sender.shutdown()
        }
    }

    @Test func aRefusedTokenExchangeIsTransientAndNamesTheCause() async throws {
        try await DeliveryFixture.with { fixture in
            // A service account whose e-mail the sandbox (Google) does not know.
            let original = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.sandbox.files.serviceAccount)) as? [String: Any])
            var changed = original
            changed["client_email"] = "intruder@example.iam.gserviceaccount.com"
            let file = fixture.directory.appendingPathComponent("other-account.json")
            try JSONSerialization.data(withJSONObject: changed).write(to: file)
            let sender = try fixture.fcmSender { $0.projects = [FCMProject(serviceAccountFile: file.path)] }
            #expect(
                await sender.send(try DeliveryFixture.delivery(1, platform: .android))
                    == .retryAfter(nil, reason: "no access token: refused 400", providerFault: true))
            await sender.shutdown()
        }
    }
}
