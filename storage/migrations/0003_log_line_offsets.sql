-- A log line can carry where it came from: its allocation and its byte offset in that allocation's
-- stdout or stderr. An agent that restarts re-reads its workloads' output from the last offset the
-- master confirmed; lines sent twice that way are stored once.
ALTER TABLE task_logs ADD COLUMN allocation_id text;
ALTER TABLE task_logs ADD COLUMN source_offset bigint;
CREATE UNIQUE INDEX task_logs_source ON task_logs (allocation_id, stdtype, source_offset)
  WHERE source_offset IS NOT NULL;
