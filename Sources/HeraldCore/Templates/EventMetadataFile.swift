/// Reads the event metadata file (`templates/events.json`):
///
/// ```json
/// { "format": "herald-event-metadata/1",
///   "events": {
///     "TransferIssued": { "tag": "transfers", "targetScreen": "timeline", "priority": "high",
///                         "sound": "default", "androidChannel": "money_in",
///                         "private": true, "silent": false,
///                         "ttlSeconds": 86400, "description": "…", "note": "…" } } }
/// ```
///
/// Per event, `priority` (`high`|`normal`), `private` and `silent` are required so that every
/// decision is written down; `tag`, `category`, `targetScreen`, `sound`, `androidChannel` and
/// `ttlSeconds` may be absent or `null` (a channel, when given, is a non-empty string);
/// `description` and `note` are documentation. Any other key is an error (a misspelt key must
/// not be ignored). Errors are ``TemplateError/Code/invalidMetadata`` with
/// the JSON path.
public enum EventMetadataFile {
    public static let fileName = "events.json"
    public static let formatName = "herald-event-metadata/1"

    public static func parse(_ bytes: [UInt8], source: String = fileName) throws(TemplateError) -> [EventMetadata] {
        func fail(_ path: String, _ reason: String) -> TemplateError {
            TemplateError(code: .invalidMetadata, source: path.isEmpty ? source : "\(source): \(path)", reason: reason)
        }
        if let bad = UTF8Validator.firstInvalidOffset(bytes) { throw fail("", "invalid UTF-8 at byte \(bad)") }
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes, limits: .init(maxDepth: 16))
        } catch {
            throw fail("", "\(error.reason) (\(XMLEventReader.position(of: error.offset, in: bytes)))")
        }
        guard case .object(let top) = root else { throw fail("", "must be a JSON object") }
        for key in top.keys where !["format", "events", "description", "note"].contains(key) {
            throw fail(key, "unknown key")
        }
        if let format = top["format"], format != .string(formatName) {
            throw fail("format", "must be \"\(formatName)\"")
        }
        guard case .object(let events)? = top["events"] else { throw fail("events", "required object keyed by event id") }
        var result: [EventMetadata] = []
        for eventId in events.keys.sorted() {
            let path = "events.\(eventId)"
            guard case .object(let fields) = events[eventId]! else { throw fail(path, "must be an object") }
            let allowed = [
                "tag", "category", "targetScreen", "priority", "sound", "androidChannel", "private", "silent", "ttlSeconds", "description", "note",
            ]
            for key in fields.keys.sorted() where !allowed.contains(key) { throw fail("\(path).\(key)", "unknown key") }
            func optionalString(_ key: String) throws(TemplateError) -> String? {
                switch fields[key] {
                case nil, .null?: return nil
                case .string(let s)?: return s
                case let other?: throw fail("\(path).\(key)", "must be a string or null, not \(other.kindName)")
                }
            }
            func requiredBool(_ key: String) throws(TemplateError) -> Bool {
                guard case .bool(let b)? = fields[key] else { throw fail("\(path).\(key)", "required: true or false") }
                return b
            }
            guard case .string(let priorityName)? = fields["priority"], let priority = NotificationPriority(rawValue: priorityName) else {
                throw fail("\(path).priority", "required: \"high\" or \"normal\"")
            }
            let channel = try optionalString("androidChannel")
            if channel?.isEmpty == true { throw fail("\(path).androidChannel", "must be a channel id or null, not empty") }
            var ttl: Int?
            switch fields["ttlSeconds"] {
            case nil, .null?: ttl = nil
            case .number(let n)?:
                guard let v = Int(n), v >= 0, v <= 28 * 86_400 else {
                    throw fail("\(path).ttlSeconds", "must be a whole number of seconds from 0 to 2419200 (28 days)")
                }
                ttl = v
            case let other?: throw fail("\(path).ttlSeconds", "must be a number or null, not \(other.kindName)")
            }
            result.append(
                EventMetadata(
                    eventId: eventId, tag: try optionalString("tag"), category: try optionalString("category"),
                    targetScreen: try optionalString("targetScreen").map(TargetScreen.init(rawValue:)), priority: priority,
                    sound: try optionalString("sound"), androidChannel: channel, isPrivate: try requiredBool("private"), isSilent: try requiredBool("silent"),
                    timeToLiveSeconds: ttl
                ))
        }
        return result
    }
}
