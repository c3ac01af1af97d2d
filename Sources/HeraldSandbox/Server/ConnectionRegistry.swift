import Synchronization

/// The server's open connections, by id, so they can be closed on demand.
final class ConnectionRegistry: Sendable {
    private struct State {
        var lastID = 0
        var connections: [Int: ServerConnection] = [:]
    }

    private let state = Mutex(State())

    /// 1, 2, 3… in accept order.
    func nextID() -> Int {
        state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
    }

    func add(_ connection: ServerConnection) {
        state.withLock { $0.connections[connection.id] = connection }
    }

    func remove(_ id: Int) {
        _ = state.withLock { $0.connections.removeValue(forKey: id) }
    }

    func all() -> [ServerConnection] {
        state.withLock { Array($0.connections.values) }
    }
}
