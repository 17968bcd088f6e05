-- A checkpoint whose files checkpoint GC (or det checkpoint delete) is removing. It is claimed in
-- the transaction that checks that no model version registers it, each row locked first, so a
-- registration either commits before the claim (and the checkpoint is kept) or waits for it and
-- is refused: no model version points at files that are going.
ALTER TABLE checkpoints ADD COLUMN removing boolean NOT NULL DEFAULT false;
