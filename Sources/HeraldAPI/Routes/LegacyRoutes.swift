import HeraldStore
import Hummingbird

/// Seed 000's endpoints, exactly as documented: `POST <base>/Subscribe.ashx` and
/// `POST <base>/Unsubscribe.ashx` with `{"os", "culture", "id", "uri", "tags"}` (field names
/// in any case, as the .NET original read them). Success is `200` with an empty body; a
/// failure is a non-200 status with `{"Error", "ErrorDescription"}`.
struct LegacyRoutes: Sendable {
    let service: DeviceService
    let validator: RequestValidator
    let maxBodyBytes: Int

    static let fields: Set<String> = ["os", "culture", "id", "uri", "tags"]

    func register(on router: Router<APIRequestContext>, basePath: String, authentication: AuthenticationMiddleware) {
        let group = router.group(RouterPath(basePath.isEmpty ? "/" : basePath)).add(middleware: authentication)
        group.post("Subscribe.ashx") { request, context in try await subscribe(request, context) }
        group.post("Unsubscribe.ashx") { request, context in try await unsubscribe(request, context) }
    }

    /// Subscribes the caller on the device with exactly these tags (replacing the previous
    /// ones; none or `[]`: every tag). `uri` `none` keeps the device known without a token.
    func subscribe(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let body = try await JSONBody.read(request, limit: maxBodyBytes, allowed: Self.fields, caseInsensitiveKeys: true)
        let platform = try validator.platform(try body.requiredString("os"), field: "os")
        let registration = DeviceRegistration(
            deviceId: try validator.deviceId(try body.requiredString("id")),
            platform: platform,
            token: try validator.pushToken(try body.requiredString("uri"), platform: platform, field: "uri"),
            culture: try validator.culture(try body.requiredString("culture")),
            userId: identity.userId, zoneId: identity.zoneId, branchId: identity.branchId,
            tags: try validator.tags(try body.strings("tags") ?? [])
        )
        try await service.register(registration, exclusive: false)
        return .ok
    }

    /// Unsubscribes the caller on the device from the given tags, or from everything when the
    /// array is empty or absent. `os`, `uri` and `culture` are checked when present and
    /// otherwise unused. Unsubscribing a device the caller is not on is a success (nothing to do).
    func unsubscribe(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let body = try await JSONBody.read(request, limit: maxBodyBytes, allowed: Self.fields, caseInsensitiveKeys: true)
        let deviceId = try validator.deviceId(try body.requiredString("id"))
        // `uri` must be a string even without `os`; its form depends on the platform.
        let uri = try body.string("uri")
        if let os = try body.string("os") {
            let platform = try validator.platform(os, field: "os")
            if let uri { _ = try validator.pushToken(uri, platform: platform, field: "uri") }
        }
        if let culture = try body.string("culture") { _ = try validator.culture(culture) }
        let tags = try validator.tags(try body.strings("tags") ?? [])
        try await service.unsubscribe(deviceId: deviceId, app: nil, userId: identity.userId, tags: tags)
        return .ok
    }
}
