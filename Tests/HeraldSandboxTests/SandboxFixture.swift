import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import JWTKit

/// A sandbox in a temporary folder with an HTTP/2 client that trusts it, and helpers to build
/// the requests the tests send by hand (so that each check can be broken on purpose).
struct SandboxFixture: Sendable {
    let sandbox: RunningSandbox
    let client: HTTPClient
    let directory: URL
    /// One valid provider token, reused like a real provider does (a new token per request
    /// would be refused as TooManyProviderTokenUpdates).
    var validToken = ""

    static let deviceToken = String(repeating: "ab", count: 32)
    static let topic = "com.example.herald"

    /// Runs `body` with a fresh sandbox and always shuts it down and removes its folder.
    static func with<T: Sendable>(
        topics: [String] = [topic], clock: @escaping @Sendable () -> Date = { Date() }, recordFile: Bool = false, responseDelay: Duration = .zero,
        _ body: (SandboxFixture) async throws -> T
    ) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-sandbox-tests-\(UUID().uuidString)")
        let configuration = SandboxConfiguration(
            directory: directory, recordFile: recordFile ? directory.appendingPathComponent("pushes.jsonl").path : nil, topics: topics,
            responseDelay: responseDelay, clock: clock
        )
        let sandbox = try await Sandbox.start(configuration)
        let client: HTTPClient
        do {
            client = try HTTPClient(configuration: HTTPClientConfiguration(requestTimeout: .seconds(20), tls: .init(caFile: sandbox.files.caCertificate.path)))
        } catch {
            await sandbox.shutdown()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        var fixture = SandboxFixture(sandbox: sandbox, client: client, directory: directory)
        do {
            fixture.validToken = try await fixture.providerToken()
            let result = try await body(fixture)
            await fixture.shutdown()
            return result
        } catch {
            await fixture.shutdown()
            throw error
        }
    }

    func shutdown() async {
        await client.shutdown()
        await sandbox.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: APNs

    /// A provider token; every part can be made wrong.
    func providerToken(
        issuedAt: Date = Date(), keyID: String? = nil, teamID: String? = nil, keyPEM: String? = nil
    ) async throws -> String {
        struct Claims: JWTPayload {
            var iss: String
            var iat: Int
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let keys = JWTKeyCollection()
        let kid = keyID ?? sandbox.credentials.keyID
        await keys.add(ecdsa: try ES256PrivateKey(pem: keyPEM ?? sandbox.credentials.apnsKeyPEM), kid: JWKIdentifier(string: kid))
        var header = JWTHeader()
        header.kid = kid
        return try await keys.sign(
            Claims(iss: teamID ?? sandbox.credentials.teamID, iat: Int(issuedAt.timeIntervalSince1970)), kid: JWKIdentifier(string: kid), header: header
        )
    }

    /// The headers of a valid alert push (bearer token included unless `token` is nil).
    func apnsHeaders(token: String?) -> [(String, String)] {
        var headers: [(String, String)] = [
            ("apns-topic", Self.topic), ("apns-push-type", "alert"), ("apns-priority", "10"), ("apns-expiration", "0"),
            ("apns-collapse-id", "collapse"), ("apns-id", UUID().uuidString.lowercased()),
        ]
        if let token { headers.append(("authorization", "bearer \(token)")) }
        return headers
    }

    static let alertBody = Array(#"{"aps":{"alert":{"title":"Wallet One","body":"Вам поступил перевод"}}}"#.utf8)

    /// Sends an APNs request; `edit` changes the valid headers first.
    func apns(
        method: HTTPRequest.Method = .post, path: String? = nil, device: String = deviceToken, body: [UInt8] = alertBody, token: String? = nil,
        edit: (inout [(String, String)]) -> Void = { _ in }
    ) async throws -> HTTPClientResponse {
        var headers = apnsHeaders(token: token ?? validToken)
        edit(&headers)
        let url = sandbox.apnsURL + (path ?? "/3/device/\(device)")
        return try await client.execute(HTTPClientRequest(method: method, url: url, headerFields: fields(headers), body: body))
    }

    // MARK: FCM

    /// A service-account assertion; every claim can be made wrong.
    func assertion(
        issuedAt: Date = Date(), lifetime: Int = 3600, issuer: String? = nil, audience: String? = nil,
        scope: String = "https://www.googleapis.com/auth/firebase.messaging", keyPEM: String? = nil, keyID: String? = nil
    ) async throws -> String {
        struct Claims: JWTPayload {
            var iss: String
            var scope: String
            var aud: String
            var iat: Int
            var exp: Int
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let keys = JWTKeyCollection()
        let kid = keyID ?? sandbox.credentials.privateKeyID
        await keys.add(
            rsa: try Insecure.RSA.PrivateKey(pem: keyPEM ?? sandbox.credentials.serviceAccountKeyPEM), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid)
        )
        let iat = Int(issuedAt.timeIntervalSince1970)
        var header = JWTHeader()
        header.kid = kid
        return try await keys.sign(
            Claims(iss: issuer ?? sandbox.credentials.clientEmail, scope: scope, aud: audience ?? sandbox.tokenURI, iat: iat, exp: iat + lifetime),
            kid: JWKIdentifier(string: kid), header: header
        )
    }

    /// Posts a token request with `form` as the body.
    func tokenRequest(form: String) async throws -> HTTPClientResponse {
        try await client.execute(
            HTTPClientRequest(method: .post, url: sandbox.tokenURI, headerFields: [.contentType: "application/x-www-form-urlencoded"], body: Array(form.utf8))
        )
    }

    /// A fresh access token from the sandbox's token endpoint.
    func accessToken() async throws -> String {
        let assertion = try await assertion()
        let response = try await tokenRequest(form: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)")
        guard let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], let token = object["access_token"] as? String else {
            throw TestFailure("no access token: \(response.status) \(response.bodyText)")
        }
        return token
    }

    /// Sends an FCM request with a JSON body.
    func fcm(json: String, accessToken: String?, project: String? = nil) async throws -> HTTPClientResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let accessToken { headers.append(HTTPField(name: .authorization, value: "Bearer \(accessToken)")) }
        let url = sandbox.fcmURL + "/v1/projects/\(project ?? sandbox.credentials.projectID)/messages:send"
        return try await client.execute(HTTPClientRequest(method: .post, url: url, headerFields: headers, body: Array(json.utf8)))
    }

    static func message(token: String = "fcm-token:abc_DEF-123", extra: String = "") -> String {
        #"{"message":{"token":"\#(token)","data":{"eid":"TransferIssued","msg":"hi"},"notification":{"title":"Wallet One","body":"hi"},"android":{"priority":"HIGH","ttl":"3600s"}\#(extra)}}"#
    }
}

/// Header fields from name/value pairs, in order (names must be HTTP tokens).
func fields(_ pairs: [(String, String)]) -> HTTPFields {
    HTTPFields(pairs.map { HTTPField(name: HTTPField.Name($0.0)!, value: $0.1) })
}

extension HTTPFields {
    /// Test shorthand: the first value of `name`.
    subscript(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { self[$0] }
    }
}

/// The JSON object of a response body.
func jsonObject(_ response: HTTPClientResponse) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
}

/// APNs's `reason`.
func reason(_ response: HTTPClientResponse) -> String? {
    jsonObject(response)?["reason"] as? String
}

/// FCM's `error.status` and FcmError `errorCode`.
func googleError(_ response: HTTPClientResponse) -> (status: String?, errorCode: String?, field: String?) {
    let error = jsonObject(response)?["error"] as? [String: Any]
    let details = error?["details"] as? [[String: Any]] ?? []
    let code = details.compactMap { $0["errorCode"] as? String }.first
    let field = details.compactMap { ($0["fieldViolations"] as? [[String: Any]])?.first?["field"] as? String }.first
    return (error?["status"] as? String, code, field)
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
