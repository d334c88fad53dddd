import type { ToolConfig } from '../../domain/agent-config';

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
 * Where a configuration's secrets may be sent: the origin of a `url` its `argument_override` fixes as a literal
 * (the model cannot change it), and the origins it lists in `secret_origins` (for a URL left to the model).
 * A `url` that is itself a `$ref` names no origin: its value is not the configurer's literal choice.
 */
export function secretOriginsOf(config: ToolConfig): Set<string> {
  const origins = new Set<string>();
  const fixed = config.argument_override?.url;
  if (typeof fixed === 'string') {
    const origin = originOf(fixed);
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
