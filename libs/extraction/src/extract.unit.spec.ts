import { extract, formatOf } from './extract';

const EMAIL = Buffer.from(['From: Ann <ann@example.org>', 'To: bob@example.org', 'Subject: Otters', 'Date: Tue, 02 Jan 2024 10:30:00 +0000', '', 'Twelve otters today.'].join('\r\n'));
const options = { extractTables: true };

describe('extract', () => {
  it('refuses an extension it has no parser for as unsupported, whatever the bytes', async () => {
    await expect(extract(Buffer.from('plain words'), 'notes.xyz', options)).rejects.toMatchObject({ kind: 'unsupported' });
    await expect(extract(Buffer.from('plain words'), 'README', options)).rejects.toMatchObject({ kind: 'unsupported' });
  });

  it('recognises an RFC 822 message without an extension (or with an unknown one) by its headers', async () => {
    expect(formatOf('message', EMAIL)).toBe('eml');
    expect(formatOf('saved.msg.bak', EMAIL)).toBe('eml');
    const doc = await extract(EMAIL, 'message', options);
    expect(doc.title).toBe('Otters');
    expect(doc.metadata).toMatchObject({ from: '"Ann" <ann@example.org>', date: '2024-01-02T10:30:00.000Z' });
    expect(doc.sections).toEqual([{ title: 'Otters', text: 'Twelve otters today.' }]);
  });

  it('picks the parser by extension, case-insensitively, before looking at the bytes', () => {
    expect(formatOf('Report.MD', EMAIL)).toBe('md');
    expect(formatOf('page.HTM', Buffer.from('<p>x</p>'))).toBe('htm');
  });

  it('throws empty for a file without text: white space only, or headings only', async () => {
    await expect(extract(Buffer.from(' \r\n\t\r\n'), 'blank.txt', options)).rejects.toMatchObject({ kind: 'empty' });
    await expect(extract(Buffer.from('# Title\n\n## Subtitle\n'), 'headings.md', options)).rejects.toMatchObject({ kind: 'empty' });
    await expect(extract(Buffer.alloc(0), 'nothing.html', options)).rejects.toMatchObject({ kind: 'empty' });
  });

  it('passes a parser\'s corrupt verdict through', async () => {
    await expect(extract(Buffer.from('not a zip at all'), 'book.epub', options)).rejects.toMatchObject({ kind: 'corrupt' });
  });

  it('returns a document whose only content is a table', async () => {
    const doc = await extract(Buffer.from('<table><tr><td>12</td></tr></table>'), 't.html', options);
    expect(doc.tables).toHaveLength(1);
  });
});
