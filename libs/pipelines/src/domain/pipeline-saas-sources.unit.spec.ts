import fc from 'fast-check';
import { boxFolderId, parseBoxSource } from './pipeline-box-source';
import { driveFolderId, parseGoogleDriveSource } from './pipeline-google-drive-source';
import { parseSharepointSource } from './pipeline-sharepoint-source';

describe('SaaS pipeline sources: settings', () => {
  it('takes a Box folder id from an id or a Box folder URL, and nothing else', () => {
    expect(boxFolderId('323805611740')).toBe('323805611740');
    expect(boxFolderId('https://app.box.com/folder/123')).toBe('123');
    expect(boxFolderId('https://acme.app.box.com/folder/123?s=abc')).toBe('123');
    expect(boxFolderId('https://app.box.com.evil.test/folder/123')).toBeNull();
    expect(boxFolderId('http://app.box.com/folder/123')).toBeNull();
    fc.assert(fc.property(fc.string(), (s) => boxFolderId(s) === null || /^\d{1,20}$/.test(boxFolderId(s)!)));
  });

  it('takes a Drive folder id from a folder URL only', () => {
    expect(driveFolderId('https://drive.google.com/drive/folders/0AHk_z9_Bcg-aUk9PVA')).toBe('0AHk_z9_Bcg-aUk9PVA');
    expect(driveFolderId('https://drive.google.com/drive/u/1/folders/1A2B3C4D5E6F7G8H9I0J?usp=sharing')).toBe('1A2B3C4D5E6F7G8H9I0J');
    expect(driveFolderId('https://drive.google.com/file/d/1A2B3C4D5E6F7G8H9I0J/view')).toBeNull();
    fc.assert(fc.property(fc.string(), (s) => driveFolderId(s) === null || /^[A-Za-z0-9_-]+$/.test(driveFolderId(s)!)));
  });

  it('merges a PATCH into the stored settings: box auth fields, sharepoint nulls clear, drive scopes replace', () => {
    const box = parseBoxSource({ type: 'box', auth: { type: 'ccg', client_id: 'abc', enterprise_id: '1' } });
    expect(box).toEqual({ type: 'box', folder_id: '0', auth: { type: 'ccg', client_id: 'abc', enterprise_id: '1' } });
    expect(parseBoxSource({ type: 'box', auth: { enterprise_id: '2' } }, box as never)).toMatchObject({ auth: { client_id: 'abc', enterprise_id: '2' } });
    const sp = parseSharepointSource({ type: 'sharepoint', site_url: 'https://contoso.sharepoint.com/sites/legal/', tenant_id: 'contoso.onmicrosoft.com', client_id: '0a1b2c3d-4e5f-6789-abcd-ef0123456789', folder_path: 'Contracts/2026/' });
    expect(sp).toMatchObject({ site_url: 'https://contoso.sharepoint.com/sites/legal', folder_path: '/Contracts/2026' });
    expect(parseSharepointSource({ type: 'sharepoint', folder_path: null }, sp as never)).not.toHaveProperty('folder_path');
    const gd = parseGoogleDriveSource({ type: 'google_drive', client_email: 'a@b.iam.gserviceaccount.com', scopes: [{ type: 'my_drive', subject_email: 'u@example.com' }] });
    expect(parseGoogleDriveSource({ type: 'google_drive', scopes: [{ type: 'shared', url: 'https://drive.google.com/drive/folders/0AHk_z9_Bcg' }] }, gd as never)).toEqual({ type: 'google_drive', client_email: 'a@b.iam.gserviceaccount.com', scopes: [{ type: 'shared', url: 'https://drive.google.com/drive/folders/0AHk_z9_Bcg' }] });
  });

  it('names the field of a bad value', () => {
    expect(parseSharepointSource({ type: 'sharepoint', site_url: 'https://x.sharepoint.com', tenant_id: 't/../x', client_id: 'c' })).toEqual(['source.tenant_id', expect.any(String)]);
    expect(parseBoxSource({ type: 'box', auth: 'secret' })).toEqual(['source.auth', expect.any(String)]);
    expect(parseGoogleDriveSource({ type: 'google_drive', client_email: 'a@b.co', scopes: [{ type: 'shared', url: 'https://drive.google.com/drive/folders/0AHk_z9_Bcg', extra: 1 }] })).toEqual(['source.scopes[0].extra', expect.any(String)]);
  });
});
