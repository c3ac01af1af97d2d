import Foundation
import HeraldCore
import HeraldPostgres

/// Notification templates and event metadata, as HeraldCore models them: `herald templates
/// import` writes a whole set read from `templates/` (by HeraldCore), the worker's
/// ``TemplateCache`` reads them all.
///
/// Any change notifies `herald_templates` (statement triggers), so every process reloads.
/// Safe from any number of tasks. Throws ``StoreError``.
public struct TemplateRepository: Sendable {
    let client: PostgresClient

    /// What an import changed.
    public struct ImportSummary: Sendable, Hashable {
        public var events: Int
        public var templates: Int
    }

    /// Replaces every template and all event metadata with `catalog`'s, in one transaction
    /// (readers see the old set or the new one, never a mix).
    ///
    /// Throws ``StoreError/Code/invalidData`` when a template of the catalog does not compile
    /// (``HeraldCore/TemplateCatalog/problems``), or two templates of one event disagree on its
    /// metadata.
    @discardableResult
    public func replaceAll(with catalog: TemplateCatalog) async throws(StoreError) -> ImportSummary {
        let operation = "TemplateRepository.replaceAll"
        if let problem = catalog.problems.first {
            throw StoreError(
                code: .invalidData,
                message: "\(catalog.problems.count) template text(s) do not compile, e.g. \(problem.description)",
                operation: operation
            )
        }
        let templates = catalog.templates.sorted {
            ($0.eventId, $0.culture, $0.platform.rawValue) < ($1.eventId, $1.culture, $1.platform.rawValue)
        }
        var metadata: [String: EventMetadata] = [:]
        var eventOrder: [String] = []
        for template in templates {
            var m = template.metadata
            m.eventId = template.eventId
            if let known = metadata[template.eventId] {
                guard known == m else {
                    throw StoreError(code: .invalidData, message: "the templates of event \(template.eventId) disagree on its metadata", operation: operation)
                }
            } else {
                metadata[template.eventId] = m
                eventOrder.append(template.eventId)
            }
        }
        let events = eventOrder.map { metadata[$0]! }
        return try await StoreError.wrap(operation) {
            try await client.withTransaction { transaction in
                try await transaction.execute("DELETE FROM templates")
                try await transaction.execute("DELETE FROM event_metadata")
                try await transaction.execute(
                    """
                    INSERT INTO event_metadata (event_id, tag, category, target_screen, priority, sound, is_private, is_silent, ttl_seconds, android_channel)
                    SELECT x.event_id, x.tag, x.category, x.target_screen, x.priority, x.sound,
                           x.is_private::boolean, x.is_silent::boolean, x.ttl::integer, x.android_channel
                    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
                        AS x(event_id, tag, category, target_screen, priority, sound, is_private, is_silent, ttl, android_channel)
                    """,
                    [
                        events.map(\.eventId), events.map(\.tag), events.map(\.category), events.map { $0.targetScreen?.rawValue },
                        events.map(\.priority.rawValue), events.map(\.sound), events.map { String($0.isPrivate) },
                        events.map { String($0.isSilent) }, events.map { $0.timeToLiveSeconds.map(String.init) }, events.map(\.androidChannel),
                    ]
                )
                try await transaction.execute(
                    """
                    INSERT INTO templates (event_id, culture, platform, title, body)
                    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
                    """,
                    [templates.map(\.eventId), templates.map(\.culture), templates.map(\.platform.rawValue), templates.map(\.title), templates.map(\.body)]
                )
                return ImportSummary(events: events.count, templates: templates.count)
            }
        }
    }

    /// Every stored template with its event's metadata.
    public func all() async throws(StoreError) -> [Template] {
        try await StoreError.wrap("TemplateRepository.all") {
            let rows = try await client.query(
                """
                SELECT t.event_id, t.culture, t.platform, t.title, t.body, m.tag, m.category, m.target_screen, m.priority,
                       m.sound, m.is_private, m.is_silent, m.ttl_seconds, m.android_channel
                FROM templates t JOIN event_metadata m ON m.event_id = t.event_id
                ORDER BY t.event_id, t.culture, t.platform
                """
            )
            return try rows.map { (row) throws(PostgresError) in
                let eventId = try row.decode(String.self, column: "event_id")
                let platformName = try row.decode(String.self, column: "platform")
                let priorityName = try row.decode(String.self, column: "priority")
                guard let platform = Platform(rawValue: platformName), let priority = NotificationPriority(rawValue: priorityName) else {
                    throw PostgresError(code: .decodingFailed, message: "unknown platform or priority")
                }
                return Template(
                    eventId: eventId,
                    culture: try row.decode(String.self, column: "culture"),
                    platform: platform,
                    title: try row.decode(String.self, column: "title"),
                    body: try row.decode(String.self, column: "body"),
                    metadata: EventMetadata(
                        eventId: eventId,
                        tag: try row.decode(String?.self, column: "tag"),
                        category: try row.decode(String?.self, column: "category"),
                        targetScreen: try row.decode(String?.self, column: "target_screen").map(TargetScreen.init(rawValue:)),
                        priority: priority,
                        sound: try row.decode(String?.self, column: "sound"),
                        androidChannel: try row.decode(String?.self, column: "android_channel"),
                        isPrivate: try row.decode(Bool.self, column: "is_private"),
                        isSilent: try row.decode(Bool.self, column: "is_silent"),
                        timeToLiveSeconds: try row.decode(Int?.self, column: "ttl_seconds")
                    )
                )
            }
        }
    }

    /// Every stored template, compiled into a catalog.
    /// - Throws: ``StoreError/Code/invalidData`` if the stored templates do not form a catalog.
    public func catalog(defaultCulture: String) async throws(StoreError) -> TemplateCatalog {
        let templates = try await all()
        do {
            return try TemplateCatalog(templates: templates, defaultCulture: defaultCulture)
        } catch {
            throw StoreError(
                code: .invalidData, message: "the stored templates do not form a catalog: \(error.description)", operation: "TemplateRepository.catalog")
        }
    }
}
