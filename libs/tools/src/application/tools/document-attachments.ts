import { createHash } from 'node:crypto';
import { DOCUMENT_IMAGES, DocumentRow, ImageRow, imageReadId } from '@lib/corpora/read-models';
import type { ReadStore } from '@lib/platform';

/** How a tool stores bytes as a session artifact (ToolContext.storeArtifact). */
export type StoreArtifact = (file: { readonly artifactId?: string; readonly filename: string; readonly mimeType: string; readonly bytes: Buffer; readonly metadata: Record<string, unknown> }) => Promise<string>;

/** The artifact id of a document's table or image in any session: derived, so storing it again makes no copy. */
const attachmentArtifactId = (corpus: string, documentId: string, kind: string, part: string) => `art_doc_${createHash('sha256').update(`${corpus}\u0000${documentId}\u0000${kind}\u0000${part}`).digest('hex').slice(0, 20)}`;

/** A document's table as a JSON session artifact, named for the model. */
export async function storeTable(store: StoreArtifact, corpus: string, documentId: string, t: NonNullable<DocumentRow['tables']>[number]): Promise<Record<string, unknown>> {
  const stored = await store({ artifactId: attachmentArtifactId(corpus, documentId, 'table', t.id), filename: `${documentId}-${t.id}.json`, mimeType: 'application/json', bytes: Buffer.from(JSON.stringify(t, null, 2)), metadata: { source: 'document_table', corpus_key: corpus, document_id: documentId, table_id: t.id } });
  return { table_id: t.id, ...(t.title ? { title: t.title } : {}), artifact_id: stored };
}

/** A document's image as a session artifact (its bytes), named for the model; undefined when its data is gone. */
export async function storeImage(store: StoreArtifact, reads: ReadStore, corpus: string, documentId: string, meta: NonNullable<DocumentRow['images']>[number]): Promise<Record<string, unknown> | undefined> {
  const image = await reads.get<ImageRow>(DOCUMENT_IMAGES, imageReadId(corpus, documentId, meta.id));
  if (!image) return undefined;
  const stored = await store({ artifactId: attachmentArtifactId(corpus, documentId, 'image', meta.id), filename: `${documentId}-${meta.id}`, mimeType: image.mimeType, bytes: Buffer.from(image.data, 'base64'), metadata: { source: 'document_image', corpus_key: corpus, document_id: documentId, image_id: meta.id } });
  return { image_id: meta.id, ...(meta.title ? { title: meta.title } : {}), ...(meta.caption ? { caption: meta.caption } : {}), mime_type: image.mimeType, artifact_id: stored };
}
