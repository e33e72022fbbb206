import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where webhooks may go: https, to public addresses only, unless WEBHOOKS_ALLOW_PRIVATE. Checked when an endpoint is
 * written, and at each attempt for every address its host resolves to, the attempt connecting to the address checked,
 * so a name that later resolves to 127.0.0.1 (DNS rebinding) never reaches it.
 */

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback, IPv4-compatible
  ['64:ff9b:1::', 48], // local-use NAT64
  ['2001::', 32], // Teredo and 6to4 tunnel an IPv4 address that may be private
  ['2002::', 16],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96), if it carries one. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1] as string;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return null;
  const high = Number.parseInt(hex[1] as string, 16);
  const low = Number.parseInt(hex[2] as string, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Whether an address is a public one: not loopback, private, link-local, multicast or otherwise reserved. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked.check(address, 'ipv4');
  if (family !== 6) return false;
  const inner = embeddedIpv4(address);
  if (inner !== null) return isPublicAddress(inner);
  return !blocked.check(address, 'ipv6');
}

/** The host of a URL as an address or a name, without the brackets of an IPv6 literal. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Why a URL may not be an endpoint's, or null when it may. What resolving the name finds is checked later. */
export function urlProblem(text: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (url.hash !== '') return 'must not carry a fragment';
  if (allowPrivate) return null;
  const host = hostOf(url);
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not name the local host';
  if (isIP(host) !== 0 && !isPublicAddress(host))
    return 'must not be a loopback, private or link-local address';
  return null;
}

export class DestinationError extends Error {}

export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolve: Resolve = (host) => lookup(host, { all: true });

/**
 * Resolves a URL's host and checks every address it has; answers the one to connect to. Any address that is not
 * public refuses the whole name, since which one a client picks is not up to us.
 */
export async function resolveDestination(
  url: URL,
  allowPrivate: boolean,
  resolve: Resolve = systemResolve,
): Promise<{ address: string; family: number }> {
  const problem = urlProblem(url.href, allowPrivate);
  if (problem !== null) throw new DestinationError(`the URL ${problem}`);
  const host = hostOf(url);
  let addresses: { address: string; family: number }[];
  try {
    addresses = isIP(host) !== 0 ? [{ address: host, family: isIP(host) }] : await resolve(host);
  } catch (error) {
    throw new DestinationError(`${host} does not resolve (${(error as { code?: string }).code ?? 'error'})`);
  }
  const first = addresses[0];
  if (!first) throw new DestinationError(`${host} has no address`);
  if (!allowPrivate) {
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused) {
      throw new DestinationError(
        `${host} resolves to ${refused.address}, a loopback, private or link-local address`,
      );
    }
  }
  return first;
}
