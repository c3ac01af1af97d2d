import Foundation
import JWTKit
import Logging

/// `herald sandbox`: local stand-ins for APNs and FCM (with Google's OAuth2 token endpoint),
/// HTTP/2 over TLS with a generated certificate, that check what the real services check and
/// answer as they do, so that Herald runs end to end without Apple or Google accounts.
///
/// ``start(_:logger:)`` writes (or reuses) the CA certificate, an APNs `.p8` key, a
/// service-account file whose `token_uri` is the sandbox, and a `herald.yaml` pointing a worker
/// at both stand-ins; tests use the returned ``RunningSandbox`` for ports, files, scripted
/// token behaviours, recorded pushes and counters.
public enum Sandbox {
    /// Starts both stand-ins.
    ///
    /// - Throws: ``SandboxError`` when the directory cannot be written or read back, the rules
    ///   file is bad, or a port cannot be bound.
    public static func start(_ configuration: SandboxConfiguration, logger: Logger = Logger(label: "herald.sandbox")) async throws -> RunningSandbox {
        guard !configuration.topics.isEmpty else { throw SandboxError(.invalidFiles, detail: "at least one APNs topic is needed") }
        let (credentials, chain, serverKey) = try SandboxFiles.loadOrCreate(
            in: configuration.directory, projectID: configuration.projectID, certificateTopic: configuration.topics[0]
        )
        let files = SandboxFiles(directory: configuration.directory, keyID: credentials.keyID)
        let behaviors = BehaviorBook()
        if let rules = configuration.rulesFile {
            behaviors.replaceAll(try BehaviorBook.loadRules(from: rules))
        }
        let recorder = try SandboxRecorder(file: configuration.recordFile, memoryLimit: configuration.pushesKeptInMemory)

        let apnsKey: ES256PrivateKey
        let rsaKey: Insecure.RSA.PrivateKey
        do {
            apnsKey = try ES256PrivateKey(pem: credentials.apnsKeyPEM)
            rsaKey = try Insecure.RSA.PrivateKey(pem: credentials.serviceAccountKeyPEM)
        } catch {
            throw SandboxError(
                .invalidFiles, detail: "the keys in \(configuration.directory.path) cannot be read (\(error)); delete the folder to start afresh")
        }
        let caPEM: String
        do {
            caPEM = try String(contentsOf: files.caCertificate, encoding: .utf8)
        } catch {
            throw SandboxError(.invalidFiles, detail: "cannot read \(files.caCertificate.path): \(error)")
        }
        // APNs takes token- and certificate-authenticated clients on the same host.
        var tls = HTTP2ServerConfiguration.TLS(certificateChainPEM: [chain], privateKeyPEM: serverKey, allowHTTP1: true, clientCertificateTrustPEM: caPEM)
        tls.clientCertificateOptional = true
        let router = SandboxRouter()

        func listen(_ port: Int, _ name: String) async throws -> HTTP2Server {
            // libcurl resets every stream whose answer has no body (APNs's 200): not an attack here.
            let server = HTTP2ServerConfiguration(
                host: configuration.host, port: port, tls: tls, maxConcurrentStreams: configuration.maxConcurrentStreams,
                eventLoopThreads: configuration.eventLoopThreads, resetFrameLimit: 10_000_000
            )
            do {
                return try await HTTP2Server.start(configuration: server, logger: logger, responder: { request in router.route(name, request) })
            } catch {
                throw SandboxError(.cannotListen, detail: "cannot listen on \(configuration.host):\(port) for \(name): \(error)")
            }
        }
        let apnsServer = try await listen(configuration.apnsPort, "apns")
        let fcmServer: HTTP2Server
        do {
            fcmServer = try await listen(configuration.fcmPort, "fcm")
        } catch {
            await apnsServer.shutdown()
            throw error
        }
        let tokenURI = "https://localhost:\(fcmServer.port)/token"
        let apns = APNsStandIn(
            topics: configuration.topics, keyID: credentials.keyID, teamID: credentials.teamID, publicKey: apnsKey.publicKey,
            maxPayloadBytes: configuration.maxPayloadBytes, book: behaviors, recorder: recorder, clock: configuration.clock
        )
        let oauth = GoogleOAuthStandIn(
            clientEmail: credentials.clientEmail, privateKeyID: credentials.privateKeyID, audience: tokenURI, publicKey: rsaKey.publicKey,
            accessTokenLifetime: configuration.accessTokenLifetime, clock: configuration.clock
        )
        let fcm = FCMStandIn(
            projectID: credentials.projectID, maxPayloadBytes: configuration.maxPayloadBytes, oauth: oauth, book: behaviors, recorder: recorder,
            clock: configuration.clock)
        let sandbox = RunningSandbox(
            configuration: configuration, credentials: credentials, files: files, apns: apns, fcm: fcm, behaviors: behaviors, recorder: recorder,
            apnsServer: apnsServer, fcmServer: fcmServer
        )
        do {
            try files.writeRunFiles(
                credentials: credentials, topics: configuration.topics, apnsURL: sandbox.apnsURL, fcmURL: sandbox.fcmURL, tokenURI: tokenURI,
                recordFile: configuration.recordFile
            )
        } catch {
            await sandbox.shutdown()
            throw SandboxError(.cannotWriteFiles, detail: "cannot write the run files into \(configuration.directory.path): \(error)")
        }
        router.install(sandbox)
        return sandbox
    }
}
