import { invalid } from '@lib/platform/kernel';

/** Tables and images of a document: their shapes, the parts that make them findable, and their checks. */

type Span = { readonly colspan?: number; readonly rowspan?: number };
export type TableCell =
  | ({ readonly text_value: string } & Span)
  | ({ readonly int_value: number } & Span)
  | ({ readonly float_value: number } & Span)
  | ({ readonly bool_value: boolean } & Span);

export interface DocumentTable {
  readonly id: string;
  readonly title?: string;
  readonly description?: string;
  readonly data: { readonly headers: readonly (readonly TableCell[])[]; readonly rows: readonly (readonly TableCell[])[] };
}

/** An image sent with a document: Base64 data kept in the event, served by the retrieve-image operation. */
export interface DocumentImage {
  readonly id: string;
  readonly title?: string;
  readonly caption?: string;
  readonly description?: string;
  readonly mimeType: string;
  /** Base64 (validated at the edge). */
  readonly data: string;
}

/** Decoded bytes one image may hold (the spec's embedded-image default, 5 MiB). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

export interface Attachments {
  readonly tables?: readonly DocumentTable[];
  readonly images?: readonly DocumentImage[];
}

/** What a document input looks like to these checks: structured ones nest sections, core ones have parts. */
interface AttachmentOwner extends Attachments {
  readonly sections?: readonly AttachmentOwner[];
  readonly parts?: readonly { readonly tableId?: string; readonly imageId?: string }[];
}

/** The text that makes an image findable: its title, caption and description; none of them → no part. */
export function imageText(image: DocumentImage): string {
  return [image.title, image.caption, image.description]
    .map((t) => t?.trim())
    .filter(Boolean)
    .join('. ');
}

const cellText = (c: TableCell): string =>
  'text_value' in c ? c.text_value : 'int_value' in c ? String(c.int_value) : 'float_value' in c ? String(c.float_value) : String(c.bool_value);

/** Rows of a table text part: a table is searchable through these. */
const TABLE_PART_CHARS = 2000;

/**
 * A table as text, row by row with its column names ("Species: Otter; Count: 12; Weight: 4.5."), after a
 * line naming the table and its columns; long tables continue in further parts of about 2,000 characters.
 * This is the table's summary when no language model writes one (docs/corpora.md).
 */
export function tableTexts(table: DocumentTable): string[] {
  const header = table.data.headers[0]?.map(cellText) ?? [];
  const intro = [table.title, table.description].filter(Boolean).join('. ');
  const head = `${intro ? `${intro}. ` : ''}Table with ${table.data.rows.length} rows${header.length ? ` and columns ${header.join(', ')}` : ''}.`;
  const rows = table.data.rows.map((r) => `${r.map((c, i) => (header[i] ? `${header[i]}: ${cellText(c)}` : cellText(c))).join('; ')}.`);
  const out: string[] = [];
  let current = head;
  for (const row of rows) {
    if (current.length + row.length + 1 > TABLE_PART_CHARS && current) {
      out.push(current);
      current = row;
    } else current = current ? `${current} ${row}` : row;
  }
  if (current) out.push(current);
  return out;
}

/** Every table and image of a document in the order of its parts: sections' first, then the document's own. */
export function attachmentsOf(input: AttachmentOwner): { tables: DocumentTable[]; images: DocumentImage[] } {
  const tables: DocumentTable[] = [];
  const images: DocumentImage[] = [];
  const walk = (sections: readonly AttachmentOwner[]) => {
    for (const s of sections) {
      tables.push(...(s.tables ?? []));
      images.push(...(s.images ?? []));
      walk(s.sections ?? []);
    }
  };
  walk(input.sections ?? []);
  tables.push(...(input.tables ?? []));
  images.push(...(input.images ?? []));
  return { tables, images };
}

/** Ids unique per kind, parts naming only tables and images the document has, images within the size limit. */
export function checkAttachments(input: AttachmentOwner, tables: readonly DocumentTable[], images: readonly DocumentImage[]): number {
  for (const [field, ids] of [['tables', tables.map((t) => t.id)], ['images', images.map((i) => i.id)]] as const) {
    const dup = ids.find((id, i) => ids.indexOf(id) !== i);
    if (dup !== undefined) throw invalid('document.duplicate_attachment_id', `Two ${field} of the document have the id "${dup}"`, { [field]: `duplicate id "${dup}"` });
  }
  (input.parts ?? []).forEach((p, i) => {
    if (p.tableId !== undefined && !tables.some((t) => t.id === p.tableId)) {
      throw invalid('document.unknown_table', `Part ${i} names table "${p.tableId}", which the document does not have`, { [`document_parts.${i}.table_id`]: 'no such table in the document' });
    }
    if (p.imageId !== undefined && !images.some((m) => m.id === p.imageId)) {
      throw invalid('document.unknown_image', `Part ${i} names image "${p.imageId}", which the document does not have`, { [`document_parts.${i}.image_id`]: 'no such image in the document' });
    }
  });
  let bytes = 0;
  for (const image of images) {
    const size = Buffer.byteLength(image.data, 'base64');
    if (size > MAX_IMAGE_BYTES) throw invalid('document.image_too_large', `Image "${image.id}" has ${size} bytes; the limit is ${MAX_IMAGE_BYTES}`, { images: `image "${image.id}" too large` });
    bytes += size;
  }
  return bytes;
}

