/**
 * The `wolken_kb` source of a pipeline (docs/pipelines.md, The Wolken knowledge-base source): the reference's
 * WolkenKbSourceConfiguration plus the spec's lifecycle filter. `auth_code` and `refresh_token` are the
 * source's secret fields (taken out, sealed and masked by the edge before this parse). Pure.
 */
import type { Problem } from './pipeline-source';

/** The spec's article lifecycle states. */
export const WOLKEN_LIFECYCLE = ['published', 'retired', 'draft', 'delete'] as const;
export type WolkenLifecycle = (typeof WOLKEN_LIFECYCLE)[number];

export interface WolkenKbSourceSettings {
  readonly type: 'wolken_kb';
  readonly api_endpoint: string;
  /** The tenant name (`example`, not a host name), sent as the `domain` header. */
  readonly domain: string;
  readonly client_id: string;
  readonly service_account: string;
  /** Server-side filters of the listing (deployment-specific ids); absent: no filter (absent rather than null: the reference types them integer). */
  readonly status_id?: number;
  readonly validation_status_id?: number;
  readonly level_id?: number;
  readonly update_upper_bound_operator: 'lt' | 'lte';
  /** `{article_number}` replaced by the article's number; absent: the URL the listing gives. */
  readonly article_url_template?: string;
  /** The spec's lifecycle filter on the article's reported status; empty: every status. */
  readonly lifecycle_statuses: readonly WolkenLifecycle[];
  /** Dot paths of the sealed secret fields (`auth_code`, `refresh_token`), for masking. */
  readonly secret_fields?: readonly string[];
  /** No generic `auth`: the credential is the secret fields above (the union's readers look for `auth`). */
  readonly auth?: never;
}

const FIELDS = ['type', 'api_endpoint', 'domain', 'status_id', 'validation_status_id', 'level_id', 'update_upper_bound_operator', 'article_url_template', 'client_id', 'service_account', 'lifecycle_statuses'];
const text = (v: unknown, max: number): v is string => typeof v === 'string' && v.trim() !== '' && v.length <= max && !/[\r\n]/.test(v);

function httpUrl(v: unknown, field: string, what: string): Problem | null {
  if (typeof v !== 'string' || v.length > 2048 || !/^https?:\/\/.+/i.test(v)) return [field, `is required: ${what} (an http(s) URL of at most 2048 characters)`];
  try {
    const u = new URL(v.replace('{article_number}', '0'));
    return u.username || u.password ? [field, 'must have no user info (credentials go in auth_code and refresh_token)'] : null;
  } catch {
    return [field, 'is not a valid URL'];
  }
}

/** The settings without the secret fields; `base`: the stored source a PATCH merges into. */
export function parseWolkenSource(v: Record<string, unknown>, base?: WolkenKbSourceSettings): Omit<WolkenKbSourceSettings, 'secret_fields' | 'auth'> | Problem {
  const extra = Object.keys(v).find((k) => !FIELDS.includes(k));
  if (extra) return [`source.${extra}`, 'is not a field of the wolken_kb source'];
  const pick = <K extends keyof WolkenKbSourceSettings>(k: K): unknown => (v[k] !== undefined ? v[k] : base?.[k]);
  const endpoint = pick('api_endpoint');
  const problem = httpUrl(endpoint, 'source.api_endpoint', 'the base URL of the Wolken API');
  if (problem) return problem;
  if (new URL(endpoint as string).search || new URL(endpoint as string).hash) return ['source.api_endpoint', 'must have no query or fragment'];
  const domain = pick('domain');
  if (typeof domain !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9-]{0,62}$/.test(domain)) return ['source.domain', 'is required: the Wolken tenant name (letters, digits, -), not a host name'];
  for (const f of ['client_id', 'service_account'] as const) if (!text(pick(f), 512)) return [`source.${f}`, 'is required: one line of at most 512 characters'];
  for (const f of ['status_id', 'validation_status_id', 'level_id'] as const) {
    const x = v[f];
    if (x !== undefined && x !== null && (typeof x !== 'number' || !Number.isInteger(x) || x < -2147483648 || x > 2147483647)) return [`source.${f}`, 'must be a 32-bit integer (an id of your Wolken deployment)'];
  }
  if (v.update_upper_bound_operator !== undefined && v.update_upper_bound_operator !== 'lt' && v.update_upper_bound_operator !== 'lte') return ['source.update_upper_bound_operator', 'must be lt or lte'];
  const template = pick('article_url_template');
  if (template !== undefined && template !== null) {
    const bad = httpUrl(template, 'source.article_url_template', 'a URL template');
    if (bad) return bad;
    if (!(template as string).includes('{article_number}')) return ['source.article_url_template', 'must contain the {article_number} placeholder'];
  }
  const lifecycle = v.lifecycle_statuses;
  if (lifecycle !== undefined && (!Array.isArray(lifecycle) || lifecycle.length > WOLKEN_LIFECYCLE.length)) return ['source.lifecycle_statuses', `must be a list of ${WOLKEN_LIFECYCLE.join(', ')}`];
  for (const [i, s] of ((lifecycle as unknown[] | undefined) ?? []).entries()) if (!(WOLKEN_LIFECYCLE as readonly unknown[]).includes(s)) return [`source.lifecycle_statuses[${i}]`, `must be one of ${WOLKEN_LIFECYCLE.join(', ')}`];
  // A PATCH's null clears a filter; omitted keeps the stored one.
  const optional = (f: 'status_id' | 'validation_status_id' | 'level_id' | 'article_url_template') => {
    const x = v[f] === undefined ? base?.[f] : v[f];
    return x === undefined || x === null ? {} : { [f]: x };
  };
  return {
    type: 'wolken_kb',
    api_endpoint: (endpoint as string).replace(/\/+$/, ''),
    domain,
    client_id: pick('client_id') as string,
    service_account: pick('service_account') as string,
    ...optional('status_id'),
    ...optional('validation_status_id'),
    ...optional('level_id'),
    update_upper_bound_operator: (pick('update_upper_bound_operator') as 'lt' | 'lte' | undefined) ?? 'lte',
    ...optional('article_url_template'),
    lifecycle_statuses: [...new Set((lifecycle as WolkenLifecycle[] | undefined) ?? base?.lifecycle_statuses ?? [])],
  };
}
