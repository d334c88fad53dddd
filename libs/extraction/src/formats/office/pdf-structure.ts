import { ExtractedTable } from '../../extracted';
import { Block, heading, paragraph } from '../shared/sections';
import { RawTable, tableText, toExtractedTable } from '../shared/tables';
import { bodySize, linesOf, paragraphBreak, PdfLine, tableRanges } from './pdf-layout';
import { PdfRun } from './pdf-reader';

/** Lines set at least this much larger than the body text are headings. */
const HEADING_RATIO = 1.2;
/** Font sizes closer than this (page units, about 1 pt) are one size. */
const SIZE_TOLERANCE = 0.06;

/**
 * The reading-order blocks of a PDF's pages (see pdf-layout.ts: all of it recovered from text positions, a
 * heuristic). Headings are lines clearly larger than the body text, their distinct sizes ranked into levels;
 * paragraphs end at page ends, vertical gaps and size changes. Column-aligned runs of lines are tables (first
 * line → header row): extracted when asked for, else kept in the text one row per line, as other formats do.
 */
export function pdfBlocks(pageRuns: readonly (readonly PdfRun[])[], extractTables: boolean): { blocks: Block[]; tables: ExtractedTable[] } {
  const pages = pageRuns.map(linesOf);
  const body = bodySize(pages);
  const isHeading = (line: PdfLine) => line.size >= HEADING_RATIO * body;
  const levelOf = headingLevels(pages.flat().filter(isHeading));
  const breakBeyond = paragraphBreak(pages);
  const blocks: Block[] = [];
  const tables: ExtractedTable[] = [];

  for (const lines of pages) {
    const ranges = tableRanges(lines);
    let paragraphLines: string[] = [];
    let previous: PdfLine | undefined;
    const endParagraph = () => {
      if (paragraphLines.length > 0) blocks.push(paragraph(joinLines(paragraphLines)));
      paragraphLines = [];
    };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const range = ranges.find(([start]) => start === i);
      if (range) {
        endParagraph();
        const table = toTable(lines.slice(range[0], range[1]));
        if (extractTables) tables.push(toExtractedTable(table, `table_${tables.length + 1}`));
        else blocks.push(paragraph(tableText(table)));
        previous = undefined;
        i = range[1] - 1;
      } else if (isHeading(line)) {
        endParagraph();
        const last = blocks.at(-1);
        // A heading that wraps onto a second line is still one title.
        if (last?.kind === 'heading' && previous && isHeading(previous) && sameSize(previous, line) && line.y - previous.y <= breakBeyond(line.size)) {
          blocks[blocks.length - 1] = heading(last.level, `${last.text} ${line.text}`);
        } else {
          blocks.push(heading(levelOf(line), line.text));
        }
        previous = line;
      } else {
        if (previous && (isHeading(previous) || !sameSize(previous, line) || line.y - previous.y > breakBeyond(previous.size))) endParagraph();
        paragraphLines.push(line.text);
        previous = line;
      }
    }
    endParagraph();
  }
  return { blocks, tables };
}

const sameSize = (a: PdfLine, b: PdfLine): boolean => Math.abs(a.size - b.size) < SIZE_TOLERANCE;

/** Distinct heading sizes, largest first, are levels 1, 2, 3… */
function headingLevels(headings: readonly PdfLine[]): (line: PdfLine) => number {
  const sizes: number[] = [];
  for (const size of headings.map((h) => h.size).sort((a, b) => b - a)) {
    if (sizes.length === 0 || sizes[sizes.length - 1] - size >= SIZE_TOLERANCE) sizes.push(size);
  }
  return (line) => 1 + Math.max(0, sizes.findIndex((size) => size - line.size < SIZE_TOLERANCE));
}

/** Lines of a paragraph joined by spaces; a line ending in a hyphen runs on into the next ("well-" + "known"). */
const joinLines = (lines: readonly string[]): string => lines.reduce((text, line) => (text.endsWith('-') ? text + line : `${text} ${line}`));

function toTable(lines: readonly PdfLine[]): RawTable {
  const cells = (line: PdfLine) => line.cells.map((cell) => ({ text: cell.text }));
  return { headers: [cells(lines[0])], rows: lines.slice(1).map(cells) };
}
