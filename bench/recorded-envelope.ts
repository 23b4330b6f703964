// The envelope a corpus message's receiving MTA recorded in its headers, for the benchmarks that
// scan with one (`--envelope recorded`, `--recorded-envelope`, `scan-cpu --envelope recorded`).
// Its own module so a plain transform of the tree (scripts/scan-cpu.ts) can load it without the
// accuracy benchmark's test helpers.
import { parseMessage } from '../src/message/parse-message.js';
import { parseReceived } from '../src/message/parse-received.js';
import { isLocalAddress } from '../src/module-helpers/local-address.js';
import { emptyMeta, type ScanMeta } from '../src/plugin-api/index.js';

/**
 * The envelope the corpus owner's MTA saw, as an MTA would pass it to a filter: the sending host
 * of the top-most Received hop from a public address (with the HELO and reverse DNS name that hop
 * recorded), Return-Path as the envelope sender and Delivered-To (else To) as the recipient.
 */
export function recordedEnvelope(bytes: Buffer): ScanMeta {
  const msg = parseMessage(bytes);
  const meta = emptyMeta();
  for (const h of msg.headers.get('Received')) {
    const hop = parseReceived(h.value);
    if (!hop.fromIp || isLocalAddress(hop.fromIp)) continue;
    meta.ip = hop.fromIp;
    if (hop.fromHelo) meta.helo = hop.fromHelo;
    if (hop.fromHostname) meta.hostname = hop.fromHostname;
    break;
  }
  const rp = /<([^>]*)>/.exec(msg.headers.first('Return-Path')?.value ?? '');
  if (rp) meta.from = rp[1]!;
  const rcpt = msg.headers.first('Delivered-To')?.value.trim() ?? msg.to[0]?.address;
  if (rcpt) meta.rcpt = [rcpt];
  return meta;
}
