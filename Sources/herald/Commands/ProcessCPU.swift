import Foundation

/// CPU time of a process from `/proc/<pid>/stat`, for the benchmarks (`herald bench`,
/// `herald sender-bench`) that print CPU per delivery.
enum ProcessCPU {
    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// utime + stime of a process (`self` for this one), in seconds (fields 14 and 15 of
    /// `/proc/<pid>/stat`); with `includingEndedChildren`, also cutime + cstime (16 and 17): the
    /// CPU of its children that have ended and been waited for.
    static func seconds(pid: String = "self", includingEndedChildren: Bool = false) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return seconds(stat: stat, includingEndedChildren: includingEndedChildren)
    }

    /// The CPU seconds in one `/proc/<pid>/stat` line.
    static func seconds(stat: String, includingEndedChildren: Bool) -> Double? {
        // The command name is in parentheses and may itself hold spaces and parentheses: fields
        // are counted after the last ")", where the state is field 3.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let wanted = includingEndedChildren ? 11...14 : 11...12
        guard fields.count > wanted.upperBound else { return nil }
        var ticks = 0.0
        for index in wanted {
            guard let value = Double(fields[index]) else { return nil }
            ticks += value
        }
        return ticks / ticksPerSecond
    }
}
