import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { invalid } from '@lib/platform';

/**
 * Query parameters declared as strings arrive as arrays when repeated (`?page_key=a&page_key=b`); handlers
 * typed for one string would then fail on them with a 500. Every such parameter must be given once.
 */
@Injectable()
export class SingleQueryParams implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'query' || !metadata.data || value === undefined || typeof value === 'string') return value;
    if (metadata.metatype === String || metadata.metatype === undefined || metadata.metatype === Object) {
      throw invalid('request.invalid', `The query parameter ${metadata.data} must be given once, as a single value`, { [metadata.data]: 'must be given once' });
    }
    return value;
  }
}
