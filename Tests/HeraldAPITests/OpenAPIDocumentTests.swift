import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Hummingbird
import Testing
import Yams

/// docs/openapi.yaml is kept true: its paths and methods are exactly the router's, its examples
/// match its schemas, and real answers of the API (success and error) match the documented
/// schema of their status.
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    /// The parsed document; immutable after `load()`, so sharing it between tasks is safe.
    struct Document: @unchecked Sendable {
        let root: [String: Any]
        var paths: [String: Any] { root["paths"] as? [String: Any] ?? [:] }
        var validator: SchemaValidator { SchemaValidator(schemas: (root["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]) }
        var responses: [String: Any] { (root["components"] as? [String: Any])?["responses"] as? [String: Any] ?? [:] }

        static func load() throws -> Document {
            let url = TestEnvironment.packageRoot.appendingPathComponent("docs/openapi.yaml")
            let text = try String(contentsOf: url, encoding: .utf8)
            return Document(root: try #require(try Yams.load(yaml: text) as? [String: Any]))
        }

        static let methods = ["get", "put", "post", "delete", "patch", "head", "options"]

        var operations: Set<String> {
            var result: Set<String> = []
            for (path, item) in paths {
                for method in Self.methods where (item as? [String: Any])?[method] != nil { result.insert("\(method.uppercased()) \(path)") }
            }
            return result
        }

        func operation(_ method: String, _ path: String) -> [String: Any]? {
            (paths[path] as? [String: Any])?[method.lowercased()] as? [String: Any]
        }

        /// The response object for a status, with a `$ref` to components resolved.
        func response(_ operation: [String: Any], status: Int) -> [String: Any]? {
            guard var response = (operation["responses"] as? [String: Any])?[String(status)] as? [String: Any] else { return nil }
            if let ref = response["$ref"] as? String, let name = ref.split(separator: "/").last {
                response = responses[String(name)] as? [String: Any] ?? [:]
            }
            return response
        }
    }

    @Test func everyRouteIsDocumentedAndEveryDocumentedPathIsARoute() async throws {
        let document = try Document.load()
        let store = try Store(configuration: StoreConfiguration(databaseURL: TestEnvironment.databaseURL))
        let dependencies = APIDependencies(store: store, authenticator: try await JWTVerifier(configuration: TestTokens.jwtConfiguration))
        var configuration = APIConfiguration(authentication: AuthenticationConfiguration(jwt: TestTokens.jwtConfiguration))
        configuration.admin = AdminConfiguration(token: AdminRoutesTests.adminKey)
        let router = try APIServer.makeRouter(configuration: configuration, dependencies: dependencies)
        let routes = Set(
            router.routes.map { route in
                let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
                return "\(route.method.rawValue) /\(path)"
            })
        #expect(routes.subtracting(document.operations).isEmpty, "routes missing from docs/openapi.yaml")
        #expect(document.operations.subtracting(routes).isEmpty, "documented operations that are not routes")
        #expect(routes.count == 15)
        await store.close()
    }

    @Test func examplesMatchTheirSchemas() throws {
        let document = try Document.load()
        var checked = 0
        func check(_ content: Any?, _ where_: String) {
            guard let media = (content as? [String: Any])?["application/json"] as? [String: Any],
                let schema = media["schema"] as? [String: Any], let example = media["example"]
            else { return }
            let problems = document.validator.validate(JSONNode(yaml: example), against: schema)
            #expect(problems.isEmpty, "\(where_): \(problems)")
            checked += 1
        }
        for (path, item) in document.paths {
            for method in Document.methods {
                guard let operation = document.operation(method, path) else { continue }
                check((operation["requestBody"] as? [String: Any])?["content"], "\(method) \(path) request")
                for status in (operation["responses"] as? [String: Any] ?? [:]).keys {
                    check(document.response(operation, status: Int(status) ?? 0)?["content"], "\(method) \(path) \(status)")
                }
                _ = item
            }
        }
        #expect(checked >= 15)
    }

    /// A session of real requests; every answer's status must be documented for its operation
    /// and its body must match that status' schema.
    @Test func realAnswersMatchTheDocument() async throws {
        let document = try Document.load()
        try await APIFixture.with(configure: { $0.admin = AdminConfiguration(token: AdminRoutesTests.adminKey) }, metrics: { Array("# metrics\n".utf8) }) {
            api in
            let admin = AdminRoutesTests.adminKey
            let user = try await TestTokens.token("u1")
            let apns = PushTokens.apns("doc")
            let steps: [(HTTPRequest.Method, String, String, String?, String?)] = [
                (.post, "/Subscribe.ashx", "/Subscribe.ashx", user, #"{"os":"ios","culture":"ru-ru","id":"doc","uri":"\#(apns)","tags":["account"]}"#),
                (.post, "/Subscribe.ashx", "/Subscribe.ashx", nil, "{}"),
                (.post, "/Subscribe.ashx", "/Subscribe.ashx", user, #"{"os":"ios"}"#),
                (.post, "/Unsubscribe.ashx", "/Unsubscribe.ashx", user, #"{"id":"doc","tags":["t9"]}"#),
                (.put, "/v1/devices/{deviceId}", "/v1/devices/doc2", user, #"{"platform":"ios","token":"\#(apns)","culture":"en-US","tags":["news"]}"#),
                (.put, "/v1/devices/{deviceId}", "/v1/devices/doc2", user, #"{"platform":"ios","token":"\#(apns)","culture":"en-US"}"#),
                (.put, "/v1/devices/{deviceId}", "/v1/devices/doc2", user, #"{"platform":"ios","token":"bad","culture":"en-US"}"#),
                (.get, "/v1/devices/{deviceId}", "/v1/devices/doc2", user, nil),
                (.get, "/v1/devices/{deviceId}", "/v1/devices/nobody", user, nil),
                (.get, "/v1/devices/{deviceId}/notifications", "/v1/devices/doc2/notifications?after=0", user, nil),
                (.post, "/v1/devices/{deviceId}/notifications/resend", "/v1/devices/doc2/notifications/resend", user, #"{"after":0}"#),
                // No body, so no content type: 415 (was undocumented; found by schemathesis).
                (.post, "/v1/devices/{deviceId}/notifications/resend", "/v1/devices/doc2/notifications/resend", user, nil),
                (.put, "/v1/devices/{deviceId}/read", "/v1/devices/doc2/read", user, #"{"position":0}"#),
                (.put, "/v1/devices/{deviceId}/read", "/v1/devices/doc2/read", user, #"{"position":99}"#),
                (.get, "/v1/devices/{deviceId}/notifications", "/v1/devices/doc2/notifications?after=0&markRead=true", user, nil),
                (.get, "/v1/admin/messages/{messageId}", "/v1/admin/messages/doc-m1", admin, nil),
                (.get, "/v1/admin/messages/{messageId}", "/v1/admin/messages/never", admin, nil),
                (.get, "/v1/admin/messages/{messageId}", "/v1/admin/messages/doc-m1", user, nil),
                (.get, "/v1/admin/users/{userId}/deliveries", "/v1/admin/users/u1/deliveries?since=2020-01-01T00:00:00Z", admin, nil),
                (.get, "/v1/admin/users/{userId}/deliveries", "/v1/admin/users/u1/deliveries?since=x", admin, nil),
                (.get, "/v1/me/settings", "/v1/me/settings", user, nil),
                (.put, "/v1/me/settings", "/v1/me/settings", user, #"{"pushesEnabled":false}"#),
                (.delete, "/v1/devices/{deviceId}", "/v1/devices/doc2", user, nil),
                (.get, "/healthz", "/healthz", nil, nil),
                (.get, "/readyz", "/readyz", nil, nil),
                (.get, "/metrics", "/metrics", nil, nil),
            ]
            for (method, template, path, token, body) in steps {
                if template == "/v1/devices/{deviceId}/read", body == #"{"position":0}"# {
                    // Something to read and to look up.
                    try await api.logSent(deviceId: "doc2", user: "u1", count: 1, prefix: "doc-m")
                }
                let reply = try await api.client.send(method, path, token: token, json: body)
                let operation = try #require(document.operation(method.rawValue, template), "\(method) \(template) undocumented")
                let response = document.response(operation, status: reply.status)
                #expect(response != nil, "\(method) \(path) answered \(reply.status), which is not documented")
                guard let content = response?["content"] as? [String: Any] else {
                    #expect(reply.body.isEmpty, "\(method) \(path): undocumented body")
                    continue
                }
                guard let schema = (content["application/json"] as? [String: Any])?["schema"] as? [String: Any] else { continue }
                let problems = document.validator.validate(try JSONNode(json: reply.body), against: schema)
                #expect(problems.isEmpty, "\(method) \(path) \(reply.status): \(problems)")
            }
        }
    }
}
