-- 0010: a bisection's progress as the tracker drives it. The track it
-- came from (NULL: asked for by hand), the change its two ends show in the
-- metric (the A/B rule's word, which a step is classified against), what
-- it does now in words, and how far it has to go: the steps left without
-- skips and, from the steps so far, the time they should take. A step's
-- role tells the ends (their jobs, one or more a side, form the good and
-- the bad side) from the commits measured in between.
ALTER TABLE bisections ADD COLUMN track TEXT;
ALTER TABLE bisections ADD COLUMN change TEXT;
ALTER TABLE bisections ADD COLUMN status TEXT;
ALTER TABLE bisections ADD COLUMN steps_left INTEGER;
ALTER TABLE bisections ADD COLUMN eta_s REAL;
ALTER TABLE bisection_steps ADD COLUMN role TEXT NOT NULL DEFAULT 'step'
	CHECK (role IN ('good', 'bad', 'step'));
CREATE INDEX bisections_state ON bisections (state);
CREATE INDEX bisections_alert ON bisections (alert_id);
