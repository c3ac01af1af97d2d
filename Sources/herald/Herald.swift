import ArgumentParser
import HeraldCore

/// The `herald` command line: every operator and SRE task is a subcommand, listed by task in
/// `herald --help`.
@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Push-notification delivery: RabbitMQ events to APNs and FCM.",
        version: HeraldVersion.current,
        groupedSubcommands: [
            CommandGroup(name: "Service", subcommands: [WorkerCommand.self, APICommand.self, ServeCommand.self, DrainCommand.self]),
            CommandGroup(
                name: "Setup", subcommands: [MigrateCommand.self, TemplatesCommand.self, DevicesCommand.self, ConfigCommand.self]),
            CommandGroup(
                name: "Operations",
                subcommands: [SendCommand.self, DeliveriesCommand.self, DeadLetterCommand.self, PublishCommand.self, PreviewCommand.self]),
            CommandGroup(name: "Test and benchmark", subcommands: [SandboxCommand.self, BenchCommand.self, SenderBenchCommand.self]),
        ]
    )
}
