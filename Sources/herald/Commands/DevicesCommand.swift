import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore
import HeraldWorker

/// `herald devices import FILE` and `herald devices list [--user ID]`: bring registrations over
/// from an earlier system (an export of Azure Notification Hubs registrations, say) and look at
/// what is stored.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "Import and list device registrations.", subcommands: [Import.self, List.self]
    )

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import devices from JSON lines or CSV.",
            discussion: """
                Fields: device_id, platform (ios|android), token, user_id, culture, zone, branch, tags \
                (JSON array, or ';'-separated in CSV), app. CSV may start with a header line naming \
                the columns; otherwise they are in that order. Bad rows are reported with their line \
                numbers and the good rows are still imported; the exit status is then 1.
                """
        )

        @Argument(help: "The file to import ('-' reads standard input).")
        var file: String

        @OptionGroup var database: DatabaseOptions

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let (settings, logger) = try global.settings(database, logger: "herald.devices")
            let data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: file)
            guard let data else {
                Console.error("herald devices import: cannot read \(file)")
                throw ExitCode.failure
            }
            let (registrations, problems) = DeviceFileParser.parse(String(decoding: data, as: UTF8.self))
            for problem in problems { Console.error("\(file):\(problem.line): \(problem.reason)") }
            var imported = 0
            if !registrations.isEmpty {
                do {
                    imported = try await RuntimeSettings.withStore(settings, logger: logger) { store in try await store.devices.importDevices(registrations) }
                } catch {
                    Console.error("herald devices import: \(error)")
                    throw ExitCode.failure
                }
            }
            Console.out("Imported \(imported) subscriptions from \(registrations.count) rows; \(problems.count) bad rows.")
            if !problems.isEmpty { throw ExitCode.failure }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List devices, optionally only one user's.")

        @Option(help: "Only devices this user is subscribed on.")
        var user: String?

        @Option(help: "Most devices to show.")
        var limit: Int = 100

        @OptionGroup var database: DatabaseOptions

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let (settings, logger) = try global.settings(database, logger: "herald.devices")
            let devices: [Device]
            do {
                devices = try await RuntimeSettings.withStore(settings, logger: logger) { store in try await store.devices.list(userId: user, limit: limit) }
            } catch {
                Console.error("herald devices list: \(error)")
                throw ExitCode.failure
            }
            Console.out("DEVICE\tAPP\tPLATFORM\tTOKEN\tCULTURE\tSTATE\tNEXT POS\tUSERS")
            for device in devices {
                let users = device.users.map { user in
                    var text = user.userId
                    if let zone = user.zoneId { text += " zone=\(zone)" }
                    if let branch = user.branchId { text += " branch=\(branch)" }
                    if let tags = user.tags, !tags.isEmpty { text += " tags=\(tags.sorted().joined(separator: ";"))" }
                    return text
                }.joined(separator: ", ")
                Console.out(
                    "\(device.deviceId)\t\(device.app ?? "default")\t\(device.platform)\t\(device.token.map(LogKey.shortToken) ?? "-")\t\(device.culture)\t\(device.tokenState)\t\(device.nextPosition)\t\(users)"
                )
            }
            Console.out("\(devices.count) device(s)")
        }
    }
}
