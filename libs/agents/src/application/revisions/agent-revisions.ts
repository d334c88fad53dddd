import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, invalid, notFound } from '@lib/platform';
import type { AgentConfig } from '../../domain/agent-config';
import { agentNotFound } from '../../domain/agent';
import { AgentRevision, agentRevisions } from '../../domain/agent-revisions';
import { agentStream } from '../agent-writer';
import { agentView } from '../../read-models';
import { configDiff } from './revision-diff';
import { revisionSummary, revisionView } from './revision-views';

export const revisionNotFound = (key: string, revision: number) => notFound('agent.revision_not_found', `Agent "${key}" has no revision ${revision}`, String(revision));

/**
 * An agent's revisions, read from its stream (every `AgentCreated`/`AgentUpdated` holds the whole configuration):
 * what a pinned session, a replay or an evaluation runs, and what the revisions API shows.
 */
@Injectable()
export class AgentRevisions {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  /** The revisions of the agent's current incarnation, oldest first; 404 when the agent does not exist. */
  async list(agentKey: string): Promise<AgentRevision[]> {
    const revisions = agentRevisions(await this.store.readStream(agentStream(agentKey)));
    if (!revisions.length) throw agentNotFound(agentKey);
    return revisions;
  }

  /** One revision; 404 when there is no such revision. `agentId`, when given, must be the current incarnation's. */
  async at(agentKey: string, revision: number, agentId?: string): Promise<AgentRevision> {
    const revisions = await this.list(agentKey);
    const found = revisions[revision];
    if (!found || (agentId !== undefined && found.agentId !== agentId)) throw revisionNotFound(agentKey, revision);
    return found;
  }

  /** The configuration as of a revision. */
  async configAt(agentKey: string, revision: number, agentId?: string): Promise<AgentConfig> {
    return (await this.at(agentKey, revision, agentId)).config;
  }

  /**
   * The agent as `GET /v2/agents/{key}` shows it, from its stream (so it holds a revision just written while the read
   * model lags), with the number of its current revision.
   */
  async current(agentKey: string): Promise<Record<string, unknown>> {
    const revisions = await this.list(agentKey);
    const last = revisions[revisions.length - 1];
    return { ...agentView({ id: agentKey, config: last.config, created_at: revisions[0].createdAt, updated_at: last.createdAt }), revision: last.revision };
  }

  /** `GET …/revisions`: newest first, `limit` from `offset`, each with the fields it changed. */
  async summaries(agentKey: string, limit: number, offset: number): Promise<{ revisions: Record<string, unknown>[]; more: boolean }> {
    const revisions = await this.list(agentKey);
    const newestFirst = [...revisions].reverse().slice(offset, offset + limit);
    return { revisions: newestFirst.map((r) => revisionSummary(r, revisions[r.revision - 1])), more: offset + limit < revisions.length };
  }

  /**
   * `GET …/revisions/{n}`: the configuration as of revision n; with `diffFrom`, the RFC 6902 patch that turns that
   * revision into this one (a `diff_from` the agent does not have is a 400 on the parameter: the revision asked for exists).
   */
  async view(agentKey: string, revision: number, diffFrom?: number): Promise<Record<string, unknown>> {
    const revisions = await this.list(agentKey);
    const found = revisions[revision];
    if (!found) throw revisionNotFound(agentKey, revision);
    if (diffFrom === undefined) return revisionView(agentKey, found);
    const other = revisions[diffFrom];
    if (!other) throw invalid('request.invalid', `diff_from: agent "${agentKey}" has no revision ${diffFrom} (its revisions are 0 to ${revisions.length - 1})`, { diff_from: `no revision ${diffFrom}` });
    return revisionView(agentKey, found, configDiff(other.config, found.config));
  }
}
