import { parseDocument } from 'htmlparser2';
import { ExtractedDocument, ExtractedTable, ExtractOptions } from '../extracted';
import { AnyNode, Element, findFirst, isTag, isText } from './shared/dom';
import { Block, heading, paragraph, sectionsFromBlocks } from './shared/sections';
import { decodeText } from './shared/text';
import { placeTable, RawCell, RawTable } from './shared/tables';

export interface HtmlOptions extends ExtractOptions {
  /** XHTML (epub chapters): `<a id="x"/>` closes itself instead of swallowing what follows. */
  readonly xhtml?: boolean;
}

/** Never the document's text: code, styling, navigation menus, embedded objects. */
const SKIPPED = new Set(['head', 'script', 'style', 'noscript', 'template', 'nav', 'iframe', 'object', 'svg', 'math', 'select', 'button']);
/** Elements that end the running paragraph: text on either side of them is not one paragraph. */
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'body', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure',
  'footer', 'form', 'header', 'hgroup', 'hr', 'li', 'main', 'ol', 'p', 'section', 'summary', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul',
]);

/**
 * .html, .htm and .lxml files. Bytes that are not UTF-8 are read in the charset a <meta> or XML declaration
 * names; an XML declaration or the XHTML namespace switches on XHTML's self-closing tags.
 */
export async function parseHtml(file: Buffer, options: ExtractOptions): Promise<ExtractedDocument> {
  const head = file.subarray(0, 2048).toString('latin1');
  const declared = /<meta\b[^>]*\bcharset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1] ?? /^\s*<\?xml\b[^>]*\bencoding\s*=\s*["']([\w.:-]+)/i.exec(head)?.[1];
  const html = decodeText(file, 'html', declared);
  const start = html.slice(0, 2048);
  const xhtml = /^\s*<\?xml\b/i.test(start) || /<html\b[^>]*\bxmlns\s*=\s*["']http:\/\/www\.w3\.org\/1999\/xhtml["']/i.test(start);
  return htmlToDocument(html, { extractTables: options.extractTables, xhtml });
}

/** HTML → document: `<title>` is the title, h1–h6 nest sections, tables become ExtractedTables when asked for. */
export function htmlToDocument(html: string, options: HtmlOptions): ExtractedDocument {
  const dom = parseDocument(html, { recognizeSelfClosing: options.xhtml ?? false });
  const head = findFirst(dom, (el) => el.name === 'head');
  const titleElement = findFirst(head ?? dom, (el) => el.name === 'title' && !inside(el, ['body', 'svg']));
  const title = titleElement ? inlineText(titleElement.children) : '';
  const metadata: Record<string, string> = {};
  for (const meta of head ? head.children.filter(isTag).filter((el) => el.name === 'meta') : []) {
    const name = meta.attribs.name?.toLowerCase();
    if ((name === 'author' || name === 'description') && meta.attribs.content?.trim()) metadata[name] = meta.attribs.content.trim();
  }
  const walker = new HtmlWalker(options.extractTables);
  walker.walk((findFirst(dom, (el) => el.name === 'body') ?? dom).children);
  walker.endParagraph();
  return { ...(title ? { title } : {}), metadata, sections: sectionsFromBlocks(walker.blocks), tables: walker.tables };
}

class HtmlWalker {
  readonly blocks: Block[] = [];
  readonly tables: ExtractedTable[] = [];
  private running: string[] = [];

  constructor(private readonly extractTables: boolean) {}

  walk(nodes: readonly AnyNode[]): void {
    for (const node of nodes) {
      if (isText(node)) this.running.push(node.data.replace(/[ \t\n\r\f]+/g, ' '));
      else if (isTag(node)) this.element(node);
    }
  }

  endParagraph(): void {
    const text = tidy(this.running.join(''));
    this.running = [];
    if (text) this.blocks.push(paragraph(text));
  }

  private element(el: Element): void {
    const name = el.name;
    if (SKIPPED.has(name)) return;
    if (name === 'br') {
      this.running.push('\n');
    } else if (/^h[1-6]$/.test(name)) {
      this.endParagraph();
      this.blocks.push(heading(Number(name[1]), inlineText(el.children).replace(/\n/g, ' ')));
    } else if (name === 'pre') {
      this.endParagraph();
      this.blocks.push(paragraph(preText(el.children).replace(/^\n+|\s+$/g, '')));
    } else if (name === 'table' && !isLayoutTable(el)) {
      this.endParagraph();
      this.table(readTable(el));
    } else if (BLOCKS.has(name) || name === 'table') {
      this.endParagraph();
      this.walk(el.children);
      this.endParagraph();
    } else {
      this.walk(el.children);
    }
  }

  private table(table: RawTable): void {
    placeTable(table, this.extractTables, this.tables, this.blocks);
  }
}

/** Text of inline content as a browser lays it out: white space collapsed, `<br>` kept as a line break. */
function inlineText(nodes: readonly AnyNode[]): string {
  const parts: string[] = [];
  const visit = (list: readonly AnyNode[]) => {
    for (const node of list) {
      if (isText(node)) parts.push(node.data.replace(/[ \t\n\r\f]+/g, ' '));
      else if (isTag(node) && node.name === 'br') parts.push('\n');
      else if (isTag(node) && !SKIPPED.has(node.name)) {
        if (BLOCKS.has(node.name)) parts.push(' ');
        visit(node.children);
        if (BLOCKS.has(node.name)) parts.push(' ');
      }
    }
  };
  visit(nodes);
  return tidy(parts.join(''));
}

const tidy = (text: string): string =>
  text
    .split('\n')
    .map((line) => line.replace(/ {2,}/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();

function preText(nodes: readonly AnyNode[]): string {
  return nodes.map((node) => (isText(node) ? node.data : isTag(node) ? (node.name === 'br' ? '\n' : preText(node.children)) : '')).join('');
}

function inside(el: Element, names: readonly string[]): boolean {
  for (let p = el.parent; p; p = p.parent) if (isTag(p) && names.includes(p.name)) return true;
  return false;
}

/** Pages laid out with tables hold headings or further tables in their cells: those are read as text, not data. */
const isLayoutTable = (table: Element): boolean => findFirst(table.children, (el) => el.name === 'table' || /^h[1-6]$/.test(el.name)) !== undefined;

/** Rows of this table (not of tables nested in it); `<thead>` rows, or leading rows of `<th>` only, are headers. */
function readTable(table: Element): RawTable {
  const headers: RawCell[][] = [];
  const rows: RawCell[][] = [];
  let caption: string | undefined;
  const visit = (nodes: readonly AnyNode[], inHead: boolean) => {
    for (const node of nodes.filter(isTag)) {
      if (node.name === 'caption') caption = inlineText(node.children).replace(/\n/g, ' ');
      else if (node.name === 'tr') {
        const cells = node.children.filter(isTag).filter((c) => c.name === 'td' || c.name === 'th');
        const row = cells.map((c) => ({ text: inlineText(c.children).replace(/\n/g, ' '), colspan: Number(c.attribs.colspan) || undefined }));
        const allTh = cells.length > 0 && cells.every((c) => c.name === 'th');
        (inHead || (allTh && rows.length === 0) ? headers : rows).push(row);
      } else if (node.name !== 'table') visit(node.children, inHead || node.name === 'thead');
    }
  };
  visit(table.children, false);
  return { ...(caption ? { title: caption } : {}), headers, rows };
}
