-- 0015: who made what, for who may change it (api.h). A bisection asked
-- for through the API records its token (its SHA-256, as jobs.token_hash
-- since 0008), and counts in that token's limits while it runs. Alerts get
-- the same column, but the tracker makes them: NULL, the lab's own, as for
-- jobs a track or a bisection made. A token's role: 'admin' tokens
-- (lab.admin_tokens) may cancel or triage anything, 'user' tokens only what
-- they made; NULL owners are the admin tokens' alone.
ALTER TABLE bisections ADD COLUMN token_hash TEXT;
CREATE INDEX bisections_token ON bisections (token_hash, state);
ALTER TABLE alerts ADD COLUMN token_hash TEXT;
ALTER TABLE tokens ADD COLUMN role TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin'));
