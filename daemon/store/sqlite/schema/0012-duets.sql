-- 0012: two boot stages started at once on a duet of machines (config.h:
-- two guests on one host, a host CPU each) note each other, so that the
-- comparison can take their runs as a pair: what disturbed the host then
-- disturbed both sides alike.
ALTER TABLE stages ADD COLUMN duet_of INTEGER REFERENCES stages (id);
