import { parseMarkdown } from './markdown';

const md = (text: string, extractTables = true) => parseMarkdown(Buffer.from(text), { extractTables });

describe('parseMarkdown', () => {
  it('has no title without front matter, even when the file starts with a heading', async () => {
    const doc = await md('# Heading\n\ntext');
    expect(doc.title).toBeUndefined();
    expect(doc.sections).toEqual([{ title: 'Heading', text: 'text' }]);
  });

  it('drops markup, reads soft breaks as spaces and hard breaks as line breaks', async () => {
    const doc = await md('Some **bold** and [a link](http://x) with `code`\nwrapped  \nbroken\\\n\\*literal\\*');
    expect(doc.sections).toEqual([{ text: 'Some bold and a link with code wrapped\nbroken\n*literal*' }]);
  });

  it('reads raw HTML blocks as text, not as markup', async () => {
    const doc = await md('## Part\n\n<div class="note"><b>Careful</b> &amp; slow</div>\n');
    expect(doc.sections).toEqual([{ title: 'Part', text: 'Careful & slow' }]);
  });

  it('reads a table without a header as rows and keeps its text in the section when tables are off', async () => {
    const table = '| a | b |\n|---|---|\n| 1 | x |\n';
    expect((await md(table)).tables).toEqual([{ id: 'table_1', headers: [[{ text_value: 'a' }, { text_value: 'b' }]], rows: [[{ int_value: 1 }, { text_value: 'x' }]] }]);
    expect((await md(`Before\n\n${table}`, false)).sections).toEqual([{ text: 'Before\n\na | b\n1 | x' }]);
  });

  it('reads a quoted front matter title and never shows the front matter', async () => {
    const doc = await md("---\ntitle: 'Otters: a study'\ndate: 2024-01-02\n---\nBody\n");
    expect(doc.title).toBe('Otters: a study');
    expect(doc.sections).toEqual([{ text: 'Body' }]);
  });

  it('leaves a horizontal rule that is not front matter alone', async () => {
    const doc = await md('Intro\n\n---\n\nAfter');
    expect(doc.sections).toEqual([{ text: 'Intro\n\nAfter' }]);
  });
});
