-- 0014: the jobs of a per-patch series (tlblab submit --mbox FILE
-- --per-patch): one A/B job per prefix of the series, its first k patches
-- on the base against the base. per_patch is {"of": the first job's id,
-- "k": k, "n": the series' patches, "series": its subject}, the same "of"
-- in each; NULL for every other job.
ALTER TABLE jobs ADD COLUMN per_patch TEXT;
CREATE INDEX jobs_per_patch ON jobs (json_extract(per_patch, '$.of')) WHERE per_patch IS NOT NULL;
