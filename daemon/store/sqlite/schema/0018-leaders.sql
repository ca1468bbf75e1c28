-- 0018: what nobody submits (the tracks, their points and bisections,
-- the webhooks' deliveries) runs in one daemon of those that share a
-- store, the role's leader (store_leader_take): it passes to another once
-- its holder has been silent for the lab's lease timeout. A daemon alone
-- on its SQLite store leads without asking.
CREATE TABLE leaders (
	role TEXT PRIMARY KEY,
	daemon_id INTEGER,
	since REAL
);
INSERT INTO leaders (role) VALUES ('tracker');
