/// Maps a parsed `<PushNotification>` document (seed 000) onto an ``Event``.
///
/// Element and attribute names are matched ASCII case-insensitively (producers written against
/// .NET serializers vary in case); each field may appear once; unknown elements are skipped and
/// reported as ``DecodingNote/ignoredField(field:)``.
enum XMLEventReader {
    static func read(_ bytes: [UInt8], limits: DecodingLimits) throws(EventDecodingError) -> DecodedEvent {
        let root: XElement
        do {
            root = try XMLReader.parse(bytes, limits: .init(maxDepth: limits.maxDepth))
        } catch {
            let code: EventDecodingError.Code =
                switch error.kind {
                case .syntax: .malformedDocument
                case .forbidden: .forbiddenConstruct
                case .depth: .limitExceeded
                case .encoding: .unsupportedEncoding
                }
            // Name the innermost field that was open (below the root), if any.
            let field = error.openElements.count > 1 ? error.openElements.dropFirst().joined(separator: "/") : "document"
            throw EventDecodingError(
                code: code, field: field, reason: "\(error.reason) (\(position(of: error.offset, in: bytes)))", format: .xml, offset: error.offset)
        }
        var a = EventAssembler(format: .xml, limits: limits)
        guard root.name.asciiCaseInsensitiveEquals("PushNotification") else {
            throw a.error(.unexpectedRoot, "document", "root element must be <PushNotification>", offset: root.offset, value: root.name)
        }
        var seen: UInt8 = 0
        for child in root.children {
            guard let field = Field(name: child.name) else {
                a.notes.append(.ignoredField(field: child.name))
                continue
            }
            let bit: UInt8 = 1 << field.rawValue
            guard seen & bit == 0 else {
                throw a.error(.duplicateField, child.name, "appears more than once", offset: child.offset)
            }
            seen |= bit
            switch field {
            case .eventId:
                try a.setId(child.text, field: "EventId", offset: child.offset)
            case .eventType:
                try a.setType(child.text, field: "EventType", offset: child.offset)
            case .eventDateTime:
                try a.setDateTime(child.text, field: "EventDateTime", offset: child.offset)
            case .eventFilters:
                var index = 0
                for filter in child.children {
                    guard filter.name.asciiCaseInsensitiveEquals("Filter") else {
                        a.notes.append(.ignoredField(field: "EventFilters/\(filter.name)"))
                        continue
                    }
                    index += 1
                    let n = index
                    guard let name = filter.attribute("name") else {
                        throw a.error(.missingField, "EventFilters/Filter[\(n)]/@name", "required", offset: filter.offset)
                    }
                    guard let value = filter.attribute("value") else {
                        throw a.error(.missingField, "EventFilters/Filter[\(n)]/@value", "required", offset: filter.offset)
                    }
                    try a.addFilter(name: name, value: value, field: "EventFilters/Filter[\(n)]", offset: filter.offset)
                }
            case .eventParams:
                var index = 0
                for param in child.children {
                    guard param.name.asciiCaseInsensitiveEquals("EventParam") else {
                        a.notes.append(.ignoredField(field: "EventParams/\(param.name)"))
                        continue
                    }
                    index += 1
                    let n = index
                    guard let value = param.attribute("value") else {
                        throw a.error(.missingField, "EventParams/EventParam[\(n)]/@value", "required", offset: param.offset)
                    }
                    try a.addParam(name: param.attribute("name") ?? "", value: value, field: "EventParams/EventParam[\(n)]", offset: param.offset)
                }
            }
        }
        return try a.finish(idField: "EventId", typeField: "EventType", dateTimeField: "EventDateTime")
    }

    /// A child of the root that the reader knows (a bit of a set of those seen).
    private enum Field: UInt8 {
        case eventId, eventType, eventDateTime, eventFilters, eventParams

        private static let names: [(String, Field)] = [
            ("EventId", .eventId), ("EventType", .eventType), ("EventDateTime", .eventDateTime), ("EventFilters", .eventFilters),
            ("EventParams", .eventParams),
        ]

        /// In any case (the exact spelling is answered by `==` first).
        init?(name: String) {
            guard let match = Self.names.first(where: { $0.0.asciiCaseInsensitiveEquals(name) }) else { return nil }
            self = match.1
        }
    }

    /// "line L, column C" of a byte offset (columns count bytes), for error reasons.
    static func position(of offset: Int, in bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { XMLReader.position(of: offset, in: $0) }
    }
}
