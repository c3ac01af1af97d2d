import Foundation
import NIOCore

/// How ``Sandbox/start(_:logger:)`` runs the APNs and FCM stand-ins.
public struct SandboxConfiguration: Sendable {
    /// Where the certificate, keys, service-account file, `herald.yaml` and `sandbox.json` are
    /// written (and read back on the next start, so a configured worker keeps working).
    public var directory: URL
    /// The address both servers listen on. Loopback only by default.
    public var host: String
    /// APNs stand-in port; 0 picks a free one.
    public var apnsPort: Int
    /// FCM (and OAuth2 token endpoint) stand-in port; 0 picks a free one.
    public var fcmPort: Int
    /// Append every accepted push as a JSON line to this file (nil: memory only).
    public var recordFile: String?
    /// The most recent accepted pushes kept in memory for ``RunningSandbox/pushes`` (tests read
    /// them there). `herald sandbox` keeps none: its record file holds every push, and a
    /// growing in-memory list cost it page faults on every new page under load.
    public var pushesKeptInMemory: Int
    /// A rules file (`{"tokens": {"<token>": {behaviour}}}`) loaded at start.
    public var rulesFile: String?
    /// The bundle ids (APNs topics) the sandbox's team may push to; the first is the default.
    public var topics: [String]
    /// The Firebase project id of the generated service account.
    public var projectID: String
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` each server announces.
    public var maxConcurrentStreams: Int
    /// Event-loop threads of each server (APNs, FCM). A connection stays on one thread, so
    /// clients with several connections (HeraldHTTP opens two per host) use them all.
    public var eventLoopThreads: Int
    /// Payload limit of both stand-ins (Apple's and Google's 4096 bytes).
    public var maxPayloadBytes: Int
    /// Lifetime of issued OAuth2 access tokens, seconds (Google: 3599).
    public var accessTokenLifetime: Int
    /// Every push (APNs and FCM send) is answered this long after it arrived, as a real
    /// provider answers after its round trip (Apple's and Google's are tens of milliseconds);
    /// zero answers at once. A timer per answer, not a task: any number can wait at once.
    /// Changed while running with ``RunningSandbox/responseDelay`` or `PUT /_sandbox/response-delay`.
    public var responseDelay: Duration
    /// The wall clock the checks read (provider-token age, access-token expiry); tests may share
    /// one with the senders' injectable clock.
    public var clock: @Sendable () -> Date

    public init(
        directory: URL, host: String = "127.0.0.1", apnsPort: Int = 0, fcmPort: Int = 0, recordFile: String? = nil, pushesKeptInMemory: Int = 100_000,
        rulesFile: String? = nil, topics: [String] = ["com.example.herald"], projectID: String = "herald-sandbox", maxConcurrentStreams: Int = 1000,
        maxPayloadBytes: Int = 4096, accessTokenLifetime: Int = 3599, responseDelay: Duration = .zero, eventLoopThreads: Int = System.coreCount,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.directory = directory
        self.host = host
        self.apnsPort = apnsPort
        self.fcmPort = fcmPort
        self.recordFile = recordFile
        self.pushesKeptInMemory = max(0, pushesKeptInMemory)
        self.rulesFile = rulesFile
        self.topics = topics
        self.projectID = projectID
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxPayloadBytes = maxPayloadBytes
        self.accessTokenLifetime = accessTokenLifetime
        self.responseDelay = responseDelay
        self.eventLoopThreads = max(1, eventLoopThreads)
        self.clock = clock
    }
}
