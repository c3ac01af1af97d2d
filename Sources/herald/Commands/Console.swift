import Foundation

/// Output helpers shared by the operator commands: errors to standard error, and whether
/// standard error is a terminal (progress lines are redrawn in place only then).
enum Console {
    static func error(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    static func out(_ message: String) {
        FileHandle.standardOutput.write(Data((message + "\n").utf8))
    }

    static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Rewrites the current terminal line (no newline).
    static func status(_ line: String) {
        FileHandle.standardError.write(Data(("\r\u{1B}[2K" + line).utf8))
    }

    /// `1.2s`, `3m04s`.
    static func duration(_ d: Duration) -> String {
        let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        if seconds < 60 { return String(format: "%.1fs", seconds) }
        let whole = Int(seconds)
        return String(format: "%dm%02ds", whole / 60, whole % 60)
    }
}
