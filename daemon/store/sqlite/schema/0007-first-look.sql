-- tlblab store, version 7: the boots of an A/B job's first look, kept when boots are added for a
-- second one (jobs.boots is then the total). NULL: no boots were added, the
-- job is at its first look. The comparison spends alpha by look.
ALTER TABLE jobs ADD COLUMN first_boots INTEGER;
