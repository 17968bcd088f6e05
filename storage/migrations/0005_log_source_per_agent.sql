-- An allocation spread over several agents runs one container on each, and each container's
-- output has its own offsets: a line's source is its allocation, agent, stream and offset.
DROP INDEX task_logs_source;
CREATE UNIQUE INDEX task_logs_source ON task_logs (allocation_id, agent_id, stdtype, source_offset)
  WHERE source_offset IS NOT NULL;
