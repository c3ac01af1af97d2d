import Foundation
import Testing

@testable import HeraldCore

@Suite struct EventDecoderTests {
    let decoder = EventDecoder()

    func decode(_ text: String, contentType: String? = nil) throws(EventDecodingError) -> DecodedEvent {
        try decoder.decode(Array(text.utf8), contentType: contentType)
    }

    /// The error of decoding `text`, which must fail.
    func failure(_ text: String, contentType: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> EventDecodingError? {
        do {
            let decoded = try decode(text, contentType: contentType)
            Issue.record("decoded unexpectedly: \(decoded.event)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    @Test func seedXMLSampleDecodesExactly() throws {
        let decoded = try decode(SeedSamples.xml)
        #expect(decoded.format == .xml)
        #expect(decoded.event == SeedSamples.event)
        #expect(decoded.notes.isEmpty)
        #expect(decoded.event.dateTime.description == "2014-04-30T17:32:47.4123771+03:00")
        #expect(decoded.event.parameterValues == ["v1", "v2", "v3"])
        #expect(decoded.event.userIds == ["119973638970", "119973638971", "119973638972"])
        #expect(!decoded.event.isBroadcast)
    }

    @Test func seedJSONSampleDecodesToTheSameEvent() throws {
        let decoded = try decode(SeedSamples.json)
        #expect(decoded.format == .json)
        #expect(decoded.event == SeedSamples.event)
        #expect(decoded.notes.isEmpty)
        #expect(try decode(SeedSamples.xml).event == decoded.event)
    }

    @Test func seedXMLAsPrintedNamesTheBrokenField() throws {
        let error = try #require(failure(SeedSamples.xmlAsPrinted))
        #expect(error.code == .malformedDocument)
        #expect(error.format == .xml)
        // The element left open is named as the field, with where it was opened.
        #expect(error.field == "EventDateTime")
        #expect(error.description.contains("<EventDateTime> opened at line 4, column 2 is not closed"), "\(error)")
    }

    @Test func contentTypeChoosesTheFormatAndSniffingOtherwise() throws {
        #expect(try decode(SeedSamples.xml, contentType: "application/xml; charset=utf-8").format == .xml)
        #expect(try decode(SeedSamples.json, contentType: "application/json").format == .json)
        #expect(try decode(SeedSamples.json, contentType: "application/octet-stream").format == .json)
        #expect(try decode("\u{FEFF}" + SeedSamples.json).event == SeedSamples.event)
        #expect(try decoder.decode(Data(("\u{FEFF}" + SeedSamples.json).utf8)).event == SeedSamples.event)
        // A JSON error's position counts from after the byte order mark.
        let broken = try #require(failure("\u{FEFF}{\n  \"EventId\": }"))
        #expect(broken.code == .malformedDocument && broken.description.contains("line 2, column 14"), "\(broken)")
        #expect(try decode("\u{FEFF}" + SeedSamples.xml).event == SeedSamples.event)
        let declared = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n" + SeedSamples.xml
        #expect(try decode(declared).event == SeedSamples.event)
        // A JSON body declared as XML is decoded as XML, and says so.
        let mismatch = try #require(failure(SeedSamples.json, contentType: "text/xml"))
        #expect(mismatch.format == .xml)
        #expect(mismatch.code == .malformedDocument)
    }

    @Test func namesAreCaseInsensitiveInBothFormats() throws {
        let xml = SeedSamples.xml.replacingOccurrences(of: "EventType>", with: "eventtype>")
            .replacingOccurrences(of: "Filter name=", with: "FILTER Name=").replacingOccurrences(of: "\" />", with: "\"/>")
            .replacingOccurrences(of: "<Filter ", with: "<FILTER ")
        #expect(try decode(xml).event == SeedSamples.event)
        let json = SeedSamples.json.replacingOccurrences(of: "\"EventType\"", with: "\"eventTYPE\"")
            .replacingOccurrences(of: "\"Name\"", with: "\"name\"").replacingOccurrences(of: "\"Value\"", with: "\"VALUE\"")
        #expect(try decode(json).event == SeedSamples.event)
        let lowerType = SeedSamples.json.replacingOccurrences(of: "\"Message\"", with: "\"message\"")
        #expect(try decode(lowerType).event.type == .message)
    }

    @Test func unknownFiltersAreKeptAndReported() throws {
        let xml = SeedSamples.xml.replacingOccurrences(
            of: "<Filter name=\"BranchId\" value=\"101\" />",
            with: "<Filter name=\"BranchId\" value=\"101\" /><Filter name=\"Segment\" value=\"vip\" /><Filter name=\"userid\" value=\"5\" />"
        )
        let decoded = try decode(xml)
        #expect(decoded.event.filters.count == 9)
        #expect(decoded.event.filters[7] == EventFilter(name: FilterName(rawValue: "Segment"), value: "vip"))
        #expect(decoded.event.filters[8].name == .userId, "known names are normalised")
        #expect(decoded.event.unknownFilterNames == ["Segment"])
        #expect(decoded.notes == [.unknownFilter(name: "Segment", field: "EventFilters/Filter[8]")])

        let json = SeedSamples.json.replacingOccurrences(of: "\"BranchId\"", with: "\"Region\"")
        let fromJSON = try decode(json)
        #expect(fromJSON.event.unknownFilterNames == ["Region"])
        #expect(fromJSON.notes == [.unknownFilter(name: "Region", field: "EventFilters[6]")])
    }

    @Test func unknownElementsAndKeysAreIgnoredWithANote() throws {
        let xml = SeedSamples.xml.replacingOccurrences(of: "</EventParams>", with: "</EventParams><Priority>1</Priority>")
        #expect(try decode(xml).notes == [.ignoredField(field: "Priority")])
        // Inside the lists too, in document order; the ignored ones do not count in the numbering.
        let nested = """
            <PushNotification><EventId>e</EventId><EventType>News</EventType><EventDateTime>2020-01-01T00:00:00Z</EventDateTime>\
            <EventFilters><Zap/><Filter name="ZoneId" value="w1"/><Filter name="Segment" value="x"/></EventFilters>\
            <EventParams><P>1</P><EventParam value="v"/></EventParams></PushNotification>
            """
        #expect(
            try decode(nested).notes == [
                .ignoredField(field: "EventFilters/Zap"), .unknownFilter(name: "Segment", field: "EventFilters/Filter[2]"),
                .ignoredField(field: "EventParams/P"),
            ])
        let json = SeedSamples.json.replacingOccurrences(of: "\"EventType\"", with: "\"Extra\": [1, {\"a\": null}], \"EventType\"")
        #expect(try decode(json).notes == [.ignoredField(field: "Extra")])
    }

    @Test func parameterOrderIsKeptAndNamesAreOptional() throws {
        let xml = """
            <PushNotification><EventId>X</EventId><EventType>News</EventType>
            <EventDateTime>2020-01-01T00:00:00Z</EventDateTime>
            <EventParams><EventParam value="b" /><EventParam name="z" value="a" /><EventParam name="a" value="" /></EventParams>
            </PushNotification>
            """
        let event = try decode(xml).event
        #expect(event.parameterValues == ["b", "a", ""])
        #expect(event.params.map(\.name) == ["", "z", "a"])
        #expect(event.filters.isEmpty)
        #expect(event.isBroadcast, "News without UserId is a broadcast")
    }

    @Test func jsonAcceptsNumbersForValuesAndNullArrays() throws {
        let json = """
            {"EventId": 42, "EventType": "System", "EventDateTime": "2020-02-29T23:59:59.1-01:30",
             "EventFilters": [{"Name": "UserId", "Value": 119973638970}], "EventParams": null}
            """
        let event = try decode(json).event
        #expect(event.id == "42")
        #expect(event.type == .system)
        #expect(event.userIds == ["119973638970"])
        #expect(event.params.isEmpty)
        #expect(event.dateTime.description == "2020-02-29T23:59:59.1000000-01:30")
    }

    @Test func xmlEntitiesCDATAAndCommentsAreResolved() throws {
        let xml = """
            <?xml version="1.0"?>
            <!-- producer: billing -->
            <PushNotification>
              <EventId><![CDATA[A&B]]></EventId>
              <EventType>Mess&#97;ge</EventType>
              <EventDateTime>2014-04-30T17:32:47+03:00</EventDateTime>
              <EventFilters><Filter name="UserId" value="&#x31;&#50;" /></EventFilters>
              <EventParams><EventParam name="n" value="&lt;5 &amp; &quot;x&quot; &apos;y&apos; &gt;" /></EventParams>
              <?ignored instruction?>
            </PushNotification>
            """
        let event = try decode(xml).event
        #expect(event.id == "A&B")
        #expect(event.type == .message)
        #expect(event.userIds == ["12"])
        #expect(event.parameterValues == ["<5 & \"x\" 'y' >"])
    }

    // MARK: - Every error path names a field and a reason

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let document: String
        let code: EventDecodingError.Code
        let field: String
        var testDescription: String { name }
    }

    static let xmlCases: [Case] = [
        Case(
            name: "missing EventId", document: SeedSamples.xml.replacingOccurrences(of: "<EventId>EVENT 006</EventId>", with: ""), code: .missingField,
            field: "EventId"),
        Case(
            name: "missing EventType", document: SeedSamples.xml.replacingOccurrences(of: "<EventType>Message</EventType>", with: ""), code: .missingField,
            field: "EventType"),
        Case(
            name: "missing EventDateTime",
            document: SeedSamples.xml.replacingOccurrences(of: "<EventDateTime>2014-04-30T17:32:47.4123771+03:00</EventDateTime>", with: ""),
            code: .missingField, field: "EventDateTime"),
        Case(name: "empty EventId", document: SeedSamples.xml(eventId: "  "), code: .invalidValue, field: "EventId"),
        Case(name: "long EventId", document: SeedSamples.xml(eventId: String(repeating: "x", count: 300)), code: .limitExceeded, field: "EventId"),
        Case(name: "bad EventType", document: SeedSamples.xml.replacingOccurrences(of: ">Message<", with: ">Sms<"), code: .invalidValue, field: "EventType"),
        Case(name: "no offset", document: SeedSamples.xml.replacingOccurrences(of: "+03:00", with: ""), code: .invalidValue, field: "EventDateTime"),
        Case(
            name: "8 fraction digits", document: SeedSamples.xml.replacingOccurrences(of: "4123771", with: "41237711"), code: .invalidValue,
            field: "EventDateTime"),
        Case(
            name: "31 April", document: SeedSamples.xml.replacingOccurrences(of: "2014-04-30", with: "2014-04-31"), code: .invalidValue, field: "EventDateTime"),
        Case(
            name: "duplicate EventType",
            document: SeedSamples.xml.replacingOccurrences(
                of: "<EventType>Message</EventType>", with: "<EventType>Message</EventType><EventType>News</EventType>"), code: .duplicateField,
            field: "EventType"),
        Case(
            name: "filter without value",
            document: SeedSamples.xml.replacingOccurrences(of: "<Filter name=\"ZoneId\" value=\"w1\" />", with: "<Filter name=\"ZoneId\" />"),
            code: .missingField, field: "EventFilters/Filter[5]/@value"),
        Case(
            name: "filter without name",
            document: SeedSamples.xml.replacingOccurrences(of: "<Filter name=\"ZoneId\" value=\"w1\" />", with: "<Filter value=\"w1\" />"), code: .missingField,
            field: "EventFilters/Filter[5]/@name"),
        Case(
            name: "empty filter value", document: SeedSamples.xml.replacingOccurrences(of: "value=\"w1\"", with: "value=\" \""), code: .invalidValue,
            field: "EventFilters/Filter[5]"),
        Case(
            name: "param without value",
            document: SeedSamples.xml.replacingOccurrences(of: "<EventParam name=\"n2\" value=\"v2\" />", with: "<EventParam name=\"n2\" />"),
            code: .missingField, field: "EventParams/EventParam[2]/@value"),
        Case(name: "wrong root", document: "<Notification><EventId>x</EventId></Notification>", code: .unexpectedRoot, field: "document"),
        Case(name: "unclosed root", document: "<PushNotification><EventId>x</EventId>", code: .malformedDocument, field: "document"),
        Case(name: "DOCTYPE", document: "<!DOCTYPE PushNotification [<!ENTITY a \"b\">]><PushNotification/>", code: .forbiddenConstruct, field: "document"),
        Case(
            name: "undefined entity", document: SeedSamples.xml.replacingOccurrences(of: "EVENT 006", with: "&ent;"), code: .forbiddenConstruct,
            field: "EventId"),
        Case(name: "encoding", document: "<?xml version=\"1.0\" encoding=\"windows-1251\"?><PushNotification/>", code: .unsupportedEncoding, field: "document"),
        Case(name: "duplicate attribute", document: "<PushNotification a=\"1\" a=\"2\"/>", code: .malformedDocument, field: "document"),
        Case(name: "two roots", document: "<PushNotification/><PushNotification/>", code: .malformedDocument, field: "document"),
        Case(name: "control character", document: "<PushNotification>\u{01}</PushNotification>", code: .malformedDocument, field: "document"),
        // The reader streams; these pin which fault is reported when a document has two.
        Case(
            name: "bad field, then not well-formed",
            document: "<PushNotification><EventType>Sms</EventType><EventId>x</EventId><EventFilters>", code: .malformedDocument,
            field: "EventFilters"),
        Case(
            name: "two bad fields", document: SeedSamples.xml.replacingOccurrences(of: ">Message<", with: ">Sms<").replacingOccurrences(of: "+03:00", with: ""),
            code: .invalidValue, field: "EventType"),
        Case(
            name: "wrong root, then not well-formed", document: "<Notification><EventId>x</EventId>", code: .malformedDocument, field: "document"),
        Case(name: "empty", document: "  \n ", code: .unknownFormat, field: "document"),
        Case(name: "plain text", document: "EventId=1", code: .unknownFormat, field: "document"),
    ]

    @Test(arguments: xmlCases) func xmlErrors(_ c: Case) throws {
        let error = try #require(failure(c.document))
        #expect(error.code == c.code, "\(error.debugDescription)")
        #expect(error.field == c.field, "\(error.debugDescription)")
        #expect(!error.reason.isEmpty)
        #expect(error.description == "\(c.code) at \(c.field): \(error.reason)")
    }

    static let jsonCases: [Case] = [
        Case(
            name: "missing EventId", document: SeedSamples.json.replacingOccurrences(of: "\"EventId\" : \"EVENT 006\",", with: ""), code: .missingField,
            field: "EventId"),
        Case(name: "EventId object", document: SeedSamples.json.replacingOccurrences(of: "\"EVENT 006\"", with: "{}"), code: .wrongType, field: "EventId"),
        Case(name: "EventType number", document: SeedSamples.json.replacingOccurrences(of: "\"Message\"", with: "1"), code: .wrongType, field: "EventType"),
        Case(
            name: "bad EventType", document: SeedSamples.json.replacingOccurrences(of: "\"Message\"", with: "\"Push\""), code: .invalidValue, field: "EventType"
        ),
        Case(
            name: "bad date", document: SeedSamples.json.replacingOccurrences(of: "2014-04-30T", with: "2014-13-30T"), code: .invalidValue,
            field: "EventDateTime"),
        Case(
            name: "case duplicate",
            document: SeedSamples.json.replacingOccurrences(of: "\"EventType\" : \"Message\",", with: "\"EventType\" : \"Message\", \"eventtype\": \"News\","),
            code: .duplicateField, field: "eventtype"),
        Case(
            name: "exact duplicate",
            document: SeedSamples.json.replacingOccurrences(of: "\"EventType\" : \"Message\",", with: "\"EventType\" : \"Message\", \"EventType\": \"News\","),
            code: .malformedDocument, field: "document"),
        Case(
            name: "filters object", document: "{\"EventId\":\"a\",\"EventType\":\"News\",\"EventDateTime\":\"2020-01-01T00:00:00Z\",\"EventFilters\":{}}",
            code: .wrongType, field: "EventFilters"),
        Case(
            name: "filter string",
            document: "{\"EventId\":\"a\",\"EventType\":\"News\",\"EventDateTime\":\"2020-01-01T00:00:00Z\",\"EventFilters\":[\"UserId\"]}", code: .wrongType,
            field: "EventFilters[0]"),
        Case(
            name: "filter without Value",
            document: "{\"EventId\":\"a\",\"EventType\":\"News\",\"EventDateTime\":\"2020-01-01T00:00:00Z\",\"EventFilters\":[{\"Name\":\"UserId\"}]}",
            code: .missingField, field: "EventFilters[0].Value"),
        Case(
            name: "filter without Name",
            document: "{\"EventId\":\"a\",\"EventType\":\"News\",\"EventDateTime\":\"2020-01-01T00:00:00Z\",\"EventFilters\":[{\"Value\":\"1\"}]}",
            code: .missingField, field: "EventFilters[0].Name"),
        Case(
            name: "param Value null",
            document: "{\"EventId\":\"a\",\"EventType\":\"News\",\"EventDateTime\":\"2020-01-01T00:00:00Z\",\"EventParams\":[{\"Value\":null}]}",
            code: .wrongType, field: "EventParams[0].Value"),
        Case(name: "root array", document: "[1, 2]", code: .unexpectedRoot, field: "document"),
        Case(name: "trailing comma", document: "{\"EventId\":\"a\",}", code: .malformedDocument, field: "document"),
        Case(name: "single quotes", document: "{'EventId':'a'}", code: .malformedDocument, field: "document"),
        Case(name: "lone surrogate", document: "{\"EventId\":\"\\ud800\"}", code: .malformedDocument, field: "document"),
        Case(name: "deep", document: String(repeating: "[", count: 100) + String(repeating: "]", count: 100), code: .limitExceeded, field: "document"),
        Case(name: "garbage after", document: SeedSamples.json + " x", code: .malformedDocument, field: "document"),
        Case(name: "charset", document: SeedSamples.json, code: .unsupportedEncoding, field: "content-type"),
    ]

    @Test(arguments: jsonCases) func jsonErrors(_ c: Case) throws {
        let contentType = c.name == "charset" ? "application/json; charset=windows-1251" : nil
        let error = try #require(failure(c.document, contentType: contentType))
        #expect(error.code == c.code, "\(error.debugDescription)")
        #expect(error.field == c.field, "\(error.debugDescription)")
        #expect(error.description == "\(c.code) at \(c.field): \(error.reason)")
    }

    @Test func byteLevelErrors() throws {
        func fail(_ bytes: [UInt8], limits: DecodingLimits = .default) -> EventDecodingError? {
            do {
                _ = try EventDecoder(limits: limits).decode(bytes)
                return nil
            } catch {
                return error
            }
        }
        var invalid = Array(SeedSamples.xml.utf8)
        invalid[30] = 0xFF
        let utf8 = try #require(fail(invalid))
        #expect(utf8.code == .invalidUTF8)
        #expect(utf8.offset == 30)
        #expect(try #require(fail([0xC0, 0xAF])).code == .invalidUTF8, "overlong '/'")
        #expect(try #require(fail([0x7B, 0xED, 0xA0, 0x80, 0x7D])).code == .invalidUTF8, "encoded surrogate")
        #expect(try #require(fail([0xFF, 0xFE, 0x3C, 0x00])).code == .unsupportedEncoding)
        #expect(try #require(fail(Array("<\0P\0".utf8))).code == .unsupportedEncoding)
        let big = try #require(fail(Array(SeedSamples.xml.utf8), limits: DecodingLimits(maxDocumentBytes: 100)))
        #expect(big.code == .tooLarge)
        let many = try #require(fail(Array(SeedSamples.xml.utf8), limits: DecodingLimits(maxFilters: 2)))
        #expect(many.code == .limitExceeded)
        #expect(many.field == "EventFilters/Filter[3]")
    }

    @Test func descriptionHidesValuesAndDebugDescriptionShowsThem() throws {
        let error = try #require(failure(SeedSamples.xml.replacingOccurrences(of: ">Message<", with: ">secret-value<")))
        #expect(!error.description.contains("secret-value"))
        #expect(error.debugDescription.contains("secret-value"))
    }

    @Test func dataOverloadMatchesBytes() throws {
        let data = Data(SeedSamples.json.utf8)
        #expect(try decoder.decode(data).event == SeedSamples.event)
    }
}
