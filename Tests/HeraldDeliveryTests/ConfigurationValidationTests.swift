import Crypto
import Foundation
import HeraldDelivery
import HeraldHTTP
import HeraldSandbox
import Testing

/// A wrong key, a wrong team id, a truncated service-account file, an expired certificate:
/// building the sender fails with a message that names the file and the problem.
@Suite struct ConfigurationValidationTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-credentials-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    func apns(keyFile: String, keyID: String = "ABCDE12345", teamID: String = "TEAM123456") -> APNsConfiguration {
        .token(topics: ["com.example.herald"], keyFile: keyFile, keyID: keyID, teamID: teamID)
    }

    /// The fields of a good service-account file for project `herald-test`.
    func serviceAccount() throws -> [String: Any] {
        let credentials = try SandboxCredentials.generate(projectID: "herald-test")
        return [
            "type": "service_account", "project_id": "herald-test", "private_key_id": "abc", "private_key": credentials.serviceAccountKeyPEM,
            "client_email": "sender@herald-test.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token",
        ]
    }

    func expectError(
        _ code: SenderConfigurationError.Code, mentioning words: [String], sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) {
        do {
            try body()
            Issue.record("no error", sourceLocation: sourceLocation)
        } catch {
            guard let error = error as? SenderConfigurationError else {
                Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
                return
            }
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            for word in words {
                #expect(error.description.contains(word), "\(error.description) lacks \(word)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func aGoodKeyPasses() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = try write("AuthKey_ABCDE12345.p8", P256.Signing.PrivateKey().pemRepresentation)
        try apns(keyFile: key).validate()
    }

    @Test func wrongKeysNameTheFileAndTheProblem() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let rsa = try write("rsa.p8", try SandboxCredentials.generate(projectID: "p").serviceAccountKeyPEM)
        expectError(.wrongKeyType, mentioning: [rsa, "not a P-256", "RSA"]) { try apns(keyFile: rsa).validate() }

        let certificate = try write("cert.p8", try SelfSignedCertificate.generate().ca.certificatePEM)
        expectError(.wrongKeyType, mentioning: [certificate, "CERTIFICATE"]) { try apns(keyFile: certificate).validate() }

        let garbage = try write("garbage.p8", "this is not a key\n")
        expectError(.notPEM, mentioning: [garbage, "not a PEM file"]) { try apns(keyFile: garbage).validate() }

        let missing = folder.appendingPathComponent("missing.p8").path
        expectError(.fileMissing, mentioning: [missing, "does not exist"]) { try apns(keyFile: missing).validate() }

        let good = try write("good.p8", P256.Signing.PrivateKey().pemRepresentation)
        expectError(.invalidIdentifier, mentioning: [good, "team id", "'ABC'", "10-character"]) { try apns(keyFile: good, teamID: "ABC").validate() }
        expectError(.invalidIdentifier, mentioning: ["key id", "lowercase12"]) { try apns(keyFile: good, keyID: "lowercase12").validate() }
        expectError(.invalidValue, mentioning: ["no APNs app"]) { try APNsConfiguration(apps: []).validate() }
    }

    @Test func brokenServiceAccountsNameTheFileAndTheField() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let account = try serviceAccount()
        let text = String(decoding: try JSONSerialization.data(withJSONObject: account, options: [.sortedKeys]), as: UTF8.self)
        let good = try write("good.json", text)
        try FCMConfiguration.serviceAccounts([good]).validate()

        let truncated = try write("truncated.json", String(text.prefix(text.count / 2)))
        expectError(.invalidServiceAccount, mentioning: [truncated, "not valid JSON", "truncated"]) {
            try FCMConfiguration.serviceAccounts([truncated]).validate()
        }

        var noEmail = account
        noEmail["client_email"] = nil
        let missingEmail = try write("no-email.json", String(decoding: try JSONSerialization.data(withJSONObject: noEmail), as: UTF8.self))
        expectError(.missingField, mentioning: [missingEmail, "client_email"]) { try FCMConfiguration.serviceAccounts([missingEmail]).validate() }

        var ecKey = account
        ecKey["private_key"] = P256.Signing.PrivateKey().pemRepresentation
        let wrongKey = try write("ec.json", String(decoding: try JSONSerialization.data(withJSONObject: ecKey), as: UTF8.self))
        expectError(.wrongKeyType, mentioning: [wrongKey, "private_key", "not an RSA private key"]) {
            try FCMConfiguration.serviceAccounts([wrongKey]).validate()
        }

        var user = account
        user["type"] = "authorized_user"
        let notService = try write("user.json", String(decoding: try JSONSerialization.data(withJSONObject: user), as: UTF8.self))
        expectError(.invalidServiceAccount, mentioning: [notService, "authorized_user"]) { try FCMConfiguration.serviceAccounts([notService]).validate() }

        let copy = try write("copy.json", text)
        expectError(.invalidValue, mentioning: [copy, "herald-test", "already configured"]) { try FCMConfiguration.serviceAccounts([good, copy]).validate() }
        expectError(.fileMissing, mentioning: ["/nonexistent/sa.json"]) { try FCMConfiguration.serviceAccounts(["/nonexistent/sa.json"]).validate() }

        // The sender refuses to start with the same error.
        do {
            _ = try FCMSender(configuration: .serviceAccounts([truncated]))
            Issue.record("the sender started")
        } catch {
            #expect(error.file == truncated)
        }
    }

    /// The base URL, the in-flight bound and the HTTP client's files are checked alike for both
    /// providers, and each error names the provider's own setting.
    @Test func badConnectionSettingsNameTheProvidersSetting() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = try write("AuthKey_ABCDE12345.p8", P256.Signing.PrivateKey().pemRepresentation)
        let account = try write("sa.json", String(decoding: try JSONSerialization.data(withJSONObject: try serviceAccount()), as: UTF8.self))
        var apns = apns(keyFile: key)
        var fcm = FCMConfiguration.serviceAccounts([account])
        apns.baseURL = "https://127.0.0.1:8443//"
        fcm.baseURL = "http://127.0.0.1:8444/"
        try apns.validate()
        try fcm.validate()
        #expect(apns.effectiveBaseURL == "https://127.0.0.1:8443")
        #expect(fcm.effectiveBaseURL == "http://127.0.0.1:8444")

        for url in ["ftp://127.0.0.1", "https://127.0.0.1/3/device", "127.0.0.1:8443"] {
            var badAPNs = apns
            badAPNs.baseURL = url
            expectError(.invalidValue, mentioning: ["apns.url", url, "not a base URL"]) { try badAPNs.validate() }
            var badFCM = fcm
            badFCM.baseURL = url
            expectError(.invalidValue, mentioning: ["fcm.url", url, "not a base URL"]) { try badFCM.validate() }
        }

        var idle = fcm
        idle.maxInFlight = 0
        expectError(.invalidValue, mentioning: ["maxInFlight", "at least 1"]) { try idle.validate() }

        let missingCA = folder.appendingPathComponent("missing-ca.pem").path
        var noCA = apns
        noCA.http.tls.caFile = missingCA
        expectError(.fileMissing, mentioning: [missingCA, "APNs HTTP client"]) { try noCA.validate() }
        var noFCMCA = fcm
        noFCMCA.http.tls.caFile = missingCA
        expectError(.fileMissing, mentioning: [missingCA, "FCM HTTP client"]) { try noFCMCA.validate() }
    }

    @Test func expiredCertificatesAreRefusedAtStartUp() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        // A CA (and so its client certificate) valid for one day from an hour ago.
        let authority = try SelfSignedCertificate.generate(validity: .seconds(86_400))
        let client = try authority.issueClientCertificate(commonName: "Apple Push Services: com.example.herald", userID: "com.example.herald")
        let certificate = try write("apns-cert.pem", client.certificatePEM)
        let key = try write("apns-key.pem", client.privateKeyPEM)
        let configuration = APNsConfiguration(apps: [APNsApp(topic: "com.example.herald", certificate: .pem(certificateFile: certificate, keyFile: key))])
        try configuration.validate()
        let later = Date().addingTimeInterval(3 * 86_400)
        expectError(.certificateExpired, mentioning: [certificate, "expired", "notAfter"]) { try configuration.validate(now: later) }
        let earlier = Date().addingTimeInterval(-3 * 86_400)
        expectError(.certificateNotYetValid, mentioning: [certificate]) { try configuration.validate(now: earlier) }

        // The same certificate as a password-protected .p12 (made with the openssl tool).
        let p12 = folder.appendingPathComponent("apns.p12").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["pkcs12", "-export", "-in", certificate, "-inkey", key, "-out", p12, "-passout", "pass:secret"]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl pkcs12 -export failed")
        let pkcs12 = APNsConfiguration(apps: [APNsApp(topic: "com.example.herald", certificate: .pkcs12(file: p12, password: "secret"))])
        try pkcs12.validate()
        expectError(.certificateExpired, mentioning: [p12, "expired"]) { try pkcs12.validate(now: later) }
        let wrongPassword = APNsConfiguration(apps: [APNsApp(topic: "com.example.herald", certificate: .pkcs12(file: p12, password: "guess"))])
        expectError(.invalidCertificate, mentioning: [p12, "wrong password"]) { try wrongPassword.validate() }
        #expect(!"\(APNsCertificate.pkcs12(file: p12, password: "secret"))".contains("secret"))
    }
}
