export type { SourceFetchJob, SourceFetchResult } from '../../application/sources.port';
