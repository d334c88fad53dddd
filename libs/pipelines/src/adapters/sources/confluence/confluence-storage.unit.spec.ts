import fc from 'fast-check';
import { storageToText } from './confluence-storage';

describe('storageToText (Confluence storage format)', () => {
  const none = () => '';

  it('keeps blocks on their own lines, table cells joined, code bodies, and drops macro parameters', () => {
    const storage = '<h2>Steps</h2><p>Open&nbsp;the <strong>console</strong>.</p><table><tbody><tr><th>Key</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></tbody></table><ac:structured-macro ac:name="code"><ac:parameter ac:name="language">python</ac:parameter><ac:plain-text-body><![CDATA[if a < b: print("x")]]></ac:plain-text-body></ac:structured-macro>';
    expect(storageToText(storage, none)).toBe(['Steps', 'Open the console.', 'Key | Value', 'a | 1', 'if a < b: print("x")'].join('\n'));
  });

  it('asks what to write for each image, with its file name or URL and its alt text or caption', () => {
    const seen: unknown[] = [];
    const storage = '<p>Before <ac:image ac:alt="Flow"><ri:attachment ri:filename="flow.png" /></ac:image> after</p><ac:image><ri:url ri:value="https://cdn.example.com/x.png" /><ac:caption><p>The cdn logo</p></ac:caption></ac:image>';
    const text = storageToText(storage, (img) => (seen.push(img), `[${img.filename ?? img.url}]`));
    expect(seen).toEqual([{ alt: 'Flow', filename: 'flow.png' }, { alt: 'The cdn logo', url: 'https://cdn.example.com/x.png' }]);
    expect(text).toBe('Before [flow.png] after\n[https://cdn.example.com/x.png]');
    expect(storageToText(storage, none)).toBe('Before after');
  });

  it('keeps the words of any paragraphs, escaped, in order, and never throws on arbitrary input', () => {
    const escape = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const word = fc.stringMatching(/^[A-Za-z0-9<>&;'"-]{1,12}$/);
    fc.assert(
      fc.property(fc.array(fc.array(word, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 }), (paragraphs) => {
        const storage = paragraphs.map((p) => `<p>${escape(p.join(' '))}</p>`).join('');
        expect(storageToText(storage, () => '')).toBe(paragraphs.map((p) => p.join(' ')).join('\n'));
      }),
    );
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (junk) => void storageToText(junk, () => '[image]')));
  });
});
