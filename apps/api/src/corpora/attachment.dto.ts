import { Type } from 'class-transformer';
import { IsOptional, IsString, Matches, MaxLength, MinLength, registerDecorator, ValidateNested, ValidationOptions } from 'class-validator';
import type { DocumentImage, DocumentTable, TableCell } from '@lib/corpora';

const VALUE_FIELDS = ['text_value', 'int_value', 'float_value', 'bool_value'] as const;

/** Why a cell is not the reference API's Cell (exactly one typed value, positive spans), or undefined. */
function cellProblem(cell: unknown): string | undefined {
  if (cell === null || typeof cell !== 'object' || Array.isArray(cell)) return 'must be an object';
  const c = cell as Record<string, unknown>;
  const unknown = Object.keys(c).find((k) => !(VALUE_FIELDS as readonly string[]).includes(k) && k !== 'colspan' && k !== 'rowspan');
  if (unknown) return `unknown field ${unknown}`;
  const values = VALUE_FIELDS.filter((k) => c[k] !== undefined);
  if (values.length !== 1) return 'must have exactly one of text_value, int_value, float_value, bool_value';
  const v = c[values[0]];
  const ok = { text_value: typeof v === 'string', int_value: Number.isSafeInteger(v), float_value: typeof v === 'number' && Number.isFinite(v), bool_value: typeof v === 'boolean' }[values[0]];
  if (!ok) return `${values[0]} has the wrong type`;
  for (const span of ['colspan', 'rowspan']) {
    if (c[span] !== undefined && !(Number.isInteger(c[span]) && (c[span] as number) > 0)) return `${span} must be a positive integer`;
  }
  return undefined;
}

/** An array of rows, each an array of cells. */
function IsCellGrid(options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isCellGrid',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown) => Array.isArray(value) && value.every((row) => Array.isArray(row) && row.every((cell) => cellProblem(cell) === undefined)),
        defaultMessage: (args) => {
          const rows = args?.value;
          if (!Array.isArray(rows)) return `${propertyName} must be an array of rows`;
          for (const [r, row] of rows.entries()) {
            if (!Array.isArray(row)) return `${propertyName}[${r}] must be an array of cells`;
            for (const [i, cell] of row.entries()) {
              const problem = cellProblem(cell);
              if (problem) return `${propertyName}[${r}][${i}] ${problem}`;
            }
          }
          return `${propertyName} must be an array of rows of cells`;
        },
      },
    });
}

export class TableDataDto {
  @IsCellGrid() headers!: TableCell[][];
  @IsCellGrid() rows!: TableCell[][];
}

export class TableDto {
  @IsString() @MinLength(1) @MaxLength(100) id!: string;
  @IsOptional() @IsString() @MaxLength(255) title?: string;
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
  @ValidateNested() @Type(() => TableDataDto) data!: TableDataDto;
}

/**
 * Standard Base64 (padded), checked by one pass over the characters. class-validator's `IsBase64` runs a
 * backtracking regular expression that overflows V8's stack on a multi-megabyte image (a 500 seen in CI).
 */
export function isBase64(value: unknown): boolean {
  if (typeof value !== 'string' || value.length % 4 !== 0) return false;
  const end = value.endsWith('==') ? value.length - 2 : value.endsWith('=') ? value.length - 1 : value.length;
  for (let i = 0; i < end; i++) {
    const c = value.charCodeAt(i);
    const ok = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
    if (!ok) return false;
  }
  return true;
}

function IsBase64Data(options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({ name: 'isBase64Data', target: target.constructor, propertyName, options, validator: { validate: isBase64 } });
}

export class ImageDataDto {
  @IsString() @IsBase64Data({ message: 'data must be Base64' }) data!: string;
  @Matches(/^image\/[a-z0-9.+-]+$/i, { message: 'mime_type must be an image type such as image/png' }) mime_type!: string;
}

export class ImageDto {
  @IsString() @MinLength(1) @MaxLength(100) @Matches(/^[^\p{Cc}/\\]+$/u, { message: 'id must not contain slashes or control characters' }) id!: string;
  @IsOptional() @IsString() @MaxLength(255) title?: string;
  @IsOptional() @IsString() @MaxLength(1000) caption?: string;
  @IsOptional() @IsString() @MaxLength(10_000) description?: string;
  @ValidateNested() @Type(() => ImageDataDto) image_data!: ImageDataDto;
}

export const toTable = (t: TableDto): DocumentTable => ({
  id: t.id,
  ...(t.title !== undefined ? { title: t.title } : {}),
  ...(t.description !== undefined ? { description: t.description } : {}),
  data: { headers: t.data.headers, rows: t.data.rows },
});

export const toImage = (i: ImageDto): DocumentImage => ({
  id: i.id,
  ...(i.title !== undefined ? { title: i.title } : {}),
  ...(i.caption !== undefined ? { caption: i.caption } : {}),
  ...(i.description !== undefined ? { description: i.description } : {}),
  mimeType: i.image_data.mime_type.toLowerCase(),
  data: i.image_data.data,
});
