-- Determined's run metadata (core_context.train.set_metadata, POST /api/v1/runs/{id}/metadata):
-- a JSON object per trial that its code writes and anyone may read.
ALTER TABLE trials ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
