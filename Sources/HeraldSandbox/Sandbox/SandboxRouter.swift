import Foundation
import Synchronization

/// Dispatches requests of both servers once the sandbox is assembled (the servers start first
/// because the service account's `token_uri` needs the FCM port). Before that, 503.
///
/// Pushes (APNs and FCM sends, accepted or not) are answered after the sandbox's response
/// delay, as a real provider answers after its round trip; admin routes and the OAuth2 token
/// endpoint at once.
final class SandboxRouter: Sendable {
    private let sandbox = Mutex<RunningSandbox?>(nil)

    func install(_ running: RunningSandbox) {
        sandbox.withLock { $0 = running }
    }

    func route(_ server: String, _ request: ServerRequest) -> ServerReply {
        guard let sandbox = sandbox.withLock({ $0 }) else { return .now(.text("starting\n", status: 503)) }
        if request.path.hasPrefix(SandboxAdminRoutes.prefix) {
            return .now(SandboxAdminRoutes(sandbox: sandbox).handle(request))
        }
        if server == "apns" {
            guard let fault = sandbox.apnsFault.verdict() else { return sandbox.apns.respond(to: request).delayed(by: sandbox.responseDelay) }
            return Self.apply(fault, .apns) { sandbox.apns.respond(to: request) }.delayed(by: sandbox.responseDelay)
        }
        if request.path == "/token" || request.path.hasPrefix("/token?") {
            let oauth = sandbox.fcm.oauth
            return .later { await oauth.handle(request) }
        }
        guard let fault = sandbox.fcmFault.verdict() else { return sandbox.fcm.respond(to: request).delayed(by: sandbox.responseDelay) }
        return Self.apply(fault, .fcm) { sandbox.fcm.respond(to: request) }.delayed(by: sandbox.responseDelay)
    }

    /// A push under a provider-wide fault: the provider's own error answer (nothing recorded or
    /// counted per token, as the push never reached the provider's checks), or its normal
    /// answer; late either way.
    private static func apply(_ fault: ProviderFaultSwitch.Verdict, _ provider: RecordedPush.Provider, _ respond: () -> ServerReply) -> ServerReply {
        guard let status = fault.failWith else { return respond().delayed(by: fault.delay) }
        let response: ServerResponse
        switch (provider, status) {
        case (.apns, 500):
            response = APNsRejection(500, "InternalServerError").response(apnsID: UUID().uuidString.lowercased(), now: Date())
        case (.apns, _):
            response = APNsRejection(503, "ServiceUnavailable").response(apnsID: UUID().uuidString.lowercased(), now: Date())
        case (.fcm, 500):
            response = GoogleErrorBody.api(status: 500, canonical: "INTERNAL", message: "Internal error encountered.", errorCode: "INTERNAL")
        case (.fcm, _):
            response = GoogleErrorBody.api(status: 503, canonical: "UNAVAILABLE", message: "The service is currently unavailable.", errorCode: "UNAVAILABLE")
        }
        return .now(response, after: fault.delay)
    }
}
