-- tlblab store, version 9: nightly tracking. A track (the config's tracks:)
-- follows a branch on a schedule; each new head it finds is measured on
-- each of the track's machines by a run job that builds that commit: a
-- point is one commit on one machine. A series is one track x machine x
-- workload x parameters x metric; its value at a point is the median over
-- the point's boots of each boot's median. Change points are
-- found per series; those of one commit are grouped into one alert, which
-- people triage. A bisection looks for the first bad commit between two
-- commits, one step (a run job of one commit) at a time. Every webhook
-- delivery is kept with its attempts.
CREATE TABLE tracks (
	name TEXT PRIMARY KEY,
	in_config INTEGER NOT NULL DEFAULT 1,
	next_due REAL,			-- the next scheduled run not yet taken
	last_run REAL,			-- when a run last asked for the head
	last_head TEXT,			-- what it found
	last_result TEXT,		-- "new head, job 12", "unchanged", or why it failed
	baseline_point INTEGER		-- an intended change: earlier points are not searched
);

CREATE TABLE points (
	id INTEGER PRIMARY KEY,
	track TEXT NOT NULL,
	commit_id TEXT NOT NULL,
	commit_time REAL,
	subject TEXT,
	author TEXT,
	machine TEXT NOT NULL,
	job_id INTEGER REFERENCES jobs (id) ON DELETE SET NULL,
	state TEXT NOT NULL DEFAULT 'queued'
		CHECK (state IN ('queued', 'done', 'failed')),
	created REAL NOT NULL,
	UNIQUE (track, commit_id, machine)
);
CREATE INDEX points_track ON points (track, id);
CREATE INDEX points_job ON points (job_id);

CREATE TABLE series (
	id INTEGER PRIMARY KEY,
	track TEXT NOT NULL,
	machine TEXT NOT NULL,
	workload TEXT NOT NULL,
	params TEXT NOT NULL,
	metric TEXT NOT NULL,
	UNIQUE (track, machine, workload, params, metric)
);

CREATE TABLE series_values (
	series_id INTEGER NOT NULL REFERENCES series (id) ON DELETE CASCADE,
	point_id INTEGER NOT NULL REFERENCES points (id) ON DELETE CASCADE,
	value REAL NOT NULL,		-- median over boots of the boots' medians
	lo REAL,			-- the smallest and largest boot median
	hi REAL,
	boots INTEGER NOT NULL,
	PRIMARY KEY (series_id, point_id)
) WITHOUT ROWID;
CREATE INDEX series_values_point ON series_values (point_id);

CREATE TABLE alerts (
	id INTEGER PRIMARY KEY,
	track TEXT NOT NULL,
	good_commit TEXT,		-- the last commit at the old level
	bad_commit TEXT NOT NULL,	-- the first at the new one
	kind TEXT NOT NULL CHECK (kind IN ('regression', 'improvement', 'mixed', 'neutral')),
	state TEXT NOT NULL DEFAULT 'new'
		CHECK (state IN ('new', 'acknowledged', 'ignored', 'fixed', 'intended')),
	state_by TEXT,
	state_at REAL,
	created REAL NOT NULL,
	UNIQUE (track, bad_commit)
);

CREATE TABLE change_points (
	id INTEGER PRIMARY KEY,
	series_id INTEGER NOT NULL REFERENCES series (id) ON DELETE CASCADE,
	point_id INTEGER NOT NULL REFERENCES points (id) ON DELETE CASCADE,
	alert_id INTEGER REFERENCES alerts (id) ON DELETE SET NULL,
	status TEXT NOT NULL
		CHECK (status IN ('provisional', 'confirmed', 'rejected')),
	p REAL NOT NULL,
	before REAL,
	after REAL,
	magnitude REAL,
	direction TEXT CHECK (direction IN ('regression', 'improvement', 'neutral')),
	ab_verdict TEXT,		-- the A/B rule on the raw runs either side
	ab_p REAL,
	detected REAL NOT NULL,
	updated REAL,
	UNIQUE (series_id, point_id)
);
CREATE INDEX change_points_alert ON change_points (alert_id);

CREATE TABLE bisections (
	id INTEGER PRIMARY KEY,
	alert_id INTEGER REFERENCES alerts (id) ON DELETE SET NULL,
	tree TEXT NOT NULL,
	good TEXT NOT NULL,
	bad TEXT NOT NULL,
	suite TEXT NOT NULL,
	machine TEXT,
	metric TEXT NOT NULL,
	workload TEXT,
	params TEXT,
	boots INTEGER NOT NULL,
	state TEXT NOT NULL DEFAULT 'running'
		CHECK (state IN ('running', 'done', 'failed', 'cancelled')),
	commits TEXT,			-- JSON: the commits after good up to bad, oldest first
	first_bad TEXT,
	result TEXT,			-- what it found, or the range it could not narrow and why
	submitter TEXT,
	created REAL NOT NULL,
	finished REAL
);

CREATE TABLE bisection_steps (
	id INTEGER PRIMARY KEY,
	bisection_id INTEGER NOT NULL REFERENCES bisections (id) ON DELETE CASCADE,
	commit_id TEXT NOT NULL,
	job_id INTEGER REFERENCES jobs (id) ON DELETE SET NULL,
	outcome TEXT CHECK (outcome IN ('good', 'bad', 'skip', 'inconclusive')),
	evidence TEXT,			-- JSON: against good and against bad
	created REAL NOT NULL,
	finished REAL
);
CREATE INDEX bisection_steps_bisection ON bisection_steps (bisection_id, id);
CREATE INDEX bisection_steps_job ON bisection_steps (job_id);

CREATE TABLE deliveries (
	id INTEGER PRIMARY KEY,
	hook TEXT NOT NULL,
	event TEXT NOT NULL,
	url TEXT NOT NULL,
	body TEXT NOT NULL,
	state TEXT NOT NULL DEFAULT 'pending'
		CHECK (state IN ('pending', 'delivered', 'failed')),
	attempts INTEGER NOT NULL DEFAULT 0,
	next_attempt REAL NOT NULL,
	last_status INTEGER,
	last_error TEXT,
	log TEXT NOT NULL DEFAULT '[]',	-- JSON: every attempt's time, status and error
	created REAL NOT NULL,
	delivered REAL
);
CREATE INDEX deliveries_due ON deliveries (state, next_attempt);

-- which finished jobs the webhooks were told of (event job); those that
-- finished before this version are not announced now
ALTER TABLE jobs ADD COLUMN notified INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET notified = 1 WHERE state IN ('done', 'failed', 'cancelled');
