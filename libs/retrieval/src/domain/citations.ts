/**
 * Citations in generated answers. The prompt asks the model to cite the used search results as `[1]`, `[2]`, …
 * (N is the 1-based position among the used results, which are the first N search results). The answer's
 * markers are then rewritten in the requested style; a number that names no used result is dropped, so that
 * an answer never cites nothing. A marker is `[n]` or a group `[n, m, …]` of one- to three-digit numbers;
 * other bracketed text (`[2024]`, `[see above]`) is left alone.
 */

export const CITATION_STYLES = ['none', 'numeric', 'html', 'markdown'] as const;
export type CitationStyle = (typeof CITATION_STYLES)[number];

/** The reference's `CitationParameters`: patterns apply to `html` and `markdown`. */
export interface CitationOptions {
  readonly style: CitationStyle;
  /** Link target; `{doc.id}`, `{doc.<field>}`, `{part.<field>}` are replaced (URL-encoded). Default "". */
  readonly urlPattern?: string;
  /** Link text, with the same placeholders; default the result's number N. */
  readonly textPattern?: string;
}

/** What a citation can point at: one used search result. */
export interface CitedResult {
  readonly document_id: string;
  readonly document_metadata: Readonly<Record<string, unknown>>;
  readonly part_metadata: Readonly<Record<string, unknown>>;
}

const MARKER = /^\[\s*(\d{1,3}(?:\s*,\s*\d{1,3})*)\s*\]/;
/** A prefix that more text could still complete into a marker. */
const PARTIAL = /^\[\s*(?:\d{1,3}(?:\s*,\s*\d{0,3})*\s*)?$/;

/**
 * Rewrites markers in text that arrives in pieces (a stream of model output): `push` returns what can be
 * emitted so far, holding back a possible marker and the whitespace before it until it is complete; `end`
 * returns the rest. Whole-text rewriting is one `push` and one `end`, so both paths behave the same.
 */
export class CitationRewriter {
  private pending = '';

  constructor(
    private readonly options: CitationOptions,
    private readonly used: readonly CitedResult[],
  ) {}

  push(piece: string): string {
    this.pending += piece;
    return this.drain(false);
  }

  end(): string {
    return this.drain(true);
  }

  private drain(final: boolean): string {
    let out = '';
    let text = this.pending;
    for (;;) {
      const open = text.indexOf('[');
      if (open < 0) {
        // Trailing whitespace waits: a marker after it may be dropped together with it.
        const keep = final ? text.length : text.length - (text.match(/\s*$/)?.[0].length ?? 0);
        out += text.slice(0, keep);
        this.pending = text.slice(keep);
        return out;
      }
      const space = text.slice(0, open).match(/\s*$/)?.[0].length ?? 0;
      out += text.slice(0, open - space);
      const rest = text.slice(open);
      const marker = MARKER.exec(rest);
      if (marker) {
        out += this.render(text.slice(open - space, open), marker[1]);
        text = rest.slice(marker[0].length);
        continue;
      }
      if (!final && PARTIAL.test(rest)) {
        this.pending = text.slice(open - space);
        return out;
      }
      out += text.slice(open - space, open + 1);
      text = rest.slice(1);
    }
  }

  private render(space: string, group: string): string {
    const numbers = group.split(',').map((n) => Number(n.trim()));
    const valid = numbers.filter((n) => n >= 1 && n <= this.used.length);
    if (valid.length === 0) return '';
    switch (this.options.style) {
      case 'none':
        return '';
      case 'numeric':
        return `${space}[${valid.join(', ')}]`;
      case 'html':
        return space + valid.map((n) => `<a href="${escapeHtml(this.url(n))}">${escapeHtml(this.text(n))}</a>`).join('');
      case 'markdown':
        return space + valid.map((n) => `[${this.text(n).replace(/[[\]\\]/g, '\\$&')}](${this.url(n)})`).join('');
      default: {
        const _exhaustive: never = this.options.style;
        return _exhaustive;
      }
    }
  }

  private url(n: number): string {
    return substitute(this.options.urlPattern ?? '', this.used[n - 1], (v) => encodeURIComponent(v).replace(/[()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
  }

  private text(n: number): string {
    return this.options.textPattern === undefined ? String(n) : substitute(this.options.textPattern, this.used[n - 1], (v) => v);
  }
}

/** Rewrites the markers of a whole answer. */
export function rewriteCitations(answer: string, options: CitationOptions, used: readonly CitedResult[]): string {
  const rewriter = new CitationRewriter(options, used);
  return rewriter.push(answer) + rewriter.end();
}

/** The answer without markers: what factual consistency is scored on. */
export const withoutCitations = (answer: string, used: readonly CitedResult[]): string => rewriteCitations(answer, { style: 'none' }, used);

/**
 * Replaces `{doc.id}`, `{doc.<field>}` and `{part.<field>}` (dot paths into the metadata) with the result's
 * values; a field the result does not have becomes empty, as a wrong key does in the reference's templates.
 */
export function substitute(pattern: string, result: CitedResult, encode: (value: string) => string): string {
  return pattern.replace(/\{(doc|part)\.([^{}]+)\}/g, (_, scope: 'doc' | 'part', path: string) => {
    if (scope === 'doc' && path === 'id') return encode(result.document_id);
    const value = lookup(scope === 'doc' ? result.document_metadata : result.part_metadata, path);
    return value === undefined || value === null ? '' : encode(typeof value === 'object' ? JSON.stringify(value) : String(value));
  });
}

function lookup(metadata: Readonly<Record<string, unknown>>, path: string): unknown {
  if (Object.prototype.hasOwnProperty.call(metadata, path)) return metadata[path];
  let value: unknown = metadata;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
