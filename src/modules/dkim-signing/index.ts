import { defineModule } from '../../plugin-api/index.js';
import { DkimSigningConfig } from './config.js';
import { makeSigningCheck } from './check.js';
import { KeyStore, openKeyMaps } from './keys.js';

/**
 * DKIM signing of outbound mail (authenticated or local senders): the signature goes to the
 * reply (`dkim-signature`) and, with `rewrite_message`, into the rewritten message (body block
 * / v3 part).
 */
export const dkimSigningModule = defineModule<DkimSigningConfig>({
  name: 'dkim_signing',
  config: DkimSigningConfig,
  symbols: {
    DKIM_SIGNED: { score: 0, group: 'policies', description: 'Message has been signed' },
  },
  async setup(ctx) {
    const c = ctx.config;
    if (Object.keys(c.domain).length === 0 && !c.selector_map && !c.path_map && !(c.selector && c.path)) {
      ctx.disable('config');
      return;
    }
    let keys: KeyStore;
    try {
      keys = new KeyStore(c, await openKeyMaps(c, ctx.maps));
    } catch (e) {
      ctx.log.error('dkim_signing: cannot read a key map', { error: (e as Error).message });
      ctx.disable('failed');
      return;
    }
    ctx.symbol({
      name: 'DKIM_SIGNED',
      stage: 'postfilters',
      flags: ['ignore_passthrough'],
      check: makeSigningCheck(c, keys),
    });
  },
});
