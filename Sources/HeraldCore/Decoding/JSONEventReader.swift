/// Maps a JSON event (seed 000's JSON sample) onto an ``Event``.
///
/// Keys are matched ASCII case-insensitively; two keys that differ only in case are a
/// duplicate. `EventFilters`/`EventParams` are arrays of `{"Name", "Value"}`; a value may be a
/// string or a number (kept as its literal text); `null` for either array means empty.
enum JSONEventReader {
    static func read(_ bytes: UnsafeBufferPointer<UInt8>, limits: DecodingLimits) throws(EventDecodingError) -> DecodedEvent {
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes, limits: .init(maxDepth: limits.maxDepth))
        } catch {
            throw EventDecodingError(
                code: error.code == .tooDeep ? .limitExceeded : .malformedDocument, field: "document",
                reason: "\(error.reason) (\(XMLReader.position(of: error.offset, in: bytes)))", format: .json, offset: error.offset
            )
        }
        var a = EventAssembler(format: .json, limits: limits)
        guard case .object(let members) = root else {
            throw a.error(.unexpectedRoot, "document", "must be a JSON object, not \(root.kindName)")
        }
        let fields = try caseInsensitive(members, path: "", assembler: a)
        for (key, (name, value)) in fields.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "eventid":
                try a.setId(try scalarText(value, field: name, assembler: a), field: name, offset: nil)
            case "eventtype":
                try a.setType(try string(value, field: name, assembler: a), field: name, offset: nil)
            case "eventdatetime":
                try a.setDateTime(try string(value, field: name, assembler: a), field: name, offset: nil)
            case "eventfilters":
                for (index, item) in try array(value, field: name, assembler: a).enumerated() {
                    let field = "\(name)[\(index)]"
                    let (itemName, itemValue, ignored) = try nameValue(item, field: field, nameRequired: true, assembler: a)
                    a.notes += ignored.map { .ignoredField(field: $0) }
                    try a.addFilter(name: itemName, value: itemValue, field: field, offset: nil)
                }
            case "eventparams":
                for (index, item) in try array(value, field: name, assembler: a).enumerated() {
                    let field = "\(name)[\(index)]"
                    let (itemName, itemValue, ignored) = try nameValue(item, field: field, nameRequired: false, assembler: a)
                    a.notes += ignored.map { .ignoredField(field: $0) }
                    try a.addParam(name: itemName, value: itemValue, field: field, offset: nil)
                }
            default:
                a.notes.append(.ignoredField(field: name))
            }
        }
        return try a.finish(idField: "EventId", typeField: "EventType", dateTimeField: "EventDateTime")
    }

    /// Members keyed by lowercased name, keeping the spelling used; a case-only duplicate throws.
    private static func caseInsensitive(
        _ members: [String: JSONValue], path: String, assembler a: EventAssembler
    ) throws(EventDecodingError) -> [String: (String, JSONValue)] {
        var out: [String: (String, JSONValue)] = [:]
        for (name, value) in members {
            let key = name.asciiLowercased
            if let other = out[key] { throw duplicate(other.0, name, path: path, assembler: a) }
            out[key] = (name, value)
        }
        return out
    }

    private static func string(_ value: JSONValue, field: String, assembler a: EventAssembler) throws(EventDecodingError) -> String {
        guard case .string(let s) = value else { throw a.error(.wrongType, field, "must be a string, not \(value.kindName)") }
        return s
    }

    /// A string, or a number's literal text.
    private static func scalarText(_ value: JSONValue, field: String, assembler a: EventAssembler) throws(EventDecodingError) -> String {
        switch value {
        case .string(let s): return s
        case .number(let n): return n
        default: throw a.error(.wrongType, field, "must be a string or a number, not \(value.kindName)")
        }
    }

    private static func array(_ value: JSONValue, field: String, assembler a: EventAssembler) throws(EventDecodingError) -> [JSONValue] {
        switch value {
        case .array(let items): return items
        case .null: return []
        default: throw a.error(.wrongType, field, "must be an array, not \(value.kindName)")
        }
    }

    private static func nameValue(
        _ item: JSONValue, field: String, nameRequired: Bool, assembler a: EventAssembler
    ) throws(EventDecodingError) -> (String, String, [String]) {
        guard case .object(let members) = item else { throw a.error(.wrongType, field, "must be an object with Name and Value, not \(item.kindName)") }
        // Two known keys: a linear scan, no dictionary of lowercased keys (this runs per filter).
        var name: (String, JSONValue)?
        var value: (String, JSONValue)?
        var ignored: [String] = []
        for (key, member) in members {
            if key == "Name" || key.asciiCaseInsensitiveEquals("name") {
                if let other = name { throw duplicate(other.0, key, path: field + ".", assembler: a) }
                name = (key, member)
            } else if key == "Value" || key.asciiCaseInsensitiveEquals("value") {
                if let other = value { throw duplicate(other.0, key, path: field + ".", assembler: a) }
                value = (key, member)
            } else {
                ignored.append("\(field).\(key)")
            }
        }
        var nameText = ""
        if let (spelling, member) = name {
            nameText = try scalarText(member, field: "\(field).\(spelling)", assembler: a)
        } else if nameRequired {
            throw a.error(.missingField, field + ".Name", "required")
        }
        guard let (spelling, member) = value else { throw a.error(.missingField, field + ".Value", "required") }
        return (nameText, try scalarText(member, field: "\(field).\(spelling)", assembler: a), ignored.sorted())
    }

    private static func duplicate(_ first: String, _ second: String, path: String, assembler a: EventAssembler) -> EventDecodingError {
        let pair = [first, second].sorted()
        return a.error(.duplicateField, path + pair[1], "appears more than once (keys differ only in case: \(pair[0].prefix(64)), \(pair[1].prefix(64)))")
    }
}
