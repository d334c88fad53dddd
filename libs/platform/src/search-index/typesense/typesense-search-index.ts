// Over 300 lines: one adapter whose methods share the collection cache, the generation logic and the error
// translation; the layout lives in typesense-layout.ts and the filter translation in typesense-filter.ts.
import { Client, Errors } from 'typesense';
import type { CollectionSchema } from 'typesense';
import { assertNever, DomainError } from '../../kernel/errors';
import type { ApplyOptions, CheckpointStore, PositionedOps, ProjectionShape, ProjectionSink } from '../../projections/projection';
import type { FieldRef, FilterExpr } from '../../filter/filter';
import { queryTerms } from '../query-terms';
import { fuseRanks, IndexedDocument, SearchHit, SearchIndex, SearchOp, SearchRequest } from '../search-index.port';
import { filterLiteral, KnownFields, toFilterBy } from './typesense-filter';
import { collectionSchema, embeddingField, flattenMetadata, hexString, importLines, keyNumber, partDocument, typedFieldName } from './typesense-layout';

/** `max_per_page` of the server (include/tsconfig.h): larger limits are fetched page by page. */
const MAX_PER_PAGE = 250;
const RETURNED_FIELDS = 'doc_id,seq,text,title,part_meta,doc_meta';

type Doc = Record<string, unknown>;
interface CollectionInfo { readonly dimensions?: number; readonly incarnation?: string; readonly fields: KnownFields }
type Ensured = { dimensions?: number; incarnation?: string };
interface RawHit { document: Doc; text_match?: number; vector_distance?: number; hybrid_search_info?: { rank_fusion_score?: number } }
interface RawResult { hits?: RawHit[]; facet_counts?: { field_name: string; counts: { value: string }[] }[]; code?: number; error?: string }

/** The query words (shared with SQLite), so user text can never carry Typesense query syntax (`-word`, phrases, `*`). */
export const queryWords = queryTerms;

/**
 * The Typesense search index. Reads go through the alias `<prefix>_<index>`, which points at the active
 * generation's collection `<prefix>_<index>_g<generation>`; a rebuild fills new collections and `activate`
 * swaps the aliases. Typesense has no transactions, so the checkpoint is saved in a CheckpointStore after
 * a batch's writes succeeded: each write (delete-by-filter + upsert of deterministic ids) is idempotent,
 * so a crash in between only replays it. The prefix may not contain `_`, so no other prefix's names parse as ours.
 */
export class TypesenseSearchIndex implements SearchIndex, ProjectionSink<SearchOp> {
  private active: number | undefined;
  /** Collections known to exist (and their vector size): saves a GET before every write. */
  private readonly ensured = new Map<string, Ensured>();
  private readonly ownName: RegExp;

  constructor(private readonly client: Client, private readonly checkpoints: CheckpointStore, private readonly prefix: string) {
    if (!/^[A-Za-z0-9-]+$/.test(prefix)) throw new DomainError('invalid', 'search.invalid_prefix', `Typesense collection prefix "${prefix}" must match [A-Za-z0-9-]+`);
    this.ownName = new RegExp(`^${prefix}_(.+)_g(\\d+)$`);
  }

  private readonly alias = (index: string): string => `${this.prefix}_${index}`;

  private collection(index: string, generation: number): string {
    if (!validIndex(index)) throw new DomainError('invalid', 'search.invalid_index', `Index name "${index}" must be non-empty and not end in _g<digits>`);
    return `${this.prefix}_${index}_g${generation}`;
  }

  private parse(collection: string): { index: string; generation: number } | undefined {
    const [, index, generation] = this.ownName.exec(collection) ?? [];
    return index ? { index, generation: Number(generation) } : undefined;
  }

  async search(index: string, request: SearchRequest): Promise<SearchHit[]> {
    if (!validIndex(index) || request.limit <= 0) return [];
    return boundary('search', async () => {
      const alias = this.alias(index);
      const info = await this.describe(alias);
      const filter = info && request.filter ? toFilterBy(request.filter, info.fields) : true;
      if (!info || filter === false) return [];
      const words = queryWords(request.text ?? '');
      const text = request.mode !== 'vector' && words.length > 0;
      const vector = request.mode !== 'lexical' && !!request.vector?.length && info.dimensions !== undefined;
      if (!text && !vector) return [];
      const alpha = request.alpha ?? 0.3;
      const k = request.mode === 'hybrid' ? Math.max(request.limit, 100) : request.limit;
      const hits = await this.searchPages(request.limit, {
        collection: alias,
        q: text ? words.join(' ') : '*',
        // Parity with the SQLite adapter: whole words (stemmed), no typos, and any word may match (as FTS5 OR).
        ...(text && { query_by: 'text,title', query_by_weights: '2,1', prefix: false, num_typos: 0, drop_tokens_threshold: request.limit, drop_tokens_mode: 'both_sides:3' }),
        ...(vector && { vector_query: `embedding:([${request.vector!.join(',')}], k:${k}${text ? `, alpha:${alpha}` : ''})` }),
        ...(typeof filter === 'string' && { filter_by: filter }),
        include_fields: request.withVectors && info.dimensions !== undefined ? `${RETURNED_FIELDS},embedding` : RETURNED_FIELDS,
      });
      return score(hits, request.mode, text, vector, alpha);
    });
  }

  private async searchPages(limit: number, params: Doc): Promise<RawHit[]> {
    const perPage = Math.min(MAX_PER_PAGE, limit);
    const hits: RawHit[] = [];
    for (let page = 1; hits.length < limit; page++) {
      const result = await this.multiSearch({ ...params, per_page: perPage, page });
      const got = result?.hits ?? [];
      hits.push(...got);
      if (got.length < perPage) break;
    }
    return hits.slice(0, limit);
  }

  /** POST /multi_search: vectors do not fit a GET URL. Errors come per search, with HTTP 200. */
  private async multiSearch(search: Doc): Promise<RawResult | undefined> {
    const perform = this.client.multiSearch.perform.bind(this.client.multiSearch) as unknown as (r: { searches: object[] }) => Promise<{ results: RawResult[] }>;
    const [result] = (await perform({ searches: [search] })).results;
    if (result.code === 404) return undefined;
    if (result.error !== undefined || (result.code !== undefined && result.code !== 200)) {
      const kind = result.code === 400 || result.code === 422 ? 'invalid' : 'unavailable';
      throw new DomainError(kind, kind === 'invalid' ? 'search.invalid_request' : 'search.unavailable', `Typesense search failed (${result.code}): ${result.error}`);
    }
    return result;
  }

  async distinctValues(index: string, field: FieldRef, options: { filter?: FilterExpr; limit?: number } = {}): Promise<unknown[]> {
    if (!validIndex(index)) return [];
    return boundary('facet query', async () => {
      const alias = this.alias(index);
      const info = await this.describe(alias);
      const slots = FACETS.filter((slot) => info?.fields.has(typedFieldName(field, slot)));
      const filter = info && options.filter ? toFilterBy(options.filter, info.fields) : true;
      if (slots.length === 0 || filter === false) return [];
      const limit = options.limit ?? 1000;
      // Strings in hex order, which is their byte order: a truncated list keeps the smallest values as SQLite's ORDER BY does.
      const facet_by = slots.map((slot) => (slot === 's' ? `${typedFieldName(field, slot)}(sort_by: _alpha:asc)` : typedFieldName(field, slot))).join(',');
      const result = await this.multiSearch({ collection: alias, q: '*', facet_by, max_facet_values: limit, per_page: 0, ...(typeof filter === 'string' && { filter_by: filter }) });
      const values = slots.flatMap((slot) => (result?.facet_counts?.find((f) => f.field_name === typedFieldName(field, slot))?.counts ?? []).map((c) => facetValue(c.value, slot)));
      return values.sort(compareValues).slice(0, limit);
    });
  }

  /** Exports the selected parts' metadata and reads the field from the JSON copy, which keeps arrays and types. */
  async fieldValues(index: string, field: FieldRef, options: { filter?: FilterExpr } = {}): Promise<unknown[]> {
    if (!validIndex(index)) return [];
    return boundary('export', async () => {
      const alias = this.alias(index);
      const info = await this.describe(alias);
      const filter = info && options.filter ? toFilterBy(options.filter, info.fields) : true;
      if (!info || filter === false) return [];
      const column = field.level === 'doc' ? 'doc_meta' : 'part_meta';
      const body = await ignoreNotFound(() =>
        this.client.collections(alias).documents().export({ include_fields: `doc_id,${column}`, ...(typeof filter === 'string' && { filter_by: filter }) }),
      );
      const seen = new Set<string>();
      const values: unknown[] = [];
      for (const row of jsonLines(body)) {
        if (field.level === 'doc') {
          if (seen.has(String(row.doc_id))) continue;
          seen.add(String(row.doc_id));
        }
        const meta = typeof row[column] === 'string' ? (JSON.parse(row[column] as string) as Doc) : {};
        const value = meta[field.name];
        if (value !== undefined && value !== null && (typeof value !== 'object' || Array.isArray(value))) values.push(value);
      }
      return values;
    });
  }

  async documentParts(index: string, documentId: string): Promise<SearchHit[]> {
    if (!validIndex(index)) return [];
    return boundary('export', async () => {
      const docs = await this.exportParts(this.alias(index), documentId, RETURNED_FIELDS);
      return docs.map((d) => toHit(d, { score: 0 })).sort((a, b) => a.seq - b.seq);
    });
  }

  async ping(): Promise<void> {
    await boundary('health check', async () => {
      if (!(await this.client.health.retrieve()).ok) throw new DomainError('unavailable', 'search.unavailable', 'Typesense is not healthy');
    });
  }

  /** The active generation is the one the aliases point at, else the first one prepared (as SQLite's INSERT OR IGNORE). */
  async prepare(_projection: ProjectionShape, generation: number): Promise<void> {
    if (this.active === undefined) this.active = (await boundary('prepare', () => this.aliasedGeneration())) ?? generation;
  }

  private async aliasedGeneration(): Promise<number | undefined> {
    const { aliases } = await this.client.aliases().retrieve();
    return aliases.map((a) => ({ a, c: this.parse(a.collection_name) })).find(({ a, c }) => c && a.name === this.alias(c.index))?.c?.generation;
  }

  private async isActive(generation: number): Promise<boolean> {
    // Another process (the CLI) may have swapped generations since we last looked: ask the aliases again.
    if (this.active !== generation) this.active = (await this.aliasedGeneration()) ?? this.active ?? generation;
    return this.active === generation;
  }

  async applyBatch(projection: string, generation: number, batch: readonly PositionedOps<SearchOp>[], checkpoint: number, options: ApplyOptions = {}): Promise<void> {
    const applied = options.replay ? -1 : await this.checkpoints.load(projection, generation);
    await boundary('write', async () => {
      for (const { position, ops } of batch) {
        if (position > applied) for (const op of ops) await this.applyOp(op, generation, position);
      }
    });
    // Only after every write succeeded: a crash before this line replays the batch, which is harmless.
    if (!options.replay) await this.checkpoints.save(projection, generation, checkpoint);
  }

  private async applyOp(op: SearchOp, generation: number, position: number): Promise<void> {
    if (op.op === 'createIndex') await this.ensure(op.index, generation, op.dimensions, op.incarnation);
    else if (op.op === 'dropIndex') await this.drop(op.index, generation);
    else if (!(await this.accepts(op.index, generation, op.incarnation))) return;
    else if (op.op === 'upsertDocument') await this.upsert(op.index, generation, op.document, position);
    else if (op.op === 'deleteDocument') await this.deleteParts(this.collection(op.index, generation), op.documentId);
    else if (op.op === 'deleteDocumentsWhere') await this.deleteWhere(this.collection(op.index, generation), op.filter);
    else if (op.op === 'setPartVector') await this.setVector(op.index, generation, op.documentId, op.seq, op.vector);
    else if (op.op === 'setDocumentMetadata') await this.setMetadata(this.collection(op.index, generation), op.documentId, op.metadata, position);
    else assertNever(op);
  }

  /** Whether a document op may write: any for an op without incarnation, else only a collection created with it. */
  private async accepts(index: string, generation: number, incarnation: string | undefined): Promise<boolean> {
    if (incarnation === undefined) return true;
    const name = this.collection(index, generation);
    const known = this.ensured.get(name) ?? (await this.describe(name));
    return known?.incarnation === incarnation;
  }

  private async describe(collection: string): Promise<CollectionInfo | undefined> {
    return ignoreNotFound(async () => collectionInfo(await this.client.collections(collection).retrieve()));
  }

  private async ensure(index: string, generation: number, dimensions?: number, incarnation?: string): Promise<Ensured> {
    const name = this.collection(index, generation);
    let known = this.ensured.get(name);
    if (!known) {
      known = await this.describe(name);
      if (!known) {
        try {
          await this.client.collections().create(collectionSchema(name, dimensions, incarnation));
          known = { dimensions, incarnation };
        } catch (e) {
          if (!(e instanceof Errors.ObjectAlreadyExists)) throw e;
          known = (await this.describe(name)) ?? { dimensions, incarnation };
        }
      }
      if (await this.isActive(generation)) await this.client.aliases().upsert(this.alias(index), { collection_name: name });
      this.ensured.set(name, known);
    }
    if (dimensions && known.dimensions === undefined) {
      // Created before its first vector arrived: add the vector field now (Typesense can add fields).
      await this.client.collections(name).update({ fields: [embeddingField(dimensions)] });
      this.ensured.set(name, (known = { ...known, dimensions }));
    }
    return known;
  }

  private async drop(index: string, generation: number): Promise<void> {
    const name = this.collection(index, generation);
    this.ensured.delete(name);
    const alias = await ignoreNotFound(() => this.client.aliases(this.alias(index)).retrieve());
    if (alias?.collection_name === name) await ignoreNotFound(() => this.client.aliases(alias.name).delete());
    await ignoreNotFound(() => this.client.collections(name).delete());
  }

  private async upsert(index: string, generation: number, doc: IndexedDocument, position: number): Promise<void> {
    const { dimensions } = await this.ensure(index, generation, doc.parts.find((p) => p.vector?.length)?.vector?.length);
    const name = this.collection(index, generation);
    // Upsert replaces whole parts, but a shorter new version must not leave the old tail behind.
    await this.deleteParts(name, doc.documentId);
    if (doc.parts.length) await this.importAll(name, doc.parts.map((p) => partDocument(doc, p, position, dimensions !== undefined)));
  }

  private async deleteParts(collection: string, documentId: string): Promise<void> {
    await ignoreNotFound(() => this.client.collections(collection).documents().delete({ filter_by: `doc_id:=${filterLiteral(documentId)}` }));
  }

  /** The documents of the parts a filter selects, whole: their ids first, as a part-level filter names parts only. */
  private async deleteWhere(collection: string, filter: FilterExpr): Promise<void> {
    const info = await this.describe(collection);
    const filterBy = info ? toFilterBy(filter, info.fields) : false;
    if (filterBy === false) return;
    const ids = new Set(jsonLines(await ignoreNotFound(() => this.client.collections(collection).documents().export({ ...(filterBy === true ? {} : { filter_by: filterBy }), include_fields: 'doc_id' }))).map((d) => String(d.doc_id)));
    for (const id of ids) await this.deleteParts(collection, id);
  }

  /**
   * Re-upserts every part with the new document metadata. The typed fields are made again from the JSON copies,
   * not copied from the export: JSON.parse would round the int64 order keys.
   */
  private async setMetadata(collection: string, documentId: string, metadata: Readonly<Doc>, position: number): Promise<void> {
    const parts = await this.exportParts(collection, documentId);
    const flat = flattenMetadata('doc', metadata);
    const kept = (old: Doc) => Object.fromEntries(Object.entries(old).filter(([k]) => !k.startsWith('doc__') && !k.startsWith('part__')));
    const partFields = (old: Doc) => flattenMetadata('part', typeof old.part_meta === 'string' ? (JSON.parse(old.part_meta) as Doc) : {}).fields;
    const rows = parts.map((old) => ({ ...kept(old), ...partFields(old), ...flat.fields, doc_meta: JSON.stringify(metadata), doc_has: flat.present, _pos: position }));
    if (rows.length) await this.importAll(collection, rows);
  }

  /** A partial update of the part's `embedding` (the field added first if the collection has none yet); a missing part is left alone. */
  private async setVector(index: string, generation: number, documentId: string, seq: number, vector: readonly number[] | Float32Array): Promise<void> {
    await this.ensure(index, generation, vector.length);
    await ignoreNotFound(() => this.client.collections(this.collection(index, generation)).documents(`${documentId}:${seq}`).update({ embedding: [...vector] }));
  }

  private async exportParts(collection: string, documentId: string, includeFields?: string): Promise<Doc[]> {
    const filter_by = `doc_id:=${filterLiteral(documentId)}`;
    return jsonLines(await ignoreNotFound(() => this.client.collections(collection).documents().export({ filter_by, ...(includeFields && { include_fields: includeFields }) })));
  }

  /** G11: import answers HTTP 200 with one result per line even when some failed, so every line is checked. */
  private async importAll(collection: string, rows: Doc[]): Promise<void> {
    const body = await this.client.collections(collection).documents().import(importLines(rows), { action: 'upsert', dirty_values: 'reject', throwOnFail: false });
    const results = jsonLines(body) as { success?: boolean; error?: string }[];
    const failed = results.flatMap((r, i) => (r.success ? [] : [`${String(rows[i]?.id)}: ${r.error}`]));
    if (failed.length || results.length !== rows.length) {
      throw new DomainError('upstream', 'search.import_failed', `Typesense import into ${collection}: ${failed.length || rows.length - results.length} of ${rows.length} failed: ${failed.slice(0, 3).join('; ')}`);
    }
  }

  async checkpoint(projection: string, generation: number): Promise<number> {
    return this.checkpoints.load(projection, generation);
  }

  async activate(_projection: ProjectionShape, generation: number): Promise<void> {
    await boundary('activate', async () => {
      this.active = generation;
      this.ensured.clear();
      const names = (await this.client.collections().retrieve({ exclude_fields: 'fields' })).map((c) => c.name);
      const live = new Set(names.filter((name) => this.parse(name)?.generation === generation));
      for (const name of live) await this.client.aliases().upsert(this.alias(this.parse(name)!.index), { collection_name: name });
      for (const { name, collection_name } of (await this.client.aliases().retrieve()).aliases) {
        if (this.parse(collection_name) && !live.has(collection_name)) await ignoreNotFound(() => this.client.aliases(name).delete());
      }
      for (const name of names) {
        if (this.parse(name) && !live.has(name)) await ignoreNotFound(() => this.client.collections(name).delete());
      }
    });
  }
}

/** An export's body: the client hands back JSONL as a string, or one parsed object when the server labels it JSON. */
function jsonLines(body: unknown): Doc[] {
  if (typeof body !== 'string') return body && typeof body === 'object' ? [body as Doc] : [];
  return body.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Doc);
}

/** Index names become part of collection names: `x_g2` would read as index `x`, generation 2. */
const validIndex = (index: string): boolean => index.length > 0 && !/_g\d+$/.test(index);

async function ignoreNotFound<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof Errors.ObjectNotFound) return undefined;
    throw e;
  }
}

/** Driver errors become typed errors here, so callers never see Typesense classes. */
async function boundary<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof DomainError) throw e;
    const rejected = e instanceof Errors.RequestMalformed || e instanceof Errors.ObjectUnprocessable;
    const message = `Typesense ${what} failed: ${e instanceof Error ? e.message : String(e)}`;
    throw new DomainError(rejected ? 'invalid' : 'unavailable', rejected ? 'search.invalid_request' : 'search.unavailable', message);
  }
}

/** The typed metadata fields Typesense added to the schema as documents brought them (not the regex declarations). */
function collectionInfo(schema: CollectionSchema & { metadata?: { incarnation?: unknown } }): CollectionInfo {
  const incarnation = typeof schema.metadata?.incarnation === 'string' ? schema.metadata.incarnation : undefined;
  const fields = new Set<string>();
  let dimensions: number | undefined;
  for (const f of schema.fields ?? []) {
    if (f.name === 'embedding') dimensions = f.num_dim;
    else if (/^(doc|part)__[A-Za-z0-9_]+__[hsnb]$/.test(f.name)) fields.add(f.name);
  }
  return { dimensions, incarnation, fields };
}

function toHit(d: Doc, scores: Pick<SearchHit, 'score' | 'textScore' | 'vectorDistance'>): SearchHit {
  const meta = (v: unknown): Doc => (typeof v === 'string' ? (JSON.parse(v) as Doc) : {});
  const sectionTitle = typeof d.title === 'string' ? d.title : undefined;
  const vector = Array.isArray(d.embedding) ? { vector: Float32Array.from(d.embedding as number[]) } : {};
  return { documentId: String(d.doc_id), seq: Number(d.seq), text: String(d.text ?? ''), sectionTitle, partMetadata: meta(d.part_meta), documentMetadata: meta(d.doc_meta), ...scores, ...vector };
}

/** Cosine distance lies in [0, 2]; hybrid hits found by text only carry no real distance. */
const distance = (h: RawHit): number | undefined => (typeof h.vector_distance === 'number' && h.vector_distance <= 2 ? h.vector_distance : undefined);
const textMatch = (h: RawHit): number | undefined => (h.text_match ? h.text_match : undefined);

function score(hits: RawHit[], mode: SearchRequest['mode'], text: boolean, vector: boolean, alpha: number): SearchHit[] {
  if (mode === 'lexical') return hits.map((h) => toHit(h.document, { textScore: h.text_match, score: h.text_match ?? 0 }));
  if (mode === 'vector') return hits.map((h) => toHit(h.document, { vectorDistance: distance(h), score: 1 - (distance(h) ?? 2) }));
  if (text && vector) {
    return hits
      .map((h) => toHit(h.document, { textScore: textMatch(h), vectorDistance: distance(h), score: h.hybrid_search_info?.rank_fusion_score ?? 0 }))
      .sort((a, b) => b.score - a.score);
  }
  // Hybrid with one side only (no query words, or no vectors in the index): that side's G14 term, ranked as Typesense does.
  let rank = 0;
  let previous: number | undefined;
  return hits.map((h, i) => {
    if (!text) return toHit(h.document, { vectorDistance: distance(h), score: fuseRanks(undefined, i + 1, alpha) });
    if (h.text_match !== previous) rank += 1;
    previous = h.text_match;
    return toHit(h.document, { textScore: textMatch(h), score: fuseRanks(rank, undefined, alpha) });
  });
}

const FACETS = ['s', 'n', 'b'] as const;

/** Typesense reports facet values as strings, whatever the field's type: decoded from the typed layout. */
const facetValue = (value: string, slot: (typeof FACETS)[number]): unknown => (slot === 's' ? hexString(value) : slot === 'n' ? keyNumber(BigInt(value)) : value === 'true');

const compareValues = (a: unknown, b: unknown): number =>
  typeof a === 'number' && typeof b === 'number' ? a - b : String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
