import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, notFound } from '@lib/platform';
import type { AgentConfig } from '../../domain/agent-config';
import { agentNotFound } from '../../domain/agent';
import { AgentRevision, agentRevisions } from '../../domain/agent-revisions';
import { agentStream } from '../agent-writer';

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
}
