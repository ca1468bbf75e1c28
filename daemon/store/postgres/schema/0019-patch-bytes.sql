-- 0019: a job's patch is kept as the bytes it came as. A patch fetched
-- from a URL may be a mail in another charset than UTF-8 (Latin-1 is
-- common in old lists), which SQLite keeps as it is but a text column of
-- PostgreSQL refuses: the job would fail as the lab's trouble, retried,
-- for what is the submitter's input. bytea keeps any byte.
ALTER TABLE jobs ALTER COLUMN patch TYPE bytea USING convert_to(patch, 'UTF8');
