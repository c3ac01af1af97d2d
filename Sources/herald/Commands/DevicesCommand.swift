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
                numbers and the good rows are still imported; the exit status is then 1. The file \
                is read line by line and written in chunks of 10,000 rows (one transaction each), \
                with a progress line on standard error: an interrupted import keeps the chunks \
                before it, and running it again is safe (the last row for a device wins).
                """
        )

        /// Rows written per transaction.
        static let chunkRows = 10_000

        @Argument(help: "The file to import ('-' reads standard input).")
        var file: String

        @OptionGroup var database: DatabaseOptions

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let (settings, logger) = try global.settings(database, logger: "herald.devices")
            let reader: LineReader
            do {
                reader = try LineReader(path: file)
            } catch {
                Console.error("herald devices import: cannot read \(file)")
                throw ExitCode.failure
            }
            let size = file == "-" ? nil : (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
            var tally = ImportTally()
            do {
                try await RuntimeSettings.withStore(settings, logger: logger) { store in
                    var parser = DeviceFileParser()
                    var chunk: [DeviceRegistration] = []
                    var number = 0
                    let throttle = ProgressThrottle()
                    _ = throttle.due(every: .seconds(2))
                    while let line = try reader.next() {
                        number += 1
                        switch parser.parse(line: line, number: number) {
                        case .success(let registration)?: chunk.append(registration)
                        case .failure(let problem)?:
                            Console.error("\(file):\(problem.line): \(problem.reason)")
                            tally.badLines.append(problem.line)
                        case nil: break
                        }
                        if chunk.count >= Self.chunkRows {
                            tally.add(rows: chunk.count, subscriptions: try await store.devices.importDevices(chunk))
                            chunk.removeAll(keepingCapacity: true)
                            if throttle.due(every: .seconds(2)) {
                                Self.progress(tally, bytes: reader.bytesRead, of: size)
                                tally.showedProgress = true
                            }
                        }
                    }
                    tally.add(rows: chunk.count, subscriptions: try await store.devices.importDevices(chunk))
                }
            } catch {
                if Console.isTerminal && tally.showedProgress { Console.error("") }
                Console.error("herald devices import: \(error) (after \(tally.rows) rows; the chunks before were imported)")
                throw ExitCode.failure
            }
            if Console.isTerminal && tally.showedProgress { Console.error("") }
            Console.out("Imported \(tally.subscriptions) subscriptions from \(tally.rows) rows; \(tally.badLines.count) bad rows.")
            if !tally.badLines.isEmpty {
                let shown = tally.badLines.prefix(50).map(String.init).joined(separator: ", ")
                Console.out("Bad rows at lines \(shown)\(tally.badLines.count > 50 ? " and \(tally.badLines.count - 50) more" : "").")
                throw ExitCode.failure
            }
        }

        /// `imported 50000 rows, 3 bad, 42 % of the file`: redrawn on a terminal, else a line.
        static func progress(_ tally: ImportTally, bytes: Int, of size: Int?) {
            var line = "imported \(tally.rows) rows, \(tally.badLines.count) bad"
            if let size, size > 0 { line += ", \(min(100, bytes * 100 / size)) % of the file" }
            if Console.isTerminal { Console.status(line) } else { Console.error(line) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List devices, optionally only one user's.")

        @Option(help: "Only devices this user is subscribed on.")
        var user: String?

        @Option(help: "Most devices to show.")
        var limit: Int = 100

        @OptionGroup var output: OutputOptions
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
            if output.json {
                Console.out(Self.json(devices, limit: limit).serializedString())
                return
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

        /// `{"devices":[…],"limit_reached":…}`: the table's fields by name, tokens shortened as
        /// in the table and the logs.
        static func json(_ devices: [Device], limit: Int) -> JSONValue {
            func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
            let list = devices.map { device in
                JSONValue.object([
                    "device_id": .string(device.deviceId), "app": text(device.app), "platform": .string(device.platform.rawValue),
                    "token": text(device.token.map(LogKey.shortToken)), "culture": .string(device.culture),
                    "token_state": .string("\(device.tokenState)"), "next_position": .int(device.nextPosition),
                    "users": .array(
                        device.users.map { user in
                            .object([
                                "user_id": .string(user.userId), "zone": text(user.zoneId), "branch": text(user.branchId),
                                "tags": user.tags.map { .array($0.sorted().map(JSONValue.string)) } ?? .null,
                            ])
                        }),
                ])
            }
            return .object(["devices": .array(list), "limit_reached": .bool(devices.count == limit)])
        }
    }
}

/// What `herald devices import` has done so far.
struct ImportTally {
    var rows = 0
    var subscriptions = 0
    var badLines: [Int] = []
    /// A progress line was printed (on a terminal it then needs ending).
    var showedProgress = false

    mutating func add(rows: Int, subscriptions: Int) {
        self.rows += rows
        self.subscriptions += subscriptions
    }
}
