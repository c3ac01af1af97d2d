import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// `/v1/admin/…`: the support desk's questions over HTTP, for operators only (behind
/// ``AdminAuthenticationMiddleware``). The same answers as `herald deliveries show|list`
/// (``HeraldStore/DeliveryLookup``), in the same JSON.
struct AdminRoutes: Sendable {
    let store: Store
    let configuration: AdminConfiguration
    /// The default `since` of a user's deliveries: this long before now.
    static let defaultWindow: TimeInterval = 86_400
    static let maxLimit = 1_000
    let now: @Sendable () -> Date

    func register(on group: RouterGroup<APIRequestContext>) {
        group.get("messages/:messageId") { request, context in try await message(request, context) }
        group.get("users/:userId/deliveries") { request, context in try await deliveries(request, context) }
    }

    /// 404 `message_not_found` when neither a journal row nor a dead letter has the key.
    func message(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> JSONResponse {
        let key = try Self.pathValue(context, "messageId", what: "message id")
        let report = try await storeCall { () async throws(StoreError) in
            try await store.lookup.message(key: key, partitions: configuration.partitions)
        }
        guard !report.isUnknown else {
            throw APIError(.messageNotFound, "no message with this id within the journal's retention, and no dead letter of it")
        }
        return JSONResponse(json: report.json)
    }

    /// `since` (RFC 3339 date-time, default 24 hours ago) and `limit` (1…1000, default 100).
    func deliveries(_ request: Request, _ context: APIRequestContext) async throws(APIError) -> JSONResponse {
        let userId = try Self.pathValue(context, "userId", what: "user id")
        let since: Date
        if let raw = request.uri.queryParameters.get("since") {
            guard let date = try? Date(String(raw), strategy: .iso8601) else {
                throw APIError(.invalidParameter, "query parameter 'since' must be an RFC 3339 date-time such as 2026-11-25T10:00:00Z")
            }
            since = date
        } else {
            since = now().addingTimeInterval(-Self.defaultWindow)
        }
        let limit = try request.intQuery("limit", default: 100, in: 1...Self.maxLimit)
        let report = try await storeCall { () async throws(StoreError) in
            try await store.lookup.deliveries(userId: userId, since: since, limit: limit)
        }
        return JSONResponse(json: report.json)
    }

    /// A path segment, percent-decoded, 1…512 characters without control characters.
    static func pathValue(_ context: APIRequestContext, _ name: String, what: String) throws(APIError) -> String {
        guard let raw = context.parameters.get(name), let value = raw.removingPercentEncoding, !value.isEmpty, value.utf8.count <= 512,
            !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw APIError(.invalidParameter, "the \(what) in the path is not valid")
        }
        return value
    }
}

/// A JSON body written with HeraldCore's writer.
struct JSONResponse: ResponseGenerator, Sendable {
    let json: JSONValue

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: json.serialized()))
        )
    }
}
