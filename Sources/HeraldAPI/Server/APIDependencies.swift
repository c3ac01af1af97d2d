import Foundation
import HeraldStore
import Logging

/// What the routes work with, passed in by whoever starts the API (`herald api`, `herald
/// serve`, tests). HeraldAPI creates none of it and closes none of it.
public struct APIDependencies: Sendable {
    /// A readiness check of something the process needs (the broker): it throws when that is
    /// unreachable. `/readyz` runs each with a 2-second limit, after the database check.
    public typealias ReadinessCheck = @Sendable () async throws -> Void

    /// Started (or at least created) by the caller; the API only reads and writes through it.
    public var store: Store
    public var authenticator: any Authenticator
    /// Named checks for `/readyz` besides the database (e.g. `"broker"`).
    public var readinessChecks: [String: ReadinessCheck]
    /// Renders the Prometheus exposition for `/metrics`; `nil`: the route answers 404.
    public var metrics: (@Sendable () -> [UInt8])?
    /// Sends pushes again; `nil`: `…/notifications/resend` answers 503.
    public var resendHandler: (any ResendHandler)?
    public var logger: Logger
    /// The wall clock (JWT times are checked by the authenticator's own clock).
    public var now: @Sendable () -> Date

    public init(
        store: Store, authenticator: any Authenticator, readinessChecks: [String: ReadinessCheck] = [:],
        metrics: (@Sendable () -> [UInt8])? = nil, resendHandler: (any ResendHandler)? = nil,
        logger: Logger = Logger(label: "herald.api"), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.authenticator = authenticator
        self.readinessChecks = readinessChecks
        self.metrics = metrics
        self.resendHandler = resendHandler
        self.logger = logger
        self.now = now
    }
}
