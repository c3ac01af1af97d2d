import Foundation
import PropertyBased
import Testing

@testable import HeraldCore

/// Random events written as XML and as JSON (with every escape either format needs) decode back
/// to the same event: the two decoders agree with each other and with the model.
@Suite struct DecoderRoundTripTests {
    static let pool: [String] = ["a", "Z", "7", " ", "&", "<", ">", "\"", "'", "\t", "\n", "é", "ж", "€", "😀", "]]>", "{0}", "\\", "/"]

    static func text(_ rng: inout SplitMix64, max: Int = 8, trimmed: Bool = false) -> String {
        var s = (0..<Int.random(in: 0...max, using: &rng)).map { _ in pool[Int.random(in: 0..<pool.count, using: &rng)] }.joined()
        if trimmed {
            s = s.trimmingCharacters(in: CharacterSet(charactersIn: " \t\n\r"))
            if s.isEmpty { s = "x" }
        }
        return s
    }

    static func randomEvent(_ rng: inout SplitMix64) -> Event {
        let names: [FilterName] = [.userId, .cultureId, .zoneId, .branchId, FilterName(rawValue: "Segment")]
        return Event(
            id: text(&rng, trimmed: true),
            type: EventType.allCases[Int.random(in: 0..<4, using: &rng)],
            dateTime: EventTimestamp(
                ticksSinceEpoch: Int64.random(in: 0...4_000_000_000_000_000_0, using: &rng) / 10,
                utcOffsetSeconds: Int32(Int.random(in: -48...56, using: &rng) * 900)),
            filters: (0..<Int.random(in: 0...6, using: &rng)).map { _ in
                EventFilter(name: names[Int.random(in: 0..<names.count, using: &rng)], value: text(&rng, trimmed: true))
            },
            params: (0..<Int.random(in: 0...5, using: &rng)).map { _ in EventParameter(name: text(&rng), value: text(&rng)) }
        )
    }

    static func xmlEscaped(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t": out += "&#9;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func xml(_ e: Event) -> String {
        var s = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<PushNotification>\n"
        s += " <EventId><![CDATA[\(e.id.replacingOccurrences(of: "]]>", with: "]]]]><![CDATA[>"))]]></EventId>\n"
        s += " <EventType>\(e.type.rawValue)</EventType>\n <EventDateTime>\(e.dateTime)</EventDateTime>\n <EventFilters>\n"
        for f in e.filters { s += "  <Filter name=\"\(xmlEscaped(f.name.rawValue))\" value='\(xmlEscaped(f.value))' />\n" }
        s += " </EventFilters>\n <EventParams>\n"
        for p in e.params { s += "  <EventParam name=\"\(xmlEscaped(p.name))\" value=\"\(xmlEscaped(p.value))\"></EventParam>\n" }
        return s + " </EventParams>\n</PushNotification>\n"
    }

    static func json(_ e: Event) -> String {
        JSONValue.object([
            "EventId": .string(e.id),
            "EventType": .string(e.type.rawValue),
            "EventDateTime": .string(e.dateTime.description),
            "EventFilters": .array(e.filters.map { .object(["Name": .string($0.name.rawValue), "Value": .string($0.value)]) }),
            "EventParams": .array(e.params.map { .object(["Name": .string($0.name), "Value": .string($0.value)]) }),
        ]).prettyPrinted()
    }

    @Test func randomEventsSurviveBothFormats() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            let event = Self.randomEvent(&rng)
            let decoder = EventDecoder()
            let fromXML = try? decoder.decode(Array(Self.xml(event).utf8)).event
            let fromJSON = try? decoder.decode(Array(Self.json(event).utf8)).event
            #expect(fromXML == event, "XML: \(Self.xml(event))")
            #expect(fromJSON == event, "JSON: \(Self.json(event))")
        }
    }
}
