/// The buffer between a broker consumer (filled by the pump task that iterates it) and the
/// intake, which takes everything buffered at once, up to a chunk size: that is what turns a
/// stream of messages into batches for the store. Bounded by the prefetch (the broker sends no
/// more until messages are settled). The consumer's end (``BatchingMailbox/end(error:)``) after
/// an error drops what is buffered: the connection is gone and the broker requeues it, perhaps to
/// another process, so it is never started on here.
typealias MessageInbox = BatchingMailbox<TrackedMessage>
