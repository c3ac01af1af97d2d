import ArgumentParser
import Foundation

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

        func run() {
            for key in SettingKey.all {
                print("\(key.dotted.padding(toLength: 30, withPad: " ", startingAt: 0)) \(key.environmentName)")
                print("    \(key.help)")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print resolved values and their sources.")

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let settings = try global.settings()
            for key in SettingKey.all {
                guard let (value, source) = settings.lookup(key) else { continue }
                let shown = key.isSecret ? "(set, hidden)" : value
                print("\(key.dotted) = \(shown)    [\(source)]")
            }
        }
    }
}
