import Foundation
import HeraldCore
import Synchronization

/// Every template in memory, as one HeraldCore ``HeraldCore/TemplateCatalog``, so that
/// rendering never queries the database.
///
/// Loaded on first use (``catalog()``) and reloaded by ``StoreChangeListener`` on every
/// `herald_templates` notification and after the listener reconnects (changes may have been
/// missed). While the database is unreachable the last catalog keeps serving. Reloads are
/// ordered by when they started: a reload that started earlier never replaces the result of
/// one that started later.
///
/// Thread-safe (a `Mutex`); share one instance. Throws ``StoreError`` from loads.
public final class TemplateCache: Sendable {
    /// Loads every template (``TemplateRepository/catalog(defaultCulture:)``).
    public typealias Loader = @Sendable () async throws(StoreError) -> TemplateCatalog

    private let loader: Loader
    private let state = Mutex(State())

    struct State {
        var catalog: TemplateCatalog?
        var loadedAt: Date?
        /// Reloads are numbered as they start; the catalog installed came from `installed`.
        var started: UInt64 = 0
        var installed: UInt64 = 0
    }

    public init(loader: @escaping Loader) {
        self.loader = loader
    }

    /// The cached catalog, loading it first if there is none yet.
    public func catalog() async throws(StoreError) -> TemplateCatalog {
        if let catalog = current { return catalog }
        return try await reload()
    }

    /// The cached catalog without waiting, or `nil` before the first load.
    public var current: TemplateCatalog? { state.withLock { $0.catalog } }

    /// When the cached catalog was loaded.
    public var loadedAt: Date? { state.withLock { $0.loadedAt } }

    /// Loads the templates now and installs them unless a later reload already has; returns
    /// the catalog installed afterwards.
    @discardableResult
    public func reload() async throws(StoreError) -> TemplateCatalog {
        let ticket = state.withLock { state in
            state.started += 1
            return state.started
        }
        let loaded = try await loader()
        return state.withLock { state in
            if ticket > state.installed {
                state.installed = ticket
                state.catalog = loaded
                state.loadedAt = Date()
            }
            return state.catalog ?? loaded
        }
    }
}
