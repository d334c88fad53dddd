import type { FilterExpr } from './filter';
import { likeToGlob, likeTokens } from './like-pattern';
import { evaluateFilter, matchesFilter, type Truth } from './match-filter';
import { parseFilter } from './parse-filter';

/** TRUE, FALSE or UNKNOWN of `text` for a document whose metadata is `doc`. */
const truth = (text: string, doc: Record<string, unknown>, part?: Record<string, unknown>): Truth => evaluateFilter(parseFilter(text), { doc, part });
const U = undefined;

describe('matchesFilter: atoms', () => {
  it('compares only values of the literal type; anything else is UNKNOWN, for = and != alike', () => {
    const values: [unknown, Truth, Truth][] = [
      [1, true, false],
      [1.0, true, false],
      [2, false, true],
      ['1', U, U],
      [true, U, U],
      [[1], U, U],
      [{ v: 1 }, U, U],
      [null, U, U],
    ];
    for (const [n, eq, ne] of values) {
      expect([truth('doc.n = 1', { n }), truth('doc.n != 1', { n })]).toEqual([eq, ne]);
    }
    expect(truth('doc.n = 1', {})).toBe(U);
    expect(truth(`doc.s = '1'`, { s: 1 })).toBe(U);
    expect(truth('doc.b = true', { b: 1 })).toBe(U);
    expect(truth('doc.b = 1', { b: true })).toBe(U);
  });

  it('orders numbers, strings by code unit (case-sensitive), and false before true', () => {
    expect(truth('doc.n < 2.5', { n: -3 })).toBe(true);
    expect(truth('doc.n >= 2.5', { n: 2.5 })).toBe(true);
    expect(truth(`doc.s < 'a'`, { s: 'B' })).toBe(true);
    expect(truth(`doc.s > 'ab'`, { s: 'abc' })).toBe(true);
    expect(truth(`doc.s = 'abc'`, { s: 'ABC' })).toBe(false);
    expect(truth('doc.b < true', { b: false })).toBe(true);
    expect(truth('doc.b > false', { b: false })).toBe(false);
  });

  it('IN: TRUE for an equal same-type literal, FALSE for another value of a listed type, else UNKNOWN', () => {
    const inList = parseFilter(`doc.x IN (1, 'a', 2.5)`);
    const cases: [unknown, Truth][] = [[1, true], [2.5, true], ['a', true], [2, false], ['b', false], [true, U], [null, U], [['a'], U]];
    for (const [x, expected] of cases) expect(evaluateFilter(inList, { doc: { x } })).toBe(expected);
    expect(evaluateFilter({ kind: 'in', field: { level: 'doc', name: 'x' }, values: [] }, { doc: {} })).toBe(false);
    expect(truth('doc.x NOT IN (true)', { x: false })).toBe(true);
    expect(truth('doc.x NOT IN (true)', { x: 0 })).toBe(U);
  });

  it('LIKE with many % is linear in the value (RE2), where a backtracking match is polynomial', () => {
    const like = (value: string, pattern: string) => evaluateFilter({ kind: 'like', field: { level: 'doc', name: 's' }, pattern }, { doc: { s: value } });
    const value = 'a'.repeat(20_000);
    const started = performance.now();
    expect(like(value, '%a%a%a%a%a%a%a%a%b')).toBe(false);
    expect(like(`${value}b`, '%a%a%a%a%a%a%a%a%b')).toBe(true);
    // A sanity bound only: JavaScript's engine does not finish the first in minutes.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('LIKE: whole string, case-sensitive, % and _ (one code point), backslash escapes; strings only', () => {
    const like = (value: unknown, pattern: string) => evaluateFilter({ kind: 'like', field: { level: 'doc', name: 's' }, pattern }, { doc: { s: value } });
    expect(like('Intro_1', 'Intro\\_%')).toBe(true);
    expect(like('IntroX1', 'Intro\\_%')).toBe(false);
    expect(like('intro_1', 'Intro%')).toBe(false);
    expect(like('abc', 'a_c')).toBe(true);
    expect(like('a😀c', 'a_c')).toBe(true);
    expect(like('abbc', 'a_c')).toBe(false);
    expect(like('a\nb', 'a%b')).toBe(true);
    expect(like('abc\n', 'abc')).toBe(false);
    expect(like('100%', '100\\%')).toBe(true);
    expect(like('1000', '100\\%')).toBe(false);
    expect(like('a\\b', 'a\\\\b')).toBe(true);
    expect(like('C:\\dir', 'C:\\dir')).toBe(true);
    expect(like('ends\\', 'ends\\')).toBe(true);
    expect(like('a.c(d)', 'a.c(d)')).toBe(true);
    expect(like('abcd', 'a.c(d)')).toBe(false);
    expect(like('', '%')).toBe(true);
    expect(like(5, '%')).toBe(U);
    expect(like(['x'], '%')).toBe(U);
    expect(like(null, '%')).toBe(U);
  });

  it('IS NULL: TRUE for missing and null, FALSE otherwise, never UNKNOWN; inherited members are not fields', () => {
    for (const [doc, isNull] of [[{}, true], [{ x: null }, true], [{ x: 0 }, false], [{ x: '' }, false], [{ x: [] }, false], [{ x: {} }, false]] as const) {
      expect(truth('doc.x IS NULL', doc)).toBe(isNull);
      expect(truth('doc.x IS NOT NULL', doc)).toBe(!isNull);
    }
    expect(truth('doc.constructor IS NULL', {})).toBe(true);
    expect(truth(`doc."__proto__" IS NULL`, {})).toBe(true);
    expect(truth('doc.toString = 1', {})).toBe(U);
  });

  it('without part metadata, part atoms (IS NULL included) are UNKNOWN', () => {
    expect(truth('part.lang IS NULL', {})).toBe(U);
    expect(truth(`part.lang = 'eng'`, {}, { lang: 'eng' })).toBe(true);
    expect(truth(`part.lang = 'eng' OR doc.y = 1`, { y: 1 })).toBe(true);
  });
});

describe('matchesFilter: three-valued logic', () => {
  const unknown = 'doc.missing = 1';
  it('NOT UNKNOWN is UNKNOWN; FALSE AND UNKNOWN is FALSE; TRUE OR UNKNOWN is TRUE', () => {
    expect(truth(`NOT ${unknown}`, {})).toBe(U);
    expect(truth(`doc.a = 1 AND ${unknown}`, { a: 2 })).toBe(false);
    expect(truth(`doc.a = 1 AND ${unknown}`, { a: 1 })).toBe(U);
    expect(truth(`doc.a = 1 OR ${unknown}`, { a: 1 })).toBe(true);
    expect(truth(`doc.a = 1 OR ${unknown}`, { a: 2 })).toBe(U);
    expect(truth(`NOT (doc.a = 1 AND ${unknown})`, { a: 2 })).toBe(true);
  });

  it('selects only TRUE', () => {
    const f: FilterExpr = parseFilter(`NOT doc.n = 1`);
    expect([{ n: 1 }, { n: 2 }, { n: '2' }, {}].map((doc) => matchesFilter(f, { doc }))).toEqual([false, true, false, false]);
  });
});

describe('LIKE pattern translation', () => {
  it('tokenises escapes and merges runs of %', () => {
    expect(likeTokens('a\\%b%%_\\x\\')).toEqual([{ kind: 'text', text: 'a%b' }, { kind: 'any' }, { kind: 'one' }, { kind: 'text', text: '\\x\\' }]);
  });
  it('escapes GLOB metacharacters', () => {
    expect(likeToGlob('a*b?[c]%_\\%')).toBe('a[*]b[?][[]c]*?%');
  });
});
