import { Injectable } from '@nestjs/common';
import type { ToolConfig } from '../../domain/tool-config';
import type { Tool, ToolContext, ToolDefinition, ToolResult } from './tool.port';

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });
/** Largest image put before the model (the usual providers' limit per image). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const DETAILS = ['auto', 'low', 'high'] as const;

/**
 * `image_read`: puts an image artifact (uploaded, or made by a tool) before the model. The call records an
 * `image_read` event; from then on the model reads the image after the tool's output (tool messages cannot carry
 * images), at the asked `detail`. Refused when the agent's model does not take images.
 */
@Injectable()
export class ImageReadTool implements Tool {
  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? 'Looks at an image of the session (an uploaded file or a tool\'s output), by its artifact id.',
        parameters: { type: 'object', properties: { artifact_id: { type: 'string' }, detail: { type: 'string', enum: [...DETAILS] } }, required: ['artifact_id'] },
      },
    };
  }

  async run(_config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    if (!ctx.recordImageRead || !ctx.artifactsNow) return err('images are read within a session');
    if (!ctx.modelTakesImages) return err("the agent's model does not take images (its registration's capabilities.image_support is false)");
    const detail = (args.detail ?? 'auto') as (typeof DETAILS)[number];
    if (!DETAILS.includes(detail)) return err('detail must be auto, low or high');
    const artifact = ctx.artifactsNow().find((a) => a.artifactId === args.artifact_id);
    if (!artifact) return err(`no artifact "${String(args.artifact_id)}" in this session`);
    if (!/^image\/(png|jpeg|gif|webp)$/.test(artifact.mimeType)) return err(`artifact ${artifact.artifactId} is ${artifact.mimeType}, not a PNG, JPEG, GIF or WebP image`);
    if (artifact.sizeBytes > MAX_IMAGE_BYTES) return err(`artifact ${artifact.artifactId} has ${artifact.sizeBytes} bytes, over ${MAX_IMAGE_BYTES}`);
    await ctx.recordImageRead(artifact.artifactId, detail);
    return { output: { artifact_id: artifact.artifactId, filename: artifact.filename, detail, loaded: true }, error: false };
  }
}
