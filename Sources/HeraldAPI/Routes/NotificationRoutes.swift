import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging
import Metrics

/// `/v1/devices/{deviceId}/notifications`: what a device may have lost (seed 002), and
/// sending it again.
struct NotificationRoutes: Sendable {
    let service: DeviceService
    let store: Store
    let validator: RequestValidator
    let maxBodyBytes: Int
    let planner: ResendPlanner
    let resendHandler: (any ResendHandler)?
    let logger: Logger
    let now: @Sendable () -> Date
    /// ``APIConfiguration/badgeSync``.
    var badgeSync = false

    /// `after` values: up to 2^53, the largest whole number a JSON number (a double) holds
    /// exactly, in the query and the body alike.
    static let positions = 0...(1 << 53)

    func register(on group: RouterGroup<APIRequestContext>) {
        group.get("devices/:deviceId/notifications") { request, context in try await list(request, context) }
        group.post("devices/:deviceId/notifications/resend") { request, context in try await resend(request, context) }
        group.put("devices/:deviceId/read") { request, context in try await read(request, context) }
    }

    /// Body `{"position": N}`: the caller has read the device's notifications up to N (the app
    /// badge counts the pushes after it). Reads only move forward. Answers the read position
    /// kept and the pushes still unread.
    func read(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> JSONResponse {
        let (identity, deviceId, app, position) = try await devicePosition(request, context, field: "position")
        let device = try await service.device(deviceId: deviceId, app: app, userId: identity.userId)
        guard position <= device.nextPosition - 1 else {
            throw APIError(.invalidParameter, "position \(position) is after the device's last notification (\(device.nextPosition - 1))")
        }
        let state = try await markRead(deviceId: deviceId, app: app, userId: identity.userId, position: position)
        return JSONResponse(json: .object(["deviceId": .string(deviceId), "position": .int(state.position), "unread": .int(state.unread)]))
    }

    /// What the read and the resend start with: the caller, the device and app the request names,
    /// and the one position its JSON body must carry in `field`.
    private func devicePosition(
        _ request: Request, _ context: APIRequestContext, field: String
    ) async throws(APIError) -> (identity: Identity, deviceId: String, app: String?, position: Int) {
        let identity = try context.requireIdentity()
        let deviceId = try request.deviceId(context, validator: validator)
        let app = try request.app(validator: validator)
        try request.requireJSONContentType()
        let body = try await JSONBody.read(request, limit: maxBodyBytes, allowed: [field])
        guard let position = try body.int(field, in: Self.positions) else { throw APIError(.missingField, "field '\(field)' is required") }
        return (identity, deviceId, app, position)
    }

    /// `api.badge_sync`: the notifications just read count as read on the user's other devices,
    /// which get a badge-only push. Best effort: a failure is logged, the read stands.
    private func syncBadges(deviceId: String, app: String?, userId: String, after: Int, upTo: Int) async {
        guard let resendHandler, upTo > after else { return }
        do {
            let moved = try await store.devices.propagateRead(deviceId: deviceId, app: app, userId: userId, after: after, upTo: upTo)
            for read in moved {
                let outcome = await resendHandler.send(ResendPlanner.badgePush(read, userId: userId))
                Counter(label: "herald_api_badge_pushes_total", dimensions: [("outcome", Self.label(outcome))]).increment()
            }
        } catch {
            logger.warning("Badge sync failed; the read is kept", metadata: ["herald.device_id": "\(deviceId)", "herald.error": "\(error)"])
        }
    }

    /// Moves the read position (never back) and, with `api.badge_sync`, syncs the user's other
    /// devices for what this read moved.
    private func markRead(deviceId: String, app: String?, userId: String, position: Int) async throws(APIError) -> ReadState {
        let move = try await storeCall { () async throws(StoreError) in
            try await store.devices.markRead(deviceId: deviceId, app: app, userId: userId, position: position)
        }
        guard let move else { throw APIError(.deviceNotFound, "no device with this id is registered for this user") }
        if badgeSync { await syncBadges(deviceId: deviceId, app: app, userId: userId, after: move.previousPosition, upTo: move.state.position) }
        return move.state
    }

    /// `?after=N` (default 0) and `limit` (1…`maxPageSize`, default the maximum). With
    /// `markRead=true` the caller has read what it fetched: up to the last entry of the page, or
    /// the device's last position when the page is the last one (as `PUT …/read`).
    func list(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> NotificationsResponse {
        let identity = try context.requireIdentity()
        let deviceId = try request.deviceId(context, validator: validator)
        let app = try request.app(validator: validator)
        let after = try request.intQuery("after", default: 0, in: Self.positions)
        let limit = try request.intQuery("limit", default: validator.limits.maxPageSize, in: 1...validator.limits.maxPageSize)
        let device = try await service.device(deviceId: deviceId, app: app, userId: identity.userId)
        let entries = try await storeCall { () async throws(StoreError) in
            try await store.notificationLog.entries(deviceId: deviceId, app: app, after: after, limit: limit + 1, visibleTo: identity.userId)
        }
        let page = Array(entries.prefix(limit))
        let lastPosition = max(0, device.nextPosition - 1)
        if request.uri.queryParameters.get("markRead") == "true" {
            let upTo = entries.count > limit ? (page.last?.position ?? after) : lastPosition
            _ = try await markRead(deviceId: deviceId, app: app, userId: identity.userId, position: upTo)
        }
        return NotificationsResponse(deviceId: deviceId, after: after, lastPosition: lastPosition, entries: page, hasMore: entries.count > limit)
    }

    /// Body `{"after": N}`: sends again what the caller missed after N, or one summary push
    /// when that is more than the configured threshold.
    func resend(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> ResendResponse {
        let (identity, deviceId, app, after) = try await devicePosition(request, context, field: "after")
        guard let resendHandler else {
            throw APIError(.resendUnavailable, "this server cannot send pushes; ask again later", retryAfterSeconds: 60)
        }
        let device = try await service.device(deviceId: deviceId, app: app, userId: identity.userId)
        guard let token = device.token, device.tokenState == .active else {
            throw APIError(.deviceNotFound, "the device has no working push token; register it again")
        }
        let missed = try await storeCall { () async throws(StoreError) in
            try await store.notificationLog.count(deviceId: deviceId, app: app, after: after, visibleTo: identity.userId)
        }
        let summarize = missed > planner.configuration.summaryThreshold
        let entries =
            summarize || missed == 0
            ? []
            : try await storeCall { () async throws(StoreError) in
                try await store.notificationLog.entries(
                    deviceId: deviceId, app: app, after: after, limit: planner.configuration.maxEntries, visibleTo: identity.userId)
            }
        let catalog = summarize ? try? await store.templateCache.catalog() : nil
        let unread =
            entries.isEmpty
            ? nil
            : try await storeCall { () async throws(StoreError) in
                try await store.devices.readState(deviceId: deviceId, app: app, userId: identity.userId)?.unread
            }
        let pushes = try planner.pushes(
            for: entries, missed: missed, after: after, device: device, token: token, userId: identity.userId, catalog: catalog, now: now(),
            unread: unread
        )
        var sent = 0
        for push in pushes {
            let outcome = await resendHandler.send(push)
            Counter(label: "herald_api_resend_pushes_total", dimensions: [("outcome", Self.label(outcome))]).increment()
            switch outcome {
            case .sent:
                sent += 1
            case .tokenDead(let reason):
                _ = try? await store.devices.markTokenDead(deviceId: deviceId, app: app, token: token, reason: reason)
                logger.info("Resend: the device token is dead", metadata: [LogKey.deviceId: "\(deviceId)", LogKey.reason: "\(reason)"])
                return ResendResponse(missed: missed, sent: sent, failed: pushes.count - sent, summary: summarize)
            case .retryAfter, .permanentFailure:
                logger.info("Resend: a push was not accepted", metadata: [LogKey.deviceId: "\(deviceId)", LogKey.outcome: "\(outcome)"])
            }
        }
        return ResendResponse(missed: missed, sent: sent, failed: pushes.count - sent, summary: summarize)
    }

    private static func label(_ outcome: DeliveryOutcome) -> String {
        switch outcome {
        case .sent: "sent"
        case .retryAfter: "retry"
        case .tokenDead: "token_dead"
        case .permanentFailure: "failed"
        }
    }
}
