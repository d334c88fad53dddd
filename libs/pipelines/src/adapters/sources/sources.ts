import type { SourceCatalogue, SourceClient } from '../../application/sources.port';
import type { PipelineSource } from '../../domain/pipeline';
import { parseWebSource } from '../../domain/pipeline-source';
import { parseScimSource } from '../../domain/pipeline-scim-source';
import { parseS3Source } from '../../domain/pipeline-s3-source';
import { parseFileShareSource } from '../../domain/pipeline-file-share-source';
import { isProblem } from '../../domain/pipeline-source';
import { fetchFileShareSource, fileShareProblem } from './file-share/file-share-source';
import { fetchS3Source } from './s3/s3-source';
import { parseConfluenceSource } from '../../domain/pipeline-confluence-source';
import { fetchConfluenceSource } from './confluence/confluence-source';
import { parseWolkenSource } from '../../domain/pipeline-wolken-source';
import { fetchWolkenSource } from './wolken/wolken-source';
import { parseFluidTopicsSource } from '../../domain/pipeline-fluid-topics-source';
import { fetchFluidTopicsSource } from './fluid-topics/fluid-topics-source';
import { fetchScimSource } from './scim/scim-source';
import { parseSharepointSource } from '../../domain/pipeline-sharepoint-source';
import { fetchSharepointSource } from './sharepoint/sharepoint-source';
import { parseBoxSource } from '../../domain/pipeline-box-source';
import { fetchBoxSource } from './box/box-source';
import { parseGoogleDriveSource } from '../../domain/pipeline-google-drive-source';
import { fetchGoogleDriveSource } from './google-drive/google-drive-source';
import { fetchWebSource } from './web/web-source';
import { createPrivateKey } from 'node:crypto';

export type { SourceClient, SourceFetchJob, SourceFetchResult } from '../../application/sources.port';

const web: SourceClient<Extract<PipelineSource, { type: 'web' }>> = { type: 'web', genericAuth: true, parse: parseWebSource, fetch: fetchWebSource };
const scim: SourceClient<Extract<PipelineSource, { type: 'scim' }>> = { type: 'scim', genericAuth: true, parse: parseScimSource, fetch: fetchScimSource };
const s3: SourceClient<Extract<PipelineSource, { type: 's3' }>> = { type: 's3', genericAuth: false, secretFields: [{ path: 'access_key_id', required: true }, { path: 'secret_access_key', required: true }], parse: parseS3Source, fetch: fetchS3Source };
const fileShare: SourceClient<Extract<PipelineSource, { type: 'file_share' }>> = {
  type: 'file_share',
  genericAuth: false,
  parse: (v, base, env) => {
    const parsed = parseFileShareSource(v, base);
    return isProblem(parsed) ? parsed : (fileShareProblem(parsed.path, env) ?? parsed);
  },
  fetch: fetchFileShareSource,
};
const confluence: SourceClient<Extract<PipelineSource, { type: 'confluence' }>> = { type: 'confluence', genericAuth: true, parse: parseConfluenceSource, fetch: fetchConfluenceSource };
const wolken: SourceClient<Extract<PipelineSource, { type: 'wolken_kb' }>> = { type: 'wolken_kb', genericAuth: false, secretFields: [{ path: 'auth_code', required: true }, { path: 'refresh_token', required: true }], parse: parseWolkenSource, fetch: fetchWolkenSource };
const fluidTopics: SourceClient<Extract<PipelineSource, { type: 'fluid_topics' }>> = { type: 'fluid_topics', genericAuth: false, secretFields: [{ path: 'api_key', required: false }], parse: parseFluidTopicsSource, fetch: fetchFluidTopicsSource };
const sharepoint: SourceClient<Extract<PipelineSource, { type: 'sharepoint' }>> = { type: 'sharepoint', genericAuth: false, secretFields: [{ path: 'client_secret', required: true }], parse: parseSharepointSource, fetch: fetchSharepointSource };
const box: SourceClient<Extract<PipelineSource, { type: 'box' }>> = { type: 'box', genericAuth: false, secretFields: [{ path: 'auth.client_secret', required: true }], parse: parseBoxSource, fetch: fetchBoxSource };
const googleDrive: SourceClient<Extract<PipelineSource, { type: 'google_drive' }>> = { type: 'google_drive', genericAuth: false, secretFields: [{ path: 'private_key', required: true, check: pkcs8Problem }], parse: parseGoogleDriveSource, fetch: fetchGoogleDriveSource };

/** Every built source, by type: the catalogue PipelinesModule binds to SOURCE_CATALOGUE. A new source adds its one entry here. */
export const SOURCE_CLIENTS: SourceCatalogue = Object.fromEntries([web, scim, s3, fileShare, confluence, wolken, fluidTopics, sharepoint, box, googleDrive].map((c) => [c.type, c as unknown as SourceClient]));

/** A service account's `private_key` must be the PEM PKCS#8 RSA key Google issues (read without keeping it). */
function pkcs8Problem(pem: string): string | null {
  if (!pem.includes('-----BEGIN PRIVATE KEY-----')) return 'must be the PEM PKCS#8 private key of the service account (-----BEGIN PRIVATE KEY-----)';
  try {
    return createPrivateKey({ key: pem, format: 'pem' }).asymmetricKeyType === 'rsa' ? null : 'must be an RSA private key';
  } catch {
    return 'is not a readable PEM private key';
  }
}
