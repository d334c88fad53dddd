import JSZip from 'jszip';
import { ExtractionError } from '../../extracted';

/** Opens a zip container (odt, epub); a file that is not a readable zip is corrupt. */
export async function openZip(file: Buffer, format: string): Promise<JSZip> {
  try {
    return await JSZip.loadAsync(file);
  } catch (e) {
    throw new ExtractionError('corrupt', `The ${format} file is not a readable zip container: ${(e as Error).message}`);
  }
}

/** A member of the container as UTF-8 text, or undefined when the container has no such member. */
export async function readMember(zip: JSZip, path: string, format: string): Promise<string | undefined> {
  const member = zip.file(path);
  if (!member) return undefined;
  try {
    return await member.async('string');
  } catch (e) {
    throw new ExtractionError('corrupt', `The ${format} file's ${path} cannot be decompressed: ${(e as Error).message}`);
  }
}
