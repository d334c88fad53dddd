import fc from 'fast-check';
import { anyFilterArbitrary, corpusArbitrary, PORTABLE_PROFILE } from '../../filter/contract/filter-arbitraries';
import { formatFilter } from '../../filter/format-filter';
import { matchesFilter } from '../../filter/match-filter';
import type { FieldRef, FilterExpr, Literal } from '../../filter/filter';
import { decodeFieldName, encodeFieldName, FieldKind, flatFieldName, flattenMetadata, partDocument, toFilterBy } from './typesense-filter';

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

  it('keeps UNKNOWN out of negations: a literal of another type than the field selects nothing, either way', () => {
    const known = new Map<string, FieldKind>([['doc__year', 'int'], ['doc__kind', 'string'], ['doc__ok', 'bool']]);
    expect(toFilterBy(cmp(kind, '!=', 1), known)).toBe(false);
    expect(toFilterBy(not(cmp(kind, '=', 1)), known)).toBe(false);
    expect(toFilterBy(not({ kind: 'in', field: kind, values: [1, true] }), known)).toBe(false);
    expect(toFilterBy(not({ kind: 'in', field: year, values: ['x', 2.5] }), known)).toBe('doc_has:=[`doc__year`]');
    expect(toFilterBy(not({ kind: 'in', field: year, values: ['x', 2.5, 3] }), known)).toBe('(doc__year:!=[3] && doc_has:=[`doc__year`])');
    expect(toFilterBy({ kind: 'like', field: year, pattern: '%' }, known)).toBe(false);
    expect(toFilterBy(not({ kind: 'like', field: year, pattern: '%' }), known)).toBe(false);
  });

  it('writes boolean ranges as equality or presence, and boolean lists as equality', () => {
    const known = new Map<string, FieldKind>([['doc__ok', 'bool']]);
    const ok = doc('ok');
    expect(toFilterBy(cmp(ok, '<', true), known)).toBe('doc__ok:=false');
    expect(toFilterBy(cmp(ok, '<=', true), known)).toBe('doc_has:=[`doc__ok`]');
    expect(toFilterBy(not(cmp(ok, '<=', false)), known)).toBe('doc__ok:=true');
    expect(toFilterBy(cmp(ok, '>', true), known)).toBe(false);
    expect(toFilterBy({ kind: 'in', field: ok, values: [true, 'x'] }, known)).toBe('doc__ok:=true');
    expect(toFilterBy(not({ kind: 'in', field: ok, values: [true] }), known)).toBe('doc__ok:=false');
    expect(toFilterBy(not({ kind: 'in', field: ok, values: [true, false] }), known)).toBe(false);
  });

  it('reads LIKE escapes as the semantics do, and expresses NOT LIKE for whole values and %', () => {
    expect(toFilterBy({ kind: 'like', field: kind, pattern: 'C:\\dir' })).toBe('doc__kind:=`C:\\dir`');
    expect(toFilterBy({ kind: 'like', field: kind, pattern: 'C:\\\\dir' })).toBe('doc__kind:=`C:\\dir`');
    expect(toFilterBy({ kind: 'like', field: kind, pattern: 'ab%%' })).toBe('doc__kind:=ab*');
    expect(toFilterBy(not({ kind: 'like', field: kind, pattern: 'a\\_b' }))).toBe('(doc__kind:!=`a_b` && doc_has:=[`doc__kind`])');
    expect(toFilterBy(not({ kind: 'like', field: kind, pattern: '%' }))).toBe(false);
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

/**
 * A model of Typesense's `filter_by` on the flattened layout, as far as these translations use it: `:=` equality
 * (any list element), `:!=` also matching documents without the field (Typesense ≥ 0.25), ranges needing the
 * field, `abc*` prefixes. It lets the translation be checked against matchesFilter here; the contract checks the
 * real server when TYPESENSE_URL is set.
 */
function typesenseModel(filterBy: string): (doc: Record<string, unknown>) => boolean {
  let at = 0;
  const peek = (s: string) => filterBy.startsWith(s, at);
  const take = (re: RegExp): string => {
    const m = re.exec(filterBy.slice(at));
    if (!m) throw new Error(`model cannot read ${filterBy.slice(at)}`);
    at += m[0].length;
    return m[0];
  };
  const value = (): unknown => {
    if (peek('`')) return take(/^`[^`]*`/).slice(1, -1);
    const raw = take(/^[^\s,\])&|]+/);
    if (raw === 'true' || raw === 'false') return raw === 'true';
    if (raw.endsWith('*')) return { prefix: raw.slice(0, -1) };
    return Number(raw);
  };
  type Pred = (doc: Record<string, unknown>) => boolean;
  const clause = (): Pred => {
    const name = take(/^[A-Za-z0-9_]+/);
    const op = take(/^:(!=|<=|>=|<|>|=)/).slice(1);
    let values: unknown[];
    if (peek('[')) {
      take(/^\[/);
      values = [value()];
      while (peek(',')) {
        take(/^,/);
        values.push(value());
      }
      take(/^\]/);
    } else values = [value()];
    const equal = (v: unknown, lit: unknown) =>
      Array.isArray(v) ? v.includes(lit) : typeof lit === 'object' && lit ? typeof v === 'string' && v.startsWith((lit as { prefix: string }).prefix) : v === lit;
    return (doc) => {
      const v = doc[name];
      if (op === '=') return v !== undefined && values.some((lit) => equal(v, lit));
      if (op === '!=') return v === undefined || !values.some((lit) => equal(v, lit));
      if (typeof v !== 'number') return false;
      const n = values[0] as number;
      return op === '<' ? v < n : op === '<=' ? v <= n : op === '>' ? v > n : v >= n;
    };
  };
  const primary = (): Pred => {
    if (!peek('(')) return clause();
    take(/^\(/);
    const inner = or();
    take(/^\)/);
    return inner;
  };
  const and = (): Pred => {
    const items = [primary()];
    while (peek(' && ')) {
      take(/^ && /);
      items.push(primary());
    }
    return (doc) => items.every((p) => p(doc));
  };
  const or = (): Pred => {
    const items = [and()];
    while (peek(' || ')) {
      take(/^ \|\| /);
      items.push(and());
    }
    return (doc) => items.some((p) => p(doc));
  };
  const result = or();
  if (at !== filterBy.length) throw new Error(`model stopped at ${filterBy.slice(at)}`);
  return result;
}

describe('toFilterBy against the semantics', () => {
  it('selects what matchesFilter selects on data Typesense holds exactly (portable profile, model of filter_by)', () => {
    const [corpus] = fc.sample(corpusArbitrary(PORTABLE_PROFILE), { seed: 99, numRuns: 1 });
    const rows = corpus.flatMap((d) => d.parts.map((p) => ({ flat: partDocument(d, p, 1, false), scope: { doc: d.documentMetadata, part: p.partMetadata } })));
    // Auto-detection: the first value of a field fixes its kind, as Typesense does.
    const known = new Map<string, FieldKind>();
    for (const { flat } of rows) {
      for (const [k, v] of Object.entries(flat)) {
        if (!/^(doc|part)__/.test(k) || known.has(k)) continue;
        known.set(k, typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'bool' : Number.isInteger(v) ? 'int' : 'float');
      }
    }
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
      const selected = typeof filterBy === 'boolean' ? () => filterBy as boolean : typesenseModel(filterBy);
      const actual = rows.map((r) => selected(r.flat));
      const expected = rows.map((r) => matchesFilter(filter, r.scope));
      if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(`${formatFilter(filter)} → ${String(filterBy)}`);
      checked++;
    }
    expect(checked).toBeGreaterThan(unsupportedCount);
  });
});
