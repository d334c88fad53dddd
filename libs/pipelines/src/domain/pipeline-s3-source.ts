/**
 * The `s3` source of a pipeline (docs/pipelines.md, The S3 source): the objects of a bucket of Amazon S3 or any
 * S3-compatible store, under one or more key prefixes. The reference's S3SourceConfiguration, plus the spec's
 * several prefixes (`prefixes`; the reference's single `prefix` still read). `access_key_id` and
 * `secret_access_key` are the client's secret fields: taken out, sealed and masked before this runs.
 */
import { regexes, type Problem } from './pipeline-source';

export interface S3SourceSettings {
  readonly type: 's3';
  readonly bucket: string;
  readonly region: string;
  /** An S3-compatible store's URL (MinIO, Ceph…); absent: Amazon S3 of `region`. Objects are addressed path-style under it. */
  readonly endpoint_url?: string;
  /** Key prefixes read; empty: the whole bucket. */
  readonly prefixes: readonly string[];
  /** Full-match patterns on the key: a key must match one (when any) and none of `neg_regex`. */
  readonly pos_regex: readonly string[];
  readonly neg_regex: readonly string[];
  /** Which of the secret fields are stored (sealed); set by the edge, never by a caller. */
  readonly secret_fields?: readonly string[];
  /** No generic `auth`: present so code over every source can read `source.auth` (always absent here). */
  readonly auth?: undefined;
}

const S3_FIELDS = ['type', 'bucket', 'prefix', 'prefixes', 'region', 'endpoint_url', 'pos_regex', 'neg_regex'];
// S3's bucket naming rules (3–63 lowercase letters, digits, dots, hyphens; a letter or digit at each end).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

function endpointProblem(v: unknown): Problem | null {
  if (typeof v !== 'string' || v.length > 2048 || !/^https?:\/\//i.test(v)) return ['source.endpoint_url', 'must be the http(s) URL of the S3-compatible service (at most 2048 characters)'];
  try {
    const u = new URL(v);
    if (u.search || u.hash || u.username || u.password) return ['source.endpoint_url', 'must have no query, fragment or user info (put credentials in access_key_id and secret_access_key)'];
  } catch {
    return ['source.endpoint_url', 'is not a valid URL'];
  }
  return null;
}

/** `prefixes`, or the deprecated single `prefix` read as a list of one; not both. */
function prefixesOf(v: Record<string, unknown>): { problem: Problem } | { prefixes?: readonly string[] } {
  const problem = (p: Problem) => ({ problem: p });
  if (v.prefix !== undefined && v.prefixes !== undefined) return problem(['source.prefix', 'give prefixes, or the deprecated prefix, not both']);
  if (v.prefix !== undefined) return typeof v.prefix === 'string' && v.prefix.length <= 1024 ? { prefixes: v.prefix ? [v.prefix] : [] } : problem(['source.prefix', 'must be a key prefix of at most 1024 characters']);
  if (v.prefixes === undefined) return {};
  if (!Array.isArray(v.prefixes) || v.prefixes.length > 100) return problem(['source.prefixes', 'must be a list of at most 100 key prefixes']);
  for (const [i, p] of v.prefixes.entries()) if (typeof p !== 'string' || p.length > 1024) return problem([`source.prefixes[${i}]`, 'must be a key prefix of at most 1024 characters']);
  return { prefixes: [...new Set(v.prefixes as string[])] };
}

/** The settings without their secrets; `base`: the stored source a PATCH merges into (top-level fields). */
export function parseS3Source(v: Record<string, unknown>, base?: S3SourceSettings): Omit<S3SourceSettings, 'secret_fields'> | Problem {
  const extra = Object.keys(v).find((k) => !S3_FIELDS.includes(k));
  if (extra) return [`source.${extra}`, 'is not a field of the s3 source'];
  const bucket = v.bucket ?? base?.bucket;
  if (typeof bucket !== 'string' || !BUCKET.test(bucket) || bucket.includes('..')) return ['source.bucket', 'is required: an S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens)'];
  const region = v.region ?? base?.region;
  if (typeof region !== 'string' || !REGION.test(region)) return ['source.region', 'is required: a region name such as us-east-1'];
  if (v.endpoint_url !== undefined && v.endpoint_url !== null) {
    const p = endpointProblem(v.endpoint_url);
    if (p) return p;
  }
  const given = prefixesOf(v);
  if ('problem' in given) return given.problem;
  const problem = regexes(v.pos_regex, 'source.pos_regex') ?? regexes(v.neg_regex, 'source.neg_regex');
  if (problem) return problem;
  const endpoint = v.endpoint_url === undefined ? base?.endpoint_url : ((v.endpoint_url as string | null) ?? undefined);
  return {
    type: 's3',
    bucket,
    region,
    ...(endpoint ? { endpoint_url: endpoint.replace(/\/+$/, '') } : {}),
    prefixes: given.prefixes ?? base?.prefixes ?? [],
    pos_regex: (v.pos_regex as string[] | undefined) ?? base?.pos_regex ?? [],
    neg_regex: (v.neg_regex as string[] | undefined) ?? base?.neg_regex ?? [],
  };
}
