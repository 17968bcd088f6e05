-- The Unix account a user's tasks run as on agents (`det user link-with-agent-user`, Determined's
-- agent user group): all four set, or none (the cluster's security.default_task).
ALTER TABLE users
  ADD COLUMN agent_uid integer CHECK (agent_uid >= 0),
  ADD COLUMN agent_gid integer CHECK (agent_gid >= 0),
  ADD COLUMN agent_user text,
  ADD COLUMN agent_group text,
  ADD CONSTRAINT users_agent_user_group_whole CHECK (
    (agent_uid IS NULL) = (agent_gid IS NULL) AND (agent_uid IS NULL) = (agent_user IS NULL)
    AND (agent_uid IS NULL) = (agent_group IS NULL));
