/**
 * Whether a URL's host name is this machine: `localhost`, 127.0.0.0/8 or ::1. The WHATWG URL parser has already
 * normalised `127.1` and `0x7f.1`; a name such as `127.evil.example` stays a domain, hence the whole-address pattern.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(h);
}
