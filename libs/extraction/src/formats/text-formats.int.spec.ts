import { ExtractedDocument, ExtractedSection, ExtractionError, FormatParser } from '../extracted';
import { parseEmail } from './email';
import { parseEpub } from './epub';
import { parseHtml } from './html';
import { parseMarkdown } from './markdown';
import { parseOdt } from './odt';
import { parseRtf } from './rtf';
import { parseText } from './text';
import { FIXTURE_HEADER, FIXTURE_ROWS, FIXTURE_TABLE, fixture } from '../../../../test/support/extraction-fixtures';

// Reads the committed fixtures made by test/fixtures/make-text-fixtures.js (hence .int: real files).

const WORDS = { txt: 'tarnwick', md: 'marvello', html: 'hollistrum', lxml: 'luxbrindle', odt: 'odrelline', rtf: 'rufteria', epub: 'epistrelle', eml: 'emberquist' };
const PARSERS: Record<keyof typeof WORDS, FormatParser> = {
  txt: parseText,
  md: parseMarkdown,
  html: parseHtml,
  lxml: parseHtml,
  odt: parseOdt,
  rtf: parseRtf,
  epub: parseEpub,
  eml: parseEmail,
};
const sentence = (format: keyof typeof WORDS) => `The ${WORDS[format]} sentence comes from the ${format} fixture.`;

function findSection(sections: readonly ExtractedSection[], title: string): ExtractedSection | undefined {
  for (const section of sections) {
    if (section.title === title) return section;
    const nested = findSection(section.sections ?? [], title);
    if (nested) return nested;
  }
  return undefined;
}

const outline = (sections: readonly ExtractedSection[]): unknown[] => sections.map((s) => (s.sections ? [s.title, outline(s.sections)] : s.title));

const parse = (format: keyof typeof WORDS, extractTables = true): Promise<ExtractedDocument> => PARSERS[format](fixture(`sample.${format}`), { extractTables });

describe('text-format fixtures', () => {
  describe.each(['md', 'html', 'lxml', 'odt', 'rtf'] as const)('%s', (format) => {
    it('nests Discussion under Results after Introduction, with the sentence under Results', async () => {
      const doc = await parse(format);
      expect(outline(doc.sections)).toEqual(['Introduction', ['Results', ['Discussion']]]);
      expect(findSection(doc.sections, 'Results')?.text).toContain(sentence(format));
      expect(findSection(doc.sections, 'Introduction')?.text).not.toContain(WORDS[format]);
      expect(doc.title).toBe(`Otter survey (${format})`);
    });
  });

  describe.each(['html', 'odt', 'md'] as const)('%s table', (format) => {
    it('is extracted with its header row and typed cells', async () => {
      const doc = await parse(format);
      expect(doc.tables).toEqual([FIXTURE_TABLE]);
      expect(findSection(doc.sections, 'Results')?.text).not.toContain('Otter |');
    });

    it('stays in the Results text when tables are not extracted', async () => {
      const doc = await parse(format, false);
      expect(doc.tables).toEqual([]);
      expect(findSection(doc.sections, 'Results')?.text).toContain('Species | Count | Weight\nOtter | 12 | 4.5\nHeron | 7 | 2.25');
    });
  });

  describe.each(['txt', 'md', 'html', 'lxml', 'odt', 'rtf', 'epub', 'eml'] as const)('corrupt.%s', (format) => {
    it('throws corrupt', async () => {
      const failure = PARSERS[format](fixture(`corrupt.${format}`), { extractTables: true });
      await expect(failure).rejects.toBeInstanceOf(ExtractionError);
      await expect(failure).rejects.toMatchObject({ kind: 'corrupt' });
    });
  });

  it('txt: one untitled section, paragraphs split at blank lines, BOM stripped, no guessed title', async () => {
    const doc = await parse('txt');
    expect(doc.title).toBeUndefined();
    expect(doc.sections).toHaveLength(1);
    expect(doc.sections[0].title).toBeUndefined();
    const paragraphs = doc.sections[0].text.split('\n\n');
    expect(paragraphs[0]).toBe('Introduction');
    expect(paragraphs).toContain(`${sentence('txt')}\nThe survey counted otters and herons at the river, café notes included.`);
  });

  it('md: front matter gives the title and is not read as a heading; code stays in its section', async () => {
    const doc = await parse('md');
    expect(doc.sections[0].title).toBe('Introduction');
    expect(JSON.stringify(doc.sections)).not.toContain('tags:');
    expect(findSection(doc.sections, 'Discussion')?.text).toContain('count(otter) > count(heron)');
    expect(findSection(doc.sections, 'Results')?.text).toContain('Café notes were included.');
  });

  it('html: navigation, scripts and styles are not text; <meta name=author> is metadata', async () => {
    const doc = await parse('html');
    const all = JSON.stringify(doc.sections);
    expect(all).not.toMatch(/About us|tracker|color: green/);
    expect(doc.metadata).toEqual({ author: 'Fixture Maker' });
  });

  it('lxml: XHTML self-closing tags do not swallow the text after them; <br/> is a line break', async () => {
    const doc = await parse('lxml');
    expect(findSection(doc.sections, 'Introduction')?.text).toBe('This document is a small XHTML fixture for the lxml parser.\nIt was written by make-text-fixtures.js.');
    expect(findSection(doc.sections, 'Discussion')?.text).toBe('Otters outnumbered herons.\n\nHerons were heavier than expected.');
  });

  it('odt: meta.xml gives title and author', async () => {
    const doc = await parse('odt');
    expect(doc.metadata).toMatchObject({ author: 'Fixture Maker' });
  });

  it('rtf: \\info gives title and author; \\u characters replace their fallbacks', async () => {
    const doc = await parse('rtf');
    expect(doc.metadata).toEqual({ author: 'Fixture Maker' });
    expect(findSection(doc.sections, 'Results')?.text).toContain('café notes included.');
    // LibreOffice does not mark the header row (\trhdr), so it is read as the first data row.
    expect(doc.tables[0].rows).toEqual([FIXTURE_HEADER, ...FIXTURE_ROWS]);
  });

  it('epub: chapters in spine order titled from the table of contents, OPF title and creator', async () => {
    const doc = await parse('epub');
    expect(doc.title).toBe('Otter survey (epub)');
    expect(doc.metadata).toEqual({ author: 'Fixture Maker', language: 'en' });
    // LibreOffice's EPUB export writes headings as <p>: chapters come from its TOC, the h2 stays text.
    expect(outline(doc.sections)).toEqual(['Introduction', 'Results']);
    const results = findSection(doc.sections, 'Results')?.text ?? '';
    expect(results.startsWith(sentence('epub'))).toBe(true);
    expect(results).toContain('Discussion\n\nOtters outnumbered herons this season.');
    expect(doc.tables.map((t) => t.rows[0])).toEqual([[{ text_value: 'Otter' }, { int_value: 12 }, { float_value: 4.5 }]]);
  });

  it('eml: subject is the title and the section; headers are metadata; attachments are listed, not read', async () => {
    const doc = await parse('eml');
    expect(doc.title).toBe('Otter survey café');
    expect(doc.metadata).toEqual({
      from: '"Ada Fixture" <ada@example.org>',
      to: '"Bob Reader" <bob@example.org>, carol@example.org',
      cc: 'dave@example.org',
      date: '2024-01-02T09:30:00.000Z',
      message_id: '<otter-survey-1@example.org>',
      attachments: ['counts.csv'],
    });
    expect(doc.sections).toHaveLength(1);
    expect(doc.sections[0].title).toBe('Otter survey café');
    expect(doc.sections[0].text).toContain(sentence('eml'));
    expect(doc.sections[0].text).not.toContain('Species,Count');
  });
});
