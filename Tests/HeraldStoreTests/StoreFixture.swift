import Foundation
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

/// The store tests' shared helpers (the store itself: ``HeraldTesting/TestStore``).
enum StoreFixture {
    /// The repository's `templates/` folder as HeraldCore reads it.
    static func repositoryTemplates(defaultCulture: String = "ru-RU") throws -> TemplateCatalog {
        let folder = TestEnvironment.packageRoot.appendingPathComponent("templates")
        var files: [TemplateSource] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        where name.hasSuffix(".resx") || name == EventMetadataFile.fileName {
            let data = try #require(FileManager.default.contents(atPath: folder.appendingPathComponent(name).path))
            files.append(TemplateSource(fileName: name, contents: Array(data)))
        }
        return try TemplateBundle.catalog(files: files, defaultCulture: defaultCulture)
    }

    static func registration(
        _ deviceId: String, user: String, token: String? = nil, platform: Platform = .ios, culture: String = "ru-RU",
        tags: Set<String> = [], app: String? = nil, zone: String? = nil, branch: String? = nil
    ) -> DeviceRegistration {
        DeviceRegistration(
            deviceId: deviceId, app: app, platform: platform, token: token ?? "token-\(deviceId)", culture: culture, userId: user,
            zoneId: zone, branchId: branch, tags: tags
        )
    }
}

/// Rates for log lines.
func rate(_ count: Int, _ elapsed: Duration) -> Int {
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return seconds > 0 ? Int(Double(count) / seconds) : 0
}
