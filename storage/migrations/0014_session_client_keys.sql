-- The CURVE public key (Z85) of the det client a login session was issued to over the gateway.
-- Such a session is accepted only from that key, and never over REST; NULL (a REST login, or a
-- gateway in plaintext) binds it to nothing. See master/auth/users.h.
ALTER TABLE user_sessions ADD COLUMN client_key text;
