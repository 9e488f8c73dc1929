/**
 * What a redirection adds to the parts. Writing to a file is an effect of its own, whatever the command: `ls > ~/.bashrc`
 * is a part `redirect(path=~/.bashrc)` beside `ls`, which a rule on `ls *` does not match. Reads are the command's
 * business (it could open the file itself), except from the network.
 */
import { Parts, redirectPart, Unparsable, Word } from './parts';

/** Operators that open their target for writing (`<>` opens it for reading and writing, creating it). */
const WRITES = new Set(['>', '>>', '>|', '&>', '&>>', '<>', '>&']);
/** Targets that are no file of the machine: the bit bucket and the process's own streams. */
const HARMLESS = /^\/dev\/(?:null|stdout|stderr|stdin|fd\/\d+)$/;
/** `>&2`, `<&0`, `2>&1-`, `>&-`: a file descriptor duplicated or closed, nothing opened. */
const DESCRIPTOR = /^(?:\d+-?|-)$/;
const NETWORK = /^\/dev\/(?:tcp|udp)\//;

/** Adds the part an operator and its target make, or throws for a target that is only known when it runs. */
export function redirection(op: string, target: Word, parts: Parts): void {
  // A here-string's word is data on stdin, not a path (its substitutions were read as parts already).
  if (op === '<<<') return;
  const path = target.text;
  // A process substitution is a pipe to commands that are parts already.
  if (/^[<>]\(/.test(path) && path.endsWith(')')) return;
  if (target.expands) throw new Unparsable(`a redirection to a path known only when it runs (${shorten(path)})`);
  if ((op === '>&' || op === '<&') && DESCRIPTOR.test(path)) return;
  if (HARMLESS.test(path)) return;
  if (!WRITES.has(op) && !NETWORK.test(path)) return;
  // `/tmp/link/..` is wherever the link points: a `..` segment defeats a rule's glob on the path as written.
  if (path.split('/').includes('..'))
    throw new Unparsable(`a redirection to a path with a ".." segment (${shorten(path)})`);
  parts.add(redirectPart(path));
}

const shorten = (text: string) => (text.length > 60 ? `${text.slice(0, 59)}…` : text);
