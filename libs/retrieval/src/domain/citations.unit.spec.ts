import fc from 'fast-check';
import { CitationOptions, CitationRewriter, CitedResult, rewriteCitations, substitute, withoutCitations } from './citations';

const used: CitedResult[] = [
  { document_id: 'otters/1', document_metadata: { title: 'Sea [otters]', url: 'https://x.test/o?a=1&b=2' }, part_metadata: { section: 'Sleep', page: 4 } },
  { document_id: 'kelp 2', document_metadata: { title: 'Kelp <forests>' }, part_metadata: {} },
];
const answer = 'Otters sleep in kelp [1]. Kelp needs otters [2][1], see [1, 2] and not [7] or [0]. In [2024] it grew [3, 2].';

describe('citations', () => {
  it('numeric keeps markers that point at used results and drops the others with their space', () => {
    expect(rewriteCitations(answer, { style: 'numeric' }, used)).toBe('Otters sleep in kelp [1]. Kelp needs otters [2][1], see [1, 2] and not or. In [2024] it grew [2].');
  });

  it('none strips every marker', () => {
    expect(rewriteCitations(answer, { style: 'none' }, used)).toBe('Otters sleep in kelp. Kelp needs otters, see and not or. In [2024] it grew.');
    expect(withoutCitations('A [1]. B [2, 9].', used)).toBe('A. B.');
  });

  it('html links each citation with the url and text patterns, escaped', () => {
    const options: CitationOptions = { style: 'html', urlPattern: 'https://docs.test/{doc.id}#{part.section}', textPattern: '{doc.title}' };
    expect(rewriteCitations('Kelp [2]. Both [1, 2].', options, used)).toBe(
      'Kelp <a href="https://docs.test/kelp%202#">Kelp &#60;forests&#62;</a>. Both <a href="https://docs.test/otters%2F1#Sleep">Sea [otters]</a><a href="https://docs.test/kelp%202#">Kelp &#60;forests&#62;</a>.',
    );
  });

  it('markdown defaults to [N]() and escapes brackets in the text', () => {
    expect(rewriteCitations('Sleep [1].', { style: 'markdown' }, used)).toBe('Sleep [1]().');
    expect(rewriteCitations('Sleep [1].', { style: 'markdown', urlPattern: '{doc.url}', textPattern: '{doc.title} p.{part.page}' }, used)).toBe(
      'Sleep [Sea \\[otters\\] p.4](https%3A%2F%2Fx.test%2Fo%3Fa%3D1%26b%3D2).',
    );
  });

  it('substitutes nested metadata paths and leaves unknown fields empty', () => {
    const result: CitedResult = { document_id: 'd', document_metadata: { a: { b: 'deep' }, 'x.y': 'dotted' }, part_metadata: {} };
    expect(substitute('{doc.a.b}|{doc.x.y}|{doc.none}|{part.none}|{other}', result, (v) => v)).toBe('deep|dotted|||{other}');
  });

  it('holds back a marker split across stream pieces and emits the same text as the whole answer', () => {
    const rewriter = new CitationRewriter({ style: 'numeric' }, used);
    expect(rewriter.push('kelp ')).toBe('kelp');
    expect(rewriter.push('[')).toBe('');
    expect(rewriter.push('1')).toBe('');
    expect(rewriter.push('] and [9')).toBe(' [1] and');
    expect(rewriter.push(']. Done')).toBe('. Done');
    expect(rewriter.end()).toBe('');
  });

  it('gives the same output however the answer is cut into pieces (property)', () => {
    const styles: CitationOptions[] = [{ style: 'numeric' }, { style: 'none' }, { style: 'html', urlPattern: '/{doc.id}' }, { style: 'markdown', textPattern: '{doc.title}' }];
    const token = fc.constantFrom('[', ']', '1', '2', '9', ',', ' ', 'x', '.', '[1]', '[2, 1]', '[12', '\n');
    fc.assert(
      fc.property(fc.array(token, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 10 }), fc.constantFrom(...styles), (tokens, cuts, options) => {
        const text = tokens.join('');
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const rewriter = new CitationRewriter(options, used);
        let streamed = '';
        let from = 0;
        for (const p of [...points, text.length]) {
          streamed += rewriter.push(text.slice(from, p));
          from = p;
        }
        streamed += rewriter.end();
        expect(streamed).toBe(rewriteCitations(text, options, used));
      }),
    );
  });

  it('never leaves a numeric citation to a result that was not used (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.integer({ min: 0, max: 120 }).map((n) => `[${n}]`)), { maxLength: 20 }), (parts) => {
        const out = rewriteCitations(parts.join(' '), { style: 'numeric' }, used);
        for (const m of out.matchAll(/\[(\d{1,3}(?:, \d{1,3})*)\]/g)) for (const n of m[1].split(', ').map(Number)) expect(n >= 1 && n <= used.length).toBe(true);
      }),
    );
  });
});
