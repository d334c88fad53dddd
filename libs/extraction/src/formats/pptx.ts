import { DomUtils } from 'htmlparser2';
import JSZip from 'jszip';
import { posix } from 'node:path';
import { ExtractedSection, ExtractedTable, ExtractionError, FormatParser } from '../extracted';
import { checkPageCount } from '../limits';
import { readCoreProperties } from './office/core-properties';
import { Element, findEvery, findFirst, isTag, localName, parseXml } from './shared/dom';
import { RawCell, RawTable, tableText, toExtractedTable } from './shared/tables';
import { openZip, readMember } from './shared/zip';

const FORMAT = 'pptx';
const TITLE_PLACEHOLDERS = new Set(['title', 'ctrTitle']);

/**
 * PowerPoint 2007+ decks: one section per slide in presentation order, titled by the slide's title
 * placeholder; other shapes' paragraphs are its text, tables (a:tbl) become ExtractedTables when asked for.
 * Speaker notes are not read: they are not what the slide shows.
 */
export const parsePptx: FormatParser = async (file, options) => {
  const zip = await openZip(file, FORMAT);
  const slidePaths = await slideOrder(zip);
  // One slide part may be listed many times: each listing is read again, so the count is bounded, not the parts.
  checkPageCount(slidePaths.length, 'slides', FORMAT);
  const sections: ExtractedSection[] = [];
  const tables: ExtractedTable[] = [];
  for (const path of slidePaths) {
    const xml = await readMember(zip, path, FORMAT);
    if (xml === undefined) throw new ExtractionError('corrupt', `The pptx file lists ${path} but does not contain it`);
    const slide = readSlide(parseXml(xml).children.filter(isTag));
    const text: string[] = [...slide.paragraphs];
    for (const table of slide.tables) {
      if (options.extractTables) tables.push(toExtractedTable(table, `table_${tables.length + 1}`));
      else text.push(tableText(table));
    }
    sections.push({ ...(slide.title ? { title: slide.title } : {}), text: text.join('\n\n') });
  }
  const core = await readCoreProperties(zip, FORMAT);
  return { ...(core.title ? { title: core.title } : {}), metadata: { ...core.metadata, slide_count: slidePaths.length }, sections, tables };
};

/** Slide part paths in presentation order: p:sldIdLst in ppt/presentation.xml, resolved through its relationships. */
async function slideOrder(zip: JSZip): Promise<string[]> {
  const presentation = await readMember(zip, 'ppt/presentation.xml', FORMAT);
  const rels = await readMember(zip, 'ppt/_rels/presentation.xml.rels', FORMAT);
  if (presentation === undefined || rels === undefined) throw new ExtractionError('corrupt', 'The pptx file has no ppt/presentation.xml: it is not a PowerPoint deck');
  const targets = new Map(
    findEvery(parseXml(rels).children, (el) => localName(el) === 'Relationship').map((rel) => [rel.attribs.Id, rel.attribs.Target] as const),
  );
  const slideIds = findEvery(parseXml(presentation).children, (el) => localName(el) === 'sldId');
  return slideIds.map((sldId) => {
    const target = targets.get(relationshipId(sldId) ?? '');
    if (!target) throw new ExtractionError('corrupt', 'The pptx file lists a slide without a relationship to its part');
    // Targets are relative to ppt/ unless absolute within the package.
    return target.startsWith('/') ? target.slice(1) : posix.normalize(posix.join('ppt', target));
  });
}

const relationshipId = (el: Element): string | undefined => Object.entries(el.attribs).find(([name]) => name === 'r:id' || name.endsWith(':id'))?.[1];

interface SlideContent {
  title: string;
  readonly paragraphs: string[];
  readonly tables: RawTable[];
}

/** Shapes in drawing order; groups (p:grpSp) are walked into, pictures and charts carry no text. */
function readSlide(roots: Element[]): SlideContent {
  const slide: SlideContent = { title: '', paragraphs: [], tables: [] };
  const tree = findFirst(roots, (el) => localName(el) === 'spTree');
  const visit = (shapes: Element[]) => {
    for (const shape of shapes) {
      const kind = localName(shape);
      if (kind === 'grpSp') visit(shape.children.filter(isTag));
      else if (kind === 'sp') readShape(shape, slide);
      else if (kind === 'graphicFrame') {
        const table = findFirst(shape.children, (el) => localName(el) === 'tbl');
        if (table) slide.tables.push(readTable(table));
      }
    }
  };
  if (tree) visit(tree.children.filter(isTag));
  return slide;
}

function readShape(shape: Element, slide: SlideContent): void {
  const body = shape.children.filter(isTag).find((el) => localName(el) === 'txBody');
  if (!body) return;
  const paragraphs = body.children.filter(isTag).filter((el) => localName(el) === 'p').map(paragraphText).filter((p) => p !== '');
  const placeholder = findFirst(shape.children, (el) => localName(el) === 'ph');
  if (placeholder && TITLE_PLACEHOLDERS.has(placeholder.attribs.type ?? '') && !slide.title) slide.title = paragraphs.join(' ');
  else slide.paragraphs.push(...paragraphs);
}

/** A paragraph's runs and fields (a:t) joined; a:br is a line break inside the paragraph. */
function paragraphText(paragraph: Element): string {
  const parts = findEvery(paragraph.children, (el) => localName(el) === 't' || localName(el) === 'br').map((el) =>
    localName(el) === 'br' ? '\n' : DomUtils.textContent(el),
  );
  return parts.join('').replace(/[ \t]+/g, ' ').trim();
}

/**
 * Rows of a:tr, cells of a:tc; cells merged into their left or upper neighbour (hMerge, vMerge) are skipped and
 * gridSpan becomes colspan. The first row is the header row when the table says so (a:tblPr firstRow="1").
 */
function readTable(table: Element): RawTable {
  const rows: RawCell[][] = table.children
    .filter(isTag)
    .filter((el) => localName(el) === 'tr')
    .map((tr) =>
      tr.children
        .filter(isTag)
        .filter((tc) => localName(tc) === 'tc' && tc.attribs.hMerge !== '1' && tc.attribs.hMerge !== 'true')
        .map((tc) => ({
          text: tc.attribs.vMerge === '1' || tc.attribs.vMerge === 'true' ? '' : findEvery(tc.children, (el) => localName(el) === 'p').map(paragraphText).filter((p) => p).join(' '),
          ...(Number(tc.attribs.gridSpan) > 1 ? { colspan: Number(tc.attribs.gridSpan) } : {}),
        })),
    );
  const properties = table.children.filter(isTag).find((el) => localName(el) === 'tblPr');
  const firstRowIsHeader = properties?.attribs.firstRow === '1' || properties?.attribs.firstRow === 'true';
  return firstRowIsHeader ? { headers: rows.slice(0, 1), rows: rows.slice(1) } : { headers: [], rows };
}
