import { collection } from '@lib/platform/projections';
import type { CompactionConfig } from '../domain/agent-config';
import type { SessionEvent } from '../domain/session-events';

/**
 * One row per session, keyed `<agentId>.<sessionKey>` (an agent deleted and created again under its key starts
 * with no sessions). Serves the session list and its `metadata_filter`; a session's events are read from its
 * stream (docs/agents.md).
 */
export type SessionRow = {
  readonly id: string;
  readonly agent_id: string;
  readonly agent_key: string;
  readonly key: string;
  readonly name: string;
  readonly description?: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly enabled: boolean;
  readonly tti_minutes: number;
  readonly status: 'unstarted' | 'running' | 'stopped';
  readonly current_step_name?: string;
  readonly secret_names: readonly string[];
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly turns: number;
  readonly created_at: string;
  readonly updated_at: string;
  /** Set while a turn runs: the turn and its runner's lease holder, for the crash sweep. */
  readonly effective_compaction?: CompactionConfig;
  readonly alias_key?: string;
  readonly end_user?: string;
  readonly created_by_agent_key?: string;
  readonly created_by_session_key?: string;
  /** A replay's original session key (docs/replay.md): evaluations leave replays out of their choice. */
  readonly replay_of?: string;
  /** A fork's parent (issue 48: the console said nothing about where a fork came from). */
  readonly forked_from?: { readonly agent_key: string; readonly session_key: string };
  /** The revision a pinned session runs (docs/replay.md); absent: the agent's current one. */
  readonly agent_revision?: number;
  readonly turn_id?: string | null;
  readonly holder?: string | null;
};

export const SESSIONS = collection<SessionRow>('agent_sessions');

export const sessionRowId = (agentId: string, sessionKey: string): string => `${agentId}.${sessionKey}`;

type Created = Extract<SessionEvent, { type: 'SessionCreated' }>['data'];

export const sessionRow = (d: Created): SessionRow => ({
  id: sessionRowId(d.agentId, d.sessionKey),
  agent_id: d.agentId,
  agent_key: d.agentKey,
  key: d.sessionKey,
  name: d.name,
  ...(d.description !== undefined ? { description: d.description } : {}),
  metadata: d.metadata,
  enabled: d.enabled,
  tti_minutes: d.ttiMinutes,
  status: 'unstarted',
  secret_names: d.secrets?.names ?? [],
  input_tokens: 0,
  output_tokens: 0,
  turns: 0,
  ...(d.compaction ? { effective_compaction: d.compaction } : {}),
  ...(d.aliasKey ? { alias_key: d.aliasKey } : {}),
  ...(d.endUser ? { end_user: d.endUser } : {}),
  ...(d.createdBy ? { created_by_agent_key: d.createdBy.agentKey, created_by_session_key: d.createdBy.sessionKey } : {}),
  ...(d.replayOf ? { replay_of: d.replayOf.sessionKey } : {}),
  ...(d.forkedFrom ? { forked_from: { agent_key: d.forkedFrom.agentKey, session_key: d.forkedFrom.sessionKey } } : {}),
  ...(d.agentRevision !== undefined ? { agent_revision: d.agentRevision } : {}),
  created_at: d.createdAt,
  updated_at: d.createdAt,
});

/** The reference's AgentSession. Session secrets show their names only, each `****`. */
export function sessionView(row: SessionRow, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const total = row.input_tokens + row.output_tokens;
  return {
    key: row.key,
    agent_key: row.agent_key,
    name: row.name,
    ...(row.description !== undefined ? { description: row.description } : {}),
    metadata: row.metadata,
    ...(row.current_step_name ? { current_step_name: row.current_step_name } : {}),
    enabled: row.enabled,
    status: row.status,
    tti_minutes: row.tti_minutes,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.effective_compaction ? { effective_compaction: row.effective_compaction } : {}),
    ...(row.alias_key ? { alias_key: row.alias_key } : {}),
    ...(row.end_user ? { end_user: row.end_user } : {}),
    ...(row.created_by_agent_key ? { created_by_agent_key: row.created_by_agent_key, created_by_session_key: row.created_by_session_key } : {}),
    // Ours, beside the reference's fields: where a session came from and the revision it is pinned to.
    ...(row.forked_from ? { forked_from: row.forked_from } : {}),
    ...(row.replay_of ? { replay_of: row.replay_of } : {}),
    ...(row.agent_revision !== undefined ? { agent_revision: row.agent_revision } : {}),
    session_context_usage: { input_tokens: { count: row.input_tokens }, output_tokens: { count: row.output_tokens }, total_tokens: total },
    ...(row.secret_names.length ? { secrets: Object.fromEntries(row.secret_names.map((n) => [n, '****'])) } : {}),
    ...extra,
  };
}
