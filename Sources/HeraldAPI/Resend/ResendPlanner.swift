import Foundation
import HeraldCore
import HeraldStore

/// Pure decisions of a resend: which pushes to send for the missed log entries of one device
/// (seed 002). Up to ``ResendConfiguration/summaryThreshold`` entries are sent again exactly as
/// logged (the FCM body gets the device's current token; APNs headers are derived from the
/// body; the collapse id stays the delivery key, so a device that did get one shows it once).
/// More than that → one summary push ("you missed N notifications") rendered from the
/// ``ResendConfiguration/summaryEventId`` template, or a built-in text without one.
struct ResendPlanner: Sendable {
    let configuration: ResendConfiguration

    /// The pushes for `entries` (already filtered to what the caller may see) out of `missed`
    /// in all. With `unread` (the caller's unread count on the device), the badge of each push
    /// sent again is set to it.
    func pushes(
        for entries: [NotificationLogEntry], missed: Int, after: Int, device: Device, token: String, userId: String,
        catalog: TemplateCatalog?, now: Date, unread: Int? = nil
    ) throws(APIError) -> [PushDelivery] {
        guard missed > 0 else { return [] }
        if missed > configuration.summaryThreshold {
            return [try summary(missed: missed, after: after, device: device, token: token, userId: userId, catalog: catalog, now: now)]
        }
        return entries.compactMap { entry in
            guard let payload = Self.payload(logged: entry.payload, deliveryKey: entry.deliveryKey, platform: device.platform, token: token, badge: unread)
            else {
                return nil
            }
            return PushDelivery(
                deviceId: device.deviceId, userId: entry.userId, eventId: entry.eventId ?? "", position: Int64(entry.position),
                target: PushTarget(platform: device.platform, token: token, userId: entry.userId, app: device.app), payload: payload
            )
        }
    }

    /// A logged payload made sendable again; `nil` if the log holds something that is not a
    /// JSON object (never written by Herald).
    static func payload(logged: String, deliveryKey: DeliveryKey, platform: Platform, token: String, badge: Int? = nil) -> PushPayload? {
        guard var json = JSONValue(logged: logged) else { return nil }
        if let badge { json = json.replacingBadge(with: badge) }
        switch platform {
        case .ios:
            let aps = json["aps"]
            let isBackground = aps?["alert"] == nil && aps?["content-available"] != nil
            let options = APNsRequestOptions(
                pushType: isBackground ? .background : .alert, priority: isBackground ? 5 : 10, expiration: nil, collapseId: deliveryKey.rawValue
            )
            return PushPayload(platform: .ios, profile: .legacy, json: json, apns: options, deliveryKey: deliveryKey, wasShortened: false)
        case .android:
            return PushPayload(
                platform: .android, profile: .legacy, json: json.replacingFCMToken(with: token), apns: nil, deliveryKey: deliveryKey, wasShortened: false)
        }
    }

    private func summary(
        missed: Int, after: Int, device: Device, token: String, userId: String, catalog: TemplateCatalog?, now: Date
    ) throws(APIError) -> PushDelivery {
        let event = Event(
            id: configuration.summaryEventId, type: .notification, dateTime: EventTimestamp(date: now),
            filters: [], params: [EventParameter(name: "count", value: String(missed))]
        )
        let rendered =
            (try? catalog?.render(event, culture: device.culture, platform: device.platform))
            ?? Self.builtInSummary(missed: missed, eventId: event.id, culture: device.culture, platform: device.platform)
        let deliveryKey = DeliveryKey(
            messageKey: "herald.resend-summary:\(after):\(device.nextPosition)", deviceId: device.deviceId, userId: userId, app: device.app
        )
        let target = PushTarget(platform: device.platform, token: token, userId: userId, app: device.app)
        let payload: PushPayload
        do {
            payload = try PayloadBuilder(profile: configuration.payloadProfile).build(
                rendered, event: event, target: target, deliveryKey: deliveryKey, now: now)
        } catch {
            throw APIError(.internalError, "internal error", underlying: error)
        }
        return PushDelivery(deviceId: device.deviceId, userId: userId, eventId: event.id, position: 0, target: target, payload: payload)
    }

    /// A badge-only push for another device of the user whose reads moved (`api.badge_sync`):
    /// APNs `{"aps":{"badge":N}}` (an alert push without alert or sound: only the icon
    /// changes), FCM a data-only message `{"badge":"N","silent":"1"}`.
    static func badgePush(_ read: PropagatedRead, userId: String) -> PushDelivery {
        let key = DeliveryKey(
            messageKey: "herald.badge:\(read.state.position)", deviceId: read.deviceId, userId: userId,
            app: read.app)
        let payload: PushPayload
        switch read.platform {
        case .ios:
            payload = PushPayload(
                platform: .ios, profile: .modern, json: .object(["aps": .object(["badge": .int(read.state.unread)])]),
                apns: APNsRequestOptions(pushType: .alert, priority: 5, expiration: nil, collapseId: key.rawValue), deliveryKey: key, wasShortened: false
            )
        case .android:
            payload = PushPayload(
                platform: .android, profile: .modern,
                json: .object([
                    "message": .object([
                        "token": .string(read.token),
                        "data": .object(["badge": .string(String(read.state.unread)), "silent": .string("1")]),
                        "android": .object(["priority": .string("NORMAL")]),
                    ])
                ]),
                apns: nil, deliveryKey: key, wasShortened: false
            )
        }
        return PushDelivery(
            deviceId: read.deviceId, userId: userId, eventId: "herald.badge", position: 0,
            target: PushTarget(platform: read.platform, token: read.token, userId: userId, app: read.app),
            payload: payload
        )
    }

    static func builtInSummary(missed: Int, eventId: String, culture: String, platform: Platform) -> RenderedNotification {
        let russian = culture.lowercased().hasPrefix("ru")
        let body =
            russian
            ? "Пропущено уведомлений: \(missed). Откройте приложение, чтобы посмотреть их."
            : "You missed \(missed) notifications. Open the app to see them."
        return RenderedNotification(
            eventId: eventId, culture: russian ? "ru-RU" : "en-US", platform: platform, title: russian ? "Уведомления" : "Notifications",
            body: body, metadata: .defaults(for: eventId), isSilent: false
        )
    }
}
