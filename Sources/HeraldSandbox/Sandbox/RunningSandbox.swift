import Foundation
import Logging
import Synchronization

/// The APNs and FCM stand-ins of ``Sandbox/start(_:logger:)``, running: their ports and URLs,
/// the files a worker needs, the scripted behaviours, what was accepted and the counters.
///
/// Thread rules: `Sendable`. Call ``shutdown()`` when done.
public final class RunningSandbox: Sendable {
    public let configuration: SandboxConfiguration
    public let credentials: SandboxCredentials
    public let files: SandboxFiles
    public let apns: APNsStandIn
    public let fcm: FCMStandIn
    /// Scripted token behaviours and per-token counters.
    public let behaviors: BehaviorBook
    /// Accepted pushes.
    public let recorder: SandboxRecorder
    let apnsServer: HTTP2Server
    let fcmServer: HTTP2Server
    private let responseDelayNanoseconds: Atomic<Int>
    /// Provider-wide faults (outages, slow answers) set through the admin endpoint.
    let apnsFault = ProviderFaultSwitch()
    let fcmFault = ProviderFaultSwitch()

    init(
        configuration: SandboxConfiguration, credentials: SandboxCredentials, files: SandboxFiles, apns: APNsStandIn, fcm: FCMStandIn,
        behaviors: BehaviorBook, recorder: SandboxRecorder, apnsServer: HTTP2Server, fcmServer: HTTP2Server
    ) {
        self.configuration = configuration
        self.credentials = credentials
        self.files = files
        self.apns = apns
        self.fcm = fcm
        self.behaviors = behaviors
        self.recorder = recorder
        self.apnsServer = apnsServer
        self.fcmServer = fcmServer
        self.responseDelayNanoseconds = Atomic(Self.nanoseconds(configuration.responseDelay))
    }

    /// How long after it arrived every push is answered (``SandboxConfiguration/responseDelay``);
    /// a change applies to pushes that arrive afterwards.
    public var responseDelay: Duration {
        get { .nanoseconds(responseDelayNanoseconds.load(ordering: .relaxed)) }
        set { responseDelayNanoseconds.store(Self.nanoseconds(newValue), ordering: .relaxed) }
    }

    private static func nanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return Int(clamping: seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue + attoseconds / 1_000_000_000)
    }

    public var apnsPort: Int { apnsServer.port }
    public var fcmPort: Int { fcmServer.port }
    /// `https://localhost:<port>`: the `apns.url` of a worker.
    public var apnsURL: String { "https://localhost:\(apnsPort)" }
    /// `https://localhost:<port>`: the `fcm.url` of a worker.
    public var fcmURL: String { "https://localhost:\(fcmPort)" }
    /// The OAuth2 token endpoint (the service account's `token_uri`).
    public var tokenURI: String { fcmURL + "/token" }

    /// Per-connection counters of the APNs stand-in (streams open at once, requests served).
    public var apnsConnections: ConnectionLedger.Snapshot { apnsServer.ledger.snapshot() }
    /// Per-connection counters of the FCM stand-in (the token endpoint included).
    public var fcmConnections: ConnectionLedger.Snapshot { fcmServer.ledger.snapshot() }

    /// The most recent accepted pushes (``SandboxConfiguration/pushesKeptInMemory``), oldest first.
    public var pushes: [RecordedPush] { recorder.pushes }

    /// Scripts `token` (nil clears it).
    public func setBehavior(_ behavior: TokenBehavior?, for token: String) {
        behaviors.set(behavior, for: token)
    }

    /// Sets (nil clears) a provider-wide fault: an outage answering 500/503 to a share of the
    /// provider's pushes, or slow answers (``ProviderFault``).
    public func setFault(_ fault: ProviderFault?, for provider: RecordedPush.Provider) {
        faultSwitch(provider).set(fault)
    }

    /// The provider's current fault.
    public func fault(of provider: RecordedPush.Provider) -> ProviderFault? {
        faultSwitch(provider).fault
    }

    func faultSwitch(_ provider: RecordedPush.Provider) -> ProviderFaultSwitch {
        provider == .apns ? apnsFault : fcmFault
    }

    /// What the sandbox saw for `token`.
    public func counters(for token: String) -> TokenCounters {
        behaviors.counters(for: token)
    }

    /// Stops both servers (requests in flight are cut off) and closes the record file.
    public func shutdown() async {
        await apnsServer.shutdown()
        await fcmServer.shutdown()
        recorder.finish()
    }

    /// How to use the sandbox, for `herald sandbox` to print.
    public var usage: String {
        """
        herald sandbox: APNs and FCM stand-ins are running (HTTP/2 over TLS).
          APNs   \(apnsURL)   team \(credentials.teamID), key \(credentials.keyID), topics \(configuration.topics.joined(separator: ", "))
          FCM    \(fcmURL)   project \(credentials.projectID), OAuth2 token endpoint \(tokenURI)
          files  \(files.directory.path): ca.pem, \(files.apnsKey.lastPathComponent), service-account.json, herald.yaml
        Point a worker at it:
          herald worker --config \(files.configuration.path)
          (with HERALD_AMQP_URL and HERALD_DATABASE_URL set, or add those keys to the file)
        Script failures for a device token:
          curl --cacert \(files.caCertificate.path) -X PUT -d '{"unregistered":true}' \(apnsURL)/_sandbox/tokens/<token>
          (also {"throttle_retry_after":5}, {"fail_first":2}, {"delay_ms":300}; counters: GET \(apnsURL)/_sandbox/stats)
        Every push is answered \(responseDelay == .zero ? "at once" : "after \(responseDelay)") (--response-delay; PUT {"delay_ms":30} to /_sandbox/response-delay).
        Accepted pushes are recorded\(recorder.file.map { " in \($0)" } ?? " in memory") as JSON lines. Stop with Ctrl-C.
        """
    }

    func statisticsJSON() -> [String: Any] {
        func connections(_ snapshot: ConnectionLedger.Snapshot) -> [[String: Any]] {
            snapshot.connections.map {
                ["id": $0.id, "requests_served": $0.requestsServed, "max_concurrent_streams": $0.maxConcurrentStreams, "open": $0.isOpen]
            }
        }
        var tokens: [String: Any] = [:]
        for (token, counters) in behaviors.allCounters() {
            tokens[token] = ["requests": counters.requests, "accepted": counters.accepted, "rejections": counters.rejections]
        }
        func fault(_ faults: ProviderFaultSwitch) -> [String: Any] {
            var object: [String: Any] = ["failed_pushes": faults.failedPushes]
            if let fault = faults.fault {
                object["fault"] = ["status": fault.status, "fraction": fault.fraction, "delay_ms": fault.delayMilliseconds]
            }
            return object
        }
        return [
            "accepted": recorder.count,
            "faults": ["apns": fault(apnsFault), "fcm": fault(fcmFault)],
            "response_delay_ms": Double(responseDelayNanoseconds.load(ordering: .relaxed)) / 1_000_000,
            "apns": ["provider_tokens_seen": apns.providerTokensSeen, "connections": connections(apnsConnections)],
            "fcm": ["access_tokens_issued": fcm.oauth.accessTokensIssued, "connections": connections(fcmConnections)],
            "tokens": tokens,
        ]
    }
}
