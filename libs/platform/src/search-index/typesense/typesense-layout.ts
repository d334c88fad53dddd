import { createHash } from 'node:crypto';
import type { CollectionCreateSchema, CollectionFieldSchema } from 'typesense';
import type { FieldRef } from '../../filter/filter';
import type { IndexedDocument, IndexedPart } from '../search-index.port';

/**
 * How parts are laid out as Typesense documents.
 *
 * Metadata is flattened into top-level fields so `filter_by` and `facet_by` can reach it (nested fields are off):
 * `doc__<name>` for document metadata, `part__<name>` for part metadata, each value into the field of its type,
 * so that filters keep the semantics of filter/filter.ts whatever Typesense does to plain values:
 * - `<flat>__h`: a string's SHA-256 (hex, 128 bits): exact, case-sensitive equality (Typesense compares plain
 *   strings case- and punctuation-insensitively, and only their first 100 characters);
 * - `<flat>__s`: a string's UTF-8 bytes in hex: byte-exact prefixes (LIKE 'abc%') and facet values to decode;
 * - `<flat>__n`: a number as the int64 whose order is the float64's order (`numberKey`): exact equality and
 *   ranges for integers and reals alike (Typesense's `float` is 32-bit);
 * - `<flat>__b`: a boolean.
 * The types are declared by regex fields in the schema, never guessed from the first value indexed, so one
 * field may hold values of several types across documents. Arrays and objects get no typed field (every
 * comparison with them is UNKNOWN); the presence list says they are there (not null).
 *
 * Name encoding: every UTF-8 byte outside [A-Za-z0-9] becomes `_` + two upper-case hex digits, so
 * `created at` → `created_20at`, `x_y` → `x_5Fy`. The underscore is escaped too: that makes the encoding
 * reversible and means `__` never occurs inside an encoded name, so the type suffix parses unambiguously.
 */
export function encodeFieldName(name: string): string {
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const isWordChar = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);
    out += isWordChar ? String.fromCharCode(byte) : `_${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function decodeFieldName(encoded: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    if (encoded[i] === '_') {
      bytes.push(parseInt(encoded.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(encoded.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8');
}

export const flatFieldName = (field: FieldRef): string => `${field.level}__${encodeFieldName(field.name)}`;

/** The typed copies of a value: hash and hex of a string, order key of a number, a boolean. */
export type ValueSlot = 'h' | 's' | 'n' | 'b';
export const typedFieldName = (field: FieldRef, slot: ValueSlot): string => `${flatFieldName(field)}__${slot}`;

/**
 * Companion `string[]` fields listing what a part holds: the flattened names whose value is present (not null),
 * and the typed names it has a value in. Typesense cannot filter on "field missing", and its `!=` matches
 * documents without the field, so IS NULL becomes `doc_has:!=[doc__x]` and `!=` requires `doc_has:=[doc__x__h]`.
 * The single underscore keeps these names out of the `doc__`/`part__` namespace.
 */
export const PRESENCE_FIELD = { doc: 'doc_has', part: 'part_has' } as const;

export const stringHash = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex').slice(0, 32);
export const stringHex = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
export const hexString = (hex: string): string => Buffer.from(hex, 'hex').toString('utf8');

const SIGN_CLEARED = 0x7fffffffffffffffn;

/** The int64 whose signed order is the order of the finite float64 `n` (-0 is 0); exact, so equality is too. */
export function numberKey(n: number): bigint {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, n === 0 ? 0 : n);
  const bits = view.getBigInt64(0);
  return bits < 0n ? bits ^ SIGN_CLEARED : bits;
}

export function keyNumber(key: bigint): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigInt64(0, key < 0n ? key ^ SIGN_CLEARED : key);
  return view.getFloat64(0);
}

export type FlatValue = string | bigint | boolean;

/** The typed fields of one metadata level, and its presence list. */
export function flattenMetadata(level: FieldRef['level'], metadata: Readonly<Record<string, unknown>>): { fields: Record<string, FlatValue>; present: string[] } {
  const fields: Record<string, FlatValue> = {};
  const present: string[] = [];
  const put = (field: FieldRef, slot: ValueSlot, value: FlatValue) => {
    fields[typedFieldName(field, slot)] = value;
    present.push(typedFieldName(field, slot));
  };
  for (const [name, value] of Object.entries(metadata)) {
    if (value === null || value === undefined) continue;
    const field = { level, name };
    present.push(flatFieldName(field));
    if (typeof value === 'string') {
      put(field, 'h', stringHash(value));
      put(field, 's', stringHex(value));
    } else if (typeof value === 'number' && Number.isFinite(value)) put(field, 'n', numberKey(value));
    else if (typeof value === 'boolean') put(field, 'b', value);
  }
  return { fields, present };
}

export const embeddingField = (dimensions: number): CollectionFieldSchema => ({ name: 'embedding', type: 'float[]', num_dim: dimensions, optional: true });

const TYPED_FIELDS: readonly CollectionFieldSchema[] = (['doc', 'part'] as const).flatMap((level) => [
  { name: `${level}__.*__h`, type: 'string', optional: true },
  { name: `${level}__.*__s`, type: 'string', optional: true, facet: true },
  { name: `${level}__.*__n`, type: 'int64', optional: true, facet: true },
  { name: `${level}__.*__b`, type: 'bool', optional: true, facet: true },
]);

/**
 * One collection per (index, generation); its metadata keeps the incarnation it was created for (`SearchOp`). The regex fields type the flattened metadata whatever its names (facet
 * on where distinctValues reads them); the JSON copies are stored unindexed and returned as they were written.
 * Stemming on, as SQLite's porter tokenizer.
 */
export function collectionSchema(name: string, dimensions?: number, incarnation?: string): CollectionCreateSchema {
  return {
    name,
    ...(incarnation !== undefined && { metadata: { incarnation } }),
    enable_nested_fields: false,
    fields: [
      { name: 'doc_id', type: 'string', facet: true },
      { name: 'seq', type: 'int32', sort: true },
      { name: 'text', type: 'string', stem: true },
      { name: 'title', type: 'string', optional: true, stem: true },
      { name: 'part_meta', type: 'string', index: false, optional: true },
      { name: 'doc_meta', type: 'string', index: false, optional: true },
      { name: '_pos', type: 'int64' },
      { name: 'doc_has', type: 'string[]', optional: true },
      { name: 'part_has', type: 'string[]', optional: true },
      ...(dimensions ? [embeddingField(dimensions)] : []),
      ...TYPED_FIELDS,
    ],
  };
}

/** One part as a Typesense document; its id is deterministic, so re-importing it overwrites, never duplicates. */
export function partDocument(doc: IndexedDocument, part: IndexedPart, position: number, withVector: boolean): Record<string, unknown> {
  const d = flattenMetadata('doc', doc.documentMetadata);
  const p = flattenMetadata('part', part.partMetadata);
  return {
    ...d.fields,
    ...p.fields,
    id: `${doc.documentId}:${part.seq}`,
    doc_id: doc.documentId,
    seq: part.seq,
    text: part.text,
    ...(part.sectionTitle !== undefined && { title: part.sectionTitle }),
    part_meta: JSON.stringify(part.partMetadata),
    doc_meta: JSON.stringify(doc.documentMetadata),
    // The position of the event that wrote the part: not a guard (Typesense has no conditional write), a trace.
    _pos: position,
    doc_has: d.present,
    part_has: p.present,
    ...(withVector && part.vector?.length && { embedding: [...part.vector] }),
  };
}

/**
 * Rows as JSONL for import: order keys are int64, which JSON numbers in JavaScript cannot carry exactly, so they
 * are written as bare digits here rather than through `JSON.stringify` of a Number.
 */
export function importLines(rows: readonly Record<string, unknown>[]): string {
  const marker = '\u0000int64:';
  const replacer = (_key: string, value: unknown) => (typeof value === 'bigint' ? `${marker}${value}` : value);
  return rows.map((row) => JSON.stringify(row, replacer).replace(/"\\u0000int64:(-?\d+)"/g, '$1')).join('\n');
}
