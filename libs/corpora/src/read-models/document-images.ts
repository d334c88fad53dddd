import { collection } from '@lib/platform/projections';
import type { DocumentImage } from '../domain/document';
import type { DocumentIndexed } from './documents';

/** Image data, one row per image, apart from the document row so that lists and gets do not carry it (projections/documents). */
export type ImageRow = Omit<DocumentImage, 'id'> & {
  readonly id: string;
  readonly corpus_key: string;
  readonly document_id: string;
  readonly image_id: string;
};

export const DOCUMENT_IMAGES = collection<ImageRow>('document_images');

/** Image ids hold no "/" and document ids in a read id are followed by one, so these cannot collide either. */
export const imageReadId = (corpusKey: string, documentId: string, imageId: string): string => `${corpusKey}/${documentId}/${imageId}`;

/** The rows a `DocumentIndexed` makes for its images. */
export const imageRows = (d: DocumentIndexed): ImageRow[] =>
  (d.images ?? []).map(({ id: imageId, ...image }) => ({ id: imageReadId(d.corpusKey, d.documentId, imageId), corpus_key: d.corpusKey, document_id: d.documentId, image_id: imageId, ...image }));

/** The reference API's ImageMetadata, and with `data` its Image. */
export function imageView(image: Omit<DocumentImage, 'data'> & { data?: string }): Record<string, unknown> {
  return {
    id: image.id,
    ...(image.title !== undefined ? { title: image.title } : {}),
    ...(image.caption !== undefined ? { caption: image.caption } : {}),
    ...(image.description !== undefined ? { description: image.description } : {}),
    ...(image.data !== undefined ? { image_data: { data: image.data, mime_type: image.mimeType } } : { mime_type: image.mimeType }),
  };
}
