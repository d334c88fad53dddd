import { ExtractedDocument, ExtractedTable, ExtractionError, ExtractOptions } from '../extracted';
import { AnyNode, Element, findEvery, findFirst, isTag, isText, parseXml, textOf } from './shared/dom';
import { Block, heading, paragraph, sectionsFromBlocks } from './shared/sections';
import { placeTable, RawCell, RawTable } from './shared/tables';
import { openZip, readMember } from './shared/zip';

/** Never body text: tracked deletions, comments, a table of contents repeating the headings, declarations. */
const SKIPPED = new Set(['text:tracked-changes', 'office:annotation', 'text:table-of-content', 'text:sequence-decls', 'text:variable-decls', 'office:forms']);
/** Content anchored inside a paragraph but read as paragraphs of its own, after it: footnotes and text boxes. */
const ANCHORED = new Set(['text:note', 'draw:frame']);

/**
 * OpenDocument text → document. Headings are `text:h` with their outline level, or `text:p` whose paragraph
 * style is an outline style (HTML imported by LibreOffice Writer/Web saves headings that way).
 */
export async function parseOdt(file: Buffer, options: ExtractOptions): Promise<ExtractedDocument> {
  const zip = await openZip(file, 'odt');
  const content = await readMember(zip, 'content.xml', 'odt');
  if (content === undefined) throw new ExtractionError('corrupt', 'The odt file has no content.xml');
  const dom = parseXml(content);
  const body = findFirst(dom, (el) => el.name === 'office:text');
  if (!body) throw new ExtractionError('corrupt', 'The odt file has no text body (office:text)');
  const styles = await readMember(zip, 'styles.xml', 'odt');
  const walker = new OdtWalker(options.extractTables, outlineLevels([dom, ...(styles ? [parseXml(styles)] : [])]));
  walker.walk(body.children);
  const meta = await readMember(zip, 'meta.xml', 'odt');
  const { title, metadata } = meta ? readMeta(meta) : { title: '', metadata: {} };
  return { ...(title ? { title } : {}), metadata, sections: sectionsFromBlocks(walker.blocks), tables: walker.tables };
}

class OdtWalker {
  readonly blocks: Block[] = [];
  readonly tables: ExtractedTable[] = [];

  constructor(
    private readonly extractTables: boolean,
    private readonly styleLevels: ReadonlyMap<string, number>,
  ) {}

  walk(nodes: readonly AnyNode[]): void {
    for (const el of nodes.filter(isTag)) {
      if (SKIPPED.has(el.name)) continue;
      if (el.name === 'text:h' || el.name === 'text:p') {
        const anchored: Element[] = [];
        const text = paragraphText(el.children, anchored);
        const level = el.name === 'text:h' ? Number(el.attribs['text:outline-level']) || 1 : this.styleLevels.get(el.attribs['text:style-name'] ?? '');
        this.blocks.push(level ? heading(level, text.replace(/\n/g, ' ')) : paragraph(text));
        for (const item of anchored) this.walk(item.children);
      } else if (el.name === 'table:table') {
        this.table(readTable(el));
      } else {
        this.walk(el.children);
      }
    }
  }

  private table(table: RawTable): void {
    placeTable(table, this.extractTables, this.tables, this.blocks);
  }
}

/** A paragraph's text: ODF collapses white space like HTML and spells out the rest (text:s, text:tab, text:line-break). */
function paragraphText(nodes: readonly AnyNode[], anchored: Element[]): string {
  const parts: string[] = [];
  const visit = (list: readonly AnyNode[]) => {
    for (const node of list) {
      if (isText(node)) parts.push(node.data.replace(/[ \t\n\r]+/g, ' '));
      else if (!isTag(node) || SKIPPED.has(node.name)) continue;
      else if (ANCHORED.has(node.name)) anchored.push(node.name === 'text:note' ? (findFirst(node.children, (e) => e.name === 'text:note-body') ?? node) : node);
      else if (node.name === 'text:s') parts.push(' '.repeat(Number(node.attribs['text:c']) || 1));
      else if (node.name === 'text:tab') parts.push('\t');
      else if (node.name === 'text:line-break') parts.push('\n');
      else visit(node.children);
    }
  };
  visit(nodes);
  return parts.join('').trim();
}

/** Rows of this table, not of tables nested in its cells; rows under table:table-header-rows are headers. */
function readTable(table: Element): RawTable {
  const headers: RawCell[][] = [];
  const rows: RawCell[][] = [];
  const visit = (nodes: readonly AnyNode[], inHeader: boolean) => {
    for (const el of nodes.filter(isTag)) {
      if (el.name === 'table:table-row') {
        const cells = el.children.filter(isTag).filter((c) => c.name === 'table:table-cell');
        (inHeader ? headers : rows).push(
          cells.map((c) => ({
            text: findEvery(c.children, (p) => p.name === 'text:p' || p.name === 'text:h')
              .map((p) => paragraphText(p.children, []))
              .join(' ')
              .trim(),
            colspan: Number(c.attribs['table:number-columns-spanned']) || undefined,
          })),
        );
      } else if (el.name !== 'table:table') visit(el.children, inHeader || el.name === 'table:table-header-rows');
    }
  };
  visit(table.children, false);
  return { headers, rows };
}

/**
 * Paragraph style → outline level: the style's own style:default-outline-level, else its parent's, else a
 * "Heading N" name (LibreOffice's Writer/Web heading styles carry no outline level).
 */
function outlineLevels(docs: readonly AnyNode[]): Map<string, number> {
  const styles = new Map<string, Element>();
  for (const el of findEvery([...docs], (e) => e.name === 'style:style' && e.attribs['style:family'] === 'paragraph')) {
    styles.set(el.attribs['style:name'], el);
  }
  const levelOf = (name: string, seen: Set<string>): number | undefined => {
    const style = styles.get(name);
    if (!style || seen.has(name)) return undefined;
    seen.add(name);
    const own = Number(style.attribs['style:default-outline-level']);
    if (own > 0) return own;
    const named = /^heading[ _](?:20_)?(\d)$/i.exec(style.attribs['style:display-name'] ?? name);
    if (named) return Number(named[1]);
    const parent = style.attribs['style:parent-style-name'];
    return parent ? levelOf(parent, seen) : undefined;
  };
  const levels = new Map<string, number>();
  for (const name of styles.keys()) {
    const level = levelOf(name, new Set());
    if (level) levels.set(name, level);
  }
  return levels;
}

function readMeta(xml: string): { title: string; metadata: Record<string, string> } {
  const dom = parseXml(xml);
  const value = (name: string) => textOf(findFirst(dom, (el) => el.name === name));
  const metadata: Record<string, string> = {};
  for (const [key, name] of [['author', 'meta:initial-creator'], ['created', 'meta:creation-date'], ['language', 'dc:language']] as const) {
    if (value(name)) metadata[key] = value(name);
  }
  return { title: value('dc:title'), metadata };
}
