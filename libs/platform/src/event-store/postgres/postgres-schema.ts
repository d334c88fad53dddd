/**
 * The PostgreSQL event store's tables and its append function (docs/events.md, "PostgreSQL: commit order").
 *
 * Every append runs inside `es_append_group`, one statement (one round trip, its own transaction), which first takes
 * the transaction-scoped advisory lock `ES_COMMIT_LOCK`: appends commit one transaction at a time, and a position is
 * assigned (max + 1) only while the lock is held. PostgreSQL releases a transaction's locks after its commit is
 * durable and visible, so no reader can see position n+1 before n: a subscriber reading "after p" never passes over
 * an event that commits late. Each append of a group runs in its own subtransaction (BEGIN … EXCEPTION), so one
 * failure rolls back that append only; a conflict writes nothing to begin with. The group's NOTIFY is delivered at
 * commit, never for a rolled-back append.
 */

/** The advisory lock key every append takes (any 64-bit number unlikely to be used by something else on the database). */
export const ES_COMMIT_LOCK = 4_707_474_001;

/** The channel appends NOTIFY on; its payload is a hint (the table is the truth). */
export const ES_CHANNEL = 'ars_es_appended';

export const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS es_events (
  position    bigint      PRIMARY KEY,
  stream_id   text        NOT NULL,
  revision    bigint      NOT NULL,
  event_id    text        NOT NULL,
  type        text        NOT NULL,
  category    text        NOT NULL,
  data        text        NOT NULL,
  metadata    text        NOT NULL,
  recorded_at timestamptz NOT NULL,
  UNIQUE (stream_id, revision),
  UNIQUE (stream_id, event_id)
);
CREATE INDEX IF NOT EXISTS es_events_category ON es_events (category, position);
CREATE INDEX IF NOT EXISTS es_events_type ON es_events (type, position);
CREATE TABLE IF NOT EXISTS es_streams (
  stream_id text   PRIMARY KEY,
  revision  bigint NOT NULL
);

-- One append, checked then written, inside the caller's transaction (which holds ES_COMMIT_LOCK). Returns its
-- outcome as json; throws only on unexpected errors (the caller's subtransaction rolls the append back).
CREATE OR REPLACE FUNCTION es_append_one(a json, next_position bigint, now_ms bigint) RETURNS json
LANGUAGE plpgsql AS $fn$
DECLARE
  sid text := a->>'s';
  expected text := a->>'x';
  events json := a->'e';
  n int := json_array_length(a->'e');
  cur bigint;
  matched int;
  first_rev bigint;
  last_rev bigint;
  last_pos bigint;
  mismatched int;
  rev bigint;
  pos bigint := next_position - 1;
  cond json := a->'c';
  e json;
BEGIN
  SELECT revision INTO cur FROM es_streams WHERE stream_id = sid;
  IF n > 0 THEN
    -- G3: the same ids again. All found (in place, for an exact expectation): a no-op; some: a conflict.
    SELECT count(*) INTO matched FROM es_events WHERE stream_id = sid AND event_id IN (SELECT value->>'i' FROM json_array_elements(events));
    IF matched > 0 THEN
      IF matched <> n THEN
        RETURN json_build_object('conflict', true, 'actual', cur);
      END IF;
      first_rev := CASE WHEN expected = 'no_stream' THEN 0 WHEN expected ~ '^[0-9]+$' THEN expected::bigint + 1 ELSE NULL END;
      IF first_rev IS NOT NULL THEN
        SELECT count(*) INTO mismatched
          FROM json_array_elements(events) WITH ORDINALITY AS x(value, k)
          JOIN es_events ev ON ev.stream_id = sid AND ev.event_id = x.value->>'i'
         WHERE ev.revision <> first_rev + x.k - 1;
        IF mismatched > 0 THEN
          RETURN json_build_object('conflict', true, 'actual', cur);
        END IF;
      END IF;
      SELECT ev.revision, ev.position INTO last_rev, last_pos FROM es_events ev
       WHERE ev.stream_id = sid AND ev.event_id = (events->(n - 1))->>'i';
      RETURN json_build_object('ok', true, 'next', last_rev, 'position', last_pos, 'appended', false, 'count', 0);
    END IF;
  END IF;
  IF NOT (expected = 'any'
      OR (expected = 'no_stream' AND cur IS NULL)
      OR (expected = 'stream_exists' AND cur IS NOT NULL)
      OR (expected ~ '^[0-9]+$' AND cur = expected::bigint)) THEN
    RETURN json_build_object('conflict', true, 'actual', cur);
  END IF;
  -- An append condition (a lease's fence): refused when the named stream got an event of the named types after the
  -- given revision. Checked under the commit lock, so no such event can commit between the check and this append.
  IF cond IS NOT NULL THEN
    PERFORM 1 FROM es_events
      WHERE stream_id = cond->>'s' AND revision > (cond->>'r')::bigint
        AND type IN (SELECT value FROM json_array_elements_text(cond->'t'))
      LIMIT 1;
    IF FOUND THEN
      RETURN json_build_object('fenced', true);
    END IF;
  END IF;
  IF n = 0 THEN
    RETURN json_build_object('ok', true, 'next', COALESCE(cur, -1), 'position', next_position - 1, 'appended', false, 'count', 0);
  END IF;
  rev := COALESCE(cur, -1);
  -- One pass over the array (indexing a json value, events->i, walks it from the start: quadratic in a batch).
  FOR e IN SELECT value FROM json_array_elements(events) LOOP
    rev := rev + 1;
    pos := pos + 1;
    INSERT INTO es_events (position, stream_id, revision, event_id, type, category, data, metadata, recorded_at)
    VALUES (pos, sid, rev, e->>'i', e->>'t', split_part(sid, '-', 1), e->>'d', e->>'m', to_timestamp(now_ms / 1000.0));
  END LOOP;
  INSERT INTO es_streams (stream_id, revision) VALUES (sid, rev)
    ON CONFLICT (stream_id) DO UPDATE SET revision = excluded.revision;
  RETURN json_build_object('ok', true, 'next', rev, 'position', pos, 'appended', true, 'count', n);
END
$fn$;

-- A group of appends in one transaction (one commit, one fsync), each in its own subtransaction.
CREATE OR REPLACE FUNCTION es_append_group(appends json) RETURNS json
LANGUAGE plpgsql AS $fn$
DECLARE
  a json;
  outcome json;
  outcomes json[] := '{}';
  head bigint;
  first_after bigint;
  now_ms bigint := floor(extract(epoch from clock_timestamp()) * 1000);
  types text[] := '{}';
  categories text[] := '{}';
  payload text;
BEGIN
  PERFORM pg_advisory_xact_lock(${ES_COMMIT_LOCK});
  SELECT COALESCE(max(position), 0) INTO head FROM es_events;
  first_after := head;
  FOR a IN SELECT value FROM json_array_elements(appends) LOOP
    BEGIN
      outcome := es_append_one(a, head + 1, now_ms);
      IF (outcome->>'appended')::boolean IS TRUE THEN
        head := (outcome->>'position')::bigint;
        types := types || ARRAY(SELECT DISTINCT value->>'t' FROM json_array_elements(a->'e'));
        categories := array_append(categories, split_part(a->>'s', '-', 1));
      END IF;
    EXCEPTION WHEN OTHERS THEN
      outcome := json_build_object('failed', SQLERRM, 'code', SQLSTATE);
    END;
    outcomes := array_append(outcomes, outcome);
  END LOOP;
  IF head > first_after THEN
    payload := json_build_object('after', first_after, 'head', head,
      'types', ARRAY(SELECT DISTINCT unnest(types)), 'categories', ARRAY(SELECT DISTINCT unnest(categories)))::text;
    -- NOTIFY payloads stop at 8000 bytes: past that, the head alone (listeners then wake for it whatever they read).
    IF octet_length(payload) > 7900 THEN
      payload := json_build_object('after', first_after, 'head', head)::text;
    END IF;
    PERFORM pg_notify('${ES_CHANNEL}', payload);
  END IF;
  RETURN json_build_object('outcomes', array_to_json(outcomes), 'recorded_at', now_ms);
END
$fn$;
`;
