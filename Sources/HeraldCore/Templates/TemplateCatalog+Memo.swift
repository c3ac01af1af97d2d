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

        /// One table of answers, emptied when full.
        private struct Table<Key: Hashable, Answer> {
            private var answers: [Key: Answer] = [:]

            subscript(key: Key) -> Answer? { answers[key] }

            mutating func store(_ key: Key, _ answer: Answer) {
                if answers.count >= Memo.capacity { answers.removeAll(keepingCapacity: true) }
                answers[key] = answer
            }
        }

        private struct State {
            var resolved = Table<Lookup, Result<Compiled, TemplateError>>()
            var validated = Table<Validation, TemplateError?>()
            var metadata = Table<String, EventMetadata?>()
        }

        static let capacity = 4_096
        private let state = Mutex(State())

        func resolved(_ key: Lookup) -> Result<Compiled, TemplateError>? {
            state.withLock { $0.resolved[key] }
        }

        func store(_ key: Lookup, _ result: Result<Compiled, TemplateError>) {
            state.withLock { $0.resolved.store(key, result) }
        }

        /// `.some(nil)`: no such event; `nil`: not asked yet.
        func metadata(_ eventId: String) -> EventMetadata?? {
            state.withLock { $0.metadata[eventId] }
        }

        func store(_ eventId: String, _ metadata: EventMetadata?) {
            state.withLock { $0.metadata.store(eventId, metadata) }
        }

        /// `.some(nil)`: valid; `.some(error)`: refused; `nil`: not known yet.
        func validated(_ key: Validation) -> TemplateError?? {
            state.withLock { $0.validated[key] }
        }

        func store(_ key: Validation, _ verdict: TemplateError?) {
            state.withLock { $0.validated.store(key, verdict) }
        }
    }
}
