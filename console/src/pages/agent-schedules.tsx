import { useState } from 'preact/hooks';
import { api, ApiError, forbidden } from '../api';
import { ErrorBox, Field, href, useLoad, when } from '../ui';

interface Schedule {
  key: string;
  name: string;
  description?: string;
  message: { type: 'text'; content: string }[];
  schedule: { type: 'interval'; interval: string } | { type: 'cron'; cron_expression: string };
  enabled: boolean;
  last_execution_at?: string | null;
  next_execution_at?: string | null;
}

interface Execution {
  workflow_run_id: string;
  session_key?: string | null;
  attempt: number;
  status: string;
  error_message?: string | null;
  executed_at: string;
}

const cadenceOf = (s: Schedule['schedule']) => (s.type === 'interval' ? `every ${s.interval}` : `cron ${s.cron_expression} (UTC)`);

/**
 * An agent's schedules (docs/schedules.md): each with its cadence and next due time, pause and resume (PATCH
 * `enabled`), delete, its recent executions on demand, and a form to add one (an ISO 8601 interval or a cron
 * expression, the message each run sends). The API's field errors (`schedule.interval`, …) sit at their fields.
 */
export function AgentSchedules({ agent }: { agent: string }) {
  const base = `/v2/agents/${encodeURIComponent(agent)}/schedules`;
  const list = useLoad(() => api<{ schedules: Schedule[] }>('GET', `${base}?limit=100`), [base]);
  const [error, setError] = useState<unknown>();
  const [open, setOpen] = useState<string>();

  async function act(method: string, key: string, body?: unknown) {
    setError(undefined);
    try {
      await api(method, `${base}/${encodeURIComponent(key)}`, body);
      list.reload();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section aria-labelledby="schedules">
      <h2 id="schedules">Schedules</h2>
      {forbidden(list.error) ? (
        <p class="notice" role="status">
          This credential may not see this agent's schedules (the service answered 403).
        </p>
      ) : (
        <>
          <ErrorBox error={error ?? list.error} />
          {list.data?.schedules.length ? (
            <table aria-label="Schedules">
              <thead>
                <tr>
                  <th scope="col">Schedule</th>
                  <th scope="col">Runs</th>
                  <th scope="col">Next due</th>
                  <th scope="col">Last run</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.schedules.map((s) => (
                  <tr key={s.key}>
                    <td>
                      {s.name} <small>{s.key}</small>
                    </td>
                    <td>{cadenceOf(s.schedule)}</td>
                    <td>{s.enabled ? (s.next_execution_at ? <time dateTime={s.next_execution_at}>{when(s.next_execution_at)}</time> : '') : 'paused'}</td>
                    <td>{s.last_execution_at ? when(s.last_execution_at) : 'never'}</td>
                    <td class="actions">
                      <button type="button" class="small" onClick={() => act('PATCH', s.key, { enabled: !s.enabled })} aria-label={`${s.enabled ? 'Pause' : 'Resume'} ${s.key}`}>
                        {s.enabled ? 'Pause' : 'Resume'}
                      </button>{' '}
                      <button type="button" class="small" aria-expanded={open === s.key} onClick={() => setOpen(open === s.key ? undefined : s.key)} aria-label={`Executions of ${s.key}`}>
                        Executions
                      </button>{' '}
                      <button type="button" class="small" onClick={() => act('DELETE', s.key)} aria-label={`Delete ${s.key}`}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            list.data && <p>No schedules yet.</p>
          )}
          {open && <Executions agent={agent} base={`${base}/${encodeURIComponent(open)}`} schedule={open} />}
          <CreateSchedule base={base} onCreated={list.reload} />
        </>
      )}
    </section>
  );
}

function Executions({ agent, base, schedule }: { agent: string; base: string; schedule: string }) {
  const runs = useLoad(() => api<{ executions: Execution[] }>('GET', `${base}/executions?limit=20`), [base]);
  return (
    <div class="card" aria-label={`Executions of ${schedule}`} role="region">
      <h3>Executions of {schedule}</h3>
      <ErrorBox error={runs.error} />
      {runs.data?.executions.length ? (
        <ul>
          {runs.data.executions.map((x) => (
            <li key={`${x.workflow_run_id}-${x.attempt}`}>
              {when(x.executed_at)}: {x.status}
              {x.attempt > 1 ? ` (attempt ${x.attempt})` : ''}
              {x.session_key && (
                <>
                  {' '}
                  in <a href={href('agents', agent, 'sessions', x.session_key)}>{x.session_key}</a>
                </>
              )}
              {x.error_message ? ` — ${x.error_message}` : ''}
            </li>
          ))}
        </ul>
      ) : (
        runs.data && <p>Not run yet.</p>
      )}
    </div>
  );
}

function CreateSchedule({ base, onCreated }: { base: string; onCreated: () => void }) {
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const [kind, setKind] = useState<'interval' | 'cron'>('interval');
  const [cadence, setCadence] = useState('PT6H');
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  const at = (...prefixes: string[]) => Object.entries(fields).find(([k]) => prefixes.some((p) => k === p || k.startsWith(`${p}.`) || k.startsWith(`${p}[`)))?.[1];
  const known = ['key', 'name', 'schedule', 'message'];
  const elsewhere = error && !Object.keys(fields).some((k) => known.some((p) => k === p || k.startsWith(`${p}.`) || k.startsWith(`${p}[`)));

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    setDone(undefined);
    try {
      const created = await api<Schedule>('POST', base, {
        ...(key ? { key } : {}),
        name: name || key,
        schedule: kind === 'interval' ? { type: 'interval', interval: cadence.trim() } : { type: 'cron', cron_expression: cadence.trim() },
        message: [{ type: 'text', content: message.trim() }],
      });
      setDone(created.key);
      setKey('');
      setName('');
      setMessage('');
      onCreated();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <form class="card" onSubmit={submit} aria-labelledby="create-schedule">
      <h3 id="create-schedule">Add a schedule</h3>
      <div class="row">
        <Field label="Schedule key" error={at('key')}>
          {(id, d) => <input id={id} aria-describedby={d} value={key} onInput={(e) => setKey(e.currentTarget.value)} />}
        </Field>
        <Field label="Schedule name" error={at('name')}>
          {(id, d) => <input id={id} aria-describedby={d} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Runs" error={at('schedule.type')}>
          {(id, d) => (
            <select
              id={id}
              aria-describedby={d}
              value={kind}
              onChange={(e) => {
                const next = e.currentTarget.value as 'interval' | 'cron';
                setKind(next);
                setCadence(next === 'interval' ? 'PT6H' : '0 7 * * 1-5');
              }}
            >
              <option value="interval">At an interval</option>
              <option value="cron">On a cron schedule (UTC)</option>
            </select>
          )}
        </Field>
        <Field label={kind === 'interval' ? 'Interval' : 'Cron expression'} error={at('schedule')} hint={kind === 'interval' ? 'ISO 8601: PT6H, P1D (one hour at least)' : '5 fields, UTC'}>
          {(id, d) => <input id={id} aria-describedby={d} required value={cadence} onInput={(e) => setCadence(e.currentTarget.value)} />}
        </Field>
      </div>
      <Field label="Message each run sends" error={at('message')}>
        {(id, d) => <input id={id} aria-describedby={d} class="wide" required value={message} onInput={(e) => setMessage(e.currentTarget.value)} />}
      </Field>
      <ErrorBox error={elsewhere ? error : undefined} />
      {done && <p role="status">Created schedule {done}.</p>}
      <button type="submit">Add schedule</button>
    </form>
  );
}
