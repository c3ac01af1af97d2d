import Synchronization

/// Dispatches requests of both servers once the sandbox is assembled (the servers start first
/// because the service account's `token_uri` needs the FCM port). Before that, 503.
final class SandboxRouter: Sendable {
    private let sandbox = Mutex<RunningSandbox?>(nil)

    func install(_ running: RunningSandbox) {
        sandbox.withLock { $0 = running }
    }

    func route(_ server: String, _ request: ServerRequest) async -> ServerResponse {
        guard let sandbox = sandbox.withLock({ $0 }) else { return .text("starting\n", status: 503) }
        if request.path.hasPrefix(SandboxAdminRoutes.prefix) {
            return SandboxAdminRoutes(sandbox: sandbox).handle(request)
        }
        if server == "apns" { return await sandbox.apns.handle(request) }
        if request.path == "/token" || request.path.hasPrefix("/token?") { return await sandbox.fcm.oauth.handle(request) }
        return await sandbox.fcm.handle(request)
    }
}
