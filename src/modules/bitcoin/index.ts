// bitcoin: crypto-currency wallet addresses (Rspamd rules/bitcoin.lua), checked by checksum, and
// the scam words that come with them (LEAKED_PASSWORD_SCAM_RE of rules/regexp/misc.lua). The
// LEAKED_PASSWORD_SCAM composite reads both.

import { defineModule } from '../../plugin-api/index.js';
import { BitcoinConfig } from './config.js';
import { BITCOIN_SYMBOLS } from './symbols.js';
import { checkBitcoin, checkEthereum, checkLeakedPasswordScam } from './check.js';

export const bitcoinModule = defineModule<BitcoinConfig>({
  name: 'bitcoin',
  config: BitcoinConfig,
  symbols: BITCOIN_SYMBOLS,
  setup(ctx) {
    ctx.symbol({ name: 'BITCOIN_ADDR', inserts: ['BITCOIN_ADDR'], check: checkBitcoin });
    const wallets = ['BITCOIN_ADDR'];
    if (ctx.config.ethereum) {
      ctx.symbol({ name: 'ETHEREUM_ADDR', inserts: ['ETHEREUM_ADDR'], check: checkEthereum });
      wallets.push('ETHEREUM_ADDR');
    }
    ctx.symbol({
      name: 'LEAKED_PASSWORD_SCAM_RE',
      inserts: ['LEAKED_PASSWORD_SCAM_RE'],
      // Reads the wallet symbols' results: runs after them.
      deps: wallets.map((name) => ({ name, weak: true })),
      check: checkLeakedPasswordScam,
    });
  },
});
