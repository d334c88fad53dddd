import { generate, type parser, type Parser } from 'peggy';
import { invalid, type DomainError } from '../kernel/errors';
import type { FilterExpr } from './filter';
import { FILTER_GRAMMAR } from './filter-grammar';

/**
 * Generated from the grammar text on first use and kept: one source of truth with no generated file to keep in
 * step, and a process that never parses a filter never pays the few milliseconds it takes.
 */
let cached: Parser | undefined;
const filterParser = (): Parser => (cached ??= generate(FILTER_GRAMMAR));

/**
 * Deep enough for any hand-written filter, shallow enough that every translation stays inside the engines' own
 * limits (SQLite's expression depth, MongoDB's 100 BSON levels) and no evaluator's recursion can overflow.
 */
export const MAX_FILTER_DEPTH = 32;

/** The field that error messages and field errors name; callers re-key it to where the filter came from. */
const FIELD = 'metadata_filter';

const malformed = (message: string): DomainError => invalid('filter.malformed', message, { [FIELD]: message });

/**
 * Parses a metadata filter (`doc.year >= 2020 AND part.lang IN ('eng', 'deu')`). Throws DomainError invalid
 * `filter.malformed`, naming the 1-based position and what was expected, for text that is not one expression;
 * empty text is not one either (callers treat it as "no filter" before they get here).
 */
export function parseFilter(text: string): FilterExpr {
  let expr: FilterExpr;
  try {
    expr = filterParser().parse(text) as FilterExpr;
  } catch (e) {
    if (e instanceof RangeError) throw malformed(`Malformed metadata filter: nested too deeply (at most ${MAX_FILTER_DEPTH} levels)`);
    if (!isSyntaxError(e)) throw e;
    const at = e.location.start.offset;
    const detail = e.expected ? `expected ${describeExpected(e.expected)} but found ${describeFound(text, at)}` : e.message;
    throw malformed(`Malformed metadata filter at position ${at + 1}: ${detail}`);
  }
  if (depth(expr) > MAX_FILTER_DEPTH) throw malformed(`Malformed metadata filter: nested too deeply (at most ${MAX_FILTER_DEPTH} levels)`);
  return expr;
}

function isSyntaxError(e: unknown): e is parser.SyntaxError {
  return e instanceof Error && e.name === 'SyntaxError' && 'location' in e && 'expected' in e;
}

function depth(e: FilterExpr): number {
  if (e.kind === 'and' || e.kind === 'or') return 1 + Math.max(...e.items.map(depth));
  if (e.kind === 'not') return 1 + depth(e.item);
  return 1;
}

function describeExpected(expected: readonly parser.Expectation[]): string {
  const names = new Set<string>();
  for (const x of expected) {
    if (x.type === 'literal') names.add(`"${x.ignoreCase ? x.text.toUpperCase() : x.text}"`);
    else if (x.type === 'other') names.add(x.description);
    else if (x.type === 'end') names.add('end of input');
    else if (x.type === 'any') names.add('any character');
    // peggy merges one-character alternatives ("<" / ">") into a class; other classes sit inside named rules.
    else if (!x.inverted) for (const part of x.parts) names.add(typeof part === 'string' ? `"${part}"` : `"${part[0]}"-"${part[1]}"`);
  }
  const list = [...names].sort();
  return list.length <= 1 ? (list[0] ?? 'nothing') : `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]}`;
}

/** The token at the error position: a word, a quoted string or name, an operator, or one character. */
function describeFound(text: string, at: number): string {
  if (at >= text.length) return 'end of input';
  const token = /^(?:[A-Za-z0-9_.+-]+|'(?:''|[^'])*'?|"(?:\\.|[^"\\])*"?|[<>!=]+|[\s\S])/u.exec(text.slice(at))?.[0] ?? text[at];
  const shown = token.length > 40 ? `${token.slice(0, 40)}…` : token;
  return JSON.stringify(shown);
}
