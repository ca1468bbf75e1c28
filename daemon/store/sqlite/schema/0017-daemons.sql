-- 0017: several daemons on one store (lab.store, a PostgreSQL store a
-- lab's daemons share): each daemon a row, seen at each of its scheduler's
-- passes; a running stage names the daemon that runs it (owner), so that
-- another takes it over once that one has been silent for the lab's
-- lease timeout (store_daemon_pass). NULL: a stage of before, or of a
-- daemon alone on its store.
CREATE TABLE daemons (
	id INTEGER PRIMARY KEY,
	host TEXT NOT NULL,
	pid INTEGER NOT NULL,
	started REAL NOT NULL,
	seen REAL NOT NULL
);
ALTER TABLE stages ADD COLUMN owner INTEGER;
