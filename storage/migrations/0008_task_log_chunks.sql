-- Task logs are stored as compressed chunks of lines (storage/log_chunk.h): one row per ingest
-- batch instead of one per line, a few bytes per short line instead of several hundred.
--
-- A line's id is the chunk's id * 65536 + its index in the chunk. Per stream, a chunk records the
-- source offsets of its first and last line: a batch sent again after an agent restart drops the
-- lines whose offsets a stored chunk of the same allocation, agent and stream already covers.
CREATE TABLE task_log_chunks (
  id            bigserial PRIMARY KEY,
  task_id       text NOT NULL,
  agent_id      text NOT NULL DEFAULT '',
  allocation_id text,
  first_ts      timestamptz NOT NULL,
  last_ts       timestamptz NOT NULL,
  line_count    integer NOT NULL,
  stdout_first  bigint,
  stdout_last   bigint,
  stderr_first  bigint,
  stderr_last   bigint,
  codec         smallint NOT NULL,  -- 1: deflated encoding; 0: JSON (rows moved from task_logs)
  data          bytea NOT NULL
);
-- The data is compressed already: PostgreSQL need not try again.
ALTER TABLE task_log_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE INDEX task_log_chunks_task ON task_log_chunks (task_id, id);
CREATE INDEX task_log_chunks_stdout ON task_log_chunks (allocation_id, agent_id, stdout_last)
  WHERE stdout_last IS NOT NULL;
CREATE INDEX task_log_chunks_stderr ON task_log_chunks (allocation_id, agent_id, stderr_last)
  WHERE stderr_last IS NOT NULL;
CREATE INDEX task_log_chunks_age ON task_log_chunks (last_ts);

-- What the old table holds moves over in chunks of up to 1,000 lines, in the order it was stored.
INSERT INTO task_log_chunks (task_id, agent_id, allocation_id, first_ts, last_ts, line_count,
                             stdout_first, stdout_last, stderr_first, stderr_last, codec, data)
SELECT task_id, agent_id, allocation_id, min(timestamp), max(timestamp), count(*),
       min(source_offset) FILTER (WHERE stdtype <> 'stderr'),
       max(source_offset) FILTER (WHERE stdtype <> 'stderr'),
       min(source_offset) FILTER (WHERE stdtype = 'stderr'),
       max(source_offset) FILTER (WHERE stdtype = 'stderr'),
       0,
       convert_to(json_agg(json_build_array(det_ns(timestamp), level, stdtype, log, source_offset)
                           ORDER BY id)::text, 'UTF8')
FROM (SELECT *, (row_number() OVER (PARTITION BY task_id, agent_id, allocation_id ORDER BY id)
                 - 1) / 1000 AS part
      FROM task_logs) numbered
GROUP BY task_id, agent_id, allocation_id, part
ORDER BY min(id);

DROP TABLE task_logs;
