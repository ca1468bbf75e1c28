-- tlblab store, version 3: an A/B job may grow more boots per side, up to
-- max_boots, while its headline metrics stay inconclusive.
ALTER TABLE jobs ADD COLUMN max_boots INTEGER;
