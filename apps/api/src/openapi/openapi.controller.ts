import { Controller, Get, Inject } from '@nestjs/common';
import { Policy } from '../http/policy';
import { buildOpenApiDocument, OpenApiDocument } from './document';

/** The controllers the document describes (the app's own list, given by the module: no import cycle). */
export const OPENAPI_CONTROLLERS = Symbol('OPENAPI_CONTROLLERS');

/**
 * The service's OpenAPI document (docs/openapi.md). Public, as the reference's: it says which routes and fields this
 * version of the code has, the same for every deployment, and holds no data. Built on the first request, never at
 * start-up, then the same object is served.
 */
@Controller('v2')
export class OpenApiController {
  private document?: OpenApiDocument;

  constructor(@Inject(OPENAPI_CONTROLLERS) private readonly controllers: readonly Function[]) {}

  @Get('openapi.json')
  @Policy('public')
  get(): OpenApiDocument {
    return (this.document ??= buildOpenApiDocument(this.controllers));
  }
}
