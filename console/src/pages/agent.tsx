import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, href, Loading, Page, useLoad, when } from '../ui';
import { Agent, AgentConfig } from './agent-config';
import { AgentRevisions } from './agent-revisions';

interface SessionRow {
  key: string;
  name?: string;
  created_at?: string;
  enabled?: boolean;
  forked_from?: unknown;
}

export function AgentPage({ agent }: { agent: string }) {
  const path = `/v2/agents/${encodeURIComponent(agent)}`;
  const loaded = useLoad(() => api<Agent>('GET', path), [path]);
  const sessions = useLoad(() => api<{ sessions: SessionRow[] }>('GET', `${path}/sessions?limit=100`), [path]);
  const [error, setError] = useState<unknown>();
  /** Bumped by each save of the form: the revisions panel reads the list again. */
  const [saves, setSaves] = useState(0);

  async function newSession() {
    setError(undefined);
    try {
      const s = await api<SessionRow>('POST', `${path}/sessions`, {});
      location.hash = href('agents', agent, 'sessions', s.key);
    } catch (err) {
      setError(err);
    }
  }

  return (
    <Page
      title={`Agent ${agent}`}
      actions={
        <>
          <a href={href('agents', agent, 'evaluations')}>Evaluations</a>
          <button type="button" onClick={newSession}>
            Chat in a new session
          </button>
        </>
      }
    >
      <ErrorBox error={error ?? loaded.error} />
      {loaded.loading && !loaded.data && <Loading what="the agent" />}
      {loaded.data && <AgentConfig key={`${path}@${loaded.data.updated_at ?? ''}`} agent={loaded.data} onSaved={() => setSaves((n) => n + 1)} />}
      <AgentRevisions path={path} saves={saves} onRestored={loaded.reload} />
      <h2>Sessions</h2>
      <ErrorBox error={sessions.error} />
      {sessions.data?.sessions.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">History</th>
            </tr>
          </thead>
          <tbody>
            {sessions.data.sessions.map((s) => (
              <tr key={s.key}>
                <td>
                  <a href={href('agents', agent, 'sessions', s.key)}>{s.key}</a>
                </td>
                <td>{s.name}</td>
                <td>{when(s.created_at)}</td>
                <td>
                  <a href={href('agents', agent, 'sessions', s.key, 'history')}>Timeline</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        sessions.data && <p>No sessions yet.</p>
      )}
    </Page>
  );
}
