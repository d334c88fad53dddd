import fc from 'fast-check';
import type { FieldRef, FilterExpr, Literal } from '../filter';
import type { IndexedDocument } from '../../search-index/search-index.port';

/**
 * Random metadata and filter expressions for the equivalence tests (filter-equivalence.int.spec.ts and the
 * search-index contract). A profile says which fields exist at each level, what values they hold, and which
 * literals and LIKE patterns expressions use; literals come from the same small domains as the values so that
 * atoms are often TRUE, often FALSE and often UNKNOWN.
 */
export interface FilterProfile {
  readonly fields: { readonly doc: Readonly<Record<string, fc.Arbitrary<unknown>>>; readonly part: Readonly<Record<string, fc.Arbitrary<unknown>>> };
  readonly literal: fc.Arbitrary<Literal>;
  readonly pattern: fc.Arbitrary<string>;
}

/** The word every part's text holds, so a lexical search for it returns every part. */
export const COMMON_WORD = 'common';

const quarter = fc.integer({ min: -8, max: 8 }).map((k) => k / 4);
// ASCII with the characters the filter language treats specially: quotes, backslashes, LIKE wildcards.
const asciiString = fc.string({ unit: fc.constantFrom('a', 'b', 'A', 'B', '%', '_', "'", '\\', ' ', '.'), maxLength: 3 });
const smallInt = fc.integer({ min: -3, max: 3 });
const mixedLiteral: fc.Arbitrary<Literal> = fc.oneof(smallInt, quarter, fc.boolean(), asciiString);
const mixedValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: mixedLiteral },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(fc.oneof(smallInt, asciiString), { maxLength: 2 }) },
  { weight: 1, arbitrary: fc.record({ a: smallInt }) },
);
const mixedPattern = fc
  .array(fc.constantFrom('a', 'b', 'A', '%', '_', '\\%', '\\_', '\\\\', '\\', "'", '.'), { maxLength: 4 })
  .map((tokens) => tokens.join(''));

/**
 * Every type in every field, arrays and objects included, names that need quoting (space, dot, dash, `$`,
 * quote and backslash): for the evaluators that implement the semantics exactly.
 */
export const MIXED_PROFILE: FilterProfile = {
  fields: {
    doc: Object.fromEntries(['year', 'kind', 'created at', 'a.b', 'x-y', '$ref', 'q"\\'].map((n) => [n, mixedValue])),
    part: Object.fromEntries(['lang', 'n', 'is title'].map((n) => [n, mixedValue])),
  },
  literal: mixedLiteral,
  pattern: mixedPattern,
};

const nullable = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arb, { nil: null, freq: 6 });
const words = ['alpha', 'alp', 'beta', 'gamma'];
const fractional = fc.integer({ min: -4, max: 4 }).map((k) => (2 * k + 1) / 4);

/**
 * What every search engine can hold exactly: each field keeps one scalar type (reals never integral, so no engine
 * takes a real field for an integer one), strings are lower-case words. Literals and patterns still cover every
 * type and LIKE shapes Typesense cannot express, which the contract counts as skipped.
 */
export const PORTABLE_PROFILE: FilterProfile = {
  fields: {
    doc: {
      year: nullable(fc.integer({ min: 2018, max: 2022 })),
      score: nullable(fractional),
      kind: nullable(fc.constantFrom(...words)),
      flag: nullable(fc.boolean()),
      'created at': nullable(fc.constantFrom('alpha', 'delta')),
      'a.b': nullable(fc.integer({ min: -2, max: 2 })),
      'x-y': nullable(fc.boolean()),
    },
    part: { lang: nullable(fc.constantFrom('eng', 'deu')), n: nullable(fc.integer({ min: 0, max: 3 })), ok: nullable(fc.boolean()) },
  },
  literal: fc.oneof(fc.constantFrom(2018, 2020, 2022, -1, 0, 1, 2019.5), fractional, fc.boolean(), fc.constantFrom(...words, 'eng', 'deu', 'delta')),
  pattern: fc.constantFrom('alpha', 'alp%', 'a%', '%', 'be%', 'eng', '_lpha', '%ta', 'al\\%', 'de%'),
};

const metadata = (fields: Readonly<Record<string, fc.Arbitrary<unknown>>>) => fc.record(fields, { requiredKeys: [] }) as fc.Arbitrary<Record<string, unknown>>;

/** `documents` documents of 1–5 parts each (about 3 on average), every part's text holding COMMON_WORD. */
export function corpusArbitrary(profile: FilterProfile, documents = 10): fc.Arbitrary<IndexedDocument[]> {
  const doc = fc.record({ meta: metadata(profile.fields.doc), parts: fc.array(metadata(profile.fields.part), { minLength: 1, maxLength: 5 }) });
  return fc.array(doc, { minLength: documents, maxLength: documents }).map((docs) =>
    docs.map((d, i) => ({
      documentId: `d${i}`,
      documentMetadata: d.meta,
      parts: d.parts.map((partMetadata, seq) => ({ seq, text: `${COMMON_WORD} words of part ${seq}`, partMetadata })),
    })),
  );
}

/** Flat and/or, as the parser produces them, so that `parseFilter(formatFilter(e))` equals `e`. */
export function flattenFilter(e: FilterExpr): FilterExpr {
  if (e.kind === 'not') return { kind: 'not', item: flattenFilter(e.item) };
  if (e.kind !== 'and' && e.kind !== 'or') return e;
  const items = e.items.map(flattenFilter).flatMap((i) => (i.kind === e.kind ? i.items : [i]));
  return { kind: e.kind, items };
}

/** Expressions over the profile's fields at `levels`, every node kind, up to four levels deep. */
export function filterArbitrary(profile: FilterProfile, levels: readonly FieldRef['level'][]): fc.Arbitrary<FilterExpr> {
  const field: fc.Arbitrary<FieldRef> = fc.oneof(
    ...levels.map((level) => fc.constantFrom(...Object.keys(profile.fields[level])).map((name): FieldRef => ({ level, name }))),
  );
  const atom: fc.Arbitrary<FilterExpr> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('cmp' as const), field, op: fc.constantFrom('=', '!=', '<', '<=', '>', '>=' as const), value: profile.literal }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('in' as const), field, values: fc.array(profile.literal, { minLength: 1, maxLength: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('is_null' as const), field, negated: fc.boolean() }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('like' as const), field, pattern: profile.pattern }) },
  );
  const { expr } = fc.letrec<{ expr: FilterExpr }>((tie) => ({
    expr: fc.oneof(
      { maxDepth: 4, depthSize: 'small', withCrossShrink: true },
      atom,
      tie('expr').map((item): FilterExpr => ({ kind: 'not', item })),
      fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((items): FilterExpr => ({ kind: 'and', items })),
      fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((items): FilterExpr => ({ kind: 'or', items })),
    ),
  }));
  return expr.map(flattenFilter);
}

/** Document-only expressions half of the time, so the document-level evaluators get their share. */
export const anyFilterArbitrary = (profile: FilterProfile): fc.Arbitrary<FilterExpr> =>
  fc.oneof(filterArbitrary(profile, ['doc']), filterArbitrary(profile, ['doc', 'part']));
