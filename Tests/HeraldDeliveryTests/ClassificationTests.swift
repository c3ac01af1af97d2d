import Foundation
import HTTPTypes
import HeraldCore
import HeraldHTTP
import Testing

@testable import HeraldDelivery

@Suite struct ClassificationTests {
    static func body(_ json: String) -> [UInt8] { Array(json.utf8) }

    @Test(arguments: [
        (200, "", DeliveryOutcome.sent),
        (410, #"{"reason":"Unregistered","timestamp":1}"#, .tokenDead(reason: "Unregistered")),
        (410, #"{"reason":"ExpiredToken"}"#, .tokenDead(reason: "ExpiredToken")),
        (400, #"{"reason":"BadDeviceToken"}"#, .tokenDead(reason: "BadDeviceToken")),
        (400, #"{"reason":"DeviceTokenNotForTopic"}"#, .tokenDead(reason: "DeviceTokenNotForTopic")),
        (400, #"{"reason":"BadCollapseId"}"#, .permanentFailure(reason: "BadCollapseId")),
        (400, #"{"reason":"TopicDisallowed"}"#, .permanentFailure(reason: "TopicDisallowed")),
        (413, #"{"reason":"PayloadTooLarge"}"#, .permanentFailure(reason: "PayloadTooLarge")),
        (403, #"{"reason":"ExpiredProviderToken"}"#, .retryAfter(nil, reason: "ExpiredProviderToken")),
        (403, #"{"reason":"InvalidProviderToken"}"#, .permanentFailure(reason: "InvalidProviderToken")),
        (429, #"{"reason":"TooManyRequests"}"#, .retryAfter(nil, reason: "TooManyRequests")),
        (500, #"{"reason":"InternalServerError"}"#, .retryAfter(nil, reason: "InternalServerError", providerFault: true)),
        (503, #"{"reason":"Shutdown"}"#, .retryAfter(nil, reason: "Shutdown", providerFault: true)),
        (502, "<html>bad gateway</html>", .retryAfter(nil, reason: "status 502", providerFault: true)),
    ])
    func apnsAnswers(status: Int, json: String, expected: DeliveryOutcome) {
        #expect(APNsResponseClassifier.outcome(status: status, body: Self.body(json), headerFields: [:]) == expected)
    }

    @Test(
        arguments: [
            (404, "UNREGISTERED", "NOT_FOUND", DeliveryOutcome.tokenDead(reason: "UNREGISTERED")),
            (403, "SENDER_ID_MISMATCH", "PERMISSION_DENIED", .tokenDead(reason: "SENDER_ID_MISMATCH")),
            (404, nil, "NOT_FOUND", .tokenDead(reason: "NOT_FOUND")),
            (429, "QUOTA_EXCEEDED", "RESOURCE_EXHAUSTED", .retryAfter(nil, reason: "QUOTA_EXCEEDED")),
            (503, "UNAVAILABLE", "UNAVAILABLE", .retryAfter(nil, reason: "UNAVAILABLE", providerFault: true)),
            (500, "INTERNAL", "INTERNAL", .retryAfter(nil, reason: "INTERNAL", providerFault: true)),
            (400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", .permanentFailure(reason: "INVALID_ARGUMENT")),
            (401, "THIRD_PARTY_AUTH_ERROR", "UNAUTHENTICATED", .permanentFailure(reason: "THIRD_PARTY_AUTH_ERROR")),
            (401, nil, "UNAUTHENTICATED", .retryAfter(nil, reason: "UNAUTHENTICATED")),
            (403, nil, "PERMISSION_DENIED", .permanentFailure(reason: "PERMISSION_DENIED")),
        ] as [(Int, String?, String, DeliveryOutcome)])
    func fcmAnswers(status: Int, errorCode: String?, canonical: String, expected: DeliveryOutcome) {
        let details = errorCode.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
        let json = #"{"error":{"code":\#(status),"message":"m","status":"\#(canonical)"\#(details)}}"#
        #expect(FCMResponseClassifier.outcome(status: status, body: Self.body(json), headerFields: [:]) == expected)
    }

    @Test func retryAfterIsHonouredInSecondsAndAsADate() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(
            FCMResponseClassifier.outcome(status: 429, body: [], headerFields: [.retryAfter: "30"], now: now) == .retryAfter(.seconds(30), reason: "status 429")
        )
        let date = "Tue, 14 Nov 2023 22:14:20 GMT"  // now + 60 s
        #expect(RetryAfterHeader.parse(date, now: now) == .seconds(60))
        #expect(RetryAfterHeader.parse("soon", now: now) == nil)
        #expect(RetryAfterHeader.parse(nil, now: now) == nil)
    }

    @Test func transportFailuresAreTransientButRefusedRequestsAreNot() {
        for code in [HTTPClientError.Code.timeout, .couldNotConnect, .receiveFailure, .sendFailure, .http2Failure, .tlsFailure, .proxyFailure] {
            let outcome = APNsResponseClassifier.outcome(for: HTTPClientError(code: code, call: "test"))
            #expect(outcome == .retryAfter(nil, reason: "transport: \(code)", providerFault: true))
        }
        // Herald's own client stopping is not the provider's fault (no circuit breaker opens).
        #expect(APNsResponseClassifier.outcome(for: HTTPClientError(code: .shutdown, call: "test")) == .retryAfter(nil, reason: "transport: shutdown"))
        let refused = APNsResponseClassifier.outcome(for: HTTPClientError(code: .invalidRequest, call: "test", detail: "header injection"))
        #expect(refused == .permanentFailure(reason: "request refused by the HTTP client: header injection"))
    }

    @Test func everyDocumentedReasonIsDistinct() {
        #expect(Set(APNsReason.documented).count == APNsReason.documented.count)
        #expect(APNsReason.documented.count >= 30)
    }
}

@Suite struct RoutingSenderTests {
    final class Recorder: PushSender {
        let answer: DeliveryOutcome
        let reconciled: ReconcileAnswer
        init(_ answer: DeliveryOutcome, reconciled: ReconcileAnswer = .unknown) {
            self.answer = answer
            self.reconciled = reconciled
        }
        func send(_ delivery: PushDelivery) async -> DeliveryOutcome { answer }
        func reconcile(_ deliveryKey: DeliveryKey) async -> ReconcileAnswer { reconciled }
    }

    @Test func routesByPlatform() async throws {
        let router = RoutingSender(ios: Recorder(.sent), android: Recorder(.tokenDead(reason: "UNREGISTERED")))
        #expect(await router.send(try DeliveryFixture.delivery(1, platform: .ios)) == .sent)
        #expect(await router.send(try DeliveryFixture.delivery(1, platform: .android)) == .tokenDead(reason: "UNREGISTERED"))
        let iosOnly = RoutingSender(ios: Recorder(.sent), android: nil)
        #expect(await iosOnly.send(try DeliveryFixture.delivery(1, platform: .android)) == .permanentFailure(reason: "no FCM credentials are configured"))
        let key = try DeliveryFixture.delivery(1, platform: .ios).deliveryKey
        #expect(await router.reconcile(key) == .unknown)
        #expect(await RoutingSender(ios: Recorder(.sent, reconciled: .delivered), android: Recorder(.sent)).reconcile(key) == .delivered)
        #expect(await RoutingSender(ios: Recorder(.sent, reconciled: .notDelivered), android: nil).reconcile(key) == .notDelivered)
    }
}
