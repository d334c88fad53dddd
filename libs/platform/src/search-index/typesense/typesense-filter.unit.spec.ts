import type { FieldRef, FilterExpr, Literal } from '../filter';
import { decodeFieldName, encodeFieldName, FieldKind, flatFieldName, flattenMetadata, toFilterBy } from './typesense-filter';

const doc = (name: string): FieldRef => ({ level: 'doc', name });
const part = (name: string): FieldRef => ({ level: 'part', name });
const cmp = (field: FieldRef, op: '=' | '!=' | '<' | '<=' | '>' | '>=', value: Literal): FilterExpr => ({ kind: 'cmp', field, op, value });
const not = (item: FilterExpr): FilterExpr => ({ kind: 'not', item });
const unsupported = { name: 'DomainError', kind: 'invalid', code: 'search.filter_unsupported' };

describe('Typesense field names', () => {
  it('encodes metadata names reversibly into plain identifiers', () => {
    expect(encodeFieldName('year')).toBe('year');
    expect(encodeFieldName('created at')).toBe('created_20at');
    expect(encodeFieldName('a.b-c_d')).toBe('a_2Eb_2Dc_5Fd');
    expect(encodeFieldName('größe')).toBe('gr_C3_B6_C3_9Fe');
    for (const name of ['year', 'created at', 'a.b-c_d', 'größe', '_x_20', '`; DROP', '']) {
      expect(encodeFieldName(name)).toMatch(/^[A-Za-z0-9_]*$/);
      expect(decodeFieldName(encodeFieldName(name))).toBe(name);
    }
    expect(flatFieldName(doc('created at'))).toBe('doc__created_20at');
    expect(flatFieldName(part('lang'))).toBe('part__lang');
  });

  it('flattens scalar metadata and lists every non-null field as present', () => {
    expect(flattenMetadata('doc', { year: 2020, kind: 'a', ok: true, tags: ['x'], none: null })).toEqual({
      fields: { doc__year: 2020, doc__kind: 'a', doc__ok: true },
      present: ['doc__year', 'doc__kind', 'doc__ok', 'doc__tags'],
    });
  });
});

describe('toFilterBy', () => {
  const year = doc('year');
  const kind = doc('kind');

  it('writes comparisons, lists and boolean structure', () => {
    expect(toFilterBy(cmp(year, '>=', 2020))).toBe('doc__year:>=2020');
    expect(toFilterBy(cmp(year, '<', 2019.5))).toBe('doc__year:<2019.5');
    expect(toFilterBy(cmp(kind, '=', 'physics'))).toBe('doc__kind:=`physics`');
    expect(toFilterBy(cmp(doc('ok'), '=', true))).toBe('doc__ok:=true');
    expect(toFilterBy(cmp(kind, '!=', 'a b'))).toBe('(doc__kind:!=`a b` && doc_has:=[`doc__kind`])');
    expect(toFilterBy({ kind: 'in', field: year, values: [2018, 2023] })).toBe('doc__year:=[2018,2023]');
    expect(toFilterBy({ kind: 'in', field: part('lang'), values: ['eng', 'deu'] })).toBe('part__lang:=[`eng`,`deu`]');
    const both: FilterExpr = { kind: 'and', items: [cmp(year, '>', 2000), { kind: 'or', items: [cmp(kind, '=', 'a'), cmp(part('lang'), '=', 'deu')] }] };
    expect(toFilterBy(both)).toBe('(doc__year:>2000 && (doc__kind:=`a` || part__lang:=`deu`))');
  });

  it('pushes negation down to the atoms (De Morgan, inverted operators)', () => {
    expect(toFilterBy(not(cmp(year, '<', 2020)))).toBe('doc__year:>=2020');
    expect(toFilterBy(not(cmp(year, '>', 2020)))).toBe('doc__year:<=2020');
    expect(toFilterBy(not(cmp(kind, '=', 'a')))).toBe('(doc__kind:!=`a` && doc_has:=[`doc__kind`])');
    expect(toFilterBy(not(not(cmp(kind, '=', 'a'))))).toBe('doc__kind:=`a`');
    expect(toFilterBy(not({ kind: 'and', items: [cmp(year, '>=', 2000), cmp(year, '<=', 2010)] }))).toBe('(doc__year:<2000 || doc__year:>2010)');
    expect(toFilterBy(not({ kind: 'or', items: [cmp(year, '=', 1), cmp(year, '=', 2)] }))).toBe(
      '((doc__year:!=1 && doc_has:=[`doc__year`]) && (doc__year:!=2 && doc_has:=[`doc__year`]))',
    );
    expect(toFilterBy(not({ kind: 'in', field: kind, values: ['a', 'b'] }))).toBe('(doc__kind:!=[`a`,`b`] && doc_has:=[`doc__kind`])');
  });

  it('evaluates IS NULL with the presence field', () => {
    expect(toFilterBy({ kind: 'is_null', field: doc('created at'), negated: false })).toBe('doc_has:!=[`doc__created_20at`]');
    expect(toFilterBy({ kind: 'is_null', field: part('x'), negated: true })).toBe('part_has:=[`part__x`]');
    expect(toFilterBy(not({ kind: 'is_null', field: part('x'), negated: true }))).toBe('part_has:!=[`part__x`]');
  });

  it('supports LIKE as exact value, prefix or any value', () => {
    expect(toFilterBy({ kind: 'like', field: kind, pattern: 'phys%' })).toBe('doc__kind:=phys*');
    expect(toFilterBy({ kind: 'like', field: kind, pattern: 'a\\%b' })).toBe('doc__kind:=`a%b`');
    expect(toFilterBy({ kind: 'like', field: kind, pattern: '%' })).toBe('doc_has:=[`doc__kind`]');
  });

  it('folds constants: empty and/or, empty lists', () => {
    expect(toFilterBy({ kind: 'and', items: [] })).toBe(true);
    expect(toFilterBy({ kind: 'or', items: [] })).toBe(false);
    expect(toFilterBy({ kind: 'in', field: year, values: [] })).toBe(false);
    expect(toFilterBy(not({ kind: 'in', field: year, values: [] }))).toBe(true);
    expect(toFilterBy({ kind: 'and', items: [cmp(year, '=', 1), { kind: 'or', items: [] }] })).toBe(false);
    expect(toFilterBy({ kind: 'or', items: [cmp(year, '=', 1), { kind: 'and', items: [] }] })).toBe(true);
  });

  it('with the schema, folds atoms on missing fields or of another type to false', () => {
    const known = new Map<string, FieldKind>([['doc__year', 'int'], ['doc__kind', 'string']]);
    expect(toFilterBy(cmp(doc('missing'), '=', 1), known)).toBe(false);
    expect(toFilterBy(not(cmp(doc('missing'), '=', 1)), known)).toBe(false);
    expect(toFilterBy({ kind: 'or', items: [cmp(doc('missing'), '=', 1), cmp(year, '=', 2)] }, known)).toBe('doc__year:=2');
    expect(toFilterBy(cmp(year, '=', 'x'), known)).toBe(false);
    expect(toFilterBy(cmp(year, '=', 2.5), known)).toBe(false);
    expect(toFilterBy(cmp(year, '>', 2.5), known)).toBe('doc__year:>=3');
    expect(toFilterBy(cmp(year, '<', 2.5), known)).toBe('doc__year:<=2');
    expect(toFilterBy({ kind: 'in', field: year, values: [1, 'x', 2.5] }, known)).toBe('doc__year:=[1]');
    expect(toFilterBy({ kind: 'like', field: year, pattern: '1%' }, known)).toBe(false);
    expect(toFilterBy({ kind: 'is_null', field: doc('missing'), negated: false }, known)).toBe('doc_has:!=[`doc__missing`]');
  });

  it('throws a typed error for what Typesense cannot express', () => {
    expect(() => toFilterBy(not({ kind: 'like', field: kind, pattern: 'a%' }))).toThrow(expect.objectContaining(unsupported));
    expect(() => toFilterBy({ kind: 'like', field: kind, pattern: '%a' })).toThrow(expect.objectContaining(unsupported));
    expect(() => toFilterBy({ kind: 'like', field: kind, pattern: 'a_c' })).toThrow(expect.objectContaining(unsupported));
    expect(() => toFilterBy({ kind: 'like', field: kind, pattern: 'a b%' })).toThrow(expect.objectContaining(unsupported));
    expect(() => toFilterBy(cmp(kind, '<', 'm'))).toThrow(expect.objectContaining(unsupported));
    expect(() => toFilterBy(cmp(kind, '=', 'a`b'))).toThrow(expect.objectContaining(unsupported));
  });
});
