/// Turns the files of a `templates/` directory into ``Template`` values.
///
/// Conventions of the `.resx` files: a resource named by the event id holds the body (seed 000:
/// "resource id = message id, resource body = text template"); `<EventId>.Title` holds its
/// title, and a resource named `Title` is the title of events without one. Titles are
/// optional (the seed's own files have none): a text without either has the empty title, and
/// its modern payloads carry the body alone. Metadata comes from ``EventMetadataFile``; an
/// event with texts but no metadata gets ``EventMetadata/defaults(for:)``.
public enum TemplateBundle {
    static let titleSuffix = ".Title"

    /// The templates of `resx` files (names as in ``TemplateFileName``) with `metadata`.
    /// Throws ``TemplateError`` for a bad file name, a bad `.resx`, or a title without a body.
    public static func templates(resx: [TemplateSource], metadata: [EventMetadata]) throws(TemplateError) -> [Template] {
        var metadataByEvent: [String: EventMetadata] = [:]
        for m in metadata { metadataByEvent[m.eventId.asciiLowercased] = m }
        var templates: [Template] = []
        for source in resx.sorted(by: { $0.fileName < $1.fileName }) {
            let name = try TemplateFileName(parsing: source.fileName)
            let entries = try ResxReader.entries(source.contents, source: source.fileName)
            var byName: [String: String] = [:]
            for entry in entries { byName[entry.name] = entry.value }
            let defaultTitle = byName["Title"] ?? ""
            for entry in entries where entry.name != "Title" {
                if entry.name.hasSuffix(titleSuffix) {
                    let eventId = String(entry.name.dropLast(titleSuffix.count))
                    if byName[eventId] == nil {
                        throw TemplateError(
                            code: .invalidResource, eventId: eventId, source: "\(source.fileName): \(entry.name)",
                            reason: "a title without a body resource \(eventId)")
                    }
                    continue
                }
                templates.append(
                    Template(
                        eventId: entry.name, culture: name.culture, platform: name.platform, title: byName[entry.name + titleSuffix] ?? defaultTitle,
                        body: entry.value,
                        metadata: metadataByEvent[entry.name.asciiLowercased].map {
                            var m = $0; m.eventId = entry.name; return m
                        } ?? .defaults(for: entry.name)
                    ))
            }
        }
        return templates
    }

    /// The templates of a directory listing: every `*.resx` file, and `events.json` for metadata
    /// (other files are ignored). `defaultCulture` is the last step of culture fallback.
    public static func catalog(files: [TemplateSource], defaultCulture: String) throws(TemplateError) -> TemplateCatalog {
        let resx = files.filter { $0.fileName.lowercased().hasSuffix(".resx") }
        var metadata: [EventMetadata] = []
        if let file = files.first(where: { $0.fileName == EventMetadataFile.fileName }) {
            metadata = try EventMetadataFile.parse(file.contents, source: file.fileName)
        }
        return try TemplateCatalog(templates: try templates(resx: resx, metadata: metadata), defaultCulture: defaultCulture)
    }
}
