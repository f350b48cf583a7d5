import { apiCall } from './http';
import type { Credential, ListPage } from './types';

export function listCredentials(signal?: AbortSignal): Promise<ListPage<Credential>> {
  return apiCall('GET', '/admin/v1/credentials', signal === undefined ? {} : { signal });
}

export type CredentialAction = 'reset' | 'disable' | 'enable';

/** Answers the credential as it now is. */
export function changeCredential(id: string, action: CredentialAction): Promise<Credential> {
  return apiCall('POST', `/admin/v1/credentials/${encodeURIComponent(id)}/${action}`);
}
