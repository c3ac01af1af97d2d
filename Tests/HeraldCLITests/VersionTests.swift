import Foundation
import HeraldTesting
import Testing

@Suite struct VersionTests {
    @Test func versionAndHelpPrint() throws {
        let version = try HeraldCLI.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3)

        let help = try HeraldCLI.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: herald"))
    }
}
