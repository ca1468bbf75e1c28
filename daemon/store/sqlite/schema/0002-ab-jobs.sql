-- tlblab store, version 2: A/B jobs. A build stage records the build it
-- made; a boot stage the boot id it checked; a job where its patch came from.
ALTER TABLE stages ADD COLUMN build_id TEXT;
ALTER TABLE stages ADD COLUMN boot_id TEXT;
ALTER TABLE jobs ADD COLUMN patch_url TEXT;
ALTER TABLE jobs ADD COLUMN patch_ref TEXT;
CREATE INDEX stages_job_side ON stages (job_id, side, kind);
