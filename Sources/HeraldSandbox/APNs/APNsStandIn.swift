import Foundation
import HeraldCore
import JWTKit
import SwiftASN1
import X509

/// A local stand-in for Apple's provider API (`POST /3/device/<token>`) that checks what APNs
/// checks and answers with APNs's statuses and `{"reason":…}` bodies:
///
/// - 405 `MethodNotAllowed` (not POST); 404 `BadPath`; 400 `MissingDeviceToken`;
/// - 400 `DuplicateHeaders` (an `apns-*` or `authorization` header twice);
/// - certificate authentication (a client certificate issued by the sandbox's CA, as the
///   sandbox writes it): the topic must be the certificate's `UID`, else 400 `TopicDisallowed`;
/// - 403 `MissingProviderToken`, `InvalidProviderToken` (not ES256, wrong `kid`, wrong `iss`,
///   bad signature, `iat` in the future), `ExpiredProviderToken` (older than an hour, or
///   expired by ``expireProviderTokens(issuedBefore:)``), 429 `TooManyProviderTokenUpdates`;
/// - 400 `MissingTopic`, `BadTopic`, `TopicDisallowed` (not one of the sandbox's bundle ids),
///   `DeviceTokenNotForTopic` (a token bound to another topic by its ``TokenBehavior``);
/// - 400 `BadDeviceToken` (not 64–200 hex digits);
/// - 400 `InvalidPushType` (missing or unknown `apns-push-type`; `background` without
///   `content-available: 1`; `alert` without alert, sound or badge), `BadPriority` (not 10, 5
///   or 1; `background` not 5), `BadExpirationDate`, `BadCollapseId` (over 64 bytes),
///   `BadMessageId` (an `apns-id` that is not a UUID);
/// - 400 `PayloadEmpty`, 413 `PayloadTooLarge` (over 4096 bytes), 400 `BadPayload` (not a JSON
///   object with an `aps` dictionary; Apple documents no reason for this, the sandbox names one);
/// - then the token's ``TokenBehavior``: 410 `Unregistered`, 429 `TooManyRequests` with
///   `Retry-After`, 503 `ServiceUnavailable`, a delay (a timer: the verdict is taken, and an
///   accepted push recorded, when the request arrives).
///
/// Accepted pushes answer 200 with `apns-id` and are recorded.
///
/// Thread rules: `Sendable`; ``respond(to:)`` runs concurrently for every request, on the
/// servers' event loops.
public final class APNsStandIn: Sendable {
    public let topics: [String]
    public let keyID: String
    public let teamID: String
    public let maxPayloadBytes: Int
    let tokens: APNsProviderTokenCheck
    private let book: BehaviorBook
    private let recorder: SandboxRecorder
    private let clock: @Sendable () -> Date

    /// Headers APNs refuses to see twice (`DuplicateHeaders`).
    static let singleHeaders = ["authorization", "apns-topic", "apns-push-type", "apns-priority", "apns-expiration", "apns-collapse-id", "apns-id"]

    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets", "controls",
    ]

    init(
        topics: [String], keyID: String, teamID: String, publicKey: ES256PublicKey, maxPayloadBytes: Int, book: BehaviorBook, recorder: SandboxRecorder,
        clock: @escaping @Sendable () -> Date
    ) {
        self.topics = topics
        self.keyID = keyID
        self.teamID = teamID
        self.maxPayloadBytes = maxPayloadBytes
        self.tokens = APNsProviderTokenCheck(keyID: keyID, teamID: teamID, publicKey: publicKey)
        self.book = book
        self.recorder = recorder
        self.clock = clock
    }

    /// From now on, provider tokens issued before `date` are refused as `ExpiredProviderToken`
    /// (as if an hour had passed), so tests can make Apple reject a fresh token.
    public func expireProviderTokens(issuedBefore date: Date) {
        tokens.expireTokens(issuedBefore: date)
    }

    /// Distinct provider tokens whose signature verified.
    public var providerTokensSeen: Int { tokens.tokensVerified }

    /// Answers at once from what is cached; a provider token never seen before is verified
    /// first (a task, once per token).
    func respond(to request: ServerRequest) -> ServerReply {
        let deviceToken = Self.deviceToken(in: request.path)
        if let deviceToken, !deviceToken.isEmpty { book.countRequest(deviceToken) }
        let evaluation = evaluate(request, deviceToken: deviceToken)
        guard case .unverified(let providerToken) = evaluation else {
            return conclude(request, deviceToken: deviceToken, evaluation)
        }
        return .later {
            await self.tokens.verify(providerToken)
            let reply = self.conclude(request, deviceToken: deviceToken, self.evaluate(request, deviceToken: deviceToken))
            guard case .response(let response) = reply.kind else { return ServerResponse(status: 500) }
            if reply.delay > .zero { try? await Task.sleep(for: reply.delay) }
            return response
        }
    }

    /// What the checks found: the topic of an accepted push, Apple's rejection, or a provider
    /// token to verify first; with the token's scripted delay.
    enum Evaluation {
        case accepted(topic: String, delay: Duration)
        case rejected(APNsRejection, delay: Duration = .zero)
        case unverified(String)
    }

    /// Counts, records and answers an evaluated request.
    private func conclude(_ request: ServerRequest, deviceToken: String?, _ evaluation: Evaluation) -> ServerReply {
        let apnsID = request.header("apns-id") ?? UUID().uuidString.lowercased()
        switch evaluation {
        case .accepted(let topic, let delay):
            let token = deviceToken ?? ""
            book.countAccepted(token)
            recorder.record(RecordedPush(accepted: request, provider: .apns, time: clock(), token: token, app: topic))
            return .now(ServerResponse(status: 200, headers: [("apns-id", apnsID)]), after: delay)
        case .rejected(let rejection, let delay):
            if let deviceToken, !deviceToken.isEmpty { book.countRejection(deviceToken, reason: rejection.reason) }
            return .now(rejection.response(apnsID: apnsID, now: clock()), after: delay)
        case .unverified:
            // Verified just before: the cache has its verdict, so this is never reached.
            return conclude(request, deviceToken: deviceToken, .rejected(APNsRejection(403, "InvalidProviderToken")))
        }
    }

    /// Every check, in the order APNs applies them; the topic when the push is accepted.
    private func evaluate(_ request: ServerRequest, deviceToken: String?) -> Evaluation {
        guard request.method == "POST" else { return .rejected(APNsRejection(405, "MethodNotAllowed")) }
        guard let deviceToken else { return .rejected(APNsRejection(404, "BadPath")) }
        guard !deviceToken.isEmpty else { return .rejected(APNsRejection(400, "MissingDeviceToken")) }
        var seen = 0
        for field in request.headers {
            guard let index = Self.singleHeaders.firstIndex(where: { ServerRequest.sameName($0, field.name) }) else { continue }
            guard seen & (1 << index) == 0 else { return .rejected(APNsRejection(400, "DuplicateHeaders")) }
            seen |= 1 << index
        }
        let topic: String
        if let certificateTopic = Self.certificateTopic(request) {
            // Certificate authentication: the certificate names the one topic it may push to.
            topic = request.header("apns-topic") ?? certificateTopic
            guard topic == certificateTopic, topics.contains(topic) else { return .rejected(APNsRejection(400, "TopicDisallowed")) }
        } else {
            switch tokens.check(authorization: request.header("authorization"), connectionID: request.connectionID, now: clock()) {
            case .accepted: break
            case .rejected(let rejection): return .rejected(rejection)
            case .unverified(let token): return .unverified(token)
            }
            guard let header = request.header("apns-topic"), !header.isEmpty else { return .rejected(APNsRejection(400, "MissingTopic")) }
            topic = header
        }
        guard topic.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else { return .rejected(APNsRejection(400, "BadTopic")) }
        guard topics.contains(topic) else { return .rejected(APNsRejection(400, "TopicDisallowed")) }
        let hexDigits = deviceToken.utf8.allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0 | 0x20)
        }
        guard hexDigits, deviceToken.utf8.count.isMultiple(of: 2), (64...200).contains(deviceToken.utf8.count) else {
            return .rejected(APNsRejection(400, "BadDeviceToken"))
        }

        guard let pushType = request.header("apns-push-type"), Self.pushTypes.contains(pushType) else {
            return .rejected(APNsRejection(400, "InvalidPushType"))
        }
        let priority: Int
        if let raw = request.header("apns-priority") {
            guard let value = Int(raw), [10, 5, 1].contains(value) else { return .rejected(APNsRejection(400, "BadPriority")) }
            priority = value
        } else {
            priority = 10
        }
        if pushType == "background", priority != 5 { return .rejected(APNsRejection(400, "BadPriority")) }
        if let raw = request.header("apns-expiration") {
            guard let value = Int64(raw), value >= 0 else { return .rejected(APNsRejection(400, "BadExpirationDate")) }
        }
        if let collapseID = request.header("apns-collapse-id"), collapseID.utf8.count > 64 {
            return .rejected(APNsRejection(400, "BadCollapseId"))
        }
        if let id = request.header("apns-id"), !Self.isUUID(id) {
            return .rejected(APNsRejection(400, "BadMessageId"))
        }

        guard !request.body.isEmpty else { return .rejected(APNsRejection(400, "PayloadEmpty")) }
        guard request.body.count <= maxPayloadBytes else { return .rejected(APNsRejection(413, "PayloadTooLarge")) }
        // HeraldCore's reader, not JSONSerialization: a third of the sandbox's own CPU per push
        // went to Foundation's parser and its bridged dictionaries.
        guard let payload = try? JSONValue(parsing: request.body, maxDepth: Self.maxPayloadDepth),
            case .object(let aps)? = payload["aps"]
        else { return .rejected(APNsRejection(400, "BadPayload")) }
        switch pushType {
        case "background":
            guard aps["content-available"]?.integerValue == 1 else { return .rejected(APNsRejection(400, "InvalidPushType")) }
        case "alert":
            guard aps["alert"] != nil || aps["sound"] != nil || aps["badge"] != nil else { return .rejected(APNsRejection(400, "InvalidPushType")) }
        default:
            break
        }

        let behavior = book.behavior(for: deviceToken)
        let delay = Duration.milliseconds(max(0, behavior?.delayMilliseconds ?? 0))
        if let bound = behavior?.topic, bound != topic { return .rejected(APNsRejection(400, "DeviceTokenNotForTopic"), delay: delay) }
        switch book.verdict(for: deviceToken) {
        case .accept: return .accepted(topic: topic, delay: delay)
        case .unregistered: return .rejected(APNsRejection(410, "Unregistered"), delay: delay)
        case .throttled(let seconds): return .rejected(APNsRejection(429, "TooManyRequests", retryAfter: seconds), delay: delay)
        case .unavailable: return .rejected(APNsRejection(503, "ServiceUnavailable"), delay: delay)
        }
    }

    /// The bundle id (subject `UID`) of the client certificate, when the client presented one.
    static func certificateTopic(_ request: ServerRequest) -> String? {
        guard let certificate = request.clientCertificate else { return nil }
        for name in certificate.subject {
            for attribute in name where attribute.type.description == "0.9.2342.19200300.100.1.1" {
                return String(describing: attribute.value)
            }
        }
        return ""
    }

    /// The token of a `/3/device/<token>` path ("" when absent), nil for any other path.
    static func deviceToken(in path: String) -> String? {
        let prefix = "/3/device/"
        guard path.hasPrefix(prefix) else { return path == "/3/device" ? "" : nil }
        var token = path.utf8.dropFirst(prefix.utf8.count)
        if let query = token.firstIndex(of: UInt8(ascii: "?")) { token = token[..<query] }
        let text = String(Substring(token))
        // Percent-decoding only when there is something to decode (hex tokens never do).
        guard token.contains(UInt8(ascii: "%")) else { return text }
        return text.removingPercentEncoding ?? text
    }

    /// Nesting accepted in a payload (Apple states none; 4096 bytes bound it anyway).
    static let maxPayloadDepth = 64

    /// `8-4-4-4-12` hexadecimal digits, either case (what `UUID(uuidString:)` accepts), checked
    /// byte by byte: Foundation's parser went through `sscanf` for every push.
    static func isUUID(_ text: String) -> Bool {
        var count = 0
        for byte in text.utf8 {
            switch count {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return false }
            default:
                let isHex = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
                guard isHex else { return false }
            }
            count += 1
            if count > 36 { return false }
        }
        return count == 36
    }
}
