import Dispatch
import Foundation
import FuzzSupport
import HeraldAPI
import HeraldCore
import HeraldPostgres
import HeraldStore
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import Synchronization

/// Request bodies of the REST API, through the public router (`APIServer.makeRouter`) and its
/// responder, over a real scratch database: every body the routes read is answered, and never
/// with a 5xx. Going through the routes, not one parser type, keeps this target right whatever
/// parses JSON inside HeraldAPI.
///
/// The first byte picks the route (`'0'`…`'4'`, see ``routes``); the rest is the body. Needs
/// `HERALD_FUZZ_DATABASE_URL`: a database this target may migrate and fill (`scripts/fuzz.sh`
/// creates and drops one).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPIBody(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let route = routes[Int(data[0] &- UInt8(ascii: "0")) % routes.count]
    let body = ByteBuffer(bytes: UnsafeBufferPointer(start: data + 1, count: count - 1))
    let status = APIRunner.shared.send(method: route.method, path: route.path, body: body)
    FuzzCheck.require(status < 500, "\(route.method) \(route.path) answered \(status)")
    return 0
}

/// The routes that read a JSON body, for one user and one device.
let routes: [(method: HTTPRequest.Method, path: String)] = [
    (.put, "/v1/devices/fuzz-device"),
    (.put, "/v1/me/settings"),
    (.post, "/Subscribe.ashx"),
    (.post, "/Unsubscribe.ashx"),
    (.post, "/v1/devices/fuzz-device/notifications/resend"),
]

/// Every token is the same user: authentication is not what this target tests.
struct FixedUser: Authenticator {
    func authenticate(bearer token: String) async throws(APIError) -> Identity { Identity(userId: "fuzz-user") }
}

/// The router's responder, called from the synchronous fuzz entry point: each input runs in a
/// task and the entry point waits for its status. One channel serves every request context (a
/// channel per request, as HummingbirdTesting makes, is never freed).
final class APIRunner: Sendable {
    static let shared = APIRunner()
    private let responder: RouterResponder<APIRequestContext>
    private let channel = NIOAsyncTestingChannel()
    private let logger = Logger(label: "fuzz")

    private init() {
        guard let url = ProcessInfo.processInfo.environment["HERALD_FUZZ_DATABASE_URL"] else {
            fatalError("set HERALD_FUZZ_DATABASE_URL to a scratch database (scripts/fuzz.sh does)")
        }
        responder = APIRunner.wait { () async throws -> RouterResponder<APIRequestContext> in
            let store = try Store(configuration: StoreConfiguration(databaseURL: url))
            try await store.migrate()
            var configuration = APIConfiguration(
                authentication: AuthenticationConfiguration(jwt: JWTConfiguration(key: .hs256(secret: Array(repeating: 7, count: 32))))
            )
            configuration.rateLimit = nil
            let router = try APIServer.makeRouter(
                configuration: configuration,
                dependencies: APIDependencies(store: store, authenticator: FixedUser(), resendHandler: NoResend())
            )
            return router.buildResponder()
        }
    }

    /// Sends one request and returns its status.
    func send(method: HTTPRequest.Method, path: String, body: ByteBuffer) -> Int {
        let head = HTTPRequest(
            method: method, scheme: "http", authority: "127.0.0.1", path: path,
            headerFields: [.contentType: "application/json", .authorization: "Bearer fuzz"]
        )
        let context = APIRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
        return APIRunner.wait { [responder] () async throws -> Int in
            do {
                return try await responder.respond(to: Request(head: head, body: RequestBody(buffer: body)), context: context).status.code
            } catch let error as any HTTPResponseError {
                return error.status.code
            }
        }
    }

    /// Runs `body` in a task and blocks this (libFuzzer's) thread until it returns.
    private static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> T {
        let result = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let value = try await body()
                result.withLock { $0 = .success(value) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        switch result.withLock({ $0 })! {
        case .success(let value): return value
        case .failure(let error): fatalError("the API failed: \(error)")
        }
    }
}

/// Resends are answered as sent without sending anything.
struct NoResend: ResendHandler {
    func send(_ push: ResendPush) async -> DeliveryOutcome { .sent }
}
