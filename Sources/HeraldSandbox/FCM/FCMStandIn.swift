import Foundation
import HeraldCore
import Synchronization

/// A local stand-in for FCM HTTP v1 (`POST /v1/projects/<project>/messages:send`) that checks
/// what FCM checks and answers with Google's statuses and error bodies:
///
/// - 401 `UNAUTHENTICATED`: no bearer token, or one the sandbox's OAuth2 endpoint did not issue
///   (or that expired or was revoked);
/// - 404 `NOT_FOUND` for another path; 403 `PERMISSION_DENIED` for another project;
/// - 400 `INVALID_ARGUMENT`: a body that is not `{"message":{…}}`, an unknown field in the
///   message, not exactly one target (`token`, `topic`, `condition`), a malformed registration
///   token (FcmError `INVALID_ARGUMENT`), `data` values that are not strings (a `BadRequest`
///   field violation, as Google sends), reserved data keys (`from`, `gcm`, `google.*`), what
///   ``FCMAndroidConfig`` refuses in `android` (an unknown field, a bad `priority` or `ttl`, an
///   unknown or mistyped `android.notification` field), and `data` + `notification` over 4096
///   bytes;
/// - then the token's ``TokenBehavior``: 404 `UNREGISTERED`, 429 `QUOTA_EXCEEDED` with
///   `Retry-After`, 503 `UNAVAILABLE`, a delay.
///
/// Accepted messages answer `{"name":"projects/<project>/messages/<id>"}` and are recorded.
///
/// Thread rules: `Sendable`; ``respond(to:)`` runs concurrently for every request, on the
/// servers' event loops.
public final class FCMStandIn: Sendable {
    public let projectID: String
    public let maxPayloadBytes: Int
    public let oauth: GoogleOAuthStandIn
    private let book: BehaviorBook
    private let recorder: SandboxRecorder
    private let clock: @Sendable () -> Date
    private let messageCounter = Atomic<Int>(0)

    static let messageFields: Set<String> = ["name", "data", "notification", "android", "webpush", "apns", "fcm_options", "token", "topic", "condition"]

    init(
        projectID: String, maxPayloadBytes: Int, oauth: GoogleOAuthStandIn, book: BehaviorBook, recorder: SandboxRecorder, clock: @escaping @Sendable () -> Date
    ) {
        self.projectID = projectID
        self.maxPayloadBytes = maxPayloadBytes
        self.oauth = oauth
        self.book = book
        self.recorder = recorder
        self.clock = clock
    }

    func respond(to request: ServerRequest) -> ServerReply {
        let path = request.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.path
        let prefix = "/v1/projects/"
        let suffix = "/messages:send"
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count else {
            return .now(GoogleErrorBody.api(status: 404, canonical: "NOT_FOUND", message: "Requested entity was not found."))
        }
        let project = String(path.dropFirst(prefix.count).dropLast(suffix.count)).removingPercentEncoding ?? ""
        guard request.method == "POST" else {
            return .now(GoogleErrorBody.api(status: 405, canonical: "METHOD_NOT_ALLOWED", message: "Method not allowed; use POST."))
        }
        let authorization = request.header("authorization") ?? ""
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", oauth.isValid(String(parts[1])) else {
            return .now(
                GoogleErrorBody.api(
                    status: 401, canonical: "UNAUTHENTICATED",
                    message:
                        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
                )
            )
        }
        guard project == projectID else {
            return .now(
                GoogleErrorBody.api(
                    status: 403, canonical: "PERMISSION_DENIED",
                    message:
                        "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(project.prefix(64))' (or it may not exist)."
                )
            )
        }

        let (token, outcome, delay) = evaluate(request)
        switch outcome {
        case .success:
            let token = token ?? ""
            book.countAccepted(token)
            recorder.record(RecordedPush(accepted: request, provider: .fcm, time: clock(), token: token, app: project))
            let id = messageCounter.add(1, ordering: .relaxed).newValue
            return .now(.json(Array(#"{"name":"projects/\#(projectID)/messages/0:\#(id)%sandbox"}"#.utf8)), after: delay)
        case .failure(let rejection):
            if let token, !token.isEmpty { book.countRejection(token, reason: rejection.errorCode ?? rejection.canonical) }
            return .now(rejection.response, after: delay)
        }
    }

    /// The message checks; the registration token (when there is one), the verdict and the
    /// token's scripted delay.
    private func evaluate(_ request: ServerRequest) -> (String?, Result<Void, FCMRejection>, Duration) {
        let (token, validation) = validate(request)
        guard case .success = validation, let token else { return (token, validation, .zero) }
        let delay = Duration.milliseconds(max(0, book.behavior(for: token)?.delayMilliseconds ?? 0))
        switch book.verdict(for: token) {
        case .accept:
            return (token, .success(()), delay)
        case .unregistered:
            return (
                token, .failure(FCMRejection(status: 404, canonical: "NOT_FOUND", message: "Requested entity was not found.", errorCode: "UNREGISTERED")), delay
            )
        case .throttled(let seconds):
            let rejection = FCMRejection(
                status: 429, canonical: "RESOURCE_EXHAUSTED", message: "Quota exceeded for the device.", errorCode: "QUOTA_EXCEEDED", retryAfter: seconds)
            return (token, .failure(rejection), delay)
        case .unavailable:
            return (
                token,
                .failure(FCMRejection(status: 503, canonical: "UNAVAILABLE", message: "The service is currently unavailable.", errorCode: "UNAVAILABLE")), delay
            )
        }
    }

    /// The message checks: the registration token (when there is one) and whether the message
    /// is one FCM takes.
    private func validate(_ request: ServerRequest) -> (String?, Result<Void, FCMRejection>) {
        // HeraldCore's reader, not JSONSerialization: Foundation's parser and its bridged
        // dictionaries were the largest part of the sandbox's own CPU per message.
        guard case .object(let root)? = try? JSONValue(parsing: request.body, maxDepth: Self.maxMessageDepth) else {
            return (nil, .failure(.invalid("Invalid JSON payload received. The body is not a JSON object.")))
        }
        for key in root.keys where key != "message" && key != "validate_only" {
            return (nil, .failure(.invalid("Invalid JSON payload received. Unknown name \"\(key.prefix(64))\": Cannot find field.")))
        }
        guard case .object(let message)? = root["message"] else {
            return (nil, .failure(.invalid("Request contains an invalid argument.", field: "message")))
        }
        for key in message.keys where !Self.messageFields.contains(key) {
            return (nil, .failure(.invalid("Invalid JSON payload received. Unknown name \"\(key.prefix(64))\" at 'message': Cannot find field.")))
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1 else {
            return (nil, .failure(.invalid("Exactly one of token, topic or condition must be specified.", field: "message")))
        }
        let token = message["token"]?.stringValue
        if let token { book.countRequest(token) }
        if targets == ["token"] {
            guard let token, Self.isRegistrationToken(token) else {
                return (token, .failure(.invalid("The registration token is not a valid FCM registration token", errorCode: "INVALID_ARGUMENT")))
            }
        }
        var size = 0
        if let data = message["data"] {
            guard case .object(let data) = data else { return (token, .failure(.invalid("Invalid value at 'message.data'", field: "message.data"))) }
            for (index, key) in data.keys.sorted().enumerated() {
                guard case .string(let string)? = data[key] else {
                    let shown = data[key].map { String(decoding: $0.serialized(), as: UTF8.self) }?.prefix(40) ?? "null"
                    return (
                        token,
                        .failure(.invalid("Invalid value at 'message.data[\(index)].value' (TYPE_STRING), \(shown)", field: "message.data[\(index)].value"))
                    )
                }
                let lower = key.lowercased()
                if lower == "from" || lower == "gcm" || lower.hasPrefix("google") || lower == "message_type" {
                    return (token, .failure(.invalid("Invalid data payload key: \(key.prefix(64))", errorCode: "INVALID_ARGUMENT")))
                }
                size += key.utf8.count + string.utf8.count
            }
        }
        if let notification = message["notification"] {
            guard case .object(let fields) = notification else {
                return (token, .failure(.invalid("Invalid value at 'message.notification'", field: "message.notification")))
            }
            for key in ["title", "body", "image"] {
                if let value = fields[key], value.stringValue == nil {
                    return (token, .failure(.invalid("Invalid value at 'message.notification.\(key)' (TYPE_STRING)", field: "message.notification.\(key)")))
                }
            }
            size += notification.serialized().count
        }
        if let android = message["android"], let rejection = FCMAndroidConfig.rejection(of: android) {
            return (token, .failure(rejection))
        }
        guard size <= maxPayloadBytes else {
            return (token, .failure(.invalid("Android message is too big", errorCode: "INVALID_ARGUMENT")))
        }
        return (token, .success(()))
    }

    /// Nesting accepted in a message body.
    static let maxMessageDepth = 64

    /// FCM registration tokens: 1–4096 characters of base64url and `:`.
    static func isRegistrationToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 4096
            && token.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: ":")
            }
    }
}
