import { ExtractedTable, TableCell } from '../../extracted';
import { Block, paragraph } from './sections';

export interface RawCell {
  readonly text: string;
  readonly colspan?: number;
}

/** A table as read from a file, before cells are typed. */
export interface RawTable {
  readonly title?: string;
  readonly headers: readonly (readonly RawCell[])[];
  readonly rows: readonly (readonly RawCell[])[];
}

const INTEGER = /^[+-]?(0|[1-9]\d*)$/;
const DECIMAL = /^[+-]?(\d+\.\d*|\.\d+|\d+(?=[eE]))([eE][+-]?\d+)?$/;

/**
 * Types a cell's text as the reference API's table data does: an integer → int_value, a decimal → float_value,
 * anything else → text_value. Leading zeros (postcodes), thousands separators and integers beyond 2^53 (ids,
 * card numbers) stay text, because turning them into numbers would change what they say.
 */
export function typedCell(text: string, colspan?: number): TableCell {
  const value = text.trim();
  const span = colspan !== undefined && colspan > 1 ? { colspan } : {};
  if (INTEGER.test(value) && Number.isSafeInteger(Number(value))) return { int_value: Number(value), ...span };
  if (DECIMAL.test(value) && !/^[+-]?0\d/.test(value) && Number.isFinite(Number(value))) return { float_value: Number(value), ...span };
  return { text_value: value, ...span };
}

const textCell = (cell: RawCell): TableCell => (cell.colspan !== undefined && cell.colspan > 1 ? { text_value: cell.text, colspan: cell.colspan } : { text_value: cell.text });

/** Header cells are labels, so they stay text even when they read as numbers (a year column, say). */
export function toExtractedTable(table: RawTable, id: string): ExtractedTable {
  return {
    id,
    ...(table.title ? { title: table.title } : {}),
    headers: table.headers.map((row) => row.map(textCell)),
    rows: table.rows.map((row) => row.map((cell) => typedCell(cell.text, cell.colspan))),
  };
}

/** A table's text for a section when tables are not extracted: one line per row, cells separated by " | ". */
export function tableText(table: RawTable): string {
  const lines = [...table.headers, ...table.rows].map((row) => row.map((cell) => cell.text).join(' | ')).filter((line) => line.replace(/[ |]/g, '') !== '');
  return [table.title, ...lines].filter((line) => line).join('\n');
}

/** True when no cell holds any text: such a table (a spacer, an empty grid) is left out. */
export const isBlankTable = (table: RawTable): boolean => [...table.headers, ...table.rows].every((row) => row.every((cell) => cell.text.trim() === ''));

/**
 * Where a table met in the document flow goes: into `tables` (typed, numbered in document order) when tables
 * are extracted, else into the flow as one paragraph of its rows. Blank tables go nowhere.
 */
export function placeTable(table: RawTable, extractTables: boolean, tables: ExtractedTable[], blocks: Block[]): void {
  if (isBlankTable(table)) return;
  if (extractTables) tables.push(toExtractedTable(table, `table_${tables.length + 1}`));
  else blocks.push(paragraph(tableText(table)));
}
