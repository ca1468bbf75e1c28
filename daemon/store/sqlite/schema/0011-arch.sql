-- 0011: a job's architecture (arch.h: x86_64, arm64). Its kernels are
-- built for it and only machines of that arch take its boots and runs. Jobs
-- from before were all x86_64, the only arch a kernel was built for.
ALTER TABLE jobs ADD COLUMN arch TEXT NOT NULL DEFAULT 'x86_64';
