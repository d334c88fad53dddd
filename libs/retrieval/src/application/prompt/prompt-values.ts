/**
 * The values a prompt template sees, and the only methods it may call on them. Templates render JSON (an array
 * of chat messages) and put values inside JSON strings, as the reference's own examples do
 * (`"content": "${qResult.getText()}"`); so text values print JSON-escaped. `$esc.java(x)` (the other idiom in
 * use) escapes a plain value and leaves an already escaped one as it is, so both idioms give valid JSON.
 *
 * Every method call from a template goes through `callMethod`: an allow-list of Java-like methods of these
 * values, strings, lists and maps. Native methods (`repeat`, `padStart`, regular expressions) are out of
 * reach, which keeps a template from allocating without bound or backtracking for ever.
 */
import type { ResultFields } from '../query/query-corpora';

/** Longest string a template may build by method calls (the rendered output has its own limit). */
export const MAX_TEMPLATE_STRING = 1_000_000;

// The plain data behind template values is kept out of their properties: a template reads properties
// directly, and a raw string it printed would not be JSON-escaped.
const TEXTS = new WeakMap<PromptText, string>();

/** A text value: prints JSON-escaped, compares and calls methods as its plain text. */
export class PromptText {
  constructor(raw: string) {
    TEXTS.set(this, raw);
  }
  toString(): string {
    return jsonEscape(TEXTS.get(this)!);
  }
}

/** Names a metadata key may not take as a property of a template value (they would break printing or the prototype). */
const RESERVED = new Set(['toString', 'valueOf', '__proto__', 'constructor', 'prototype']);

const METADATA = new WeakMap<PromptMetadata, Readonly<Record<string, unknown>>>();
const RESULTS = new WeakMap<PromptResult, ResultFields>();

/**
 * `docMetadata()` / `partMetadata()`: `get(key)` (empty when absent), `present()` and the map methods; its
 * fields are also properties (`$qResult.docMetadata().title`), as Velocity reads a map.
 */
export class PromptMetadata {
  constructor(values: Readonly<Record<string, unknown>>) {
    METADATA.set(this, values);
    for (const [key, value] of Object.entries(values)) {
      if (!RESERVED.has(key)) Object.defineProperty(this, key, { value: wrap(value), enumerable: true });
    }
  }
  toString(): string {
    return jsonEscape(JSON.stringify(METADATA.get(this)));
  }
}

/** One used search result, as `$vectaraQueryResults` holds them; `$r.text` reads as `$r.getText()` does. */
export class PromptResult {
  readonly text: unknown;
  readonly score: number;
  readonly documentId: unknown;
  readonly corpusKey: unknown;
  constructor(data: ResultFields) {
    RESULTS.set(this, data);
    this.text = wrap(data.text);
    this.score = data.score;
    this.documentId = wrap(data.document_id);
    this.corpusKey = wrap(data.corpus_key);
  }
  toString(): string {
    return jsonEscape(RESULTS.get(this)!.text);
  }
}

/** A document part as `$vectaraDocument.parts()` holds them (summarisation templates). */
export interface PromptPartData {
  readonly text: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** The table the part was cut from, in the reference's `Table` shape. */
  readonly table?: unknown;
}

/** A document as a summarisation template sees it: `$vectaraDocument.json()`, `.id()`, `.metadata()`, `.parts()`. */
export interface PromptDocumentData {
  readonly id: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly parts: readonly PromptPartData[];
  /** The whole document as `json()` prints it. */
  readonly json: Readonly<Record<string, unknown>>;
}

const DOCUMENTS = new WeakMap<PromptDocument, PromptDocumentData>();
const PARTS = new WeakMap<PromptPart, PromptPartData>();
const JSON_VALUES = new WeakMap<PromptJson, unknown>();

export class PromptDocument {
  constructor(data: PromptDocumentData) {
    DOCUMENTS.set(this, data);
  }
  toString(): string {
    return jsonEscape(JSON.stringify(DOCUMENTS.get(this)!.json));
  }
}

export class PromptPart {
  constructor(data: PromptPartData) {
    PARTS.set(this, data);
  }
  toString(): string {
    return jsonEscape(PARTS.get(this)!.text);
  }
}

/** A value with only `json()` (a part's table). */
export class PromptJson {
  constructor(value: unknown) {
    JSON_VALUES.set(this, value);
  }
  toString(): string {
    return jsonEscape(JSON.stringify(JSON_VALUES.get(this)));
  }
}

const DOCUMENT_METHODS: Record<string, (d: PromptDocumentData, args: unknown[]) => unknown> = {
  json: (d) => textResult(JSON.stringify(d.json)),
  id: (d) => wrap(d.id),
  metadata: (d) => new PromptMetadata(d.metadata),
  parts: (d) => d.parts.map((p) => new PromptPart(p)),
};

const PART_METHODS: Record<string, (p: PromptPartData, args: unknown[]) => unknown> = {
  text: (p) => wrap(p.text),
  getText: (p) => wrap(p.text),
  metadata: (p) => new PromptMetadata(p.metadata),
  hasTable: (p) => p.table !== undefined,
  table: (p) => (p.table === undefined ? '' : new PromptJson(p.table)),
};

const JSON_METHODS: Record<string, (v: unknown, args: unknown[]) => unknown> = {
  json: (v) => textResult(JSON.stringify(v)),
};

/** `$esc`: the escaping tool of Velocity Tools, for JSON/Java/JavaScript string literals, HTML and URLs. */
export class EscapeTool {
  toString(): string {
    return '';
  }
}

/** A value as templates see it: strings become `PromptText`, containers are wrapped member by member. */
export function wrap(value: unknown): unknown {
  if (typeof value === 'string') return value === '' ? '' : new PromptText(value);
  if (Array.isArray(value)) return value.map(wrap);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wrap(v)]));
  return value;
}

export const plain = (value: unknown): unknown => (value instanceof PromptText ? TEXTS.get(value)! : value);

/** The plain text of a value a method was given. */
function text(value: unknown): string {
  if (value instanceof PromptText) return TEXTS.get(value)!;
  if (value instanceof PromptResult) return RESULTS.get(value)!.text;
  if (value instanceof PromptMetadata) return JSON.stringify(METADATA.get(value));
  if (value instanceof PromptPart) return PARTS.get(value)!.text;
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(unwrap(value));
  return String(value);
}

const unwrap = (value: unknown): unknown => (value instanceof PromptText ? TEXTS.get(value)! : Array.isArray(value) ? value.map(unwrap) : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unwrap(v)])) : value);

/** A string result of a method: wrapped again, and bounded. */
function textResult(s: string): unknown {
  if (s.length > MAX_TEMPLATE_STRING) throw new TemplateMethodError(`a string in the template grew past ${MAX_TEMPLATE_STRING} characters`);
  return wrap(s);
}

export class TemplateMethodError extends Error {}

type Method = (self: never, args: unknown[]) => unknown;

const RESULT_METHODS: Record<string, (r: ResultFields, args: unknown[]) => unknown> = {
  getText: (r) => wrap(r.text),
  text: (r) => wrap(r.text),
  getScore: (r) => r.score,
  score: (r) => r.score,
  getDocumentId: (r) => wrap(r.document_id),
  getCorpusKey: (r) => wrap(r.corpus_key),
  docMetadata: (r) => new PromptMetadata(r.document_metadata),
  partMetadata: (r) => new PromptMetadata(r.part_metadata),
};

const has = (values: Readonly<Record<string, unknown>>, key: unknown) => Object.prototype.hasOwnProperty.call(values, text(key));
const METADATA_METHODS: Record<string, (m: Readonly<Record<string, unknown>>, args: unknown[]) => unknown> = {
  get: (m, [key]) => (has(m, key) ? (wrap(m[text(key)]) ?? '') : ''),
  present: (m) => Object.keys(m).length > 0,
  isEmpty: (m) => Object.keys(m).length === 0,
  containsKey: (m, [key]) => has(m, key),
  keySet: (m) => Object.keys(m).map(wrap),
  size: (m) => Object.keys(m).length,
  toString: (m: Readonly<Record<string, unknown>>) => jsonEscape(JSON.stringify(m)),
};

const ESCAPE_METHODS: Record<string, (e: EscapeTool, args: unknown[]) => unknown> = {
  java: (_, [v]) => jsonEscape(text(v)),
  javascript: (_, [v]) => jsonEscape(text(v)).replace(/'/g, "\\'"),
  json: (_, [v]) => jsonEscape(text(v)),
  html: (_, [v]) => text(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`),
  xml: (_, [v]) => text(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`),
  url: (_, [v]) => encodeURIComponent(text(v)),
};

/** Java `String` methods over the plain text (Velocity templates are written against Java strings). */
const STRING_METHODS: Record<string, (s: string, args: unknown[]) => unknown> = {
  length: (s) => s.length,
  isEmpty: (s) => s.length === 0,
  toString: (s: string) => wrap(s),
  trim: (s) => wrap(s.trim()),
  strip: (s) => wrap(s.trim()),
  toLowerCase: (s) => wrap(s.toLowerCase()),
  toUpperCase: (s) => wrap(s.toUpperCase()),
  substring: (s, [a, b]) => wrap(s.substring(Number(a), b === undefined ? undefined : Number(b))),
  charAt: (s, [i]) => wrap(s.charAt(Number(i))),
  indexOf: (s, [x]) => s.indexOf(text(x)),
  lastIndexOf: (s, [x]) => s.lastIndexOf(text(x)),
  contains: (s, [x]) => s.includes(text(x)),
  startsWith: (s, [x]) => s.startsWith(text(x)),
  endsWith: (s, [x]) => s.endsWith(text(x)),
  equals: (s, [x]) => s === text(x),
  equalsIgnoreCase: (s, [x]) => s.toLowerCase() === text(x).toLowerCase(),
  replace: (s, [a, b]) => textResult(s.split(text(a)).join(text(b))),
  concat: (s, [x]) => textResult(s + text(x)),
  split: (s, [sep]) => s.split(text(sep)).map(wrap),
};

const LIST_METHODS: Record<string, (l: unknown[], args: unknown[]) => unknown> = {
  size: (l) => l.length,
  isEmpty: (l) => l.length === 0,
  get: (l, [i]) => l[Number(i)],
  contains: (l, [x]) => l.some((v) => plain(v) === plain(x)),
};

const MAP_METHODS: Record<string, (m: Record<string, unknown>, args: unknown[]) => unknown> = {
  get: (m, [key]) => (Object.prototype.hasOwnProperty.call(m, text(key)) ? m[text(key)] : ''),
  containsKey: (m, [key]) => Object.prototype.hasOwnProperty.call(m, text(key)),
  keySet: (m) => Object.keys(m).map(wrap),
  size: (m) => Object.keys(m).length,
  isEmpty: (m) => Object.keys(m).length === 0,
};

/** Calls a template method on a value, from the allow-lists above; anything else is an error naming the method. */
export function callMethod(self: unknown, name: string, args: unknown[]): unknown {
  const pick = (table: Record<string, Method>, target: unknown) => (Object.prototype.hasOwnProperty.call(table, name) ? table[name](target as never, args) : missing(name));
  if (self instanceof PromptResult) return pick(RESULT_METHODS as Record<string, Method>, RESULTS.get(self));
  if (self instanceof PromptMetadata) return pick(METADATA_METHODS as Record<string, Method>, METADATA.get(self));
  if (self instanceof EscapeTool) return pick(ESCAPE_METHODS as Record<string, Method>, self);
  if (self instanceof PromptDocument) return pick(DOCUMENT_METHODS as Record<string, Method>, DOCUMENTS.get(self));
  if (self instanceof PromptPart) return pick(PART_METHODS as Record<string, Method>, PARTS.get(self));
  if (self instanceof PromptJson) return pick(JSON_METHODS as Record<string, Method>, JSON_VALUES.get(self));
  if (self instanceof PromptText || typeof self === 'string') return pick(STRING_METHODS as Record<string, Method>, plain(self));
  if (typeof self === 'number' && name === 'toString') return String(self);
  if (Array.isArray(self)) return pick(LIST_METHODS as Record<string, Method>, self);
  if (self !== null && typeof self === 'object' && Object.getPrototypeOf(self) === Object.prototype) return pick(MAP_METHODS as Record<string, Method>, self);
  return missing(name);
}

function missing(name: string): never {
  throw new TemplateMethodError(`the method ${name}() is not available in prompt templates`);
}

/** Escapes text for the inside of a JSON (or Java) string literal. */
export function jsonEscape(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}
