// A SelectorTask for a bare message and the scan request's headers: what the controller's
// /plugins/selectors/check_message runs a selector over (Rspamd processes the message there
// without running any rule). Facts are computed on first use, as in a scan's task.

import { parseEnvelopeAddress } from '../message/addresses.js';
import { makeRawMessage, parseMessage } from '../message/parse-message.js';
import { parseReceivedChain } from '../message/parse-received.js';
import type { ScanMeta } from '../core/scan-types.js';
import type { EmailAddress, Message, ReceivedHop } from '../message/types.js';
import type { SelectorTask } from './task.js';

/** `parsed`: the message already parsed from `raw` (the engine's, read for the request's client). */
export function messageTask(raw: Buffer, meta: ScanMeta, uid?: string, parsed?: Message): SelectorTask {
  let message: Message | undefined = parsed;
  let received: ReceivedHop[] | undefined;
  let rcpt: EmailAddress[] | undefined;
  const connectTime = Date.now();
  return {
    meta,
    uid,
    connectTime,
    cache: new Map(),
    get message() {
      // `Raw: yes` input is not MIME: one part of the given type, as a scan's task reads it.
      return (message ??= meta.raw ? makeRawMessage(raw, meta.contentType, meta.filename) : parseMessage(raw));
    },
    get received() {
      return (received ??= parseReceivedChain(this.message.headers.get('received')));
    },
    get envelopeFrom() {
      return meta.from === undefined ? undefined : parseEnvelopeAddress(meta.from);
    },
    get envelopeRcpt() {
      return (rcpt ??= meta.rcpt.flatMap((r) => parseEnvelopeAddress(r) ?? []));
    },
    getRequestHeader(name: string) {
      return meta.requestHeaders.get(name.toLowerCase())?.[0];
    },
  };
}
