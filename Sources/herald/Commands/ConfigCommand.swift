import ArgumentParser
import Foundation
import HeraldCore

/// `herald config keys` lists every key with its environment variable; `herald config show`
/// prints the resolved values and where each came from, with secrets hidden.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show configuration keys and resolved values.",
        subcommands: [Keys.self, Show.self]
    )

    struct Keys: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every configuration key.")

        @OptionGroup var output: OutputOptions

        func run() {
            if output.json {
                let keys = SettingKey.all.map { key in
                    JSONValue.object([
                        "key": .string(key.dotted), "environment": .string(key.environmentName), "flag": key.flag.map(JSONValue.string) ?? .null,
                        "secret": .bool(key.isSecret), "help": .string(key.help),
                    ])
                }
                print(JSONValue.object(["keys": .array(keys)]).serializedString())
                return
            }
            for key in SettingKey.all {
                print("\(key.dotted.padding(toLength: 30, withPad: " ", startingAt: 0)) \(key.environmentName)")
                print("    \(key.help)")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print resolved values and their sources.")

        @OptionGroup var output: OutputOptions
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let settings = try global.settings()
            if output.json {
                let values = SettingKey.all.compactMap { key -> JSONValue? in
                    guard let (value, source) = settings.lookup(key) else { return nil }
                    return .object([
                        "key": .string(key.dotted), "value": key.isSecret ? .null : .string(value), "secret": .bool(key.isSecret), "source": .string(source),
                    ])
                }
                print(JSONValue.object(["values": .array(values)]).serializedString())
                return
            }
            for key in SettingKey.all {
                guard let (value, source) = settings.lookup(key) else { continue }
                let shown = key.isSecret ? "(set, hidden)" : value
                print("\(key.dotted) = \(shown)    [\(source)]")
            }
        }
    }
}
