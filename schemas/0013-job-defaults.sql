-- 0013: which fields of a job came from the lab's defaults: section (a
-- JSON object, field to value: {"suite": "tlb", "tree": "linux"}), NULL
-- when the request named them all, as every job before did.
ALTER TABLE jobs ADD COLUMN defaults TEXT;
