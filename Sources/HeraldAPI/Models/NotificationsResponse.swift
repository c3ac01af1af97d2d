import Foundation
import HeraldStore
import Hummingbird

/// `GET /v1/devices/{deviceId}/notifications?after=N`: the notifications logged for the device
/// after position N that the caller may see (addressed to them, or broadcast), oldest first.
struct NotificationsResponse: ResponseEncodable, Sendable {
    struct Item: Encodable, Sendable {
        var position: Int
        var eventId: String?
        var createdAt: Date
        /// The payload as sent, without the device token.
        var payload: JSONInput
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
            let logged = (try? JSONDecoder().decode(JSONInput.self, from: Data(entry.payload.utf8))) ?? .string(entry.payload)
            let payload = logged.replacingFCMToken(with: nil)
            return Item(position: entry.position, eventId: entry.eventId, createdAt: entry.createdAt, payload: payload)
        }
    }
}
