-- tlblab store, version 6: a job carries its patch's subject, for lists,
-- pages and reports (daemon/patch.h says how it is found). Branches and
-- URLs are named here; jobs with a pasted or fetched patch get theirs from
-- the patch text when the store applies this migration (store.c).
ALTER TABLE jobs ADD COLUMN patch_subject TEXT;
UPDATE jobs SET patch_subject = substr('branch ' || patch_ref || ' of ' || patch_url, 1, 200)
	WHERE kind = 'ab' AND patch_kind = 'branch' AND patch_ref IS NOT NULL AND patch_url IS NOT NULL;
UPDATE jobs SET patch_subject = substr(patch_url, 1, 200)
	WHERE kind = 'ab' AND patch_kind = 'url' AND patch_url IS NOT NULL;
