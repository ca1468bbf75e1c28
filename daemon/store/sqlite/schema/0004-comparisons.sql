-- tlblab store, version 4: the comparison of a finished A/B job is computed
-- once and kept, with the rules it was computed under (a suite whose rules
-- change gets it recomputed); the job carries its overall verdict so the
-- job list can be filtered by it.
ALTER TABLE jobs ADD COLUMN verdict TEXT;
CREATE TABLE comparisons (
	job_id   INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
	rules    TEXT NOT NULL,
	doc      TEXT NOT NULL,
	computed REAL NOT NULL,
	compute_ms REAL
);
CREATE INDEX jobs_verdict ON jobs(verdict);
