import { createHash } from 'node:crypto';
import { invalid } from '@lib/platform/kernel';
import type { AliasPolicy } from './alias';

/**
 * End users through an alias (docs/end-user-sessions.md): which aliases they reach, which metadata they may set,
 * and the key namespace each of them has, so that nothing one end user does is observable by another.
 */

/** Whether `usable` (the agents an app client may use, `*` for all) covers every agent an alias routes to. */
export const aliasReachable = (aliasAgents: readonly string[], usable: '*' | readonly string[]): boolean =>
  usable === '*' || (aliasAgents.length > 0 && aliasAgents.every((a) => usable.includes(a)));

export const agentUsable = (agentKey: string, usable: '*' | readonly string[]): boolean => usable === '*' || usable.includes(agentKey);

/**
 * The metadata an end user sent, checked against the policy's `end_user_metadata`: a field it does not declare is
 * refused (400 naming it), never silently used for routing or by the agent. `end_user` is the service's own and
 * is overwritten, as before.
 */
export function checkEndUserMetadata(aliasKey: string, policy: AliasPolicy, metadata: Readonly<Record<string, unknown>>): void {
  const settable = new Set(policy.end_user_metadata ?? []);
  const refused = Object.keys(metadata).filter((f) => f !== 'end_user' && !settable.has(f));
  if (!refused.length) return;
  const allowed = settable.size ? `it lets end users set ${[...settable].join(', ')}` : 'it lets end users set none';
  throw invalid(
    'session.end_user_metadata',
    `No session created: alias "${aliasKey}" does not let end users set metadata ${refused.join(', ')} (${allowed}; policy.end_user_metadata)`,
    Object.fromEntries(refused.map((f) => [`metadata.${f}`, 'not settable by end users through this alias'])),
  );
}

/**
 * Each session owner (`<app client id>/<end user>`, or a caller's own id) has its own session keys and names in an
 * alias: stored as `eu-<16 hex of SHA-256 of the owner>-<key>`, shown to the owner as it chose them. So one end
 * user's key or name never collides with another's (no 409 telling that a key exists), and the hash keeps the
 * stored key short whatever the end user's id.
 */
export const endUserPrefix = (owner: string): string => `eu-${createHash('sha256').update(owner).digest('hex').slice(0, 16)}-`;

export const storedEndUserKey = (owner: string, key: string): string => endUserPrefix(owner) + key;

/** What the owner sees of a stored key or name (one stored before namespacing is shown as it is). */
export const shownEndUserKey = (owner: string, stored: string): string => {
  const prefix = endUserPrefix(owner);
  return stored.startsWith(prefix) ? stored.slice(prefix.length) : stored;
};
