import { capabilitiesOf, Grants, KeyType, maskForKeyType } from './roles';

/** The reference's `ApiOperationPolicy`: any resource, or the listed ones by resource path. */
export interface ApiOperationPolicy {
  readonly allow_any_resource: boolean;
  readonly allowed_resources?: Readonly<Record<string, readonly string[]>>;
}

/** The reference's `ApiPolicy`. */
export interface ApiPolicy {
  readonly name: string;
  readonly allowed_operations: Readonly<Record<string, ApiOperationPolicy>>;
}

/**
 * What a key may do, as the reference's `ApiPolicy` (docs/auth.md): named by its type, one operation per
 * capability action (`corpus.read`, `keys.manage`…, the actions of the route policy table), each on any resource
 * or on the corpora (`path.corpus_key`) or agents (`path.agent_key`) its roles name. `grants` are the key's own
 * for a data key, its user's for a personal key; the bound of a data key by its creator applies per request.
 */
export function apiPolicy(keyType: KeyType, grants: Grants): ApiPolicy {
  const scopes = new Map<string, Set<string>>();
  for (const c of maskForKeyType(capabilitiesOf(grants), keyType)) {
    if (!scopes.has(c.action)) scopes.set(c.action, new Set());
    scopes.get(c.action)!.add(c.scope);
  }
  const allowed: Record<string, ApiOperationPolicy> = {};
  for (const action of [...scopes.keys()].sort()) {
    const on = scopes.get(action)!;
    if (on.has('*')) allowed[action] = { allow_any_resource: true };
    else allowed[action] = { allow_any_resource: false, allowed_resources: { [action.startsWith('agent.') ? 'path.agent_key' : 'path.corpus_key']: [...on].sort() } };
  }
  return { name: keyType, allowed_operations: allowed };
}
