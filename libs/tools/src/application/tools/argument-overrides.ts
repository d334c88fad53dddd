/** Values `{"$ref": "…"}` in `argument_override` resolve against: agent secrets, session secrets, session metadata. */
export interface RefSources {
  readonly agentSecrets: Readonly<Record<string, string>>;
  /** The agent's metadata (`agent.metadata.*`). */
  readonly agentMetadata?: Readonly<Record<string, unknown>>;
  readonly sessionSecrets: Readonly<Record<string, string>>;
  readonly sessionMetadata: Readonly<Record<string, unknown>>;
  /** Who creates the session: present only while session enrichment runs (the spec), never mid-conversation. */
  readonly caller?: Readonly<{ type: string; id: string; email?: string }>;
}

export class UnresolvedRef extends Error {}

/**
 * The model's arguments with the configuration's overrides merged over them: `resolved` is what the tool gets,
 * `shown` is what the `tool_input` event records (every secret `****`), `referenced` is what a client running a
 * client tool is given (every secret as its `{"$ref": …}`, which the client resolves from its own store).
 */
export function applyOverrides(args: Record<string, unknown>, override: Record<string, unknown> | undefined, sources: RefSources): { resolved: Record<string, unknown>; shown: Record<string, unknown>; referenced: Record<string, unknown> } {
  const resolved: Record<string, unknown> = { ...args };
  const shown: Record<string, unknown> = { ...args };
  const referenced: Record<string, unknown> = { ...args };
  for (const [k, v] of Object.entries(override ?? {})) [resolved[k], shown[k], referenced[k]] = resolveValue(v, k, sources);
  return { resolved, shown, referenced };
}

/** One override value, its `$ref`s resolved wherever they are inside it: [as the tool gets it, as events show it, as a client gets it]. */
function resolveValue(v: unknown, at: string, sources: RefSources): [unknown, unknown, unknown] {
  if (Array.isArray(v)) {
    const triples = v.map((x, i) => resolveValue(x, `${at}[${i}]`, sources));
    return [triples.map((p) => p[0]), triples.map((p) => p[1]), triples.map((p) => p[2])];
  }
  if (v === null || typeof v !== 'object') return [v, v, v];
  const ref = typeof (v as { $ref?: unknown }).$ref === 'string' ? (v as { $ref: string }).$ref : undefined;
  if (!ref) {
    const r: Record<string, unknown> = {};
    const s: Record<string, unknown> = {};
    const c: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) [r[k], s[k], c[k]] = resolveValue(x, `${at}.${k}`, sources);
    return [r, s, c];
  }
  const [scope, kind, ...rest] = ref.split('.');
  const name = rest.join('.');
  const plain = (value: unknown): [unknown, unknown, unknown] => [value, value, value];
  if (scope === 'agent' && kind === 'secrets' && Object.hasOwn(sources.agentSecrets, name)) return [sources.agentSecrets[name], '****', { $ref: ref }];
  if (scope === 'session' && kind === 'secrets' && Object.hasOwn(sources.sessionSecrets, name)) return [sources.sessionSecrets[name], '****', { $ref: ref }];
  if (scope === 'session' && kind === 'caller' && sources.caller && (name === 'type' || name === 'id' || (name === 'email' && sources.caller.email !== undefined))) return plain(sources.caller[name]);
  if (scope === 'agent' && kind === 'metadata' && sources.agentMetadata && Object.hasOwn(sources.agentMetadata, name)) return plain(sources.agentMetadata[name]);
  if (scope === 'session' && kind === 'metadata' && Object.hasOwn(sources.sessionMetadata, name)) return plain(sources.sessionMetadata[name]);
  throw new UnresolvedRef(`argument ${at}: {"$ref": "${ref}"} does not resolve (an absent secret or metadata field, or a reference this service does not know)`);
}
