import HeraldStore
import Hummingbird

/// `/v1/devices/{deviceId}`: register or refresh (PUT), read (GET), remove (DELETE).
struct DeviceRoutes: Sendable {
    let service: DeviceService
    let validator: RequestValidator
    let maxBodyBytes: Int

    static let fields: Set<String> = ["platform", "token", "culture", "app", "tags", "exclusive"]

    func register(on group: RouterGroup<APIRequestContext>) {
        group.put("devices/:deviceId") { request, context in try await put(request, context) }
        group.get("devices/:deviceId") { request, context in try await get(request, context) }
        group.delete("devices/:deviceId") { request, context in try await delete(request, context) }
    }

    /// Registers the device for the caller, or refreshes its token, culture and tags. `201`
    /// with the device when it is new, `200` otherwise.
    func put(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> EditedResponse<DeviceResponse> {
        let identity = try context.requireIdentity()
        let deviceId = try request.deviceId(context, validator: validator)
        try request.requireJSONContentType()
        let body = try await JSONBody.read(request, limit: maxBodyBytes, allowed: Self.fields)
        let platform = try validator.platform(try body.requiredString("platform"), field: "platform")
        let registration = DeviceRegistration(
            deviceId: deviceId,
            app: try validator.app(try body.string("app")),
            platform: platform,
            token: try validator.pushToken(try body.requiredString("token"), platform: platform, field: "token"),
            culture: try validator.culture(try body.requiredString("culture")),
            userId: identity.userId, zoneId: identity.zoneId, branchId: identity.branchId,
            tags: try validator.tags(try body.strings("tags") ?? [])
        )
        let outcome = try await service.register(registration, exclusive: try body.bool("exclusive") ?? false)
        let device = try await service.device(deviceId: deviceId, app: registration.app, userId: identity.userId)
        return EditedResponse(
            status: outcome == .created ? .created : .ok, response: DeviceResponse(device: device, userId: identity.userId)
        )
    }

    func get(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> DeviceResponse {
        let identity = try context.requireIdentity()
        let deviceId = try request.deviceId(context, validator: validator)
        let device = try await service.device(deviceId: deviceId, app: try request.app(validator: validator), userId: identity.userId)
        return DeviceResponse(device: device, userId: identity.userId)
    }

    /// Removes the caller from the device (and the device, when no one else is on it). `204`.
    func delete(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let deviceId = try request.deviceId(context, validator: validator)
        try await service.delete(deviceId: deviceId, app: try request.app(validator: validator), userId: identity.userId)
        return .noContent
    }
}
