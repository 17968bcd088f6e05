-- Per-step-range extremes of a trial's metrics, so that a 1M-point curve is read as a few thousand
-- points that keep every peak and trough. Level l (1..4) groups steps by step >> (5 * l): buckets
-- of 32, 1,024, 32,768 and 1,048,576 steps. `extremes` holds, per metric with a numeric value,
-- [min_step, min_value, max_step, max_value]; `points` counts the points folded in. Maintained
-- in the transaction that stores the points (storage/metric_rollups.cc); det_fold_metrics
-- below folds the points stored before this migration.
CREATE TABLE metric_rollups (
  trial_id  bigint NOT NULL,
  kind      text NOT NULL,
  level     smallint NOT NULL,
  bucket    bigint NOT NULL,
  points    bigint NOT NULL,
  extremes  jsonb NOT NULL,
  PRIMARY KEY (trial_id, kind, level, bucket)
);

-- Two extremes objects as one: per metric the lower minimum and the higher maximum (on a tie, the
-- earlier step's).
CREATE FUNCTION det_merge_extremes(a jsonb, b jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(jsonb_object_agg(coalesce(ka, kb), CASE
           WHEN x IS NULL THEN y
           WHEN y IS NULL THEN x
           ELSE jsonb_build_array(
             CASE WHEN (y->>1)::numeric < (x->>1)::numeric
                    OR ((y->>1)::numeric = (x->>1)::numeric AND (y->>0)::bigint < (x->>0)::bigint)
                  THEN y->0 ELSE x->0 END,
             CASE WHEN (y->>1)::numeric < (x->>1)::numeric
                    OR ((y->>1)::numeric = (x->>1)::numeric AND (y->>0)::bigint < (x->>0)::bigint)
                  THEN y->1 ELSE x->1 END,
             CASE WHEN (y->>3)::numeric > (x->>3)::numeric
                    OR ((y->>3)::numeric = (x->>3)::numeric AND (y->>2)::bigint < (x->>2)::bigint)
                  THEN y->2 ELSE x->2 END,
             CASE WHEN (y->>3)::numeric > (x->>3)::numeric
                    OR ((y->>3)::numeric = (x->>3)::numeric AND (y->>2)::bigint < (x->>2)::bigint)
                  THEN y->3 ELSE x->3 END)
         END), '{}'::jsonb)
  FROM jsonb_each(a) AS ea(ka, x) FULL JOIN jsonb_each(b) AS eb(kb, y) ON ka = kb
$$;

-- Folds the stored points of one trial and kind at `steps` into every level, as
-- storage::FoldMetrics does (which is much faster for a batch being written). Once per point.
CREATE FUNCTION det_fold_metrics(p_trial bigint, p_kind text, p_steps bigint[]) RETURNS void
LANGUAGE sql AS $$
  WITH points AS (
    SELECT m.step, m.metrics FROM unnest(p_steps) AS s (step)
    JOIN metrics m ON m.trial_id = p_trial AND m.kind = p_kind AND m.step = s.step
  ), leveled AS (
    SELECT l::smallint AS level, step >> (5 * l) AS bucket, step, metrics
    FROM points, generate_series(1, 4) AS l
  ), counts AS (
    SELECT level, bucket, count(*) AS points FROM leveled GROUP BY level, bucket
  ), numbers AS (
    SELECT level, bucket, step, e.key AS name, e.value AS v, e.value::numeric AS n
    FROM leveled, jsonb_each(leveled.metrics) AS e
    WHERE jsonb_typeof(e.value) = 'number'
  ), named AS (
    SELECT level, bucket, name, jsonb_build_array(
             (array_agg(step ORDER BY n, step))[1], (array_agg(v ORDER BY n, step))[1],
             (array_agg(step ORDER BY n DESC, step))[1], (array_agg(v ORDER BY n DESC, step))[1]
           ) AS extremes
    FROM numbers GROUP BY level, bucket, name
  ), objects AS (
    SELECT level, bucket, jsonb_object_agg(name, extremes) AS extremes
    FROM named GROUP BY level, bucket
  )
  INSERT INTO metric_rollups AS r (trial_id, kind, level, bucket, points, extremes)
  SELECT p_trial, p_kind, c.level, c.bucket, c.points, coalesce(o.extremes, '{}'::jsonb)
  FROM counts c LEFT JOIN objects o USING (level, bucket)
  ON CONFLICT (trial_id, kind, level, bucket) DO UPDATE
    SET points = r.points + excluded.points,
        extremes = det_merge_extremes(r.extremes, excluded.extremes)
$$;

SELECT det_fold_metrics(trial_id, kind, array_agg(step)) FROM metrics GROUP BY trial_id, kind;
