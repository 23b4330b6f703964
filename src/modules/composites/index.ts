import { defineModule } from '../../plugin-api/index.js';
import { CompositesConfig } from './config.js';
import { DEFAULT_COMPOSITES } from './defaults.js';

/**
 * Rspamd's default composites registered with the engine. A composite of the same
 * name under `composites` in mailsift.yaml should be paired with an entry in `disabled` here.
 */
export const compositesModule = defineModule<CompositesConfig>({
  name: 'composites',
  config: CompositesConfig,
  symbols: {},
  setup(ctx) {
    const off = new Set(ctx.config.disabled);
    for (const [name, def] of Object.entries(DEFAULT_COMPOSITES)) {
      if (!off.has(name)) ctx.composite({ name, ...def });
    }
  },
});
