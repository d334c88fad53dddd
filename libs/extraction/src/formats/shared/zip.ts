import JSZip from 'jszip';
import { ExtractionError } from '../../extracted';
import { EXTRACTION_LIMITS, tooLarge } from '../../limits';

/**
 * What jszip has beyond its typings: the size a member's central-directory entry declares, and the chunked
 * inflation stream behind `async()` (jszip's documented streaming read, typed only on its generate side).
 */
type Member = JSZip.JSZipObject & {
  _data?: { uncompressedSize?: number };
  internalStream(type: 'uint8array'): JSZip.JSZipStreamHelper<Uint8Array>;
};

/**
 * Opens a zip container (docx, pptx, odt, epub); a file that is not a readable zip is corrupt, one that inflates
 * past the limits (EXTRACTION_LIMITS) is too large. The declared sizes are checked first (a cheap refusal of the
 * honest bomb), then every member is inflated once with a running count, since declared sizes can lie: after this,
 * whoever reads the container (this library, mammoth) inflates at most the limits.
 */
export async function openZip(file: Buffer, format: string): Promise<JSZip> {
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(file);
  } catch (e) {
    throw new ExtractionError('corrupt', `The ${format} file is not a readable zip container: ${(e as Error).message}`);
  }
  const members = Object.values(zip.files).filter((m) => !m.dir) as Member[];
  let declaredTotal = 0;
  for (const member of members) {
    const declared = member._data?.uncompressedSize ?? 0;
    checkMember(format, member.name, declared);
    declaredTotal += declared;
    checkTotal(format, declaredTotal);
  }
  let inflatedTotal = 0;
  for (const member of members) inflatedTotal += await inflatedSize(member, format, inflatedTotal);
  return zip;
}

function checkMember(format: string, name: string, bytes: number): void {
  if (bytes > EXTRACTION_LIMITS.maxInflatedEntryBytes) throw tooLarge(`The ${format} file's ${name} inflates to more than ${EXTRACTION_LIMITS.maxInflatedEntryBytes} bytes`);
}

function checkTotal(format: string, bytes: number): void {
  if (bytes > EXTRACTION_LIMITS.maxInflatedBytes) throw tooLarge(`The ${format} file inflates to more than ${EXTRACTION_LIMITS.maxInflatedBytes} bytes`);
}

/** Inflates one member, counting and discarding its bytes; stops at the first chunk past a limit. */
function inflatedSize(member: Member, format: string, before: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    const stream = member.internalStream('uint8array');
    stream
      .on('data', (chunk: Uint8Array) => {
        bytes += chunk.length;
        try {
          checkMember(format, member.name, bytes);
          checkTotal(format, before + bytes);
        } catch (e) {
          stream.pause();
          reject(e);
        }
      })
      .on('error', (e: Error) => reject(new ExtractionError('corrupt', `The ${format} file's ${member.name} cannot be decompressed: ${e.message}`)))
      .on('end', () => resolve(bytes))
      .resume();
  });
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
