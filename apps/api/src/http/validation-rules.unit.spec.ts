import 'reflect-metadata';
import { Type } from 'class-transformer';
import { ArrayMaxSize, getMetadataStorage, IsInt, IsOptional, IsString, MaxLength, Min, ValidateNested } from 'class-validator';
import { checkDto } from './validation';

class Part {
  @IsString()
  @MaxLength(10)
  text!: string;
}

class Base {
  @IsOptional()
  @IsInt()
  @Min(0)
  version?: number;
}

class Doc extends Base {
  @IsString()
  id!: string;

  @ValidateNested({ each: true })
  @Type(() => Part)
  @ArrayMaxSize(50)
  parts!: Part[];
}

describe('validation rules remembered per class (validation-rules.ts)', () => {
  it('reports the same field errors, nested and inherited, on every call', () => {
    const body = { id: 'd', version: -1, parts: [{ text: 'ok' }, { text: 'far too long a text' }, { text: 3 }], extra: true };
    const expected = {
      version: 'version must not be less than 0',
      'parts.1.text': 'text must be shorter than or equal to 10 characters',
      'parts.2.text': 'text must be shorter than or equal to 10 characters; text must be a string',
      extra: 'property extra should not exist',
    };
    for (let i = 0; i < 3; i++) expect(checkDto(Doc, body, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true }).errors).toEqual(expected);
    expect(checkDto(Doc, { id: 'd', parts: [{ text: 'ok' }] }, { whitelist: true, forbidNonWhitelisted: true }).errors).toEqual({});
  });

  it('resolves a class once per set of options: the second lookup is the same list', () => {
    const storage = getMetadataStorage();
    const first = storage.getTargetValidationMetadatas(Doc, '', false, false);
    expect(first.map((m) => m.propertyName).sort()).toEqual(['id', 'parts', 'parts', 'version', 'version', 'version'].sort());
    expect(storage.getTargetValidationMetadatas(Doc, '', false, false)).toBe(first);
    expect(storage.getTargetValidationMetadatas(Doc, '', true, false)).not.toBe(first); // other options, own entry
  });

  it('sees a rule registered after a lookup (a class loaded later)', () => {
    const storage = getMetadataStorage();
    const before = storage.getTargetValidationMetadatas(Base, '', false, false);
    class Later extends Base {
      @IsString()
      name!: string;
    }
    expect(storage.getTargetValidationMetadatas(Base, '', false, false)).not.toBe(before);
    expect(checkDto(Later, { name: 4, version: 1 }, { whitelist: true }).errors).toEqual({ name: 'name must be a string' });
  });
});
