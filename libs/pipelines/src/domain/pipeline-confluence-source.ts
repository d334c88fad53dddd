/**
 * The `confluence` source of a pipeline (docs/pipelines.md, The Confluence source): the reference's
 * ConfluenceSourceConfiguration (`base_url`, `deployment`, `space_keys`, `auth`) plus the spec's wiki fields
 * `attachments` and `embedded_images`. Pure: a problem is a `[field, reason]` pair (a 400 naming it).
 */
import { isInt, isObject, regexes, type Problem, type WebAuthSettings } from './pipeline-source';

export interface ConfluenceAttachments {
  readonly enabled: boolean;
  /** Full-match patterns on the attachment's file name: one must match (none given: all do), none of `neg_regex` may. */
  readonly pos_regex: readonly string[];
  readonly neg_regex: readonly string[];
  readonly max_bytes: number;
}

export interface ConfluenceEmbeddedImages {
  readonly mode: 'inline' | 'omit';
  readonly max_bytes: number;
}

export interface ConfluenceSourceSettings {
  readonly type: 'confluence';
  /** The site: on Cloud without its `/wiki` context path (added by the client), on Data Center with its own. */
  readonly base_url: string;
  /** `cloud`: the REST API v2; `data_center`: the v1 REST API of a self-hosted Data Center or Server. */
  readonly deployment: 'cloud' | 'data_center';
  /** Empty: every global space the account can read. */
  readonly space_keys: readonly string[];
  readonly attachments: ConfluenceAttachments;
  readonly embedded_images: ConfluenceEmbeddedImages;
  readonly auth?: WebAuthSettings;
}

const MIB = 1024 * 1024;
/** The spec's Limits table: attachment 25 MiB, embedded image 5 MiB, 20 MiB of images inlined per page. */
export const CONFLUENCE_LIMITS = { attachmentBytes: 25 * MIB, imageBytes: 5 * MIB, pageInlineBytes: 20 * MIB, maxAttachmentBytes: 100 * MIB } as const;

const FIELDS = ['type', 'base_url', 'deployment', 'space_keys', 'auth', 'attachments', 'embedded_images'];

/** `attachments`, replaced whole when given (omitted fields take their defaults). */
function parseAttachments(v: unknown): ConfluenceAttachments | Problem {
  const at = 'source.attachments';
  if (!isObject(v)) return [at, 'must be an object with enabled, pos_regex, neg_regex, max_bytes'];
  const extra = Object.keys(v).find((k) => !['enabled', 'pos_regex', 'neg_regex', 'max_bytes'].includes(k));
  if (extra) return [`${at}.${extra}`, 'is not a field of attachments'];
  if (v.enabled !== undefined && typeof v.enabled !== 'boolean') return [`${at}.enabled`, 'must be a boolean'];
  const problem = regexes(v.pos_regex, `${at}.pos_regex`) ?? regexes(v.neg_regex, `${at}.neg_regex`);
  if (problem) return problem;
  if (v.max_bytes !== undefined && !isInt(v.max_bytes, 1, CONFLUENCE_LIMITS.maxAttachmentBytes)) return [`${at}.max_bytes`, `must be an integer from 1 to ${CONFLUENCE_LIMITS.maxAttachmentBytes}`];
  return { enabled: (v.enabled as boolean | undefined) ?? false, pos_regex: (v.pos_regex as string[] | undefined) ?? [], neg_regex: (v.neg_regex as string[] | undefined) ?? [], max_bytes: (v.max_bytes as number | undefined) ?? CONFLUENCE_LIMITS.attachmentBytes };
}

/** `embedded_images`, replaced whole when given. */
function parseImages(v: unknown): ConfluenceEmbeddedImages | Problem {
  const at = 'source.embedded_images';
  if (!isObject(v)) return [at, 'must be an object with mode (inline or omit) and max_bytes'];
  const extra = Object.keys(v).find((k) => k !== 'mode' && k !== 'max_bytes');
  if (extra) return [`${at}.${extra}`, 'is not a field of embedded_images'];
  if (v.mode !== undefined && v.mode !== 'inline' && v.mode !== 'omit') return [`${at}.mode`, 'must be inline or omit'];
  if (v.max_bytes !== undefined && !isInt(v.max_bytes, 1, CONFLUENCE_LIMITS.pageInlineBytes)) return [`${at}.max_bytes`, `must be an integer from 1 to ${CONFLUENCE_LIMITS.pageInlineBytes} (the per-page inlining limit)`];
  return { mode: (v.mode as 'inline' | 'omit' | undefined) ?? 'inline', max_bytes: (v.max_bytes as number | undefined) ?? CONFLUENCE_LIMITS.imageBytes };
}

/** The settings without `auth` (checked and sealed by the generic rules); `base`: the stored source a PATCH merges into. */
export function parseConfluenceSource(v: Record<string, unknown>, base?: ConfluenceSourceSettings): Omit<ConfluenceSourceSettings, 'auth'> | Problem {
  const extra = Object.keys(v).find((k) => !FIELDS.includes(k));
  if (extra) return [`source.${extra}`, 'is not a field of the confluence source'];
  const baseUrl = v.base_url ?? base?.base_url;
  if (typeof baseUrl !== 'string' || baseUrl.length > 2048 || !/^https?:\/\/.+/i.test(baseUrl)) return ['source.base_url', 'is required: the http(s) URL of the Confluence site (at most 2048 characters)'];
  try {
    const u = new URL(baseUrl);
    if (u.search || u.hash || u.username || u.password) return ['source.base_url', 'must have no query, fragment or user info (put credentials in auth)'];
  } catch {
    return ['source.base_url', 'is not a valid URL'];
  }
  if (v.deployment !== undefined && v.deployment !== 'cloud' && v.deployment !== 'data_center') return ['source.deployment', 'must be cloud or data_center'];
  const deployment = (v.deployment as 'cloud' | 'data_center' | undefined) ?? base?.deployment ?? 'cloud';
  if (v.space_keys !== undefined && (!Array.isArray(v.space_keys) || v.space_keys.length > 1000)) return ['source.space_keys', 'must be a list of at most 1000 space keys'];
  for (const [i, k] of ((v.space_keys as unknown[] | undefined) ?? []).entries()) if (typeof k !== 'string' || !/^[A-Za-z0-9_~-]{1,255}$/.test(k)) return [`source.space_keys[${i}]`, 'must be a Confluence space key (letters, digits, _ ~ -; at most 255 characters)'];
  const attachments = v.attachments === undefined ? (base?.attachments ?? parseAttachments({})) : parseAttachments(v.attachments);
  if (Array.isArray(attachments)) return attachments as Problem;
  const images = v.embedded_images === undefined ? (base?.embedded_images ?? parseImages({})) : parseImages(v.embedded_images);
  if (Array.isArray(images)) return images as Problem;
  return {
    type: 'confluence',
    // The reference: the Cloud `/wiki` context path is added by the client, so a URL given with it is the same site.
    base_url: deployment === 'cloud' ? baseUrl.replace(/\/+$/, '').replace(/\/wiki$/i, '') : baseUrl.replace(/\/+$/, ''),
    deployment,
    space_keys: (v.space_keys as string[] | undefined) ?? base?.space_keys ?? [],
    attachments: attachments as ConfluenceAttachments,
    embedded_images: images as ConfluenceEmbeddedImages,
  };
}
