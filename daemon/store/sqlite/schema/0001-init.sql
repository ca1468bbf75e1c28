-- tlblab store, version 1. Applied once, inside a transaction, by store_open;
-- recorded in schema_migrations. Times are epoch seconds (REAL).

CREATE TABLE machines (
	name TEXT PRIMARY KEY,
	transport TEXT NOT NULL,
	host TEXT,
	boot TEXT NOT NULL,
	arch TEXT,
	cpus INTEGER,
	tags TEXT NOT NULL DEFAULT '[]',
	in_config INTEGER NOT NULL DEFAULT 1,
	health TEXT NOT NULL DEFAULT 'unknown'
		CHECK (health IN ('good', 'unknown', 'bad', 'maintenance')),
	health_reason TEXT,
	health_changed REAL,
	lease_job INTEGER,
	lease_stage INTEGER,
	lease_since REAL,
	kernel TEXT,
	last_boot REAL
);

CREATE TABLE jobs (
	id INTEGER PRIMARY KEY,
	kind TEXT NOT NULL CHECK (kind IN ('run', 'ab')),
	state TEXT NOT NULL DEFAULT 'queued'
		CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
	suite TEXT NOT NULL,
	suite_json TEXT NOT NULL,
	machines TEXT NOT NULL DEFAULT '[]',
	tags TEXT NOT NULL DEFAULT '[]',
	submitter TEXT,
	boots INTEGER NOT NULL DEFAULT 1,
	tree TEXT,
	base TEXT,
	patch_kind TEXT,
	patch TEXT,
	created REAL NOT NULL,
	started REAL,
	finished REAL,
	cancel_requested INTEGER NOT NULL DEFAULT 0,
	error_class TEXT,
	error_message TEXT,
	error_stage INTEGER
);
CREATE INDEX jobs_state ON jobs (state, id);
CREATE INDEX jobs_suite ON jobs (suite, id);
CREATE INDEX jobs_submitter ON jobs (submitter, id);

CREATE TABLE stages (
	id INTEGER PRIMARY KEY,
	job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	seq INTEGER NOT NULL,
	kind TEXT NOT NULL CHECK (kind IN ('build', 'boot', 'run')),
	side TEXT,
	boot_index INTEGER,
	state TEXT NOT NULL DEFAULT 'pending'
		CHECK (state IN ('pending', 'running', 'done', 'failed', 'cancelled')),
	machine TEXT,
	attempt INTEGER NOT NULL DEFAULT 0,
	excluded TEXT NOT NULL DEFAULT '[]',
	started REAL,
	finished REAL,
	timeout REAL,
	error_class TEXT
		CHECK (error_class IN ('patch', 'build', 'boot', 'workload', 'infra', 'cancelled')),
	error_message TEXT,
	host TEXT,
	log TEXT NOT NULL DEFAULT '',
	UNIQUE (job_id, seq)
);
CREATE INDEX stages_state ON stages (state, job_id);

CREATE TABLE runs (
	id INTEGER PRIMARY KEY,
	job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	stage_id INTEGER NOT NULL REFERENCES stages (id) ON DELETE CASCADE,
	machine TEXT,
	side TEXT,
	build_id TEXT,
	boot_id TEXT,
	spec_index INTEGER NOT NULL,
	case_index INTEGER NOT NULL,
	iteration INTEGER NOT NULL,
	warmup INTEGER NOT NULL,
	workload TEXT NOT NULL,
	params TEXT NOT NULL,
	duration REAL
);
CREATE INDEX runs_job ON runs (job_id, id);
CREATE INDEX runs_stage ON runs (stage_id);

CREATE TABLE metrics (
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	value REAL NOT NULL,
	PRIMARY KEY (run_id, name)
) WITHOUT ROWID;

CREATE TABLE metric_info (
	name TEXT PRIMARY KEY,
	unit TEXT,
	direction TEXT NOT NULL DEFAULT 'neutral'
		CHECK (direction IN ('higher', 'lower', 'neutral'))
);

CREATE TABLE unavailable (
	stage_id INTEGER NOT NULL REFERENCES stages (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	reason TEXT,
	PRIMARY KEY (stage_id, name)
);

CREATE TABLE samples (
	id INTEGER PRIMARY KEY,
	stage_id INTEGER NOT NULL REFERENCES stages (id) ON DELETE CASCADE,
	spec_index INTEGER NOT NULL,
	case_index INTEGER NOT NULL,
	iteration INTEGER NOT NULL,
	warmup INTEGER NOT NULL,
	in_window INTEGER NOT NULL,
	t REAL NOT NULL,
	dt REAL NOT NULL,
	vals TEXT NOT NULL
);
CREATE INDEX samples_stage ON samples (stage_id, id);

CREATE TABLE profiles (
	run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	profile TEXT NOT NULL
);

CREATE TABLE failures (
	id INTEGER PRIMARY KEY,
	machine TEXT NOT NULL,
	job_id INTEGER,
	stage_id INTEGER,
	class TEXT,
	message TEXT,
	at REAL NOT NULL
);
CREATE INDEX failures_machine ON failures (machine, id);

CREATE TABLE builds (
	id TEXT PRIMARY KEY,
	tree TEXT NOT NULL,
	commit_id TEXT,
	config_hash TEXT,
	compiler TEXT,
	state TEXT NOT NULL,
	path TEXT,
	created REAL NOT NULL,
	duration REAL,
	meta TEXT
);

CREATE TABLE tokens (
	hash TEXT PRIMARY KEY,
	source TEXT NOT NULL,
	created REAL NOT NULL
);
