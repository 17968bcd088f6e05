-- What `det autoscaler instances|decisions` show: an instance's zone and its agent's state, and
-- each decision's launched instance ids and the error that kept it from doing all it wanted.
ALTER TABLE instances ADD COLUMN zone text NOT NULL DEFAULT '';
ALTER TABLE instances ADD COLUMN agent_state text NOT NULL DEFAULT '';
ALTER TABLE scaling_decisions ADD COLUMN launched jsonb NOT NULL DEFAULT '[]';
ALTER TABLE scaling_decisions ADD COLUMN error text NOT NULL DEFAULT '';
