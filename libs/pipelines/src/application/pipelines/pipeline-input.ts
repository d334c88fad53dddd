import type { PipelineSettings } from '../../domain/pipeline';
import { isProblem, Problem, UNBUILT_SOURCE_TYPES, WebAuthSettings } from '../../domain/pipeline-source';
import { invalidPipeline, PipelineSource, type Sealed } from '../../domain/pipeline';
import type { SourceCatalogue, SourceClient } from '../sources.port';

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

/** A secret written back as read (`****`) keeps the stored value, as credentials do elsewhere. */
const MASK = '****';
const getPath = (o: Record<string, unknown>, path: string): unknown => path.split('.').reduce<unknown>((v, k) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined), o);
/** A copy of `o` without the value at `path` (an object left empty stays, its other fields kept). */
function withoutPath(o: Record<string, unknown>, path: string): Record<string, unknown> {
  const [head, ...rest] = path.split('.');
  if (!(head in o)) return o;
  const { [head]: inner, ...others } = o;
  if (rest.length === 0) return others;
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? { ...others, [head]: withoutPath(inner as Record<string, unknown>, rest.join('.')) } : o;
}

/**
 * The source's own secret fields taken out of the request: sealed together (the stored ones kept where omitted or
 * `****` on a PATCH of the same type), listed in clear as `secret_fields` so reads can mask them.
 */
function takeSecrets(client: SourceClient, v: Record<string, unknown>, stored: Readonly<Record<string, string>> | null, seal: Seal): { rest: Record<string, unknown>; secretFields: string[]; sealed?: Sealed } {
  const secrets: Record<string, string> = {};
  let rest = v;
  for (const { path, required, check } of client.secretFields ?? []) {
    const given = getPath(v, path);
    rest = withoutPath(rest, path);
    if (given === undefined || given === MASK) {
      if (stored?.[path] !== undefined) secrets[path] = stored[path];
      else if (required) throw invalidPipeline([`source.${path}`, 'is required']);
      continue;
    }
    if (given === null && !required) continue;
    if (!str(given, 16_384)) throw invalidPipeline([`source.${path}`, 'must be a non-empty string of at most 16384 characters']);
    const problem = check?.(given);
    if (problem) throw invalidPipeline([`source.${path}`, problem]);
    secrets[path] = given;
  }
  const secretFields = Object.keys(secrets);
  return { rest, secretFields, ...(secretFields.length ? { sealed: seal(secrets) } : {}) };
}

/**
 * A source from a request, checked by its type's client (`sources`, the catalogue of SOURCE_CATALOGUE); a type of the reference with no
 * client yet is refused by name. On a PATCH (`base`) of the same type, top-level fields merge, an omitted `auth`
 * or secret field keeps the stored credential; a source of another type is a whole new source, credential included.
 */
export function parseSource(sources: SourceCatalogue, v: Record<string, unknown>, base: { settings: PipelineSettings; sealed?: Sealed } | undefined, seal: Seal, open: (sealed: Sealed) => Record<string, string>, env: Readonly<Record<string, string | undefined>> = {}): { source: PipelineSource; sealed?: Sealed } {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidPipeline(['source', 'must be an object with a type']);
  const built = Object.keys(sources);
  const client = typeof v.type === 'string' ? sources[v.type] : undefined;
  if (!client && (UNBUILT_SOURCE_TYPES as readonly unknown[]).includes(v.type)) throw invalidPipeline(['source.type', `the "${String(v.type)}" source is not built yet; these are: ${built.join(', ')}`]);
  if (!client) throw invalidPipeline(['source.type', `"${String(v.type)}" is not a source type here: must be one of ${built.join(', ')}`]);
  const stored = base?.settings.source;
  const merged = stored?.type === v.type ? stored : undefined;
  if (!client.genericAuth) {
    const { rest, secretFields, sealed } = takeSecrets(client, v, merged && base?.sealed ? open(base.sealed) : null, seal);
    const parsed = client.parse(rest, merged, env);
    if (isProblem(parsed)) throw invalidPipeline(parsed);
    return { source: { ...parsed, ...(secretFields.length ? { secret_fields: secretFields } : {}) } as PipelineSource, ...(sealed ? { sealed } : {}) };
  }
  const parsed = client.parse(v, merged, env);
  if (isProblem(parsed)) throw invalidPipeline(parsed);
  if (v.auth === undefined) return { source: { ...parsed, ...(merged?.auth ? { auth: merged.auth } : {}) } as PipelineSource, ...(merged?.auth && base?.sealed ? { sealed: base.sealed } : {}) };
  if (v.auth === null) return { source: parsed as PipelineSource };
  const auth = parseAuth(v.auth, seal);
  if (isProblem(auth)) throw invalidPipeline(auth);
  return { source: { ...parsed, auth: auth.auth } as PipelineSource, sealed: auth.sealed };
}
