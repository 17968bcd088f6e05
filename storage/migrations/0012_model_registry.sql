-- Determined's model registry: models, and their numbered versions, each pointing at a checkpoint.
-- A version keeps its checkpoint as it was registered (`checkpoint`: v1Checkpoint as the REST API
-- shows it; `storage`: its experiment's checkpoint_storage, keys included, for the master's own
-- reads), so that it outlives its experiment's deletion: no foreign key to checkpoints, whose rows
-- go with their trials. A registered checkpoint is never garbage-collected (ListScoredCheckpoints
-- leaves out every uuid named here).
CREATE TABLE models (
  id            bigserial PRIMARY KEY,
  name          text NOT NULL UNIQUE CHECK (name <> ''),
  description   text NOT NULL DEFAULT '',
  metadata      jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
  labels        jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(labels) = 'array'),
  notes         text NOT NULL DEFAULT '',
  archived      boolean NOT NULL DEFAULT false,
  workspace_id  integer NOT NULL DEFAULT 1,
  user_id       bigint REFERENCES users (id) ON DELETE SET NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE model_versions (
  id               bigserial PRIMARY KEY,
  model_id         bigint NOT NULL REFERENCES models (id) ON DELETE CASCADE,
  version          integer NOT NULL CHECK (version > 0),
  checkpoint_uuid  uuid NOT NULL,
  checkpoint       jsonb NOT NULL,
  storage          jsonb NOT NULL,
  name             text NOT NULL DEFAULT '',
  comment          text NOT NULL DEFAULT '',
  metadata         jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
  labels           jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(labels) = 'array'),
  notes            text NOT NULL DEFAULT '',
  user_id          bigint REFERENCES users (id) ON DELETE SET NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (model_id, version)
);
CREATE INDEX model_versions_checkpoint ON model_versions (checkpoint_uuid);
