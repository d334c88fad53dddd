import { Inject, Injectable, Optional } from '@nestjs/common';
import { allows } from '@lib/auth';
import { DomainError, type Actor, type FilterExpr, parseFilter, READ_STORE, type ReadStore } from '@lib/platform';
import { AGENTS, type AgentRow, SESSIONS, type SessionRow, sessionRowId } from '../../read-models';
import { CAPABILITY_LOOKUP, type CapabilityLookup } from '../access/capability-lookup.port';

/** The most sessions a scope may name one by one (an end user's, a restricted caller's, a metadata filter's). */
export const RECALL_MAX_LISTED_SESSIONS = 10_000;

/** What a recall may search: the agent's index, and the sessions in it (all but the current one, or only those listed). */
export interface RecallScope {
  readonly agentId: string;
  readonly currentSessionKey: string;
  /** Absent: every session of the agent; present: only these (possibly none). */
  readonly sessionKeys?: readonly string[];
  /** Sessions left out of a whole-agent scope: replays (their messages are copies of their original's). */
  readonly excludedSessionKeys?: readonly string[];
}

/** A scope the call cannot have, in words the model can act on. */
export class RecallRefused extends Error {}

const field = (name: string) => ({ level: 'doc' as const, name });

/**
 * Which past sessions a session may recall (docs/agents.md, "Recall"): an end user's session (it has an owner) only
 * that owner's sessions of the same agent; an operator session the agent's sessions its turn's caller may read (the
 * rule of listing a session's events: `agent.view`), else only the caller's own (those recorded with the caller as
 * owner). The service's own callers (schedules, wakeups, pipelines) read as the agent's configurers set them up: every
 * session. Replays are left out (their messages are copies). A `metadata_filter` narrows to the sessions whose
 * metadata it selects (the session list's grammar).
 */
@Injectable()
export class RecallScopes {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Optional() @Inject(CAPABILITY_LOOKUP) private readonly lookup?: CapabilityLookup,
  ) {}

  async of(agentKey: string, sessionKey: string, caller: Actor | undefined, metadataFilter: string | undefined): Promise<RecallScope> {
    const agent = await this.reads.get<AgentRow>(AGENTS, agentKey);
    if (!agent) throw new RecallRefused(`agent ${agentKey} is not there any more`);
    const session = await this.reads.get<SessionRow>(SESSIONS, sessionRowId(agent.agent_id, sessionKey));
    if (!session) throw new RecallRefused('this session is not listed yet: try again');
    const base = { agentId: agent.agent_id, currentSessionKey: sessionKey };
    let metadata: FilterExpr | undefined;
    if (metadataFilter !== undefined) {
      try {
        metadata = parseFilter(metadataFilter);
      } catch (e) {
        if (e instanceof DomainError) throw new RecallRefused(`metadata_filter: ${e.message}`);
        throw e;
      }
    }
    let owner: string | undefined;
    if (session.end_user !== undefined) owner = session.end_user;
    else if (await this.readsAll(agentKey, caller)) owner = undefined;
    else if (caller) owner = `${caller.type}:${caller.id}`;
    else return { ...base, sessionKeys: [] };
    if (owner === undefined && !metadata) return { ...base, excludedSessionKeys: await this.replays(agent.agent_id) };
    return { ...base, sessionKeys: await this.listed(agent.agent_id, owner, metadata) };
  }

  /** Whether the turn's caller may read every session of the agent; the service's own actors do, an unknown caller not. */
  private async readsAll(agentKey: string, caller: Actor | undefined): Promise<boolean> {
    if (!caller || !this.lookup) return false;
    const caps = await this.lookup.capabilitiesNow(caller);
    return caps === undefined || allows(caps, 'agent.view', agentKey);
  }

  /** The agent's replay sessions (few: an operator's tool), read through the (agent_id, replay_of) index. */
  private async replays(agentId: string): Promise<string[]> {
    const keys: string[] = [];
    let pageKey: string | undefined;
    do {
      const page = await this.reads.find<SessionRow>(SESSIONS, { where: [{ field: 'agent_id', op: 'eq', value: agentId }, { field: 'replay_of', op: 'gt', value: '' }], limit: 1000, pageKey });
      keys.push(...page.items.map((r) => r.key));
      if (keys.length > RECALL_MAX_LISTED_SESSIONS) throw new RecallRefused(`the agent has more than ${RECALL_MAX_LISTED_SESSIONS} replay sessions: recall cannot tell their copies apart`);
      pageKey = page.nextPageKey;
    } while (pageKey);
    return keys;
  }

  private async listed(agentId: string, owner: string | undefined, metadata: FilterExpr | undefined): Promise<string[]> {
    const where = [{ field: 'agent_id', op: 'eq' as const, value: agentId }, ...(owner !== undefined ? [{ field: 'end_user', op: 'eq' as const, value: owner }] : [])];
    const keys: string[] = [];
    let pageKey: string | undefined;
    do {
      const page = await this.reads.find<SessionRow>(SESSIONS, { where, ...(metadata ? { metadata: { filter: metadata, docField: 'metadata' } } : {}), limit: 1000, pageKey });
      keys.push(...page.items.filter((r) => !r.replay_of).map((r) => r.key));
      if (keys.length > RECALL_MAX_LISTED_SESSIONS) throw new RecallRefused(`more than ${RECALL_MAX_LISTED_SESSIONS} sessions match: narrow metadata_filter`);
      pageKey = page.nextPageKey;
    } while (pageKey);
    return keys;
  }
}

/** The index filter of a recall: visible messages of the scope's sessions but the current one, in the time range. */
export function recallFilter(scope: RecallScope, range: { readonly afterMs?: number; readonly beforeMs?: number }): FilterExpr {
  const items: FilterExpr[] = [
    { kind: 'cmp', field: field('hidden'), op: '=', value: false },
    { kind: 'cmp', field: field('session_key'), op: '!=', value: scope.currentSessionKey },
  ];
  if (scope.sessionKeys) items.push({ kind: 'in', field: field('session_key'), values: scope.sessionKeys });
  if (scope.excludedSessionKeys?.length) items.push({ kind: 'not', item: { kind: 'in', field: field('session_key'), values: scope.excludedSessionKeys } });
  if (range.afterMs !== undefined) items.push({ kind: 'cmp', field: { level: 'part', name: 'created_ms' }, op: '>=', value: range.afterMs });
  if (range.beforeMs !== undefined) items.push({ kind: 'cmp', field: { level: 'part', name: 'created_ms' }, op: '<', value: range.beforeMs });
  return { kind: 'and', items };
}
