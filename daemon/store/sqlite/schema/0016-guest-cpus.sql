-- 0016: a suite's guest_cpus (config.h) makes each boot of a side once per
-- vCPU count: the boot stage and its run carry the count, which the boot
-- gives QEMU (-smp) and the run adds to its rows' params ("cpus"), so the
-- comparison has a row per count. NULL: the machine's own cpus.
ALTER TABLE stages ADD COLUMN cpus INTEGER;
