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
        if server == "apns" { return sandbox.apns.respond(to: request).delayed(by: sandbox.responseDelay) }
        if request.path == "/token" || request.path.hasPrefix("/token?") {
            let oauth = sandbox.fcm.oauth
            return .later { await oauth.handle(request) }
        }
        return sandbox.fcm.respond(to: request).delayed(by: sandbox.responseDelay)
    }
}
