import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, forbidden } from '../api';
import { ErrorBox, href, Loading, Page, useLoad, when } from '../ui';
import { Agent, AgentConfig } from './agent-config';
import { AgentRevisions } from './agent-revisions';
import { AgentConnectors } from './agent-connectors';
import { AgentGuardrails } from './agent-guardrails';
import { AgentMemory } from './agent-memory';
import { AgentSchedules } from './agent-schedules';

interface SessionRow {
  key: string;
  name?: string;
  created_at?: string;
  enabled?: boolean;
  status?: string;
  forked_from?: { agent_key: string; session_key: string };
  replay_of?: string;
  agent_revision?: number;
}

/** Where a session came from: a fork's parent, a replay's original (links), the revision it is pinned to; nothing for a plain one. */
export function Origin({ agent, session }: { agent: string; session: Pick<SessionRow, 'forked_from' | 'replay_of' | 'agent_revision'> }) {
  const parts: ComponentChildren[] = [];
  const f = session.forked_from;
  if (f)
    parts.push(
      <span key="fork">
        fork of <a href={href('agents', f.agent_key, 'sessions', f.session_key, 'history')}>{f.session_key}</a>
        {f.agent_key !== agent ? ` (agent ${f.agent_key})` : ''}
      </span>,
    );
  if (session.replay_of)
    parts.push(
      <span key="replay">
        replay of <a href={href('agents', agent, 'sessions', session.replay_of, 'history')}>{session.replay_of}</a>
      </span>,
    );
  if (session.agent_revision !== undefined) parts.push(<span key="pin">pinned to revision {session.agent_revision}</span>);
  return <>{parts.flatMap((p, i) => (i ? [' · ', p] : [p]))}</>;
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

  // A credential that may not read the agent (403), or to which it does not exist (404: a data key bounded to its
  // corpora sees no agents), is told so once, not once per panel.
  if (forbidden(loaded.error) || (loaded.error instanceof ApiError && loaded.error.status === 404))
    return (
      <Page title={`Agent ${agent}`}>
        <p class="notice" role="status">
          {forbidden(loaded.error) ? "This credential may not see this agent's configuration, memory, connectors or sessions (the service answered 403)." : `${(loaded.error as ApiError).message} (the service answered 404 to this credential).`}
        </p>
      </Page>
    );

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
      {loaded.data && <AgentSchedules agent={agent} />}
      {loaded.data && <AgentMemory agent={agent} />}
      {loaded.data && <AgentGuardrails key={`${path}@${loaded.data.updated_at ?? ''}`} agent={agent} guardrails={loaded.data.guardrails} onSaved={() => setSaves((n) => n + 1)} />}
      {loaded.data && <AgentConnectors agent={agent} />}
      <h2>Sessions</h2>
      <ErrorBox error={sessions.error} />
      {sessions.data?.sessions.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Origin</th>
              <th scope="col">Created</th>
              <th scope="col">History</th>
              <th scope="col">Traces</th>
            </tr>
          </thead>
          <tbody>
            {sessions.data.sessions.map((s) => (
              <tr key={s.key}>
                <td>
                  <a href={href('agents', agent, 'sessions', s.key)}>{s.key}</a>
                </td>
                <td>{s.name}</td>
                <td>{s.status === 'running' ? 'answering' : s.status === 'unstarted' ? 'new' : s.status === 'stopped' ? 'idle' : s.status}</td>
                <td>
                  <Origin agent={agent} session={s} />
                </td>
                <td>{when(s.created_at)}</td>
                <td>
                  <a href={href('agents', agent, 'sessions', s.key, 'history')}>Timeline</a>
                </td>
                <td>
                  <a href={href('agents', agent, 'sessions', s.key, 'traces')} aria-label={`Traces of ${s.key}`}>
                    Traces
                  </a>
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
