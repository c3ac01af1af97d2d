import Foundation

/// One push the sandbox accepted, as recorded (and written as a JSON line).
public struct RecordedPush: Sendable {
    public enum Provider: String, Sendable, Hashable {
        case apns
        case fcm
    }

    public var provider: Provider
    public var time: Date
    /// The ``ConnectionLedger`` id of the connection that carried it.
    public var connectionID: Int
    public var streamID: Int
    public var path: String
    /// Request headers, names lower-case; `authorization` shortened.
    public var headers: [String: String]
    /// The request body, exactly as received.
    public var body: [UInt8]
    /// The device token (APNs path, FCM `message.token`).
    public var token: String
    /// APNs `apns-topic` or the FCM project id.
    public var app: String

    /// The body parsed as a JSON object (nil if it is not one).
    public var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }

    /// The JSON line written to the record file.
    func jsonLine() -> [UInt8] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var object: [String: Any] = [
            "time": formatter.string(from: time),
            "provider": provider.rawValue,
            "connection": connectionID,
            "stream": streamID,
            "path": path,
            "headers": headers,
            "token": token,
            "app": app,
        ]
        if let parsed = try? JSONSerialization.jsonObject(with: Data(body)) {
            object["body"] = parsed
        } else {
            object["body_text"] = String(decoding: body, as: UTF8.self)
        }
        var line = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])).map { [UInt8]($0) } ?? []
        line.append(0x0A)
        return line
    }
}
