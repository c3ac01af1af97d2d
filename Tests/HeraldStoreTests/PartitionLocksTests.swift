import HeraldStore
import HeraldTesting
import Testing

/// The partition locks on PostgreSQL: what ``PartitionLocks/view()`` reads, that a partition has
/// one holder, and that a worker's locks go with its session.
@Suite("Partition locks")
struct PartitionLocksTests {
    static let keys = PartitionLocks.Keys(members: 0x1234_5678, partitions: 0x1234_5679)

    @Test func membersAndOwnersAreReadFromTheLocksAndGoWithTheSession() async throws {
        try await TestStore.with { store, _ in
            let (a, b) = (store.makePartitionLocks(keys: Self.keys), store.makePartitionLocks(keys: Self.keys))
            let other = store.makePartitionLocks(keys: PartitionLocks.Keys(members: 7, partitions: 8))
            let empty = try await a.view()
            #expect(empty.members.isEmpty && empty.owners.isEmpty && empty.me > 0)

            #expect(try await a.join())
            #expect(try await a.join(), "joining again holds the one member lock")
            #expect(try await b.join())
            #expect(try await other.join())
            #expect(try await a.take(0))
            #expect(try await a.take(2))
            #expect(try await !b.take(2), "a partition has one holder")
            #expect(try await b.take(1))
            #expect(try await other.take(3), "another installation's namespace")

            let seen = try await b.view()
            let (me, them) = (try await b.view().me, try await a.view().me)
            #expect(seen.members == [me, them])
            #expect(seen.owners == [0: them, 2: them, 1: me])
            #expect(seen.mine == [1])

            try await a.release(2)
            #expect(try await b.view().owners == [0: them, 1: me])
            await a.releaseAll()
            #expect(try await b.view().members == [me])
            await b.close()
            // The server ends the closed session's backend (and drops its locks) on its own time.
            try await waitUntil("a closed session's locks are gone", timeout: .seconds(10)) {
                let view = try await a.view()
                return view.members.isEmpty && view.owners.isEmpty
            }
            await other.close()
            await a.close()
        }
    }
}
