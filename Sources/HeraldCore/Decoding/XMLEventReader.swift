/// Maps a `<PushNotification>` document (seed 000) onto an ``Event``.
///
/// Element and attribute names are matched ASCII case-insensitively (producers written against
/// .NET serializers vary in case); each field may appear once; unknown elements are skipped and
/// reported as ``DecodingNote/ignoredField(field:)``.
///
/// It reads the document as ``XMLReader`` reports it, keeping only the fields (no element tree:
/// this runs for every bus message). A document that is not well-formed XML fails as such even
/// when a field before the fault is invalid too: a field's error is kept until the whole document
/// has parsed.
enum XMLEventReader {
    static func read(_ bytes: UnsafeBufferPointer<UInt8>, limits: DecodingLimits) throws(EventDecodingError) -> DecodedEvent {
        var fields = FieldCollector(assembler: EventAssembler(format: .xml, limits: limits))
        do {
            try XMLReader.parse(bytes, limits: .init(maxDepth: limits.maxDepth), into: &fields)
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
                code: code, field: field, reason: "\(error.reason) (\(XMLReader.position(of: error.offset, in: bytes)))", format: .xml, offset: error.offset)
        }
        if let failure = fields.failure { throw failure }
        return try fields.assembler.finish(idField: "EventId", typeField: "EventType", dateTimeField: "EventDateTime")
    }

    /// Feeds the root's fields to the assembler as they end; keeps the first field error (the
    /// first in document order) and ignores the rest of the document after it.
    private struct FieldCollector: XMLContentHandler {
        var assembler: EventAssembler
        private(set) var failure: EventDecodingError?
        /// Set with `failure`: a flag to test per element (testing the optional copies the error).
        private var failed = false
        /// The fields seen (a bit per ``Field``).
        private var seen: UInt8 = 0
        /// The root's child being read; nil when it is not a field.
        private var field: Field?
        private var fieldOffset = 0
        /// Filters or parameters of the current field so far.
        private var index = 0

        init(assembler: EventAssembler) {
            self.assembler = assembler
        }

        mutating func startElement(name: UnsafeBufferPointer<UInt8>, attributes: [XElement.Attribute], offset: Int, depth: Int) -> Bool {
            guard !failed else { return false }
            do throws(EventDecodingError) {
                switch depth {
                case 0:
                    guard asciiBytesEqualIgnoringCase(name, "PushNotification".utf8) else {
                        throw assembler.error(
                            .unexpectedRoot, "document", "root element must be <PushNotification>", offset: offset, value: String(decoding: name, as: UTF8.self)
                        )
                    }
                case 1:
                    field = Field(name: name)
                    index = 0
                    guard let field else {
                        assembler.notes.append(.ignoredField(field: String(decoding: name, as: UTF8.self)))
                        return false
                    }
                    let bit: UInt8 = 1 << field.rawValue
                    guard seen & bit == 0 else {
                        throw assembler.error(.duplicateField, String(decoding: name, as: UTF8.self), "appears more than once", offset: offset)
                    }
                    seen |= bit
                    fieldOffset = offset
                    return field.isText
                case 2:
                    switch field {
                    case .eventFilters: try addFilter(name: name, attributes: attributes, offset: offset)
                    case .eventParams: try addParam(name: name, attributes: attributes, offset: offset)
                    default: break
                    }
                default:
                    break
                }
            } catch {
                fail(error)
            }
            return false
        }

        mutating func endElement(text: UnsafeBufferPointer<UInt8>, depth: Int) {
            guard !failed, depth == 1, let field, field.isText else { return }
            let value = String(decoding: text, as: UTF8.self)
            do throws(EventDecodingError) {
                switch field {
                case .eventId: try assembler.setId(value, field: "EventId", offset: fieldOffset)
                case .eventType: try assembler.setType(value, field: "EventType", offset: fieldOffset)
                case .eventDateTime: try assembler.setDateTime(value, field: "EventDateTime", offset: fieldOffset)
                case .eventFilters, .eventParams: break
                }
            } catch {
                fail(error)
            }
        }

        private mutating func fail(_ error: EventDecodingError) {
            failure = error
            failed = true
        }

        /// The number (from 1) of an `expected` element in `list`; nil, after noting it as
        /// ignored, for an element of another name.
        private mutating func itemNumber(_ name: UnsafeBufferPointer<UInt8>, expected: String, list: String) -> Int? {
            guard asciiBytesEqualIgnoringCase(name, expected.utf8) else {
                assembler.notes.append(.ignoredField(field: "\(list)/\(String(decoding: name, as: UTF8.self))"))
                return nil
            }
            index += 1
            return index
        }

        private mutating func addFilter(name: UnsafeBufferPointer<UInt8>, attributes: [XElement.Attribute], offset: Int) throws(EventDecodingError) {
            guard let n = itemNumber(name, expected: "Filter", list: "EventFilters") else { return }
            guard let filterName = attributes.value(named: "name") else {
                throw assembler.error(.missingField, "EventFilters/Filter[\(n)]/@name", "required", offset: offset)
            }
            guard let value = attributes.value(named: "value") else {
                throw assembler.error(.missingField, "EventFilters/Filter[\(n)]/@value", "required", offset: offset)
            }
            try assembler.addFilter(name: filterName, value: value, field: "EventFilters/Filter[\(n)]", offset: offset)
        }

        private mutating func addParam(name: UnsafeBufferPointer<UInt8>, attributes: [XElement.Attribute], offset: Int) throws(EventDecodingError) {
            guard let n = itemNumber(name, expected: "EventParam", list: "EventParams") else { return }
            guard let value = attributes.value(named: "value") else {
                throw assembler.error(.missingField, "EventParams/EventParam[\(n)]/@value", "required", offset: offset)
            }
            try assembler.addParam(name: attributes.value(named: "name") ?? "", value: value, field: "EventParams/EventParam[\(n)]", offset: offset)
        }
    }

    /// A child of the root that the reader knows (a bit of a set of those seen).
    private enum Field: UInt8 {
        case eventId, eventType, eventDateTime, eventFilters, eventParams

        /// In any case. The names differ in length, which picks the one to compare.
        init?(name: UnsafeBufferPointer<UInt8>) {
            let field: Field
            let spelling: StaticString
            switch name.count {
            case 7: (field, spelling) = (.eventId, "EventId")
            case 9: (field, spelling) = (.eventType, "EventType")
            case 13: (field, spelling) = (.eventDateTime, "EventDateTime")
            case 12: (field, spelling) = (.eventFilters, "EventFilters")
            case 11: (field, spelling) = (.eventParams, "EventParams")
            default: return nil
            }
            guard asciiBytesEqualIgnoringCase(name, UnsafeBufferPointer(start: spelling.utf8Start, count: spelling.utf8CodeUnitCount)) else { return nil }
            self = field
        }

        /// A field whose value is its text (the others hold elements).
        var isText: Bool { self != .eventFilters && self != .eventParams }
    }

    /// "line L, column C" of a byte offset (columns count bytes), for error reasons.
    static func position(of offset: Int, in bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { XMLReader.position(of: offset, in: $0) }
    }
}
