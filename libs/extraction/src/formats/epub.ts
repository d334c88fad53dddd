import { posix } from 'path';
import { ExtractedDocument, ExtractedSection, ExtractedTable, ExtractionError, ExtractOptions } from '../extracted';
import { htmlToDocument } from './html';
import { Element, findEvery, findFirst, localName, parseXml, textOf } from './shared/dom';
import { openZip, readMember } from './shared/zip';

const XHTML_TYPES = new Set(['application/xhtml+xml', 'text/html']);

/**
 * EPUB → document: the chapters of the spine, in reading order, each parsed as XHTML. A chapter is a section
 * titled by its only top-level heading, else by its table-of-contents entry (EPUB 3 nav or EPUB 2 NCX).
 */
export async function parseEpub(file: Buffer, options: ExtractOptions): Promise<ExtractedDocument> {
  const zip = await openZip(file, 'epub');
  const read = (path: string) => readMember(zip, path, 'epub');
  const container = await read('META-INF/container.xml');
  const rootfile = container ? findFirst(parseXml(container), (el) => localName(el) === 'rootfile') : undefined;
  const opfPath = rootfile?.attribs['full-path'];
  const opf = opfPath ? await read(opfPath) : undefined;
  if (!opfPath || opf === undefined) throw new ExtractionError('corrupt', 'The epub file has no package document (META-INF/container.xml → OPF)');
  const pkg = parseXml(opf);
  const manifest = new Map(findEvery(pkg, (el) => localName(el) === 'item').map((item) => [item.attribs.id, item]));
  const spine = findEvery(pkg, (el) => localName(el) === 'itemref').map((ref) => manifest.get(ref.attribs.idref));
  const chapterPaths = spine.filter((item): item is Element => item !== undefined && XHTML_TYPES.has(item.attribs['media-type'])).map((item) => resolve(opfPath, item.attribs.href));
  if (chapterPaths.length === 0) throw new ExtractionError('corrupt', 'The epub file has no readable chapters in its spine');

  const tocTitles = await readTocTitles([...manifest.values()], findFirst(pkg, (el) => localName(el) === 'spine')?.attribs.toc, opfPath, read);
  const sections: ExtractedSection[] = [];
  const tables: ExtractedTable[] = [];
  let chaptersRead = 0;
  for (const path of chapterPaths) {
    const xhtml = await read(path);
    if (xhtml === undefined) continue;
    chaptersRead++;
    const chapter = htmlToDocument(xhtml, { extractTables: options.extractTables, xhtml: true });
    sections.push(...chapterSections(chapter.sections, tocTitles.get(path)));
    for (const table of chapter.tables) tables.push({ ...table, id: `table_${tables.length + 1}` });
  }
  if (chaptersRead === 0) throw new ExtractionError('corrupt', 'None of the epub spine chapters is in the file');

  const metadata: Record<string, string> = {};
  const dc = (name: string) => textOf(findFirst(pkg, (el) => el.name === `dc:${name}`));
  if (dc('creator')) metadata.author = dc('creator');
  if (dc('language')) metadata.language = dc('language');
  return { ...(dc('title') ? { title: dc('title') } : {}), metadata, sections, tables };
}

/**
 * A chapter with a single titled top-level section is that section. Otherwise its sections go under its
 * table-of-contents title, or straight into the book when it has none. LibreOffice writes a chapter's heading
 * as a plain paragraph repeating that title; that paragraph is dropped.
 */
function chapterSections(sections: readonly ExtractedSection[], tocTitle: string | undefined): ExtractedSection[] {
  if (sections.length === 1 && sections[0].title) return [sections[0]];
  if (!tocTitle) return [...sections];
  const [first, ...rest] = sections;
  if (first?.title === tocTitle) return [...sections];
  if (first && !first.title) {
    const paragraphs = first.text.split('\n\n');
    const text = (paragraphs[0].trim() === tocTitle ? paragraphs.slice(1) : paragraphs).join('\n\n');
    return [{ title: tocTitle, text, ...(rest.length > 0 ? { sections: rest } : {}) }];
  }
  return [{ title: tocTitle, text: '', sections: [...sections] }];
}

/** Chapter path → its first table-of-contents title, from the EPUB 3 nav document, else the NCX. */
async function readTocTitles(items: readonly Element[], ncxId: string | undefined, opfPath: string, read: (path: string) => Promise<string | undefined>): Promise<Map<string, string>> {
  const titles = new Map<string, string>();
  const add = (base: string, href: string | undefined, title: string) => {
    const path = href ? resolve(base, href) : undefined;
    if (path && title && !titles.has(path)) titles.set(path, title.replace(/\s+/g, ' '));
  };
  const nav = items.find((item) => (item.attribs.properties ?? '').split(/\s+/).includes('nav'));
  const ncx = items.find((item) => item.attribs.id === ncxId || item.attribs['media-type'] === 'application/x-dtbncx+xml');
  for (const item of [nav, ncx]) {
    if (!item) continue;
    const path = resolve(opfPath, item.attribs.href);
    const xml = await read(path);
    if (xml === undefined) continue;
    const dom = parseXml(xml);
    if (item === nav) {
      const toc = findFirst(dom, (el) => localName(el) === 'nav' && (el.attribs['epub:type'] ?? '').includes('toc')) ?? dom;
      for (const a of findEvery(toc, (el) => localName(el) === 'a')) add(path, a.attribs.href, textOf(a));
    } else {
      for (const point of findEvery(dom, (el) => localName(el) === 'navPoint')) {
        const label = findFirst(point.children, (el) => localName(el) === 'text');
        const content = findFirst(point.children, (el) => localName(el) === 'content');
        add(path, content?.attribs.src, textOf(label));
      }
    }
  }
  return titles;
}

/** A manifest or TOC href (URL-encoded, maybe with a #fragment) → the zip member path it names. */
const resolve = (base: string, href: string): string => posix.normalize(posix.join(posix.dirname(base), decodeURIComponentSafe(href.split('#')[0])));

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
