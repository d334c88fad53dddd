import MarkdownIt from 'markdown-it';
import { ExtractedDocument, ExtractedSection, ExtractedTable, ExtractOptions } from '../extracted';
import { htmlToDocument } from './html';
import { Block, heading, paragraph, sectionsFromBlocks } from './shared/sections';
import { decodeText } from './shared/text';
import { isBlankTable, RawCell, RawTable, tableText, toExtractedTable } from './shared/tables';

const markdown = new MarkdownIt({ html: true });
type Token = MarkdownIt.Token;

/** Markdown → document: ATX and setext headings nest sections by level; a front matter `title:` is the title. */
export async function parseMarkdown(file: Buffer, options: ExtractOptions): Promise<ExtractedDocument> {
  const { title, body } = splitFrontMatter(decodeText(file, 'md'));
  const tokens = markdown.parse(body, {});
  const blocks: Block[] = [];
  const tables: ExtractedTable[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    switch (token.type) {
      case 'heading_open':
        blocks.push(heading(Number(token.tag.slice(1)), inlineText(tokens[i + 1]).replace(/\n/g, ' ')));
        i += 2;
        break;
      case 'inline':
        blocks.push(paragraph(inlineText(token)));
        break;
      case 'fence':
      case 'code_block':
        blocks.push(paragraph(token.content.replace(/\s+$/, '')));
        break;
      case 'html_block':
        blocks.push(paragraph(flatten(htmlToDocument(token.content, { extractTables: false }).sections)));
        break;
      case 'table_open': {
        const end = tokens.findIndex((t, j) => j > i && t.type === 'table_close');
        const table = readTable(tokens.slice(i, end));
        if (!isBlankTable(table)) {
          if (options.extractTables) tables.push(toExtractedTable(table, `table_${tables.length + 1}`));
          else blocks.push(paragraph(tableText(table)));
        }
        i = end;
        break;
      }
    }
  }
  return { ...(title ? { title } : {}), metadata: {}, sections: sectionsFromBlocks(blocks), tables };
}

/** Plain text of an inline token: markup dropped, soft breaks as spaces (as rendered), hard breaks as line breaks. */
function inlineText(token: Token | undefined): string {
  const parts = (token?.children ?? []).map((child) => {
    switch (child.type) {
      case 'text':
      case 'text_special':
      case 'code_inline':
        return child.content;
      case 'softbreak':
        return ' ';
      case 'hardbreak':
        return '\n';
      default:
        return '';
    }
  });
  return parts.join('').trim();
}

function readTable(tokens: readonly Token[]): RawTable {
  const headers: RawCell[][] = [];
  const rows: RawCell[][] = [];
  let inHead = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.type === 'thead_open') inHead = true;
    else if (token.type === 'thead_close') inHead = false;
    else if (token.type === 'tr_open') (inHead ? headers : rows).push([]);
    else if (token.type === 'inline') (inHead ? headers : rows).at(-1)?.push({ text: inlineText(token) });
  }
  return { headers, rows };
}

const flatten = (sections: readonly ExtractedSection[]): string =>
  sections.flatMap((s) => [s.title ?? '', s.text, flatten(s.sections ?? [])]).filter((t) => t).join('\n\n');

/**
 * Jekyll/Hugo-style YAML front matter is not Markdown: left in, it would read as a rule and a setext heading.
 * Only a plain `title:` scalar is read from it (no YAML library is installed; anything richer is ignored).
 */
function splitFrontMatter(text: string): { title?: string; body: string } {
  const match = /^---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(text);
  if (!match) return { body: text };
  const title = /^title:[ \t]*(.+)$/m.exec(match[1])?.[1].trim().replace(/^(["'])(.*)\1$/, '$2');
  return { ...(title ? { title } : {}), body: text.slice(match[0].length) };
}
