import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

/// `herald templates import DIR`: reads the `.resx` texts and `events.json` of a folder (as
/// `herald preview` does), checks that every text compiles, and replaces the templates in the
/// database in one transaction (every worker reloads them through LISTEN/NOTIFY).
struct TemplatesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "templates", abstract: "Manage notification templates.", subcommands: [Import.self]
    )

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import the templates of a folder (AppleMessages.<culture>.resx, AndroidMessages.<culture>.resx, events.json).",
            discussion: "Problems are reported with the file they are in; nothing is imported then and the exit status is 1."
        )

        @Argument(help: "Folder with the template files.")
        var directory: String

        @OptionGroup var database: DatabaseOptions

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let (settings, logger) = try global.settings(database, logger: "herald.templates")
            let catalog: TemplateCatalog
            do {
                catalog = try TemplateFolder.catalog(directory, settings: settings)
            } catch {
                Console.error("herald templates import: \(directory): \(error)")
                throw ExitCode.failure
            }
            if !catalog.problems.isEmpty {
                for problem in catalog.problems {
                    Console.error("error: \(Self.fileName(of: problem)): \(problem)")
                }
                Console.error("herald templates import: \(catalog.problems.count) template text(s) do not compile; nothing was imported")
                throw ExitCode.failure
            }
            do {
                let summary = try await RuntimeSettings.withStore(settings, logger: logger) { store in try await store.templates.replaceAll(with: catalog) }
                Console.out("Imported \(summary.templates) templates for \(summary.events) events from \(directory).")
            } catch {
                Console.error("herald templates import: \(error)")
                throw ExitCode.failure
            }
        }

        /// The file a compile problem comes from.
        static func fileName(of problem: TemplateError) -> String {
            guard let platform = problem.platform, let culture = problem.culture else { return problem.source ?? "templates" }
            return "\(platform == .ios ? "AppleMessages" : "AndroidMessages").\(culture).resx"
        }
    }
}
