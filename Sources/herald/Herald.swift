import ArgumentParser
import HeraldCore

/// The `herald` command line: every operator and SRE task is a subcommand.
@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Push-notification delivery: RabbitMQ events to APNs and FCM.",
        version: HeraldVersion.current,
        subcommands: [
            WorkerCommand.self, DrainCommand.self, PublishCommand.self, DeadLetterCommand.self, MigrateCommand.self, TemplatesCommand.self,
            DevicesCommand.self, DeliveriesCommand.self, BenchCommand.self, SenderBenchCommand.self, PreviewCommand.self, ConfigCommand.self,
            SandboxCommand.self,
            APICommand.self, ServeCommand.self,
        ]
    )
}
