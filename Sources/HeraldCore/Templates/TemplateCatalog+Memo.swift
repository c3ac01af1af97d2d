import Synchronization

extension TemplateCatalog {
    /// What a catalog has looked up before: template resolutions and event metadata by the
    /// exact strings asked for, and default-culture verdicts by event id and parameter count. The catalog is
    /// immutable, so an answer never goes stale; a new catalog (templates changed) starts
    /// empty. Bounded: when full it starts again empty (event ids come from producers).
    /// Thread-safe.
    final class Memo: Sendable {
        struct Lookup: Hashable {
            let eventId: String
            let culture: String
            let platform: Platform
        }

        struct Validation: Hashable {
            let eventId: String
            let parameterCount: Int
        }

        private struct State {
            var resolved: [Lookup: Result<Compiled, TemplateError>] = [:]
            var validated: [Validation: TemplateError?] = [:]
            var metadata: [String: EventMetadata?] = [:]
        }

        static let capacity = 4_096
        private let state = Mutex(State())

        func resolved(_ key: Lookup) -> Result<Compiled, TemplateError>? {
            state.withLock { $0.resolved[key] }
        }

        func store(_ key: Lookup, _ result: Result<Compiled, TemplateError>) {
            state.withLock { state in
                if state.resolved.count >= Self.capacity { state.resolved.removeAll(keepingCapacity: true) }
                state.resolved[key] = result
            }
        }

        /// `.some(nil)`: no such event; `nil`: not asked yet.
        func metadata(_ eventId: String) -> EventMetadata?? {
            state.withLock { $0.metadata[eventId] }
        }

        func store(_ eventId: String, _ metadata: EventMetadata?) {
            state.withLock { state in
                if state.metadata.count >= Self.capacity { state.metadata.removeAll(keepingCapacity: true) }
                state.metadata[eventId] = metadata
            }
        }

        /// `.some(nil)`: valid; `.some(error)`: refused; `nil`: not known yet.
        func validated(_ key: Validation) -> TemplateError?? {
            state.withLock { $0.validated[key] }
        }

        func store(_ key: Validation, _ verdict: TemplateError?) {
            state.withLock { state in
                if state.validated.count >= Self.capacity { state.validated.removeAll(keepingCapacity: true) }
                state.validated[key] = verdict
            }
        }
    }
}
