import type { FilterExpr } from '../filter/filter';
import { invalid } from '../kernel/errors';

/** A read-model document: plain JSON with a string `id`. */
export type ReadDoc = { readonly id: string } & Record<string, unknown>;

/** An index a projection declares on one of its collections; fields are dot paths into the document. */
export interface IndexSpec {
  readonly fields: readonly string[];
  readonly unique?: boolean;
}

export interface CollectionSpec {
  readonly name: string;
  readonly indexes?: readonly IndexSpec[];
}

export type ConditionOp = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'in';

/** Equality and range conditions on dot-path fields, AND-ed together. */
export interface Condition {
  readonly field: string;
  readonly op: ConditionOp;
  readonly value: string | number | boolean | null | readonly (string | number | boolean)[];
}

/**
 * A metadata filter (`parseFilter`) over the metadata object of each document, with the semantics of
 * filter/filter.ts. Only `doc.` fields exist here: a `part.` field fails with DomainError invalid
 * `filter.level_unsupported`.
 */
export interface MetadataFilter {
  readonly filter: FilterExpr;
  /** Dot path of the metadata object inside the read document, e.g. `metadata`. */
  readonly docField: string;
}

export interface FindQuery {
  readonly where?: readonly Condition[];
  /** AND-ed with `where`; sorting and paging work as without it. */
  readonly metadata?: MetadataFilter;
  /** One sort field; ties are broken by `id`, which makes the cursor stable. Default: `id` ascending. */
  readonly sort?: { readonly field: string; readonly direction: 'asc' | 'desc' };
  readonly limit: number;
  /** Opaque cursor from a previous page's `nextPageKey`. */
  readonly pageKey?: string;
}

export interface Page<T> {
  readonly items: T[];
  /** Present when more items follow. */
  readonly nextPageKey?: string;
}

/**
 * Makes an op conditional on another row of the same collection: the op applies only while row `id` exists and its
 * top-level `field` equals `equals`, as the ops before it in log order left it. A projection keeps such a row as a
 * fence (the corpus incarnation its documents belong to), so an event decided against a stale state lands nowhere.
 * Same collection only: that is what keeps the check in order with the fence's own writes on every adapter.
 */
export interface RowGuard {
  readonly id: string;
  readonly field: string;
  readonly equals: string | number | boolean;
}

/** A write a projection asks for; sinks apply them idempotently, in order, with the checkpoint. */
export type ReadOp = (
  | { readonly op: 'put'; readonly collection: string; readonly doc: ReadDoc }
  | {
      readonly op: 'patch';
      readonly collection: string;
      readonly id: string;
      /** Dot path → value; missing documents are left missing. */
      readonly set?: Readonly<Record<string, unknown>>;
      readonly unset?: readonly string[];
      readonly inc?: Readonly<Record<string, number>>;
      /**
       * When the document is missing, it is created with these top-level fields (and `id`) before the patch applies,
       * instead of staying missing: a counter row that the first event of its kind starts. Fields named here must not
       * be named by `set`, `unset` or `inc` (MongoDB would refuse the overlap).
       */
      readonly create?: Readonly<Record<string, unknown>>;
    }
  | { readonly op: 'delete'; readonly collection: string; readonly id: string }
  | { readonly op: 'deleteWhere'; readonly collection: string; readonly where: readonly Condition[] }
) & { readonly onlyIf?: RowGuard };

/** The query side of the read store: what query handlers use. */
export interface ReadStore {
  get<T extends ReadDoc>(collection: string, id: string): Promise<T | undefined>;
  find<T extends ReadDoc>(collection: string, query: FindQuery): Promise<Page<T>>;
  count(collection: string, where?: readonly Condition[], metadata?: MetadataFilter): Promise<number>;
  /** Sums of numeric fields (dot paths) over the documents matching `where`; a missing or non-numeric value adds 0. */
  sum<F extends string>(collection: string, fields: readonly F[], where?: readonly Condition[]): Promise<Record<F, number>>;
  ping(): Promise<void>;
}

export const READ_STORE = Symbol('ReadStore');

/** A page key is the last item's sort value and id, so paging stays stable while documents change. */
export function encodePageKey(sortValue: unknown, id: string): string {
  return Buffer.from(JSON.stringify([sortValue, id])).toString('base64url');
}

export function decodePageKey(pageKey: string): { sortValue: unknown; id: string } | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(pageKey, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[1] === 'string') return { sortValue: v[0], id: v[1] };
  } catch {
    /* falls through */
  }
  return undefined;
}

/**
 * The cursor a `FindQuery.pageKey` carries, or a 400 (`page_key`) for a key no list returned: read as "no key", a
 * mistyped or foreign key silently restarted the list at its first page, and a client paging on looped for ever.
 */
export function cursorOfPageKey(pageKey: string | undefined): { sortValue: unknown; id: string } | undefined {
  if (!pageKey) return undefined;
  const key = decodePageKey(pageKey);
  if (!key) throw invalid('request.invalid', 'page_key is not a key this list returned', { page_key: 'unknown page key' });
  return key;
}

/** Reads a dot path from a plain object. */
export function getPath(doc: Record<string, unknown>, path: string): unknown {
  let cur: unknown = doc;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/**
 * A page of the documents (in id order) that `keep` accepts, reading on through the store's pages until the
 * page is full or the collection ends; for filters the store cannot express.
 */
export async function findMatching<T extends ReadDoc>(
  reads: ReadStore,
  collection: string,
  query: { readonly where?: readonly Condition[]; readonly limit: number; readonly pageKey?: string },
  keep: (doc: T) => boolean,
): Promise<Page<T>> {
  const items: T[] = [];
  let pageKey = query.pageKey;
  for (;;) {
    const page = await reads.find<T>(collection, { where: query.where, limit: Math.max(query.limit, 100), pageKey });
    for (const doc of page.items) {
      if (!keep(doc)) continue;
      items.push(doc);
      if (items.length === query.limit) return { items, nextPageKey: encodePageKey(doc.id, doc.id) };
    }
    if (!page.nextPageKey) return { items };
    pageKey = page.nextPageKey;
  }
}
