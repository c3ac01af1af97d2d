import Testing

@testable import HeraldStore
@testable import HeraldWorker

/// The fair-share arithmetic of partition ownership, without services: shares add up to K, each
/// is ⌊K/N⌋ or ⌈K/N⌉, the remainder stays with those that own more, and each member's step
/// leads every member to its share.
@Suite("Partition share")
struct PartitionShareTests {
    @Test func sharesAddUpAndDifferByAtMostOne() {
        for partitions in 1...17 {
            for members in 1...6 {
                let owned = Dictionary(uniqueKeysWithValues: (0..<members).map { (Int32(100 + $0), Int.random(in: 0...partitions)) })
                let shares = PartitionShare.shares(partitions: partitions, owned: owned)
                #expect(shares.values.reduce(0, +) == partitions, "K \(partitions), N \(members): \(shares)")
                #expect(shares.values.allSatisfy { $0 == partitions / members || $0 == (partitions + members - 1) / members })
            }
        }
        #expect(PartitionShare.shares(partitions: 4, owned: [:]).isEmpty)
    }

    @Test func theRemainderStaysWithThoseThatOwnMoreThenTheLowerSession() {
        // K 4, N 3: of the two that own two each, the lower session keeps two.
        #expect(PartitionShare.shares(partitions: 4, owned: [7: 2, 5: 2, 9: 0]) == [5: 2, 7: 1, 9: 1])
        #expect(PartitionShare.shares(partitions: 4, owned: [7: 3, 5: 1, 9: 0]) == [7: 2, 5: 1, 9: 1])
        #expect(PartitionShare.shares(partitions: 5, owned: [1: 0, 2: 0]) == [1: 3, 2: 2])
        // More members than partitions: some own none.
        #expect(PartitionShare.shares(partitions: 2, owned: [1: 1, 2: 0, 3: 1]) == [1: 1, 2: 0, 3: 1])
    }

    @Test func aMemberTakesFreePartitionsUpToItsShareAndReleasesBeyondIt() {
        let alone = PartitionLocks.View(me: 1, members: [1], owners: [:])
        #expect(PartitionShare.step(alone, partitions: 4) == .take(count: 4, free: [0, 1, 2, 3]))
        // A third joins two that own 2 each: the lower session keeps 2, the other hands one over.
        let owners: [Int: Int32] = [0: 1, 1: 1, 2: 2, 3: 2]
        #expect(PartitionShare.step(.init(me: 1, members: [1, 2, 3], owners: owners), partitions: 4) == .stay)
        #expect(PartitionShare.step(.init(me: 2, members: [1, 2, 3], owners: owners), partitions: 4) == .release([3]))
        // The newcomer waits until a partition is free.
        #expect(PartitionShare.step(.init(me: 3, members: [1, 2, 3], owners: owners), partitions: 4) == .stay)
        #expect(PartitionShare.step(.init(me: 3, members: [1, 2, 3], owners: [0: 1, 1: 1, 2: 2]), partitions: 4) == .take(count: 1, free: [3]))
        // Not a member (not joined yet, or its session was lost): nothing.
        #expect(PartitionShare.step(.init(me: 4, members: [1], owners: [:]), partitions: 4) == .stay)
    }

    /// Members acting on the same locks, one step each in turn, reach their shares from any
    /// start: 2 → 4 → 2 members and a member leaving.
    @Test func stepsConvergeToTheSharesAsMembersComeAndGo() {
        let partitions = 4
        var owners: [Int: Int32] = [:]
        func settle(_ members: Set<Int32>) {
            for _ in 0..<20 {
                for me in members.sorted() {
                    switch PartitionShare.step(.init(me: me, members: members, owners: owners), partitions: partitions) {
                    case .stay: break
                    case .take(let count, let free): for partition in free.prefix(count) { owners[partition] = me }
                    case .release(let released): for partition in released { owners[partition] = nil }
                    }
                }
            }
        }
        func counts(_ members: Set<Int32>) -> [Int] { members.sorted().map { me in owners.values.count { $0 == me } } }
        settle([1, 2])
        #expect(counts([1, 2]) == [2, 2])
        settle([1, 2, 3, 4])
        #expect(counts([1, 2, 3, 4]) == [1, 1, 1, 1])
        owners = owners.filter { $0.value != 3 && $0.value != 4 }  // two leave: their locks go
        settle([1, 2])
        #expect(counts([1, 2]) == [2, 2])
        settle([1, 2, 5])
        #expect(counts([1, 2, 5]).sorted() == [1, 1, 2])
        #expect(owners.count == partitions)
    }
}
