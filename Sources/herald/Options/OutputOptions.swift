import ArgumentParser

/// `--json`, shared by the commands that list things: one JSON document on standard output
/// instead of the table, for scripts (`jq`).
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print one JSON document instead of the table.")
    var json = false
}
