import { createHash } from 'node:crypto';

// A single resource's ETag names its root and the root's version, so If-Match can be checked in the database
// by version alone; any other response's is a hash of its bytes. Both are strong: equal tags, equal bytes. A
// compressed answer is another representation and carries another strong tag, the plain one's with its coding
// after a semicolon ("…;br", src/http/compression.ts); If-Match reads the version through it.
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
