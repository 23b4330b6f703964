import type { SymbolDef } from '../../plugin-api/index.js';

const G = 'scams';

/** Rspamd rules/bitcoin.lua and rules/regexp/misc.lua; scores in conf/groups.yaml. */
export const BITCOIN_SYMBOLS: Record<string, SymbolDef> = {
  BITCOIN_ADDR: { score: 0, group: G, description: 'Message has a valid bitcoin wallet address', oneShot: true },
  ETHEREUM_ADDR: { score: 0, group: G, description: 'Message has an Ethereum wallet address with a valid EIP-55 checksum', oneShot: true },
  LEAKED_PASSWORD_SCAM_RE: { score: 0, group: G, description: 'Contains a wallet address and words of sextortion and leaked-password scams' },
};
