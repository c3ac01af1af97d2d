import Foundation
import Testing

@testable import herald

@Suite struct ProcessCPUTests {
    /// A `/proc/<pid>/stat` line whose command name holds spaces and a parenthesis, with utime,
    /// stime, cutime and cstime of 100, 50, 30 and 20 ticks.
    private let stat = "4242 (post (gres) x) S 1 4242 4242 0 -1 4194560 500 0 0 0 100 50 30 20 20 0 1 0 3603204 3133440 381"

    @Test func readsTheProcessOwnTimeAfterTheCommandName() throws {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        #expect(ProcessCPU.seconds(stat: stat, includingEndedChildren: false) == 150 / ticks)
        #expect(ProcessCPU.seconds(stat: stat, includingEndedChildren: true) == 200 / ticks)
    }

    @Test func refusesALineWithoutItsFields() {
        #expect(ProcessCPU.seconds(stat: "4242 (postgres) S 1 2 3", includingEndedChildren: false) == nil)
        #expect(ProcessCPU.seconds(stat: "no command name", includingEndedChildren: true) == nil)
    }

    /// The case that made PostgreSQL's cost per delivery too low: a process that ends between
    /// two readings. Once waited for, its CPU counts in its parent's.
    @Test func aChildThatEndedStillCounts() throws {
        let before = try #require(ProcessCPU.seconds(pid: "self", includingEndedChildren: true))
        let ownBefore = try #require(ProcessCPU.seconds(pid: "self"))
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done"]
        try child.run()
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        let after = try #require(ProcessCPU.seconds(pid: "self", includingEndedChildren: true))
        let ownAfter = try #require(ProcessCPU.seconds(pid: "self"))
        // The loop takes a few hundred milliseconds of CPU in the shell; this process, little.
        #expect((after - before) - (ownAfter - ownBefore) >= 0.1)
    }
}
