import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import type { Clock } from '../../clock.js';

/** How long fetched keys are trusted before they are fetched again. */
const TTL_MS = 60 * 60_000;
/** An unknown key id refetches the keys at most this often: made-up ids cannot flood GitHub. */
const REFETCH_MIN_MS = 60_000;
const FETCH_TIMEOUT_MS = 5_000;
/** The keys document is a few keys of a few hundred bytes each. */
const MAX_DOCUMENT_BYTES = 64 * 1024;
/** Longer headers are not GitHub's: refused before any work. */
const MAX_KEY_ID = 200;
const MAX_SIGNATURE = 200;

export interface GitHubKeysOptions {
  /** LEAK_GITHUB_KEYS_URL. */
  readonly url: string;
  readonly clock: Clock;
  readonly onError: (error: unknown, context: string) => void;
}

/** The two headers GitHub signs a report with; absent ones are undefined. */
export interface GitHubSignature {
  readonly keyId: string | undefined;
  readonly signature: string | undefined;
}

/**
 * GitHub secret scanning's signature check: ECDSA P-256 with SHA-256 over the raw body, by the key
 * named in Github-Public-Key-Identifier, the signature base64 DER in Github-Public-Key-Signature.
 * The keys are fetched from the configured URL and cached.
 */
export class GitHubKeys {
  private keys = new Map<string, KeyObject>();
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | null = null;

  constructor(private readonly options: GitHubKeysOptions) {}

  /** True only when the signature is GitHub's over exactly `body`; any doubt is false. */
  async verified(body: Buffer, { keyId, signature }: GitHubSignature): Promise<boolean> {
    if (!keyId || !signature || keyId.length > MAX_KEY_ID || signature.length > MAX_SIGNATURE) return false;
    const key = await this.key(keyId);
    if (!key) return false;
    try {
      return verify('sha256', body, { key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
    } catch {
      return false;
    }
  }

  private async key(id: string): Promise<KeyObject | undefined> {
    const age = this.options.clock.now() - this.fetchedAt;
    if (age >= TTL_MS || (!this.keys.has(id) && age >= REFETCH_MIN_MS)) await this.refresh();
    return this.keys.get(id);
  }

  /** One fetch at a time; a failed one keeps the keys already held and waits as long as a success. */
  private refresh(): Promise<void> {
    this.refreshing ??= this.fetchKeys()
      .then((keys) => {
        this.keys = keys;
      })
      .catch((error: unknown) => this.options.onError(error, 'GitHub secret scanning keys'))
      .finally(() => {
        this.fetchedAt = this.options.clock.now();
        this.refreshing = null;
      });
    return this.refreshing;
  }

  private async fetchKeys(): Promise<Map<string, KeyObject>> {
    const response = await fetch(this.options.url, { redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`the keys URL answered ${response.status}`);
    return parseKeys(JSON.parse(await boundedText(response)) as unknown);
  }
}

/** The body as text, refused past {@link MAX_DOCUMENT_BYTES} without reading further. */
async function boundedText(response: Response): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.length;
    if (size > MAX_DOCUMENT_BYTES) throw new Error('the keys document is too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The P-256 keys of a `{"public_keys":[{"key_identifier","key"}]}` document; anything else is skipped. */
export function parseKeys(document: unknown): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  const list = (document as { public_keys?: unknown } | null)?.public_keys;
  if (!Array.isArray(list)) throw new Error('the keys document has no public_keys list');
  for (const entry of list as unknown[]) {
    const { key_identifier: id, key: pem } = (entry ?? {}) as { key_identifier?: unknown; key?: unknown };
    if (typeof id !== 'string' || typeof pem !== 'string' || id.length > MAX_KEY_ID) continue;
    try {
      const key = createPublicKey(pem);
      if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') keys.set(id, key);
    } catch {
      // Not a key: skipped, the others still count.
    }
  }
  return keys;
}
