-- 0013: which fields of a job came from the lab's defaults: section (a
-- JSON object, field to value: {"suite": "tlb", "tree": "linux"}), NULL
-- when the request named them all, as every job before did; and the
-- series an mbox patch is (patch.h): {"cover": SUBJECT or null,
-- "patches": [SUBJECT, ...]} in the order git am applies them, NULL for a
-- plain diff, a branch, or a job from before.
ALTER TABLE jobs ADD COLUMN defaults TEXT;
ALTER TABLE jobs ADD COLUMN patches TEXT;
