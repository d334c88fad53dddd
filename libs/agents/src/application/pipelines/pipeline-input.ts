import type { PipelineSettings } from '../../domain/pipeline';
import { isProblem, parseWebSource, Problem, UNBUILT_SOURCE_TYPES, WebAuthSettings } from '../../domain/pipeline-source';
import { invalidPipeline, PipelineSource } from '../../domain/pipeline';
import { parseScimSource } from '../../domain/pipeline-scim-source';
import type { Sealed } from '../../domain/session-events';

type Seal = (secret: Record<string, string>) => Sealed;

const str = (v: unknown, max = 4096): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

/** A source credential split into what is stored in clear (identifiers) and the secret, sealed at once. */
function parseAuth(v: unknown, seal: Seal): { auth: WebAuthSettings; sealed: Sealed } | Problem {
  if (typeof v !== 'object' || v === null) return ['source.auth', 'must be an object with a type: bearer or header'];
  const a = v as Record<string, unknown>;
  const only = (fields: string[]): Problem | null => {
    const extra = Object.keys(a).find((k) => !fields.includes(k));
    return extra ? [`source.auth.${extra}`, `is not a field of ${String(a.type)} auth`] : null;
  };
  switch (a.type) {
    case 'bearer':
      if (!str(a.token)) return ['source.auth.token', 'is required'];
      return only(['type', 'token']) ?? { auth: { type: 'bearer' }, sealed: seal({ secret: a.token }) };
    case 'header':
      if (!str(a.header, 256) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(a.header)) return ['source.auth.header', 'must be an HTTP header name'];
      if (!str(a.value) || /[\r\n]/.test(a.value)) return ['source.auth.value', 'is required, without CR or LF'];
      return only(['type', 'header', 'value']) ?? { auth: { type: 'header', header: a.header }, sealed: seal({ secret: a.value }) };
    // Its token exchange is not built for sources yet: refused rather than stored and never used.
    case 'oauth_client_credentials':
      return ['source.auth.type', 'oauth_client_credentials is not built yet for sources; use bearer or header'];
    default:
      return ['source.auth.type', 'must be bearer or header'];
  }
}

/**
 * A source from a request: refused by name when its type has no client yet. On a PATCH (`base`) of the same
 * type, top-level fields merge (`pages_source` is replaced whole), and an omitted `auth` keeps the credential;
 * a source of another type is a whole new source (its credential included).
 */
export function parseSource(v: Record<string, unknown>, base: { settings: PipelineSettings; sealed?: Sealed } | undefined, seal: Seal): { source: PipelineSource; sealed?: Sealed } {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidPipeline(['source', 'must be an object with a type']);
  if ((UNBUILT_SOURCE_TYPES as readonly unknown[]).includes(v.type)) throw invalidPipeline(['source.type', `the "${String(v.type)}" source is not built yet; only "web" and "scim" are`]);
  if (v.type !== 'web' && v.type !== 'scim') throw invalidPipeline(['source.type', `must be one of web, scim, ${UNBUILT_SOURCE_TYPES.join(', ')}`]);
  const stored = base?.settings.source;
  const merged = stored?.type === v.type ? stored : undefined;
  const parsed = v.type === 'web' ? parseWebSource(v, merged?.type === 'web' ? merged : undefined) : parseScimSource(v, merged?.type === 'scim' ? merged : undefined);
  if (isProblem(parsed)) throw invalidPipeline(parsed);
  if (v.auth === undefined) return { source: { ...parsed, ...(merged?.auth ? { auth: merged.auth } : {}) }, ...(merged?.auth && base?.sealed ? { sealed: base.sealed } : {}) };
  if (v.auth === null) return { source: parsed };
  const auth = parseAuth(v.auth, seal);
  if (isProblem(auth)) throw invalidPipeline(auth);
  return { source: { ...parsed, auth: auth.auth }, sealed: auth.sealed };
}
