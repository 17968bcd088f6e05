-- The master's system of record. One migration per file, applied in order, each exactly once.

CREATE TABLE cluster_info (
  id          text PRIMARY KEY,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id             bigserial PRIMARY KEY,
  username       text NOT NULL UNIQUE,
  password_hash  text NOT NULL DEFAULT '',
  admin          boolean NOT NULL DEFAULT false,
  active         boolean NOT NULL DEFAULT true,
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE user_sessions (
  id          bigserial PRIMARY KEY,
  user_id     bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash  text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);

CREATE TABLE access_tokens (
  id           bigserial PRIMARY KEY,
  user_id      bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash   text NOT NULL UNIQUE,
  description  text NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz,
  revoked_at   timestamptz
);

CREATE TABLE resource_pools (
  name         text PRIMARY KEY,
  description  text NOT NULL DEFAULT '',
  config       jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE agents (
  id             text PRIMARY KEY,
  resource_pool  text NOT NULL,
  hostname       text NOT NULL DEFAULT '',
  version        text NOT NULL DEFAULT '',
  slots          jsonb NOT NULL DEFAULT '[]',
  state          text NOT NULL,
  first_seen     timestamptz NOT NULL DEFAULT now(),
  last_seen      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agent_connections (
  id              bigserial PRIMARY KEY,
  agent_id        text NOT NULL,
  connected_at    timestamptz NOT NULL,
  disconnected_at timestamptz,
  reason          text NOT NULL DEFAULT ''
);
CREATE INDEX agent_connections_agent ON agent_connections (agent_id, connected_at);

CREATE TABLE experiments (
  id              bigserial PRIMARY KEY,
  name            text NOT NULL DEFAULT '',
  config          text NOT NULL,
  state           text NOT NULL,
  owner_id        bigint REFERENCES users (id),
  searcher_state  bytea,
  model_definition bytea,
  archived        boolean NOT NULL DEFAULT false,
  start_time      timestamptz NOT NULL DEFAULT now(),
  end_time        timestamptz
);
CREATE INDEX experiments_state ON experiments (state);

CREATE TABLE trials (
  id               bigserial PRIMARY KEY,
  experiment_id    bigint NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  request_id       text NOT NULL,
  hparams          jsonb NOT NULL DEFAULT '{}',
  state            text NOT NULL,
  restarts         integer NOT NULL DEFAULT 0,
  run_id           integer NOT NULL DEFAULT 0,
  start_time       timestamptz NOT NULL DEFAULT now(),
  end_time         timestamptz,
  UNIQUE (experiment_id, request_id)
);

-- kind: 'training' | 'validation'. (trial, kind, step) is unique: a re-sent report cannot
-- duplicate a point.
CREATE TABLE metrics (
  trial_id     bigint NOT NULL,
  kind         text NOT NULL,
  step         bigint NOT NULL,
  run_id       integer NOT NULL DEFAULT 0,
  reported_at  timestamptz NOT NULL DEFAULT now(),
  metrics      jsonb NOT NULL,
  PRIMARY KEY (trial_id, kind, step)
);

CREATE TABLE checkpoints (
  uuid           uuid PRIMARY KEY,
  trial_id       bigint NOT NULL REFERENCES trials (id) ON DELETE CASCADE,
  steps_completed bigint NOT NULL,
  state          text NOT NULL,
  resources      jsonb NOT NULL DEFAULT '{}',
  metadata       jsonb NOT NULL DEFAULT '{}',
  reported_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX checkpoints_trial ON checkpoints (trial_id);

CREATE TABLE tasks (
  id          text PRIMARY KEY,
  type        text NOT NULL,
  trial_id    bigint REFERENCES trials (id) ON DELETE SET NULL,
  config      jsonb NOT NULL DEFAULT '{}',
  start_time  timestamptz NOT NULL DEFAULT now(),
  end_time    timestamptz
);

CREATE TABLE allocations (
  id             text PRIMARY KEY,
  task_id        text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  resource_pool  text NOT NULL,
  slots          integer NOT NULL,
  agents         jsonb NOT NULL DEFAULT '[]',
  state          text NOT NULL,
  start_time     timestamptz,
  end_time       timestamptz,
  exit_code      integer,
  failure        text
);

CREATE TABLE task_logs (
  id         bigserial PRIMARY KEY,
  task_id    text NOT NULL,
  agent_id   text NOT NULL DEFAULT '',
  timestamp  timestamptz NOT NULL,
  level      text NOT NULL DEFAULT 'INFO',
  stdtype    text NOT NULL DEFAULT 'stdout',
  log        text NOT NULL
);
CREATE INDEX task_logs_task ON task_logs (task_id, id);

-- Batches written by the ingestion writer; a batch id is committed in the same transaction as its
-- rows, so a batch retried after an unknown commit outcome is recognised and not written twice.
CREATE TABLE ingest_batches (
  batch_id     text PRIMARY KEY,
  committed_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE instances (
  id              text PRIMARY KEY,
  provider        text NOT NULL,
  resource_pool   text NOT NULL,
  instance_type   text NOT NULL DEFAULT '',
  spot            boolean NOT NULL DEFAULT false,
  state           text NOT NULL,
  agent_id        text,
  launched_at     timestamptz NOT NULL DEFAULT now(),
  terminated_at   timestamptz
);

CREATE TABLE scaling_decisions (
  id             bigserial PRIMARY KEY,
  resource_pool  text NOT NULL,
  decided_at     timestamptz NOT NULL DEFAULT now(),
  launch         integer NOT NULL DEFAULT 0,
  terminate      jsonb NOT NULL DEFAULT '[]',
  reasons        jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX scaling_decisions_pool ON scaling_decisions (resource_pool, decided_at);
