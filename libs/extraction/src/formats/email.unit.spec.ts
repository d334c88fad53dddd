import { parseEmail } from './email';

const message = (headers: string[], body: string) => Buffer.from([...headers, '', body].join('\r\n'));

describe('parseEmail', () => {
  it('reads an HTML-only message through the HTML walker: headings nest under the subject, tables are extracted', async () => {
    const mail = message(
      ['From: ann@example.org', 'Subject: Survey', 'Content-Type: text/html; charset=UTF-8'],
      '<p>Hi Bob,</p><h2>Counts</h2><p>See below.</p><table><tr><th>Otter</th></tr><tr><td>12</td></tr></table>',
    );
    const doc = await parseEmail(mail, { extractTables: true });
    expect(doc.sections).toEqual([{ title: 'Survey', text: 'Hi Bob,', sections: [{ title: 'Counts', text: 'See below.' }] }]);
    expect(doc.tables).toEqual([{ id: 'table_1', headers: [[{ text_value: 'Otter' }]], rows: [[{ int_value: 12 }]] }]);
  });

  it('decodes a quoted-printable latin-1 body, and leaves out headers the message lacks', async () => {
    const mail = message(['To: bob@example.org', 'Content-Type: text/plain; charset=ISO-8859-1', 'Content-Transfer-Encoding: quoted-printable'], 'Caf=E9 notes.\r\n\r\nSecond.');
    const doc = await parseEmail(mail, { extractTables: true });
    expect(doc.title).toBeUndefined();
    expect(doc.metadata).toEqual({ to: 'bob@example.org' });
    expect(doc.sections).toEqual([{ text: 'Café notes.\n\nSecond.' }]);
  });

  it('accepts an 8-bit UTF-8 body (many bytes above 0x7F)', async () => {
    const mail = message(['Subject: Выдры', 'Content-Type: text/plain; charset=UTF-8', 'Content-Transfer-Encoding: 8bit'], 'Выдры плавают в реке. '.repeat(20));
    const doc = await parseEmail(mail, { extractTables: true });
    expect(doc.sections[0].text).toContain('Выдры плавают в реке.');
  });

  it('throws corrupt for text without any message header', async () => {
    await expect(parseEmail(Buffer.from('just some words\r\nand more words\r\n'), { extractTables: true })).rejects.toMatchObject({ kind: 'corrupt' });
  });
});
