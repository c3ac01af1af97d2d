import Foundation

/// Builds the APNs or FCM payload for one rendered notification and one device.
///
/// Shapes (keys sorted in the output):
/// - legacy Apple: `{"aps":{"alert":BODY,"acme_eid":ID,"acme_userid":USER,"acme_params":[{"name":…,"value":…}]}}`
///   (seed 000 puts the `acme_*` keys inside `aps`), plus, with ``legacyExtras``, `acme_screen`
///   and `sound` inside `aps`;
/// - legacy Android (FCM v1): `data` = `msg`, `eid`, `userid`, `params` (a JSON string of
///   `[{"name":…,"value":…}]`: FCM data values are strings), plus, with ``legacyExtras``,
///   `screen` and `channel`; always data-only, with `android` (`priority`, `ttl`);
/// - modern Apple: `aps` with `alert` (`title`/`body`, or `title`/`loc-key`/`loc-args`),
///   `sound`, `badge`, `thread-id` (the tag), `category`, `mutable-content` (private events);
///   silent events are `{"aps":{"content-available":1}}` background pushes at priority 5;
///   custom keys outside `aps`: `eid`, `userid`, `params` (array of values), `screen`, `dk`,
///   and `pos` (the device's notification position, seed 002) when known;
/// - modern Android (FCM v1): `data` (`eid`, `userid`, `params` as a JSON array string,
///   `screen`, `dk`, `pos` when known, `badge` (the unread count, a string) when counted, and
///   `private`/`silent` flags when set), `notification` (`title`, `body`)
///   unless the event is private or silent (then data-only, no text on the wire, and the
///   event's Android channel as `data.channel`), and `android` (`priority`, `ttl`, and on
///   visible messages `notification.sound` and `notification.channel_id`).
///
/// With ``legacyBadge`` the legacy shapes also carry the unread count: `aps.badge` after
/// `alert`, FCM `data.badge` (a string) first. With neither ``legacyBadge`` nor
/// ``legacyExtras`` they are exactly seed 000's.
///
/// A notification without a title (its template has none) has no `title` key: the body alone.
///
/// Both profiles carry the delivery key: as `apns-collapse-id`, and (FCM) as `data.dk`; FCM
/// `android.collapse_key` is set only with ``fcmCollapseKey`` because FCM keeps at most four
/// collapse keys per offline device, so unique keys would drop notifications.
///
/// Size limits: when the payload is too large, the body text (never keys, title or parameters)
/// is shortened at a `Character` boundary and ends with "…"; a binary search over the
/// serialized size finds the longest body that fits. Stateless and `Sendable`.
public struct PayloadBuilder: Sendable {
    public var profile: PayloadProfile
    public var limits: PayloadLimits
    public var apnsAlertStyle: APNsAlertStyle
    /// Set FCM `android.collapse_key` to the delivery key (see the type's documentation).
    public var fcmCollapseKey: Bool
    /// The legacy profile carries the badge too (`aps.badge`; FCM `data.badge`). Off by
    /// default: the apps in the field may not expect it (`worker.legacy_badge`).
    public var legacyBadge: Bool
    /// The legacy profile adds, where seed 000's shapes have room, what the specification asks
    /// for and the apps in the field can ignore (``LegacyExtras``): `aps.sound`, the target
    /// screen (`aps.acme_screen`, FCM `data.screen`) and the Android channel (FCM
    /// `data.channel`). On by default; off gives seed 000's exact bytes
    /// (`worker.legacy_extras`).
    public var legacyExtras: Bool

    public init(
        profile: PayloadProfile, limits: PayloadLimits = .default, apnsAlertStyle: APNsAlertStyle = .text, fcmCollapseKey: Bool = false,
        legacyBadge: Bool = false, legacyExtras: Bool = true
    ) {
        self.profile = profile
        self.limits = limits
        self.apnsAlertStyle = apnsAlertStyle
        self.fcmCollapseKey = fcmCollapseKey
        self.legacyBadge = legacyBadge
        self.legacyExtras = legacyExtras
    }

    /// Whether payloads carry the unread count (so the worker counts it): the modern profile
    /// always, the legacy one with ``legacyBadge``.
    public var carriesBadge: Bool { profile == .modern || legacyBadge }

    /// The payload of `notification` (rendered from `event`) for `target`.
    ///
    /// - Parameters:
    ///   - now: the current time, for `apns-expiration` (now + TTL).
    ///   - badge: the app badge to show (the unread count): APNs `aps.badge`, FCM `data.badge`
    ///     (a string); in the legacy profile only with ``legacyBadge``; never on silent pushes.
    ///   - position: the device's notification-log position (seed 002), so that the app can
    ///     notice a gap and ask for what it missed (modern profile only; the legacy shapes are
    ///     kept exactly as seed 000 has them).
    /// - Throws: ``PayloadError`` when the payload cannot fit or the platforms differ.
    public func build(
        _ notification: RenderedNotification, event: Event, target: PushTarget, deliveryKey: DeliveryKey, now: Date, badge: Int? = nil,
        position: Int64? = nil
    ) throws(PayloadError) -> PushPayload {
        guard notification.platform == target.platform else {
            throw PayloadError(
                code: .platformMismatch, eventId: event.id, platform: target.platform, reason: "notification rendered for \(notification.platform)")
        }
        let metadata = notification.metadata
        let expiration = metadata.timeToLiveSeconds.map { Int(now.timeIntervalSince1970.rounded(.down)) + $0 }
        let legacyBadge = self.legacyBadge ? badge : nil
        let extras = legacyExtras ? LegacyExtras(metadata: metadata, silent: notification.isSilent) : .none
        switch (target.platform, profile) {
        case (.ios, .legacy):
            let options = APNsRequestOptions(
                pushType: .alert, priority: metadata.priority == .high ? 10 : 5, expiration: expiration, collapseId: deliveryKey.rawValue)
            let fast = LegacyPayloadWriter.ios(body: notification.body, event: event, userId: target.userId, badge: legacyBadge, extras: extras)
            if fast.countedSize <= limits.apnsMaxBytes {
                return PushPayload(platform: .ios, profile: .legacy, body: fast.bytes, apns: options, deliveryKey: deliveryKey, wasShortened: false)
            }
            let (json, shortened) = try fit(notification.body, limit: limits.apnsMaxBytes, event: event, platform: .ios) { body in
                var aps: [String: JSONValue] = [
                    "alert": .string(body),
                    "acme_eid": .string(event.id),
                    "acme_userid": .string(target.userId),
                    "acme_params": .array(event.params.map { .object(["name": .string($0.name), "value": .string($0.value)]) }),
                ]
                if let legacyBadge { aps["badge"] = .int(legacyBadge) }
                if let screen = extras.screen { aps["acme_screen"] = .string(screen) }
                if let sound = extras.sound { aps["sound"] = .string(sound) }
                let json = JSONValue.object(["aps": .object(aps)])
                return (json, json.serializedByteCount)
            }
            return PushPayload(platform: .ios, profile: .legacy, json: json, apns: options, deliveryKey: deliveryKey, wasShortened: shortened)

        case (.android, .legacy):
            let fast = LegacyPayloadWriter.android(
                body: notification.body, event: event, userId: target.userId, token: target.token,
                android: androidOptions(metadata: metadata, deliveryKey: deliveryKey, silent: false), badge: legacyBadge, extras: extras
            )
            if fast.countedSize <= limits.fcmMaxBytes {
                return PushPayload(platform: .android, profile: .legacy, body: fast.bytes, apns: nil, deliveryKey: deliveryKey, wasShortened: false)
            }
            let params = JSONValue.array(event.params.map { .object(["name": .string($0.name), "value": .string($0.value)]) }).serializedString()
            let (json, shortened) = try fit(notification.body, limit: limits.fcmMaxBytes, event: event, platform: .android) { body in
                var fields: [String: JSONValue] = [
                    "msg": .string(body),
                    "eid": .string(event.id),
                    "userid": .string(target.userId),
                    "params": .string(params),
                ]
                if let legacyBadge { fields["badge"] = .string(String(legacyBadge)) }
                if let screen = extras.screen { fields["screen"] = .string(screen) }
                if let channel = extras.channel { fields["channel"] = .string(channel) }
                let data = JSONValue.object(fields)
                return (
                    fcmMessage(token: target.token, data: data, notification: nil, metadata: metadata, deliveryKey: deliveryKey, soundInNotification: false),
                    data.serializedByteCount
                )
            }
            return PushPayload(platform: .android, profile: .legacy, json: json, apns: nil, deliveryKey: deliveryKey, wasShortened: shortened)

        case (.ios, .modern):
            var custom: [String: JSONValue] = [
                "eid": .string(event.id),
                "userid": .string(target.userId),
                "params": .array(event.parameterValues.map(JSONValue.string)),
                "dk": .string(deliveryKey.rawValue),
            ]
            if let position { custom["pos"] = .int(Int(position)) }
            if let screen = metadata.targetScreen { custom["screen"] = .string(screen.rawValue) }
            if notification.isSilent {
                custom["aps"] = .object(["content-available": .int(1)])
                let json = JSONValue.object(custom)
                guard json.serializedByteCount <= limits.apnsMaxBytes else { throw tooLarge(event, .ios, json.serializedByteCount, limits.apnsMaxBytes) }
                let options = APNsRequestOptions(pushType: .background, priority: 5, expiration: expiration, collapseId: deliveryKey.rawValue)
                return PushPayload(platform: .ios, profile: .modern, json: json, apns: options, deliveryKey: deliveryKey, wasShortened: false)
            }
            var aps: [String: JSONValue] = [:]
            if let sound = metadata.sound { aps["sound"] = .string(sound) }
            if let badge { aps["badge"] = .int(badge) }
            if let tag = metadata.tag { aps["thread-id"] = .string(tag) }
            if let category = metadata.category { aps["category"] = .string(category) }
            if metadata.isPrivate { aps["mutable-content"] = .int(1) }
            let style = apnsAlertStyle
            let (json, shortened) = try fit(style == .text ? notification.body : "", limit: limits.apnsMaxBytes, event: event, platform: .ios) { body in
                var alert: [String: JSONValue] = [:]
                if !notification.title.isEmpty { alert["title"] = .string(notification.title) }
                switch style {
                case .text:
                    alert["body"] = .string(body)
                case .localizationKey:
                    alert["loc-key"] = .string(event.id)
                    alert["loc-args"] = .array(event.parameterValues.map(JSONValue.string))
                }
                var a = aps
                a["alert"] = .object(alert)
                var all = custom
                all["aps"] = .object(a)
                let json = JSONValue.object(all)
                return (json, json.serializedByteCount)
            }
            let options = APNsRequestOptions(
                pushType: .alert, priority: metadata.priority == .high ? 10 : 5, expiration: expiration, collapseId: deliveryKey.rawValue)
            return PushPayload(platform: .ios, profile: .modern, json: json, apns: options, deliveryKey: deliveryKey, wasShortened: shortened)

        case (.android, .modern):
            var data: [String: JSONValue] = [
                "eid": .string(event.id),
                "userid": .string(target.userId),
                "params": .string(JSONValue.array(event.parameterValues.map(JSONValue.string)).serializedString()),
                "dk": .string(deliveryKey.rawValue),
            ]
            if let position { data["pos"] = .string(String(position)) }
            if let badge, !notification.isSilent { data["badge"] = .string(String(badge)) }
            if let screen = metadata.targetScreen { data["screen"] = .string(screen.rawValue) }
            if metadata.isPrivate { data["private"] = .string("1") }
            if notification.isSilent { data["silent"] = .string("1") }
            let dataOnly = metadata.isPrivate || notification.isSilent
            // A visible message names its channel in `android.notification` (``fcmMessage``); a
            // data-only one, whose notification the app builds, in `data`.
            if dataOnly, let channel = metadata.androidChannel { data["channel"] = .string(channel) }
            let dataValue = JSONValue.object(data)
            if dataOnly {
                let size = dataValue.serializedByteCount
                guard size <= limits.fcmMaxBytes else { throw tooLarge(event, .android, size, limits.fcmMaxBytes) }
                let json = fcmMessage(
                    token: target.token, data: dataValue, notification: nil, metadata: metadata, deliveryKey: deliveryKey, soundInNotification: false,
                    silent: notification.isSilent)
                return PushPayload(platform: .android, profile: .modern, json: json, apns: nil, deliveryKey: deliveryKey, wasShortened: false)
            }
            let dataSize = dataValue.serializedByteCount
            let (json, shortened) = try fit(notification.body, limit: limits.fcmMaxBytes, event: event, platform: .android) { body in
                var fields: [String: JSONValue] = ["body": .string(body)]
                if !notification.title.isEmpty { fields["title"] = .string(notification.title) }
                let note = JSONValue.object(fields)
                return (
                    fcmMessage(
                        token: target.token, data: dataValue, notification: note, metadata: metadata, deliveryKey: deliveryKey, soundInNotification: true),
                    dataSize + note.serializedByteCount
                )
            }
            return PushPayload(platform: .android, profile: .modern, json: json, apns: nil, deliveryKey: deliveryKey, wasShortened: shortened)
        }
    }

    /// `{"message":{"token":…,"data":…,"notification":…,"android":{…}}}`; with
    /// `soundInNotification` (visible messages), `android.notification` has the event's `sound`
    /// and `channel_id`.
    private func fcmMessage(
        token: String, data: JSONValue, notification: JSONValue?, metadata: EventMetadata, deliveryKey: DeliveryKey,
        soundInNotification: Bool, silent: Bool = false
    ) -> JSONValue {
        var android: [String: JSONValue] = [:]
        for (key, value) in androidOptions(metadata: metadata, deliveryKey: deliveryKey, silent: silent).members { android[key] = .string(value) }
        if soundInNotification {
            var fields: [String: JSONValue] = [:]
            if let sound = metadata.sound { fields["sound"] = .string(sound) }
            if let channel = metadata.androidChannel { fields["channel_id"] = .string(channel) }
            if !fields.isEmpty { android["notification"] = .object(fields) }
        }
        var message: [String: JSONValue] = ["token": .string(token), "data": data, "android": .object(android)]
        if let notification { message["notification"] = notification }
        return .object(["message": .object(message)])
    }

    private func androidOptions(metadata: EventMetadata, deliveryKey: DeliveryKey, silent: Bool) -> AndroidOptions {
        AndroidOptions(metadata: metadata, deliveryKey: deliveryKey, silent: silent, collapseKey: fcmCollapseKey)
    }

    private func tooLarge(_ event: Event, _ platform: Platform, _ size: Int, _ limit: Int) -> PayloadError {
        PayloadError(code: .tooLarge, eventId: event.id, platform: platform, reason: "\(size) bytes without any body text, over the limit of \(limit)")
    }

    /// The payload made by `make` with the longest body that keeps the measured size within
    /// `limit`: `body` itself when it fits, otherwise a `Character`-boundary prefix (trailing
    /// whitespace dropped) followed by "…". `make` returns the JSON and the size that counts.
    func fit(
        _ body: String, limit: Int, event: Event, platform: Platform, make: (String) -> (JSONValue, Int)
    ) throws(PayloadError) -> (JSONValue, Bool) {
        let (full, fullSize) = make(body)
        if fullSize <= limit { return (full, false) }
        let characters = Array(body)
        func candidate(_ count: Int) -> String {
            var prefix = characters[..<count]
            while let last = prefix.last, last.isWhitespace { prefix = prefix.dropLast() }
            return String(prefix) + "…"
        }
        var best: JSONValue?
        var low = 0
        var high = characters.count - 1
        while low <= high {
            let mid = (low + high) / 2
            let (json, size) = make(candidate(mid))
            if size <= limit {
                best = json
                low = mid + 1
            } else {
                high = mid - 1
            }
        }
        guard let best else {
            let (_, minimum) = make("…")
            throw PayloadError(
                code: .tooLarge, eventId: event.id, platform: platform, reason: "\(minimum) bytes with the body shortened to \"…\", over the limit of \(limit)")
        }
        return (best, true)
    }
}
