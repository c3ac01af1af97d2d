-- Herald schema, version 4: the journal's rows of a message found through a B-tree. Applied
-- once, in one transaction, after 0003; never edit it after it has shipped.
--
-- Version 2 indexed journal.message_id with BRIN, betting that rows arrive in message order. They
-- do not once several workers, partitions, retries and deferrals interleave: the campaign's
-- recovery after a provider outage read a known message's history at ~110 ms per message (every
-- BRIN range matched; 260,000 rows rechecked per message in a 500,000-row journal), so deferred
-- messages coming back, and every redelivery after a crash, crawled at ~100 messages/s. A B-tree
-- costs one index entry per delivery (measured: docs/performance.md).
CREATE INDEX journal_message ON journal (message_id);
DROP INDEX journal_message_id;
