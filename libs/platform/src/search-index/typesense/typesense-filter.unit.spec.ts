import fc from 'fast-check';
import { anyFilterArbitrary, corpusArbitrary, PORTABLE_PROFILE } from '../../filter/contract/filter-arbitraries';
import { formatFilter } from '../../filter/format-filter';
import { matchesFilter } from '../../filter/match-filter';
import type { FieldRef, FilterExpr, Literal } from '../../filter/filter';
import { toFilterBy } from './typesense-filter';
import { typedLayoutType, typesenseFilterModel } from './typesense-filter-model';
import { decodeFieldName, encodeFieldName, flatFieldName, flattenMetadata, keyNumber, numberKey, partDocument, stringHash, stringHex } from './typesense-layout';

const doc = (name: string): FieldRef => ({ level: 'doc', name });
const part = (name: string): FieldRef => ({ level: 'part', name });
const cmp = (field: FieldRef, op: '=' | '!=' | '<' | '<=' | '>' | '>=', value: Literal): FilterExpr => ({ kind: 'cmp', field, op, value });
const not = (item: FilterExpr): FilterExpr => ({ kind: 'not', item });
const unsupported = { name: 'DomainError', kind: 'invalid', code: 'search.filter_unsupported' };
const h = stringHash;
const n = (v: number) => String(numberKey(v));

describe('Typesense field names and typed values', () => {
  it('encodes metadata names reversibly into plain identifiers without a double underscore', () => {
    expect(encodeFieldName('year')).toBe('year');
    expect(encodeFieldName('created at')).toBe('created_20at');
    expect(encodeFieldName('a.b-c_d')).toBe('a_2Eb_2Dc_5Fd');
    expect(encodeFieldName('größe')).toBe('gr_C3_B6_C3_9Fe');
    for (const name of ['year', 'created at', 'a.b-c_d', 'größe', '_x_20', '`; DROP', '', '__s']) {
      expect(encodeFieldName(name)).toMatch(/^[A-Za-z0-9_]*$/);
      expect(encodeFieldName(name)).not.toContain('__');
      expect(decodeFieldName(encodeFieldName(name))).toBe(name);
    }
    expect(flatFieldName(doc('created at'))).toBe('doc__created_20at');
    expect(flatFieldName(part('lang'))).toBe('part__lang');
  });

  it('flattens each scalar into the field of its type, and lists what is present', () => {
    expect(flattenMetadata('doc', { year: 2020, kind: 'a', ok: true, tags: ['x'], none: null })).toEqual({
      fields: { doc__year__n: numberKey(2020), doc__kind__h: h('a'), doc__kind__s: '61', doc__ok__b: true },
      present: ['doc__year', 'doc__year__n', 'doc__kind', 'doc__kind__h', 'doc__kind__s', 'doc__ok', 'doc__ok__b', 'doc__tags'],
    });
  });

  it('orders number keys as the numbers, exactly, and reads them back', () => {
    const numbers = [-1e308, -2.5, -1, -Number.MIN_VALUE, 0, Number.MIN_VALUE, 0.1, 0.30000000000000004, 1, 2020, 2 ** 53 + 2, 1e308];
    const keys = numbers.map(numberKey);
    for (let i = 1; i < keys.length; i++) expect(keys[i - 1] < keys[i]).toBe(true);
    expect(numbers.map((v) => keyNumber(numberKey(v)))).toEqual(numbers);
    expect(numberKey(-0)).toBe(numberKey(0));
    expect(numberKey(0.1)).not.toBe(numberKey(0.1 + 2 ** -56));
  });
});

describe('toFilterBy', () => {
  const year = doc('year');
  const kind = doc('kind');

  it('writes comparisons on the typed fields, lists and boolean structure', () => {
    expect(toFilterBy(cmp(year, '>=', 2020))).toBe(`doc__year__n:>=${n(2020)}`);
    expect(toFilterBy(cmp(year, '<', 2019.5))).toBe(`doc__year__n:<${n(2019.5)}`);
    expect(toFilterBy(cmp(kind, '=', 'physics'))).toBe(`doc__kind__h:=${h('physics')}`);
    expect(toFilterBy(cmp(doc('ok'), '=', true))).toBe('doc__ok__b:=true');
    expect(toFilterBy(cmp(kind, '!=', 'a`b'))).toBe(`(doc__kind__h:!=${h('a`b')} && doc_has:=[\`doc__kind__h\`])`);
    expect(toFilterBy({ kind: 'in', field: year, values: [2018, 2023] })).toBe(`doc__year__n:=[${n(2018)},${n(2023)}]`);
    expect(toFilterBy({ kind: 'in', field: year, values: [2018, 'x'] })).toBe(`(doc__year__h:=[${h('x')}] || doc__year__n:=[${n(2018)}])`);
    const both: FilterExpr = { kind: 'and', items: [cmp(year, '>', 2000), { kind: 'or', items: [cmp(kind, '=', 'a'), cmp(part('lang'), '=', 'deu')] }] };
    expect(toFilterBy(both)).toBe(`(doc__year__n:>${n(2000)} && (doc__kind__h:=${h('a')} || part__lang__h:=${h('deu')}))`);
  });

  it('pushes negation down to the atoms, requiring a value of the literal\'s type', () => {
    expect(toFilterBy(not(cmp(year, '<', 2020)))).toBe(`doc__year__n:>=${n(2020)}`);
    expect(toFilterBy(not(cmp(kind, '=', 'a')))).toBe(`(doc__kind__h:!=${h('a')} && doc_has:=[\`doc__kind__h\`])`);
    expect(toFilterBy(not(not(cmp(kind, '=', 'a'))))).toBe(`doc__kind__h:=${h('a')}`);
    expect(toFilterBy(not({ kind: 'in', field: kind, values: ['a', 'b'] }))).toBe(`(doc__kind__h:!=[${h('a')},${h('b')}] && doc_has:=[\`doc__kind__h\`])`);
  });

  it('evaluates IS NULL with the presence list of the untyped name (arrays and objects are not null)', () => {
    expect(toFilterBy({ kind: 'is_null', field: doc('created at'), negated: false })).toBe('doc_has:!=[`doc__created_20at`]');
    expect(toFilterBy(not({ kind: 'is_null', field: part('x'), negated: true }))).toBe('part_has:!=[`part__x`]');
  });

  it('supports LIKE as exact value (by hash), byte prefix (by hex, any characters) or any string', () => {
    expect(toFilterBy({ kind: 'like', field: kind, pattern: 'Ph.s %' })).toBe(`doc__kind__s:=${stringHex('Ph.s ')}*`);
    expect(toFilterBy({ kind: 'like', field: kind, pattern: 'a\\%b' })).toBe(`doc__kind__h:=${h('a%b')}`);
    expect(toFilterBy({ kind: 'like', field: kind, pattern: '%' })).toBe('doc_has:=[`doc__kind__s`]');
    expect(toFilterBy(not({ kind: 'like', field: kind, pattern: '%' }))).toBe(false);
  });

  it('folds constants, and with the schema folds atoms on typed fields no document has to false, both ways', () => {
    expect(toFilterBy({ kind: 'and', items: [] })).toBe(true);
    expect(toFilterBy({ kind: 'or', items: [] })).toBe(false);
    expect(toFilterBy(not({ kind: 'in', field: year, values: [] }))).toBe(true);
    const known = new Set(['doc__year__n', 'doc__kind__h', 'doc__kind__s']);
    expect(toFilterBy(cmp(year, '=', 'x'), known)).toBe(false);
    expect(toFilterBy(not(cmp(year, '=', 'x')), known)).toBe(false);
    expect(toFilterBy({ kind: 'or', items: [cmp(doc('missing'), '=', 1), cmp(year, '=', 2)] }, known)).toBe(`doc__year__n:=${n(2)}`);
    expect(toFilterBy({ kind: 'in', field: year, values: [1, 'x', true] }, known)).toBe(`doc__year__n:=[${n(1)}]`);
    expect(toFilterBy({ kind: 'like', field: year, pattern: '1%' }, known)).toBe(false);
  });

  it('writes boolean ranges as equality or presence of a boolean', () => {
    const ok = doc('ok');
    expect(toFilterBy(cmp(ok, '<', true))).toBe('doc__ok__b:=false');
    expect(toFilterBy(cmp(ok, '<=', true))).toBe('doc_has:=[`doc__ok__b`]');
    expect(toFilterBy(cmp(ok, '>', true))).toBe(false);
    expect(toFilterBy(not({ kind: 'in', field: ok, values: [true] }))).toBe('doc__ok__b:=false');
  });

  it('throws a typed error for what Typesense cannot express', () => {
    expect(() => toFilterBy(not({ kind: 'like', field: kind, pattern: 'a%' }))).toThrow(expect.objectContaining(unsupported));
    expect(() => toFilterBy({ kind: 'like', field: kind, pattern: '%a' })).toThrow(expect.objectContaining(unsupported));
    expect(() => toFilterBy({ kind: 'like', field: kind, pattern: 'a_c' })).toThrow(expect.objectContaining(unsupported));
    expect(() => toFilterBy({ kind: 'like', field: kind, pattern: `${'x'.repeat(51)}%` })).toThrow(expect.objectContaining(unsupported));
    expect(() => toFilterBy(cmp(kind, '<', 'm'))).toThrow(expect.objectContaining(unsupported));
  });
});

describe('toFilterBy against the semantics', () => {
  it('selects what matchesFilter selects (portable profile, a model of filter_by that normalises strings as Typesense does)', () => {
    const [corpus] = fc.sample(corpusArbitrary(PORTABLE_PROFILE), { seed: 99, numRuns: 1 });
    const rows = corpus.flatMap((d) => d.parts.map((p) => ({ flat: partDocument(d, p, 1, false), scope: { doc: d.documentMetadata, part: p.partMetadata } })));
    const known = new Set(rows.flatMap(({ flat }) => Object.keys(flat).filter((k) => /^(doc|part)__/.test(k))));
    let unsupportedCount = 0;
    let checked = 0;
    for (const filter of fc.sample(anyFilterArbitrary(PORTABLE_PROFILE), { seed: 100, numRuns: 400 })) {
      let filterBy: string | boolean;
      try {
        filterBy = toFilterBy(filter, known);
      } catch (e) {
        expect(e).toMatchObject(unsupported);
        unsupportedCount++;
        continue;
      }
      const selected = typeof filterBy === 'boolean' ? () => filterBy as boolean : typesenseFilterModel(filterBy, typedLayoutType);
      const actual = rows.map((r) => selected(r.flat));
      const expected = rows.map((r) => matchesFilter(filter, r.scope));
      if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(`${formatFilter(filter)} → ${String(filterBy)}`);
      checked++;
    }
    expect(checked).toBeGreaterThan(unsupportedCount);
  });
});
