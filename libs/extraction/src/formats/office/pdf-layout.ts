import { PdfRun } from './pdf-reader';

/**
 * Reading a PDF page's layout back from text positions. A PDF holds no lines, paragraphs, headings or tables,
 * only glyph runs at coordinates, and pdf2json hands those runs over as they are (no npm PDF library in use
 * here groups them), so this is written by hand and is a heuristic on positions: runs sharing a baseline form
 * a line, wide horizontal gaps split a line into cells, and vertical gaps split lines into paragraphs.
 * Multi-column page layouts are not recognised: lines side by side are read as one line.
 */

/** A stretch of a line between wide gaps: a table cell, or the whole line in running text. */
export interface PdfCell {
  readonly x0: number;
  readonly x1: number;
  readonly text: string;
}

export interface PdfLine {
  readonly y: number;
  /** The largest font size on the line, in page units. */
  readonly size: number;
  readonly cells: readonly PdfCell[];
  readonly text: string;
}

/** Runs whose baselines are this close (relative to the font size) are one line: sub/superscripts stay on it. */
const SAME_LINE = 0.3;
/** An average glyph is about half an em wide. */
const CHAR_WIDTH = 0.5;
/** A gap wider than this many character widths separates cells; word spaces are a fraction of one. */
const CELL_GAP_CHARS = 2;
/** A gap wider than this fraction of the font size is a space the run text itself does not carry. */
const WORD_GAP = 0.15;

/** Lines of a page, top to bottom, each split into cells at wide gaps. */
export function linesOf(runs: readonly PdfRun[]): PdfLine[] {
  const sorted = [...runs].sort((a, b) => a.y - b.y || a.x - b.x);
  const groups: PdfRun[][] = [];
  for (const run of sorted) {
    const line = groups.at(-1);
    if (line && Math.abs(run.y - line[0].y) <= SAME_LINE * Math.max(run.size, line[0].size)) line.push(run);
    else groups.push([run]);
  }
  return groups.map((group) => {
    const size = Math.max(...group.map((r) => r.size));
    const cells = cellsOf(group.sort((a, b) => a.x - b.x), size);
    return { y: group[0].y, size, cells, text: cells.map((c) => c.text).join(' ') };
  });
}

function cellsOf(runs: readonly PdfRun[], size: number): PdfCell[] {
  const cells: { x0: number; x1: number; text: string }[] = [];
  for (const run of runs) {
    const cell = cells.at(-1);
    const gap = cell ? run.x - cell.x1 : Infinity;
    if (cell && gap <= CELL_GAP_CHARS * CHAR_WIDTH * size) {
      const space = gap > WORD_GAP * size && !/\s$/.test(cell.text) && !/^\s/.test(run.text) ? ' ' : '';
      cell.text += space + run.text;
      cell.x1 = Math.max(cell.x1, run.x + run.width);
    } else {
      cells.push({ x0: run.x, x1: run.x + run.width, text: run.text });
    }
  }
  return cells.map((c) => ({ ...c, text: c.text.replace(/\s+/g, ' ').trim() }));
}

/** A table's rows are at most this many font sizes apart; further apart, two grids are two tables. */
const MAX_ROW_GAP = 4;
/** Table cells are short; lines of two text columns also line up, but their "cells" are long runs of prose. */
const MAX_MEAN_CELL_CHARS = 30;

/**
 * Runs of at least two consecutive lines that split into the same number (≥ 2) of cells whose columns line up:
 * each cell lies between its neighbours' columns on the line above, and the other way round. Centred headers
 * over left-aligned data still line up that way. Returned as [start, end) line ranges. Cells that wrap onto a
 * second line, and tables split across pages, are not recognised as one table; grids of long cells (two
 * columns of prose) are not taken for tables at all.
 */
export function tableRanges(lines: readonly PdfLine[]): [number, number][] {
  const ranges: [number, number][] = [];
  let start = 0;
  while (start < lines.length) {
    let end = start + 1;
    if (lines[start].cells.length >= 2) {
      while (end < lines.length && sameGrid(lines[end - 1], lines[end])) end++;
    }
    if (end - start >= 2 && meanCellLength(lines.slice(start, end)) <= MAX_MEAN_CELL_CHARS) ranges.push([start, end]);
    start = end;
  }
  return ranges;
}

function meanCellLength(lines: readonly PdfLine[]): number {
  const cells = lines.flatMap((line) => line.cells);
  return cells.reduce((sum, cell) => sum + cell.text.length, 0) / cells.length;
}

function sameGrid(above: PdfLine, below: PdfLine): boolean {
  if (above.cells.length !== below.cells.length) return false;
  if (below.y - above.y > MAX_ROW_GAP * Math.max(above.size, below.size)) return false;
  return fitsBetween(above.cells, below.cells) && fitsBetween(below.cells, above.cells);
}

/** Each cell of `cells` starts after the previous column of `grid` ends and ends before its next column starts. */
function fitsBetween(grid: readonly PdfCell[], cells: readonly PdfCell[]): boolean {
  return cells.every((cell, i) => (i === 0 || cell.x0 > grid[i - 1].x1) && (i === grid.length - 1 || cell.x1 < grid[i + 1].x0));
}

/** Line advance within a paragraph grows to at most this many font sizes (generous line spacing). */
const MAX_LINE_ADVANCE = 1.2;
/** A vertical step this much larger than the usual line advance starts a new paragraph. */
const PARAGRAPH_GAP = 1.25;

/**
 * The vertical step beyond which the next line starts a new paragraph, for a font size: a quarter more than
 * the usual line advance. That advance, in font sizes, is the most common step (to 0.05) between consecutive
 * lines of one size, capped so that in a document of one-line paragraphs the paragraph gap is not the norm.
 */
export function paragraphBreak(pages: readonly (readonly PdfLine[])[]): (size: number) => number {
  const counts = new Map<number, number>();
  for (const lines of pages) {
    for (let i = 1; i < lines.length; i++) {
      const step = lines[i].y - lines[i - 1].y;
      if (step > 0 && Math.abs(lines[i].size - lines[i - 1].size) < 0.01) {
        const advance = Math.round((step / lines[i].size) * 20) / 20;
        counts.set(advance, (counts.get(advance) ?? 0) + 1);
      }
    }
  }
  const modal = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]?.[0] ?? MAX_LINE_ADVANCE;
  return (size) => PARAGRAPH_GAP * Math.min(modal, MAX_LINE_ADVANCE) * size;
}

/** The body text size: the median font size, weighted by how many characters are set in it. */
export function bodySize(pages: readonly (readonly PdfLine[])[]): number {
  const sized = pages.flat().map((line) => ({ size: line.size, weight: line.text.length })).sort((a, b) => a.size - b.size);
  const total = sized.reduce((sum, s) => sum + s.weight, 0);
  let seen = 0;
  for (const s of sized) {
    seen += s.weight;
    if (seen * 2 >= total) return s.size;
  }
  return 0;
}
