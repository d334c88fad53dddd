import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ENCODER_REGISTRY, EncoderDescriptor, EncoderRegistry } from '@lib/encoders';
import { invalid } from '@lib/platform';
import { offsetOfPageKey, offsetPageKey, pageLimit } from '../corpora/paging';
import { Policy } from '../http/policy';

/** The encoders this service can embed with (`GET /v2/encoders`), in the reference API's shape. */
@Controller('v2/encoders')
export class EncodersController {
  constructor(@Inject(ENCODER_REGISTRY) private readonly registry: EncoderRegistry) {}

  /** The reference allows corpus_viewer … owner, the same callers as the LLM list: `llm.use` says exactly that. */
  @Get()
  @Policy('llm.use')
  list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string): { encoders: EncoderDescriptor[]; metadata: { page_key?: string } } {
    let regex: RegExp | undefined;
    try {
      regex = filter ? new RegExp(filter) : undefined;
    } catch {
      throw invalid('request.invalid', 'filter must be a valid regular expression', { filter: 'invalid regular expression' });
    }
    const size = pageLimit(limit, 10, 100);
    const offset = offsetOfPageKey(pageKey);
    const all = this.registry.list().filter((e) => !regex || regex.test(e.name) || regex.test(e.description));
    const encoders = all.slice(offset, offset + size);
    return { encoders, metadata: offset + size < all.length ? { page_key: offsetPageKey(offset + size) } : {} };
  }
}
