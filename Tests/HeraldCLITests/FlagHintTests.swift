import Foundation
import HeraldTesting
import Testing

@testable import herald

/// Every flag a message tells an operator to use exists: the hints are checked against the
/// commands' own ArgumentParser definitions (`herald --experimental-dump-help`), so a renamed
/// flag, or a hint that guessed one (`--url` for `--database-url`), fails here.
@Suite struct FlagHintTests {
    /// The part of ArgumentParser's help dump that names commands and their flags.
    struct Command: Decodable {
        struct Argument: Decodable {
            struct Name: Decodable {
                var kind: String
                var name: String
            }
            var names: [Name]?
        }
        var commandName: String
        var subcommands: [Command]?
        var arguments: [Argument]?

        /// `path` → the command's long flags, for this command and every one below it.
        func flags(path: String = "") -> [String: Set<String>] {
            let here = path.isEmpty ? commandName : "\(path) \(commandName)"
            let own = Set((arguments ?? []).flatMap { $0.names ?? [] }.filter { $0.kind == "long" }.map { "--\($0.name)" })
            var result = [here: own]
            for command in subcommands ?? [] { result.merge(command.flags(path: here)) { $0.union($1) } }
            return result
        }
    }

    static func commandFlags() throws -> [String: Set<String>] {
        let dump = try HeraldCLI.run(["--experimental-dump-help"], timeout: .seconds(30))
        try #require(dump.status == 0, "\(dump.stderr)")
        struct Tool: Decodable { var command: Command }
        return try JSONDecoder().decode(Tool.self, from: Data(dump.stdout.utf8)).command.flags()
    }

    @Test func everySettingKeysFlagExists() throws {
        let all = try Self.commandFlags().values.reduce(into: Set<String>()) { $0.formUnion($1) }
        #expect(all.contains("--database-url") && all.contains("--amqp-url"))
        for key in SettingKey.all {
            guard let flag = key.flag else { continue }
            #expect(all.contains(flag), "\(key.dotted) names \(flag), which no command has")
        }
    }

    /// Every `--flag` written in the `herald` executable's sources (hints, help texts,
    /// validation messages, and the doc comments that quote them) is a flag of some command.
    @Test func everyFlagInAMessageExists() throws {
        let all = try Self.commandFlags().values.reduce(into: Set<String>()) { $0.formUnion($1) }
        let folder = TestEnvironment.packageRoot.appendingPathComponent("Sources/herald")
        let files = try #require(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20)
        let flag = try NSRegularExpression(pattern: #"(?<![\w-])--[a-z][a-z0-9-]*"#)
        var checked = 0
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for match in flag.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let name = String(text[try #require(Range(match.range, in: text))])
                checked += 1
                #expect(all.contains(name), "\(file): \"\(name)\" is not a flag of any herald command")
            }
        }
        #expect(checked > 10)
    }

    /// The hint for a missing database URL names the flag the command has, and none when it has
    /// none (`herald api` reads it only from the environment or the file).
    @Test func aMissingDatabaseURLNamesTheRealFlag() throws {
        let environment = ["HERALD_DATABASE_URL": "", "HERALD_CONFIG": ""]
        let list = try HeraldCLI.run(["devices", "list"], environment: environment, timeout: .seconds(30))
        #expect(list.status != 0)
        #expect(list.stderr.contains("use --database-url, HERALD_DATABASE_URL or `database.url`"), "\(list.stderr)")
        #expect(!list.stderr.contains("--url"), "\(list.stderr)")

        var settings = Settings(file: [:], environment: [:])
        #expect(settings.howToSet(.databaseURL) == "HERALD_DATABASE_URL or `database.url` in the configuration file")
        settings.set(.databaseURL, flag: nil)
        #expect(settings.howToSet(.databaseURL) == "--database-url, HERALD_DATABASE_URL or `database.url` in the configuration file")
    }
}
