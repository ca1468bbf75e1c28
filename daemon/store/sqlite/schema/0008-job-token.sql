-- tlblab store, version 8: which token submitted a job (its SHA-256, as in
-- tokens), so that what one token may have queued is bounded
-- (lab.max_jobs_per_token, lab.max_boots_per_token). NULL for jobs stored
-- before it existed.
ALTER TABLE jobs ADD COLUMN token_hash TEXT;
CREATE INDEX jobs_token ON jobs (token_hash, state);
