-- Times cross the C++ boundary as Unix nanoseconds (bigint); PostgreSQL keeps microseconds.
-- det_ts turns nanoseconds into a timestamptz, det_ns the reverse; both return NULL for NULL.

CREATE FUNCTION det_ts(ns bigint) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT to_timestamp(0) + (ns / 1000) * interval '1 microsecond' $$;

CREATE FUNCTION det_ns(t timestamptz) RETURNS bigint
  LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT (extract(epoch FROM t) * 1000000000)::bigint $$;
