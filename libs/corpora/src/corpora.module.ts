import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { ExtractionPool } from '@lib/extraction';
import { SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { CreateCorpusHandler } from './application/create-corpus/create-corpus';
import { DeleteCorpusHandler } from './application/delete-corpus/delete-corpus';
import { DeleteDocumentHandler } from './application/delete-document/delete-document';
import { GetCorpusHandler } from './application/get-corpus/get-corpus';
import { ComputeCorpusSizeHandler } from './application/compute-size/compute-size';
import { GetFilterAttributeStatsHandler } from './application/filter-stats/filter-stats';
import { GetDocumentHandler, GetImageHandler } from './application/get-document/get-document';
import { IndexDocumentHandler } from './application/index-document/index-document';
import { ListCorporaHandler } from './application/list-corpora/list-corpora';
import { ListDocumentsHandler } from './application/list-documents/list-documents';
import { MetadataQueryHandler } from './application/metadata-query/metadata-query';
import { UpdateCorpusHandler } from './application/update-corpus/update-corpus';
import { ResetCorpusHandler } from './application/reset-corpus/reset-corpus';
import { UpdateDocumentMetadataHandler } from './application/update-document-metadata/update-document-metadata';
import { QueueBulkDeleteHandler, QueueBulkMetadataUpdateHandler, QueueReplaceFilterAttributesHandler } from './application/jobs/queue-jobs';
import { ListFilterValuesHandler } from './application/filter-values/filter-values';
import { UploadFileHandler } from './application/upload-file/upload-file';
import { GetJobHandler, ListJobsHandler } from './application/jobs/job-queries';

/** Corpora, documents and search: command and query handlers. Ports come from the platform module. */
@Module({
  imports: [CqrsModule],
  providers: [
    CreateCorpusHandler,
    UpdateCorpusHandler,
    DeleteCorpusHandler,
    IndexDocumentHandler,
    DeleteDocumentHandler,
    GetCorpusHandler,
    ListCorporaHandler,
    GetDocumentHandler,
    GetImageHandler,
    GetFilterAttributeStatsHandler,
    ComputeCorpusSizeHandler,
    ListDocumentsHandler,
    MetadataQueryHandler,
    ResetCorpusHandler,
    UpdateDocumentMetadataHandler,
    QueueBulkMetadataUpdateHandler,
    QueueBulkDeleteHandler,
    QueueReplaceFilterAttributesHandler,
    GetJobHandler,
    ListJobsHandler,
    ListFilterValuesHandler,
    UploadFileHandler,
    {
      provide: ExtractionPool,
      inject: [SERVICE_CONFIG],
      useFactory: (config: ServiceConfig) => new ExtractionPool({ workers: config.extractionWorkers, timeoutMs: config.extractionTimeoutMs }),
    },
  ],
  // The worker wing's pipeline runner extracts fetched files with the same pool.
  exports: [ExtractionPool],
})
export class CorporaModule {}
