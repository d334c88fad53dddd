import type { ToolConfig } from '../../domain/tool-config';
import type { RefSources } from './argument-overrides';

const SECRET_REF = /^(agent|session)\.secrets(\.|\[|$)/;

/**
 * The secrets a tool configuration puts into its calls: every `{"$ref": "agent.secrets…"}` or `session.secrets…`
 * anywhere in its `argument_override` (headers, query, body, auth). A call of such a configuration carries them
 * whatever its transforms do with them afterwards, so the call as a whole is bound to the secrets' destinations.
 */
export function secretRefsOf(config: ToolConfig): string[] {
  const found: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (v === null || typeof v !== 'object') return;
    const ref = (v as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      if (SECRET_REF.test(ref)) found.push(ref);
      return;
    }
    Object.values(v).forEach(walk);
  };
  walk(config.argument_override);
  return [...new Set(found)];
}

/**
 * Where a configuration's secrets may be sent: the origin of a `url` its `argument_override` fixes (the model
 * cannot change it) — a literal, or a `$ref` to the agent's metadata or secrets, which only the agent's configurers
 * write —, and the origins it lists in `secret_origins` (for a URL left to the model). A `url` from the session's
 * metadata names no origin: whoever creates a session sets it.
 */
export function secretOriginsOf(config: ToolConfig, refs?: RefSources): Set<string> {
  const origins = new Set<string>();
  const fixed = config.argument_override?.url;
  const ref = fixed !== null && typeof fixed === 'object' ? (fixed as { $ref?: unknown }).$ref : undefined;
  const [scope, kind, ...rest] = typeof ref === 'string' ? ref.split('.') : [];
  const name = rest.join('.');
  const configured =
    typeof fixed === 'string' ? fixed
    : scope === 'agent' && kind === 'metadata' && refs?.agentMetadata && Object.hasOwn(refs.agentMetadata, name) ? refs.agentMetadata[name]
    : scope === 'agent' && kind === 'secrets' && refs && Object.hasOwn(refs.agentSecrets, name) ? refs.agentSecrets[name]
    : undefined;
  if (typeof configured === 'string') {
    const origin = originOf(configured);
    if (origin) origins.add(origin);
  }
  if (Array.isArray(config.secret_origins)) {
    for (const o of config.secret_origins) {
      const origin = typeof o === 'string' ? originOf(o) : undefined;
      if (origin) origins.add(origin);
    }
  }
  return origins;
}

/** The origin (`scheme://host[:port]`, default port left out) of an http(s) URL, or undefined. */
export function originOf(url: string | URL): string | undefined {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}
