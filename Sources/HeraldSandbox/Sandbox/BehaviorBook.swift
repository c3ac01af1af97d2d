import Foundation
import Synchronization

/// The scripted behaviours and the per-token counters, shared by both stand-ins.
///
/// Thread rules: `Sendable`; every method takes one lock briefly.
public final class BehaviorBook: Sendable {
    private struct State {
        var behaviors: [String: TokenBehavior] = [:]
        var failuresServed: [String: Int] = [:]
        var counters: [String: TokenCounters] = [:]
    }

    /// What the book says about one request, decided atomically.
    enum Verdict: Equatable {
        case accept
        case unregistered
        case throttled(retryAfter: Int)
        case unavailable
    }

    private let state = Mutex(State())

    public init() {}

    /// Sets (or, with nil, clears) the behaviour of `token`.
    public func set(_ behavior: TokenBehavior?, for token: String) {
        state.withLock { state in
            state.behaviors[token] = behavior
            state.failuresServed[token] = nil
        }
    }

    /// Replaces every behaviour.
    public func replaceAll(_ behaviors: [String: TokenBehavior]) {
        state.withLock { state in
            state.behaviors = behaviors
            state.failuresServed = [:]
        }
    }

    public func behavior(for token: String) -> TokenBehavior? {
        state.withLock { $0.behaviors[token] }
    }

    /// The counters of `token` (zero when never seen).
    public func counters(for token: String) -> TokenCounters {
        state.withLock { $0.counters[token] ?? TokenCounters() }
    }

    /// Every token's counters.
    public func allCounters() -> [String: TokenCounters] {
        state.withLock { $0.counters }
    }

    func countRequest(_ token: String) {
        state.withLock { $0.counters[token, default: TokenCounters()].requests += 1 }
    }

    func countAccepted(_ token: String) {
        state.withLock { $0.counters[token, default: TokenCounters()].accepted += 1 }
    }

    func countRejection(_ token: String, reason: String) {
        state.withLock { $0.counters[token, default: TokenCounters()].rejections[reason, default: 0] += 1 }
    }

    /// The scripted verdict for one more request for `token` (counts flaky failures served).
    func verdict(for token: String) -> Verdict {
        state.withLock { state in
            guard let behavior = state.behaviors[token] else { return .accept }
            if behavior.unregistered { return .unregistered }
            if let seconds = behavior.throttleRetryAfter { return .throttled(retryAfter: seconds) }
            let served = state.failuresServed[token, default: 0]
            if served < behavior.failFirst {
                state.failuresServed[token] = served + 1
                return .unavailable
            }
            return .accept
        }
    }

    /// Reads a rules file: `{"tokens": {"<token>": {behaviour}, …}}`.
    ///
    /// - Throws: ``SandboxError`` naming the file when it cannot be read or parsed.
    public static func loadRules(from path: String) throws -> [String: TokenBehavior] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SandboxError(.invalidRules, detail: "cannot read the rules file \(path)")
        }
        struct Rules: Decodable { var tokens: [String: TokenBehavior] }
        do {
            return try JSONDecoder().decode(Rules.self, from: data).tokens
        } catch {
            throw SandboxError(.invalidRules, detail: "\(path) is not a rules file ({\"tokens\": {\"<token>\": {\"unregistered\": true}}}): \(error)")
        }
    }
}
