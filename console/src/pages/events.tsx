import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { forbidden, qs, sse } from '../api';
import { ErrorBox, Field, Json, Page, useLoad, when } from '../ui';
import { usePolling } from './pipeline-run';

interface LogEvent {
  position: number;
  stream_id: string;
  type: string;
  data: unknown;
  metadata?: { actor?: { type: string; id: string; via?: string } };
  recorded_at: string;
}

/** Who appended an event: the actor the service recorded (`api_key:…`, `user:…`, `system:…`), and the key it used. */
const byOf = (e: LogEvent) => (e.metadata?.actor ? `${e.metadata.actor.type}:${e.metadata.actor.id}${e.metadata.actor.via ? ` (via ${e.metadata.actor.via})` : ''}` : '');
interface Lag {
  projection: string;
  checkpoint: number;
  head: number;
  behind: number;
  running: boolean;
}

const KEEP = 500;
/**
 * How far back the tail starts: enough to see what just happened without replaying the whole log. With a
 * filter the server skips what does not match, so it looks further back for the few events that do.
 */
const BACKLOG = 100;
const FILTERED_BACKLOG = 10_000;

/**
 * The live tail of `/v2/events/stream` (filtered by category and type on the server) and each projection's
 * lag, which `/health/ready` reports (checkpoint, head of the log, events behind).
 */
export function EventsPage() {
  const [category, setCategory] = useState('');
  const [type, setType] = useState('');
  const [applied, setApplied] = useState({ category: '', type: '' });
  const [events, setEvents] = useState<LogEvent[]>([]);
  const [live, setLive] = useState(false);
  const [error, setError] = useState<unknown>();
  const [open, setOpen] = useState<number>();
  const health = useLoad(() => fetch('/health/ready').then((r) => r.json() as Promise<{ projections: Lag[] }>), []);
  usePolling(health.reload, true);

  useEffect(() => {
    const ctrl = new AbortController();
    setEvents([]);
    setError(undefined);
    (async () => {
      const ready = await fetch('/health/ready').then((r) => r.json() as Promise<{ projections?: Lag[] }>).catch(() => undefined);
      const head = Math.max(0, ...(ready?.projections ?? []).map((p) => p.head));
      const path = `/v2/events/stream${qs({ after: Math.max(0, head - (applied.category || applied.type ? FILTERED_BACKLOG : BACKLOG)), category: applied.category, type: applied.type })}`;
      for await (const m of sse('GET', path, undefined, ctrl.signal)) {
        if (m.event === 'caught_up') setLive(true);
        else if (m.data && typeof m.data === 'object' && 'position' in m.data) setEvents((list) => [m.data as LogEvent, ...list].slice(0, KEEP));
      }
    })().catch((err) => !ctrl.signal.aborted && setError(err));
    return () => (ctrl.abort(), setLive(false));
  }, [applied]);

  return (
    <Page title="Event log">
      <h2>Projection lag</h2>
      <ErrorBox error={health.error} />
      {health.data && <LagTable lags={health.data.projections} />}
      <h2>Live tail</h2>
      <form class="row" role="search" onSubmit={(e) => (e.preventDefault(), setApplied({ category, type }))}>
        <Field label="Categories" hint="e.g. corpus, session (comma separated)">
          {(id, d) => <input id={id} aria-describedby={d} value={category} onInput={(e) => setCategory(e.currentTarget.value)} />}
        </Field>
        <Field label="Types" hint="e.g. CorpusCreated">
          {(id, d) => <input id={id} aria-describedby={d} value={type} onInput={(e) => setType(e.currentTarget.value)} />}
        </Field>
        <button type="submit">Apply filters</button>
      </form>
      {forbidden(error) ? (
        // One message: the tail is not "Connecting…" beside a 403 when the credential may not read the log.
        <p class="notice" role="status">
          This credential may not read the event log (the service answered 403): it needs the owner or administrator role.
        </p>
      ) : (
        <>
          <p aria-live="polite" class="status">
            {live ? 'Live: new events appear at the top.' : 'Connecting…'} {events.length} shown.
          </p>
          {live && !events.length && (applied.category || applied.type) && (
            <p class="hint" role="note">
              No event of {[applied.category && `category ${applied.category}`, applied.type && `type ${applied.type}`].filter(Boolean).join(' and ')} among the last {FILTERED_BACKLOG.toLocaleString('en')} events; new ones will appear here.
              A category is the start of a stream's name, before its first dash (<code>corpus</code>, <code>document</code>, <code>agent</code>, <code>session</code>, <code>pipeline</code>…); a type is an event's name (<code>CorpusCreated</code>). Both are exact.
            </p>
          )}
          <ErrorBox error={error} />
          <table class="log">
            <thead>
              <tr>
                <th scope="col">Position</th>
                <th scope="col">Type</th>
                <th scope="col">Stream</th>
                <th scope="col">By</th>
                <th scope="col">Recorded</th>
              </tr>
            </thead>
            <tbody>
              {events.map((e) => (
                <Fragment key={e.position}>
                  <tr>
                    <td>{e.position}</td>
                    <td>
                      <button type="button" class="link" aria-expanded={open === e.position} onClick={() => setOpen(open === e.position ? undefined : e.position)}>
                        {e.type}
                      </button>
                    </td>
                    <td>{e.stream_id}</td>
                    <td>{byOf(e)}</td>
                    <td>{when(e.recorded_at)}</td>
                  </tr>
                  {open === e.position && (
                    <tr>
                      <td colSpan={5}>
                        <Json value={e.data} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </>
      )}
    </Page>
  );
}

/** A line saying whether every projection has caught up, over a short scrolling table (there are ~20). */
function LagTable({ lags }: { lags: Lag[] }) {
  const late = lags.filter((p) => p.behind > 0 || !p.running);
  const head = Math.max(0, ...lags.map((p) => p.head));
  return (
    <>
      <p class={late.length ? 'error' : ''}>
        {late.length ? `${late.length} of ${lags.length} projections behind or stopped` : `${lags.length} projections, all caught up`} (head of the log: {head})
      </p>
      <div class="lag" tabIndex={0} role="region" aria-label="Projection lag by projection">
        <table>
          <thead>
            <tr>
              <th scope="col">Projection</th>
              <th scope="col">Checkpoint</th>
              <th scope="col">Head</th>
              <th scope="col">Behind</th>
              <th scope="col">Running</th>
            </tr>
          </thead>
          <tbody>
            {lags.map((p) => (
              <tr key={p.projection} class={p.behind > 0 || !p.running ? 'behind' : ''}>
                <td>{p.projection}</td>
                <td>{p.checkpoint}</td>
                <td>{p.head}</td>
                <td>{p.behind}</td>
                <td>{p.running ? 'yes' : 'no'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
