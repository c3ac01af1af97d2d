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

    /// `after` values: up to 2^53, the largest whole number a JSON number (a double) holds
    /// exactly, in the query and the body alike.
    static let positions = 0...(1 << 53)

    func register(on group: RouterGroup<APIRequestContext>) {
        group.get("devices/:deviceId/notifications") { request, context in try await list(request, context) }
        group.post("devices/:deviceId/notifications/resend") { request, context in try await resend(request, context) }
    }

    /// `?after=N` (default 0) and `limit` (1…`maxPageSize`, default the maximum).
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
        return NotificationsResponse(
            deviceId: deviceId, after: after, lastPosition: max(0, device.nextPosition - 1), entries: Array(entries.prefix(limit)),
            hasMore: entries.count > limit
        )
    }

    /// Body `{"after": N}`: sends again what the caller missed after N, or one summary push
    /// when that is more than the configured threshold.
    func resend(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> ResendResponse {
        let identity = try context.requireIdentity()
        let deviceId = try request.deviceId(context, validator: validator)
        let app = try request.app(validator: validator)
        try request.requireJSONContentType()
        let body = try await JSONBody.read(request, limit: maxBodyBytes, allowed: ["after"])
        guard let after = try body.int("after", in: Self.positions) else { throw APIError(.missingField, "field 'after' is required") }
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
        let entries = summarize || missed == 0 ? [] : try await storeCall { () async throws(StoreError) in
            try await store.notificationLog.entries(deviceId: deviceId, app: app, after: after, limit: planner.configuration.maxEntries, visibleTo: identity.userId)
        }
        let catalog = summarize ? try? await store.templateCache.catalog() : nil
        let pushes = try planner.pushes(
            for: entries, missed: missed, after: after, device: device, token: token, userId: identity.userId, catalog: catalog, now: now()
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
