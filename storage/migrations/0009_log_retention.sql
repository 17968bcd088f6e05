-- An experiment's retention_policy.log_retention_days (-1: keep forever), overriding the cluster's
-- for its trials' logs; NULL: the cluster's.
ALTER TABLE experiments ADD COLUMN log_retention_days smallint;
