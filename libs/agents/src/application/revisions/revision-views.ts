import type { Actor } from '@lib/platform/kernel';
import type { AgentRevision } from '../../domain/agent-revisions';
import { agentView } from '../../read-models';
import { changedPaths, configDiff, type PatchOperation } from './revision-diff';

/**
 * Who made a revision, as the service names principals elsewhere (`decided_by` of approvals): `user:<name>`,
 * `api_key:<id>`, `app_client:<id>`, `system:<name>`; null when the event carries no actor.
 */
export const principalOf = (actor: Actor | undefined): string | null => (actor ? `${actor.type}:${actor.id}` : null);

/** One entry of `GET …/revisions`: `changed` against the revision before it (revision 0: against an empty configuration). */
export function revisionSummary(revision: AgentRevision, previous: AgentRevision | undefined): Record<string, unknown> {
  return {
    revision: revision.revision,
    created_at: revision.createdAt,
    created_by: principalOf(revision.createdBy),
    changed: changedPaths(configDiff(previous?.config, revision.config)),
    ...(revision.restoredFrom !== undefined ? { restored_from: revision.restoredFrom } : {}),
  };
}

/**
 * `GET …/revisions/{n}`: the agent's own view as of that revision (its configuration), with the revision's number,
 * time and author; `created_at` and `updated_at` are the revision's (as in the list). `diff` when asked for.
 */
export function revisionView(agentKey: string, revision: AgentRevision, diff?: readonly PatchOperation[]): Record<string, unknown> {
  return {
    ...agentView({ id: agentKey, config: revision.config, created_at: revision.createdAt, updated_at: revision.createdAt }),
    revision: revision.revision,
    created_by: principalOf(revision.createdBy),
    ...(revision.restoredFrom !== undefined ? { restored_from: revision.restoredFrom } : {}),
    ...(diff ? { diff } : {}),
  };
}
