-- Herald schema, version 9: the backlog holder's generation (docs/architecture.md, "The backlog").
-- Applied once, in one transaction, after 0008; never edit it after it has shipped.
--
-- The worker that takes the backlog lock adds one to `generation`. A holder that lost its lock
-- (a database restart ends its session) and takes it again finds the number it expects only if
-- no other worker held it meanwhile: then what it knew of the backlog is still true and it goes
-- on; otherwise it reads the backlog anew.
CREATE TABLE backlog_holder (
    id         smallint PRIMARY KEY CHECK (id = 1),
    generation bigint NOT NULL
);
