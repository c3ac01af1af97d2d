/// All templates, compiled and indexed for rendering: the worker builds one from the store (and
/// rebuilds it on change), `herald preview` from `templates/`.
///
/// Lookup falls back by culture: the exact culture (`ru-RU`), then its language (`ru`), then
/// ``defaultCulture``, then ``TemplateError/Code/noTemplate``. Cultures and event ids compare
/// ASCII case-insensitively (`ru-ru` is `ru-RU`).
///
/// Texts that do not compile do not stop the catalog: each is listed in ``problems`` (so that an
/// import can refuse them) and rendering that template throws its error. Immutable and
/// `Sendable`: share one instance between threads.
public struct TemplateCatalog: Sendable {
    struct Key: Hashable, Sendable {
        var eventId: String
        var culture: String
        var platform: Platform

        init(eventId: String, culture: String, platform: Platform) {
            self.eventId = eventId.asciiLowercased
            self.culture = culture.asciiLowercased
            self.platform = platform
        }
    }

    /// A class: every render looks one up (through the memo) and a struct copy retained each of
    /// the template's strings and parts.
    final class Compiled: Sendable {
        let template: Template
        let title: Result<TextTemplate, TemplateError>
        let body: Result<TextTemplate, TemplateError>

        init(template: Template, title: Result<TextTemplate, TemplateError>, body: Result<TextTemplate, TemplateError>) {
            self.template = template
            self.title = title
            self.body = body
        }
    }

    public let defaultCulture: String
    private let entries: [Key: Compiled]
    /// Lookups already made, by the strings as given (no case folding, no fallback chain):
    /// the hot path renders the same few (event, culture, platform) over and over.
    let memo = Memo()
    private let metadataByEvent: [String: EventMetadata]
    /// Every text that failed to compile, with its event, culture and platform.
    public let problems: [TemplateError]

    /// Throws ``TemplateError/Code/duplicateTemplate`` when two templates share an event id,
    /// culture and platform.
    public init(templates: [Template], defaultCulture: String) throws(TemplateError) {
        self.defaultCulture = defaultCulture
        var entries: [Key: Compiled] = [:]
        var metadata: [String: EventMetadata] = [:]
        var problems: [TemplateError] = []
        for template in templates {
            let key = Key(eventId: template.eventId, culture: template.culture, platform: template.platform)
            guard entries[key] == nil else {
                throw TemplateError(
                    code: .duplicateTemplate, eventId: template.eventId, culture: template.culture, platform: template.platform,
                    reason: "more than one template for this event, culture and platform"
                )
            }
            func compile(_ text: String, part: String) -> Result<TextTemplate, TemplateError> {
                do {
                    return .success(try TextTemplate(text))
                } catch {
                    var e = error
                    e.eventId = template.eventId
                    e.culture = template.culture
                    e.platform = template.platform
                    e.source = part
                    problems.append(e)
                    return .failure(e)
                }
            }
            entries[key] = Compiled(template: template, title: compile(template.title, part: "title"), body: compile(template.body, part: "body"))
            if metadata[key.eventId] == nil { metadata[key.eventId] = template.metadata }
        }
        self.entries = entries
        self.metadataByEvent = metadata
        self.problems = problems
    }

    /// Every template, in no particular order.
    public var templates: [Template] { entries.values.map(\.template) }

    /// The metadata of an event (its tag is needed before recipients are selected), or `nil`
    /// when no template defines the event.
    public func metadata(forEventId eventId: String) -> EventMetadata? {
        if let known = memo.metadata(eventId) { return known }
        let found = metadataByEvent[eventId.asciiLowercased]
        memo.store(eventId, found)
        return found
    }

    /// The cultures tried for `culture`, in order, without repeats.
    public func fallbackChain(for culture: String) -> [String] {
        var chain: [String] = []
        func add(_ c: String) {
            if !c.isEmpty, !chain.contains(where: { $0.asciiCaseInsensitiveEquals(c) }) { chain.append(c) }
        }
        add(culture)
        if let dash = culture.firstIndex(where: { $0 == "-" || $0 == "_" }) { add(String(culture[..<dash])) }
        add(defaultCulture)
        return chain
    }

    /// The template for an event, culture and platform after culture fallback.
    public func template(eventId: String, culture: String, platform: Platform) throws(TemplateError) -> Template {
        try resolve(eventId: eventId, culture: culture, platform: platform).template
    }

    private func resolve(eventId: String, culture: String, platform: Platform) throws(TemplateError) -> Compiled {
        let key = Memo.Lookup(eventId: eventId, culture: culture, platform: platform)
        if let hit = memo.resolved(key) { return try hit.get() }
        let result = Result { () throws(TemplateError) in try resolveUncached(eventId: eventId, culture: culture, platform: platform) }
        memo.store(key, result)
        return try result.get()
    }

    private func resolveUncached(eventId: String, culture: String, platform: Platform) throws(TemplateError) -> Compiled {
        let chain = fallbackChain(for: culture)
        for candidate in chain {
            if let entry = entries[Key(eventId: eventId, culture: candidate, platform: platform)] { return entry }
        }
        let known = metadataByEvent[eventId.asciiLowercased] != nil
        throw TemplateError(
            code: .noTemplate, eventId: eventId, culture: culture, platform: platform,
            reason: known
                ? "no \(platform) text in any of the cultures tried (\(chain.joined(separator: ", ")))"
                : "no template defines this event id"
        )
    }

    /// Renders the template for `event` in `culture` on `platform`: `{n}` is the event's n-th
    /// parameter. Throws ``TemplateError`` (no template, missing parameter, or the template's
    /// own compile error).
    public func render(_ event: Event, culture: String, platform: Platform) throws(TemplateError) -> RenderedNotification {
        let entry = try resolve(eventId: event.id, culture: culture, platform: platform)
        let parameters = event.params
        func run(_ compiled: Result<TextTemplate, TemplateError>, part: String) throws(TemplateError) -> String {
            do {
                return try compiled.get().render(eventParameters: parameters)
            } catch {
                var e = error
                e.eventId = entry.template.eventId
                e.culture = entry.template.culture
                e.platform = platform
                e.source = part
                throw e
            }
        }
        let title = try run(entry.title, part: "title")
        let body = try run(entry.body, part: "body")
        return RenderedNotification(
            eventId: event.id, culture: entry.template.culture, platform: platform, title: title, body: body,
            metadata: entry.template.metadata, isSilent: entry.template.metadata.isSilent || event.type == .system
        )
    }
}
