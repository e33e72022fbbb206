import { createHash } from 'node:crypto';

// A single resource's ETag names its root and version, so If-Match is checked in the database by version; any
// other answer's is a hash of its bytes. A compressed answer's strong tag is the plain one's with its coding after a
// semicolon ("…;br"); If-Match reads the version through it.
export function versionTag(id: string, version: number): string {
  return `"${id}:${version}"`;
}

export function bytesTag(bytes: string | Buffer): string {
  return partsTagger().update(bytes).tag();
}

/** bytesTag of bytes given in parts, hashed as they come. */
export function partsTagger() {
  const hash = createHash('sha256');
  const tagger = {
    update(bytes: string | Buffer) {
      hash.update(bytes);
      return tagger;
    },
    tag: () => `"${hash.digest('base64url')}"`,
  };
  return tagger;
}
