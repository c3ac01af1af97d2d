import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTesting
import Hummingbird
import HummingbirdTesting
import Synchronization

/// An in-process API over a migrated store on a fresh database (dropped afterwards), tested
/// through HummingbirdTesting's router framework (no socket).
struct APIFixture: Sendable {
    let store: Store
    let client: APIClient
    let database: TestDatabase
    let resends: RecordingResendHandler

    static func with<T: Sendable>(
        configure: (inout APIConfiguration) -> Void = { _ in },
        authenticator: (any Authenticator)? = nil,
        resendHandler: Bool = true,
        readinessChecks: [String: APIDependencies.ReadinessCheck] = [:],
        metrics: (@Sendable () -> [UInt8])? = nil,
        _ body: @escaping @Sendable (APIFixture) async throws -> T
    ) async throws -> T {
        try await TestStore.with { store, database in
            var configuration = APIConfiguration(authentication: AuthenticationConfiguration(jwt: TestTokens.jwtConfiguration))
            configuration.rateLimit = nil
            configure(&configuration)
            let resends = RecordingResendHandler()
            let checker: any Authenticator
            if let authenticator { checker = authenticator } else { checker = try await JWTVerifier(configuration: TestTokens.jwtConfiguration) }
            let dependencies = APIDependencies(
                store: store, authenticator: checker,
                readinessChecks: readinessChecks, metrics: metrics, resendHandler: resendHandler ? resends : nil
            )
            let router = try APIServer.makeRouter(configuration: configuration, dependencies: dependencies)
            return try await Application(router: router).test(.router) { client in
                try await body(APIFixture(store: store, client: APIClient(client), database: database, resends: resends))
            }
        }
    }

    /// Notifications "sent" to a device, as the worker records them: claimed, then recorded
    /// sent with their payloads (positions follow the device's numbering).
    func logSent(deviceId: String, user: String, count: Int, app: String? = nil, prefix: String = "m") async throws {
        try await JournalSeed.record(
            store, deviceId: deviceId, app: app, userId: user, messageKeys: (1...count).map { "\(prefix)\($0)" },
            payload: { n in
                #"{"aps":{"alert":"push \#(n)","acme_eid":"TransferIssued","acme_userid":"\#(user)","acme_params":[]}}"#
            })
    }
}

/// A resend handler that records what it was asked to send and answers a scripted outcome.
final class RecordingResendHandler: ResendHandler {
    private let state = Mutex<(pushes: [PushDelivery], outcome: DeliveryOutcome)>(([], .sent))

    func send(_ push: PushDelivery) async -> DeliveryOutcome {
        state.withLock { state in
            state.pushes.append(push)
            return state.outcome
        }
    }

    var pushes: [PushDelivery] { state.withLock { $0.pushes } }

    func answer(_ outcome: DeliveryOutcome) { state.withLock { $0.outcome = outcome } }
}
