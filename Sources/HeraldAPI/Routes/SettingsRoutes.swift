import HeraldStore
import Hummingbird

/// `/v1/me/settings`: the caller's switch for every push (on by default) and muted tags.
struct SettingsRoutes: Sendable {
    let store: Store
    let validator: RequestValidator
    let maxBodyBytes: Int

    static let fields: Set<String> = ["pushesEnabled", "mutedTags"]

    func register(on group: RouterGroup<APIRequestContext>) {
        group.get("me/settings") { request, context in try await get(request, context) }
        group.put("me/settings") { request, context in try await put(request, context) }
    }

    func get(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> SettingsResponse {
        let identity = try context.requireIdentity()
        return SettingsResponse(try await storeCall { () async throws(StoreError) in try await store.settings.settings(forUser: identity.userId) })
    }

    /// Changes the fields given (at least one); an absent field keeps its value.
    func put(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> SettingsResponse {
        let identity = try context.requireIdentity()
        try request.requireJSONContentType()
        let body = try await JSONBody.read(request, limit: maxBodyBytes, allowed: Self.fields)
        let enabled = try body.bool("pushesEnabled")
        let muted = try body.strings("mutedTags").map { (tags) throws(APIError) in try validator.tags(tags, field: "mutedTags") }
        guard enabled != nil || muted != nil else {
            throw APIError(.missingField, "give 'pushesEnabled', 'mutedTags' or both")
        }
        return SettingsResponse(
            try await storeCall { () async throws(StoreError) in
                try await store.settings.update(userId: identity.userId, pushesEnabled: enabled, mutedTags: muted)
            })
    }
}
