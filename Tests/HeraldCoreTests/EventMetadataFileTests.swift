import Testing

@testable import HeraldCore

@Suite struct EventMetadataFileTests {
    func parse(_ text: String) throws(TemplateError) -> [EventMetadata] {
        try EventMetadataFile.parse(Array(text.utf8))
    }

    @Test func readsAllFields() throws {
        let m = try parse(
            """
            {"format": "herald-event-metadata/1", "events": {
              "B": {"priority": "normal", "private": false, "silent": true},
              "A": {"tag": "payments", "category": "PAY", "targetScreen": "timeline", "priority": "high", "sound": "default",
                    "androidChannel": "money_in", "private": true, "silent": false, "ttlSeconds": 60, "description": "d", "note": "n"}}}
            """)
        #expect(
            m == [
                EventMetadata(
                    eventId: "A", tag: "payments", category: "PAY", targetScreen: .timeline, priority: .high, sound: "default",
                    androidChannel: "money_in", isPrivate: true, isSilent: false, timeToLiveSeconds: 60),
                EventMetadata(eventId: "B", priority: .normal, isPrivate: false, isSilent: true),
            ])
    }

    @Test(arguments: [
        ("[]", "must be a JSON object"),
        ("{}", "events"),
        ("{\"events\": {}, \"extra\": 1}", "extra"),
        ("{\"format\": \"v2\", \"events\": {}}", "format"),
        ("{\"events\": {\"A\": 1}}", "events.A"),
        ("{\"events\": {\"A\": {\"private\": true, \"silent\": false}}}", "events.A.priority"),
        ("{\"events\": {\"A\": {\"priority\": \"urgent\", \"private\": true, \"silent\": false}}}", "events.A.priority"),
        ("{\"events\": {\"A\": {\"priority\": \"high\", \"silent\": false}}}", "events.A.private"),
        ("{\"events\": {\"A\": {\"priority\": \"high\", \"private\": true, \"silent\": false, \"priorty\": 1}}}", "events.A.priorty"),
        ("{\"events\": {\"A\": {\"priority\": \"high\", \"private\": true, \"silent\": false, \"tag\": 5}}}", "events.A.tag"),
        ("{\"events\": {\"A\": {\"priority\": \"high\", \"private\": true, \"silent\": false, \"ttlSeconds\": -1}}}", "events.A.ttlSeconds"),
        ("{\"events\": {\"A\": {\"priority\": \"high\", \"private\": true, \"silent\": false, \"ttlSeconds\": 1.5}}}", "events.A.ttlSeconds"),
        ("{\"events\": {\"A\": {\"priority\": \"high\", \"private\": true, \"silent\": false, \"androidChannel\": \"\"}}}", "events.A.androidChannel"),
        ("{\"events\": {\"A\": {\"priority\": \"high\", \"private\": true, \"silent\": false, \"androidChannel\": 1}}}", "events.A.androidChannel"),
        ("{\"events\": {\"A\": {\"priority\": \"high\", \"private\": true, \"silent\": false, \"channel\": \"x\"}}}", "events.A.channel"),
        ("{\"events\": ", "unexpected end"),
    ])
    func errorsNameThePath(_ text: String, _ part: String) {
        do {
            _ = try parse(text)
            Issue.record("parsed")
        } catch {
            #expect(error.code == .invalidMetadata)
            #expect(error.description.contains(part), "\(error)")
        }
    }
}
