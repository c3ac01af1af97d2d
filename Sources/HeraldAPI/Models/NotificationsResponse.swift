import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// `GET /v1/devices/{deviceId}/notifications?after=N`: the notifications logged for the device
/// after position N that the caller may see (addressed to them, or broadcast), oldest first.
///
/// Written with HeraldCore's JSON writer rather than `Encodable`, so that each payload goes out
/// exactly as it was logged (numbers as their literal text, never through a `Double`).
struct NotificationsResponse: ResponseGenerator, Sendable {
    struct Item: Sendable {
        var position: Int
        var eventId: String?
        var createdAt: Date
        /// The payload as sent, without the device token.
        var payload: JSONValue
    }

    var deviceId: String
    var after: Int
    /// The last position used on the device, visible to the caller or not.
    var lastPosition: Int
    var notifications: [Item]
    /// More entries follow the page; ask again with `after` = the last position shown.
    var hasMore: Bool

    init(deviceId: String, after: Int, lastPosition: Int, entries: [NotificationLogEntry], hasMore: Bool) {
        self.deviceId = deviceId
        self.after = after
        self.lastPosition = lastPosition
        self.hasMore = hasMore
        notifications = entries.map { entry in
            let payload = JSONValue(logged: entry.payload)?.replacingFCMToken(with: nil) ?? .string(entry.payload)
            return Item(position: entry.position, eventId: entry.eventId, createdAt: entry.createdAt, payload: payload)
        }
    }

    var json: JSONValue {
        .object([
            "deviceId": .string(deviceId),
            "after": .int(after),
            "lastPosition": .int(lastPosition),
            "hasMore": .bool(hasMore),
            "notifications": .array(
                notifications.map { item in
                    var fields: [String: JSONValue] = [
                        "position": .int(item.position),
                        // As Hummingbird's JSON encoder writes dates (ISO 8601, whole seconds, UTC).
                        "createdAt": .string(item.createdAt.formatted(.iso8601)),
                        "payload": item.payload,
                    ]
                    if let eventId = item.eventId { fields["eventId"] = .string(eventId) }
                    return .object(fields)
                }),
        ])
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: json.serialized()))
        )
    }
}
