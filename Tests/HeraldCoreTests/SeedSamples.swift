import Foundation
import HeraldTesting
import Testing

@testable import HeraldCore

/// The two samples of seed 000 (``SeedSampleDocuments``) and the event they describe.
enum SeedSamples {
    static let xml = SeedSampleDocuments.xml

    static let xmlAsPrinted = SeedSampleDocuments.xmlAsPrinted

    static let json = SeedSampleDocuments.json

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

    /// Compares `actual` byte for byte with `Golden/<path>`. `HERALD_UPDATE_GOLDEN=1` rewrites
    /// the file instead (and its folder); a missing file fails.
    static func checkGolden(_ actual: [UInt8], _ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = goldenFolder.appendingPathComponent(path)
        if ProcessInfo.processInfo.environment["HERALD_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(actual).write(to: url)
            return
        }
        let expected = try #require(FileManager.default.contents(atPath: url.path), "missing golden \(path)", sourceLocation: sourceLocation)
        #expect([UInt8](expected) == actual, "\(path): got \(String(decoding: actual, as: UTF8.self))", sourceLocation: sourceLocation)
    }
}
