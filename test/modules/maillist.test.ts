import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import { maillistModule } from '../../src/modules/maillist/index.js';
import { compositesModule } from '../../src/modules/composites/index.js';
import { headerRegexpsModule } from '../../src/modules/header-regexps/index.js';
import type { ScanResult } from '../../src/plugin-api/index.js';
import { engineConfig, fixtureMessage, meta, symbol } from './helpers.js';

async function scan(message: Buffer): Promise<ScanResult> {
  const e = await createEngine(engineConfig(), [maillistModule]);
  return e.scan(message, meta());
}

/** A list post: the author's headers, then what the list manager added. */
function post(listHeaders: string[], extra: string[] = []): Buffer {
  const head = [
    'Received: from lists.example.org (lists.example.org [192.0.2.7]) by mx.example.net (Postfix) with ESMTP id 1A2B3C; Thu, 22 Aug 2002 13:27:39 +0100',
    'From: Alice <alice@example.com>',
    'To: devel@lists.example.org',
    'Subject: [devel] build fails on sparc',
    'Date: Thu, 22 Aug 2002 13:20:00 +0100',
    'Message-ID: <20020822122000.GA1234@example.com>',
    ...extra,
    ...listHeaders,
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\nThe build fails at the linker step; log attached to the bug.\r\n`);
}

const MAILMAN = [
  'X-Mailman-Version: 2.0.13',
  'Precedence: bulk',
  'List-Id: Developers <devel.lists.example.org>',
  'List-Post: <mailto:devel@lists.example.org>',
  'List-Help: <mailto:devel-request@lists.example.org?subject=help>',
  'List-Subscribe: <http://lists.example.org/mailman/listinfo/devel>, <mailto:devel-request@lists.example.org?subject=subscribe>',
  'List-Unsubscribe: <http://lists.example.org/mailman/listinfo/devel>, <mailto:devel-request@lists.example.org?subject=unsubscribe>',
  'List-Archive: <http://lists.example.org/pipermail/devel/>',
];

test('MAILLIST recognises mailman, ezmlm and majordomo by their header sets', async () => {
  const mm = await scan(post(MAILMAN));
  assert.deepEqual(symbol(mm, 'MAILLIST')?.options, ['mailman']);
  assert.equal(symbol(mm, 'MAILLIST')?.score, -0.2);

  const ezmlm = await scan(post([
    'Mailing-List: contact devel-help@example.org; run by ezmlm',
    'Precedence: bulk',
    'List-Post: <mailto:devel@example.org>',
    'List-Help: <mailto:devel-help@example.org>',
    'List-Subscribe: <mailto:devel-subscribe@example.org>',
    'List-Unsubscribe: <mailto:devel-unsubscribe@example.org>',
  ]));
  assert.deepEqual(symbol(ezmlm, 'MAILLIST')?.options, ['ezmlm']);

  const majordomo = await scan(post(['Sender: owner-devel@example.org', 'Precedence: list']));
  assert.deepEqual(symbol(majordomo, 'MAILLIST')?.options, ['majordomo']);
});

test('MAILLIST: a list known only by RFC 2919/2369 headers counts half; one header short is not a list', async () => {
  const generic = ['Precedence: list', 'List-Id: <devel.example.org>', 'List-Unsubscribe: <mailto:leave-devel@example.org>', 'List-Post: <mailto:devel@example.org>'];
  const r = await scan(post(generic));
  assert.deepEqual(symbol(r, 'MAILLIST')?.options, ['generic']);
  assert.equal(symbol(r, 'MAILLIST')?.score, -0.1);
  // Mailman without its Precedence header, or a bulk mailer with only List-Unsubscribe: no list.
  assert.ok(!symbol(await scan(post(MAILMAN.filter((h) => !h.startsWith('Precedence')))), 'MAILLIST'));
  assert.ok(!symbol(await scan(post(['Precedence: bulk', 'List-Unsubscribe: <mailto:remove@example.com>'])), 'MAILLIST'));
});

test('MAILLIST on the project ham fixture, an IETF list post (mailman 2.1 without X-Mailman-Version)', async () => {
  assert.deepEqual(symbol(await scan(fixtureMessage('ham.eml')), 'MAILLIST')?.options, ['generic']);
});

test('FORGED_MUA_MAILLIST: a forged-MUA sign on list mail has its weight taken off, MAILLIST stays', async () => {
  const e = await createEngine(engineConfig(), [headerRegexpsModule, maillistModule, compositesModule]);
  // Outlook Express names itself, but the Message-ID is not one it writes (FORGED_MUA_OUTLOOK).
  const forged = post(MAILMAN, ['X-Mailer: Microsoft Outlook Express 6.00.2600.0000']);
  const r = await e.scan(forged, meta());
  assert.ok(symbol(r, 'MAILLIST'));
  assert.ok(!symbol(r, 'FORGED_MUA_OUTLOOK'), 'removed by the composite');
  assert.ok(symbol(r, 'FORGED_MUA_MAILLIST'));
  const alone = await e.scan(post([], ['X-Mailer: Microsoft Outlook Express 6.00.2600.0000']), meta());
  assert.ok(symbol(alone, 'FORGED_MUA_OUTLOOK'));
});
