import Foundation
import Synchronization

/// A provider-wide fault of one stand-in, to imitate an APNs or FCM outage (the fault campaign,
/// docs/reliability.md): a share of the pushes answered with an error status, and every push
/// answered late.
///
/// In the admin endpoint it is JSON: `{"status": 503, "fraction": 0.5, "delay_ms": 2000}`
/// (`status` 500 or 503, or 0 for no errors; `fraction` 0…1, default 1; `delay_ms` 0…600000,
/// default 0). Token behaviours (``TokenBehavior``) are per device; a fault applies to every
/// push of the provider before its other checks, as an outage at Apple's or Google's front end
/// would.
public struct ProviderFault: Sendable, Hashable, Codable {
    /// 500 or 503; 0 answers every push normally (only ``delayMilliseconds`` applies).
    public var status: Int
    /// The share of pushes answered with ``status`` (0…1), chosen at random per push.
    public var fraction: Double
    /// Every push of the provider (failed or not) is answered this much later (milliseconds).
    public var delayMilliseconds: Int

    public init(status: Int = 503, fraction: Double = 1, delayMilliseconds: Int = 0) {
        self.status = status
        self.fraction = fraction
        self.delayMilliseconds = delayMilliseconds
    }

    enum CodingKeys: String, CodingKey {
        case status
        case fraction
        case delayMilliseconds = "delay_ms"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decodeIfPresent(Int.self, forKey: .status) ?? 0
        fraction = try container.decodeIfPresent(Double.self, forKey: .fraction) ?? 1
        delayMilliseconds = try container.decodeIfPresent(Int.self, forKey: .delayMilliseconds) ?? 0
    }

    /// Why the fault cannot be applied, or nil when it can.
    var problem: String? {
        guard [0, 500, 503].contains(status) else { return "status must be 500, 503 or 0" }
        guard fraction >= 0, fraction <= 1 else { return "fraction must be between 0 and 1" }
        guard (0...600_000).contains(delayMilliseconds) else { return "delay_ms must be between 0 and 600000" }
        return nil
    }
}

/// The current fault of one provider, read on every push.
///
/// The check is one relaxed atomic load while no fault is set (the campaign's normal state and
/// every other use of the sandbox); with a fault, one short lock for the fault and a random draw.
///
/// Thread rules: `Sendable`; called concurrently from the servers' event loops.
final class ProviderFaultSwitch: Sendable {
    /// What the fault decides for one push.
    struct Verdict: Equatable {
        /// The error status to answer with instead of the push's own answer, if any.
        var failWith: Int?
        var delay: Duration
    }

    private let armed = Atomic<Bool>(false)
    private let state = Mutex<(fault: ProviderFault?, failed: Int)>((nil, 0))

    /// Sets (nil clears) the fault; applies to pushes that arrive afterwards.
    func set(_ fault: ProviderFault?) {
        state.withLock { $0.fault = fault }
        armed.store(fault != nil, ordering: .relaxed)
    }

    var fault: ProviderFault? { state.withLock { $0.fault } }

    /// Pushes answered with the fault's error status since start.
    var failedPushes: Int { state.withLock { $0.failed } }

    /// Nil when no fault is set (the common case, without taking the lock).
    func verdict() -> Verdict? {
        guard armed.load(ordering: .relaxed) else { return nil }
        return state.withLock { state -> Verdict? in
            guard let fault = state.fault else { return nil }
            let delay = Duration.milliseconds(fault.delayMilliseconds)
            guard fault.status != 0, fault.fraction > 0, fault.fraction >= 1 || Double.random(in: 0..<1) < fault.fraction else {
                return Verdict(failWith: nil, delay: delay)
            }
            state.failed += 1
            return Verdict(failWith: fault.status, delay: delay)
        }
    }
}
