-- tlblab store, version 5: one bad run does not sink a job. A run stage
-- records the outcome of each spec of its suite (specs: a JSON array of
-- {"spec", "workload", "params", "state", "class", "message"}), a boot+run
-- pair added to repeat a boot whose run failed points at the failed run
-- (repeat_of: its seq), and a stage waiting for the host to be quiet says so
-- (note). A job may now fail with class 'suite' (the suite fails on the
-- base side too: not a result of the patch); jobs.error_class has no CHECK.
ALTER TABLE stages ADD COLUMN specs TEXT;
ALTER TABLE stages ADD COLUMN repeat_of INTEGER;
ALTER TABLE stages ADD COLUMN note TEXT;
