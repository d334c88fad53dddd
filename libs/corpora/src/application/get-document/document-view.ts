import type { DocumentStats } from '../../domain/document';
import { DocumentRow, imageView } from '../../read-models';

/** Text characters and image bytes; metadata apart, as the reference API reports them. */
export const storageUsage = (stats: DocumentStats): Record<string, number> => ({
  bytes_used: stats.characters + (stats.imageBytes ?? 0),
  metadata_bytes_used: stats.metadataBytes,
});

/**
 * The reference's `Document` for a stored row: its tables, images (metadata only: the bytes are fetched one
 * image at a time) and parts. Used by the get and by the create and upload responses, which build the row from
 * the event they appended rather than read it back (the projection may not have caught up).
 */
export function documentView(row: DocumentRow): Record<string, unknown> {
  return {
    id: row.document_id,
    metadata: row.metadata,
    ...(row.title ? { title: row.title } : {}),
    tables: (row.tables ?? []).map((t) => ({ id: t.id, ...(t.title ? { title: t.title } : {}), ...(t.description ? { description: t.description } : {}), data: t.data })),
    images: (row.images ?? []).map(imageView),
    parts: row.parts.map((p) => ({
      text: p.text,
      metadata: p.sectionTitle !== undefined ? { ...p.metadata, section: p.sectionTitle } : p.metadata,
      ...(p.context !== undefined ? { context: p.context } : {}),
      ...(p.tableId !== undefined ? { table_id: p.tableId } : {}),
      ...(p.imageId !== undefined ? { image_id: p.imageId } : {}),
    })),
    storage_usage: storageUsage(row.stats),
  };
}
