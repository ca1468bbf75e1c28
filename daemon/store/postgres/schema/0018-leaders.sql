-- 0018: what nobody submits (the tracks, their points and bisections,
-- the webhooks' deliveries) runs in one daemon of those that share the
-- store, the role's leader (store_leader_take): it passes to another once
-- its holder has been silent for the lab's lease timeout.
CREATE TABLE leaders (
	role TEXT PRIMARY KEY,
	daemon_id BIGINT,
	since DOUBLE PRECISION
);
INSERT INTO leaders (role) VALUES ('tracker');
