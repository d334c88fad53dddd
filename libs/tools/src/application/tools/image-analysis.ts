import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import sharp from 'sharp';
import type { ToolConfig } from '../../domain/tool-config';
import { ArtifactBytes } from './artifact-bytes.port';
import type { Tool, ToolContext, ToolDefinition, ToolResult } from './tool.port';
import { MAX_IMAGE_BYTES } from './image-read';

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });
const DETAILS = ['auto', 'low', 'high'] as const;
type Detail = (typeof DETAILS)[number];

/** Below this shorter side an image is upscaled (at most 4×) so that small print becomes legible. */
const UPSCALE_BELOW_PX = 512;
/** The longest side the whole image is shown at; `low` shows it at most this small. */
const FULL_MAX_PX = 2048;
const LOW_MAX_PX = 512;
/** Tiles of a large image at `high` (or `auto` past TILE_ABOVE_PX): this size, overlapping, at most MAX_TILES. */
const TILE_PX = 1024;
const TILE_OVERLAP_PX = 64;
const TILE_ABOVE_PX = 1536;
const MAX_TILES = 16;
/** Images larger than this many pixels are refused before decoding (a decompression bomb). */
const MAX_INPUT_PIXELS = 100_000_000;

interface Preprocessing {
  readonly upscale: boolean;
  readonly enhance_contrast: boolean;
  readonly sharpen: boolean;
  readonly tile: boolean;
}

/**
 * `image_analysis`: an image artifact prepared for a model to read closely, then put before it like `image_read`.
 * Preprocessing (each step on by default, switched off in `tool_configuration.preprocessing`): a small image is
 * upscaled, contrast is stretched to the full range, edges are sharpened; at `high` detail (or `auto` on a large
 * image) the image is also cut into overlapping tiles the model reads one by one. The prepared images are session
 * artifacts (PNG) named in the output; their ids derive from the source and the settings, so asking again stores
 * nothing new. Image work is libvips through `sharp`.
 */
@Injectable()
export class ImageAnalysisTool implements Tool {
  constructor(private readonly store: ArtifactBytes) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? 'Examines an image of the session closely (small print, diagrams, scans): the image is enhanced and, at high detail, cut into tiles you then see.',
        parameters: { type: 'object', properties: { artifact_id: { type: 'string' }, detail: { type: 'string', enum: [...DETAILS] } }, required: ['artifact_id'] },
      },
    };
  }

  async run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    if (!ctx.recordImageRead || !ctx.artifactsNow || !ctx.storeArtifact) return err('images are analysed within a session');
    if (!ctx.modelTakesImages) return err("the agent's model does not take images (its registration's capabilities.image_support is false)");
    const detail = (args.detail ?? 'auto') as Detail;
    if (!DETAILS.includes(detail)) return err('detail must be auto, low or high');
    const source = ctx.artifactsNow().find((a) => a.artifactId === args.artifact_id);
    if (!source) return err(`no artifact "${String(args.artifact_id)}" in this session`);
    if (!source.mimeType.startsWith('image/')) return err(`artifact ${source.artifactId} is ${source.mimeType}, not an image`);
    if (source.sizeBytes > MAX_IMAGE_BYTES) return err(`artifact ${source.artifactId} has ${source.sizeBytes} bytes, over ${MAX_IMAGE_BYTES}`);
    const options = preprocessingOf(config);
    const bytes = await this.store.get(source.sha256);
    let meta: sharp.Metadata;
    try {
      meta = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    } catch (e) {
      return err(`artifact ${source.artifactId} could not be read as an image: ${(e as Error).message}`);
    }
    if (!meta.width || !meta.height) return err(`artifact ${source.artifactId} has no dimensions`);

    const applied: string[] = [];
    const shorter = Math.min(meta.width, meta.height);
    const factor = options.upscale && shorter < UPSCALE_BELOW_PX ? Math.min(4, UPSCALE_BELOW_PX / shorter) : 1;
    let image = sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).rotate();
    if (factor > 1) {
      image = image.resize(Math.round(meta.width * factor), Math.round(meta.height * factor), { kernel: 'lanczos3' });
      applied.push(`upscaled ${factor.toFixed(2)}x`);
    }
    if (options.enhance_contrast) {
      image = image.normalise();
      applied.push('contrast stretched to the full range');
    }
    if (options.sharpen) {
      image = image.sharpen();
      applied.push('sharpened');
    }
    let prepared: Buffer;
    try {
      prepared = await image.png().toBuffer();
    } catch (e) {
      return err(`artifact ${source.artifactId} could not be processed: ${(e as Error).message}`);
    }
    const width = Math.round(meta.width * factor);
    const height = Math.round(meta.height * factor);
    const key = createHash('sha256').update(`${source.sha256}\u0000${detail}\u0000${JSON.stringify(options)}`).digest('hex').slice(0, 16);
    const store = async (suffix: string, png: Buffer, metadata: Record<string, unknown>) =>
      ctx.storeArtifact!({ artifactId: `art_img_${key}_${suffix}`, filename: `${source.filename.replace(/\.[^.]*$/, '')}-${suffix}.png`, mimeType: 'image/png', bytes: png, metadata: { source: 'image_analysis', source_artifact_id: source.artifactId, ...metadata } });

    const fullMax = detail === 'low' ? LOW_MAX_PX : FULL_MAX_PX;
    const fullPng = Math.max(width, height) > fullMax ? await sharp(prepared).resize(fullMax, fullMax, { fit: 'inside' }).png().toBuffer() : prepared;
    const fullMeta = await sharp(fullPng).metadata();
    const full = { artifact_id: await store('full', fullPng, { part: 'full' }), width: fullMeta.width, height: fullMeta.height };
    await ctx.recordImageRead(full.artifact_id, detail === 'low' ? 'low' : 'high');

    const tiles: { artifact_id: string; left: number; top: number; width: number; height: number }[] = [];
    const tiling = options.tile && (detail === 'high' || (detail === 'auto' && Math.max(width, height) > TILE_ABOVE_PX)) && Math.max(width, height) > TILE_PX;
    if (tiling) {
      const step = TILE_PX - TILE_OVERLAP_PX;
      const lefts = starts(width, step);
      const tops = starts(height, step);
      if (lefts.length * tops.length > MAX_TILES) applied.push(`tiling stopped at ${MAX_TILES} tiles (the image needs ${lefts.length * tops.length})`);
      outer: for (const top of tops) {
        for (const left of lefts) {
          if (tiles.length >= MAX_TILES) break outer;
          const w = Math.min(TILE_PX, width - left);
          const h = Math.min(TILE_PX, height - top);
          const tile = await sharp(prepared).extract({ left, top, width: w, height: h }).png().toBuffer();
          const id = await store(`tile-${top}-${left}`, tile, { part: 'tile', left, top, width: w, height: h });
          await ctx.recordImageRead(id, 'high');
          tiles.push({ artifact_id: id, left, top, width: w, height: h });
        }
      }
      applied.push(`cut into ${tiles.length} tiles of up to ${TILE_PX} px`);
    }
    return { output: { artifact_id: source.artifactId, detail, original: { width: meta.width, height: meta.height, format: meta.format }, analyzed: full, tiles, preprocessing: applied }, error: false };
  }
}

/** Where tiles start along one side: every `step`, the last one flush with the edge. */
function starts(size: number, step: number): number[] {
  if (size <= TILE_PX) return [0];
  const out: number[] = [];
  for (let s = 0; s + TILE_PX < size; s += step) out.push(s);
  out.push(size - TILE_PX);
  return [...new Set(out)];
}

function preprocessingOf(config: ToolConfig): Preprocessing {
  const p = ((config.tool_configuration as { preprocessing?: Partial<Preprocessing> } | undefined)?.preprocessing ?? {}) as Partial<Preprocessing>;
  return { upscale: p.upscale !== false, enhance_contrast: p.enhance_contrast !== false, sharpen: p.sharpen !== false, tile: p.tile !== false };
}
