-- The key that signs allocation tokens (the Core API's credentials for trial code): kept with the
-- cluster so tokens handed to running trials stay valid across master restarts.
ALTER TABLE cluster_info ADD COLUMN token_secret text;
