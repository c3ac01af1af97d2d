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
    /// The stand-in parsed the body as a JSON object (so the record can copy it as it is).
    var bodyIsJSONObject = false

    /// The body parsed as a JSON object (nil if it is not one).
    public var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }

    /// Appends the JSON line written to the record file: an object with sorted keys, the body
    /// as JSON (`body`) or, if it is not a JSON object, as text (`body_text`).
    ///
    /// Written by hand rather than with `JSONSerialization`: the recorder's writer encodes every
    /// accepted push, tens of thousands a second under load. A body that is a JSON object (every
    /// accepted push's is; the stand-ins parsed it
    /// and said so in `bodyIsJSONObject`) is copied as it is, line breaks turned into
    /// spaces so that the record stays one line.
    func appendJSONLine(to line: inout [UInt8]) {
        var first = true
        func key(_ name: String) {
            line.append(UInt8(ascii: first ? "{" : ","))
            first = false
            JSONText.appendString(name, to: &line)
            line.append(UInt8(ascii: ":"))
        }
        key("app")
        JSONText.appendString(app, to: &line)
        if bodyIsJSONObject, body.first(where: { $0 != 32 && $0 != 9 && $0 != 10 && $0 != 13 }) == UInt8(ascii: "{") {
            key("body")
            for byte in body { line.append(byte == 10 || byte == 13 ? 32 : byte) }
        } else if let parsed = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(withJSONObject: parsed, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
        {
            key("body")
            line.append(contentsOf: data)
        } else {
            key("body_text")
            JSONText.appendString(String(decoding: body, as: UTF8.self), to: &line)
        }
        key("connection")
        line.append(contentsOf: String(connectionID).utf8)
        key("headers")
        line.append(UInt8(ascii: "{"))
        for (index, name) in headers.keys.sorted().enumerated() {
            if index > 0 { line.append(UInt8(ascii: ",")) }
            JSONText.appendString(name, to: &line)
            line.append(UInt8(ascii: ":"))
            JSONText.appendString(headers[name] ?? "", to: &line)
        }
        line.append(UInt8(ascii: "}"))
        key("path")
        JSONText.appendString(path, to: &line)
        key("provider")
        JSONText.appendString(provider.rawValue, to: &line)
        key("stream")
        line.append(contentsOf: String(streamID).utf8)
        key("time")
        JSONText.appendString(JSONText.internetTime(time), to: &line)
        key("token")
        JSONText.appendString(token, to: &line)
        line.append(contentsOf: "}\n".utf8)
    }
}

extension RecordedPush {
    /// A request a stand-in accepted, as recorded: its connection, stream, path, headers (names
    /// lower-case, `authorization` shortened: a record file is no place for a credential) and
    /// body, which the stand-in has parsed as a JSON object.
    init(accepted request: ServerRequest, provider: Provider, time: Date, token: String, app: String) {
        var headers: [String: String] = [:]
        for field in request.headers {
            let name = field.name.lowercased()
            headers[name] = name == "authorization" ? String(field.value.prefix(20)) + "…" : field.value
        }
        self.init(
            provider: provider, time: time, connectionID: request.connectionID, streamID: request.streamID, path: request.path, headers: headers,
            body: request.body, token: token, app: app, bodyIsJSONObject: true)
    }
}
