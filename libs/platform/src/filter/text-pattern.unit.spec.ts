import fc from 'fast-check';
import { DomainError } from '../kernel/errors';
import { compileTextPattern, linearRegExp, listFilter, MAX_PATTERN_LENGTH, PatternSyntaxError } from './text-pattern';

/**
 * Patterns both engines read alike (no lookaround, backreference or JavaScript-only escape), nested at most
 * twice and over short texts, so that JavaScript's own backtracking stays quick.
 */
const atom = fc.constantFrom('a', 'b', 'c', '1', '_', ' ', '.', '\\d', '\\w', '\\W', '\\s', '[ab]', '[^a]', '[a-c1]', '\\.', '\\b');
const quantifier = fc.constantFrom('', '', '*', '+', '?', '*?', '+?', '{2}', '{1,3}', '{0,2}');
const pattern: fc.Arbitrary<string> = fc.letrec<{ alt: string; seq: string; piece: string }>((tie) => ({
  alt: fc.array(tie('seq'), { minLength: 1, maxLength: 3, depthIdentifier: 'group' }).map((xs) => xs.join('|')),
  seq: fc.array(tie('piece'), { minLength: 0, maxLength: 4, depthIdentifier: 'group' }).map((xs) => xs.join('')),
  piece: fc.oneof({ maxDepth: 2, depthIdentifier: 'group', withCrossShrink: true }, fc.tuple(atom, quantifier).map(([a, q]) => (a === '\\b' ? a : a + q)), fc.tuple(tie('alt'), quantifier).map(([a, q]) => `(${a})${q}`), fc.tuple(tie('alt'), quantifier).map(([a, q]) => `(?:${a})${q}`)),
})).alt;
const anchored = fc.tuple(fc.boolean(), pattern, fc.boolean()).map(([start, p, end]) => `${start ? '^' : ''}${p}${end ? '$' : ''}`);
const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'A', '1', '_', ' ', '\n', '-', 'é'), maxLength: 10 });

describe('compileTextPattern', () => {
  it('agrees with JavaScript RegExp on patterns both engines read alike', () => {
    fc.assert(
      fc.property(anchored, text, fc.boolean(), (source, input, ignoreCase) => {
        expect(compileTextPattern(source, { ignoreCase }).test(input)).toBe(new RegExp(source, ignoreCase ? 'i' : '').test(input));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with an anchored JavaScript RegExp when the whole text must match', () => {
    fc.assert(
      fc.property(pattern, text, (source, input) => {
        expect(compileTextPattern(source, { whole: true }).test(input)).toBe(new RegExp(`^(?:${source})$`).test(input));
      }),
      { numRuns: 1000 },
    );
  });

  it('matches in time linear in the text where JavaScript backtracks exponentially', () => {
    const name = 'a'.repeat(100_000);
    const started = performance.now();
    expect(compileTextPattern('^(\\w+\\w?)+@').test(name)).toBe(false);
    expect(compileTextPattern('^(\\w+\\w?)+@').test(`${name}@example.com`)).toBe(true);
    expect(compileTextPattern('(a|aa)+$', { whole: true }).test(`${name}b`)).toBe(false);
    // A sanity bound only: JavaScript takes seconds on 23 characters of the first.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("reads JavaScript's \\uXXXX escapes, surrogate pairs included", () => {
    expect(compileTextPattern('caf\\u00e9').test('café')).toBe(true);
    expect(compileTextPattern('[\\u0041-\\u005A]+$', { whole: true }).test('ABC')).toBe(true);
    expect(compileTextPattern('\\ud83d\\ude00').test('smile 😀')).toBe(true);
    expect(compileTextPattern('\\\\u0041').test('\\u0041')).toBe(true);
  });

  it('refuses what needs backtracking or exceeds RE2 limits, with the reason', () => {
    for (const source of ['(?=a)b', '(?<!a)b', '(a)\\1', '(', 'a{1001}', '((a{100}){100}){100}']) {
      expect(() => compileTextPattern(source)).toThrow(PatternSyntaxError);
    }
  });
});

describe('listFilter', () => {
  it('is undefined when absent or empty, and filters as the reference example does', () => {
    expect(listFilter(undefined)).toBeUndefined();
    expect(listFilter('')).toBeUndefined();
    const f = listFilter('support.*')!;
    expect(['customer support', 'sales'].filter((s) => f.test(s))).toEqual(['customer support']);
  });

  it('answers an invalid, unsupported or too long pattern with a field error on filter', () => {
    for (const filter of ['(', '(?=x)', 'a'.repeat(MAX_PATTERN_LENGTH + 1), ['a', 'b'] as unknown as string]) {
      let thrown: unknown;
      try {
        listFilter(filter);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(DomainError);
      expect((thrown as DomainError).kind).toBe('invalid');
      expect((thrown as DomainError).details.fieldErrors).toEqual({ filter: expect.stringContaining('invalid regular expression') });
    }
    expect(listFilter('a'.repeat(MAX_PATTERN_LENGTH))!.test('a'.repeat(MAX_PATTERN_LENGTH))).toBe(true);
  });
});

describe('linearRegExp (ajv)', () => {
  it('is a regular expression engine ajv can take', () => {
    expect(linearRegExp('^[a-z]+$', 'u').test('abc')).toBe(true);
    expect(linearRegExp.code).toBe('linearRegExp');
  });
});
