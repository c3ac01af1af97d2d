internal import CLibPQ

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension LibPQSession {
    /// Runs one statement once per parameter set in libpq pipeline mode: every execution is
    /// sent without waiting for the previous answer, followed by a single sync. Outside an
    /// explicit transaction the whole batch is one implicit transaction: if one execution
    /// fails, none of them takes effect and the first error is thrown (its message names the
    /// item).
    ///
    /// The socket is driven non-blocking (sending, flushing and reading interleaved), so a
    /// large batch cannot deadlock on full socket buffers. On any client-side failure the
    /// connection is dropped and replaced on next use rather than left mid-pipeline.
    func executeBatch(_ sql: String, _ parameterSets: [[PostgresValue]]) throws(PostgresError) -> [PostgresQueryResult] {
        guard !parameterSets.isEmpty else { return [] }
        let buffers = try parameterSets.map { (values) throws(PostgresError) in try ParameterBuffer(values) }
        let connection = try connected()
        // Prepare once per distinct parameter-type list (usually one), before entering
        // pipeline mode, where synchronous calls are not allowed.
        var names: [String] = []
        names.reserveCapacity(buffers.count)
        var prepared: [(types: [UInt32], name: String)] = []
        for buffer in buffers {
            if let known = prepared.last(where: { buffer.hasTypes($0.types) }) {
                names.append(known.name)
            } else {
                let types = buffer.types
                let name = try self.prepared(StatementKey(sql: sql, types: types), on: connection)
                prepared.append((types, name))
                names.append(name)
            }
        }
        do {
            return try runPipeline(sql: sql, names: names, buffers: buffers, on: connection)
        } catch let error {
            if error.code != .serverError, error.code != .uniqueViolation, error.code != .serializationFailure,
                error.code != .timeout
            {
                disconnect()
            }
            throw error
        }
    }

    private func runPipeline(
        sql: String, names: [String], buffers: [ParameterBuffer], on connection: OpaquePointer
    ) throws(PostgresError) -> [PostgresQueryResult] {
        func failure(_ call: String) -> PostgresError {
            LibPQ.connectionError(connection, call: call, query: sql)
        }
        guard PQenterPipelineMode(connection) == 1 else { throw failure("PQenterPipelineMode") }
        guard PQsetnonblocking(connection, 1) == 0 else { throw failure("PQsetnonblocking") }

        var results: [PostgresQueryResult] = []
        results.reserveCapacity(buffers.count)
        var firstError: PostgresError?
        var sent = 0
        var syncSent = false
        var finished = false
        let sendChunk = 256

        while !finished {
            // Queue a chunk of executions, then the sync once everything is queued.
            var queuedThisRound = 0
            while sent < buffers.count, queuedThisRound < sendChunk {
                let buffer = buffers[sent]
                let accepted = try buffer.withUnsafeParameters { (values, lengths, formats) throws(PostgresError) in
                    PQsendQueryPrepared(connection, names[sent], buffer.count, values, lengths, formats, 0)
                }
                guard accepted == 1 else { throw failure("PQsendQueryPrepared") }
                sent += 1
                queuedThisRound += 1
            }
            if sent == buffers.count, !syncSent {
                guard PQpipelineSync(connection) == 1 else { throw failure("PQpipelineSync") }
                syncSent = true
            }
            let flush = PQflush(connection)
            guard flush >= 0 else { throw failure("PQflush") }

            // Wait for the server when there is nothing more to send right now.
            let moreToSend = sent < buffers.count
            var events = Int16(POLLIN)
            if flush == 1 { events |= Int16(POLLOUT) }
            var descriptor = pollfd(fd: PQsocket(connection), events: events, revents: 0)
            let timeout: Int32 = (moreToSend && flush == 0) ? 0 : 1000
            let ready = poll(&descriptor, 1, timeout)
            guard ready >= 0 || errno == EINTR else { throw failure("poll") }
            if ready > 0, descriptor.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                guard PQconsumeInput(connection) == 1 else { throw failure("PQconsumeInput") }
            }

            // Collect every result that is complete.
            var previousWasNull = false
            while PQisBusy(connection) == 0 {
                guard let result = PQgetResult(connection) else {
                    if previousWasNull || results.count >= sent { break }
                    previousWasNull = true
                    continue
                }
                previousWasNull = false
                switch PQresultStatus(result) {
                case PGRES_PIPELINE_SYNC:
                    PQclear(result)
                    finished = true
                case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                    results.append(consume(result, statement: names[results.count]))
                case PGRES_PIPELINE_ABORTED:
                    PQclear(result)
                    results.append(.empty)
                default:
                    var error = LibPQ.resultError(result, connection: connection, call: "PQsendQueryPrepared", query: sql)
                    PQclear(result)
                    if error.code == .connectionLost { throw error }
                    error.message = "batch item \(results.count) of \(buffers.count) failed; the batch was not applied"
                    if firstError == nil { firstError = error }
                    results.append(.empty)
                }
                if finished { break }
            }
            if PQstatus(connection) == CONNECTION_BAD { throw failure("PQgetResult") }
        }
        guard PQexitPipelineMode(connection) == 1 else { throw failure("PQexitPipelineMode") }
        guard PQsetnonblocking(connection, 0) == 0 else { throw failure("PQsetnonblocking") }
        if let firstError { throw firstError }
        return results
    }
}
