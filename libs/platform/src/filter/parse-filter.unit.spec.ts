import { DomainError } from '../kernel/errors';
import type { FieldRef, FilterExpr, Literal } from './filter';
import { formatFilter } from './format-filter';
import { MAX_FILTER_DEPTH, parseFilter } from './parse-filter';

const doc = (name: string): FieldRef => ({ level: 'doc', name });
const part = (name: string): FieldRef => ({ level: 'part', name });
const cmp = (field: FieldRef, op: '=' | '!=' | '<' | '<=' | '>' | '>=', value: Literal): FilterExpr => ({ kind: 'cmp', field, op, value });
const not = (item: FilterExpr): FilterExpr => ({ kind: 'not', item });
const and = (...items: FilterExpr[]): FilterExpr => ({ kind: 'and', items });
const or = (...items: FilterExpr[]): FilterExpr => ({ kind: 'or', items });
const a = cmp(doc('a'), '=', 1);
const b = cmp(doc('b'), '=', 2);
const c = cmp(doc('c'), '=', 3);

/** The DomainError parseFilter throws for `text`. */
function failure(text: string): DomainError {
  try {
    parseFilter(text);
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error(`parsed: ${text}`);
}

describe('parseFilter', () => {
  it('reads the example filter of the API documentation', () => {
    const text = `doc.year >= 2020 AND (part.lang = 'eng' OR doc."created at" IS NULL) AND doc.title LIKE 'Intro\\_%' AND doc.kind IN ('a', 'b') AND NOT doc.draft = true`;
    expect(parseFilter(text)).toEqual(
      and(
        cmp(doc('year'), '>=', 2020),
        or(cmp(part('lang'), '=', 'eng'), { kind: 'is_null', field: doc('created at'), negated: false }),
        { kind: 'like', field: doc('title'), pattern: 'Intro\\_%' },
        { kind: 'in', field: doc('kind'), values: ['a', 'b'] },
        not(cmp(doc('draft'), '=', true)),
      ),
    );
  });

  it('reads every comparison operator, with != and <> alike and == as =', () => {
    for (const [text, op] of [['=', '='], ['==', '='], ['!=', '!='], ['<>', '!='], ['<', '<'], ['<=', '<='], ['>', '>'], ['>=', '>=']] as const) {
      expect(parseFilter(`doc.n ${text} 5`)).toEqual(cmp(doc('n'), op, 5));
      expect(parseFilter(`doc.n${text}5`)).toEqual(cmp(doc('n'), op, 5));
    }
  });

  it('reads IN, NOT IN, IS [NOT] NULL, [NOT] LIKE, with keywords and levels in any case', () => {
    expect(parseFilter(`part.lang in ('eng', 2, TRUE)`)).toEqual({ kind: 'in', field: part('lang'), values: ['eng', 2, true] });
    expect(parseFilter(`Doc.Kind NOT IN('x')`)).toEqual(not({ kind: 'in', field: doc('Kind'), values: ['x'] }));
    expect(parseFilter('PART.x is null')).toEqual({ kind: 'is_null', field: part('x'), negated: false });
    expect(parseFilter('doc.x IS NOT NULL')).toEqual({ kind: 'is_null', field: doc('x'), negated: true });
    expect(parseFilter(`doc.t like 'a%'`)).toEqual({ kind: 'like', field: doc('t'), pattern: 'a%' });
    expect(parseFilter(`doc.t Not Like '_b'`)).toEqual(not({ kind: 'like', field: doc('t'), pattern: '_b' }));
    expect(parseFilter('doc.f = False or doc.g = tRuE')).toEqual(or(cmp(doc('f'), '=', false), cmp(doc('g'), '=', true)));
  });

  it('binds NOT tighter than AND, and AND tighter than OR; parentheses override', () => {
    expect(parseFilter('doc.a = 1 OR doc.b = 2 AND doc.c = 3')).toEqual(or(a, and(b, c)));
    expect(parseFilter('doc.a = 1 AND doc.b = 2 OR doc.c = 3')).toEqual(or(and(a, b), c));
    expect(parseFilter('NOT doc.a = 1 AND doc.b = 2')).toEqual(and(not(a), b));
    expect(parseFilter('NOT (doc.a = 1 OR doc.b = 2)')).toEqual(not(or(a, b)));
    expect(parseFilter('(doc.a = 1 OR doc.b = 2) AND doc.c = 3')).toEqual(and(or(a, b), c));
    expect(parseFilter('NOT NOT doc.a = 1')).toEqual(not(not(a)));
    expect(parseFilter(' ( ( doc.a = 1 ) ) ')).toEqual(a);
  });

  it('flattens nested AND and OR', () => {
    expect(parseFilter('doc.a = 1 AND (doc.b = 2 AND doc.c = 3)')).toEqual(and(a, b, c));
    expect(parseFilter('(doc.a = 1 OR doc.b = 2) OR doc.c = 3')).toEqual(or(a, b, c));
    expect(parseFilter('doc.a = 1 OR doc.b = 2 OR doc.c = 3')).toEqual(or(a, b, c));
  });

  it('reads quoted field names with spaces, dots, dashes and escapes', () => {
    expect(parseFilter('doc."created at" = 1')).toEqual(cmp(doc('created at'), '=', 1));
    expect(parseFilter('part."a.b-c" = 1')).toEqual(cmp(part('a.b-c'), '=', 1));
    expect(parseFilter('doc."say \\"hi\\" \\\\ \\n" = 1')).toEqual(cmp(doc('say "hi" \\ \\n'), '=', 1));
    expect(parseFilter('doc.and = 1')).toEqual(cmp(doc('and'), '=', 1));
  });

  it("reads string escapes: '' and \\' for a quote, \\\\ for a backslash, any other backslash kept", () => {
    expect(parseFilter(`doc.s = 'it''s'`)).toEqual(cmp(doc('s'), '=', "it's"));
    expect(parseFilter(`doc.s = 'it\\'s'`)).toEqual(cmp(doc('s'), '=', "it's"));
    expect(parseFilter(`doc.s = 'a\\\\b'`)).toEqual(cmp(doc('s'), '=', 'a\\b'));
    expect(parseFilter(`doc.s = 'C:\\dir'`)).toEqual(cmp(doc('s'), '=', 'C:\\dir'));
    expect(parseFilter(`doc.s LIKE '100\\%'`)).toEqual({ kind: 'like', field: doc('s'), pattern: '100\\%' });
    expect(parseFilter(`doc.s = ''`)).toEqual(cmp(doc('s'), '=', ''));
  });

  it('reads integers and decimals with sign and exponent', () => {
    const values = ['0', '-3', '+4', '2.5', '.5', '7.', '1e3', '-1.5E-2', '-0'].map((n) => (parseFilter(`doc.n = ${n}`) as { value: number }).value);
    expect(values).toEqual([0, -3, 4, 2.5, 0.5, 7, 1000, -0.015, -0]);
    expect(Object.is(values[8], -0)).toBe(true);
  });

  it.each([
    ['doc.year >', 11, `expected value (a 'string', a number, true or false) but found end of input`],
    ["doc.year = 'unterminated", 12, "unterminated string: missing closing '"],
    ['year = 1', 1, 'expected "(", "NOT" or field (doc.<name> or part.<name>) but found "year"'],
    ['doc.a = 1 AND', 14, 'expected "(", "NOT" or field (doc.<name> or part.<name>) but found end of input'],
    ['doc.a IN ()', 11, `expected value (a 'string', a number, true or false) but found ")"`],
    ['doc.year foo 1', 10, 'expected "!=", "<", "<=", "<>", "=", "==", ">", ">=", "IN", "IS", "LIKE" or "NOT" but found "foo"'],
    ['(doc.a = 1', 11, 'expected ")", "AND" or "OR" but found end of input'],
    ['doc.a = 1 doc.b = 2', 11, 'expected "AND", "OR" or end of input but found "doc.b"'],
    ['doc.a LIKE 5', 12, `expected LIKE pattern (a 'string') but found "5"`],
    ['doc."x = 1', 5, 'unterminated field name: missing closing "'],
    ['doc.n = 12abc', 9, `expected value (a 'string', a number, true or false) but found "12abc"`],
    ['doc.n = 1e999', 9, 'number out of range: 1e999'],
    ['doc.n = NULL', 9, `expected value (a 'string', a number, true or false) but found "NULL"`],
    ['', 1, 'expected "(", "NOT" or field (doc.<name> or part.<name>) but found end of input'],
    ['   ', 4, 'expected "(", "NOT" or field (doc.<name> or part.<name>) but found end of input'],
  ])('rejects %j at position %i', (text, position, detail) => {
    const error = failure(text);
    const message = `Malformed metadata filter at position ${position}: ${detail}`;
    expect(error).toMatchObject({ kind: 'invalid', code: 'filter.malformed', message, details: { fieldErrors: { metadata_filter: message } } });
  });

  it(`rejects nesting deeper than ${MAX_FILTER_DEPTH} levels, however deep`, () => {
    expect(() => parseFilter(`${'NOT '.repeat(MAX_FILTER_DEPTH - 1)}doc.a = 1`)).not.toThrow();
    for (const depth of [MAX_FILTER_DEPTH, 5000]) {
      expect(failure(`${'NOT '.repeat(depth)}doc.a = 1`)).toMatchObject({ code: 'filter.malformed', message: expect.stringContaining('nested too deeply') });
      // Alternating AND and OR, which flattening cannot shorten.
      const nested = Array.from({ length: depth }, (_, i) => `(doc.b = ${i} ${i % 2 ? 'AND' : 'OR'} `).join('');
      expect(failure(`${nested}doc.c = 1${')'.repeat(depth)}`)).toMatchObject({ code: 'filter.malformed', message: expect.stringContaining('nested too deeply') });
    }
  });
});

describe('formatFilter', () => {
  it('prints text that parses back to the same AST', () => {
    const exprs: FilterExpr[] = [
      or(and(a, not(or(b, c))), { kind: 'is_null', field: part('x y'), negated: true }),
      and(or(a, b), or(b, c), not(not(c))),
      { kind: 'like', field: doc('a.b'), pattern: `it's 100\\% \\\\ _%` },
      not({ kind: 'in', field: doc('k-"q"'), values: ['x', -0.5, false, 1e21, 1e-7, -0] }),
      cmp(doc('s'), '!=', "\\'"),
    ];
    for (const expr of exprs) expect(parseFilter(formatFilter(expr))).toEqual(expr);
    expect(formatFilter(exprs[0])).toBe(`doc.a = 1 AND NOT (doc.b = 2 OR doc.c = 3) OR part."x y" IS NOT NULL`);
  });

  it('refuses ASTs that have no text form', () => {
    expect(() => formatFilter(and())).toThrow();
    expect(() => formatFilter({ kind: 'in', field: doc('a'), values: [] })).toThrow();
    expect(() => formatFilter(cmp(doc('a'), '=', Number.NaN))).toThrow();
  });
});
