import Foundation
@testable import HeraldCore

/// The two samples of seed 000 ("Формат XML сообщений" / "Формат сообщения в БД").
///
/// The seed's XML, verbatim (inside the SQL `INSERT`), has an OCR glitch on one line:
///
///     <EventDateTime>2014-04-30T17:32:47.4123771+03:00/EventDateTime>
///
/// (the `<` of the end tag is missing). ``xml`` is the corrected document; ``xmlAsPrinted``
/// keeps the glitch and must be rejected with a field-naming error.
///
/// The seed's JSON sample is cut at the top by the page break: it starts at
/// `}, { "Name" : "ZoneId", "Value" : "w1" }`, and ends with `1` where `]` was printed.
/// ``json`` restores the head from the XML sample's fields (EventId, EventType, EventDateTime,
/// the three UserId filters, CultureId) in the same style, and `]` at the end.
enum SeedSamples {
    static let xml = """
        <PushNotification>
         <EventId>EVENT 006</EventId>
         <EventType>Message</EventType>
         <EventDateTime>2014-04-30T17:32:47.4123771+03:00</EventDateTime>
         <EventFilters>
          <Filter name="UserId" value="119973638970" />
          <Filter name="UserId" value="119973638971" />
          <Filter name="UserId" value="119973638972" />
          <Filter name="CultureId" value="ru-RU" />
          <Filter name="ZoneId" value="w1" />
          <Filter name="ZoneId" value="yessplay" />
          <Filter name="BranchId" value="101" />
         </EventFilters>
         <EventParams>
          <EventParam name="n1" value="v1" />
          <EventParam name="n2" value="v2" />
          <EventParam name="n3" value="v3" />
         </EventParams>
        </PushNotification>
        """

    static let xmlAsPrinted = xml.replacingOccurrences(of: "+03:00</EventDateTime>", with: "+03:00/EventDateTime>")

    static let json = """
        {
            "EventId" : "EVENT 006",
            "EventType" : "Message",
            "EventDateTime" : "2014-04-30T17:32:47.4123771+03:00",
            "EventFilters" : [{
                    "Name" : "UserId",
                    "Value" : "119973638970"
              }, {
                    "Name" : "UserId",
                    "Value" : "119973638971"
              }, {
                    "Name" : "UserId",
                    "Value" : "119973638972"
              }, {
                    "Name" : "CultureId",
                    "Value" : "ru-RU"
              }, {
                    "Name" : "ZoneId",
                    "Value" : "w1"
              }, {
                    "Name" : "ZoneId",
                    "Value" : "yessplay"
              }, {
                    "Name" : "BranchId",
                    "Value" : "101"
              }
            ],
            "EventParams" : [{
                    "Name" : "n1",
                    "Value" : "v1"
              }, {
                    "Name" : "n2",
                    "Value" : "v2"
              }, {
                    "Name" : "n3",
                    "Value" : "v3"
               }
            ]
        }
        """

    /// The event both samples describe.
    static let event = Event(
        id: "EVENT 006",
        type: .message,
        dateTime: EventTimestamp(ticksSinceEpoch: 13_988_683_674_123_771, utcOffsetSeconds: 10_800),
        filters: [
            EventFilter(name: .userId, value: "119973638970"),
            EventFilter(name: .userId, value: "119973638971"),
            EventFilter(name: .userId, value: "119973638972"),
            EventFilter(name: .cultureId, value: "ru-RU"),
            EventFilter(name: .zoneId, value: "w1"),
            EventFilter(name: .zoneId, value: "yessplay"),
            EventFilter(name: .branchId, value: "101"),
        ],
        params: [
            EventParameter(name: "n1", value: "v1"),
            EventParameter(name: "n2", value: "v2"),
            EventParameter(name: "n3", value: "v3"),
        ]
    )

    /// The XML sample with another EventId (one of table 2).
    static func xml(eventId: String) -> String {
        xml.replacingOccurrences(of: "EVENT 006", with: eventId)
    }

    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
}

/// The repository's `templates/` folder and the test target's `Golden/` folder, found from this
/// source file (tests always run from a checkout).
enum RepositoryFiles {
    static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let templatesFolder = testsFolder.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("templates")
    static let goldenFolder = testsFolder.appendingPathComponent("Golden")

    static func templateSources() throws -> [TemplateSource] {
        try FileManager.default.contentsOfDirectory(atPath: templatesFolder.path).sorted().map { name in
            TemplateSource(fileName: name, contents: [UInt8](try Data(contentsOf: templatesFolder.appendingPathComponent(name))))
        }
    }

    static func shippedCatalog() throws -> TemplateCatalog {
        try TemplateBundle.catalog(files: try templateSources(), defaultCulture: "ru-RU")
    }
}
